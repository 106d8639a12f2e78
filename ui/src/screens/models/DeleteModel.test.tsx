import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import type {
  CatalogView,
  InstalledModel,
  ModelChecksView,
  ModelsView,
  ProfileModel,
  Removal,
} from "../../bindings";
import { installedModel } from "../../test/fakeBackend";
import { render } from "../../test/render";
import { ModelsScreen } from "./ModelsScreen";

const MACHINE = { total_memory: 16e9, available_memory: 8e9, free_disk: 100e9, cores: 4 };
const QWEN: InstalledModel = installedModel("qwen2.5-coder-0.5b-instruct-q4_k_m", {
  size: 920_000_000,
});
const SPARE: InstalledModel = installedModel("spare");

/** The Models screen's commands, with the settings saying which profiles run which file, and a
 * deletion that answers `removal` for the model it deletes. */
function backend(profileModels: ProfileModel[], removal: Removal) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  let installed = [QWEN, SPARE];
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args: a });
    switch (cmd) {
      case "models_list":
        return {
          dir: "/data/models",
          installed,
          downloads: [],
          machine: MACHINE,
        } satisfies ModelsView;
      case "models_catalog":
        return { machine: MACHINE, items: [], recommendation: null } satisfies CatalogView;
      case "models_checks":
        return {
          item_count: 200,
          models: installed.map((m) => ({
            model: m.name,
            checks: [],
            best: null,
            running: null,
          })),
        } satisfies ModelChecksView;
      case "get_settings":
        return {
          profiles: [],
          settings: {
            web_search: { endpoint: "https://search" },
            web_fetch: { endpoint: "https://fetch" },
            permission_timeout_secs: 120,
            skills: { user_folders: false, disabled: [] },
          },
          secret_names: [],
          missing_secrets: [],
          profile_models: profileModels,
          config_dir: "/config",
        };
      case "models_remove":
        installed = installed.filter((m) => m.name !== a.name);
        return removal;
      default:
        throw new Error(`unexpected command ${cmd}`);
    }
  });
  return calls;
}

const USED: ProfileModel[] = [
  { profile: "Local", file: QWEN.file, missing: null },
  { profile: "Coder", file: QWEN.file, missing: null },
  { profile: "Other", file: "other.gguf", missing: null },
];

describe("Models screen: deleting a model profiles use", () => {
  it("names the profiles that use it before deleting, and says what the deletion did", async () => {
    const calls = backend(USED, {
      removed: [QWEN.path],
      profiles: ["Local", "Coder"],
      stopped_runs: ["c1"],
      runtime_stopped: true,
    });
    const user = userEvent.setup();
    render(<ModelsScreen />);
    const row = within(await screen.findByTestId(`model-${QWEN.name}`));
    await user.click(row.getByRole("button", { name: `Delete ${QWEN.name}` }));
    const confirm = row.getByRole("group", { name: `Confirm: Delete ${QWEN.name}` });
    await waitFor(() =>
      expect(confirm).toHaveTextContent(
        `Delete ${QWEN.file} (920.0 MB) from this computer? The profiles “Local”, “Coder” use it; they will have no model until you pick another.`,
      ),
    );
    expect(calls.some((c) => c.cmd === "models_remove")).toBe(false);

    await user.click(within(confirm).getByRole("button", { name: "Delete" }));
    expect(await screen.findByTestId("models-remove-status")).toHaveTextContent(
      `Deleted ${QWEN.file} (920.0 MB). The profiles “Local”, “Coder” used it; they have no model until you pick another in Settings. The run that used it was stopped.`,
    );
    expect(calls.find((c) => c.cmd === "models_remove")?.args).toEqual({ name: QWEN.name });
    await waitFor(() => expect(screen.queryByTestId(`model-${QWEN.name}`)).toBeNull());
  });

  it("asks only about the file when no profile uses it", async () => {
    backend(USED, {
      removed: [SPARE.path],
      profiles: [],
      stopped_runs: [],
      runtime_stopped: false,
    });
    const user = userEvent.setup();
    render(<ModelsScreen />);
    const row = within(await screen.findByTestId(`model-${SPARE.name}`));
    await user.click(row.getByRole("button", { name: `Delete ${SPARE.name}` }));
    expect(row.getByRole("group", { name: `Confirm: Delete ${SPARE.name}` })).toHaveTextContent(
      /^Delete spare\.gguf \(98\.4 MB\) from this computer\?DeleteCancel$/,
    );
    await user.click(row.getByRole("button", { name: "Delete" }));
    expect(await screen.findByTestId("models-remove-status")).toHaveTextContent(
      /^Deleted spare\.gguf \(98\.4 MB\)\.$/,
    );
  });

  it("names the one profile that uses it", async () => {
    backend([{ profile: "Local", file: QWEN.file, missing: null }], {
      removed: [QWEN.path],
      profiles: ["Local"],
      stopped_runs: [],
      runtime_stopped: false,
    });
    const user = userEvent.setup();
    render(<ModelsScreen />);
    const row = within(await screen.findByTestId(`model-${QWEN.name}`));
    await user.click(row.getByRole("button", { name: `Delete ${QWEN.name}` }));
    await waitFor(() =>
      expect(row.getByRole("group")).toHaveTextContent(
        "The profile “Local” uses it; it will have no model until you pick another.",
      ),
    );
  });
});
