import type { StatusState } from "../../ipc/useStatus";

/** What loaded from the config folder, and every file that did not, with its location. */
export function ToolsScreen({ state }: { state: StatusState }) {
  const { status } = state;
  return (
    <section className="screen">
      <h1 id="screen-title">Tools</h1>
      {status && (
        <>
          <p>
            {status.tools_loaded} custom {status.tools_loaded === 1 ? "tool" : "tools"} and{" "}
            {status.agents_loaded} {status.agents_loaded === 1 ? "agent" : "agents"} loaded from{" "}
            <code>{status.config_dir}</code>.
          </p>
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
          <button type="button" onClick={() => void state.reload()} disabled={state.loading}>
            Reload config folder
          </button>
        </>
      )}
    </section>
  );
}
