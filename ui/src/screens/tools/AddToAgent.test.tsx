import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { ImportedTool, OpenApiImport, ToolInfo } from "../../bindings";
import type { StatusState } from "../../ipc/useStatus";
import { LeaveGuardProvider } from "../../shell/leaveGuard";
import { STATUS } from "../../test/fakeBackend";
import { pushEngine } from "../../test/pushed";
import { render } from "../../test/render";
import { readAgentTools } from "../agents/agentTools";
import { ToolsScreen } from "./ToolsScreen";

type Args = Record<string, unknown>;

const TESTER = `---
name: tester
display_name: Tester
description: "Test agent"
# its tools
tools:
  create_artifact: auto
max_tool_rounds: 5
---
You are the tester.
`;

const LEAD = `---
name: lead_agent
display_name: Lead researcher
tools:
  call_subagent: auto
---
You lead.
`;

const info = (name: string, source: string, more: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  description: `${name} does things`,
  source,
  file: source === "http" ? `/c/tools/${name}.md` : null,
  server: null,
  permission: "confirm",
  params: [],
  used_by: [],
  instructions: `<tool name="${name}">…</tool>`,
  ...more,
});

const BASE: ToolInfo[] = [
  info("create_artifact", "artifact", { permission: "auto" }),
  info("call_subagent", "builtin", { permission: "auto" }),
  info("quote", "http"),
];

const state: StatusState = { status: STATUS, error: null, loading: false, reload: async () => {} };

/**
 * The backend as far as "Add to agent…" needs it: two agent files on a disk, the tool list
 * with each tool's users read from those files (as the engine does after a save reloads), and
 * the MCP and OpenAPI commands the offers come from.
 */
function backend(
  opts: {
    tester?: string;
    tools?: () => ToolInfo[];
    more?: Record<string, (a: Args) => unknown>;
  } = {},
) {
  const disk: Record<string, string> = {
    "/c/agents/tester.md": opts.tester ?? TESTER,
    "/c/agents/lead_agent.md": LEAD,
  };
  const saves: Args[] = [];
  const names: Record<string, string> = {
    "/c/agents/tester.md": "tester",
    "/c/agents/lead_agent.md": "lead_agent",
  };
  const usersOf = (tool: string) =>
    Object.entries(disk).flatMap(([path, text]) => {
      const read = readAgentTools(text);
      const permission = read.ok ? read.tools.get(tool) : undefined;
      return permission ? [{ agent: names[path] ?? path, permission }] : [];
    });
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Args;
    const more = opts.more?.[cmd];
    if (more) return more(a);
    switch (cmd) {
      case "list_tools":
        return (opts.tools?.() ?? BASE).map((t) => ({
          ...t,
          used_by: usersOf(t.name) as ToolInfo["used_by"],
        }));
      case "list_config_files":
        return a.kind === "agent"
          ? [
              {
                path: "/c/agents/lead_agent.md",
                file_name: "lead_agent.md",
                enabled: true,
                name: "lead_agent",
                display_name: "Lead researcher",
              },
              {
                path: "/c/agents/tester.md",
                file_name: "tester.md",
                enabled: true,
                name: "tester",
                display_name: "Tester",
              },
            ]
          : [];
      case "read_config_file": {
        const path = a.path as string;
        return { path, file_name: path.split("/").pop(), enabled: true, text: disk[path] };
      }
      case "save_config_file": {
        saves.push(a);
        const path = a.path as string;
        if (a.kind === "agent") disk[path] = a.text as string;
        return {
          path: path ?? "/c/tools/new.md",
          file_name: (path ?? "/c/tools/new.md").split("/").pop(),
          enabled: true,
          text: a.text,
        };
      }
      case "mcp_servers":
      case "list_permission_rules":
        return cmd === "mcp_servers" ? [] : { global: [], agents: [] };
      default:
        throw new Error(`unexpected ${cmd}`);
    }
  });
  return { disk, saves };
}

const renderScreen = () =>
  render(
    <LeaveGuardProvider>
      <ToolsScreen state={state} />
    </LeaveGuardProvider>,
  );

