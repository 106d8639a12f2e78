import { useEffect, useRef, useState, type FormEvent } from "react";
import type { CallOrigin, ElicitationField, ElicitationReply } from "../bindings";
import { Field, type FieldControlProps } from "../components/Field";
import { Modal } from "../components/Modal";
import { errorMessage } from "../ipc/call";
import { ArmingNote } from "./ArmingNote";
import { useArming } from "./arming";
import { initialValues, validateForm, type FieldValue } from "./elicitationForm";
import type { PendingElicitation } from "./useElicitations";

/**
 * The form an MCP server asks for during a call, built from its requested schema with the
 * defaults filled in: who asks (server, conversation, agent chain), the server's message, one
 * field per property, checked as the user types. Accept sends the values (the engine checks
 * them again and refuses what does not fit), Decline refuses, Cancel (Esc) dismisses. A URL
 * request shows the page and opens it only when the user clicks. A countdown shows how long
 * is left before the engine cancels the request (its deadline, from the engine's clock).
 * Several requests are answered in the order they came.
 *
 * Like the permission dialog, each request opens with the focus on its title (not in a field,
 * where Enter would submit) and Accept (Enter) and Open in browser work only once armed
 * ({@link useArming}): a second on screen with no key press or click, again for each queued
 * request. Decline and Cancel work at once.
 */
export function ElicitationDialog(props: {
  queue: PendingElicitation[];
  onAnswer: (requestId: string, reply: ElicitationReply) => Promise<void>;
  onOpenUrl: (url: string) => Promise<void>;
}) {
  const current = props.queue[0];
  const { armed, disarm } = useArming(current?.requestId ?? null);

  // Keys while the dialog shows (it is modal: every key lands here): any key while disarmed
  // restarts the wait, and a held (repeating) Enter never submits.
  const showing = current !== undefined;
  useEffect(() => {
    if (!showing) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Enter" && e.repeat) e.preventDefault();
      if (!armed) disarm();
    };
    document.addEventListener("keydown", onKey, true);
    return () => document.removeEventListener("keydown", onKey, true);
  }, [showing, armed, disarm]);

  if (!current)
    return <Modal open={false} className="elicitation-dialog" data-testid="elicitation-dialog" />;
  return (
    <Modal
      open
      className="elicitation-dialog"
      aria-labelledby="elicitation-title"
      data-testid="elicitation-dialog"
      data-armed={armed ? "true" : "false"}
      onEscape={() => void props.onAnswer(current.requestId, { action: "cancel" }).catch(() => {})}
      onPointerDown={() => {
        if (!armed) disarm();
      }}
    >
      <ElicitationBody
        key={current.requestId}
        request={current}
        waiting={props.queue.length - 1}
        armed={armed}
        onDisarmedUse={disarm}
        onAnswer={(reply) => props.onAnswer(current.requestId, reply)}
        onOpenUrl={props.onOpenUrl}
      />
    </Modal>
  );
}

