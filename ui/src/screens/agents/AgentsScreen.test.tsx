import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { render } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import lead from "../../../../config/agents/lead_agent.md?raw";
import { LeaveGuardProvider } from "../../shell/leaveGuard";
import type { ToolInfo } from "../../bindings";
import { AgentsScreen } from "./AgentsScreen";

const PATH = "/c/agents/lead_agent.md";
type Args = Record<string, unknown>;

const tool = (name: string, source: string, server: string | null = null): ToolInfo => ({
  name,
  description: `What ${name} does`,
  source,
  file: null,
  server,
  permission: source === "http" || source === "mcp" ? "confirm" : "auto",
  params: [],
  used_by: [],
  instructions: "",
});

const TOOLS: ToolInfo[] = [
  tool("call_subagent", "builtin"),
  tool("web_search", "builtin"),
  tool("create_artifact", "artifact"),
  tool("update_artifact", "artifact"),
  tool("rewrite_artifact", "artifact"),
  tool("read_artifact", "artifact"),
  tool("grep_artifact", "artifact"),
  tool("search_library", "artifact"),
  tool("probe", "http"),
  tool("everything.echo", "mcp", "everything"),
  tool("everything.add", "mcp", "everything"),
];

function backend(disk: { text: string }, loads = true) {
  const saves: Args[] = [];
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Args;
    const file = { path: PATH, file_name: "lead_agent.md", enabled: true, text: disk.text };
    if (cmd === "list_config_files")
      return [
        {
          path: PATH,
          file_name: "lead_agent.md",
          enabled: true,
          name: "lead_agent",
          display_name: "Lead researcher",
        },
      ];
    if (cmd === "read_config_file") return file;
    if (cmd === "list_tools") return TOOLS;
    if (cmd === "check_agent_draft") {
      // A stand-in for the backend's loader: the lead agent's fields, one unknown tool.
      const text = a.text as string;
      const agent = {
        name: /^name: (\S+)/m.exec(text)?.[1] ?? "",
        display_name: /^display_name: (.+)$/m.exec(text)?.[1] ?? null,
        description: "Plans and delegates",
        model: "default",
        tools: [
          ["call_subagent", "auto"],
          ["create_artifact", "auto"],
        ],
        internal: false,
        max_tool_rounds: 20,
        all_skills: /^skills: all$/m.test(text),
        skills: [],
        role_prompt: "You are the **lead**.",
      };
      if (!loads)
        return {
          errors: [{ file: PATH, line: 2, field: null, message: "expected a mapping" }],
          agent: null,
        };
      return text.includes("no_such_tool")
        ? {
            errors: [
              {
                file: PATH,
                line: 6,
                field: "tools.no_such_tool",
                message: "there is no tool `no_such_tool`",
              },
            ],
            agent,
          }
        : { errors: [], agent };
    }
    if (cmd === "save_config_file") {
      saves.push(a);
      disk.text = a.text as string;
      return { ...file, text: disk.text };
    }
    throw new Error(`unexpected ${cmd}`);
  });
  return saves;
}

