import { useCallback, useEffect, useState } from "react";
import {
  commands,
  type AppError,
  type McpServerView,
  type ServerStatus,
  type McpToolInfo,
  type Result,
} from "../../../bindings";
import { attempt, call, errorMessage } from "../../../ipc/call";
import { ConfirmButton } from "../../../components/ConfirmButton";
import { ParamTable } from "../ParamTable";
import { specTestParams, TestPanel } from "../TestPanel";
import type { StatusChange } from "./useMcpServers";

/** The newest MCP version the app speaks. */
const NEWEST_PROTOCOL = "2026-07-28";

/** What the protocol version a server speaks means for the user. */
function protocolNote(version: string): string {
  return version >= NEWEST_PROTOCOL
    ? `Speaks MCP ${version}, the newest version.`
    : `Speaks MCP ${version}, an older version (it does not know ${NEWEST_PROTOCOL}); the app speaks it too.`;
}

/** Badge text and style of each status. */
function statusBadge(status: ServerStatus): { text: string; className: string } {
  // Exhaustive: a new state is a type error here.
  switch (status.state) {
    case "starting":
      return { text: "starting", className: "badge-running" };
    case "ready":
      return {
        text: `ready · ${status.tool_count} ${status.tool_count === 1 ? "tool" : "tools"}`,
        className: "badge-succeeded",
      };
    case "failed":
      return { text: "failed", className: "badge-failed" };
    case "needs_sign_in":
      return { text: "needs sign-in", className: "badge-confirm" };
    case "disabled":
      return { text: "disabled", className: "badge-not_run" };
  }
}

/**
 * The MCP servers of `mcp.json`: each with its status (and why it failed, with the last lines
 * of its stderr), how it is started (the resolved command path), its tools, and the actions
 * restart, enable/disable, edit and delete.
 */
