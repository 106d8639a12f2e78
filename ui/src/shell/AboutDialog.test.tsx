import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { AppInfo, UpdateCheck } from "../bindings";
import { About } from "./AboutDialog";

const INFO: AppInfo = {
  name: "ArtifactFlow",
  version: "0.1.0",
  identifier: "app.artifactflow.desktop",
  tauri_version: "2.12.5",
  license: "MIT",
  homepage: "https://example.com/artifactflow",
  releases: "https://example.com/artifactflow/releases",
  issues: "https://example.com/artifactflow/issues",
  update_url: null,
  can_install_updates: true,
};

type Handler = (args: Record<string, unknown>) => unknown;

/** The About commands over Tauri's IPC mock; `update_url` persists like settings.yaml. */
function backend(overrides: Partial<Record<string, Handler>> = {}, info: Partial<AppInfo> = {}) {
  const state = { ...INFO, ...info };
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  const defaults: Record<string, Handler> = {
    get_app_info: () => state,
    save_update_url: (a) => {
      const url = String(a.url).trim();
      if (url && !url.startsWith("https://"))
        throw { code: "invalid_config", message: "the update feed must be an https:// URL" };
      state.update_url = url || null;
      return state.update_url;
    },
    check_for_updates: (): UpdateCheck => ({ current_version: "0.1.0", available: null }),
    install_update: () => null,
    open_project_link: () => null,
  };
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args: a });
    const handler = overrides[cmd] ?? defaults[cmd];
    if (!handler) throw new Error(`unexpected command ${cmd}`);
    return handler(a);
  });
  return { state, argsOf: (cmd: string) => calls.filter((c) => c.cmd === cmd).map((c) => c.args) };
}

async function openAbout() {
  const user = userEvent.setup();
  render(<About />);
  await user.click(screen.getByRole("button", { name: "About" }));
  const dialog = await screen.findByRole("dialog", { name: "About ArtifactFlow" });
  await within(dialog).findByTestId("about-version");
  return { user, dialog: within(dialog) };
}

describe("About dialog", () => {
  it("opens from the sidebar button with the keyboard, shows the version, and closes back to the button", async () => {
    backend();
    const user = userEvent.setup();
    render(<About />);
    const button = screen.getByRole("button", { name: "About" });
    await user.tab();
    expect(button).toHaveFocus();
    await user.keyboard("{Enter}");
    const dialog = within(await screen.findByRole("dialog", { name: "About ArtifactFlow" }));
    expect(await dialog.findByTestId("about-version")).toHaveTextContent("0.1.0");
    expect(dialog.getByText("MIT")).toBeInTheDocument();
    expect(dialog.getByText("app.artifactflow.desktop")).toBeInTheDocument();
    expect(dialog.getByRole("button", { name: "Close" })).toHaveFocus();

    await user.keyboard("{Enter}");
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(button).toHaveFocus();
  });

  it("opens the project's pages through the backend", async () => {
    const b = backend();
    const { user, dialog } = await openAbout();
    await user.click(dialog.getByRole("button", { name: "Report a problem" }));
    await user.click(dialog.getByRole("button", { name: "Releases" }));
    await waitFor(() =>
      expect(b.argsOf("open_project_link")).toEqual([{ link: "issues" }, { link: "releases" }]),
    );
  });

  it("has update checks off by default, until a feed URL is saved", async () => {
    const b = backend();
    const { user, dialog } = await openAbout();
    const check = dialog.getByRole("button", { name: "Check for updates" });
    expect(check).toBeDisabled();
    expect(dialog.getByTestId("update-status")).toHaveTextContent("Update checks are off");
    expect(dialog.getByLabelText("Update feed URL")).toHaveValue("");

    await user.type(dialog.getByLabelText("Update feed URL"), "https://example.com/latest.json");
    await user.click(dialog.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(check).toBeEnabled());
    expect(b.argsOf("save_update_url")).toEqual([{ url: "https://example.com/latest.json" }]);
    expect(b.state.update_url).toBe("https://example.com/latest.json");
    expect(dialog.getByTestId("update-status")).toHaveTextContent("Saved.");

    await user.click(check);
    expect(await dialog.findByText("ArtifactFlow 0.1.0 is up to date.")).toBeInTheDocument();
    expect(b.argsOf("check_for_updates")).toHaveLength(1);
  });

  it("shows why a feed URL was refused and keeps checks off", async () => {
    backend();
    const { user, dialog } = await openAbout();
    const input = dialog.getByLabelText("Update feed URL");
    await user.type(input, "http://example.com/latest.json");
    await user.click(dialog.getByRole("button", { name: "Save" }));
    expect(await dialog.findByRole("alert")).toHaveTextContent("must be an https:// URL");
    expect(input).toHaveAttribute("aria-invalid", "true");
    expect(dialog.getByRole("button", { name: "Check for updates" })).toBeDisabled();
  });

  it("clearing the URL turns checks off again", async () => {
    const b = backend({}, { update_url: "https://example.com/latest.json" });
    const { user, dialog } = await openAbout();
    const input = dialog.getByLabelText("Update feed URL");
    expect(input).toHaveValue("https://example.com/latest.json");
    await user.clear(input);
    await user.click(dialog.getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(dialog.getByRole("button", { name: "Check for updates" })).toBeDisabled(),
    );
    expect(b.state.update_url).toBeNull();
  });

  it("offers a found update with its notes and installs it", async () => {
    const b = backend(
      {
        check_for_updates: () => ({
          current_version: "0.1.0",
          available: { version: "0.2.0", date: "2026-12-01", notes: "Faster artifact search" },
        }),
      },
      { update_url: "https://example.com/latest.json" },
    );
    const { user, dialog } = await openAbout();
    await user.click(dialog.getByRole("button", { name: "Check for updates" }));
    expect(await dialog.findByTestId("update-status")).toHaveTextContent(
      "Version 0.2.0 is available (you have 0.1.0).",
    );
    expect(dialog.getByText("Faster artifact search")).toBeInTheDocument();
    expect(dialog.getByText("Published 2026-12-01")).toBeInTheDocument();
    await user.click(dialog.getByRole("button", { name: "Install and restart" }));
    await waitFor(() => expect(b.argsOf("install_update")).toHaveLength(1));
  });

  it("sends people to the releases page when this build cannot install updates", async () => {
    const b = backend(
      {
        check_for_updates: () => ({
          current_version: "0.1.0",
          available: { version: "0.2.0", date: null, notes: null },
        }),
      },
      { update_url: "https://example.com/latest.json", can_install_updates: false },
    );
    const { user, dialog } = await openAbout();
    await user.click(dialog.getByRole("button", { name: "Check for updates" }));
    await dialog.findByText(/cannot install updates itself/);
    expect(dialog.queryByRole("button", { name: "Install and restart" })).not.toBeInTheDocument();
    await user.click(dialog.getByRole("button", { name: "releases page" }));
    await waitFor(() => expect(b.argsOf("open_project_link")).toEqual([{ link: "releases" }]));
  });

  it("reports a failed check", async () => {
    backend(
      {
        check_for_updates: () => {
          throw {
            code: "update",
            message: "the update failed: Could not fetch a valid release JSON",
          };
        },
      },
      { update_url: "https://example.com/latest.json" },
    );
    const { user, dialog } = await openAbout();
    await user.click(dialog.getByRole("button", { name: "Check for updates" }));
    expect(await dialog.findByRole("alert")).toHaveTextContent(
      "Could not fetch a valid release JSON",
    );
  });
});
