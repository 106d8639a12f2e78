import { screen, waitFor, within } from "@testing-library/react";
import { render } from "../../test/render";
import userEvent from "@testing-library/user-event";
import axe from "axe-core";
import type { StatusState } from "../../ipc/useStatus";
import type { ConnectionTest, Grant, ModelProfile } from "../../bindings";
import { SettingsScreen } from "./SettingsScreen";
import { LOCAL, OPENAI, STATUS, fakeBackend, installedModel } from "../../test/fakeBackend";

const STATE: StatusState = { status: STATUS, error: null, loading: false, reload: async () => {} };

function renderSettings() {
  const user = userEvent.setup();
  render(<SettingsScreen theme="system" onThemeChange={() => {}} state={STATE} />);
  return user;
}

async function profileRow(name: string) {
  return within(await screen.findByTestId(`profile-${name}`));
}

describe("Settings: model profiles", () => {
  it("lists the profiles with their server, model and key", async () => {
    fakeBackend({ missing_secrets: [] });
    renderSettings();
    const row = await profileRow("default");
    expect(row.getByText("gpt-4o-mini", { exact: false })).toBeInTheDocument();
    expect(row.getByText("https://api.openai.com/v1")).toBeInTheDocument();
    expect(row.getByText("key OPENAI_API_KEY")).toBeInTheDocument();
    expect((await profileRow("local")).getByText("no key")).toBeInTheDocument();
  });

  it("adds a profile from a preset; the typed key goes to the keyring and the profile gets its template", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    await user.click(await screen.findByRole("button", { name: "Add profile" }));
    const form = within(screen.getByRole("form", { name: "New profile" }));
    await user.selectOptions(form.getByLabelText("Preset"), "DeepSeek");
    expect(form.getByLabelText("Profile name")).toHaveValue("deepseek");
    expect(form.getByLabelText("Base URL")).toHaveValue("https://api.deepseek.com/v1");
    expect(form.getByLabelText("Model")).toHaveValue("deepseek-chat");
    expect(form.getByLabelText("Secret name")).toHaveValue("DEEPSEEK_API_KEY");
    const key = form.getByLabelText("API key");
    expect(key).toHaveAttribute("type", "password");
    await user.type(key, "sk-deep-123");
    await user.click(form.getByRole("button", { name: "Add profile" }));

    await waitFor(() => expect(backend.argsOf("set_secret")).toHaveLength(1));
    expect(backend.argsOf("set_secret")[0]).toEqual({
      name: "DEEPSEEK_API_KEY",
      value: "sk-deep-123",
    });
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([
      OPENAI,
      LOCAL,
      {
        name: "deepseek",
        api: "openai",
        base_url: "https://api.deepseek.com/v1",
        model: "deepseek-chat",
        api_key: "{{DEEPSEEK_API_KEY}}",
        temperature: null,
        max_tokens: null,
        context_window: null,
        timeout: null,
        tool_calls: "text",
      },
    ]);
    // The form closes; the key value appears nowhere.
    const row = await profileRow("deepseek");
    expect(row.getByText("key DEEPSEEK_API_KEY")).toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "New profile" })).toBeNull();
    expect(document.body.innerHTML).not.toContain("sk-deep-123");
  });

  it("derives the secret name from the profile name for a custom server, and lets the user change it", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    await user.click(await screen.findByRole("button", { name: "Add profile" }));
    const form = within(screen.getByRole("form", { name: "New profile" }));
    await user.type(form.getByLabelText("Profile name"), "my-server");
    expect(form.getByLabelText("Secret name")).toHaveValue("MY_SERVER_API_KEY");
    await user.clear(form.getByLabelText("Secret name"));
    await user.type(form.getByLabelText("Secret name"), "TEAM_KEY");
    await user.type(form.getByLabelText("Profile name"), "2");
    expect(form.getByLabelText("Secret name")).toHaveValue("TEAM_KEY");
    await user.type(form.getByLabelText("Base URL"), "https://llm.example.com/v1");
    await user.type(form.getByLabelText("Model"), "m1");
    await user.click(form.getByRole("button", { name: "Add profile" }));
    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    const saved = backend.argsOf("save_profiles")[0]?.profiles as { api_key: string }[];
    expect(saved[2]?.api_key).toBe("{{TEAM_KEY}}");
    // No key typed: nothing goes to the keyring.
    expect(backend.argsOf("set_secret")).toHaveLength(0);
  });

  it("edits a profile in place, keeping the others", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    await user.click((await profileRow("local")).getByRole("button", { name: "Edit local" }));
    const form = within(screen.getByRole("form", { name: "Edit local" }));
    expect(form.getByLabelText("This server needs an API key")).not.toBeChecked();
    expect(form.queryByLabelText("API key")).toBeNull();
    await user.clear(form.getByLabelText("Model"));
    await user.type(form.getByLabelText("Model"), "llama3.2");
    await user.click(form.getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([
      OPENAI,
      {
        ...LOCAL,
        model: "llama3.2",
        api_key: null,
        temperature: null,
        max_tokens: null,
        context_window: null,
        timeout: null,
        tool_calls: "text",
      },
    ]);
    expect((await profileRow("local")).getByText("Ollama · llama3.2")).toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "Edit local" })).toBeNull();
  });

  it("suggests native tool calls for OpenAI and text for Ollama, and saves the mode", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    await user.click(await screen.findByRole("button", { name: "Add profile" }));
    const form = within(screen.getByRole("form", { name: "New profile" }));
    const group = within(form.getByRole("group", { name: "Tool calls" }));
    const text = group.getByRole("radio", { name: /^Text \(XML\) — works with any model/ });
    const native = group.getByRole("radio", { name: /^Native — the API's own tool calling/ });
    expect(text).toBeChecked();
    expect(form.getByRole("group", { name: "Tool calls" })).toHaveAccessibleDescription(
      "In native mode, calls the model writes as XML in its text still run.",
    );

    await user.selectOptions(form.getByLabelText("Preset"), "Ollama");
    expect(text).toBeChecked();
    await user.selectOptions(form.getByLabelText("Preset"), "OpenAI");
    expect(native).toBeChecked();
    expect(text).not.toBeChecked();
    await user.selectOptions(form.getByLabelText("Preset"), "Ollama");
    expect(text).toBeChecked();
    await user.selectOptions(form.getByLabelText("Preset"), "OpenAI");
    expect(native).toBeChecked();

    await user.click(form.getByRole("button", { name: "Add profile" }));
    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([
      OPENAI,
      LOCAL,
      expect.objectContaining({
        name: "openai",
        base_url: "https://api.openai.com/v1",
        tool_calls: "native",
      }),
    ]);
    // The list says so for the new profile only.
    const row = await profileRow("openai");
    expect(row.getByText(/OpenAI · gpt-4o-mini · native tool calls/)).toBeInTheDocument();
    expect(screen.getByTestId("profile-default")).not.toHaveTextContent("native tool calls");
  });

  it("keeps a tool-call mode chosen by hand when the preset changes", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    await user.click(await screen.findByRole("button", { name: "Add profile" }));
    const form = within(screen.getByRole("form", { name: "New profile" }));
    const group = within(form.getByRole("group", { name: "Tool calls" }));
    await user.selectOptions(form.getByLabelText("Preset"), "Ollama");
    const text = group.getByRole("radio", { name: /^Text/ });
    const native = group.getByRole("radio", { name: /^Native/ });
    expect(text).toBeChecked();
    await user.click(native);
    expect(native).toBeChecked();
    // The arrow keys move between the two choices.
    await user.keyboard("{ArrowUp}");
    expect(text).toBeChecked();
    expect(text).toHaveFocus();
    await user.keyboard("{ArrowDown}");
    expect(native).toBeChecked();
    await user.selectOptions(form.getByLabelText("Preset"), "LM Studio");
    expect(native).toBeChecked();
    await user.click(text);
    await user.selectOptions(form.getByLabelText("Preset"), "Anthropic");
    expect(group.getByRole("radio", { name: /^Text/ })).toBeChecked();
    await user.click(form.getByRole("button", { name: "Add profile" }));
    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([
      OPENAI,
      LOCAL,
      expect.objectContaining({ name: "anthropic", api: "anthropic", tool_calls: "text" }),
    ]);
    expect(await profileRow("anthropic")).toBeTruthy();
    expect(screen.getByTestId("profile-anthropic")).not.toHaveTextContent("native tool calls");
  });

  it("shows an existing profile's native tool calls in the list and the form, and changes them", async () => {
    const backend = fakeBackend({ profiles: [{ ...OPENAI, tool_calls: "native" }, LOCAL] });
    const user = renderSettings();
    const row = await profileRow("default");
    expect(row.getByText("OpenAI · gpt-4o-mini · native tool calls")).toBeInTheDocument();
    expect(screen.getByTestId("profile-local")).not.toHaveTextContent("native tool calls");

    await user.click(row.getByRole("button", { name: "Edit default" }));
    const formEl = screen.getByRole("form", { name: "Edit default" });
    const group = within(within(formEl).getByRole("group", { name: "Tool calls" }));
    expect(group.getByRole("radio", { name: /^Native/ })).toBeChecked();
    expect(group.getByRole("radio", { name: /^Text/ })).not.toBeChecked();
    // No ARIA problem for axe-core (jsdom has no layout: colours are checked by the E2E audit).
    const audit = await axe.run(formEl, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "best-practice"] },
      rules: { "color-contrast": { enabled: false }, region: { enabled: false } },
    });
    expect(audit.violations.map((v) => v.id)).toEqual([]);

    await user.click(group.getByRole("radio", { name: /^Text/ }));
    await user.click(within(formEl).getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([
      expect.objectContaining({ name: "default", tool_calls: "text" }),
      LOCAL,
    ]);
    await waitFor(() => expect(screen.queryByRole("form", { name: "Edit default" })).toBeNull());
    expect(await profileRow("default")).toBeTruthy();
    expect(screen.getByTestId("profile-default")).not.toHaveTextContent("native tool calls");
    expect(screen.getByTestId("profile-default")).toHaveTextContent("OpenAI · gpt-4o-mini");
  });

  it("shows the backend's validation errors next to the fields and keeps what was typed", async () => {
    const backend = fakeBackend(
      {},
      {
        save_profiles: () => {
          throw {
            code: "invalid_config",
            message:
              "profiles[1].base_url: `localhost:9` is not a full http:// or https:// URL\nprofiles[1].temperature: temperature must be between 0 and 2; found 5",
          };
        },
      },
    );
    const user = renderSettings();
    await user.click((await profileRow("local")).getByRole("button", { name: "Edit local" }));
    const form = within(screen.getByRole("form", { name: "Edit local" }));
    await user.clear(form.getByLabelText("Base URL"));
    await user.type(form.getByLabelText("Base URL"), "localhost:9");
    await user.click(form.getByText("Advanced options"));
    await user.type(form.getByLabelText("Temperature"), "5");
    await user.click(form.getByRole("button", { name: "Save changes" }));

    const url = form.getByLabelText("Base URL");
    await waitFor(() => expect(url).toHaveAttribute("aria-invalid", "true"));
    expect(url).toHaveAccessibleDescription(/is not a full http/);
    expect(url).toHaveValue("localhost:9");
    expect(form.getByLabelText("Temperature")).toHaveAccessibleDescription(/between 0 and 2/);
    const alerts = form.getAllByRole("alert").map((a) => a.textContent);
    expect(alerts).toContain("`localhost:9` is not a full http:// or https:// URL");
    expect(backend.argsOf("save_profiles")).toHaveLength(1);
    // Still editable, nothing lost.
    expect(form.getByRole("button", { name: "Save changes" })).toBeEnabled();
  });

  it("places errors about another profile in the form's error list", async () => {
    fakeBackend(
      {},
      {
        save_profiles: () => {
          throw {
            code: "invalid_config",
            message:
              "profiles[2].name: profile name `local` is already used by an earlier profile (line 9); names must be unique",
          };
        },
      },
    );
    const user = renderSettings();
    await user.click(await screen.findByRole("button", { name: "Add profile" }));
    const form = within(screen.getByRole("form", { name: "New profile" }));
    await user.selectOptions(form.getByLabelText("Preset"), "Ollama");
    await user.clear(form.getByLabelText("Profile name"));
    await user.type(form.getByLabelText("Profile name"), "local");
    await user.click(form.getByRole("button", { name: "Add profile" }));
    expect(await form.findByLabelText("Profile name")).toHaveAccessibleDescription(
      /already used by an earlier profile/,
    );
  });

  it("checks numbers and the secret name in the form before sending", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    await user.click(await screen.findByRole("button", { name: "Add profile" }));
    const form = within(screen.getByRole("form", { name: "New profile" }));
    await user.clear(form.getByLabelText("Secret name"));
    await user.type(form.getByLabelText("Secret name"), "9 bad");
    await user.click(form.getByRole("button", { name: "Add profile" }));
    expect(form.getByLabelText("Secret name")).toHaveAccessibleDescription(/Not a valid name/);
    expect(backend.argsOf("save_profiles")).toHaveLength(0);
  });

  it("deletes a profile only after confirming", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    const row = await profileRow("local");
    await user.click(row.getByRole("button", { name: "Delete local" }));
    // Cancel first: nothing happens.
    await user.click(row.getByRole("button", { name: "Cancel" }));
    expect(backend.argsOf("save_profiles")).toHaveLength(0);
    await user.click(row.getByRole("button", { name: "Delete local" }));
    expect(row.getByRole("button", { name: "Cancel" })).toHaveFocus();
    await user.click(row.getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(screen.queryByTestId("profile-local")).toBeNull());
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([OPENAI]);
  });

  it("tests the connection with a spinner, then shows the reply", async () => {
    let answer: (r: ConnectionTest) => void = () => {};
    const backend = fakeBackend(
      {},
      { test_profile: () => new Promise<ConnectionTest>((resolve) => (answer = resolve)) },
    );
    const user = renderSettings();
    await user.click((await profileRow("default")).getByRole("button", { name: "Edit default" }));
    const form = within(screen.getByRole("form", { name: "Edit default" }));
    await user.click(form.getByRole("button", { name: "Test connection" }));
    expect(await form.findByText("Testing the connection…")).toBeInTheDocument();
    expect(form.getByRole("button", { name: "Save changes" })).toBeDisabled();
    expect(backend.argsOf("test_profile")[0]?.profile).toMatchObject({
      name: "default",
      api_key: "{{OPENAI_API_KEY}}",
    });
    answer({ ok: true, latency_ms: 312, message: "OK" });
    expect(await form.findByText(/Connected in 312 ms/)).toHaveTextContent(
      "the model replied “OK”",
    );
    expect(form.getByRole("button", { name: "Save changes" })).toBeEnabled();
  });

  it("shows a failed connection test as an alert, storing a typed key first", async () => {
    const backend = fakeBackend(
      {},
      {
        test_profile: () => ({ ok: false, latency_ms: 80, message: "401 Unauthorized: bad key" }),
      },
    );
    const user = renderSettings();
    await user.click((await profileRow("default")).getByRole("button", { name: "Edit default" }));
    const form = within(screen.getByRole("form", { name: "Edit default" }));
    await user.type(form.getByLabelText("API key"), "sk-wrong");
    await user.click(form.getByRole("button", { name: "Test connection" }));
    const alert = await form.findByText(/Connection failed after 80 ms/);
    expect(alert).toHaveAttribute("role", "alert");
    expect(alert).toHaveTextContent("401 Unauthorized: bad key");
    expect(backend.argsOf("set_secret")).toEqual([{ name: "OPENAI_API_KEY", value: "sk-wrong" }]);
    expect(form.getByLabelText("API key")).toHaveValue("");
  });

  it("reports a backend error of the connection test", async () => {
    fakeBackend(
      {},
      {
        test_profile: () => {
          throw { code: "engine_unavailable", message: "the engine is not running" };
        },
      },
    );
    const user = renderSettings();
    await user.click((await profileRow("local")).getByRole("button", { name: "Edit local" }));
    const form = within(screen.getByRole("form", { name: "Edit local" }));
    await user.click(form.getByRole("button", { name: "Test connection" }));
    expect(await form.findByRole("alert")).toHaveTextContent("the engine is not running");
  });

  it("marks a local profile whose model was deleted, with a way to pick another", async () => {
    const coder: ModelProfile = {
      name: "Coder",
      api: "local",
      base_url: "",
      model: "qwen-tiny",
      api_key: null,
      tool_calls: "auto",
    };
    const here: ModelProfile = { ...coder, name: "Here", model: "smol" };
    const backend = fakeBackend({
      profiles: [OPENAI, coder, here],
      installed: [installedModel("smol")],
      profile_models: [
        { profile: "Coder", file: null, missing: "not_installed" },
        { profile: "Here", file: "smol.gguf", missing: null },
      ],
    });
    const openModels = vi.fn();
    const user = userEvent.setup();
    render(
      <SettingsScreen
        theme="system"
        onThemeChange={() => {}}
        state={STATE}
        onOpenModels={openModels}
      />,
    );
    const row = await profileRow("Coder");
    expect(row.getByText("no model")).toBeInTheDocument();
    expect(row.getByTestId("profile-model-missing")).toHaveTextContent(
      "No model to run: its model “qwen-tiny” is not installed (deleted, or never downloaded). Chats with this profile cannot start until you pick another.",
    );
    // A profile whose model is there, and a server's, say nothing of the kind.
    expect((await profileRow("Here")).queryByTestId("profile-model-missing")).toBeNull();
    expect((await profileRow("default")).queryByText("no model")).toBeNull();

    await user.click(row.getByRole("button", { name: "Get a model…" }));
    expect(openModels).toHaveBeenCalledTimes(1);

    // Pick another: the profile's form, its model picker listing the installed models.
    await user.click(row.getByRole("button", { name: "Pick another model for Coder" }));
    const form = within(screen.getByRole("form", { name: "Edit Coder" }));
    const picker = await form.findByTestId("local-model-picker");
    await waitFor(() => expect(picker).toHaveDisplayValue("qwen-tiny (not installed)"));
    await user.selectOptions(picker, "smol");
    await user.click(form.getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    const saved = backend.argsOf("save_profiles")[0]?.profiles as ModelProfile[];
    expect(saved[1]).toMatchObject({ name: "Coder", api: "local", model: "smol" });
  });

  it("says when a profile's model file, named by its path, is not there", async () => {
    const mine: ModelProfile = {
      name: "Mine",
      api: "local",
      base_url: "",
      model: "/models/gone.gguf",
      api_key: null,
    };
    fakeBackend({
      profiles: [mine],
      profile_models: [{ profile: "Mine", file: null, missing: "file_not_found" }],
    });
    renderSettings();
    expect((await profileRow("Mine")).getByTestId("profile-model-missing")).toHaveTextContent(
      "No model to run: its model file /models/gone.gguf is not there.",
    );
  });
});

