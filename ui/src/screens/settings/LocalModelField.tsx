import { useEffect, useRef, useState } from "react";
import { commands, type InstalledModel } from "../../bindings";
import { Field } from "../../components/Field";
import { call, errorMessage } from "../../ipc/call";
import { formatBytes } from "../models/ModelsScreen";

/** The models folder's models: being read, read, or why they could not be. */
type Installed =
  | { state: "loading" }
  | { state: "done"; models: InstalledModel[] }
  | { state: "failed"; message: string };

/** The models folder's models, read once when the field appears (`models_list`). */
function useInstalledModels(): Installed {
  const [installed, setInstalled] = useState<Installed>({ state: "loading" });
  useEffect(() => {
    let alive = true;
    call(commands.modelsList()).then(
      (view) => alive && setInstalled({ state: "done", models: view.installed }),
      (e: unknown) => alive && setInstalled({ state: "failed", message: errorMessage(e) }),
    );
    return () => {
      alive = false;
    };
  }, []);
  return installed;
}

/** A path rather than a name: the runtime then opens that file, wherever it is. */
function isPath(model: string): boolean {
  return /[/\\]/.test(model);
}

/** The installed model `model` names: by its name, its file name or its whole path. */
function installedAs(model: string, installed: readonly InstalledModel[]): InstalledModel | null {
  const m = model.trim();
  return installed.find((i) => i.name === m || i.file === m || i.path === m) ?? null;
}

/** One installed model in the picker: its name, size and architecture. */
function optionText(m: InstalledModel): string {
  const what = m.info ? (m.info.architecture ?? "unknown architecture") : "cannot be read";
  return `${m.name} — ${formatBytes(m.size)} · ${what}`;
}

/**
 * The model of a profile run on this computer (`api: local`): a picker of the models folder's
 * models with their size and architecture, the profile's own value kept (and said to be not
 * installed) when the folder does not hold it, a way to type a name or a path by hand, and
 * “Get a model…” to the Models screen. Picking writes the model's name, as the first-run setup
 * does; nothing changes until the user picks or types.
 */
export function LocalModelField(props: {
  value: string;
  onChange: (model: string) => void;
  error: string | undefined;
  disabled?: boolean;
  /** Open the Models screen; absent (no way there), the field has no “Get a model…”. */
  onGetModel?: (() => void) | undefined;
}) {
  const installed = useInstalledModels();
  const [typing, setTyping] = useState(false);
  // After switching between the picker and the text box, the focus goes to the one shown.
  const [switched, setSwitched] = useState(0);
  const control = useRef<HTMLInputElement & HTMLSelectElement>(null);
  useEffect(() => {
    if (switched > 0) control.current?.focus();
  }, [switched]);

  const models = installed.state === "done" ? installed.models : [];
  const current = installedAs(props.value, models);
  const value = current?.name ?? props.value;
  const notInstalled = props.value.trim() !== "" && current === null;
  const picking = installed.state !== "failed" && !typing;

  const hint =
    installed.state === "failed"
      ? `The installed models could not be listed (${installed.message}). Type a model's name or the path of a .gguf file.`
      : typing
        ? "The name of a model in the models folder, or the path of a .gguf file."
        : installed.state === "loading"
          ? "Reading the models folder…"
          : models.length === 0
            ? "No models are installed yet: get one, or type the path of a .gguf file."
            : notInstalled
              ? isPath(props.value)
                ? "This file is not in the models folder; the runtime opens it where it is."
                : `“${props.value.trim()}” is not in the models folder: pick an installed model, get one, or keep it.`
              : undefined;

  const switchTo = (typed: boolean) => {
    setTyping(typed);
    setSwitched((n) => n + 1);
  };

  return (
    <Field label="Model" hint={hint} error={props.error} className="span-2">
      {(c) => (
        <>
          {picking ? (
            <select
              {...c}
              ref={control}
              value={value}
              disabled={props.disabled}
              data-testid="local-model-picker"
              onChange={(e) => props.onChange(e.target.value)}
            >
              {props.value.trim() === "" && <option value="">Choose a model…</option>}
              {notInstalled && (
                <option value={props.value}>
                  {installed.state === "loading"
                    ? props.value
                    : isPath(props.value)
                      ? `${props.value} (a file outside the models folder)`
                      : `${props.value} (not installed)`}
                </option>
              )}
              {models.map((m) => (
                <option
                  key={m.file}
                  value={m.name}
                  // The runtime refuses a file whose header does not read.
                  disabled={m.error !== null && m.name !== value}
                >
                  {optionText(m)}
                </option>
              ))}
            </select>
          ) : (
            <input
              {...c}
              ref={control}
              value={props.value}
              disabled={props.disabled}
              spellCheck={false}
              autoComplete="off"
              placeholder="model-name or /path/to/model.gguf"
              data-testid="model-input"
              onChange={(e) => props.onChange(e.target.value)}
            />
          )}
          <span className="row-actions">
            {installed.state !== "failed" && (
              <button
                type="button"
                className="link-button"
                disabled={props.disabled}
                onClick={() => switchTo(!typing)}
              >
                {typing ? "Choose an installed model" : "Type a name or path instead"}
              </button>
            )}
            {props.onGetModel && (
              <button
                type="button"
                className="link-button"
                disabled={props.disabled}
                onClick={props.onGetModel}
              >
                Get a model…
              </button>
            )}
          </span>
        </>
      )}
    </Field>
  );
}
