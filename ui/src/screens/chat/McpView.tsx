import { useContext, useEffect, useRef, useState } from "react";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { commands, type JsonValue, type OpenedView } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { useArming } from "../../shell/arming";
import { fromView, ViewActionsContext } from "./viewActions";

/** Longest message a view may propose, in characters. */
const MAX_MESSAGE_CHARS = 8_000;

/** Tallest a view grows to in its card before it scrolls, in pixels. */
const MAX_HEIGHT = 640;

/** After this many refusals in a row, a view's further requests are refused without asking. */
const MAX_REFUSALS = 3;

/** What the frame may do: run its scripts. Not: the app's origin, forms, popups, top
 * navigation, modals, downloads. */
export const VIEW_SANDBOX = "allow-scripts";

/** Something the view asks that the person decides in the card. */
type Ask = { kind: "message"; text: string } | { kind: "link"; url: string };

/** The page's theme, as the extension's host context names it. */
function pageTheme(): "light" | "dark" {
  return document.documentElement.dataset.theme === "dark" ? "dark" : "light";
}

/** `text` without the characters a person cannot see but a model reads: format characters
 * (bidi overrides, zero-width, tag characters), private-use and unassigned ones, controls
 * other than line breaks and tabs, variation selectors, and blank "letters" (Hangul fillers,
 * the blank Braille pattern). */
export function visibleText(text: string): string {
  return text.replace(
    /[\p{Cf}\p{Co}\p{Cn}\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u115F\u1160\u3164\uFFA0\u2800]|(?![\n\t])\p{Cc}/gu,
    "",
  );
}

/**
 * An MCP server's interactive view of a call (MCP Apps), in a frame sandboxed without the
 * app's origin (no IPC, no storage, no parent to read), without forms, popups or top
 * navigation, under the policy its resource declares (served once by the `mcp-view` scheme:
 * a second load of the frame is a page the view went to, and is replaced by a notice). The
 * extension's own host bridge speaks to it over postMessage: the call's input and result go to
 * it once it is ready (for a view drawn again, then the latest result it drew from its own
 * calls, which the card says), its size sizes the frame, the theme follows the app, and its
 * tool calls go through the app's gate (the permission dialog names the view; every call is
 * asked for, and after three refusals in a row the engine refuses the view's calls without
 * asking: the card says so, with a button that lets the view ask again). A message it wants to send to the
 * agent, or a link it wants opened, is shown in the card and happens only if the person agrees
 * (the message then marked as the view's). Nothing else it asks is granted.
 */