describe("Settings: secrets", () => {
  it("sets a new secret; the value is a password field and is not shown afterwards", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    await user.click(await screen.findByRole("button", { name: "Add secret" }));
    const form = within(screen.getByRole("form", { name: "Add secret" }));
    await user.type(form.getByLabelText("Secret name"), "GITHUB_TOKEN");
    expect(form.getByLabelText("Value")).toHaveAttribute("type", "password");
    await user.type(form.getByLabelText("Value"), "ghp_secret");
    await user.click(form.getByRole("button", { name: "Save secret" }));
    expect(await screen.findByTestId("secret-GITHUB_TOKEN")).toHaveTextContent("set");
    expect(backend.argsOf("set_secret")).toEqual([{ name: "GITHUB_TOKEN", value: "ghp_secret" }]);
    expect(document.body.innerHTML).not.toContain("ghp_secret");
  });

  it("rejects an invalid secret name without calling the backend", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    await user.click(await screen.findByRole("button", { name: "Add secret" }));
    const form = within(screen.getByRole("form", { name: "Add secret" }));
    await user.type(form.getByLabelText("Secret name"), "my-token");
    await user.type(form.getByLabelText("Value"), "x");
    await user.click(form.getByRole("button", { name: "Save secret" }));
    expect(await form.findByRole("alert")).toHaveTextContent("Not a valid secret name");
    expect(backend.argsOf("set_secret")).toHaveLength(0);
  });

  it("replaces a stored secret", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    const row = within(await screen.findByTestId("secret-OPENAI_API_KEY"));
    await user.click(row.getByRole("button", { name: "Replace OPENAI_API_KEY" }));
    const value = row.getByLabelText("Value for OPENAI_API_KEY");
    expect(value).toHaveFocus();
    await user.type(value, "sk-new{Enter}");
    await waitFor(() =>
      expect(backend.argsOf("set_secret")).toEqual([{ name: "OPENAI_API_KEY", value: "sk-new" }]),
    );
    expect(await row.findByRole("button", { name: "Replace OPENAI_API_KEY" })).toBeInTheDocument();
  });

  it("deletes a secret after confirmation", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    const row = within(await screen.findByTestId("secret-OPENAI_API_KEY"));
    await user.click(row.getByRole("button", { name: "Delete OPENAI_API_KEY" }));
    expect(row.getByText(/Anything that references it stops working/)).toBeInTheDocument();
    expect(backend.argsOf("delete_secret")).toHaveLength(0);
    await user.click(row.getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(screen.queryByTestId("secret-OPENAI_API_KEY")).toBeNull());
    expect(backend.argsOf("delete_secret")).toEqual([{ name: "OPENAI_API_KEY" }]);
  });

  it("Escape cancels a delete confirmation", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    const row = within(await screen.findByTestId("secret-OPENAI_API_KEY"));
    await user.click(row.getByRole("button", { name: "Delete OPENAI_API_KEY" }));
    await user.keyboard("{Escape}");
    expect(row.getByRole("button", { name: "Delete OPENAI_API_KEY" })).toHaveFocus();
    expect(backend.argsOf("delete_secret")).toHaveLength(0);
  });

  it("highlights missing secrets with a Set action", async () => {
    const backend = fakeBackend({ missing_secrets: ["BOCHA_API_KEY"] });
    const user = renderSettings();
    const item = await screen.findByTestId("secret-BOCHA_API_KEY");
    expect(item).toHaveClass("secret-missing");
    expect(item).toHaveTextContent("missing — referenced but not set");
    const row = within(item);
    expect(row.queryByRole("button", { name: "Delete BOCHA_API_KEY" })).toBeNull();
    await user.click(row.getByRole("button", { name: "Set BOCHA_API_KEY" }));
    await user.type(row.getByLabelText("Value for BOCHA_API_KEY"), "b-1");
    await user.click(row.getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(screen.getByTestId("secret-BOCHA_API_KEY")).not.toHaveClass("secret-missing"),
    );
    expect(backend.argsOf("set_secret")).toEqual([{ name: "BOCHA_API_KEY", value: "b-1" }]);
  });

  it("marks a profile whose key is missing", async () => {
    fakeBackend({ secret_names: [], missing_secrets: ["OPENAI_API_KEY"] });
    renderSettings();
    expect((await profileRow("default")).getByText(/key OPENAI_API_KEY — not set/)).toHaveClass(
      "tag-missing",
    );
  });
});

