import { act, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import { App } from "./App";
import type { ConversationView, OpenedView, Status } from "./bindings";
import { storedMessage } from "./test/engineData";

const STATUS: Status = {
  app_version: "9.8.7",
  config_dir: "/home/u/.config/artifactflow",
  database: "/home/u/.local/share/artifactflow/artifactflow.db",
  schema_version: 1,
  log_dir: "/home/u/.local/share/artifactflow/logs",
  tools_loaded: 2,
  agents_loaded: 1,
  config_errors: [],
};

const CONVERSATION = {
  id: "c1",
  title: "Counter",
  agent: "lead_agent",
  updated_at: "2026-11-29T10:00:00Z",
  last_status: "completed",
  always_allowed: [],
};

/** The conversation as the engine sends it back: the model called `apps.show_counter`, whose
 * view (MCP Apps) is kept with the call. `running`: a run is still going on. */
function counterConversation(running = false): ConversationView {
  const call = { call_id: "call_1", name: "apps.show_counter", params: {} };
  return {
    summary: CONVERSATION,
    running,
    context_usage: null,
    messages: [
      storedMessage(1, "user", "Show me the counter"),
      {
        ...storedMessage(2, "assistant", "", {}, ""),
        calls: [{ ...call, error: null, status: "succeeded" }],
      },
      {
        ...storedMessage(3, "tool", ""),
        results: [
          {
            ...call,
            success: true,
            status: "succeeded",
            reason: null,
            text: "The counter is at 0.",
            artifact_ids: [],
            attachments: [],
            handover: null,
            guided: false,
            view: { server: "apps", resource_uri: "ui://counter/view" },
          },
        ],
      },
    ],
  } as unknown as ConversationView;
}

const OPENED: OpenedView = {
  url: "mcp-view://localhost/0123456789abcdef0123456789abcdef",
  server: "apps",
  resource_uri: "ui://counter/view",
  prefers_border: true,
  tool_input: {},
  tool_result: { content: [{ type: "text", text: "The counter is at 0." }] },
  latest: null,
  unavailable: null,
  calls_muted: false,
};

/** The backend of an app whose one conversation shows the counter's view; the commands asked
 * are recorded. */
function backend(conversation: ConversationView) {
  const calls: string[] = [];
  mockIPC((cmd) => {
    calls.push(cmd);
    if (cmd === "get_status" || cmd === "reload_config") return STATUS;
    if (cmd === "list_conversation_page") return { items: [CONVERSATION], total: 1 };
    if (cmd === "get_conversation") return conversation;
    if (cmd === "mcp_view_open") return OPENED;
    if (cmd === "cancel_run") return true;
    if (cmd === "list_agents")
      return [{ name: "lead_agent", description: "Lead", model: "default", internal: false }];
    if (cmd === "list_conversations" || cmd === "list_tools" || cmd === "mcp_servers") return [];
    if (cmd === "list_config_files") return [];
    if (cmd === "get_settings")
      return {
        profiles: [
          {
            name: "default",
            api: "openai",
            base_url: "http://127.0.0.1:11434/v1",
            model: "m",
            api_key: null,
            temperature: null,
            max_tokens: null,
            timeout: null,
          },
        ],
        settings: {
          web_search: { endpoint: "", api_key: null },
          web_fetch: { endpoint: "", api_key: null },
          permission_timeout_secs: 120,
        },
        secret_names: [],
        missing_secrets: [],
        config_dir: STATUS.config_dir,
      };
    throw new Error(`unexpected command ${cmd}`);
  });
  return calls;
}

describe("the chat while another screen is shown", () => {
  beforeAll(async () => {
    await Promise.all([
      import("./screens/agents/AgentsScreen"),
      import("./screens/tools/ToolsScreen"),
    ]);
  }, 120_000);

  it("keeps a conversation's live views (the same frames, not opened again) and comes back to them", async () => {
    const calls = backend(counterConversation());
    const user = userEvent.setup();
    render(<App />);
    await user.click(await screen.findByTestId("conversation-item"));
    const frame = await screen.findByTestId("mcp-view");
    expect(calls.filter((c) => c === "mcp_view_open")).toHaveLength(1);

    for (const [key, name] of [
      ["2", "Agents"],
      ["3", "Tools"],
    ] as const) {
      await user.keyboard(`{Control>}${key}{/Control}`);
      // The other screen is the one shown, its heading the page's only one, and focused.
      await waitFor(() => expect(screen.getByRole("heading", { level: 1, name })).toHaveFocus());
      expect(screen.getAllByRole("heading", { level: 1 })).toHaveLength(1);
      expect(screen.getByRole("main")).toHaveAccessibleName(name);
      // The view lives on, out of sight.
      expect(frame).toBeInTheDocument();
      expect(frame).not.toBeVisible();
      // Nothing of the chat can be reached meanwhile.
      expect(screen.queryByRole("searchbox", { name: "Search conversations" })).toBeNull();
    }

    await user.keyboard("{Control>}1{/Control}");
    await waitFor(() =>
      expect(screen.getByRole("heading", { level: 1, name: "Counter" })).toHaveFocus(),
    );
    expect(screen.getByTestId("mcp-view")).toBe(frame);
    expect(frame).toBeVisible();
    expect(calls.filter((c) => c === "mcp_view_open")).toHaveLength(1);
    expect(calls.filter((c) => c === "get_conversation")).toHaveLength(1);
  });

  it("leaves Esc to the screen shown: a run of the chat out of sight is not stopped", async () => {
    const calls = backend(counterConversation(true));
    const user = userEvent.setup();
    render(<App />);
    await user.click(await screen.findByTestId("conversation-item"));
    await screen.findByTestId("run-status");
    await user.keyboard("{Control>}2{/Control}");
    await waitFor(() =>
      expect(screen.getByRole("heading", { level: 1, name: "Agents" })).toHaveFocus(),
    );
    await user.keyboard("{Escape}");
    await act(async () => {});
    expect(calls).not.toContain("cancel_run");
    // Back in the chat, Esc stops the run as before.
    await user.keyboard("{Control>}1{/Control}");
    await screen.findByTestId("run-status");
    await user.keyboard("{Escape}");
    await waitFor(() => expect(calls).toContain("cancel_run"));
  });
});