export function McpServers(props: {
  servers: McpServerView[] | null;
  error: string | null;
  /** Recent status changes by server, newest first. */
  history: Record<string, StatusChange[]>;
  onAdd: () => void;
  onEdit: (name: string) => void;
  reload: () => void;
}) {
  const { servers } = props;
  return (
    <section aria-labelledby="mcp-title" data-testid="mcp-servers">
      <h2 id="mcp-title">MCP servers</h2>
      <div className="row-actions">
        <button type="button" onClick={props.onAdd} data-testid="add-mcp-server">
          Add MCP server
        </button>
      </div>
      {props.error && (
        <p role="alert" className="field-error">
          {props.error}
        </p>
      )}
      {servers && servers.length === 0 && (
        <p className="muted" data-testid="no-mcp-servers">
          No MCP servers yet. Add one by pasting its configuration (the <code>mcpServers</code>{" "}
          block other apps use works as it is).
        </p>
      )}
      {servers && servers.length > 0 && (
        <ul className="tool-list" data-testid="mcp-server-list">
          {servers.map((s) => (
            <ServerRow
              key={s.name}
              server={s}
              history={props.history[s.name] ?? []}
              onEdit={() => props.onEdit(s.name)}
              reload={props.reload}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function ServerRow(props: {
  server: McpServerView;
  history: StatusChange[];
  onEdit: () => void;
  reload: () => void;
}) {
  const { server: s } = props;
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const badge = statusBadge(s.status);
  const disabled = s.status.state === "disabled";
  // A failed server's last lines are kept with its status once its process is gone.
  const stderr =
    s.stderr_tail.length > 0 || s.status.state !== "failed" ? s.stderr_tail : s.status.stderr_tail;
  const [signingIn, setSigningIn] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const act = async (run: () => Promise<Result<unknown, AppError>>) => {
    setNotice(null);
    setError((await attempt(run()))?.message ?? null);
    props.reload();
  };
  // Waits for the browser to come back (the engine gives up after a few minutes).
  const signIn = async () => {
    setSigningIn(true);
    setError(null);
    setNotice(null);
    try {
      const scopes = await call(commands.mcpSignIn(s.name));
      setNotice(`Signed in${scopes.length > 0 ? ` (scopes: ${scopes.join(" ")})` : ""}.`);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setSigningIn(false);
      props.reload();
    }
  };
  return (
    <li>
      <details
        className="tool-row"
        data-testid={`mcp-server-${s.name}`}
        onToggle={(e) => setOpen(e.currentTarget.open)}
      >
        <summary>
          <span className="tool-name">{s.name}</span>
          <span
            className={`badge ${badge.className}`}
            data-testid="mcp-status"
            data-state={s.status.state}
          >
            {badge.text}
          </span>
          {s.protocol_version && (
            <span
              className="badge"
              data-testid="mcp-protocol"
              title={protocolNote(s.protocol_version)}
            >
              MCP {s.protocol_version}
            </span>
          )}
          <span className="muted small tool-users">
            {s.transport}: {s.target}
          </span>
        </summary>
        <div className="tool-row-body">
          {s.status.state === "failed" && (
            <p className="field-error" data-testid="mcp-reason">
              {s.status.reason}
            </p>
          )}
          {s.status.state === "needs_sign_in" && (
            <p className="muted small" data-testid="mcp-reason">
              It needs you to sign in: {s.status.reason}
            </p>
          )}
          {s.protocol_version && (
            <p className="muted small" data-testid="mcp-protocol-note">
              {protocolNote(s.protocol_version)}
            </p>
          )}
          {s.command_path && (
            <p className="muted small">
              Command: <code data-testid="mcp-command-path">{s.command_path}</code>
              {s.command_from_login_shell && " (found through your login shell's PATH)"}
            </p>
          )}
          <div className="row-actions">
            {s.transport === "http" && (
              <button
                type="button"
                className={s.status.state === "needs_sign_in" ? "primary" : undefined}
                disabled={disabled || signingIn}
                onClick={() => void signIn()}
                data-testid={`sign-in-${s.name}`}
              >
                {signingIn ? "Waiting for the browser…" : "Sign in"}
              </button>
            )}
            {s.transport === "http" && s.status.state !== "needs_sign_in" && (
              <ConfirmButton
                label={`Sign out of ${s.name}`}
                question={`Sign out of ${s.name}? Its tokens are deleted from the keyring and it needs sign-in again.`}
                confirmLabel="Sign out"
                disabled={disabled || signingIn}
                onConfirm={() => act(() => commands.mcpSignOut(s.name))}
              >
                Sign out
              </ConfirmButton>
            )}
            <button
              type="button"
              disabled={disabled}
              onClick={() => void act(() => commands.mcpRestart(s.name))}
              data-testid={`restart-${s.name}`}
            >
              Restart
            </button>
            <button
              type="button"
              onClick={() => void act(() => commands.mcpSetDisabled(s.name, !disabled))}
              data-testid={`${disabled ? "enable" : "disable"}-${s.name}`}
            >
              {disabled ? "Enable" : "Disable"}
            </button>
            <button type="button" onClick={props.onEdit} data-testid={`edit-${s.name}`}>
              Edit
            </button>
            <ConfirmButton
              label={`Delete ${s.name}`}
              question={`Remove ${s.name} from mcp.json? Its tools leave every agent.`}
              confirmLabel="Delete"
              onConfirm={() => act(() => commands.mcpRemoveServer(s.name))}
            >
              Delete
            </ConfirmButton>
          </div>
          {error && (
            <p role="alert" className="field-error">
              {error}
            </p>
          )}
          {notice && (
            <p role="status" className="muted small">
              {notice}
            </p>
          )}
          {stderr.length > 0 && (
            <details open={s.status.state === "failed"}>
              <summary>Server log (last lines of its stderr)</summary>
              <pre className="code" data-testid="mcp-stderr">
                {stderr.join("\n")}
              </pre>
            </details>
          )}
          {props.history.length > 0 && (
            <details>
              <summary>Recent status changes</summary>
              <ul className="status-history small" data-testid="mcp-history">
                {props.history.map((c, i) => (
                  <li key={`${c.at.getTime()}-${i}`}>
                    <time dateTime={c.at.toISOString()}>{c.at.toLocaleTimeString()}</time>{" "}
                    {statusBadge(c.status).text}
                    {"reason" in c.status && `: ${c.status.reason}`}
                  </li>
                ))}
              </ul>
            </details>
          )}
          {open && s.status.state === "ready" && (
            <ServerTools name={s.name} toolCount={s.status.tool_count} />
          )}
        </div>
      </details>
    </li>
  );
}

/** The tools a ready server offers, loaded when its row is opened. */
function ServerTools({ name, toolCount }: { name: string; toolCount: number }) {
  const [tools, setTools] = useState<McpToolInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    let alive = true;
    call(commands.mcpServerTools(name)).then(
      (t) => alive && setTools(t),
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [name]);
  // A changed tool count is a changed list (the server announced new tools, or restarted).
  useEffect(load, [load, toolCount]);
  if (error)
    return (
      <p role="alert" className="field-error">
        {error}
      </p>
    );
  if (!tools) return <p className="muted small">Loading tools…</p>;
  return (
    <ul className="tool-list" aria-label={`Tools of ${name}`}>
      {tools.map((t) => (
        <ServerTool key={t.name} tool={t} />
      ))}
    </ul>
  );
}

function ServerTool({ tool }: { tool: McpToolInfo }) {
  const [testing, setTesting] = useState(false);
  return (
    <li>
      <details className="tool-row" data-testid={`mcp-tool-${tool.name}`}>
        <summary>
          <span className="tool-name">{tool.name}</span>
          {tool.read_only_hint && (
            <span className="badge" title="The server says this tool only reads.">
              read-only
            </span>
          )}
          {tool.destructive_hint && (
            <span
              className="badge badge-failed"
              title="The server says this tool may destroy data."
            >
              destructive
            </span>
          )}
          {tool.view && (
            <span
              className="badge"
              data-testid="mcp-tool-view"
              title={`Its result comes with an interactive view (${tool.view}), shown in the tool card.`}
            >
              view
            </span>
          )}
          {tool.app_only && (
            <span
              className="badge"
              data-testid="mcp-tool-app-only"
              title="Only the server's views call this tool: agents do not get it."
            >
              views only
            </span>
          )}
          <span className={`badge ${tool.permission === "confirm" ? "badge-confirm" : ""}`}>
            {tool.permission}
          </span>
        </summary>
        <div className="tool-row-body">
          <p className="tool-description">
            {tool.description || <span className="muted">No description.</span>}
          </p>
          {(tool.read_only_hint !== null || tool.destructive_hint !== null) && (
            <p className="muted small">
              Annotations come from the server and are shown as they are: they never skip the
              permission dialog.
            </p>
          )}
          {tool.params.length > 0 && <ParamTable params={tool.params} />}
          <h3 className="small">What the model sees</h3>
          <pre className="code">{tool.instructions}</pre>
          <button
            type="button"
            aria-expanded={testing}
            onClick={() => setTesting(!testing)}
            data-testid={`test-${tool.name}`}
          >
            {testing ? "Hide test" : "Test"}
          </button>
          {testing && (
            <TestPanel
              params={specTestParams(tool.params)}
              run={(params) => call(commands.mcpTestTool(tool.name, params))}
              disabled={false}
            />
          )}
        </div>
      </details>
    </li>
  );
}
