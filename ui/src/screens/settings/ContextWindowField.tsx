import { commands, type WindowHint } from "../../bindings";
import { Field } from "../../components/Field";
import { call } from "../../ipc/call";
import type { ProfileDraft } from "./profileDraft";
import { type Asked, serverSignature, useServerAsk } from "./serverAsk";

/** "4,096 tokens — reported by the server (…)" and the like, for the hint beside the field. */
export function windowHintText(h: WindowHint): string {
  const tokens = `${h.tokens.toLocaleString("en-US")} tokens`;
  switch (h.source) {
    case "server":
      return `${tokens} — reported by the server${h.detail ? ` (${h.detail})` : ""}`;
    case "known_model":
      return `${tokens} — default for ${h.detail ?? "this model"}`;
    case "profile":
      return `${tokens} — set in the profile`;
    case "default":
      return `${tokens} — conservative default; set it if your server runs a larger context${
        h.detail ? ` (${h.detail})` : ""
      }`;
  }
}

/**
 * What the engine would use if the draft's context window were empty: the backend asks the
 * draft's server (llama.cpp `/props`, Ollama `/api/show`, a `/models` entry), else a known
 * model's default, else the conservative default. Asked again when the server, dialect, model
 * or key changes (after typing pauses), and only while `active` (the section is open).
 */
export function useWindowHint(draft: ProfileDraft, active: boolean): Asked<WindowHint> {
  return useServerAsk(serverSignature(draft, true, active), (profile, key) =>
    call(commands.discoverContextWindow(profile, key)),
  );
}

/**
 * The profile's context window in tokens (what one request may hold, answer included). Empty
 * lets the engine find it; the hint says what it would use and where that comes from.
 */
export function ContextWindowField(props: {
  draft: ProfileDraft;
  active: boolean;
  error: string | undefined;
  disabled: boolean;
  onChange: (value: string) => void;
}) {
  const asking = useWindowHint(props.draft, props.active);
  const found =
    asking.state === "loading"
      ? "Asking the server for its context window…"
      : asking.state === "done"
        ? `Empty uses ${windowHintText(asking.value)}.${asking.value.note ? ` ${asking.value.note}` : ""}`
        : asking.state === "failed"
          ? `Could not ask the server: ${asking.message}`
          : "Tokens one request may hold, answer included; empty lets the engine find it.";
  return (
    <Field
      label="Context window"
      hint={<span data-testid="context-window-hint">{found}</span>}
      error={props.error}
    >
      {(c) => (
        <input
          {...c}
          type="text"
          inputMode="numeric"
          placeholder="tokens"
          value={props.draft.context_window}
          disabled={props.disabled}
          autoComplete="off"
          spellCheck={false}
          data-testid="context-window-input"
          onChange={(e) => props.onChange(e.target.value)}
        />
      )}
    </Field>
  );
}
