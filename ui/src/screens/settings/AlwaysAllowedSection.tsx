import { Spinner } from "../../components/Spinner";
import { useAlwaysAllowed } from "./useAlwaysAllowed";

/** Tools the user chose to always allow, per conversation; each can be revoked. */
export function AlwaysAllowedSection() {
  const allowed = useAlwaysAllowed();
  const list = allowed.conversations;
  return (
    <section className="setting-group" aria-labelledby="allowed-title">
      <h2 id="allowed-title">Always-allowed tools</h2>
      <p className="muted">
        Tools you allowed for the rest of a conversation run there without asking. Revoke to be
        asked again.
      </p>
      {allowed.error && (
        <p className="form-errors" role="alert">
          {allowed.error}
        </p>
      )}
      {list === null ? (
        <p className="muted" role="status">
          <Spinner /> Loading conversations…
        </p>
      ) : list.length === 0 ? (
        <p className="muted" data-testid="no-always-allowed">
          No conversation always allows a tool.
        </p>
      ) : (
        <ul className="allowed-list">
          {list.map((c) => (
            <li key={c.id} data-testid={`allowed-${c.id}`}>
              <span className="allowed-title">{c.title || "Untitled conversation"}</span>
              <ul className="chip-list" aria-label={`Always allowed in ${c.title || c.id}`}>
                {c.always_allowed.map((tool) => (
                  <li key={tool} className="chip">
                    <code>{tool}</code>
                    <button
                      type="button"
                      className="chip-action"
                      aria-label={`Revoke ${tool} in ${c.title || c.id}`}
                      disabled={allowed.anyBusy}
                      onClick={() => void allowed.revoke(c.id, tool)}
                    >
                      {allowed.isBusy(c.id, tool) ? <Spinner /> : "Revoke"}
                    </button>
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
