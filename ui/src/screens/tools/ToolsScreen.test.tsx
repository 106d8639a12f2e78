import { screen, within } from "@testing-library/react";
import { render } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import { ToolsScreen } from "./ToolsScreen";
import type { StatusState } from "../../ipc/useStatus";
import type { PermissionRulesView, ToolInfo } from "../../bindings";

const TOOLS: ToolInfo[] = [
  {
    name: "web_fetch",
    description: "Fetch a page",
    source: "builtin",
    file: null,
    server: null,
    permission: "confirm",
    params: [
      {
        name: "url",
        type: "string",
        description: "Full URL",
        required: true,
        default: null,
        enum: null,
      },
      {
        name: "max_content_length",
        type: "integer",
        description: "",
        required: false,
        default: 20000,
        enum: null,
      },
    ],
    used_by: [
      { agent: "crawl_agent", permission: "confirm" },
      { agent: "tester", permission: "auto" },
    ],
    instructions: '<tool name="web_fetch">…</tool>',
  },
  {
    name: "quote",
    description: "Stock quotes",
    source: "http",
    file: "/c/tools/quote.md",
    server: null,
    permission: "confirm",
    params: [],
    used_by: [],
    instructions: '<tool name="quote">…</tool>',
  },
  {
    name: "everything.echo",
    description: "Echoes back the input",
    source: "mcp",
    file: null,
    server: "everything",
    permission: "confirm",
    params: [],
    used_by: [{ agent: "tester", permission: "confirm" }],
    instructions: '<tool name="everything.echo">…</tool>',
  },
];

const state: StatusState = {
  status: {
    app_version: "1",
    config_dir: "/c",
    database: "/d",
    schema_version: 3,
    log_dir: "/l",
    tools_loaded: 2,
    agents_loaded: 2,
    config_errors: [
      { file: "/c/tools/bad.md", line: 4, field: "method", message: "unknown method" },
    ],
  },
  error: null,
  loading: false,
  reload: async () => {},
};

describe("ToolsScreen", () => {
  it("lists every tool with source, permission, users, parameters and instructions", async () => {
    mockIPC((cmd) => (cmd === "list_tools" ? TOOLS : cmd === "list_config_files" ? [] : null));
    const user = userEvent.setup();
    render(<ToolsScreen state={state} />);
    const fetch = await screen.findByTestId("tool-row-web_fetch");
    expect(fetch).toHaveTextContent("built-in");
    expect(fetch).toHaveTextContent("used by crawl_agent, tester (auto)");
    await user.click(within(fetch).getByText("web_fetch"));
    expect(within(fetch).getByRole("table")).toHaveTextContent("max_content_length");
    expect(within(fetch).getByRole("table")).toHaveTextContent("20000");
    expect(fetch).toHaveTextContent('<tool name="web_fetch">');
    const quote = screen.getByTestId("tool-row-quote");
    expect(quote).toHaveTextContent("HTTP");
    expect(quote).toHaveTextContent("no agent uses it");
    const echo = screen.getByTestId("tool-row-everything.echo");
    expect(echo).toHaveTextContent("MCP");
    expect(echo).toHaveTextContent("used by tester");
    expect(screen.getByTestId("config-errors")).toHaveTextContent(
      "/c/tools/bad.md:4 field method: unknown method",
    );
  });

  it("shows the permission rules that cover each tool, with where they come from", async () => {
    const rules: PermissionRulesView = {
      global: [
        {
          origin: { kind: "global", file: "settings.yaml", line: 3 },
          spec: { tool: "web_*", when: { url: "https://docs.rs/**" }, action: "allow" },
          error: null,
          tools: ["web_fetch", "web_search"],
        },
      ],
      agents: [
        {
          agent: "tester",
          path: "/c/agents/tester.md",
          rules: [
            {
              origin: { kind: "agent", agent: "tester", file: "agents/tester.md", line: 8 },
              spec: { tool: "*", when: { $host: "*.internal" }, action: "deny" },
              error: null,
              tools: ["web_fetch", "quote"],
            },
          ],
        },
      ],
    };
    mockIPC((cmd) =>
      cmd === "list_tools"
        ? TOOLS
        : cmd === "list_permission_rules"
          ? rules
          : cmd === "list_config_files"
            ? []
            : null,
    );
    const user = userEvent.setup();
    render(<ToolsScreen state={state} />);
    const fetch = await screen.findByTestId("tool-row-web_fetch");
    await user.click(within(fetch).getByText("web_fetch"));
    const lines = await within(fetch).findByRole("list", {
      name: "Permission rules for web_fetch",
    });
    expect(
      within(lines)
        .getAllByRole("listitem")
        .map((li) => li.textContent),
    ).toEqual([
      "allow web_* when url=https://docs.rs/** (Settings, settings.yaml:3)",
      "deny * when $host=*.internal (agent tester, agents/tester.md:8)",
    ]);
    const echo = screen.getByTestId("tool-row-everything.echo");
    await user.click(within(echo).getByText("everything.echo"));
    expect(within(echo).queryByRole("list", { name: /Permission rules/ })).toBeNull();
  });
});
