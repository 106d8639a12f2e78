import { useEffect, useState } from "react";
import {
  commands,
  type Api,
  type AutoChoice,
  type ModelProfile,
  type ToolFamily,
} from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import type { ProfileDraft } from "./profileDraft";
import type { Asked } from "./serverAsk";

/** How long typing must pause before the backend is asked again. */
const PAUSE_MS = 300;

/** Each tool-call family by the name its models go by. */
const FAMILY_NAMES: Record<ToolFamily, string> = {
  hermes: "Hermes",
  llama3: "Llama 3",
  mistral: "Mistral",
  lfm2: "LFM2",
  "function-gemma": "FunctionGemma",
  granite: "Granite",
  "phi4-mini": "Phi-4-mini",
  unknown: "unknown",
};

/** "native calls, guided", "text calls" and the like. */
function howCalled(choice: AutoChoice): string {
  const mode = choice.mode === "native" ? "native calls" : "text calls";
  return choice.guided ? `${mode}, guided` : mode;
}

/**
 * The line under the Tool calls field: which mode `auto` chose for the profile's model and why,
 * in one sentence per reason ("Auto: native calls, guided — this model's tool-use check scored
 * best this way"). `api` is the draft's, to say why a server's profile gets text.
 */
export function toolModeText(choice: AutoChoice, api: Api): string {
  const how = howCalled(choice);
  switch (choice.reason) {
    case "configured":
      return `${how.charAt(0).toUpperCase()}${how.slice(1)} — set in this profile`;
    case "checked":
      return `Auto: ${how} — this model's tool-use check scored best this way`;
    case "native_family":
      return `Auto: ${how} — this model's template takes tools (${FAMILY_NAMES[choice.family]} family); no check has run yet`;
    case "template_takes_no_tools":
      return `Auto: ${how} — this model's template takes no tools; no check has run yet`;
    case "unknown_family":
      return `Auto: ${how} — this model's template takes tools in a form the app does not know; no check has run yet`;
    case "no_model_file":
      return api === "local"
        ? `Auto: ${how} — the model file is not in the models folder or could not be read`
        : `Auto: ${how} — auto chooses per model only for models run on this computer`;
  }
}

/** The profile the backend resolves: what decides the mode, from the draft. */
function asked(draft: ProfileDraft): ModelProfile {
  return {
    name: draft.name.trim(),
    api: draft.api,
    base_url: draft.base_url.trim(),
    model: draft.model.trim(),
    tool_calls: draft.tool_calls,
    ...(draft.guided_calls ? { guided_calls: draft.guided_calls } : {}),
    ...(draft.tool_family ? { tool_family: draft.tool_family } : {}),
  };
}

/**
 * What `tool_calls: auto` chooses for the draft's model, asked of the backend (as a run would
 * resolve it: the model's tool-use check, else its template) once typing pauses, and again when
 * the API, model, guidance or family changes. Asks nothing unless the draft says `auto`.
 */
export function useToolMode(draft: ProfileDraft): Asked<AutoChoice> {
  const signature =
    draft.tool_calls === "auto" && draft.model.trim() !== "" ? JSON.stringify(asked(draft)) : "";
  const [answer, setAnswer] = useState<{ signature: string; asked: Asked<AutoChoice> }>({
    signature: "",
    asked: { state: "idle" },
  });
  useEffect(() => {
    if (signature === "") return;
    const profile = JSON.parse(signature) as ModelProfile;
    let alive = true;
    const timer = window.setTimeout(() => {
      call(commands.profileToolMode(profile)).then(
        (value) => alive && setAnswer({ signature, asked: { state: "done", value } }),
        (e: unknown) =>
          alive && setAnswer({ signature, asked: { state: "failed", message: errorMessage(e) } }),
      );
    }, PAUSE_MS);
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [signature]);
  if (signature === "") return { state: "idle" };
  return answer.signature === signature ? answer.asked : { state: "loading" };
}
