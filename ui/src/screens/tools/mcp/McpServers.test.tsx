import { act, screen, waitFor, within } from "@testing-library/react";
import { useState } from "react";
import userEvent from "@testing-library/user-event";
import { pushEngine } from "../../../test/pushed";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { McpServerView, McpToolInfo, ToolTest } from "../../../bindings";
import type { StatusState } from "../../../ipc/useStatus";
import { LeaveGuardProvider } from "../../../shell/leaveGuard";
import { STATUS } from "../../../test/fakeBackend";
import { render } from "../../../test/render";
import { ToolsScreen } from "../ToolsScreen";

type Args = Record<string, unknown>;

const EVERYTHING: McpServerView = {
  name: "everything",
  transport: "stdio",
  target: "npx -y @modelcontextprotocol/server-everything",
  command_path: "/usr/local/bin/npx",
  command_from_login_shell: true,
  pid: 4242,
  protocol_version: "2025-11-25",
  status: { state: "ready", tool_count: 2 },
  stderr_tail: ["Starting default (STDIO) server..."],
};

const BROKEN: McpServerView = {
  name: "broken",
  transport: "stdio",
  target: "uvx mcp-server-missing",
  command_path: "/home/u/.local/bin/uvx",
  command_from_login_shell: false,
  pid: null,
  protocol_version: null,
  status: {
    state: "failed",
    reason: "the server exited during start-up (exit status 1)",
    stderr_tail: ["resolving mcp-server-missing", "error: package mcp-server-missing not found"],
  },
  stderr_tail: [],
};

const TOOLS: McpToolInfo[] = [
  {
    name: "everything.echo",
    remote_name: "echo",
    title: null,
    description: "Echoes back the input",
    permission: "confirm",
    params: [{ name: "message", type: "string", description: "Message to echo", required: true }],
    read_only_hint: true,
    destructive_hint: null,
    instructions: '<tool name="everything.echo">…</tool>',
    view: "ui://echo/view",
    app_only: false,
  },
  {
    name: "everything.wipe",
    remote_name: "wipe",
    title: "Wipe",
    description: "Deletes everything",
    permission: "confirm",
    params: [],
    read_only_hint: false,
    destructive_hint: true,
    instructions: '<tool name="everything.wipe">…</tool>',
    view: null,
    app_only: true,
  },
];

const state: StatusState = { status: STATUS, error: null, loading: false, reload: async () => {} };

/** A stand-in for the shell's MCP commands over Tauri's IPC mock, keeping the server list. */
function backend(servers: McpServerView[], overrides: Record<string, (a: Args) => unknown> = {}) {
  const calls: { cmd: string; args: Args }[] = [];
  const list = { servers };
  mockIPC((cmd, args) => {
    const a = (args ?? {}) as Args;
    calls.push({ cmd, args: a });
    const override = overrides[cmd];
    if (override) return override(a);
    switch (cmd) {
      case "list_tools":
      case "list_config_files":
        return [];
      case "mcp_servers":
        return list.servers;
      case "mcp_server_tools":
        return TOOLS;
      case "mcp_set_disabled":
        list.servers = list.servers.map((s) =>
          s.name === a.name
            ? { ...s, status: a.disabled ? { state: "disabled" } : { state: "starting" } }
            : s,
        );
        return null;
      case "mcp_sign_out":
        list.servers = list.servers.map((s) =>
          s.name === a.name
            ? { ...s, status: { state: "needs_sign_in", reason: "sign in again" } }
            : s,
        );
        return null;
      case "mcp_restart":
      case "mcp_remove_server":
        return null;
      default:
        throw new Error(`unexpected ${cmd}`);
    }
  });
  return { list, argsOf: (cmd: string) => calls.filter((c) => c.cmd === cmd).map((c) => c.args) };
}

const renderScreen = () =>
  render(
    <LeaveGuardProvider>
      <ToolsScreen state={state} />
    </LeaveGuardProvider>,
  );