export function McpView({ callId, tool }: { callId: string; tool: string }) {
  const [view, setView] = useState<OpenedView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [height, setHeight] = useState(120);
  /** The view has its call's input and result (what the benchmark and the tests wait for). */
  const [ready, setReady] = useState(false);
  /** The frame loaded something after its view: it is not shown any more. */
  const [left, setLeft] = useState(false);
  const loads = useRef(0);
  const frame = useRef<HTMLIFrameElement>(null);
  // The chat's actions as they are now (the bridge lives as long as the frame's view).
  const actions = useContext(ViewActionsContext);
  const latest = useRef(actions);
  useEffect(() => {
    latest.current = actions;
  }, [actions]);
  const [ask, setAsk] = useState<Ask | null>(null);
  /** How the open question is answered (one at a time). */
  const answer = useRef<((ok: boolean) => void) | null>(null);
  const refusals = useRef(0);
  const [notice, setNotice] = useState<string | null>(null);
  /** The engine refuses the view's tool calls without asking (three refused in a row). */
  const [callsMuted, setCallsMuted] = useState(false);
  const asking = useRef<HTMLDivElement>(null);
  /** Each question: its answer buttons wait a moment (a click meant for the view, which may
   * have moved them under the pointer, does not answer it). */
  const [askId, setAskId] = useState(0);
  const { armed, disarm } = useArming(ask ? String(askId) : null);
  // A question appears where the person sees it, and takes the keyboard's focus (not on its
  // buttons: a key pressed for something else must not answer it).
  useEffect(() => {
    if (!ask) return;
    asking.current?.scrollIntoView?.({ block: "nearest" });
    asking.current?.focus();
  }, [ask]);

  useEffect(() => {
    let live = true;
    // Marks of the view's way to the screen (the benchmark reads them): opening it, the frame
    // loaded, the view introduced itself, the call's input and result delivered.
    performance.mark(`mcp-view:${callId}:open`);
    call(commands.mcpViewOpen(callId)).then(
      (v) => {
        performance.mark(`mcp-view:${callId}:opened`);
        if (!live) return;
        setView(v);
        setCallsMuted(v.calls_muted);
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
    if (!view || !url || !target || left) return;
    const bridge = new AppBridge(
      null,
      { name: "ArtifactFlow", version: "1" },
      latest.current
        ? { serverTools: {}, openLinks: {}, message: { text: {} } }
        : { serverTools: {} },
      { hostContext: { theme: pageTheme(), displayMode: "inline" } },
    );
    /** Ask the person `next`; false without asking when a question is open already or the
     * view was refused too often. */
    const askPerson = (next: Ask) => {
      if (answer.current || refusals.current >= MAX_REFUSALS) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        answer.current = (ok) => {
          answer.current = null;
          refusals.current = ok ? 0 : refusals.current + 1;
          if (refusals.current >= MAX_REFUSALS) {
            setNotice("This view's requests are refused from now on (it was refused three times).");
          }
          setAsk(null);
          resolve(ok);
        };
        setAskId((n) => n + 1);
        setAsk(next);
      });
    };
    // The view's calls under way: withdrawn when the view goes (no dialog left behind).
    const pending = new Set<string>();
    bridge.oncalltool = async (params) => {
      const request = crypto.randomUUID();
      pending.add(request);
      const result = await call(
        commands.mcpViewCall(
          callId,
          params.name,
          (params.arguments ?? {}) as Record<string, JsonValue>,
          request,
        ),
      )
        .then((answer) => {
          if (answer.muted) setCallsMuted(true);
          return answer.result;
        })
        .catch((e: unknown) => ({
          content: [{ type: "text", text: e instanceof Error ? e.message : String(e) }],
          isError: true,
        }))
        .finally(() => pending.delete(request));
      return result as Awaited<ReturnType<NonNullable<AppBridge["oncalltool"]>>>;
    };
    bridge.onmessage = async ({ content }) => {
      const text = visibleText(
        content
          .map((c) => (c.type === "text" ? c.text : ""))
          .join("\n")
          .trim(),
      ).slice(0, MAX_MESSAGE_CHARS);
      if (!latest.current || !text) return { isError: true };
      const ok = await askPerson({ kind: "message", text });
      const send = latest.current?.send;
      if (!ok || !send) return { isError: true };
      return (await send(fromView(view.server, text))) ? {} : { isError: true };
    };
    bridge.onopenlink = async ({ url: link }) => {
      // Only a link shown as it is opened: http(s), nothing invisible in it.
      if (!latest.current || !/^https?:\/\//i.test(link) || visibleText(link) !== link) {
        return { isError: true };
      }
      const ok = await askPerson({ kind: "link", url: link });
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
      // A view drawn again (its conversation shown again, the window reloaded) has no memory
      // of its own: after its call's result it gets the latest it drew from its own calls, so
      // it shows what it showed before.
      const results = [view.tool_result, view.latest?.result].filter((r) => r != null);
      const sent = results.reduce<Promise<void>>(
        (before, r) =>
          before.then(() => bridge.sendToolResult(r as Parameters<AppBridge["sendToolResult"]>[0])),
        Promise.resolve(),
      );
      void Promise.all([input, sent]).then(() => {
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
      // An open question goes with the view: refused; its calls under way are withdrawn.
      answer.current?.(false);
      for (const request of pending) void commands.mcpViewCancel(request);
      void bridge.close();
    };
  }, [view, url, callId, left]);

  const unmute = () => {
    call(commands.mcpViewUnmute(callId)).then(
      () => setCallsMuted(false),
      (e: unknown) => setNotice(errorMessage(e)),
    );
  };

  const onLoad = () => {
    loads.current += 1;
    performance.mark(`mcp-view:${callId}:loaded`);
    // The address serves the view once: anything loaded after it is a page the view went to.
    if (loads.current > 1) setLeft(true);
  };

  if (error) {
    return (
      <p className="mcp-view-note muted small" data-testid="mcp-view-error">
        The view of this call could not be opened: {error}
      </p>
    );
  }
  if (!view) return null;
  if (!url || left) {
    return (
      <p className="mcp-view-note muted small" data-testid="mcp-view-unavailable">
        {left
          ? `The view of ${view.server} tried to show another page; it is closed.`
          : (view.unavailable ?? "View no longer available.")}
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
        sandbox={VIEW_SANDBOX}
        referrerPolicy="no-referrer"
        allow=""
        style={{ height }}
        onLoad={onLoad}
      />
      {ask && (
        <div
          ref={asking}
          tabIndex={-1}
          className="mcp-view-ask"
          role="group"
          aria-label={`The view of ${view.server} asks`}
          data-testid="mcp-view-ask"
          data-armed={armed}
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
              aria-disabled={!armed}
              onClick={() => (armed ? answer.current?.(true) : disarm())}
            >
              {ask.kind === "message" ? "Send" : "Open"}
            </button>
            <button
              type="button"
              data-testid="mcp-view-ask-no"
              onClick={() => answer.current?.(false)}
            >
              {ask.kind === "message" ? "Don't send" : "Don't open"}
            </button>
          </div>
        </div>
      )}
      {callsMuted && (
        <div className="mcp-view-note muted small" role="status" data-testid="mcp-view-calls-muted">
          <span>
            Tool calls from this view are blocked: you refused three in a row. They are refused
            without asking.
          </span>{" "}
          <button
            type="button"
            className="link-button"
            data-testid="mcp-view-unmute"
            onClick={unmute}
          >
            Let it ask again
          </button>
        </div>
      )}
      {ready && view.latest && (
        <p className="mcp-view-note muted small" data-testid="mcp-view-redrawn">
          Redrawn with its latest data: the result of its last call ({view.latest.tool}).
        </p>
      )}
      {notice && (
        <p className="mcp-view-note muted small" role="status" data-testid="mcp-view-notice">
          {notice}
        </p>
      )}
    </div>
  );
}
