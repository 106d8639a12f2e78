import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { SkillDetail, SkillView, SkillsView } from "../../bindings";
import { dropFocus } from "../../test/focus";
import { render } from "../../test/render";
import { SkillsScreen } from "./SkillsScreen";

const CSV: SkillView = {
  name: "csv-report",
  description: "Summarise a CSV file of sales.",
  source: "config folder",
  origin: { kind: "config" },
  enabled: true,
  agents: ["lead_agent"],
  dir: "/config/skills/csv-report",
  license: "Apache-2.0",
  compatibility: null,
  allowed_tools: [],
  metadata: {},
  ignored_fields: [],
};

function backend() {
  const state = {
    calls: [] as { cmd: string; args: Record<string, unknown> }[],
    skills: [CSV],
    userFolders: false,
    importResult: "ok" as "ok" | "bad",
    /** Set: the import waits until this is called with the skill's name (null: cancelled). */
    holdImport: false,
    finishImport: (() => {}) as (name: string | null) => void,
  };
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Record<string, unknown>;
    state.calls.push({ cmd, args: a });
    switch (cmd) {
      case "skills_list":
        return {
          skills: state.skills,
          problems: [
            {
              file: "/config/skills/Bad/SKILL.md",
              line: 2,
              field: "name",
              message: "`Bad` has `B`: a skill name has only lowercase letters",
            },
          ],
          skills_dir: "/config/skills",
          user_folders: state.userFolders,
          user_folder_paths: ["/home/u/.agents/skills", "/home/u/.claude/skills"],
        } satisfies SkillsView;
      case "skills_show":
        return {
          skill: CSV,
          instructions: "# CSV sales report\n\nRun the script.",
          files: ["references/format.md", "scripts/summarize.py"],
        } satisfies SkillDetail;
      case "skills_read_file":
        return "# Report layout";
      case "skills_set_enabled":
        state.skills = state.skills.map((s) =>
          s.name === a.name ? { ...s, enabled: a.enabled as boolean } : s,
        );
        return null;
      case "skills_set_user_folders":
        state.userFolders = a.on as boolean;
        return null;
      case "skills_import":
        if (state.holdImport)
          return new Promise((resolve) => {
            state.finishImport = resolve;
          });
        if (state.importResult === "bad")
          throw {
            code: "invalid_config",
            message: "evil.zip: the entry `../x` would be written outside the skill's folder",
          };
        return "tidy";
      default:
        return null;
    }
  });
  return state;
}

test("lists skills with source, agents and problems, and opens one with its files", async () => {
  backend();
  const user = userEvent.setup();
  render(<SkillsScreen />);
  const row = await screen.findByTestId("skill-csv-report");
  expect(within(row).getByText("config folder")).toBeInTheDocument();
  expect(row).toHaveTextContent("Used by lead_agent.");
  expect(row).toHaveTextContent("Licence: Apache-2.0.");
  expect(screen.getByTestId("skill-problems")).toHaveTextContent(
    "skills/Bad/SKILL.md:2 (name): `Bad` has `B`",
  );
  await user.click(within(row).getByRole("button", { name: "csv-report" }));
  expect(await screen.findByRole("heading", { name: "CSV sales report" })).toBeInTheDocument();
  // The next heading level under the page's (axe heading-order: an h3 under the h1 was not).
  expect(screen.getByRole("heading", { level: 2, name: "Files" })).toBeInTheDocument();
  await user.click(screen.getByRole("button", { name: "references/format.md" }));
  expect(await screen.findByTestId("skill-file")).toHaveTextContent("# Report layout");
});

test("turning a skill off and the user folders on are saved", async () => {
  const state = backend();
  const user = userEvent.setup();
  render(<SkillsScreen />);
  await user.click(await screen.findByRole("checkbox", { name: "Use the skill csv-report" }));
  await waitFor(() =>
    expect(state.calls).toContainEqual({
      cmd: "skills_set_enabled",
      args: { name: "csv-report", enabled: false },
    }),
  );
  expect(
    await within(screen.getByTestId("skill-csv-report")).findByText("off"),
  ).toBeInTheDocument();
  await user.click(screen.getByTestId("skills-user-folders"));
  await waitFor(() => expect(screen.getByTestId("skills-user-folders")).toBeChecked());
  expect(state.calls).toContainEqual({ cmd: "skills_set_user_folders", args: { on: true } });
});

test("an import says what came in, or why it was refused", async () => {
  const state = backend();
  const user = userEvent.setup();
  render(<SkillsScreen />);
  await user.click(await screen.findByRole("button", { name: "Import a .zip or .skill file…" }));
  expect(await screen.findByText("Imported the skill “tidy”.")).toBeInTheDocument();
  expect(state.calls).toContainEqual({ cmd: "skills_import", args: { path: null, archive: true } });
  state.importResult = "bad";
  await user.click(screen.getByRole("button", { name: "Import a folder…" }));
  expect(await screen.findByRole("alert")).toHaveTextContent("would be written outside");
});

test("an import shows it is running, and no second one starts meanwhile", async () => {
  const state = backend();
  state.holdImport = true;
  const user = userEvent.setup();
  render(<SkillsScreen />);
  await screen.findByTestId("skill-csv-report");
  await user.click(screen.getByRole("button", { name: "Import a folder…" }));
  await waitFor(() =>
    expect(state.calls).toContainEqual({
      cmd: "skills_import",
      args: { path: null, archive: false },
    }),
  );
  const busy = screen.getByRole("button", { name: "Importing…" });
  expect(busy).toBeDisabled();
  expect(screen.getByRole("button", { name: "Import a .zip or .skill file…" })).toBeDisabled();
  expect(screen.getByTestId("skills-import-status")).toHaveTextContent(
    "Importing the skill: copying it into the skills folder and checking it…",
  );
  dropFocus();

  state.skills = [CSV, { ...CSV, name: "tidy", dir: "/config/skills/tidy" }];
  state.finishImport("tidy");
  expect(await screen.findByTestId("skill-tidy")).toBeInTheDocument();
  expect(screen.getByTestId("skills-import-status")).toHaveTextContent(
    "Imported the skill “tidy”.",
  );
  const again = screen.getByRole("button", { name: "Import a folder…" });
  expect(again).toBeEnabled();
  expect(screen.getByRole("button", { name: "Import a .zip or .skill file…" })).toBeEnabled();
  await waitFor(() => expect(again).toHaveFocus());
  expect(state.calls.filter((c) => c.cmd === "skills_import")).toHaveLength(1);

  // The dialog cancelled: the status goes, nothing else is said.
  await user.click(again);
  state.finishImport(null);
  await waitFor(() => expect(screen.queryByTestId("skills-import-status")).not.toBeInTheDocument());
  expect(screen.queryByRole("alert")).not.toBeInTheDocument();
});
