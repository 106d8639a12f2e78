import { useEffect, useRef, useState, type FormEvent } from "react";
import type { ModelProfile } from "../../bindings";
import { Field } from "../../components/Field";
import { Spinner } from "../../components/Spinner";
import { ConnectionTestResult } from "./ConnectionTestResult";
import { LocalModelSetup } from "./LocalModelSetup";
import { ModelField } from "./ModelField";
import { ToolCallsField } from "./ToolCallsField";
import { applyPreset, emptyDraft } from "./profileDraft";
import { PRESETS, presetById } from "./presets";
import { useProfileEditor } from "./useProfileEditor";
import { useSettings } from "./useSettings";

/** The profile first-run setup creates: the one agents use unless they name another. */
const FIRST_PROFILE = "default";
const FIRST_PRESET = "openai";

/**
 * Shown when no model profile exists: choose a server, give its key (or the local server's
 * address), test, save. Skipping leaves the app usable for browsing tools and artifacts.
 */
export function FirstRunSetup({ onDone }: { onDone(): void }) {
  const settings = useSettings();
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);

  return (
    <section
      className="screen first-run"
      aria-labelledby="first-run-title"
      aria-busy={settings.settings === null && !settings.error}
      data-testid="first-run"
    >
      <h1 id="first-run-title" ref={headingRef} tabIndex={-1}>
        Welcome to ArtifactFlow
      </h1>
      <p className="lead">
        Connect a model to start chatting. You can change this, or add more, later in Settings.
      </p>
      {/* Above everything that loads: the form arriving (or an error) never moves it, so a
          click aimed at it while the settings load still lands on it. */}
      <div className="first-run-skip">
        <button type="button" className="link-button" onClick={onDone}>
          Skip — browse tools and artifacts
        </button>
      </div>
      {settings.error && (
        <div className="form-errors" role="alert">
          <p>Settings could not be loaded: {settings.error.message}</p>
          <button type="button" onClick={() => void settings.reload()}>
            Try again
          </button>
        </div>
      )}
      {settings.settings ? (
        <SetupForm
          profiles={settings.settings.profiles}
          secretNames={settings.settings.secret_names}
          onDone={onDone}
        />
      ) : (
        !settings.error && (
          <p className="muted" role="status">
            <Spinner /> Loading…
          </p>
        )
      )}
    </section>
  );
}

function SetupForm(props: {
  profiles: readonly ModelProfile[];
  secretNames: readonly string[];
  onDone: () => void;
}) {
  const existing = props.profiles.findIndex((p) => p.name === FIRST_PROFILE);
  const editor = useProfileEditor({
    profiles: props.profiles,
    // Replace the bundled `default` profile rather than adding a second one of that name.
    index: existing >= 0 ? existing : null,
    initial: applyPreset(emptyDraft(FIRST_PROFILE), FIRST_PRESET),
    onSaved: props.onDone,
  });
  const { draft, errors, busy } = editor;
  const fe = errors.fields;
  const preset = presetById(draft.preset);
  const local = preset?.local ?? false;
  const disabled = busy !== null;
  const keyIsSet = props.secretNames.includes(draft.secretName.trim());
  // "This computer": the app's own runtime, set up by LocalModelSetup instead of the form.
  const [builtin, setBuiltin] = useState(false);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void editor.save();
  };

  return (
    <form
      className="first-run-form"
      data-testid="first-run-form"
      onSubmit={submit}
      noValidate
      aria-busy={disabled}
    >
      <fieldset className="step" disabled={disabled}>
        <legend>
          <span className="step-number">1</span> Where does your model run?
        </legend>
        <div className="preset-grid" role="radiogroup" aria-label="Model server">
          <label className="preset-card preset-builtin">
            <input
              type="radio"
              name="first-run-preset"
              value="builtin"
              checked={builtin}
              onChange={() => setBuiltin(true)}
            />
            <span className="preset-label">Run a model on this computer</span>
            <span className="preset-kind">no account</span>
          </label>
          {PRESETS.map((p) => (
            <label key={p.id} className="preset-card">
              <input
                type="radio"
                name="first-run-preset"
                value={p.id}
                checked={!builtin && draft.preset === p.id}
                onChange={() => {
                  setBuiltin(false);
                  editor.choosePreset(p.id);
                }}
              />
              <span className="preset-label">{p.label}</span>
              <span className="preset-kind">{p.local ? "on this computer" : "cloud API"}</span>
            </label>
          ))}
        </div>
      </fieldset>

      {builtin ? (
        <LocalModelSetup
          profiles={props.profiles}
          profileName={FIRST_PROFILE}
          onDone={props.onDone}
        />
      ) : (
        <>
          <fieldset className="step" disabled={disabled}>
            <legend>
              <span className="step-number">2</span>{" "}
              {local ? "Where is the server?" : "Your API key"}
            </legend>
            <div className="form-grid">
              {local ? (
                <Field
                  label="Server URL"
                  hint={`Start ${preset?.label ?? "the server"} first; this is its OpenAI-compatible address.`}
                  error={fe.base_url}
                  className="span-2"
                >
                  {(c) => (
                    <input
                      {...c}
                      type="url"
                      value={draft.base_url}
                      spellCheck={false}
                      onChange={(e) => editor.update({ base_url: e.target.value })}
                    />
                  )}
                </Field>
              ) : (
                <Field
                  label={`${preset?.label ?? "API"} key`}
                  hint={
                    editor.storedAs !== null && draft.keyValue === ""
                      ? `Stored in the system keyring as ${editor.storedAs}.`
                      : keyIsSet
                        ? `${draft.secretName} is already in the keyring; leave empty to use it.`
                        : `Stored in the system keyring as ${draft.secretName}, never shown again.`
                  }
                  error={fe.keyValue ?? fe.secretName}
                  className="span-2"
                >
                  {(c) => (
                    <input
                      {...c}
                      type="password"
                      autoComplete="off"
                      spellCheck={false}
                      value={draft.keyValue}
                      onChange={(e) => editor.update({ keyValue: e.target.value })}
                    />
                  )}
                </Field>
              )}
              <ModelField
                draft={draft}
                value={draft.model}
                error={fe.model}
                hint="The model name the server expects."
                onChange={(model) => editor.update({ model })}
              />
            </div>
            <ToolCallsField
              value={draft.tool_calls}
              error={fe.tool_calls}
              onChange={(tool_calls) => editor.update({ tool_calls })}
            />
          </fieldset>

          <fieldset className="step" disabled={disabled}>
            <legend>
              <span className="step-number">3</span> Test and save
            </legend>
            {(errors.general.length > 0 || fe.name || fe.api || (local ? false : fe.base_url)) && (
              <div className="form-errors" role="alert" data-testid="first-run-errors">
                <p>The profile was not saved:</p>
                <ul>
                  {[...errors.general, fe.name, fe.api, local ? undefined : fe.base_url]
                    .filter((l): l is string => typeof l === "string")
                    .map((line) => (
                      <li key={line}>{line}</li>
                    ))}
                </ul>
              </div>
            )}
            <div className="form-actions">
              <button type="button" onClick={() => void editor.runTest()}>
                {busy === "testing" && <Spinner />} Test connection
              </button>
              <button type="submit" className="primary">
                {busy === "saving" && <Spinner />}{" "}
                {busy === "saving" ? "Saving…" : "Save and start"}
              </button>
            </div>
            <ConnectionTestResult state={editor.test} />
          </fieldset>
        </>
      )}
    </form>
  );
}
