import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { WindowHint } from "../../bindings";
import type { StatusState } from "../../ipc/useStatus";
import { render } from "../../test/render";
import { LOCAL, OPENAI, STATUS, fakeBackend } from "../../test/fakeBackend";
import { SettingsScreen } from "./SettingsScreen";
import { windowHintText } from "./ContextWindowField";

const STATE: StatusState = { status: STATUS, error: null, loading: false, reload: async () => {} };

/** Open the local profile's form with its advanced options shown. */
async function editLocal() {
  const user = userEvent.setup();
  render(<SettingsScreen theme="system" onThemeChange={() => {}} state={STATE} />);
  const row = within(await screen.findByTestId("profile-local"));
  await user.click(row.getByRole("button", { name: "Edit local" }));
  const form = within(screen.getByRole("form", { name: "Edit local" }));
  await user.click(form.getByText("Advanced options"));
  return { user, form };
}

describe("Settings: the profile's context window", () => {
  it("shows what the engine would use when empty, asked from the profile's server", async () => {
    const reported: WindowHint = {
      tokens: 8192,
      source: "server",
      detail: "llama.cpp /props n_ctx",
      note: null,
    };
    const backend = fakeBackend({}, { discover_context_window: () => reported });
    const { form } = await editLocal();
    expect(form.getByLabelText("Context window")).toHaveValue("");
    expect(
      await form.findByText(/Empty uses 8,192 tokens — reported by the server/),
    ).toHaveTextContent(
      "Empty uses 8,192 tokens — reported by the server (llama.cpp /props n_ctx).",
    );
    const asked = backend.argsOf("discover_context_window")[0];
    expect(asked?.profile).toMatchObject({ base_url: LOCAL.base_url, model: LOCAL.model });
    expect(asked?.key).toBeNull();
  });

  it("refuses a window the engine would refuse, with a clear message, and saves a valid one", async () => {
    const backend = fakeBackend();
    const { user, form } = await editLocal();
    const field = form.getByLabelText("Context window");
    for (const bad of ["100", "8k", "4096.5"]) {
      await user.clear(field);
      await user.type(field, bad);
      await user.click(form.getByRole("button", { name: "Save changes" }));
      expect(await form.findByText(/at least 512/)).toHaveTextContent(
        "Enter a whole number of tokens, at least 512, or leave it empty to use what the engine finds.",
      );
      expect(field).toHaveAttribute("aria-invalid", "true");
    }
    expect(backend.argsOf("save_profiles")).toHaveLength(0);

    await user.clear(field);
    await user.type(field, "16384");
    await user.click(form.getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    expect(backend.argsOf("save_profiles")[0]?.profiles).toEqual([
      OPENAI,
      {
        ...LOCAL,
        api_key: null,
        temperature: null,
        max_tokens: null,
        context_window: 16384,
        timeout: null,
        tool_calls: "text",
      },
    ]);
  });

  it("opens the advanced options for a profile that sets it, and clearing it saves none", async () => {
    const backend = fakeBackend({ profiles: [OPENAI, { ...LOCAL, context_window: 2048 }] });
    const user = userEvent.setup();
    render(<SettingsScreen theme="system" onThemeChange={() => {}} state={STATE} />);
    const row = within(await screen.findByTestId("profile-local"));
    await user.click(row.getByRole("button", { name: "Edit local" }));
    const form = within(screen.getByRole("form", { name: "Edit local" }));
    const field = form.getByLabelText("Context window");
    expect(field).toBeVisible();
    expect(field).toHaveValue("2048");
    // The hint still says what an empty field would use.
    expect(await form.findByText(/Empty uses 4,096 tokens — conservative default/)).toBeVisible();
    await user.clear(field);
    await user.click(form.getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    const saved = backend.argsOf("save_profiles")[0]?.profiles as { context_window: unknown }[];
    expect(saved[1]?.context_window).toBeNull();
  });

  it("places the backend's context_window error next to the field", async () => {
    fakeBackend(
      {},
      {
        save_profiles: () => {
          throw {
            code: "invalid_config",
            message: "profiles[1].context_window: context_window must be at least 512 tokens",
          };
        },
      },
    );
    const { user, form } = await editLocal();
    await user.type(form.getByLabelText("Context window"), "1024");
    await user.click(form.getByRole("button", { name: "Save changes" }));
    expect(await form.findByText("context_window must be at least 512 tokens")).toBeInTheDocument();
    expect(form.getByLabelText("Context window")).toHaveAttribute("aria-invalid", "true");
  });

  it("says where each kind of answer comes from", () => {
    expect(
      windowHintText({ tokens: 128000, source: "known_model", detail: "gpt-4o", note: null }),
    ).toBe("128,000 tokens — default for gpt-4o");
    expect(windowHintText({ tokens: 4096, source: "default", detail: null, note: null })).toBe(
      "4,096 tokens — conservative default; set it if your server runs a larger context",
    );
  });
});
