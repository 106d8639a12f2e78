import { screen, waitFor, within } from "@testing-library/react";
import { render } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { FirstRunSetup } from "./FirstRunSetup";
import { fakeBackend } from "../../test/fakeBackend";

function renderSetup() {
  const onDone = vi.fn();
  const user = userEvent.setup();
  render(<FirstRunSetup onDone={onDone} />);
  return { user, onDone };
}

describe("First-run setup", () => {
  it("can be skipped without saving anything", async () => {
    const backend = fakeBackend({ profiles: [], secret_names: [] });
    const { user, onDone } = renderSetup();
    expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("Welcome to ArtifactFlow");
    await user.click(screen.getByRole("button", { name: "Skip — browse tools and artifacts" }));
    expect(onDone).toHaveBeenCalledTimes(1);
    expect(backend.argsOf("save_profiles")).toHaveLength(0);
    expect(backend.argsOf("set_secret")).toHaveLength(0);
  });

  it("keeps Skip where it is while the form loads (nothing that loads comes before it)", async () => {
    fakeBackend({ profiles: [], secret_names: [] });
    renderSetup();
    const skip = screen.getByRole("button", { name: "Skip — browse tools and artifacts" });
    const before = (node: Node) =>
      Boolean(skip.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING);
    expect(screen.getByTestId("first-run")).toHaveAttribute("aria-busy", "true");
    expect(before(screen.getByRole("status"))).toBe(true); // "Loading…"
    const form = await screen.findByTestId("first-run-form");
    expect(screen.getByRole("button", { name: /^Skip/ })).toBe(skip);
    expect(before(form)).toBe(true);
    expect(screen.getByTestId("first-run")).toHaveAttribute("aria-busy", "false");
  });

  it("offers the models the server lists, and falls back to free text with a note", async () => {
    let listed = true;
    const backend = fakeBackend(
      { profiles: [], secret_names: [] },
      {
        list_models: () =>
          listed
            ? { models: ["llama3.2", "qwen3-8b"], note: null }
            : {
                models: [],
                note: "Could not list the server's models (HTTP 404). Type the model name.",
              },
      },
    );
    const { user, onDone } = renderSetup();
    await user.click(await screen.findByRole("radio", { name: /LM Studio/ }));
    const picker = await screen.findByTestId("model-picker");
    expect(screen.getByLabelText("Model")).toBe(picker);
    expect(backend.argsOf("list_models").at(-1)).toMatchObject({
      profile: { api: "openai", base_url: "http://127.0.0.1:1234/v1" },
      key: null,
    });
    await user.selectOptions(picker, "qwen3-8b");
    await user.click(screen.getByRole("button", { name: "Save and start" }));
    await waitFor(() => expect(onDone).toHaveBeenCalledTimes(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([
      expect.objectContaining({ model: "qwen3-8b" }),
    ]);

    // A server without a list: the field is free text, and says why.
    listed = false;
    const url = screen.getByLabelText("Server URL");
    await user.clear(url);
    await user.type(url, "http://127.0.0.1:9/v1");
    const input = await screen.findByTestId("model-input");
    expect(input).toHaveAccessibleDescription(/Type the model name/);
  });

  it("saves a cloud profile named default, its key in the keyring", async () => {
    const backend = fakeBackend({ profiles: [], secret_names: [] });
    const { user, onDone } = renderSetup();
    const openai = await screen.findByRole("radio", { name: /^OpenAI/ });
    expect(openai).toBeChecked();
    await user.click(screen.getByRole("radio", { name: /^Anthropic/ }));
    const key = screen.getByLabelText("Anthropic key");
    expect(key).toHaveAttribute("type", "password");
    expect(key).toHaveAccessibleDescription(/keyring as ANTHROPIC_API_KEY/);
    await user.type(key, "sk-ant-1");
    await user.click(screen.getByRole("button", { name: "Save and start" }));
    await waitFor(() => expect(onDone).toHaveBeenCalledTimes(1));
    expect(backend.argsOf("save_profiles")).toEqual([
      {
        profiles: [
          {
            name: "default",
            api: "anthropic",
            base_url: "https://api.anthropic.com",
            model: "claude-sonnet-4-5",
            api_key: "{{ANTHROPIC_API_KEY}}",
            temperature: null,
            max_tokens: null,
            context_window: null,
            timeout: null,
            tool_calls: "native",
          },
        ],
      },
    ]);
    expect(backend.argsOf("set_secret")).toEqual([
      { name: "ANTHROPIC_API_KEY", value: "sk-ant-1" },
    ]);
  });

  it("tests and saves a local server by its URL, with no key", async () => {
    const backend = fakeBackend({ profiles: [], secret_names: [] });
    const { user, onDone } = renderSetup();
    await user.click(await screen.findByRole("radio", { name: /LM Studio/ }));
    expect(screen.queryByLabelText(/key$/)).toBeNull();
    const url = screen.getByLabelText("Server URL");
    expect(url).toHaveValue("http://127.0.0.1:1234/v1");
    await user.clear(url);
    await user.type(url, "http://192.168.1.20:1234/v1");
    await user.clear(screen.getByLabelText("Model"));
    await user.type(screen.getByLabelText("Model"), "qwen3-8b");
    await user.click(screen.getByRole("button", { name: "Test connection" }));
    expect(await screen.findByText(/Connected in 42 ms/)).toBeInTheDocument();
    expect(backend.argsOf("test_profile")[0]?.profile).toMatchObject({
      base_url: "http://192.168.1.20:1234/v1",
      api_key: null,
    });
    await user.click(screen.getByRole("button", { name: "Save and start" }));
    await waitFor(() => expect(onDone).toHaveBeenCalledTimes(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([
      expect.objectContaining({
        name: "default",
        base_url: "http://192.168.1.20:1234/v1",
        model: "qwen3-8b",
        api_key: null,
      }),
    ]);
    expect(backend.argsOf("set_secret")).toHaveLength(0);
  });

  it("offers the tool-call mode, following the server until chosen, and saves the choice", async () => {
    const backend = fakeBackend({ profiles: [], secret_names: [] });
    const { user, onDone } = renderSetup();
    const group = within(await screen.findByRole("group", { name: "Tool calls" }));
    const text = group.getByRole("radio", { name: /^Text \(XML\) — works with any model/ });
    const native = group.getByRole("radio", { name: /^Native — the API's own tool calling/ });
    // OpenAI, the first server offered, calls tools natively; a local server uses text.
    expect(native).toBeChecked();
    await user.click(screen.getByRole("radio", { name: /^Ollama/ }));
    expect(text).toBeChecked();
    await user.click(native);
    await user.click(screen.getByRole("radio", { name: /^llama\.cpp/ }));
    expect(native).toBeChecked();
    await user.click(screen.getByRole("button", { name: "Save and start" }));
    await waitFor(() => expect(onDone).toHaveBeenCalledTimes(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([
      expect.objectContaining({
        name: "default",
        base_url: "http://127.0.0.1:8080/v1",
        api_key: null,
        tool_calls: "native",
      }),
    ]);
  });

  it("shows the backend's validation error and stays open", async () => {
    fakeBackend(
      { profiles: [], secret_names: [] },
      {
        save_profiles: () => {
          throw {
            code: "invalid_config",
            message: "profiles[0].base_url: `nope` is not a full http:// or https:// URL",
          };
        },
      },
    );
    const { user, onDone } = renderSetup();
    await user.click(await screen.findByRole("radio", { name: /Ollama/ }));
    await user.clear(screen.getByLabelText("Server URL"));
    await user.type(screen.getByLabelText("Server URL"), "nope");
    await user.click(screen.getByRole("button", { name: "Save and start" }));
    expect(await screen.findByLabelText("Server URL")).toHaveAccessibleDescription(
      /`nope` is not a full http/,
    );
    expect(screen.getByLabelText("Server URL")).toHaveValue("nope");
    expect(onDone).not.toHaveBeenCalled();
  });

  it("reports a keyring failure after saving the profile", async () => {
    fakeBackend(
      { profiles: [], secret_names: [] },
      {
        set_secret: () => {
          throw { code: "keyring", message: "the system keyring failed: locked" };
        },
      },
    );
    const { user, onDone } = renderSetup();
    await user.type(await screen.findByLabelText("OpenAI key"), "sk-1");
    await user.click(screen.getByRole("button", { name: "Save and start" }));
    expect(await screen.findByTestId("first-run-errors")).toHaveTextContent(
      "the key could not be stored as OPENAI_API_KEY: the system keyring failed: locked",
    );
    expect(onDone).not.toHaveBeenCalled();
  });
});
