import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import axe from "axe-core";
import type { StatusState } from "../../ipc/useStatus";
import { render } from "../../test/render";
import type { ModelProfile } from "../../bindings";
import { LOCAL, OPENAI, STATUS, fakeBackend, installedModel } from "../../test/fakeBackend";
import { SettingsScreen } from "./SettingsScreen";

const STATE: StatusState = { status: STATUS, error: null, loading: false, reload: async () => {} };

/** Settings open on the `local` profile's form. */
async function editLocalProfile() {
  const backend = fakeBackend();
  const user = userEvent.setup();
  render(<SettingsScreen theme="system" onThemeChange={() => {}} state={STATE} />);
  const row = within(await screen.findByTestId("profile-local"));
  await user.click(row.getByRole("button", { name: "Edit local" }));
  const form = within(screen.getByRole("form", { name: "Edit local" }));
  return { backend, user, form };
}

describe("Settings: a profile run on this computer", () => {
  it("asks for no server address or key, and saves `api: local` without them", async () => {
    const { backend, user, form } = await editLocalProfile();
    expect(form.getByLabelText("Base URL")).toBeInTheDocument();

    await user.selectOptions(form.getByLabelText("API type"), "local");
    expect(form.queryByLabelText("Base URL")).not.toBeInTheDocument();
    expect(form.queryByText("This server needs an API key")).not.toBeInTheDocument();
    // Nothing is installed: the profile's model stays, and a name can be typed by hand.
    expect(form.getByLabelText("Model")).toHaveDisplayValue("qwen2.5:7b (not installed)");
    await user.click(form.getByRole("button", { name: "Type a name or path instead" }));
    const model = form.getByLabelText("Model");
    await user.clear(model);
    await user.type(model, "smollm2-135m");
    await user.click(form.getByRole("button", { name: "Save changes" }));

    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    const saved = backend.argsOf("save_profiles")[0]?.profiles as unknown[];
    expect(saved[0]).toEqual(OPENAI);
    expect(saved[1]).toMatchObject({
      name: LOCAL.name,
      api: "local",
      base_url: "",
      model: "smollm2-135m",
      api_key: null,
    });
  });

  it("sets guided tool calls per profile, and leaves the default unwritten", async () => {
    const { backend, user, form } = await editLocalProfile();
    await user.selectOptions(form.getByLabelText("API type"), "local");
    await user.click(form.getByText("Advanced options"));
    const guided = form.getByLabelText("Guided tool calls");
    expect(guided).toHaveValue("");
    expect(form.getByRole("option", { name: "Default (on for this profile)" })).toBeInTheDocument();
    await user.selectOptions(guided, "off");
    await user.click(form.getByRole("button", { name: "Save changes" }));
    await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
    const saved = backend.argsOf("save_profiles")[0]?.profiles as unknown[];
    expect(saved[0]).toEqual(OPENAI);
    expect(saved[1]).toMatchObject({ api: "local", guided_calls: "off" });
    // A server profile's default is off, and saying nothing writes nothing.
    expect(saved[0]).not.toHaveProperty("guided_calls");
  });
});

const SMOL = installedModel("SmolLM2-135M-Instruct.Q4_1");
const QWEN = installedModel("Qwen3-1.7B-Q8_0", {
  size: 1_830_000_000,
  info: SMOL.info && { ...SMOL.info, architecture: "qwen3", quantization: "Q8_0" },
});

/** A profile of a model run by the app itself, as the first-run setup saves one. */
function onDisk(model: string): ModelProfile {
  return { name: "mine", api: "local", base_url: "", model, api_key: null, tool_calls: "auto" };
}

/** Settings open on the form of `profile` (named `mine`), with `installed` in the models folder. */
async function editOnDisk(profile: ModelProfile, installed = [SMOL, QWEN]) {
  const backend = fakeBackend({ profiles: [OPENAI, profile], installed });
  const user = userEvent.setup();
  render(<SettingsScreen theme="system" onThemeChange={() => {}} state={STATE} />);
  const row = within(await screen.findByTestId("profile-mine"));
  await user.click(row.getByRole("button", { name: "Edit mine" }));
  const form = within(screen.getByRole("form", { name: "Edit mine" }));
  return { backend, user, form };
}

async function savedModel(backend: ReturnType<typeof fakeBackend>) {
  await waitFor(() => expect(backend.argsOf("save_profiles")).toHaveLength(1));
  const saved = backend.argsOf("save_profiles")[0]?.profiles as ModelProfile[];
  expect(saved[0]).toEqual(OPENAI);
  return saved[1];
}

