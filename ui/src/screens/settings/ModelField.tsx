import { useState } from "react";
import { commands, type ModelList } from "../../bindings";
import { Field } from "../../components/Field";
import { call } from "../../ipc/call";
import type { ProfileDraft } from "./profileDraft";
import { serverSignature, useServerAsk } from "./serverAsk";

const OTHER = "\u0000other";

/** What the server's model list says: not asked (yet), being asked, or the answer. */
type Listing = { state: "idle" } | { state: "loading" } | { state: "done"; list: ModelList };

/**
 * The models the draft's server lists (`GET …/models`, asked by the backend), asked again when
 * the server, dialect or key changes (after typing pauses). A typed, unsaved key is sent for
 * this one request only. A failure is a list with a note saying to type the name.
 */
export function useModelList(draft: ProfileDraft): Listing {
  const asked = useServerAsk(serverSignature(draft, false), (profile, key) =>
    call(commands.listModels(profile, key)),
  );
  switch (asked.state) {
    case "done":
      return { state: "done", list: asked.value };
    case "failed":
      return { state: "done", list: { models: [], note: `${asked.message} Type the model name.` } };
    default:
      return asked;
  }
}

/**
 * The profile's model: a picker of the models the server lists, with "Other…" for a name it
 * does not list; free text (with a short note why) when the server has no list or it failed.
 */
export function ModelField(props: {
  draft: ProfileDraft;
  value: string;
  onChange: (model: string) => void;
  error: string | undefined;
  disabled?: boolean;
  hint?: string;
}) {
  const listing = useModelList(props.draft);
  const models = listing.state === "done" ? listing.list.models : [];
  const [other, setOther] = useState(false);
  const picking = models.length > 0 && !other;
  const unlisted = props.value !== "" && !models.includes(props.value);
  const note =
    listing.state === "loading"
      ? "Asking the server for its models…"
      : listing.state === "done" && listing.list.note
        ? listing.list.note
        : picking && unlisted
          ? `The server does not list ${props.value}; pick one it has, or keep it.`
          : props.hint;
  return (
    <Field label="Model" hint={note} error={props.error}>
      {(c) =>
        picking ? (
          <select
            {...c}
            value={props.value}
            disabled={props.disabled}
            data-testid="model-picker"
            onChange={(e) => {
              if (e.target.value === OTHER) {
                setOther(true);
              } else {
                props.onChange(e.target.value);
              }
            }}
          >
            {props.value === "" && <option value="">Choose a model…</option>}
            {unlisted && <option value={props.value}>{props.value} (not listed)</option>}
            {models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
            <option value={OTHER}>Other (type a name)…</option>
          </select>
        ) : (
          <input
            {...c}
            value={props.value}
            disabled={props.disabled}
            spellCheck={false}
            data-testid="model-input"
            onChange={(e) => props.onChange(e.target.value)}
          />
        )
      }
    </Field>
  );
}
