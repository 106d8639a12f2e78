import { mockIPC } from "@tauri-apps/api/mocks";
import type {
  ConversationSummary,
  Grant,
  InstalledModel,
  ModelProfile,
  ModelsView,
  ProfileModel,
  SettingsView,
  Status,
} from "../bindings";

/** A call the UI made, with its arguments. */
export interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

export interface FakeState {
  profiles: ModelProfile[];
  secret_names: string[];
  missing_secrets: string[];
  permission_timeout_secs: number;
  conversations: ConversationSummary[];
  grants: Grant[];
  /** The models folder's models, as `models_list` lists them. */
  installed: InstalledModel[];
  /** The model of each profile run on this computer, as `get_settings` says it. */
  profile_models: ProfileModel[];
}

export const STATUS: Status = {
  app_version: "1.0.0",
  config_dir: "/home/u/.config/artifactflow",
  database: "/home/u/.local/share/artifactflow/artifactflow.db",
  schema_version: 1,
  log_dir: "/home/u/.local/share/artifactflow/logs",
  tools_loaded: 0,
  agents_loaded: 3,
  config_errors: [],
};

export const OPENAI: ModelProfile = {
  name: "default",
  api: "openai",
  base_url: "https://api.openai.com/v1",
  model: "gpt-4o-mini",
  api_key: "{{OPENAI_API_KEY}}",
};

export const LOCAL: ModelProfile = {
  name: "local",
  api: "openai",
  base_url: "http://127.0.0.1:11434/v1",
  model: "qwen2.5:7b",
};

type Handler = (args: Record<string, unknown>, state: FakeState) => unknown;

/**
 * A small stateful stand-in for the settings commands, through Tauri's IPC mock (transport
 * only). `overrides` replace a command; throwing `{code, message}` is an `AppError`.
 */
export function fakeBackend(
  initial: Partial<FakeState> = {},
  overrides: Partial<Record<string, Handler>> = {},
) {
  const state: FakeState = {
    profiles: [OPENAI, LOCAL],
    secret_names: ["OPENAI_API_KEY"],
    missing_secrets: [],
    permission_timeout_secs: 120,
    conversations: [],
    grants: [],
    installed: [],
    profile_models: [],
    ...initial,
  };
  const calls: Call[] = [];
  const view = (): SettingsView => ({
    profiles: state.profiles,
    settings: {
      web_search: { endpoint: "https://api.bochaai.com/v1/web-search" },
      web_fetch: { endpoint: "https://r.jina.ai" },
      permission_timeout_secs: state.permission_timeout_secs,
      skills: { user_folders: false, disabled: [] },
    },
    secret_names: state.secret_names,
    missing_secrets: state.missing_secrets,
    profile_models: state.profile_models,
    config_dir: STATUS.config_dir,
  });
  const defaults: Record<string, Handler> = {
    get_status: () => STATUS,
    get_settings: () => view(),
    save_profiles: (a, s) => {
      s.profiles = a.profiles as ModelProfile[];
      return null;
    },
    set_secret: (a, s) => {
      const name = a.name as string;
      if (!s.secret_names.includes(name)) s.secret_names = [...s.secret_names, name].sort();
      s.missing_secrets = s.missing_secrets.filter((n) => n !== name);
      return null;
    },
    delete_secret: (a, s) => {
      s.secret_names = s.secret_names.filter((n) => n !== a.name);
      return null;
    },
    save_permission_timeout: (a, s) => {
      s.permission_timeout_secs = a.seconds as number;
      return null;
    },
    test_profile: () => ({ ok: true, latency_ms: 42, message: "OK" }),
    discover_context_window: () => ({ tokens: 4096, source: "default", detail: null, note: null }),
    profile_tool_mode: (a) => {
      const p = a.profile as ModelProfile;
      return p.api === "local"
        ? { mode: "native", guided: true, family: "hermes", reason: "native_family" }
        : { mode: "text", guided: false, family: "hermes", reason: "no_model_file" };
    },
    open_config_folder: () => null,
    models_list: (_a, s): ModelsView => ({
      dir: "/home/u/.local/share/artifactflow/models",
      installed: s.installed,
      downloads: [],
      machine: { total_memory: 16e9, available_memory: 8e9, free_disk: 100e9, cores: 4 },
    }),
    list_conversations: (_a, s) => s.conversations,
    list_permission_rules: () => ({ global: [], agents: [] }),
    list_permission_grants: (_a, s) => s.grants,
    delete_permission_grant: (a, s) => {
      const before = s.grants.length;
      s.grants = s.grants.filter((g) => g.id !== a.grantId);
      return s.grants.length < before;
    },
  };
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args: a });
    const handler = overrides[cmd] ?? defaults[cmd];
    if (!handler) throw new Error(`unexpected command ${cmd}`);
    return handler(a, state);
  });
  return {
    state,
    calls,
    /** Arguments of every call of `cmd`, in order. */
    argsOf: (cmd: string) => calls.filter((c) => c.cmd === cmd).map((c) => c.args),
  };
}

/** A model of the models folder named `name` (its file `name.gguf`), a readable Llama file of
 * 98.4 MB unless `over` says otherwise. */
export function installedModel(name: string, over: Partial<InstalledModel> = {}): InstalledModel {
  return {
    name,
    file: `${name}.gguf`,
    path: `/home/u/.local/share/artifactflow/models/${name}.gguf`,
    size: 98_362_432,
    info: {
      version: 3,
      architecture: "llama",
      name,
      size_label: "135M",
      quantization: "Q4_1",
      context_length: 8192,
      has_chat_template: true,
      license: "apache-2.0",
      tensor_count: 272,
    },
    error: null,
    template_refused: null,
    tools: { family: "unknown", takes_tools: false },
    source: null,
    catalog_mismatch: null,
    sha256: null,
    installed_at: 1_700_000_000,
    last_used: null,
    ...over,
  };
}