describe("Settings: the model of a profile run on this computer", () => {
  it("shows the preset “On this computer”, not a custom server", async () => {
    const { user, form } = await editOnDisk(onDisk(SMOL.name));
    expect(form.getByLabelText("Preset")).toHaveDisplayValue("On this computer");
    expect(form.getByLabelText("API type")).toHaveValue("local");
    // Another API type is a server no preset names until one is chosen…
    await user.selectOptions(form.getByLabelText("API type"), "openai");
    expect(form.getByLabelText("Preset")).toHaveDisplayValue("Custom server");
    expect(form.getByLabelText("Base URL")).toBeInTheDocument();
    // …and the preset takes the form back to a model file: no server, no key.
    await user.selectOptions(form.getByLabelText("Preset"), "On this computer");
    expect(form.getByLabelText("API type")).toHaveValue("local");
    expect(form.queryByLabelText("Base URL")).not.toBeInTheDocument();
    expect(form.queryByText("This server needs an API key")).not.toBeInTheDocument();
  });

  it("lists the installed models with their size and architecture, and saves the one picked", async () => {
    const { backend, user, form } = await editOnDisk(onDisk(QWEN.name));
    const picker = await form.findByRole("combobox", { name: "Model" });
    await waitFor(() =>
      expect(
        within(picker)
          .getAllByRole("option")
          .map((o) => o.textContent),
      ).toEqual([
        "SmolLM2-135M-Instruct.Q4_1 — 98.4 MB · llama",
        "Qwen3-1.7B-Q8_0 — 1.8 GB · qwen3",
      ]),
    );
    expect(picker).toHaveValue(QWEN.name);
    // No ARIA problem for axe-core (jsdom has no layout: colours are checked by the E2E audit).
    const audit = await axe.run(screen.getByRole("form", { name: "Edit mine" }), {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "best-practice"] },
      rules: { "color-contrast": { enabled: false }, region: { enabled: false } },
    });
    expect(audit.violations.map((v) => v.id)).toEqual([]);
    await user.selectOptions(picker, "SmolLM2-135M-Instruct.Q4_1 — 98.4 MB · llama");
    await user.click(form.getByRole("button", { name: "Save changes" }));
    expect(await savedModel(backend)).toMatchObject({ api: "local", model: SMOL.name });
  });

  it("keeps a model that is not installed, saying so, until another is picked", async () => {
    const { backend, user, form } = await editOnDisk(onDisk("gone-model"));
    const picker = form.getByRole("combobox", { name: "Model" });
    await waitFor(() => expect(within(picker).getAllByRole("option")).toHaveLength(3));
    expect(picker).toHaveDisplayValue("gone-model (not installed)");
    expect(picker).toHaveAccessibleDescription(
      "“gone-model” is not in the models folder: pick an installed model, get one, or keep it.",
    );
    await user.click(form.getByRole("button", { name: "Save changes" }));
    expect(await savedModel(backend)).toMatchObject({ model: "gone-model" });
  });

  it("names a file outside the models folder as such", async () => {
    const { form } = await editOnDisk(onDisk("/data/big/model.gguf"));
    const picker = form.getByRole("combobox", { name: "Model" });
    await waitFor(() => expect(within(picker).getAllByRole("option")).toHaveLength(3));
    expect(picker).toHaveDisplayValue("/data/big/model.gguf (a file outside the models folder)");
  });

  it("takes a name or path typed by hand, and goes back to the list", async () => {
    const { backend, user, form } = await editOnDisk(onDisk(SMOL.name));
    await form.findByRole("option", { name: /^Qwen3/ });
    await user.click(form.getByRole("button", { name: "Type a name or path instead" }));
    const typed = form.getByRole("textbox", { name: "Model" });
    expect(typed).toHaveFocus();
    expect(typed).toHaveValue(SMOL.name);
    await user.click(form.getByRole("button", { name: "Choose an installed model" }));
    expect(form.getByRole("combobox", { name: "Model" })).toHaveFocus();
    await user.click(form.getByRole("button", { name: "Type a name or path instead" }));
    await user.clear(form.getByRole("textbox", { name: "Model" }));
    await user.type(form.getByRole("textbox", { name: "Model" }), "/data/other.gguf");
    await user.click(form.getByRole("button", { name: "Save changes" }));
    expect(await savedModel(backend)).toMatchObject({ model: "/data/other.gguf" });
  });

  it("says when no model is installed yet", async () => {
    const { form } = await editOnDisk(onDisk(""), []);
    const picker = form.getByRole("combobox", { name: "Model" });
    await waitFor(() =>
      expect(picker).toHaveAccessibleDescription(
        "No models are installed yet: get one, or type the path of a .gguf file.",
      ),
    );
    expect(picker).toHaveDisplayValue("Choose a model…");
  });

  it("types the name when the models cannot be listed, saying why", async () => {
    const backend = fakeBackend(
      { profiles: [OPENAI, onDisk(SMOL.name)] },
      {
        models_list: () => {
          throw { code: "io", message: "cannot read /models: permission denied" };
        },
      },
    );
    const user = userEvent.setup();
    render(<SettingsScreen theme="system" onThemeChange={() => {}} state={STATE} />);
    await user.click(
      within(await screen.findByTestId("profile-mine")).getByRole("button", { name: "Edit mine" }),
    );
    const form = within(screen.getByRole("form", { name: "Edit mine" }));
    const typed = await form.findByRole("textbox", { name: "Model" });
    expect(typed).toHaveValue(SMOL.name);
    expect(typed).toHaveAccessibleDescription(
      "The installed models could not be listed (cannot read /models: permission denied). Type a model's name or the path of a .gguf file.",
    );
    expect(backend.argsOf("models_list")).toHaveLength(1);
  });
});

test("“Get a model…” is offered where the Models screen can be opened", async () => {
  fakeBackend({ profiles: [OPENAI, onDisk("")] });
  const user = userEvent.setup();
  const openModels = vi.fn();
  const { unmount } = render(
    <SettingsScreen
      theme="system"
      onThemeChange={() => {}}
      state={STATE}
      onOpenModels={openModels}
    />,
  );
  await user.click(
    within(await screen.findByTestId("profile-mine")).getByRole("button", { name: "Edit mine" }),
  );
  await user.click(screen.getByRole("button", { name: "Get a model…" }));
  expect(openModels).toHaveBeenCalledTimes(1);
  unmount();

  // Settings alone (nowhere to go): no link that does nothing.
  const { user: again, form } = await editOnDisk(onDisk(""));
  expect(form.queryByRole("button", { name: "Get a model…" })).not.toBeInTheDocument();
  await again.click(form.getByRole("button", { name: "Type a name or path instead" }));
  expect(form.queryByRole("button", { name: "Get a model…" })).not.toBeInTheDocument();
});
