import type { ToolInfo } from "../../bindings";
import type { StatusState } from "../../ipc/useStatus";
import { useTools } from "./useTools";

const SOURCE_LABEL: Record<string, string> = {
  builtin: "built-in",
  artifact: "artifact",
  http: "HTTP",
};

/** Every tool (built-in, artifact, custom) with its source, permission and users, and every
 * config file that did not load, with its location. */
export function ToolsScreen({ state }: { state: StatusState }) {
  const { status } = state;
  const { tools, error } = useTools();
  return (
    <section className="screen tools-screen">
      <h1 id="screen-title">Tools</h1>
      {status && (
        <p>
          {tools ? `${tools.length} tools` : "Tools"} and {status.agents_loaded}{" "}
          {status.agents_loaded === 1 ? "agent" : "agents"} loaded from{" "}
          <code>{status.config_dir}</code>.{" "}
          <button type="button" onClick={() => void state.reload()} disabled={state.loading}>
            Reload config folder
          </button>
        </p>
      )}
      {status && (
        <>
          <h2>Load problems</h2>
          {status.config_errors.length === 0 ? (
            <p data-testid="no-config-errors">Every file in the config folder loaded.</p>
          ) : (
            <ul className="error-list" data-testid="config-errors">
              {status.config_errors.map((e) => (
                <li key={`${e.file}:${e.line ?? ""}:${e.field ?? ""}`}>
                  <code>
                    {e.file}
                    {e.line !== null ? `:${e.line}` : ""}
                  </code>
                  {e.field !== null && (
                    <>
                      {" "}
                      field <code>{e.field}</code>
                    </>
                  )}
                  : {e.message}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      <h2>All tools</h2>
      {error && <p role="alert">{error}</p>}
      {tools && (
        <ul className="tool-list" data-testid="tool-list">
          {tools.map((t) => (
            <ToolRow key={t.name} tool={t} />
          ))}
        </ul>
      )}
    </section>
  );
}

function ToolRow({ tool }: { tool: ToolInfo }) {
  return (
    <li>
      <details className="tool-row" data-testid={`tool-row-${tool.name}`}>
        <summary>
          <span className="tool-name">{tool.name}</span>
          <span className="badge">{SOURCE_LABEL[tool.source] ?? tool.source}</span>
          <span className={`badge ${tool.permission === "confirm" ? "badge-confirm" : ""}`}>
            {tool.permission}
          </span>
          <span className="muted small tool-users">
            {tool.used_by.length === 0
              ? "no agent uses it"
              : `used by ${tool.used_by.map((u) => (u.permission === tool.permission ? u.agent : `${u.agent} (${u.permission})`)).join(", ")}`}
          </span>
        </summary>
        <div className="tool-row-body">
          {tool.file && (
            <p className="muted small">
              File: <code>{tool.file}</code>
            </p>
          )}
          <p className="tool-description">
            {tool.description || <span className="muted">No description.</span>}
          </p>
          {tool.params.length > 0 && (
            <table className="param-table">
              <thead>
                <tr>
                  <th>Parameter</th>
                  <th>Type</th>
                  <th>Required</th>
                  <th>Default</th>
                  <th>Allowed values</th>
                </tr>
              </thead>
              <tbody>
                {tool.params.map((p) => (
                  <tr key={p.name}>
                    <td>
                      <code>{p.name}</code>
                      {p.description && <div className="muted small">{p.description}</div>}
                    </td>
                    <td>{p.type}</td>
                    <td>{p.required ? "yes" : "no"}</td>
                    <td>
                      {p.default === null || p.default === undefined
                        ? ""
                        : JSON.stringify(p.default)}
                    </td>
                    <td>{p.enum?.join(", ") ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h3 className="small">What the model sees</h3>
          <pre className="code">{tool.instructions}</pre>
        </div>
      </details>
    </li>
  );
}
