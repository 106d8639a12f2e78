import type { ThemeChoice } from "../../theme/theme";
import type { StatusState } from "../../ipc/useStatus";
import { Spinner } from "../../components/Spinner";
import { AlwaysAllowedSection } from "./AlwaysAllowedSection";
import { PermissionRulesSection } from "./PermissionRulesSection";
import { PermissionTimeoutSection } from "./PermissionTimeoutSection";
import { ProfilesSection } from "./ProfilesSection";
import { SecretsSection } from "./SecretsSection";
import { useOpenConfigFolder } from "./useOpenConfigFolder";
import { useSettings } from "./useSettings";

const THEMES: { value: ThemeChoice; label: string }[] = [
  { value: "system", label: "System" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
];

export function SettingsScreen(props: {
  theme: ThemeChoice;
  onThemeChange: (t: ThemeChoice) => void;
  state: StatusState;
  /** Open an agent's file in the Agents editor (its rules' "Open in editor"). */
  onOpenAgentFile?: (path: string) => void;
  /** Open the Models screen (a local profile's "Get a model…"). */
  onOpenModels?: () => void;
}) {
  const { status } = props.state;
  const { settings, error, loading, reload } = useSettings();
  const folder = useOpenConfigFolder();
  const configDir = settings?.config_dir ?? status?.config_dir;

  return (
    <section className="screen settings-screen">
      <h1 id="screen-title" tabIndex={-1}>
        Settings
      </h1>
      {error && (
        <div className="form-errors" role="alert" data-testid="settings-error">
          <p>Settings could not be loaded: {error.message}</p>
          <button type="button" onClick={() => void reload()} disabled={loading}>
            Try again
          </button>
        </div>
      )}
      {!settings && !error && (
        <p className="muted" role="status">
          <Spinner /> Loading settings…
        </p>
      )}
      {settings && (
        <>
          <ProfilesSection
            profiles={settings.profiles}
            secretNames={settings.secret_names}
            missingSecrets={settings.missing_secrets}
            profileModels={settings.profile_models}
            reload={reload}
            onOpenModels={props.onOpenModels}
          />
          <SecretsSection
            secretNames={settings.secret_names}
            missingSecrets={settings.missing_secrets}
            reload={reload}
          />
          <PermissionTimeoutSection
            key={settings.settings.permission_timeout_secs}
            seconds={settings.settings.permission_timeout_secs}
            reload={reload}
          />
        </>
      )}
      <PermissionRulesSection onOpenAgentFile={props.onOpenAgentFile}>
        <AlwaysAllowedSection />
      </PermissionRulesSection>
      <section className="setting-group" aria-labelledby="appearance-title">
        <h2 id="appearance-title">Appearance</h2>
        <div role="radiogroup" aria-label="Theme" className="segmented">
          {THEMES.map((t) => (
            <label key={t.value} className="segment">
              <input
                type="radio"
                name="theme"
                value={t.value}
                checked={props.theme === t.value}
                onChange={() => props.onThemeChange(t.value)}
              />
              {t.label}
            </label>
          ))}
        </div>
      </section>
      {(configDir !== undefined || status) && (
        <section className="setting-group" aria-labelledby="folders-title">
          <h2 id="folders-title">Folders</h2>
          {configDir !== undefined && (
            <div className="folder-row">
              <code data-testid="config-folder">{configDir}</code>
              <button type="button" onClick={() => void folder.open()} disabled={folder.opening}>
                {folder.opening && <Spinner />}Open folder
              </button>
            </div>
          )}
          {folder.error && (
            <p className="form-errors" role="alert">
              {folder.error}
            </p>
          )}
          {status && (
            <dl className="folders">
              <dt>Configuration</dt>
              <dd>
                <code>{status.config_dir}</code>
              </dd>
              <dt>Database</dt>
              <dd>
                <code>{status.database}</code> (schema v{status.schema_version})
              </dd>
              <dt>Logs</dt>
              <dd>
                <code>{status.log_dir}</code>
              </dd>
            </dl>
          )}
        </section>
      )}
    </section>
  );
}
