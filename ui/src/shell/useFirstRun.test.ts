import type { SettingsView } from "../bindings";
import { needsSetup } from "./useFirstRun";

const view = (profiles: SettingsView["profiles"], missing: string[]): SettingsView => ({
  profiles,
  settings: {
    web_search: { endpoint: "", api_key: null },
    web_fetch: { endpoint: "", api_key: null },
    permission_timeout_secs: 120,
    skills: { user_folders: false, disabled: [] },
  },
  secret_names: [],
  missing_secrets: missing,
  profile_models: [],
  config_dir: "/c",
});

const profile = (name: string, api_key: string | null) => ({
  name,
  api: "openai" as const,
  base_url: "http://x/v1",
  model: "m",
  api_key,
  temperature: null,
  max_tokens: null,
  timeout: null,
});

describe("needsSetup", () => {
  it("asks when the default profile is missing or its key is not set", () => {
    expect(needsSetup(view([], []))).toBe(true);
    expect(needsSetup(view([profile("other", null)], []))).toBe(true);
    expect(needsSetup(view([profile("default", "{{OPENAI_API_KEY}}")], ["OPENAI_API_KEY"]))).toBe(
      true,
    );
  });
  it("does not ask when the default profile can be used", () => {
    expect(needsSetup(view([profile("default", "{{OPENAI_API_KEY}}")], []))).toBe(false);
    expect(needsSetup(view([profile("default", null)], []))).toBe(false);
  });
});
