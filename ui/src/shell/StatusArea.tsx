import type { StatusState } from "../ipc/useStatus";
import { shortenPath } from "./paths";

/** Version, folders and load counts, as reported by the backend. */
export function StatusArea({ state }: { state: StatusState }) {
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
          {problems} config {problems === 1 ? "file has" : "files have"} problems — see Tools
        </p>
      )}
    </section>
  );
}
