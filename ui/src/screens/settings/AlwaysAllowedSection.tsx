import type { Grant } from "../../bindings";
import { Spinner } from "../../components/Spinner";
import { useAlwaysAllowed } from "./useAlwaysAllowed";

/** A grant's rule in one line: `tool when {key: pattern, …}`. */
export function describeGrant(grant: Grant): string {
  if (!grant.rule) return `${grant.tool} (the whole tool)`;
  const when = Object.entries(grant.rule.when ?? {}).map(([k, v]) => `${k}: ${v ?? ""}`);
  return when.length > 0 ? `${grant.rule.tool} when {${when.join(", ")}}` : grant.rule.tool;
}

/** What a grant is bound to, for people. */
function boundTo(grant: Grant): string {
  switch (grant.binding.kind) {
    case "host":
      return `while it goes to ${grant.binding.label ?? "the same host"}`;
    case "server":
      return `while server ${grant.binding.label ?? ""} is launched the same way`;
    default:
      return "wherever it goes";
  }
}

/** Conversation grants ("always allow" answers): each with its conversation, the tool or
 * rule, what it is bound to, and Delete. Shown inside the permission rules' section. */
export function AlwaysAllowedSection() {
  const allowed = useAlwaysAllowed();
  const list = allowed.grants;
  return (
    <section className="rule-source" aria-labelledby="allowed-title">
      <h3 id="allowed-title">In conversations</h3>
      <p className="muted">
        What you always allowed in a conversation runs there without asking: a whole tool, or calls
        like one you approved. A grant stops applying when the tool&apos;s host or MCP server
        changes. Delete one to be asked again.
      </p>
      {allowed.error && (
        <p className="form-errors" role="alert">
          {allowed.error}
        </p>
      )}
      {list === null ? (
        <p className="muted" role="status">
          <Spinner /> Loading grants…
        </p>
      ) : list.length === 0 ? (
        <p className="muted" data-testid="no-always-allowed">
          No conversation always allows a tool.
        </p>
      ) : (
        <ul className="allowed-list grant-list">
          {list.map((g) => (
            <li key={g.id} data-testid={`grant-${g.id}`}>
              <span className="allowed-title">
                {g.conversation_title || "Untitled conversation"}
              </span>
              <code>{describeGrant(g)}</code>
              <span className="muted small">{boundTo(g)}</span>
              <button
                type="button"
                className="chip-action"
                aria-label={`Delete the grant for ${g.tool} in ${g.conversation_title || g.conversation_id}`}
                disabled={allowed.anyBusy}
                onClick={() => void allowed.remove(g)}
              >
                {allowed.busy === g.id ? <Spinner /> : "Delete"}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