describe("MCP servers on the Tools screen", () => {
  it("shows each server's status, command path, failure reason and stderr tail", async () => {
    backend([EVERYTHING, BROKEN]);
    renderScreen();
    const ready = await screen.findByTestId("mcp-server-everything");
    expect(within(ready).getByTestId("mcp-status")).toHaveTextContent("ready · 2 tools");
    expect(ready).toHaveTextContent("stdio: npx -y @modelcontextprotocol/server-everything");
    expect(within(ready).getByTestId("mcp-command-path")).toHaveTextContent("/usr/local/bin/npx");
    expect(ready).toHaveTextContent("found through your login shell's PATH");
    const failed = screen.getByTestId("mcp-server-broken");
    expect(within(failed).getByTestId("mcp-status")).toHaveTextContent("failed");
    expect(within(failed).getByTestId("mcp-reason")).toHaveTextContent(
      "the server exited during start-up (exit status 1)",
    );
    expect(within(failed).getByTestId("mcp-stderr").textContent).toBe(
      "resolving mcp-server-missing\nerror: package mcp-server-missing not found",
    );
    expect(failed).not.toHaveTextContent("login shell");
    // Which protocol version each running server speaks, and what an older one means.
    expect(within(ready).getByTestId("mcp-protocol")).toHaveTextContent("MCP 2025-11-25");
    expect(within(ready).getByTestId("mcp-protocol-note")).toHaveTextContent(
      "Speaks MCP 2025-11-25, an older version (it does not know 2026-07-28)",
    );
    expect(within(failed).queryByTestId("mcp-protocol")).toBeNull();
    // A failed server's log is open; a ready one's is one click away.
    expect(within(failed).getByTestId("mcp-stderr").closest("details")).toHaveAttribute("open");
    expect(within(ready).getByTestId("mcp-stderr").closest("details")).not.toHaveAttribute("open");
  });

  it("says a server speaks the newest protocol version", async () => {
    backend([{ ...EVERYTHING, name: "modern", protocol_version: "2026-07-28" }]);
    renderScreen();
    const modern = await screen.findByTestId("mcp-server-modern");
    expect(within(modern).getByTestId("mcp-protocol")).toHaveTextContent("MCP 2026-07-28");
    expect(within(modern).getByTestId("mcp-protocol-note")).toHaveTextContent(
      "Speaks MCP 2026-07-28, the newest version.",
    );
  });

  it("lists a ready server's tools with annotations as badges, parameters and instructions", async () => {
    const fake = backend([EVERYTHING]);
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByText("everything"));
    const echo = await screen.findByTestId("mcp-tool-everything.echo");
    expect(fake.argsOf("mcp_server_tools")).toEqual([{ name: "everything" }]);
    await user.click(within(echo).getByText("everything.echo"));
    expect(echo).toHaveTextContent("read-only");
    expect(echo).not.toHaveTextContent("destructive");
    expect(within(echo).getByRole("table")).toHaveTextContent("Message to echo");
    expect(echo).toHaveTextContent('<tool name="everything.echo">');
    // Annotations are shown, never trusted: the permission stays confirm.
    expect(echo).toHaveTextContent("confirm");
    expect(echo).toHaveTextContent("never skip the permission dialog");
    const wipe = screen.getByTestId("mcp-tool-everything.wipe");
    expect(wipe).toHaveTextContent("destructive");
    expect(wipe).not.toHaveTextContent("read-only");
    // MCP Apps: a tool with a view, and one only the server's views call.
    expect(within(echo).getByTestId("mcp-tool-view")).toHaveAttribute(
      "title",
      "Its result comes with an interactive view (ui://echo/view), shown in the tool card.",
    );
    expect(within(echo).queryByTestId("mcp-tool-app-only")).not.toBeInTheDocument();
    expect(within(wipe).getByTestId("mcp-tool-app-only")).toHaveTextContent("views only");
    expect(within(wipe).queryByTestId("mcp-tool-view")).not.toBeInTheDocument();
  });

  it("disables, enables and restarts a server, and shows the new status", async () => {
    const fake = backend([EVERYTHING]);
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByText("everything"));
    await user.click(screen.getByTestId("disable-everything"));
    expect(fake.argsOf("mcp_set_disabled")).toEqual([{ name: "everything", disabled: true }]);
    const row = screen.getByTestId("mcp-server-everything");
    await waitFor(() =>
      expect(within(row).getByTestId("mcp-status")).toHaveTextContent("disabled"),
    );
    // A disabled server has nothing to restart.
    expect(screen.getByTestId("restart-everything")).toBeDisabled();
    await user.click(screen.getByTestId("enable-everything"));
    expect(fake.argsOf("mcp_set_disabled")[1]).toEqual({ name: "everything", disabled: false });
    await waitFor(() =>
      expect(within(row).getByTestId("mcp-status")).toHaveTextContent("starting"),
    );
    await user.click(screen.getByTestId("restart-everything"));
    expect(fake.argsOf("mcp_restart")).toEqual([{ name: "everything" }]);
  });

  it("follows the engine's status events", async () => {
    const fake = backend([{ ...EVERYTHING, status: { state: "starting" } }]);
    renderScreen();
    const row = await screen.findByTestId("mcp-server-everything");
    expect(within(row).getByTestId("mcp-status")).toHaveTextContent("starting");
    fake.list.servers = [BROKEN, EVERYTHING];
    await act(() =>
      pushEngine({
        type: "mcp_server_status",
        server: "everything",
        status: { state: "ready", tool_count: 2 },
      }),
    );
    await waitFor(() => expect(within(row).getByTestId("mcp-status")).toHaveTextContent("ready"));
    expect(screen.getByTestId("mcp-server-broken")).toHaveTextContent("failed");
  });

  it("keeps a crash in the recent status changes after the server is back", async () => {
    const fake = backend([EVERYTHING]);
    renderScreen();
    const row = await screen.findByTestId("mcp-server-everything");
    const announce = (status: unknown) =>
      act(() => pushEngine({ type: "mcp_server_status", server: "everything", status }));
    const STOPPED = "the server stopped (restarting in 1 s; calls in flight failed)";
    fake.list.servers = [
      { ...EVERYTHING, status: { state: "failed", reason: STOPPED, stderr_tail: [] } },
    ];
    await announce({ state: "failed", reason: STOPPED, stderr_tail: [] });
    fake.list.servers = [EVERYTHING];
    await announce({ state: "starting" });
    await announce({ state: "ready", tool_count: 2 });
    await waitFor(() => expect(within(row).getByTestId("mcp-status")).toHaveTextContent("ready"));
    const changes = within(row)
      .getAllByRole("listitem")
      .filter((li) => li.closest('[data-testid="mcp-history"]'))
      .map((li) => li.textContent?.replace(`${li.querySelector("time")?.textContent} `, ""));
    expect(changes).toEqual(["ready · 2 tools", "starting", `failed: ${STOPPED}`]);
  });

  it("keeps the recent status changes, those made meanwhile too, when the screen is left and opened again", async () => {
    const fake = backend([EVERYTHING]);
    const user = userEvent.setup();
    // The app's screen switch: the Tools screen unmounts while another screen is shown.
    function Screens() {
      const [tools, setTools] = useState(true);
      return (
        <LeaveGuardProvider>
          <button type="button" onClick={() => setTools(!tools)}>
            switch screen
          </button>
          {tools && <ToolsScreen state={state} />}
        </LeaveGuardProvider>
      );
    }
    render(<Screens />);
    await screen.findByTestId("mcp-server-everything");
    const announce = (status: unknown) =>
      act(() => pushEngine({ type: "mcp_server_status", server: "everything", status }));
    const STOPPED = "the server stopped (restarting in 1 s; calls in flight failed)";
    await announce({ state: "failed", reason: STOPPED, stderr_tail: [] });
    await waitFor(() => expect(screen.getByTestId("mcp-history")).toBeInTheDocument());

    await user.click(screen.getByRole("button", { name: "switch screen" }));
    expect(screen.queryByTestId("mcp-server-everything")).toBeNull();
    await announce({ state: "starting" });
    await announce({ state: "ready", tool_count: 2 });
    fake.list.servers = [EVERYTHING];

    await user.click(screen.getByRole("button", { name: "switch screen" }));
    const row = await screen.findByTestId("mcp-server-everything");
    await waitFor(() => expect(within(row).getByTestId("mcp-status")).toHaveTextContent("ready"));
    const changes = within(row)
      .getAllByRole("listitem")
      .filter((li) => li.closest('[data-testid="mcp-history"]'))
      .map((li) => li.textContent?.replace(`${li.querySelector("time")?.textContent} `, ""));
    expect(changes).toEqual(["ready · 2 tools", "starting", `failed: ${STOPPED}`]);
  });

  it("adds servers from pasted JSON and shows the engine's located error for a bad paste", async () => {
    const BAD =
      "line 3, column 14: expected `:` (mcp.json pasted text); fix the JSON and save again";
    const saved: Args[] = [];
    const fake = backend([], {
      mcp_save_servers: (a) => {
        saved.push(a);
        if (!(a.json as string).includes('"url"')) throw { code: "invalid_config", message: BAD };
        fake.list.servers = [{ ...EVERYTHING, name: "remote", status: { state: "starting" } }];
        return ["remote"];
      },
    });
    const user = userEvent.setup();
    renderScreen();
    expect(await screen.findByTestId("no-mcp-servers")).toBeInTheDocument();
    await user.click(screen.getByTestId("add-mcp-server"));
    const box = screen.getByLabelText("Server configuration (JSON)");
    expect((box as HTMLTextAreaElement).value).toContain('"mcpServers"');
    await user.clear(box);
    await user.type(box, '{{"remote" {{"command": "x"}}');
    await user.click(screen.getByTestId("save-mcp"));
    expect(await screen.findByRole("alert")).toHaveTextContent(BAD);
    expect(box).toHaveAttribute("aria-invalid", "true");
    await user.clear(box);
    await user.type(box, '{{"remote": {{"url": "https://mcp.example.com/mcp"}}');
    // Ctrl+S saves, as in the other editors.
    await user.keyboard("{Control>}s{/Control}");
    await screen.findByTestId("mcp-server-remote");
    expect(saved.map((a) => a.replacing)).toEqual([null, null]);
    expect(saved[1]?.json).toBe('{"remote": {"url": "https://mcp.example.com/mcp"}}');
  });

  it("adds a server with the form, which writes the JSON the paste box shows", async () => {
    const fake = backend([], { mcp_save_servers: () => ["files"] });
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByTestId("add-mcp-server"));
    await user.click(screen.getByTestId("mcp-tab-form"));
    await user.type(screen.getByLabelText("Name"), "files");
    await user.type(screen.getByLabelText("Command"), "npx");
    await user.type(
      screen.getByLabelText("Arguments"),
      "-y{Enter}server-files{Enter}/home/u/My Docs",
    );
    await user.type(screen.getByLabelText("Environment"), "KEY={{{{FILES_KEY}}");
    await user.click(screen.getByTestId("mcp-tab-json"));
    const written = {
      mcpServers: {
        files: {
          command: "npx",
          args: ["-y", "server-files", "/home/u/My Docs"],
          env: { KEY: "{{FILES_KEY}}" },
        },
      },
    };
    expect(
      JSON.parse(
        (screen.getByLabelText("Server configuration (JSON)") as HTMLTextAreaElement).value,
      ),
    ).toEqual(written);
    await user.click(screen.getByTestId("mcp-tab-form"));
    // Back in the form, nothing was lost; a remote server asks for a URL instead.
    expect(screen.getByLabelText("Command")).toHaveValue("npx");
    await user.selectOptions(screen.getByLabelText("Kind"), "http");
    expect(screen.queryByLabelText("Command")).toBeNull();
    await user.type(screen.getByLabelText("URL"), "https://mcp.example.com/mcp");
    await user.click(screen.getByTestId("save-mcp"));
    await screen.findByTestId("no-mcp-servers");
    const sent = fake.argsOf("mcp_save_servers")[0];
    expect(sent?.replacing).toBeNull();
    expect(JSON.parse(sent?.json as string)).toEqual({
      mcpServers: { files: { url: "https://mcp.example.com/mcp" } },
    });
  });

  it("edits a server from its configuration and saves it in its place", async () => {
    const CONFIG =
      '{\n  "mcpServers": {\n    "everything": {\n      "command": "npx"\n    }\n  }\n}';
    const fake = backend([EVERYTHING], {
      mcp_server_config: () => CONFIG,
      mcp_save_servers: () => ["everything"],
    });
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByText("everything"));
    await user.click(screen.getByTestId("edit-everything"));
    const box = await screen.findByLabelText("Server configuration (JSON)");
    expect(box).toHaveValue(CONFIG);
    expect(fake.argsOf("mcp_server_config")).toEqual([{ name: "everything" }]);
    await user.type(box, " ");
    await user.click(screen.getByTestId("save-mcp"));
    await screen.findByTestId("mcp-server-everything");
    expect(fake.argsOf("mcp_save_servers")).toEqual([
      { json: `${CONFIG} `, replacing: "everything" },
    ]);
  });

  it("offers Sign in for a remote server only, and says what the sign-in gave", async () => {
    const REMOTE: McpServerView = {
      ...EVERYTHING,
      name: "remote",
      transport: "http",
      target: "https://mcp.example.com/mcp",
      command_path: null,
      command_from_login_shell: false,
      pid: null,
      protocol_version: null,
      stderr_tail: [],
      status: { state: "needs_sign_in", reason: "sign in with `Sign in` or `mcp login remote`" },
    };
    let refuse = true;
    const fake = backend([EVERYTHING, REMOTE], {
      mcp_sign_in: () => {
        if (refuse) {
          refuse = false;
          throw {
            code: "sign_in",
            message: "the authorization server refused the sign-in: access_denied",
          };
        }
        return ["tools:read", "tools:call"];
      },
    });
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByText("remote"));
    const row = screen.getByTestId("mcp-server-remote");
    expect(within(row).getByTestId("mcp-status")).toHaveTextContent("needs sign-in");
    expect(within(row).getByTestId("mcp-reason")).toHaveTextContent("mcp login remote");
    await user.click(within(row).getByTestId("sign-in-remote"));
    expect(await within(row).findByRole("alert")).toHaveTextContent(
      "refused the sign-in: access_denied",
    );
    await user.click(within(row).getByTestId("sign-in-remote"));
    expect(await within(row).findByRole("status")).toHaveTextContent(
      "Signed in (scopes: tools:read tools:call).",
    );
    expect(within(row).queryByRole("alert")).toBeNull();
    expect(fake.argsOf("mcp_sign_in")).toEqual([{ name: "remote" }, { name: "remote" }]);
    // A local server has nothing to sign in to: no button.
    expect(screen.queryByTestId("sign-in-everything")).toBeNull();
  });

  it("signs out of a signed-in remote server after confirming; it then needs sign-in", async () => {
    const SIGNED_IN: McpServerView = {
      ...EVERYTHING,
      name: "remote",
      transport: "http",
      target: "https://mcp.example.com/mcp",
      command_path: null,
      command_from_login_shell: false,
      pid: null,
      protocol_version: null,
      stderr_tail: [],
    };
    const fake = backend([EVERYTHING, SIGNED_IN]);
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByText("remote"));
    const row = screen.getByTestId("mcp-server-remote");
    expect(within(row).getByTestId("mcp-status")).toHaveTextContent("ready");
    await user.click(within(row).getByRole("button", { name: "Sign out of remote" }));
    expect(fake.argsOf("mcp_sign_out")).toEqual([]);
    expect(
      within(row).getByRole("group", { name: "Confirm: Sign out of remote" }),
    ).toHaveTextContent("Its tokens are deleted from the keyring");
    await user.click(within(row).getByRole("button", { name: "Sign out" }));
    expect(fake.argsOf("mcp_sign_out")).toEqual([{ name: "remote" }]);
    await waitFor(() =>
      expect(within(row).getByTestId("mcp-status")).toHaveTextContent("needs sign-in"),
    );
    // Nothing to sign out of any more, and a local server never has it.
    expect(within(row).queryByRole("button", { name: "Sign out of remote" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Sign out of everything" })).toBeNull();
  });

  it("deletes a server only after confirming", async () => {
    const fake = backend([EVERYTHING]);
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByText("everything"));
    await user.click(screen.getByRole("button", { name: "Delete everything" }));
    expect(fake.argsOf("mcp_remove_server")).toEqual([]);
    await user.click(screen.getByRole("button", { name: "Delete" }));
    expect(fake.argsOf("mcp_remove_server")).toEqual([{ name: "everything" }]);
  });

  it("test-runs a server's tool with typed parameters and shows what the model gets", async () => {
    const RESULT: ToolTest = {
      success: true,
      output: "Echo: hello",
      formatted: '<tool_result name="everything.echo">Echo: hello</tool_result>',
      params: { message: "hello" },
      exchange: null,
      duration_ms: 3,
    };
    const fake = backend([EVERYTHING], { mcp_test_tool: () => RESULT });
    const user = userEvent.setup();
    renderScreen();
    await user.click(await screen.findByText("everything"));
    const echo = await screen.findByTestId("mcp-tool-everything.echo");
    await user.click(within(echo).getByText("everything.echo"));
    await user.click(within(echo).getByTestId("test-everything.echo"));
    await user.type(within(echo).getByTestId("test-param-message"), "hello");
    await user.click(within(echo).getByTestId("run-test"));
    expect(await within(echo).findByTestId("test-output")).toHaveTextContent("Echo: hello");
    expect(fake.argsOf("mcp_test_tool")).toEqual([
      { name: "everything.echo", params: { message: "hello" } },
    ]);
  });
});