describe("AgentsScreen", () => {
  it("shows an agent's fields and edits its Markdown with validation", async () => {
    const disk = { text: lead };
    const saves = backend(disk);
    const user = userEvent.setup();
    render(
      <LeaveGuardProvider>
        <AgentsScreen />
      </LeaveGuardProvider>,
    );
    const detail = await screen.findByTestId("agent-detail");
    await waitFor(() => expect(detail).toHaveTextContent("Lead researcher"));
    // The name shows from the file listing first; the fields arrive with the backend's check.
    const tools = await within(detail).findByTestId("agent-tools");
    // People see the display name; the id (the file's `name`) is beside it, the path one
    // "Show file" away.
    expect(screen.getByTestId("agent-lead_agent")).toHaveTextContent("Lead researcher");
    expect(within(detail).getByRole("heading", { level: 2 })).toHaveTextContent("Lead researcher");
    expect(within(detail).getByTestId("agent-id")).toHaveTextContent("lead_agent");
    const file = within(detail).getByTestId("show-file");
    expect(file).not.toHaveAttribute("open");
    expect(file).toHaveTextContent(PATH);
    expect(within(file).getByText("Show file").tagName).toBe("SUMMARY");
    expect(tools).toHaveTextContent("call_subagent");
    expect(tools).toHaveTextContent("auto");
    // The bundled lead agent takes every skill.
    expect(within(detail).getByTestId("agent-skills")).toHaveTextContent("every skill that is on");
    expect(await within(detail).findByText("lead")).toBeInTheDocument(); // the role prompt, rendered

    await user.click(screen.getByTestId("edit-agent"));
    // The editor opens once the backend has read the file: wait for it.
    const raw = await screen.findByTestId<HTMLTextAreaElement>("agent-raw");
    expect(raw.value).toBe(lead);
    fireEvent.change(raw, {
      target: { value: lead.replace("tools:", "tools:\n  no_such_tool: auto") },
    });
    expect(await screen.findByTestId("problems")).toHaveTextContent(
      "line 6 tools.no_such_tool: there is no tool `no_such_tool`",
    );
    expect(screen.getByTestId("save-agent")).toBeDisabled();
    const edited = lead.replace("max_tool_rounds: 20", "max_tool_rounds: 7");
    fireEvent.change(raw, { target: { value: edited } });
    await screen.findByTestId("no-problems");
    await user.click(screen.getByTestId("save-agent"));
    await waitFor(() => expect(saves).toHaveLength(1));
    expect(saves[0]).toMatchObject({ kind: "agent", path: PATH, text: edited, base: lead });
  });

  it("titles the editor of an agent whose draft does not load by its file, never 'New agent'", async () => {
    backend({ text: lead }, false);
    const user = userEvent.setup();
    render(
      <LeaveGuardProvider>
        <AgentsScreen />
      </LeaveGuardProvider>,
    );
    await user.click(await screen.findByTestId("edit-agent"));
    await screen.findByTestId("agent-raw");
    expect(await screen.findByTestId("problems")).toHaveTextContent("expected a mapping");
    const editor = screen.getByRole("region", { name: /^Edit agent/ });
    expect(editor).toHaveAccessibleName("Edit agent lead_agent");
  });

  it("starts a new agent over after discarding, and keeps guarding", async () => {
    backend({ text: lead });
    const user = userEvent.setup();
    render(
      <LeaveGuardProvider>
        <AgentsScreen />
      </LeaveGuardProvider>,
    );
    await screen.findByTestId("agent-detail");
    await user.click(screen.getByTestId("new-agent"));
    const template = screen.getByTestId<HTMLTextAreaElement>("agent-raw").value;
    fireEvent.change(screen.getByTestId("agent-raw"), { target: { value: `${template}more` } });
    await user.click(screen.getByTestId("new-agent"));
    await user.click(screen.getByRole("button", { name: "Discard changes" }));
    expect(screen.getByTestId<HTMLTextAreaElement>("agent-raw").value).toBe(template);
    fireEvent.change(screen.getByTestId("agent-raw"), { target: { value: `${template}again` } });
    await user.click(screen.getByTestId("agent-lead_agent"));
    expect(screen.getByTestId("leave-dialog")).toBeInTheDocument();
  });

  it("gives an MCP tool through the picker, by source and search, with its permission", async () => {
    const disk = { text: lead };
    const saves = backend(disk);
    const user = userEvent.setup();
    render(
      <LeaveGuardProvider>
        <AgentsScreen />
      </LeaveGuardProvider>,
    );
    await screen.findByTestId("agent-tools");
    // "Choose tools…" on the agent's page opens the editor with the picker.
    await user.click(screen.getByTestId("agent-pick-tools"));
    const raw = await screen.findByTestId<HTMLTextAreaElement>("agent-raw");
    const picker = screen.getByTestId("tool-picker");
    expect(picker).toHaveAttribute("open");
    expect(within(picker).getByLabelText("Search tools")).toHaveFocus();
    await waitFor(() =>
      expect(
        within(picker)
          .getAllByRole("group")
          .map((g) => g.querySelector("legend")?.firstChild?.textContent?.trim()),
      ).toEqual(["Built-in", "Artifact", "HTTP", "MCP server everything"]),
    );
    const builtin = within(picker).getByRole("group", { name: /Built-in/ });
    expect(builtin).toHaveTextContent("(1 of 2 given)");
    expect(within(builtin).getByRole("checkbox", { name: "call_subagent" })).toBeChecked();
    expect(within(builtin).getByRole("checkbox", { name: "web_search" })).not.toBeChecked();
    // A given tool shows the agent's permission, one not given the tool's default.
    expect(within(picker).getByLabelText("Permission for call_subagent")).toHaveValue("auto");
    expect(within(picker).getByTestId("pick-probe")).toHaveTextContent("confirm");

    await user.type(within(picker).getByLabelText("Search tools"), "ECHO");
    await waitFor(() =>
      expect(within(picker).queryByRole("checkbox", { name: "call_subagent" })).toBeNull(),
    );
    expect(
      within(picker)
        .getAllByRole("checkbox")
        .map((c) => c.id.split("-give-")[1]),
    ).toEqual(["everything.echo"]);
    await user.click(within(picker).getByRole("checkbox", { name: "everything.echo" }));
    const given = lead.replace(
      "  search_library: auto\n",
      "  search_library: auto\n  everything.echo: confirm\n",
    );
    expect(raw.value).toBe(given);
    await user.selectOptions(
      within(picker).getByLabelText("Permission for everything.echo"),
      "auto",
    );
    expect(raw.value).toBe(given.replace("everything.echo: confirm", "everything.echo: auto"));
    // Taking a tool away removes its line.
    await user.clear(within(picker).getByLabelText("Search tools"));
    await user.click(await within(picker).findByRole("checkbox", { name: "update_artifact" }));
    const edited = given
      .replace("everything.echo: confirm", "everything.echo: auto")
      .replace("  update_artifact: auto\n", "");
    expect(raw.value).toBe(edited);

    // Escape closes the picker; Save writes the edited file, the rest of it as it was.
    fireEvent(picker, new Event("cancel", { cancelable: true }));
    expect(picker).not.toHaveAttribute("open");
    await screen.findByTestId("no-problems");
    await user.click(screen.getByTestId("save-agent"));
    await waitFor(() => expect(saves).toHaveLength(1));
    expect(saves[0]).toMatchObject({ kind: "agent", path: PATH, text: edited, base: lead });
  });

  it("says where a draft is broken and changes nothing from the picker", async () => {
    backend({ text: lead });
    const user = userEvent.setup();
    render(
      <LeaveGuardProvider>
        <AgentsScreen />
      </LeaveGuardProvider>,
    );
    await user.click(await screen.findByTestId("edit-agent"));
    const raw = await screen.findByTestId<HTMLTextAreaElement>("agent-raw");
    const broken = lead.replace("model: default", "model: [default");
    fireEvent.change(raw, { target: { value: broken } });
    await user.click(screen.getByTestId("pick-tools"));
    const picker = screen.getByTestId("tool-picker");
    expect(within(picker).getByTestId("tool-picker-error")).toHaveTextContent(
      /cannot be changed here \(line \d+\): .*nothing was changed/,
    );
    const box = await within(picker).findByRole("checkbox", { name: "web_search" });
    expect(box).toBeDisabled();
    await user.click(within(picker).getByRole("button", { name: "Done" }));
    expect(picker).not.toHaveAttribute("open");
    expect(raw.value).toBe(broken);
  });
});
