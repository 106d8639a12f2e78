import type { McpServerView } from "../bindings";
import type { StatusState } from "../ipc/useStatus";
import { shortenPath } from "./paths";

/** The MCP servers that are not running because they failed (a misspelt command, a crash, a
 * refused handshake): each one is a problem the user has to act on. */
export function failedServers(servers: readonly McpServerView[] | null): McpServerView[] {
  return (servers ?? []).filter((s) => s.status.state === "failed");
}

/**
 * Version, folders and load counts, as reported by the backend, and what needs the user:
 * config files that did not load and MCP servers that failed (`onShowTools` opens the Tools
 * screen, where both are listed with their reasons).
 */
export function StatusArea({
  state,
  failed = [],
  onShowTools,
}: {
  state: StatusState;
  failed?: readonly McpServerView[];
  onShowTools?: () => void;
}) {
  const { status, error, loading } = state;
  if (error) {
    return (
      <section className="status status-error" role="alert" data-testid="status-error">
        <strong>Backend unavailable</strong>
        <p>{error.message}</p>
      </section>
    );
  }
  if (!status) {
    return (
      <section className="status" aria-busy={loading} data-testid="status-loading">
        Loading status…
      </section>
    );
  }
  const problems = status.config_errors.length;
  return (
    <section className="status" aria-label="Status" data-testid="status-area">
      <dl>
        <dt>Version</dt>
        <dd data-testid="status-version">{status.app_version}</dd>
        <dt>Tools</dt>
        <dd data-testid="status-tools">{status.tools_loaded}</dd>
        <dt>Agents</dt>
        <dd data-testid="status-agents">{status.agents_loaded}</dd>
        <dt>Config</dt>
        <dd className="path" title={status.config_dir} data-testid="status-config-dir">
          {shortenPath(status.config_dir)}
        </dd>
        <dt>Database</dt>
        <dd className="path" title={status.database} data-testid="status-database">
          {shortenPath(status.database)}
        </dd>
      </dl>
      {problems > 0 && (
        <p className="status-warning" data-testid="status-problems">
          {problems} config {problems === 1 ? "file has" : "files have"} problems —{" "}
          <SeeTools onShowTools={onShowTools} />
        </p>
      )}
      {failed.length > 0 && (
        <p
          className="status-warning"
          data-testid="status-mcp-failed"
          title={failed.map((s) => s.name).join(", ")}
        >
          {failed.length} MCP {failed.length === 1 ? "server" : "servers"} failed —{" "}
          <SeeTools onShowTools={onShowTools} />
        </p>
      )}
    </section>
  );
}

function SeeTools({ onShowTools }: { onShowTools: (() => void) | undefined }) {
  return onShowTools ? (
    <button type="button" className="link-button" onClick={onShowTools}>
      see Tools
    </button>
  ) : (
    <>see Tools</>
  );
}
