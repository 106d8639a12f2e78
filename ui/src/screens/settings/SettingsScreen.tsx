import type { ThemeChoice } from "../../theme/theme";
import type { StatusState } from "../../ipc/useStatus";

const THEMES: { value: ThemeChoice; label: string }[] = [
  { value: "system", label: "System" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
];

export function SettingsScreen(props: {
  theme: ThemeChoice;
  onThemeChange: (t: ThemeChoice) => void;
  state: StatusState;
}) {
  const { status } = props.state;
  return (
    <section className="screen">
      <h1 id="screen-title">Settings</h1>
      <fieldset className="setting-group">
        <legend>Appearance</legend>
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
      </fieldset>
      {status && (
        <fieldset className="setting-group">
          <legend>Folders</legend>
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
        </fieldset>
      )}
    </section>
  );
}