describe("Settings: permission timeout", () => {
  it("shows the current value and refuses values outside 5–3600 seconds", async () => {
    const backend = fakeBackend({ permission_timeout_secs: 90 });
    const user = renderSettings();
    const input = await screen.findByLabelText("Permission timeout (seconds)");
    expect(input).toHaveValue(90);
    const save = screen.getByRole("button", { name: "Save" });
    expect(save).toBeDisabled();

    await user.clear(input);
    await user.type(input, "4");
    await user.click(save);
    expect(input).toHaveAccessibleDescription(/Choose between 5 and 3600 seconds/);
    expect(input).toHaveAttribute("aria-invalid", "true");

    await user.clear(input);
    await user.type(input, "3601");
    await user.click(save);
    expect(await screen.findByText("Choose between 5 and 3600 seconds.")).toHaveAttribute(
      "role",
      "alert",
    );
    expect(backend.argsOf("save_permission_timeout")).toHaveLength(0);

    await user.clear(input);
    await user.type(input, "3600");
    await user.click(save);
    await waitFor(() =>
      expect(backend.argsOf("save_permission_timeout")).toEqual([{ seconds: 3600 }]),
    );
    expect(await screen.findByLabelText("Permission timeout (seconds)")).toHaveValue(3600);
  });

  it("accepts the lower bound", async () => {
    const backend = fakeBackend();
    const user = renderSettings();
    const input = await screen.findByLabelText("Permission timeout (seconds)");
    await user.clear(input);
    await user.type(input, "5{Enter}");
    await waitFor(() =>
      expect(backend.argsOf("save_permission_timeout")).toEqual([{ seconds: 5 }]),
    );
  });
});

