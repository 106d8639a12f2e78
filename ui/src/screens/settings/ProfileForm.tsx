import { useEffect, useRef, useState, type FormEvent } from "react";
import type { Switch } from "../../bindings";
import { Field } from "../../components/Field";
import { Spinner } from "../../components/Spinner";
import { useLeaveGuard } from "../../shell/leaveGuard";
import { ConnectionTestResult } from "./ConnectionTestResult";
import { ContextWindowField } from "./ContextWindowField";
import { LocalModelField } from "./LocalModelField";
import { ModelField } from "./ModelField";
import { ToolCallsField } from "./ToolCallsField";
import { toolModeText, useToolMode } from "./toolMode";
import { CUSTOM, FORM_PRESETS } from "./presets";
import type { ProfileEditor } from "./useProfileEditor";

/** Add or edit one model profile: preset, server, model, API key (to the keyring), options. */
export function ProfileForm(props: {
  editor: ProfileEditor;
  title: string;
  /** Names of the secrets already in the keyring, to say whether the key is set. */
  secretNames: readonly string[];
  onCancel: () => void;
  submitLabel: string;
  /** Open the Models screen (a local profile's "Get a model…"); absent, there is no link. */
  onOpenModels?: (() => void) | undefined;
}) {
  const { editor } = props;
  const { draft, errors, busy } = editor;
  const fe = errors.fields;
  const disabled = busy !== null;
  const headingRef = useRef<HTMLHeadingElement>(null);
  const [advanced, setAdvanced] = useState(
    draft.temperature !== "" ||
      draft.max_tokens !== "" ||
      draft.context_window !== "" ||
      draft.timeout !== "",
  );
  const advancedError = fe.temperature ?? fe.max_tokens ?? fe.context_window ?? fe.timeout;
  const advancedOpen = advanced || advancedError !== undefined;
  // Leaving the screen (the sidebar, or "Get a model…") asks first when something is unsaved.
  useLeaveGuard(
    editor.dirty,
    editor.openedName === "" ? "The new profile" : `The profile “${editor.openedName}”`,
  );

  useEffect(() => {
    headingRef.current?.focus();
  }, []);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void editor.save();
  };

  const secret = draft.secretName.trim();
  // A local model is a file run by the app itself: no server address, no key.
  const local = draft.api === "local";
  const keyIsSet = props.secretNames.includes(secret);
  const toolMode = useToolMode(draft);
  const chosenText =
    toolMode.state === "done"
      ? toolModeText(toolMode.value, draft.api)
      : toolMode.state === "loading"
        ? "Auto: looking at this model…"
        : toolMode.state === "failed"
          ? `Could not tell what auto chooses: ${toolMode.message}`
          : null;

  return (
    <form
      className="profile-form"
      onSubmit={submit}
      noValidate
      aria-labelledby="profile-form-title"
      aria-busy={disabled}
      onKeyDown={(e) => {
        if (e.key === "Escape" && !disabled) props.onCancel();
      }}
    >
      <h3 id="profile-form-title" ref={headingRef} tabIndex={-1}>
        {props.title}
      </h3>
      {errors.general.length > 0 && (
        <div className="form-errors" role="alert" data-testid="profile-errors">
          <p>The profile was not saved:</p>
          <ul>
            {errors.general.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </div>
      )}
      {Object.keys(fe).length > 0 && errors.general.length === 0 && (
        <p className="form-errors" role="alert">
          The profile was not saved; see the highlighted fields.
        </p>
      )}
      <div className="form-grid">
        <Field label="Preset" hint="Fills in the server address and API type.">
          {(c) => (
            <select
              {...c}
              value={draft.preset}
              disabled={disabled}
              onChange={(e) => editor.choosePreset(e.target.value)}
            >
              <option value={CUSTOM}>Custom server</option>
              {FORM_PRESETS.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Profile name" hint="Agents refer to a profile by this name." error={fe.name}>
          {(c) => (
            <input
              {...c}
              value={draft.name}
              disabled={disabled}
              autoComplete="off"
              spellCheck={false}
              onChange={(e) => editor.update({ name: e.target.value })}
            />
          )}
        </Field>
        <Field label="API type" error={fe.api}>
          {(c) => (
            <select
              {...c}
              value={draft.api}
              disabled={disabled}
              onChange={(e) => {
                const api = e.target.value;
                editor.setApi(api === "local" || api === "anthropic" ? api : "openai");
              }}
            >
              <option value="openai">OpenAI-compatible</option>
              <option value="anthropic">Anthropic</option>
              <option value="local">On this computer (a GGUF model file)</option>
            </select>
          )}
        </Field>
        {!local && (
          <Field label="Base URL" error={fe.base_url} className="span-2">
            {(c) => (
              <input
                {...c}
                type="url"
                value={draft.base_url}
                disabled={disabled}
                spellCheck={false}
                placeholder="https://api.example.com/v1"
                onChange={(e) => editor.update({ base_url: e.target.value })}
              />
            )}
          </Field>
        )}
        {local ? (
          <LocalModelField
            value={draft.model}
            onGetModel={props.onOpenModels}
            disabled={disabled}
            error={fe.model}
            onChange={(model) => editor.update({ model })}
          />
        ) : (
          <ModelField
            draft={draft}
            value={draft.model}
            disabled={disabled}
            error={fe.model}
            onChange={(model) => editor.update({ model })}
          />
        )}
      </div>

      {!local && (
        <fieldset className="key-group" disabled={disabled}>
          <legend>API key</legend>
          <label className="checkbox">
            <input
              type="checkbox"
              checked={draft.useKey}
              onChange={(e) => editor.update({ useKey: e.target.checked })}
            />
            This server needs an API key
          </label>
          {draft.useKey && (
            <div className="form-grid">
              <Field
                label="Secret name"
                hint={
                  <>
                    The profile stores <code>{`{{${secret || "NAME"}}}`}</code>; the key itself
                    stays in the system keyring.{" "}
                    {secret !== "" &&
                      (keyIsSet ? (
                        <span className="tag tag-ok">set</span>
                      ) : (
                        <span className="tag tag-missing">not set</span>
                      ))}
                  </>
                }
                error={fe.secretName}
              >
                {(c) => (
                  <input
                    {...c}
                    value={draft.secretName}
                    autoComplete="off"
                    spellCheck={false}
                    onChange={(e) => editor.update({ secretName: e.target.value })}
                  />
                )}
              </Field>
              <Field
                label="API key"
                hint={
                  editor.storedAs !== null && draft.keyValue === ""
                    ? `Stored in the keyring as ${editor.storedAs}.`
                    : keyIsSet
                      ? "Leave empty to keep the stored key; type a new one to replace it."
                      : "Stored in the keyring when you save or test; never shown again."
                }
                error={fe.keyValue}
              >
                {(c) => (
                  <input
                    {...c}
                    type="password"
                    value={draft.keyValue}
                    autoComplete="off"
                    spellCheck={false}
                    onChange={(e) => editor.update({ keyValue: e.target.value })}
                  />
                )}
              </Field>
            </div>
          )}
        </fieldset>
      )}

      <ToolCallsField
        value={draft.tool_calls}
        error={fe.tool_calls}
        disabled={disabled}
        chosen={chosenText}
        onChange={(tool_calls) => editor.update({ tool_calls })}
      />

      <details
        className="advanced"
        open={advancedOpen}
        onToggle={(e) => setAdvanced(e.currentTarget.open)}
      >
        <summary>Advanced options</summary>
        <div className="form-grid">
          <Field
            label="Temperature"
            hint="0–2; empty for the server's default."
            error={fe.temperature}
          >
            {(c) => (
              <input
                {...c}
                type="number"
                inputMode="decimal"
                min={0}
                max={2}
                step={0.1}
                value={draft.temperature}
                disabled={disabled}
                onChange={(e) => editor.update({ temperature: e.target.value })}
              />
            )}
          </Field>
          <Field label="Max tokens" hint="Answer length limit." error={fe.max_tokens}>
            {(c) => (
              <input
                {...c}
                type="number"
                inputMode="numeric"
                min={1}
                step={1}
                value={draft.max_tokens}
                disabled={disabled}
                onChange={(e) => editor.update({ max_tokens: e.target.value })}
              />
            )}
          </Field>
          <ContextWindowField
            draft={draft}
            active={advancedOpen}
            error={fe.context_window}
            disabled={disabled}
            onChange={(context_window) => editor.update({ context_window })}
          />
          <Field
            label="Idle timeout (s)"
            hint="How long the server may stay silent."
            error={fe.timeout}
          >
            {(c) => (
              <input
                {...c}
                type="number"
                inputMode="decimal"
                min={1}
                value={draft.timeout}
                disabled={disabled}
                onChange={(e) => editor.update({ timeout: e.target.value })}
              />
            )}
          </Field>
          <Field
            label="Guided tool calls"
            hint={
              local
                ? "The model's sampler keeps each call it writes well-formed: a tool the agent has, its parameters, their types."
                : "Only a llama.cpp server follows the call grammar; others ignore or refuse it."
            }
          >
            {(c) => (
              <select
                {...c}
                value={draft.guided_calls ?? ""}
                disabled={disabled}
                onChange={(e) =>
                  editor.update({
                    guided_calls: e.target.value === "" ? null : (e.target.value as Switch),
                  })
                }
              >
                <option value="">Default ({local ? "on" : "off"} for this profile)</option>
                <option value="on">On</option>
                <option value="off">Off</option>
              </select>
            )}
          </Field>
        </div>
      </details>

      <div className="form-actions">
        <button type="button" onClick={() => void editor.runTest()} disabled={disabled}>
          {busy === "testing" && <Spinner />} Test connection
        </button>
        <span className="spacer" />
        <button type="button" onClick={props.onCancel} disabled={disabled}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={disabled}>
          {busy === "saving" && <Spinner />} {busy === "saving" ? "Saving…" : props.submitLabel}
        </button>
      </div>
      <ConnectionTestResult state={editor.test} />
    </form>
  );
}
