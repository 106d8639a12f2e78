import { useCallback, useEffect, useRef, useState } from "react";
import type { Answer } from "../bindings";
import { Modal } from "../components/Modal";
import type { PendingPermission } from "../screens/chat/timeline";

/**
 * How long Approve and Always allow stay disarmed once a request is shown, and after every
 * key press or click while disarmed (as browsers do for install prompts): Enter typed into the
 * composer, a double click or a held key meant for something else cannot approve a request
 * nobody has read. Each new request in the queue disarms again.
 */
export const ARM_DELAY_MS = 1000;

/** The HTTP part of a request preview (see the engine's `HttpTool::request_preview`). */
interface HttpPreview {
  method?: string;
  url?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** `scheme://host:port` of the filled endpoint. */
  destination?: string | null;
  /** Why the destination is unknown, e.g. "destination unknown: secret API_BASE is not set". */
  destination_error?: string | null;
  /** Names of the secrets the call uses. */
  secrets?: string[];
}

/** The MCP part of a request preview (see the engine's `McpTool::request_preview`). */
interface McpPreview {
  mcp_server: string;
  /** The server's own name for the tool. */
  tool?: string;
  /** The JSON arguments that will be sent. */
  arguments?: unknown;
  read_only_hint?: boolean | null;
  destructive_hint?: boolean | null;
}

const isMcpPreview = (p: unknown): p is McpPreview =>
  typeof p === "object" && p !== null && typeof (p as McpPreview).mcp_server === "string";

/** Elements where Enter or Space already mean something (they click or type): the dialog's
 * own shortcuts leave those keys to them. */
const NATIVE_KEYS = "button, a[href], input, textarea, select, summary";

/**
 * The permission dialog: who asks (conversation and agent chain), exactly what will run
 * (tool, every parameter, for HTTP tools the method, URL, headers and body with secrets shown
 * as {{NAME}}, the real destination and the secret names), a countdown to the timeout, and
 * Approve / Deny / Always allow. Keyboard: Enter approves, Escape denies, Ctrl+Enter always
 * allows; approving works only once armed ({@link ARM_DELAY_MS}). Several requests are
 * answered in the order they came.
 */
export function PermissionDialog(props: {
  queue: PendingPermission[];
  onAnswer: (requestId: string, answer: Answer) => void;
}) {
  const current = props.queue[0];
  const title = useRef<HTMLHeadingElement>(null);
  const [now, setNow] = useState(() => Date.now());
  const { armed, disarm } = useArming(current?.requestId ?? null);

  // Each request starts with the focus on its title: nothing a keystroke could press.
  const requestId = current?.requestId;
  useEffect(() => {
    if (requestId) title.current?.focus();
  }, [requestId]);

  useEffect(() => {
    if (!current) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [current]);

  const { onAnswer } = props;
  const answer = useCallback(
    (a: Answer) => {
      if (!current) return;
      if (a !== "deny" && !armed) {
        disarm();
        return;
      }
      onAnswer(current.requestId, a);
    },
    [current, armed, disarm, onAnswer],
  );

  // Keys while the dialog shows (it is modal: every key lands here).
  useEffect(() => {
    if (!current) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Enter") {
        if (!armed) disarm();
        return;
      }
      const target = e.target instanceof Element ? e.target : null;
      if (target?.closest(NATIVE_KEYS) && !(e.ctrlKey || e.metaKey)) {
        // A focused button clicks itself (its click is checked too).
        if (!armed) disarm();
        return;
      }
      e.preventDefault();
      // A held key repeats: never an answer to a request that appeared meanwhile.
      if (e.repeat) {
        if (!armed) disarm();
        return;
      }
      answer(e.ctrlKey || e.metaKey ? "approve_always" : "approve");
    };
    document.addEventListener("keydown", onKey, true);
    return () => document.removeEventListener("keydown", onKey, true);
  }, [current, armed, disarm, answer]);

  if (!current) return <Modal open={false} className="permission-dialog" />;
  const { request } = current;
  const left =
    current.deadlineMs === null ? null : Math.max(0, Math.ceil((current.deadlineMs - now) / 1000));
  const mcp = isMcpPreview(request.request) ? request.request : null;
  const http = mcp ? null : (request.request as null | HttpPreview);

  return (
    <Modal
      open
      className="permission-dialog"
      aria-labelledby="permission-title"
      data-testid="permission-dialog"
      data-armed={armed ? "true" : "false"}
      onEscape={() => answer("deny")}
      onPointerDown={() => {
        if (!armed) disarm();
      }}
    >
      <h2 id="permission-title" tabIndex={-1} ref={title}>
        Allow <code>{request.tool}</code> to run?
      </h2>
      <p data-testid="permission-asker">
        {current.agentChain.length > 0 ? (
          <>
            Asked by <strong>{current.agentChain.join(" → ")}</strong>
          </>
        ) : (
          <>Asked by a direct call (no agent)</>
        )}{" "}
        in <strong>{current.conversationTitle || "an untitled conversation"}</strong>
      </p>
      <p className="muted">
        Permission level: <strong>{request.permission}</strong>
        {props.queue.length > 1 && ` · ${props.queue.length - 1} more waiting`}
        {left !== null && (
          <>
            {" · "}
            <span data-testid="permission-countdown">denied automatically in {left} s</span>
          </>
        )}
      </p>
      <h3>Parameters</h3>
      <pre className="code permission-params" tabIndex={0}>
        {JSON.stringify(request.params, null, 2)}
      </pre>
      {http && <HttpRequest http={http} />}
      {mcp && <McpRequest mcp={mcp} />}
      <div className="dialog-actions">
        <button type="button" onClick={() => answer("deny")} data-testid="permission-deny">
          Deny <kbd>Esc</kbd>
        </button>
        <button
          type="button"
          onClick={() => answer("approve_always")}
          disabled={!armed}
          data-testid="permission-always"
        >
          Always allow in this conversation <kbd>Ctrl+Enter</kbd>
        </button>
        <button
          type="button"
          className="primary"
          onClick={() => answer("approve")}
          disabled={!armed}
          data-testid="permission-approve"
        >
          Approve <kbd>Enter</kbd>
        </button>
      </div>
    </Modal>
  );
}