describe("Settings: conversation grants", () => {
  const grant = (over: Partial<Grant>): Grant => ({
    id: "g1",
    conversation_id: "c1",
    conversation_title: "Research solar",
    tool: "web_fetch",
    rule: null,
    binding: { kind: "none", label: null },
    created_at: "2025-01-01T00:00:00Z",
    ...over,
  });

  it("lists each grant with its conversation, tool or rule and what it is bound to, and deletes one", async () => {
    const backend = fakeBackend({
      grants: [
        grant({}),
        grant({
          id: "g2",
          tool: "stock_price",
          rule: { tool: "stock_price", when: { $host: "api.a.com" }, action: "allow" },
          binding: { kind: "host", label: "api.a.com" },
        }),
        grant({
          id: "g3",
          conversation_title: "",
          tool: "quote",
          binding: { kind: "host", label: "the host from API_BASE" },
        }),
      ],
    });
    const user = renderSettings();
    const whole = await screen.findByTestId("grant-g1");
    // One place for rules and grants: the grants are listed in the rules' section.
    expect(screen.getByRole("region", { name: "Permission rules" })).toContainElement(whole);
    expect(whole).toHaveTextContent("Research solar");
    expect(whole).toHaveTextContent("web_fetch (the whole tool)");
    expect(whole).toHaveTextContent("wherever it goes");
    const rule = screen.getByTestId("grant-g2");
    expect(rule).toHaveTextContent("stock_price when {$host: api.a.com}");
    expect(rule).toHaveTextContent("while it goes to api.a.com");
    const secret = screen.getByTestId("grant-g3");
    expect(secret).toHaveTextContent("Untitled conversation");
    expect(secret).toHaveTextContent("while it goes to the host from API_BASE");

    await user.click(
      within(rule).getByRole("button", {
        name: "Delete the grant for stock_price in Research solar",
      }),
    );
    await waitFor(() => expect(screen.queryByTestId("grant-g2")).toBeNull());
    expect(backend.argsOf("delete_permission_grant")).toEqual([{ grantId: "g2" }]);
    await user.click(
      within(whole).getByRole("button", {
        name: "Delete the grant for web_fetch in Research solar",
      }),
    );
    await user.click(
      within(screen.getByTestId("grant-g3")).getByRole("button", {
        name: "Delete the grant for quote in c1",
      }),
    );
    expect(await screen.findByTestId("no-always-allowed")).toBeInTheDocument();
  });
});