describe("Add to agent…", () => {
  it("gives a tool from its row to the chosen agent with the permission chosen; its users update", async () => {
    const { disk, saves } = backend();
    const user = userEvent.setup();
    renderScreen();
    const row = await screen.findByTestId("tool-row-quote");
    expect(row).toHaveTextContent("no agent uses it");
    await user.click(within(row).getByText("quote"));
    await user.click(within(row).getByRole("button", { name: "Add to agent…" }));

    const dialog = screen.getByTestId("add-to-agent");
    expect(dialog).toHaveAttribute("open");
    expect(within(dialog).getByRole("heading")).toHaveTextContent("Add quote to an agent");
    const agent = within(dialog).getByLabelText("Agent");
    expect(agent).toHaveFocus();
    await user.selectOptions(agent, "/c/agents/tester.md");
    const permission = within(dialog).getByLabelText("Permission for quote");
    // The tool's default permission, until changed.
    expect(permission).toHaveValue("confirm");
    await user.selectOptions(permission, "auto");
    await user.click(await within(dialog).findByRole("button", { name: "Add to Tester" }));

    await waitFor(() => expect(saves).toHaveLength(1));
    expect(saves[0]).toEqual({
      kind: "agent",
      path: "/c/agents/tester.md",
      text: TESTER.replace("  create_artifact: auto\n", "  create_artifact: auto\n  quote: auto\n"),
      base: TESTER,
    });
    expect(disk["/c/agents/lead_agent.md"]).toBe(LEAD);
    expect(await screen.findByTestId("tools-notice")).toHaveTextContent("Gave quote to Tester.");
    expect(dialog).not.toHaveAttribute("open");
    await waitFor(() =>
      expect(screen.getByTestId("tool-row-quote")).toHaveTextContent("used by tester (auto)"),
    );
  });

  it("names a broken agent file with its line and writes nothing; Escape closes", async () => {
    const broken = TESTER.replace("max_tool_rounds: 5", "max_tool_rounds: [5");
    const { disk, saves } = backend({ tester: broken });
    const user = userEvent.setup();
    renderScreen();
    const row = await screen.findByTestId("tool-row-quote");
    await user.click(within(row).getByText("quote"));
    await user.click(within(row).getByRole("button", { name: "Add to agent…" }));
    const dialog = screen.getByTestId("add-to-agent");
    await user.selectOptions(within(dialog).getByLabelText("Agent"), "/c/agents/tester.md");
    const alert = await within(dialog).findByTestId("add-to-agent-error");
    expect(alert).toHaveTextContent(/^tester\.md, line (8|9): .*nothing was changed\.$/);
    expect(within(dialog).getByTestId("add-to-agent-confirm")).toBeDisabled();
    expect(saves).toEqual([]);
    expect(disk["/c/agents/tester.md"]).toBe(broken);
    // Escape (the dialog's cancel) closes it.
    fireEvent(dialog, new Event("cancel", { cancelable: true }));
    expect(dialog).not.toHaveAttribute("open");
  });

  it("offers the saved tools of an OpenAPI import to an agent", async () => {
    const text = (name: string, permission: string) =>
      `---\nname: ${name}\ntype: http\npermission: ${permission}\nendpoint: "https://x.test/${name}"\n---\n`;
    const tool = (name: string, permission: string): ImportedTool => ({
      name,
      file_name: `${name}.md`,
      text: text(name, permission),
      operation: `GET /${name}`,
      summary: name,
      tags: [],
      secrets: [],
      exists: false,
    });
    const imported: OpenApiImport = {
      title: "Pets",
      total: 2,
      tools: [tool("listPets", "auto"), tool("createPet", "confirm")],
      skipped: [],
    };
    const { saves } = backend({
      more: {
        import_openapi: () => imported,
        check_tool_draft: () => ({
          name: null,
          errors: [],
          instructions: "",
          secrets: [],
          permission: null,
        }),
      },
    });
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByTestId("import-openapi"));
    await user.type(screen.getByLabelText("Description URL"), "https://x.test/openapi.json");
    await user.click(screen.getByTestId("openapi-read"));
    await screen.findByTestId("openapi-result");
    await user.click(screen.getByTestId("openapi-select-all"));
    await user.click(screen.getByTestId("openapi-save"));
    const report = await screen.findByTestId("openapi-report");
    expect(report).toHaveTextContent("Saved 2 tools: listPets, createPet. Give them to an agent?");

    await user.click(within(report).getByRole("button", { name: "Add to agent…" }));
    const dialog = screen.getByTestId("add-to-agent");
    expect(within(dialog).getByRole("heading")).toHaveTextContent("Add 2 tools to an agent");
    // Each with the permission its file gives.
    expect(within(dialog).getByLabelText("Permission for listPets")).toHaveValue("auto");
    expect(within(dialog).getByLabelText("Permission for createPet")).toHaveValue("confirm");
    await user.click(await within(dialog).findByRole("button", { name: "Add to Lead researcher" }));
    await waitFor(() => expect(saves.filter((s) => s.kind === "agent")).toHaveLength(1));
    expect(saves.find((s) => s.kind === "agent")?.text).toBe(
      LEAD.replace(
        "  call_subagent: auto\n",
        "  call_subagent: auto\n  listPets: auto\n  createPet: confirm\n",
      ),
    );
  });

  it("offers a new MCP server's tools to an agent once the server is ready", async () => {
    let ready = false;
    const echo = info("everything.echo", "mcp", { server: "everything" });
    const { saves } = backend({
      tools: () => (ready ? [...BASE, echo] : BASE),
      more: { mcp_save_servers: () => ["everything"] },
    });
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByTestId("add-mcp-server"));
    await user.click(screen.getByTestId("save-mcp"));
    const offer = await screen.findByTestId("mcp-add-offer");
    expect(offer).toHaveTextContent("Added MCP server everything. Give its tools to an agent?");
    await user.click(within(offer).getByRole("button", { name: "Add to agent…" }));
    const dialog = screen.getByTestId("add-to-agent");
    expect(within(dialog).getByRole("status")).toHaveTextContent("everything is starting");
    expect(within(dialog).getByTestId("add-to-agent-confirm")).toBeDisabled();

    // The server gets ready: its tools join the list, and the dialog.
    ready = true;
    await act(() =>
      pushEngine({
        type: "mcp_server_status",
        server: "everything",
        status: { state: "ready", tool_count: 1 },
      }),
    );
    const box = await within(dialog).findByRole("checkbox", { name: "everything.echo" });
    expect(box).toBeChecked();
    await user.selectOptions(within(dialog).getByLabelText("Agent"), "/c/agents/tester.md");
    await user.click(await within(dialog).findByRole("button", { name: "Add to Tester" }));
    await waitFor(() => expect(saves).toHaveLength(1));
    expect(saves[0]?.text).toBe(
      TESTER.replace(
        "  create_artifact: auto\n",
        "  create_artifact: auto\n  everything.echo: confirm\n",
      ),
    );
    await waitFor(() => expect(screen.queryByTestId("mcp-add-offer")).toBeNull());
    expect(screen.getByTestId("tools-notice")).toHaveTextContent("Gave everything.echo to Tester.");
  });
});
