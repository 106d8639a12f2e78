import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { AutoChoice, AutoReason, ModelProfile } from "../../bindings";
import type { StatusState } from "../../ipc/useStatus";
import { render } from "../../test/render";
import { LOCAL, OPENAI, STATUS, fakeBackend } from "../../test/fakeBackend";
import { SettingsScreen } from "./SettingsScreen";
import { toolModeText } from "./toolMode";

const STATE: StatusState = { status: STATUS, error: null, loading: false, reload: async () => {} };

const ON_THIS_COMPUTER: ModelProfile = {
  name: "here",
  api: "local",
  base_url: "",
  model: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
  tool_calls: "auto",
};

function choice(reason: AutoReason, patch: Partial<AutoChoice> = {}): AutoChoice {
  return { mode: "text", guided: true, family: "hermes", reason, ...patch };
}

describe("the line that says what tool_calls: auto chose", () => {
  it("says the mode and why, in one sentence per reason", () => {
    const cases: [AutoChoice, string][] = [
      [
        choice("checked", { mode: "native" }),
        "Auto: native calls, guided — this model's tool-use check scored best this way",
      ],
      [
        choice("checked", { guided: false }),
        "Auto: text calls — this model's tool-use check scored best this way",
      ],
      [
        choice("native_family", { mode: "native" }),
        "Auto: native calls, guided — this model's template takes tools (Hermes family); no check has run yet",
      ],
      [
        choice("native_family", { mode: "native", family: "lfm2", guided: false }),
        "Auto: native calls — this model's template takes tools (LFM2 family); no check has run yet",
      ],
      [
        choice("template_takes_no_tools"),
        "Auto: text calls, guided — this model's template takes no tools; no check has run yet",
      ],
      [
        choice("unknown_family", { family: "unknown" }),
        "Auto: text calls, guided — this model's template takes tools in a form the app does not know; no check has run yet",
      ],
      [
        choice("no_model_file"),
        "Auto: text calls, guided — the model file is not in the models folder or could not be read",
      ],
      [choice("configured", { mode: "native" }), "Native calls, guided — set in this profile"],
    ];
    for (const [c, sentence] of cases) expect(toolModeText(c, "local")).toBe(sentence);
    expect(toolModeText(choice("no_model_file", { guided: false }), "openai")).toBe(
      "Auto: text calls — auto chooses per model only for models run on this computer",
    );
  });

  it("shows under Tool calls what the backend resolved for the form's model, and asks again as it changes", async () => {
    const answers: Record<string, AutoChoice> = {
      "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf": choice("checked", { mode: "native" }),
      "smollm2-135m": choice("template_takes_no_tools"),
    };
    const backend = fakeBackend(
      { profiles: [OPENAI, LOCAL, ON_THIS_COMPUTER] },
      {
        profile_tool_mode: (a) =>
          answers[(a.profile as ModelProfile).model] ?? choice("no_model_file"),
      },
    );
    const user = userEvent.setup();
    render(<SettingsScreen theme="system" onThemeChange={() => {}} state={STATE} />);
    const row = within(await screen.findByTestId("profile-here"));
    await user.click(row.getByRole("button", { name: "Edit here" }));
    const form = within(screen.getByRole("form", { name: "Edit here" }));

    const field = form.getByTestId("tool-calls-field");
    await waitFor(() =>
      expect(within(field).getByTestId("tool-mode-line")).toHaveTextContent(
        "Auto: native calls, guided — this model's tool-use check scored best this way",
      ),
    );
    expect(field).toHaveAccessibleDescription(
      expect.stringContaining("this model's tool-use check scored best this way") as string,
    );
    expect(backend.argsOf("profile_tool_mode").at(-1)?.profile).toMatchObject({
      api: "local",
      model: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
      tool_calls: "auto",
    });

    // Another model: asked again once typing pauses.
    await user.click(form.getByRole("button", { name: "Type a name or path instead" }));
    const model = form.getByLabelText("Model");
    await user.clear(model);
    await user.type(model, "smollm2-135m");
    await waitFor(() =>
      expect(within(field).getByTestId("tool-mode-line")).toHaveTextContent(
        "Auto: text calls, guided — this model's template takes no tools; no check has run yet",
      ),
    );

    // A mode chosen by hand needs no line.
    await user.click(within(field).getByRole("radio", { name: /Native/ }));
    expect(within(field).queryByTestId("tool-mode-line")).not.toBeInTheDocument();
  });

  it("says so when the backend cannot tell", async () => {
    fakeBackend(
      { profiles: [OPENAI, LOCAL, ON_THIS_COMPUTER] },
      {
        profile_tool_mode: () => {
          throw { code: "engine_unavailable", message: "the database is locked" };
        },
      },
    );
    const user = userEvent.setup();
    render(<SettingsScreen theme="system" onThemeChange={() => {}} state={STATE} />);
    const row = within(await screen.findByTestId("profile-here"));
    await user.click(row.getByRole("button", { name: "Edit here" }));
    const form = within(screen.getByRole("form", { name: "Edit here" }));
    expect(await form.findByText(/Could not tell what auto chooses/)).toHaveTextContent(
      "Could not tell what auto chooses: the database is locked",
    );
  });
});