function ElicitationBody(props: {
  request: PendingElicitation;
  waiting: number;
  /** Accept and Open in browser work (see {@link useArming}). */
  armed: boolean;
  /** Accept was tried before the dialog was armed (Enter in a field): wait again. */
  onDisarmedUse: () => void;
  onAnswer: (reply: ElicitationReply) => Promise<void>;
  onOpenUrl: (url: string) => Promise<void>;
}) {
  const { request } = props;
  const form = request.form;
  const [values, setValues] = useState(() => (form ? initialValues(form) : {}));
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const [submitted, setSubmitted] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const title = useRef<HTMLHeadingElement>(null);

  // Each request starts with the focus on its title: nothing a keystroke could submit.
  useEffect(() => {
    title.current?.focus();
  }, []);

  const checked = form ? validateForm(form, values) : { content: {}, errors: {} };
  const send = async (reply: ElicitationReply) => {
    setBusy(true);
    setFailure(null);
    try {
      await props.onAnswer(reply);
    } catch (e) {
      // A refusal says why; a failure with no words still must not look like nothing happened.
      setFailure(errorMessage(e) || "The answer was not delivered; try again.");
      setBusy(false);
    }
  };
  const accept = (e: FormEvent) => {
    e.preventDefault();
    if (!props.armed) {
      props.onDisarmedUse();
      return;
    }
    setSubmitted(true);
    if (Object.keys(checked.errors).length > 0) return;
    void send({ action: "accept", content: checked.content });
  };
  const set = (name: string, value: FieldValue) => setValues((v) => ({ ...v, [name]: value }));
  const touch = (name: string) => setTouched((t) => ({ ...t, [name]: true }));

  return (
    <form onSubmit={accept} noValidate>
      <h2 id="elicitation-title" tabIndex={-1} ref={title}>
        <code>{request.server}</code> asks for {form ? "information" : "you to open a page"}
      </h2>
      <p data-testid="elicitation-origin">{describeOrigin(request.origin)}</p>
      <p className="elicitation-message" data-testid="elicitation-message">
        {request.message}
      </p>
      {request.url !== null && (
        <div className="elicitation-url">
          <code data-testid="elicitation-url">{request.url}</code>
          <button
            type="button"
            onClick={() =>
              void props
                .onOpenUrl(request.url ?? "")
                .catch((e: unknown) => setFailure(errorMessage(e)))
            }
            disabled={!props.armed}
            data-testid="elicitation-open"
          >
            Open in browser
          </button>
        </div>
      )}
      {form && (
        <div className="elicitation-fields">
          {form.fields.map((field) => (
            <FieldInput
              key={field.name}
              field={field}
              value={values[field.name] ?? ""}
              error={submitted || touched[field.name] ? checked.errors[field.name] : undefined}
              onChange={(v) => set(field.name, v)}
              onBlur={() => touch(field.name)}
            />
          ))}
        </div>
      )}
      {failure && (
        <p className="form-errors" role="alert" data-testid="elicitation-failure">
          {failure}
        </p>
      )}
      <p className="muted small">
        The answer goes to the server <code>{request.server}</code> only.
        {props.waiting > 0 && ` ${props.waiting} more waiting.`}{" "}
        <Countdown deadlineMs={request.deadlineMs} />
      </p>
      <div className="dialog-actions">
        <ArmingNote
          armed={props.armed}
          action={form ? "Accept" : "Continue"}
          testid="elicitation-arming"
        />
        <button
          type="button"
          onClick={() => void send({ action: "cancel" })}
          disabled={busy}
          data-testid="elicitation-cancel"
        >
          Cancel <kbd>Esc</kbd>
        </button>
        <button
          type="button"
          onClick={() => void send({ action: "decline" })}
          disabled={busy}
          data-testid="elicitation-decline"
        >
          Decline
        </button>
        <button
          type="submit"
          className="primary"
          disabled={busy || !props.armed}
          data-testid="elicitation-accept"
        >
          {form ? "Accept" : "Continue"}
        </button>
      </div>
    </form>
  );
}

