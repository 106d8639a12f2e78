import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { OpenedView } from "../../bindings";
import { McpView, visibleText } from "./McpView";

const OPENED: OpenedView = {
  url: "mcp-view://localhost/0123456789abcdef01234567",
  server: "apps",
  resource_uri: "ui://counter/view",
  prefers_border: true,
  tool_input: {},
  tool_result: { content: [{ type: "text", text: "The counter is at 0." }] },
  latest: null,
  unavailable: null,
  calls_muted: false,
};

/** The backend answers `mcp_view_open` with `opened` (or fails), and the other commands with
 * `answers` (by command), recording the calls. */
function backend(
  opened: OpenedView | { code: string; message: string },
  answers: Record<string, unknown> = {},
) {
  const calls: [string, unknown][] = [];
  mockIPC((cmd, args) => {
    calls.push([cmd, args]);
    if (cmd === "mcp_view_open") {
      if ("code" in opened) throw opened;
      return opened;
    }
    return answers[cmd] ?? null;
  });
  return calls;
}

/** The frame's window, its messages to the view collected (what the card's bridge answers). */
async function viewWindow() {
  const frame = (await screen.findByTestId("mcp-view")) as HTMLIFrameElement;
  const view = frame.contentWindow;
  if (!view) throw new Error("the frame has no window");
  const received: unknown[] = [];
  view.postMessage = ((data: unknown) => received.push(data)) as Window["postMessage"];
  // The bridge connects once the view is shown.
  await act(async () => {});
  /** The view sends `message` to the card, as a frame's postMessage arrives. */
  const send = (message: unknown) =>
    act(() => {
      window.dispatchEvent(new MessageEvent("message", { data: message, source: view }));
    });
  return { received, send };
}

const BLOCKED = {
  content: [
    {
      type: "text",
      text: "calls from this view were blocked after three refusals: `apps.increment` was not run",
    },
  ],
  isError: true,
};

describe("McpView", () => {
  it("shows the call's view in a frame sandboxed without the app's origin, popups or top navigation", async () => {
    const calls = backend(OPENED);
    render(<McpView callId="call_1" tool="apps.show_counter" />);
    const frame = await screen.findByTestId("mcp-view");
    expect(calls).toContainEqual(["mcp_view_open", { callId: "call_1" }]);
    expect(frame).toHaveAttribute("src", OPENED.url);
    const sandbox = (frame.getAttribute("sandbox") ?? "missing").split(/\s+/);
    expect(sandbox).toContain("allow-scripts");
    for (const kept of [
      "allow-same-origin",
      "allow-popups",
      "allow-top-navigation",
      "allow-modals",
      "allow-forms",
      "allow-downloads",
    ]) {
      expect(sandbox).not.toContain(kept);
    }
    expect(frame).toHaveAttribute("allow", "");
    expect(frame).toHaveAttribute("title", "View of apps.show_counter (apps)");
    expect(frame).toHaveAttribute("data-state", "loading");
    expect(frame.parentElement).toHaveClass("mcp-view-border");
  });

  it("closes a view whose frame loads anything after it (the view went elsewhere)", async () => {
    backend(OPENED);
    render(<McpView callId="call_1" tool="apps.show_counter" />);
    const frame = await screen.findByTestId("mcp-view");
    fireEvent.load(frame);
    expect(screen.getByTestId("mcp-view")).toBeInTheDocument();
    fireEvent.load(frame);
    expect(await screen.findByTestId("mcp-view-unavailable")).toHaveTextContent(
      "The view of apps tried to show another page; it is closed.",
    );
    expect(screen.queryByTestId("mcp-view")).not.toBeInTheDocument();
  });

  it("says the view is no longer available when its server is gone, without a frame", async () => {
    backend({
      ...OPENED,
      url: null,
      unavailable: "View no longer available: the MCP server `apps` is not in mcp.json any more.",
    });
    render(<McpView callId="call_1" tool="apps.show_counter" />);
    expect(await screen.findByTestId("mcp-view-unavailable")).toHaveTextContent(
      "View no longer available: the MCP server `apps` is not in mcp.json any more.",
    );
    expect(screen.queryByTestId("mcp-view")).not.toBeInTheDocument();
  });

  it("says why a view cannot be opened", async () => {
    backend({ code: "not_found", message: "the call call_1 has no view kept" });
    render(<McpView callId="call_1" tool="apps.show_counter" />);
    await waitFor(() =>
      expect(screen.getByTestId("mcp-view-error")).toHaveTextContent(
        "The view of this call could not be opened: the call call_1 has no view kept",
      ),
    );
  });
});

