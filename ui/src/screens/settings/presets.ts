import type { Api, ToolCallMode } from "../../bindings";

/** A common model server: what the profile form fills in when it is chosen. */
export interface Preset {
  id: string;
  label: string;
  api: Api;
  base_url: string;
  /** A model name to start from (the user can change it). */
  model: string;
  /** The secret holding the key, or null for local servers that need none. */
  secret: string | null;
  /** True for models run on this machine (by a local server, or by the app itself). */
  local: boolean;
  /**
   * How its models call tools: `native` (the API's tool calling) for strong hosted models,
   * `text` (the XML format, which any model can write) for the rest.
   */
  tool_calls: ToolCallMode;
}

export const PRESETS: readonly Preset[] = [
  {
    id: "openai",
    label: "OpenAI",
    api: "openai",
    base_url: "https://api.openai.com/v1",
    model: "gpt-4o-mini",
    secret: "OPENAI_API_KEY",
    local: false,
    tool_calls: "native",
  },
  {
    id: "anthropic",
    label: "Anthropic",
    api: "anthropic",
    base_url: "https://api.anthropic.com",
    model: "claude-sonnet-4-5",
    secret: "ANTHROPIC_API_KEY",
    local: false,
    tool_calls: "native",
  },
  {
    id: "deepseek",
    label: "DeepSeek",
    api: "openai",
    base_url: "https://api.deepseek.com/v1",
    model: "deepseek-chat",
    secret: "DEEPSEEK_API_KEY",
    local: false,
    tool_calls: "text",
  },
  {
    id: "openrouter",
    label: "OpenRouter",
    api: "openai",
    base_url: "https://openrouter.ai/api/v1",
    model: "openai/gpt-4o-mini",
    secret: "OPENROUTER_API_KEY",
    local: false,
    tool_calls: "text",
  },
  {
    id: "ollama",
    label: "Ollama",
    api: "openai",
    base_url: "http://127.0.0.1:11434/v1",
    model: "qwen2.5:7b",
    secret: null,
    local: true,
    tool_calls: "text",
  },
  {
    id: "lmstudio",
    label: "LM Studio",
    api: "openai",
    base_url: "http://127.0.0.1:1234/v1",
    model: "local-model",
    secret: null,
    local: true,
    tool_calls: "text",
  },
  {
    id: "llamacpp",
    label: "llama.cpp",
    api: "openai",
    base_url: "http://127.0.0.1:8080/v1",
    model: "local-model",
    secret: null,
    local: true,
    tool_calls: "text",
  },
];

/**
 * A model file run by the app itself (`api: local`): no server, no key, and the tool-call mode
 * chosen per model. Not among [`PRESETS`] (the first-run setup has its own way to it); every
 * local profile is of this preset, whatever its `base_url` says.
 */
export const LOCAL_PRESET: Preset = {
  id: "local",
  label: "On this computer",
  api: "local",
  base_url: "",
  model: "",
  secret: null,
  local: true,
  tool_calls: "auto",
};

/** Every preset the profile form offers: the servers, then a model file on this computer. */
export const FORM_PRESETS: readonly Preset[] = [...PRESETS, LOCAL_PRESET];

/** The preset id of a server no preset describes (its tool calls default to `text`). */
export const CUSTOM = "custom";

/** How a profile calls tools when its preset says nothing (custom servers) or it has no mode. */
export const DEFAULT_TOOL_CALLS: ToolCallMode = "text";

/** The tool-call mode a preset (or `custom`) suggests. */
export function suggestedToolCalls(presetId: string): ToolCallMode {
  return presetById(presetId)?.tool_calls ?? DEFAULT_TOOL_CALLS;
}

export function presetById(id: string): Preset | undefined {
  return FORM_PRESETS.find((p) => p.id === id);
}

/** The preset whose server a profile talks to, if any; [`LOCAL_PRESET`] for every local one. */
export function presetFor(api: Api, baseUrl: string): Preset | undefined {
  if (api === "local") return LOCAL_PRESET;
  const url = baseUrl.trim().replace(/\/+$/, "");
  return PRESETS.find((p) => p.api === api && p.base_url === url);
}