/** The HTTP request that will be sent, where it goes, and the secrets it uses (by name). */
function HttpRequest({ http }: { http: HttpPreview }) {
  return (
    <>
      <h3>HTTP request that will be sent</h3>
      <p data-testid="permission-destination">
        {http.destination ? (
          <>
            Goes to <strong>{http.destination}</strong>
          </>
        ) : (
          <span className="status-warning">{http.destination_error ?? "destination unknown"}</span>
        )}
      </p>
      <pre className="code permission-http" tabIndex={0} data-testid="permission-http">
        {`${http.method ?? ""} ${http.url ?? ""}\n`}
        {Object.entries(http.headers ?? {}).map(([k, v]) => `${k}: ${v}\n`)}
        {http.body !== undefined && http.body !== null
          ? `\n${JSON.stringify(http.body, null, 2)}`
          : ""}
      </pre>
      <p className="muted small" data-testid="permission-secrets">
        {http.secrets && http.secrets.length > 0
          ? `Uses the secrets ${http.secrets.join(", ")} (shown by name; their values are never displayed).`
          : "Uses no secrets."}
      </p>
    </>
  );
}

/** What goes to an MCP server: which server and tool, the JSON arguments, and the server's own
 * hints, shown as what they are (claims of the server) and never a reason to skip this dialog. */
function McpRequest({ mcp }: { mcp: McpPreview }) {
  return (
    <>
      <h3>Sent to the MCP server</h3>
      <p data-testid="permission-mcp">
        Server <strong>{mcp.mcp_server}</strong>, tool <code>{mcp.tool ?? ""}</code>{" "}
        {mcp.read_only_hint && <span className="badge">says: read-only</span>}{" "}
        {mcp.destructive_hint && <span className="badge badge-failed">says: destructive</span>}
      </p>
      {mcp.arguments !== undefined && (
        <pre className="code" tabIndex={0} aria-label="Arguments">
          {JSON.stringify(mcp.arguments, null, 2)}
        </pre>
      )}
      {(mcp.read_only_hint || mcp.destructive_hint) && (
        <p className="muted small">The server describes its own tool; only you decide.</p>
      )}
    </>
  );
}

/**
 * Whether approving is armed for request `requestId`: false for {@link ARM_DELAY_MS} after
 * the request appears, and again after each `disarm()` (a key press or click while disarmed).
 */
function useArming(requestId: string | null) {
  const [armedFor, setArmedFor] = useState<string | null>(null);
  const [restarts, setRestarts] = useState(0);
  useEffect(() => {
    if (!requestId) return;
    const timer = setTimeout(() => setArmedFor(requestId), ARM_DELAY_MS);
    return () => clearTimeout(timer);
  }, [requestId, restarts]);
  const disarm = useCallback(() => setRestarts((n) => n + 1), []);
  return { armed: requestId !== null && armedFor === requestId, disarm };
}
