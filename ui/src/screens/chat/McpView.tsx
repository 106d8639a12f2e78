import { useContext, useEffect, useRef, useState } from "react";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { commands, type JsonValue, type OpenedView } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { fromView, ViewActionsContext } from "./viewActions";

/** Longest message a view may propose, in characters. */
const MAX_MESSAGE_CHARS = 8_000;

/** Something the view asks that the person decides in the card. */
type Ask =
  | { kind: "message"; text: string; answer: (ok: boolean) => void }
  | { kind: "link"; url: string; answer: (ok: boolean) => void };

/** Tallest a view grows to in its card before it scrolls, in pixels. */
const MAX_HEIGHT = 640;

/** The page's theme, as the extension's host context names it. */
function pageTheme(): "light" | "dark" {
  return document.documentElement.dataset.theme === "dark" ? "dark" : "light";
}

/**
 * An MCP server's interactive view of a call (MCP Apps), in a frame sandboxed without the
 * app's origin (no IPC, no storage, no parent to read), without popups or top navigation,
 * under the policy its resource declares (served by the `mcp-view` scheme). The extension's
 * own host bridge speaks to it over postMessage: the call's input and result go to it once it
 * is ready, its size sizes the frame, the theme follows the app, and its tool calls go through
 * the app's gate (the permission dialog names the view). A message it wants to send to the
 * agent, or a link it wants opened, is shown in the card and happens only if the person
 * agrees (the message then marked as the view's). Nothing else it asks is granted.
 */