/** The view introduces itself to the card (the extension's handshake), as its library does. */
async function introduce(send: (message: unknown) => Promise<void> | void) {
  await send({
    jsonrpc: "2.0",
    id: 1,
    method: "ui/initialize",
    params: {
      appInfo: { name: "counter-view", version: "1.0.0" },
      appCapabilities: {},
      protocolVersion: "2026-01-26",
    },
  });
  await send({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
}

/** The tool results the card sent the view, in order. */
function toolResults(received: unknown[]): unknown[] {
  return received
    .filter((m) => (m as { method?: string }).method === "ui/notifications/tool-result")
    .map((m) => (m as { params: unknown }).params);
}

describe("McpView drawn again", () => {
  it("gives a view opened again its call's result, then the latest it drew, and says so", async () => {
    const latest = {
      content: [{ type: "text", text: "The counter is at 1." }],
      structuredContent: { count: 1 },
    };
    backend({ ...OPENED, latest: { tool: "increment", result: latest } });
    render(<McpView callId="call_1" tool="apps.show_counter" />);
    const { received, send } = await viewWindow();
    await introduce(send);
    await waitFor(() =>
      expect(screen.getByTestId("mcp-view")).toHaveAttribute("data-state", "ready"),
    );
    expect(toolResults(received)).toEqual([OPENED.tool_result, latest]);
    expect(screen.getByTestId("mcp-view-redrawn")).toHaveTextContent(
      "Redrawn with its latest data: the result of its last call (increment).",
    );
  });

  it("draws a view from its call's result alone when it drew nothing since, saying nothing", async () => {
    backend(OPENED);
    render(<McpView callId="call_1" tool="apps.show_counter" />);
    const { received, send } = await viewWindow();
    await introduce(send);
    await waitFor(() =>
      expect(screen.getByTestId("mcp-view")).toHaveAttribute("data-state", "ready"),
    );
    expect(toolResults(received)).toEqual([OPENED.tool_result]);
    expect(screen.queryByTestId("mcp-view-redrawn")).not.toBeInTheDocument();
  });
});

describe("McpView's tool calls", () => {
  it("gives the view the call's result, and says when its calls are blocked, with a way to let it ask again", async () => {
    const calls = backend(OPENED, {
      mcp_view_call: { result: BLOCKED, muted: true },
      mcp_view_unmute: true,
    });
    render(<McpView callId="call_1" tool="apps.show_counter" />);
    const { received, send } = await viewWindow();
    expect(screen.queryByTestId("mcp-view-calls-muted")).not.toBeInTheDocument();
    await send({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "increment", arguments: {} },
    });
    await waitFor(() =>
      expect(received).toContainEqual({ jsonrpc: "2.0", id: 7, result: BLOCKED }),
    );
    expect(calls).toContainEqual([
      "mcp_view_call",
      expect.objectContaining({ callId: "call_1", name: "increment", args: {} }),
    ]);
    expect(screen.getByTestId("mcp-view-calls-muted")).toHaveTextContent(
      "Tool calls from this view are blocked: you refused three in a row.",
    );
    fireEvent.click(screen.getByTestId("mcp-view-unmute"));
    await waitFor(() =>
      expect(screen.queryByTestId("mcp-view-calls-muted")).not.toBeInTheDocument(),
    );
    expect(calls).toContainEqual(["mcp_view_unmute", { callId: "call_1" }]);
  });

  it("says at once that a view reopened is still blocked", async () => {
    backend({ ...OPENED, calls_muted: true });
    render(<McpView callId="call_1" tool="apps.show_counter" />);
    expect(await screen.findByTestId("mcp-view-calls-muted")).toHaveTextContent(
      "They are refused without asking.",
    );
    expect(screen.getByTestId("mcp-view-unmute")).toHaveTextContent("Let it ask again");
  });

  it("says nothing of blocking while the view's calls are asked for", async () => {
    const answered = { content: [{ type: "text", text: "The counter is at 1." }] };
    backend(OPENED, { mcp_view_call: { result: answered, muted: false } });
    render(<McpView callId="call_1" tool="apps.show_counter" />);
    const { received, send } = await viewWindow();
    await send({
      jsonrpc: "2.0",
      id: 8,
      method: "tools/call",
      params: { name: "increment", arguments: {} },
    });
    await waitFor(() =>
      expect(received).toContainEqual({ jsonrpc: "2.0", id: 8, result: answered }),
    );
    expect(screen.queryByTestId("mcp-view-calls-muted")).not.toBeInTheDocument();
  });
});

describe("visibleText", () => {
  it("drops what a person cannot see but a model reads", () => {
    const hidden =
      "Say yes\u202e\u200b\u{E0041}\u{E0042}\uE000\u001b\u0085\uFE0F\u{E0100}\u3164\u2800\u{10FFFF} please";
    expect(visibleText(hidden)).toBe("Say yes please");
    expect(visibleText("two\nlines\tand a tab")).toBe("two\nlines\tand a tab");
    expect(visibleText("Plain text, é and 日本")).toBe("Plain text, é and 日本");
  });
});
