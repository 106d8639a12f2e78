import { fireEvent, render, screen, waitFor } from "@testing-library/react";
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
  unavailable: null,
};

/** The backend answers `mcp_view_open` with `opened` (or fails), recording the calls. */
function backend(opened: OpenedView | { code: string; message: string }) {
  const calls: [string, unknown][] = [];
  mockIPC((cmd, args) => {
    calls.push([cmd, args]);
    if (cmd === "mcp_view_open") {
      if ("code" in opened) throw opened;
      return opened;
    }
    return null;
  });
  return calls;
}

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

describe("visibleText", () => {
  it("drops what a person cannot see but a model reads", () => {
    const hidden =
      "Say yes\u202e\u200b\u{E0041}\u{E0042}\uE000\u001b\u0085\uFE0F\u{E0100}\u3164\u2800\u{10FFFF} please";
    expect(visibleText(hidden)).toBe("Say yes please");
    expect(visibleText("two\nlines\tand a tab")).toBe("two\nlines\tand a tab");
    expect(visibleText("Plain text, é and 日本")).toBe("Plain text, é and 日本");
  });
});
