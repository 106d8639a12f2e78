import { useEffect, useRef, useState } from "react";
import type { Answer } from "../../bindings";
import type { PendingPermission } from "./timeline";

/**
 * The permission dialog: exactly what will run (tool, every parameter, for HTTP tools the
 * method, URL, headers and body with secrets shown as {{NAME}}), a countdown to the timeout,
 * and Approve / Deny / Always allow. Keyboard: Enter approves, Escape denies,
 * Ctrl+Enter always allows. Several requests are answered in the order they came.
 */
export function PermissionDialog(props: {
  queue: PendingPermission[];
  timeoutSecs: number;
  onAnswer: (requestId: string, answer: Answer) => void;
}) {
  const current = props.queue[0];
  const dialog = useRef<HTMLDialogElement>(null);
  const approve = useRef<HTMLButtonElement>(null);
  const [now, setNow] = useState(() => Date.now());

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (current && !d.open) {
      d.showModal();
      approve.current?.focus();
    } else if (!current && d.open) d.close();
  }, [current]);

  useEffect(() => {
    if (!current) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [current]);

  if (!current) return <dialog ref={dialog} className="permission-dialog" />;
  const { request } = current;
  const elapsed = Math.max(0, now - current.receivedAt) / 1000;
  const left = Math.max(0, Math.ceil(props.timeoutSecs - elapsed));
  const http = request.request as null | {
    method?: string;
    url?: string;
    headers?: Record<string, string>;
    body?: unknown;
  };
  const answer = (a: Answer) => props.onAnswer(current.requestId, a);

  return (
    <dialog
      ref={dialog}
      className="permission-dialog"
      aria-labelledby="permission-title"
      data-testid="permission-dialog"
      onCancel={(e) => {
        e.preventDefault();
        answer("deny");
      }}
      onKeyDown={(e) => {
        if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          answer("approve_always");
        }
      }}
    >
      <h2 id="permission-title">
        Allow <code>{request.tool}</code> to run?
      </h2>
      <p className="muted">
        Permission level: <strong>{request.permission}</strong>
        {props.queue.length > 1 && ` · ${props.queue.length - 1} more waiting`}
        {" · "}
        <span data-testid="permission-countdown">denied automatically in {left} s</span>
      </p>
      <h3>Parameters</h3>
      <pre className="code permission-params" tabIndex={0}>
        {JSON.stringify(request.params, null, 2)}
      </pre>
      {http && (
        <>
          <h3>HTTP request that will be sent</h3>
          <pre className="code permission-http" tabIndex={0} data-testid="permission-http">
            {`${http.method ?? ""} ${http.url ?? ""}\n`}
            {Object.entries(http.headers ?? {}).map(([k, v]) => `${k}: ${v}\n`)}
            {http.body !== undefined && http.body !== null
              ? `\n${JSON.stringify(http.body, null, 2)}`
              : ""}
          </pre>
          <p className="muted small">
            Secrets are shown by name, e.g. {"{{API_KEY}}"}; their values are never displayed.
          </p>
        </>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={() => answer("deny")} data-testid="permission-deny">
          Deny <kbd>Esc</kbd>
        </button>
        <button
          type="button"
          onClick={() => answer("approve_always")}
          data-testid="permission-always"
        >
          Always allow in this conversation <kbd>Ctrl+Enter</kbd>
        </button>
        <button
          type="button"
          ref={approve}
          className="primary"
          onClick={() => answer("approve")}
          data-testid="permission-approve"
        >
          Approve <kbd>Enter</kbd>
        </button>
      </div>
    </dialog>
  );
}