export function McpView({ callId, tool }: { callId: string; tool: string }) {
  const [view, setView] = useState<OpenedView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [height, setHeight] = useState(120);
  /** The view has its call's input and result (what the benchmark and the tests wait for). */
  const [ready, setReady] = useState(false);
  const frame = useRef<HTMLIFrameElement>(null);
  // The chat's actions as they are now (the bridge lives as long as the frame's view).
  const actions = useContext(ViewActionsContext);
  const latest = useRef(actions);
  useEffect(() => {
    latest.current = actions;
  }, [actions]);
  const [ask, setAsk] = useState<Ask | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    // Marks of the view's way to the screen (the benchmark reads them): opening it, the frame
    // loaded, the view introduced itself, the call's input and result delivered.
    performance.mark(`mcp-view:${callId}:open`);
    call(commands.mcpViewOpen(callId)).then(
      (v) => {
        performance.mark(`mcp-view:${callId}:opened`);
        if (live) setView(v);
      },
      (e: unknown) => live && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [callId]);

  const url = view?.url ?? null;
  useEffect(() => {
    const target = frame.current?.contentWindow;
    if (!view || !url || !target) return;
    const bridge = new AppBridge(
      null,
      { name: "ArtifactFlow", version: "1" },
      latest.current
        ? { serverTools: {}, openLinks: {}, message: { text: {} } }
        : { serverTools: {} },
      { hostContext: { theme: pageTheme(), displayMode: "inline" } },
    );
    bridge.oncalltool = async (params) => {
      const result = await call(
        commands.mcpViewCall(
          callId,
          params.name,
          (params.arguments ?? {}) as Record<string, JsonValue>,
        ),
      ).catch((e: unknown) => ({
        content: [{ type: "text", text: e instanceof Error ? e.message : String(e) }],
        isError: true,
      }));
      return result as Awaited<ReturnType<NonNullable<AppBridge["oncalltool"]>>>;
    };
    // One question at a time: a second request while one is open is refused.
    const askPerson = (next: (answer: (ok: boolean) => void) => Ask) =>
      new Promise<boolean>((resolve) => {
        setAsk((open) => {
          if (open) {
            resolve(false);
            return open;
          }
          return next((ok) => {
            setAsk(null);
            resolve(ok);
          });
        });
      });
    bridge.onmessage = async ({ content }) => {
      const text = content
        .map((c) => (c.type === "text" ? c.text : ""))
        .join("\n")
        .trim()
        .slice(0, MAX_MESSAGE_CHARS);
      if (!latest.current || !text) return { isError: true };
      const ok = await askPerson((answer) => ({ kind: "message", text, answer }));
      const send = latest.current?.send;
      if (!ok || !send) return { isError: true };
      return (await send(fromView(view.server, text))) ? {} : { isError: true };
    };
    bridge.onopenlink = async ({ url: link }) => {
      if (!latest.current || !/^https?:\/\//i.test(link)) return { isError: true };
      const ok = await askPerson((answer) => ({ kind: "link", url: link, answer }));
      if (!ok) return { isError: true };
      try {
        await call(commands.openExternal(link));
        return {};
      } catch (e) {
        setNotice(errorMessage(e));
        return { isError: true };
      }
    };
    bridge.onsizechange = ({ height: h }) => {
      if (typeof h === "number" && h > 0) setHeight(Math.min(Math.ceil(h), MAX_HEIGHT));
    };
    bridge.oninitialized = () => {
      performance.mark(`mcp-view:${callId}:initialized`);
      const input = bridge.sendToolInput({
        arguments: (view.tool_input ?? {}) as Record<string, unknown>,
      });
      const result = view.tool_result
        ? bridge.sendToolResult(view.tool_result as Parameters<AppBridge["sendToolResult"]>[0])
        : Promise.resolve();
      void Promise.all([input, result]).then(() => {
        performance.mark(`mcp-view:${callId}:ready`);
        setReady(true);
      });
    };
    const themed = new MutationObserver(() => {
      bridge.setHostContext({ theme: pageTheme(), displayMode: "inline" });
    });
    themed.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    // Only messages from this frame's window reach the bridge; it answers that window only.
    void bridge.connect(new PostMessageTransport(target, target));
    return () => {
      themed.disconnect();
      void bridge.close();
    };
  }, [view, url, callId]);

  if (error) {
    return (
      <p className="mcp-view-note muted small" data-testid="mcp-view-error">
        The view of this call could not be opened: {error}
      </p>
    );
  }
  if (!view) return null;
  if (!url) {
    return (
      <p className="mcp-view-note muted small" data-testid="mcp-view-unavailable">
        {view.unavailable ?? "View no longer available."}
      </p>
    );
  }
  return (
    <div className={`mcp-view${view.prefers_border ? " mcp-view-border" : ""}`}>
      <iframe
        ref={frame}
        src={url}
        title={`View of ${tool} (${view.server})`}
        data-testid="mcp-view"
        data-server={view.server}
        data-state={ready ? "ready" : "loading"}
        sandbox="allow-scripts allow-forms"
        referrerPolicy="no-referrer"
        allow=""
        style={{ height }}
        onLoad={() => performance.mark(`mcp-view:${callId}:loaded`)}
      />
      {ask && (
        <div
          className="mcp-view-ask"
          role="group"
          aria-label={`The view of ${view.server} asks`}
          data-testid="mcp-view-ask"
        >
          {ask.kind === "message" ? (
            <>
              <p>
                The view of <strong>{view.server}</strong> wants to send this message to the agent:
              </p>
              <blockquote data-testid="mcp-view-ask-text">{ask.text}</blockquote>
            </>
          ) : (
            <p>
              The view of <strong>{view.server}</strong> wants to open{" "}
              <code data-testid="mcp-view-ask-text">{ask.url}</code> in your browser.
            </p>
          )}
          <div className="button-row">
            <button
              type="button"
              className="primary"
              data-testid="mcp-view-ask-yes"
              onClick={() => ask.answer(true)}
            >
              {ask.kind === "message" ? "Send" : "Open"}
            </button>
            <button type="button" data-testid="mcp-view-ask-no" onClick={() => ask.answer(false)}>
              {ask.kind === "message" ? "Don't send" : "Don't open"}
            </button>
          </div>
        </div>
      )}
      {notice && (
        <p className="mcp-view-note muted small" role="status">
          {notice}
        </p>
      )}
    </div>
  );
}