/** How long is left until `deadlineMs` (ms since the epoch), as `m:ss`, updated live. */
function Countdown({ deadlineMs }: { deadlineMs: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  const left = Math.max(0, Math.ceil((deadlineMs - now) / 1000));
  const seconds = String(left % 60).padStart(2, "0");
  return (
    <span data-testid="elicitation-countdown">
      Cancelled automatically in {Math.floor(left / 60)}:{seconds}.
    </span>
  );
}

/** Which conversation and agents the question comes from. */
function describeOrigin(origin: CallOrigin | null): string {
  if (!origin) return "During a tool call of this server (which conversation is not known).";
  const where = origin.conversation_title || "an untitled conversation";
  return origin.agent_chain.length > 0
    ? `During a call by ${origin.agent_chain.join(" → ")} in ${where}.`
    : `During a direct call in ${where}.`;
}

/** Limits of a field, in words, next to its description. */
function hintOf(field: ElicitationField): string | undefined {
  const kind = field.kind;
  const parts: string[] = [];
  if (field.description) parts.push(field.description);
  if (kind.type === "text") {
    if (kind.min_length !== null) parts.push(`at least ${kind.min_length} characters`);
    if (kind.max_length !== null) parts.push(`at most ${kind.max_length} characters`);
    if (kind.format === "date-time") parts.push("YYYY-MM-DDThh:mm:ssZ");
  } else if (kind.type === "number") {
    if (kind.minimum !== null && kind.maximum !== null)
      parts.push(`from ${kind.minimum} to ${kind.maximum}`);
    else if (kind.minimum !== null) parts.push(`at least ${kind.minimum}`);
    else if (kind.maximum !== null) parts.push(`at most ${kind.maximum}`);
  } else if (kind.type === "multi_choice") {
    if (kind.min_items !== null) parts.push(`choose at least ${kind.min_items}`);
    if (kind.max_items !== null) parts.push(`choose at most ${kind.max_items}`);
  }
  return parts.length > 0 ? parts.join(" · ") : undefined;
}

const INPUT_TYPES = { email: "email", uri: "url", date: "date", "date-time": "text" } as const;

function FieldInput(props: {
  field: ElicitationField;
  value: FieldValue;
  error: string | undefined;
  onChange: (value: FieldValue) => void;
  onBlur: () => void;
}) {
  const { field, value, onChange, onBlur } = props;
  const kind = field.kind;
  const label = (
    <>
      {field.title}
      {field.required && <span aria-hidden="true"> *</span>}
    </>
  );
  const control = (c: FieldControlProps) => {
    const common = { ...c, onBlur, required: field.required, "data-field": field.name };
    switch (kind.type) {
      case "boolean":
        return (
          <input
            {...common}
            type="checkbox"
            required={false}
            checked={value === true}
            onChange={(e) => onChange(e.target.checked)}
          />
        );
      case "choice":
        return (
          <select
            {...common}
            value={typeof value === "string" ? value : ""}
            onChange={(e) => onChange(e.target.value)}
          >
            {(!field.required || kind.default === null) && <option value="">(none)</option>}
            {kind.options.map((o) => (
              <option key={o.value} value={o.value}>
                {o.title}
              </option>
            ))}
          </select>
        );
      case "multi_choice": {
        const chosen = Array.isArray(value) ? value : [];
        return (
          <div
            role="group"
            aria-label={field.title}
            id={c.id}
            aria-describedby={c["aria-describedby"]}
            className="elicitation-options"
            data-field={field.name}
          >
            {kind.options.map((o) => (
              <label key={o.value}>
                <input
                  type="checkbox"
                  onBlur={onBlur}
                  checked={chosen.includes(o.value)}
                  onChange={(e) =>
                    onChange(
                      e.target.checked
                        ? kind.options
                            .map((x) => x.value)
                            .filter((v) => v === o.value || chosen.includes(v))
                        : chosen.filter((v) => v !== o.value),
                    )
                  }
                />{" "}
                {o.title}
              </label>
            ))}
          </div>
        );
      }
      case "number":
        return (
          <input
            {...common}
            type="number"
            inputMode={kind.integer ? "numeric" : "decimal"}
            step={kind.integer ? 1 : "any"}
            value={typeof value === "string" ? value : ""}
            onChange={(e) => onChange(e.target.value)}
          />
        );
      case "text":
        return (
          <input
            {...common}
            type={kind.format ? INPUT_TYPES[kind.format] : "text"}
            value={typeof value === "string" ? value : ""}
            onChange={(e) => onChange(e.target.value)}
          />
        );
    }
  };
  return (
    <Field
      label={label}
      hint={hintOf(field)}
      error={props.error}
      className={kind.type === "boolean" ? "field-check" : ""}
    >
      {control}
    </Field>
  );
}
