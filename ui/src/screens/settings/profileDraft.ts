import type {
  Api,
  ModelProfile,
  StreamLimits,
  Switch,
  ToolCallMode,
  ToolFamily,
} from "../../bindings";
import {
  CUSTOM,
  DEFAULT_TOOL_CALLS,
  LOCAL_PRESET,
  PRESETS,
  presetById,
  presetFor,
  suggestedToolCalls,
  type Preset,
} from "./presets";
import {
  SECRET_NAME_RULE,
  isValidSecretName,
  secretNameForProfile,
  templateFor,
  templateName,
} from "./secretNames";

/**
 * What the profile form edits. Numbers stay text until saving, so a half-typed value is not
 * lost; the API key value is only ever held here until it is stored in the keyring.
 */
export interface ProfileDraft {
  /** Preset id, or `custom`. */
  preset: string;
  name: string;
  api: Api;
  base_url: string;
  model: string;
  /** Does the server need an API key? */
  useKey: boolean;
  /** The secret the profile's `api_key` template names. */
  secretName: string;
  /** Once the user edits the secret name it is no longer derived. */
  secretNameEdited: boolean;
  /** A key typed in the form, not yet stored. Never filled from the backend. */
  keyValue: string;
  temperature: string;
  max_tokens: string;
  /** Tokens one request may hold; empty lets the engine find it (server, known model, default). */
  context_window: string;
  timeout: string;
  /** How the model calls tools: the XML text format or the API's native tool calling. */
  tool_calls: ToolCallMode;
  /** Once the user chooses the mode by hand, choosing a preset no longer changes it. */
  toolCallsEdited: boolean;
  /** Stream limits written in models.yaml: the form does not edit them, but saving keeps them. */
  limits?: StreamLimits | null;
  /** Guided calls as written in models.yaml (`null`: the default for the API); saving keeps it. */
  guided_calls?: Switch | null;
  /** The tool-call family as written in models.yaml (`null`: from the model file); saving keeps it. */
  tool_family?: ToolFamily | null;
}

/** The form's fields; `api_key` errors from the backend land on `secretName`. */
export type DraftField =
  | "name"
  | "api"
  | "base_url"
  | "model"
  | "secretName"
  | "keyValue"
  | "temperature"
  | "max_tokens"
  | "context_window"
  | "timeout"
  | "tool_calls";

export type FieldErrors = Partial<Record<DraftField, string>>;

export function emptyDraft(name = ""): ProfileDraft {
  return withDerivedSecret({
    preset: CUSTOM,
    name,
    api: "openai",
    base_url: "",
    model: "",
    useKey: true,
    secretName: "",
    secretNameEdited: false,
    keyValue: "",
    temperature: "",
    max_tokens: "",
    context_window: "",
    timeout: "",
    tool_calls: DEFAULT_TOOL_CALLS,
    toolCallsEdited: false,
  });
}

export function draftFromProfile(p: ModelProfile): ProfileDraft {
  const secret = templateName(p.api_key);
  const preset = presetFor(p.api, p.base_url);
  const toolCalls: ToolCallMode = p.tool_calls ?? DEFAULT_TOOL_CALLS;
  return withDerivedSecret({
    preset: preset?.id ?? CUSTOM,
    name: p.name,
    api: p.api,
    base_url: p.base_url,
    model: p.model,
    useKey: secret !== null,
    secretName: secret ?? "",
    secretNameEdited: secret !== null,
    keyValue: "",
    temperature: numberText(p.temperature),
    max_tokens: numberText(p.max_tokens),
    context_window: numberText(p.context_window),
    timeout: numberText(p.timeout),
    tool_calls: toolCalls,
    // A mode written in the profile other than its server's suggestion was chosen on purpose:
    // keep it across presets. An unset mode (profiles older than the field) follows the preset.
    toolCallsEdited:
      p.tool_calls !== undefined &&
      p.tool_calls !== null &&
      p.tool_calls !== suggestedToolCalls(preset?.id ?? CUSTOM),
    limits: p.limits ?? null,
    guided_calls: p.guided_calls ?? null,
    tool_family: p.tool_family ?? null,
  });
}

/**
 * Change some fields; the secret name follows the preset or profile name, and the tool-call mode
 * the preset, until edited.
 */
export function updateDraft(d: ProfileDraft, patch: Partial<ProfileDraft>): ProfileDraft {
  const next = { ...d, ...patch };
  if (patch.secretName !== undefined) next.secretNameEdited = true;
  if (patch.tool_calls !== undefined) next.toolCallsEdited = true;
  return withDerivedSecret(next);
}

/**
 * Choose a preset: fills api, base_url and whether a key is needed; the model and profile name
 * only when they are empty or still another preset's suggestion; the tool-call mode unless the
 * user chose it by hand. `custom` keeps the server fields (a model file's profile becomes an
 * OpenAI-compatible server's) and suggests the `text` mode.
 */
export function applyPreset(d: ProfileDraft, id: string): ProfileDraft {
  const preset = presetById(id);
  const tool_calls = d.toolCallsEdited ? d.tool_calls : suggestedToolCalls(id);
  if (!preset) {
    return { ...d, preset: CUSTOM, tool_calls, api: d.api === "local" ? "openai" : d.api };
  }
  const suggestedModels = new Set(PRESETS.map((p) => p.model));
  const suggestedNames = new Set(PRESETS.map((p) => p.id));
  return withDerivedSecret({
    ...d,
    preset: preset.id,
    api: preset.api,
    base_url: preset.base_url,
    model: d.model === "" || suggestedModels.has(d.model) ? preset.model : d.model,
    name: d.name === "" || suggestedNames.has(d.name) ? preset.id : d.name,
    useKey: preset.secret !== null,
    tool_calls,
  });
}