describe("Settings: folders and theme", () => {
  it("opens the config folder and keeps the theme choice", async () => {
    const backend = fakeBackend();
    const themes: string[] = [];
    const user = userEvent.setup();
    render(<SettingsScreen theme="light" onThemeChange={(t) => themes.push(t)} state={STATE} />);
    expect(await screen.findByTestId("config-folder")).toHaveTextContent(STATUS.config_dir);
    await user.click(screen.getByRole("button", { name: "Open folder" }));
    await waitFor(() => expect(backend.argsOf("open_config_folder")).toHaveLength(1));
    expect(screen.getByRole("radio", { name: "Light" })).toBeChecked();
    await user.click(screen.getByRole("radio", { name: "Dark" }));
    expect(themes).toEqual(["dark"]);
  });

  it("shows why settings could not be loaded and retries", async () => {
    let fail = true;
    fakeBackend(
      {},
      {
        get_settings: (_a, s) => {
          if (fail) throw { code: "engine_unavailable", message: "database is locked" };
          return {
            profiles: s.profiles,
            settings: {
              web_search: { endpoint: "x" },
              web_fetch: { endpoint: "y" },
              permission_timeout_secs: 60,
            },
            secret_names: [],
            missing_secrets: [],
            config_dir: "/c",
          };
        },
      },
    );
    const user = renderSettings();
    expect(await screen.findByTestId("settings-error")).toHaveTextContent("database is locked");
    fail = false;
    await user.click(screen.getByRole("button", { name: "Try again" }));
    expect(await screen.findByTestId("profile-local")).toBeInTheDocument();
    expect(screen.queryByTestId("settings-error")).toBeNull();
  });
});
