import { useState } from "react";
import { commands, type InstalledModel, type ModelProfile } from "../../bindings";
import { Spinner } from "../../components/Spinner";
import { call, errorMessage } from "../../ipc/call";
import {
  CatalogMismatchNote,
  catalogCheckLine,
  DownloadRow,
  FitBadge,
  formatBytes,
} from "../models/ModelsScreen";
import { useModels } from "../models/useModels";

/**
 * First-run setup's "This computer" choice: run a model with the app's own runtime, no account
 * and no server. It recommends the catalogue model that fits this machine and downloads it
 * with progress (or uses a model already installed, or a .gguf file the user picks), then saves
 * the `default` profile with `api: local` and hands over to the chat.
 *
 * A download that stops (paused, failed, or left from an earlier start of the app) is the
 * Models screen's row: how far it got, Resume (which then starts the chat) and Discard. A file
 * that is not what the catalogue lists for the entry (another architecture or size) is not
 * used silently: the setup says what it is and asks before starting with it.
 */
export function LocalModelSetup(props: {
  profiles: readonly ModelProfile[];
  profileName: string;
  onDone: () => void;
}) {
  const models = useModels();
  const [chosen, setChosen] = useState<string | null>(null);
  const [other, setOther] = useState<string>("");
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const { catalog, view } = models;
  const recommended = catalog?.items.find((i) => i.recommended) ?? null;
  const target = other || recommended?.id || "";
  const item = catalog?.items.find((i) => i.id === target) ?? null;
  const download = item ? models.downloads[item.file] : undefined;
  const partial = item ? view?.downloads.find((p) => p.file === item.file) : undefined;
  const installed = view?.installed.filter((m) => m.error === null) ?? [];
  /** A downloaded model that is not what its catalogue entry lists, until the user decides. */
  const [mismatched, setMismatched] = useState<InstalledModel | null>(null);

  const startWith = async (model: InstalledModel) => {
    setSaving(true);
    setError(null);
    try {
      const profile: ModelProfile = {
        name: props.profileName,
        api: "local",
        base_url: "",
        model: model.name,
        api_key: null,
        // Chosen per model: its tool-use check's best mode, else its family's own form.
        tool_calls: "auto",
      };
      const at = props.profiles.findIndex((p) => p.name === props.profileName);
      const list =
        at >= 0
          ? props.profiles.map((p, i) => (i === at ? profile : p))
          : [...props.profiles, profile];
      await call(commands.saveProfiles(list));
      props.onDone();
    } catch (e) {
      setError(`The profile was not saved: ${errorMessage(e)}`);
    } finally {
      setSaving(false);
    }
  };

  const downloadAndUse = async () => {
    if (!item) return;
    setError(null);
    const model = await models.pull(item.id);
    if (model?.catalog_mismatch) setMismatched(model);
    else if (model) await startWith(model);
  };

  /** Delete the model that is not the catalogue's, and go back to the choice. */
  const deleteMismatched = async (model: InstalledModel) => {
    setError(null);
    try {
      await models.remove(model.name);
      setMismatched(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const importFile = async () => {
    setError(null);
    try {
      const model = await call(commands.modelsImport(null));
      if (model) await startWith(model);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const running = download?.running ?? false;

  return (
    <div className="local-setup" data-testid="local-setup">
      <fieldset className="step" disabled={saving}>
        <legend>
          <span className="step-number">2</span> Choose a model
        </legend>
        <p className="muted">
          The model runs inside ArtifactFlow on this computer: nothing is sent anywhere, and it
          works offline once downloaded.
        </p>
        {models.loadError && (
          <p className="form-errors" role="alert">
            {models.loadError}
          </p>
        )}
        {catalog === null && !models.loadError && (
          <p className="muted" role="status">
            <Spinner /> Checking this computer…
          </p>
        )}
        {catalog && recommended === null && (
          <p className="form-errors" role="alert">
            None of the catalogue&apos;s models fits this computer&apos;s memory or free disk.
            Import a smaller .gguf file, or connect a model server instead.
          </p>
        )}
        {catalog && item && (
          <div className="local-choice" data-testid="local-choice">
            <p>
              <strong>{item.name}</strong>{" "}
              {item.recommended && <span className="badge badge-recommended">Recommended</span>}{" "}
              <FitBadge fit={item.fit.fit} reason={item.fit.reason} />
            </p>
            <p className="muted small">
              {formatBytes(item.size)} download · {item.context.toLocaleString()} tokens of context
              · {item.license} · {item.fit.reason}
            </p>
            <p className="muted small">{catalogCheckLine(item)}</p>
            {item.recommended && catalog.recommendation && (
              <p className="muted small">Recommended: {catalog.recommendation}</p>
            )}
            <label className="inline-field">
              Model{" "}
              <select
                value={target}
                onChange={(e) => {
                  setOther(e.target.value);
                  setMismatched(null);
                }}
                disabled={running}
              >
                {catalog.items.map((i) => (
                  <option key={i.id} value={i.id}>
                    {i.name} — {formatBytes(i.size)}
                    {i.recommended ? " (recommended)" : ""}
                    {i.fit.fit === "good"
                      ? ""
                      : i.fit.fit === "tight"
                        ? " (tight fit)"
                        : " (too big)"}
                  </option>
                ))}
              </select>
            </label>
            {(download || partial) && (
              <ul className="model-downloads">
                <DownloadRow
                  file={item.file}
                  label={item.name}
                  download={download}
                  partial={partial}
                  onPause={() => void models.pause(item.file)}
                  onResume={() => void downloadAndUse()}
                  onDiscard={() =>
                    void models.discard(item.file).catch((e: unknown) => setError(errorMessage(e)))
                  }
                />
              </ul>
            )}
            {mismatched && (
              <div className="local-mismatch" data-testid="local-mismatch">
                <CatalogMismatchNote model={mismatched} />
                <div className="form-actions">
                  <button
                    type="button"
                    className="primary"
                    disabled={saving}
                    onClick={() => void startWith(mismatched)}
                  >
                    Use it anyway and start
                  </button>
                  <button type="button" onClick={() => void deleteMismatched(mismatched)}>
                    Delete it
                  </button>
                </div>
              </div>
            )}
            {!download && !partial && !mismatched && (
              <div className="form-actions">
                <button
                  type="button"
                  className="primary"
                  data-testid="local-download"
                  disabled={item.fit.fit === "no_disk" || saving}
                  onClick={() => void downloadAndUse()}
                >
                  {saving && <Spinner />} Download {item.name} and start
                </button>
              </div>
            )}
          </div>
        )}
        {installed.length > 0 && (
          <div className="local-installed">
            <p>Or use a model already on this computer:</p>
            <ul>
              {installed.map((m) => (
                <li key={m.file}>
                  <label>
                    <input
                      type="radio"
                      name="installed-model"
                      value={m.name}
                      checked={chosen === m.name}
                      onChange={() => setChosen(m.name)}
                    />{" "}
                    {m.name}{" "}
                    <span className="muted small">
                      {formatBytes(m.size)} · {m.info?.quantization ?? "?"}
                    </span>
                  </label>
                  <CatalogMismatchNote model={m} />
                </li>
              ))}
            </ul>
            <button
              type="button"
              data-testid="local-use-installed"
              disabled={chosen === null || saving}
              onClick={() => {
                const m = installed.find((x) => x.name === chosen);
                if (m) void startWith(m);
              }}
            >
              Use this model and start
            </button>
          </div>
        )}
        <p>
          <button type="button" className="link-button" onClick={() => void importFile()}>
            Or choose a .gguf file on this computer…
          </button>
        </p>
        {error && (
          <p className="form-errors" role="alert" data-testid="local-setup-error">
            {error}
          </p>
        )}
      </fieldset>
    </div>
  );
}
