import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { StatusState } from "../../ipc/useStatus";
import { render } from "../../test/render";
import { LOCAL, OPENAI, STATUS, fakeBackend } from "../../test/fakeBackend";
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
