import {
  applyPreset,
  buildProfile,
  chooseApi,
  draftFromProfile,
  emptyDraft,
  placeSaveErrors,
  updateDraft,
} from "./profileDraft";
import { PRESETS } from "./presets";
import { secretNameForProfile, templateName } from "./secretNames";
import { parseTimeout } from "./permissionTimeout";

describe("profile drafts", () => {
  it("derives secret names from presets and profile names until the user edits them", () => {
    let d = applyPreset(emptyDraft(), "openrouter");
    expect(d.secretName).toBe("OPENROUTER_API_KEY");
    d = applyPreset(d, "ollama");
    expect(d.useKey).toBe(false);
    expect(d.name).toBe("ollama");
    d = updateDraft(emptyDraft(), { name: "Team GPU #2" });
    expect(d.secretName).toBe("TEAM_GPU_2_API_KEY");
    d = updateDraft(d, { secretName: "MINE" });
    d = updateDraft(d, { name: "other" });
    expect(d.secretName).toBe("MINE");
  });

  it("keeps a model or name the user typed when switching presets", () => {
    let d = updateDraft(emptyDraft(), { name: "work", model: "gpt-4.1" });
    d = applyPreset(d, "openai");
    expect(d).toMatchObject({
      name: "work",
      model: "gpt-4.1",
      base_url: "https://api.openai.com/v1",
    });
  });

  it("round-trips a profile and builds templates", () => {
    const d = draftFromProfile({
      name: "claude",
      api: "anthropic",
      base_url: "https://api.anthropic.com",
      model: "claude-sonnet-4-5",
      api_key: "{{ANTHROPIC_API_KEY}}",
      max_tokens: 8192,
      context_window: 200000,
    });
    expect(d.preset).toBe("anthropic");
    expect(d.keyValue).toBe("");
    const built = buildProfile(d);
    expect(built).toEqual({
      ok: true,
      profile: {
        name: "claude",
        api: "anthropic",
        base_url: "https://api.anthropic.com",
        model: "claude-sonnet-4-5",
        api_key: "{{ANTHROPIC_API_KEY}}",
        temperature: null,
        max_tokens: 8192,
        context_window: 200000,
        timeout: null,
        tool_calls: "text",
      },
    });
  });

  it("gives a model file on this computer its own preset, and leaves it for a server's", () => {
    const local = draftFromProfile({
      name: "mine",
      api: "local",
      base_url: "http://ignored.example",
      model: "smol",
      tool_calls: "auto",
    });
    expect(local).toMatchObject({ preset: "local", toolCallsEdited: false });
    // Away from it by the API type, or by the custom preset: a server no preset names.
    expect(chooseApi(local, "openai")).toMatchObject({ preset: "custom", api: "openai" });
    expect(applyPreset(local, "custom")).toMatchObject({ preset: "custom", api: "openai" });
    // Back to it: no server address, no key, auto tool calls, the typed model kept.
    const server = updateDraft(applyPreset(emptyDraft(), "openrouter"), { model: "mine.gguf" });
    for (const back of [chooseApi(server, "local"), applyPreset(server, "local")]) {
      expect(back).toMatchObject({
        preset: "local",
        api: "local",
        base_url: "",
        useKey: false,
        model: "mine.gguf",
        tool_calls: "auto",
      });
    }
  });

  it("gives every preset a tool-call mode: native for OpenAI and Anthropic, text for the rest", () => {
    expect(Object.fromEntries(PRESETS.map((p) => [p.id, p.tool_calls]))).toEqual({
      openai: "native",
      anthropic: "native",
      deepseek: "text",
      openrouter: "text",
      ollama: "text",
      lmstudio: "text",
      llamacpp: "text",
    });
  });

  it("takes the preset's tool-call mode until the user chooses one by hand", () => {
    let d = emptyDraft();
    expect(d.tool_calls).toBe("text");
    d = applyPreset(d, "openai");
    expect(d.tool_calls).toBe("native");
    d = applyPreset(d, "ollama");
    expect(d.tool_calls).toBe("text");
    d = applyPreset(d, "anthropic");
    expect(d.tool_calls).toBe("native");
    d = applyPreset(d, "custom");
    expect(d).toMatchObject({ preset: "custom", tool_calls: "text" });

    // Chosen by hand: no preset changes it any more, either way.
    d = updateDraft(applyPreset(emptyDraft(), "ollama"), { tool_calls: "native" });
    expect(applyPreset(applyPreset(d, "llamacpp"), "custom").tool_calls).toBe("native");
    d = updateDraft(applyPreset(emptyDraft(), "openai"), { tool_calls: "text" });
    expect(applyPreset(d, "anthropic").tool_calls).toBe("text");
    const built = buildProfile(applyPreset(d, "anthropic"));
    expect(built.ok && built.profile.tool_calls).toBe("text");
  });

  it("reads a profile's tool-call mode (unset is text) and always writes it", () => {
    const base = { name: "p", api: "openai", base_url: "http://h/v1", model: "m" } as const;
    for (const [profile, mode] of [
      [{ ...base, tool_calls: "native" }, "native"],
      [{ ...base, tool_calls: "text" }, "text"],
      [{ ...base, tool_calls: null }, "text"],
      [base, "text"],
    ] as const) {
      const d = draftFromProfile(profile);
      expect(d.tool_calls).toBe(mode);
      const built = buildProfile(d);
      expect(built.ok && built.profile.tool_calls).toBe(mode);
    }
    // A mode unlike its server's suggestion was chosen on purpose and survives a preset change…
    const custom = draftFromProfile({ ...base, tool_calls: "native" });
    expect(applyPreset(custom, "ollama").tool_calls).toBe("native");
    // …one that is the suggestion, or unset, follows the new preset.
    const openai = {
      name: "o",
      api: "openai",
      base_url: "https://api.openai.com/v1",
      model: "gpt-4o-mini",
    } as const;
    expect(
      applyPreset(draftFromProfile({ ...openai, tool_calls: "native" }), "ollama").tool_calls,
    ).toBe("text");
    expect(applyPreset(draftFromProfile(openai), "anthropic").tool_calls).toBe("native");
  });

  it("keeps the stream limits of models.yaml, which the form does not edit", () => {
    const limits = { max_line_bytes: 2048, max_event_bytes: 4096, max_answer_bytes: 8192 };
    const d = updateDraft(
      draftFromProfile({ name: "l", api: "openai", base_url: "http://h/v1", model: "m", limits }),
      { model: "m2" },
    );
    const built = buildProfile(d);
    expect(built.ok && built.profile).toMatchObject({ model: "m2", limits });
  });

  it("keeps guided_calls of models.yaml when a profile is edited, and adds none by itself", () => {
    const local = { name: "l", api: "local" as const, base_url: "", model: "m" };
    const off = buildProfile(
      updateDraft(draftFromProfile({ ...local, guided_calls: "off" }), { model: "m2" }),
    );
    expect(off.ok && off.profile).toMatchObject({ model: "m2", guided_calls: "off" });
    const unset = buildProfile(draftFromProfile(local));
    expect(unset.ok && "guided_calls" in unset.profile).toBe(false);
  });

  it("keeps tool_family of models.yaml when a profile is edited, and adds none by itself", () => {
    const local = { name: "l", api: "local" as const, base_url: "", model: "m" };
    const set = buildProfile(
      updateDraft(draftFromProfile({ ...local, tool_family: "lfm2" }), { model: "m2" }),
    );
    expect(set.ok && set.profile).toMatchObject({ model: "m2", tool_family: "lfm2" });
    const unset = buildProfile(draftFromProfile(local));
    expect(unset.ok && "tool_family" in unset.profile).toBe(false);
  });

  it("reports unparseable numbers and bad secret names", () => {
    const d = updateDraft(emptyDraft("x"), { timeout: "soon", secretName: "1X" });
    const built = buildProfile(d);
    expect(built.ok).toBe(false);
    if (!built.ok) expect(Object.keys(built.errors).sort()).toEqual(["secretName", "timeout"]);
  });

  it("places backend lines on fields of the edited profile, others in general", () => {
    const errors = placeSaveErrors(
      "profiles[1].api_key: `api_key` must name a secret\nprofiles[0].model: `model` must not be empty\ncannot write: disk full",
      1,
      [
        { name: "a", api: "openai", base_url: "", model: "" },
        { name: "b", api: "openai", base_url: "", model: "" },
      ],
    );
    expect(errors.fields).toEqual({ secretName: "`api_key` must name a secret" });
    expect(errors.general).toEqual([
      "Profile “a”: `model` must not be empty",
      "cannot write: disk full",
    ]);
  });

  it("places a backend line about the tool-call mode on its field", () => {
    const errors = placeSaveErrors("profiles[0].tool_calls: unknown mode `xml`", 0, [
      { name: "a", api: "openai", base_url: "", model: "" },
    ]);
    expect(errors).toEqual({ fields: { tool_calls: "unknown mode `xml`" }, general: [] });
  });

  it("reads templates and names", () => {
    expect(templateName("{{ OPENAI_API_KEY }}")).toBe("OPENAI_API_KEY");
    expect(templateName("<<TOKEN>>")).toBe("TOKEN");
    expect(templateName("sk-raw")).toBeNull();
    expect(secretNameForProfile("")).toBe("MODEL_API_KEY");
    expect(secretNameForProfile("4o")).toBe("_4O_API_KEY");
  });

  it("bounds the permission timeout", () => {
    expect(parseTimeout("5")).toEqual({ ok: true, seconds: 5 });
    expect(parseTimeout("3600")).toEqual({ ok: true, seconds: 3600 });
    expect(parseTimeout("4").ok).toBe(false);
    expect(parseTimeout("3601").ok).toBe(false);
    expect(parseTimeout("12.5").ok).toBe(false);
    expect(parseTimeout("").ok).toBe(false);
  });
});