/**
 * Change the API type. `local` (a model file the app runs) has no server address and no key,
 * and is the preset “On this computer”; leaving it, the preset is a custom server. Other
 * changes keep the preset. The tool-call mode follows the preset until chosen by hand.
 */
export function chooseApi(d: ProfileDraft, api: Api): ProfileDraft {
  const preset =
    api === "local" ? LOCAL_PRESET.id : d.preset === LOCAL_PRESET.id ? CUSTOM : d.preset;
  const next: ProfileDraft = {
    ...d,
    api,
    preset,
    tool_calls: d.toolCallsEdited ? d.tool_calls : suggestedToolCalls(preset),
  };
  if (api === "local") {
    next.base_url = "";
    next.useKey = false;
  }
  return withDerivedSecret(next);
}

/** The secret name the draft would use if the user had not typed one. */
export function derivedSecretName(d: ProfileDraft): string {
  const preset: Preset | undefined = presetById(d.preset);
  return preset?.secret ?? secretNameForProfile(d.name);
}

function withDerivedSecret(d: ProfileDraft): ProfileDraft {
  return d.secretNameEdited ? d : { ...d, secretName: derivedSecretName(d) };
}

export type Built = { ok: true; profile: ModelProfile } | { ok: false; errors: FieldErrors };

/**
 * The profile to send to the backend. Only checks what the form itself must (numbers, the secret
 * name); everything else is validated by the backend's models.yaml loader.
 */
export function buildProfile(d: ProfileDraft): Built {
  const errors: FieldErrors = {};
  const temperature = parseNumber(d.temperature, "temperature", errors);
  const max_tokens = parseNumber(d.max_tokens, "max_tokens", errors);
  const context_window = parseContextWindow(d.context_window, errors);
  const timeout = parseNumber(d.timeout, "timeout", errors);
  const secret = d.secretName.trim();
  if (d.useKey && !isValidSecretName(secret)) {
    errors.secretName =
      secret === ""
        ? "Name the secret that holds the key."
        : `Not a valid name. ${SECRET_NAME_RULE}`;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    profile: {
      name: d.name.trim(),
      api: d.api,
      base_url: d.base_url.trim(),
      model: d.model.trim(),
      api_key: d.useKey ? templateFor(secret) : null,
      temperature,
      max_tokens,
      context_window,
      tool_calls: d.tool_calls,
      timeout,
      ...(d.limits ? { limits: d.limits } : {}),
      ...(d.guided_calls ? { guided_calls: d.guided_calls } : {}),
      ...(d.tool_family ? { tool_family: d.tool_family } : {}),
    },
  };
}

/** The whole list to save: `profile` replacing the one at `index`, or appended when new. */
export function replaceAt(
  profiles: readonly ModelProfile[],
  index: number | null,
  profile: ModelProfile,
): { list: ModelProfile[]; index: number } {
  if (index === null || index >= profiles.length) {
    return { list: [...profiles, profile], index: profiles.length };
  }
  return { list: profiles.map((p, i) => (i === index ? profile : p)), index };
}

export interface SaveErrors {
  fields: FieldErrors;
  /** Lines not about a field of this profile (other profiles, the file). */
  general: string[];
}

const BACKEND_FIELDS: Record<string, DraftField> = {
  name: "name",
  api: "api",
  base_url: "base_url",
  model: "model",
  api_key: "secretName",
  temperature: "temperature",
  max_tokens: "max_tokens",
  context_window: "context_window",
  timeout: "timeout",
  tool_calls: "tool_calls",
};

/**
 * Place the backend's `invalid_config` lines (`profiles[1].base_url: …`) next to the fields of
 * the profile at `index`; the rest are general, named after their profile where known.
 */
export function placeSaveErrors(
  message: string,
  index: number,
  list: readonly ModelProfile[],
): SaveErrors {
  const result: SaveErrors = { fields: {}, general: [] };
  for (const line of message.split("\n").filter((l) => l.trim() !== "")) {
    const m = /^profiles\[(\d+)\](?:\.([A-Za-z_]+))?:\s*(.*)$/s.exec(line);
    if (!m) {
      result.general.push(line);
      continue;
    }
    const at = Number(m[1]);
    const field = m[2] ? BACKEND_FIELDS[m[2]] : undefined;
    const text = m[3] ?? "";
    if (at === index && field) {
      const previous = result.fields[field];
      result.fields[field] = previous ? `${previous} ${text}` : text;
    } else {
      const owner = list[at]?.name;
      result.general.push(owner ? `Profile “${owner}”: ${text}` : line);
    }
  }
  return result;
}

function parseNumber(
  text: string,
  field: "temperature" | "max_tokens" | "timeout",
  errors: FieldErrors,
): number | null {
  const t = text.trim();
  if (t === "") return null;
  const n = Number(t);
  if (!Number.isFinite(n)) {
    errors[field] = "Enter a number, or leave it empty for the default.";
    return null;
  }
  return n;
}

/** The smallest context window the engine accepts (models.yaml refuses less). */
export const MIN_CONTEXT_WINDOW = 512;

/** A context window: empty (the engine finds it), or a whole number of tokens ≥ 512. */
function parseContextWindow(text: string, errors: FieldErrors): number | null {
  const t = text.trim().replace(/[,_\s]/g, "");
  if (t === "") return null;
  const n = Number(t);
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(n) || n < MIN_CONTEXT_WINDOW || n > 4294967295) {
    errors.context_window = `Enter a whole number of tokens, at least ${MIN_CONTEXT_WINDOW}, or leave it empty to use what the engine finds.`;
    return null;
  }
  return n;
}

function numberText(n: number | null | undefined): string {
  return n === null || n === undefined ? "" : String(n);
}
