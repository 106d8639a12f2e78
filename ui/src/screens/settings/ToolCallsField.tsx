import { useId } from "react";
import type { ToolCallMode } from "../../bindings";

const CHOICES: readonly { mode: ToolCallMode; label: string; detail: string }[] = [
  {
    mode: "auto",
    label: "Auto",
    detail:
      "chosen per local model: what its tool-use check found best, else its own call form when its template takes tools, else text",
  },
  {
    mode: "text",
    label: "Text (XML)",
    detail: "works with any model; best for small local models",
  },
  {
    mode: "native",
    label: "Native",
    detail: "the API's own tool calling; best for OpenAI, Anthropic and other strong hosted models",
  },
];

/**
 * How the profile's model calls tools: chosen per model (auto), the XML text format (any model)
 * or the API's native tool calling. A group of radio buttons (arrow keys move between them), with a hint and an error.
 */
export function ToolCallsField(props: {
  value: ToolCallMode;
  error?: string | undefined;
  disabled?: boolean;
  /** What `auto` chose for the profile's model and why (see `toolModeText`), when it says auto. */
  chosen?: string | null;
  onChange: (value: ToolCallMode) => void;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const chosenId = `${id}-chosen`;
  const errorId = `${id}-error`;
  const describedBy = [hintId, props.chosen ? chosenId : "", props.error ? errorId : ""]
    .filter((i) => i !== "")
    .join(" ");
  return (
    <fieldset
      className={`choice-field${props.error ? " field-invalid" : ""}`}
      disabled={props.disabled}
      aria-describedby={describedBy}
      data-testid="tool-calls-field"
    >
      <legend>Tool calls</legend>
      {CHOICES.map((c) => (
        <label key={c.mode} className="choice">
          <input
            type="radio"
            name={`${id}-tool-calls`}
            value={c.mode}
            checked={props.value === c.mode}
            onChange={() => props.onChange(c.mode)}
          />
          <span>
            <span className="choice-label">{c.label}</span>
            <span className="choice-detail"> — {c.detail}</span>
          </span>
        </label>
      ))}
      <p className="field-hint" id={hintId}>
        In native mode, calls the model writes as XML in its text still run.
      </p>
      {props.chosen && (
        <p className="field-hint" id={chosenId} aria-live="polite" data-testid="tool-mode-line">
          {props.chosen}
        </p>
      )}
      {props.error && (
        <p className="field-error" id={errorId} role="alert">
          {props.error}
        </p>
      )}
    </fieldset>
  );
}
