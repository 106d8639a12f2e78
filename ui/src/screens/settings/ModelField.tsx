import { useEffect, useState } from "react";
import { commands, type Api, type ModelList } from "../../bindings";
import { Field } from "../../components/Field";
import { call, errorMessage } from "../../ipc/call";
import { buildProfile, type ProfileDraft } from "./profileDraft";

const OTHER = "\u0000other";

/** What the server's model list says: not asked (yet), being asked, or the answer. */
type Listing = { state: "idle" } | { state: "loading" } | { state: "done"; list: ModelList };

/**
 * The models the draft's server lists (`GET …/models`, asked by the backend), asked again when
 * the server, dialect or key changes (after typing pauses). A typed, unsaved key is sent for
 * this one request only.
 */
export function useModelList(draft: ProfileDraft): Listing {
  const [listing, setListing] = useState<Listing>({ state: "idle" });
  const built = buildProfile(draft);
  const profile = built.ok ? built.profile : null;
  const url = profile?.base_url ?? "";
  const usable = profile !== null && /^https?:\/\/[^/]+/.test(url);
  const key = draft.useKey ? draft.keyValue : "";
  const signature = usable ? JSON.stringify([profile.api, url, profile.api_key, key]) : "";
  useEffect(() => {
    if (signature === "") return;
    const [api, base_url, api_key, typed] = JSON.parse(signature) as [
      Api,
      string,
      string | null,
      string,
    ];
    let alive = true;
    const timer = window.setTimeout(() => {
      setListing({ state: "loading" });
      call(
        commands.listModels(
          {
            name: "probe",
            api,
            base_url,
            model: "",
            api_key,
            temperature: null,
            max_tokens: null,
            timeout: null,
          },
          typed === "" ? null : typed,
        ),
      ).then(
        (list) => alive && setListing({ state: "done", list }),
        (e: unknown) =>
          alive &&
          setListing({
            state: "done",
            list: { models: [], note: `${errorMessage(e)} Type the model name.` },
          }),
      );
    }, 400);
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [signature]);
  return signature === "" ? { state: "idle" } : listing;
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
