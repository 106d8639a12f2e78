import { useEffect, useRef, useState } from "react";
import type { Api, ModelProfile } from "../../bindings";
import { errorMessage } from "../../ipc/call";
import { buildProfile, type ProfileDraft } from "./profileDraft";

/** What was asked of a draft profile's server: not asked (yet), being asked, or the answer. */
export type Asked<T> =
  | { state: "idle" }
  | { state: "loading" }
  | { state: "done"; value: T }
  | { state: "failed"; message: string };

/** How long typing must pause before the server is asked. */
const PAUSE_MS = 400;

/**
 * The server a draft profile would talk to, as the key of a question to it: its dialect, base
 * URL, key template and a typed unsaved key (plus the model name when `withModel`). Empty when
 * the draft cannot be asked yet (no full http(s) URL) or `active` is false.
 */
export function serverSignature(draft: ProfileDraft, withModel: boolean, active = true): string {
  // The draft's own context window plays no part in what its server says.
  const built = buildProfile({ ...draft, context_window: "" });
  if (!active || !built.ok || !/^https?:\/\/[^/]+/.test(built.profile.base_url)) return "";
  const p = built.profile;
  const key = draft.useKey ? draft.keyValue : "";
  return JSON.stringify([p.api, p.base_url, withModel ? p.model : "", p.api_key, key]);
}

/** The profile a [`serverSignature`] stands for (named "probe", no options) and its typed key. */
function probe(signature: string): { profile: ModelProfile; key: string | null } {
  const [api, base_url, model, api_key, key] = JSON.parse(signature) as [
    Api,
    string,
    string,
    string | null,
    string,
  ];
  return {
    profile: {
      name: "probe",
      api,
      base_url,
      model,
      api_key,
      temperature: null,
      max_tokens: null,
      timeout: null,
    },
    key: key === "" ? null : key,
  };
}

/**
 * Ask the server of `signature` (see [`serverSignature`]) through `ask` once typing pauses, and
 * again whenever the signature changes; an answer for an older signature is dropped. A typed,
 * unsaved key goes with that one request only. `""` asks nothing.
 */
export function useServerAsk<T>(
  signature: string,
  ask: (profile: ModelProfile, key: string | null) => Promise<T>,
): Asked<T> {
  const [asked, setAsked] = useState<Asked<T>>({ state: "idle" });
  // The latest `ask`, without asking again each time the caller renders a new function.
  const latest = useRef(ask);
  useEffect(() => {
    latest.current = ask;
  });
  useEffect(() => {
    if (signature === "") return;
    const { profile, key } = probe(signature);
    let alive = true;
    const timer = window.setTimeout(() => {
      setAsked({ state: "loading" });
      latest.current(profile, key).then(
        (value) => alive && setAsked({ state: "done", value }),
        (e: unknown) => alive && setAsked({ state: "failed", message: errorMessage(e) }),
      );
    }, PAUSE_MS);
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [signature]);
  return signature === "" ? { state: "idle" } : asked;
}
