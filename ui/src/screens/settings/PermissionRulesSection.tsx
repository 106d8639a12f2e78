import { useState, type ReactNode } from "react";
import type { RuleSpec, RuleView } from "../../bindings";
import { Spinner } from "../../components/Spinner";
import {
  EMPTY_DRAFT,
  draftOf,
  ruleOrigin,
  ruleText,
  specOf,
  type RuleDraft,
} from "./permissionRules";
import { usePermissionRules } from "./usePermissionRules";

/** Which global rule the form edits: a new one, or the one at `index`. */
type Editing = { index: number | null; draft: RuleDraft };

/**
 * Permission rules in one place: settings.yaml's (add, edit, delete here) and each agent's
 * (edited in the agent's file: "Open in editor"), then (`children`) the conversations' grants.
 * Ignored rules show why.
 */
export function PermissionRulesSection({
  onOpenAgentFile,
  children,
}: {
  onOpenAgentFile?: ((path: string) => void) | undefined;
  /** The conversation grants, listed after the rules in the same section. */
  children?: ReactNode;
}) {
  const rules = usePermissionRules();
  const [editing, setEditing] = useState<Editing | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const global = rules.view?.global ?? [];
  // Only rules that parsed can be saved back; an entry that is not a rule stays in the file
  // until fixed there (saving from here would drop it, so it is kept out of the list we save).
  const savable = (): RuleSpec[] | null =>
    global.every((r) => r.spec) ? global.map((r) => r.spec as RuleSpec) : null;

  const saveAll = async (next: RuleSpec[]) => {
    setBusy(true);
    const failed = await rules.save(next);
    setBusy(false);
    setFormError(failed);
    if (!failed) setEditing(null);
  };

  const submit = () => {
    if (!editing) return;
    const spec = specOf(editing.draft);
    if (typeof spec === "string") {
      setFormError(spec);
      return;
    }
    const current = savable();
    if (!current) {
      setFormError("settings.yaml has an entry that is not a rule: fix it in the file first.");
      return;
    }
    const next =
      editing.index === null
        ? [...current, spec]
        : current.map((r, i) => (i === editing.index ? spec : r));
    void saveAll(next);
  };

  const remove = (index: number) => {
    const current = savable();
    if (!current) {
      setFormError("settings.yaml has an entry that is not a rule: fix it in the file first.");
      return;
    }
    void saveAll(current.filter((_, i) => i !== index));
  };

  return (
    <section className="setting-group" aria-labelledby="rules-title">
      <h2 id="rules-title">Permission rules</h2>
      <p className="muted">
        Allow, confirm or deny calls by what they do. The strictest matching rule wins (deny, then
        confirm, then allow); with none, the tool's permission applies.
      </p>
      {rules.error && (
        <p className="form-errors" role="alert">
          {rules.error}
        </p>
      )}
      {rules.view === null ? (
        <p className="muted" role="status">
          <Spinner /> Loading rules…
        </p>
      ) : (
        <ul className="rule-list" aria-label="Permission rules" data-testid="rule-list">
          {global.length === 0 && rules.view.agents.length === 0 && (
            <li className="muted">No rules yet.</li>
          )}
          {global.map((r, i) => (
            <RuleRow key={`g${i}`} rule={r}>
              <button
                type="button"
                disabled={busy || !r.spec}
                onClick={() => {
                  setFormError(null);
                  setEditing({ index: i, draft: r.spec ? draftOf(r.spec) : EMPTY_DRAFT });
                }}
                aria-label={`Edit rule ${ruleText(r.spec)}`}
              >
                Edit
              </button>
              <button
                type="button"
                disabled={busy}
                onClick={() => remove(i)}
                aria-label={`Delete rule ${ruleText(r.spec)}`}
              >
                Delete
              </button>
            </RuleRow>
          ))}
          {rules.view.agents.flatMap((a) =>
            a.rules.map((r, i) => (
              <RuleRow key={`${a.agent}${i}`} rule={r}>
                {onOpenAgentFile && (
                  <button
                    type="button"
                    onClick={() => onOpenAgentFile(a.path)}
                    aria-label={`Open ${a.agent} in editor`}
                  >
                    Open in editor
                  </button>
                )}
              </RuleRow>
            )),
          )}
        </ul>
      )}
      {editing ? (
        <RuleForm
          editing={editing}
          busy={busy}
          error={formError}
          onChange={(draft) => setEditing({ ...editing, draft })}
          onSubmit={submit}
          onCancel={() => {
            setEditing(null);
            setFormError(null);
          }}
        />
      ) : (
        <>
          {formError && (
            <p className="form-errors" role="alert">
              {formError}
            </p>
          )}
          <button
            type="button"
            disabled={rules.view === null}
            onClick={() => {
              setFormError(null);
              setEditing({ index: null, draft: EMPTY_DRAFT });
            }}
          >
            Add rule
          </button>
        </>
      )}
      {children}
    </section>
  );
}

function RuleRow({ rule, children }: { rule: RuleView; children: React.ReactNode }) {
  return (
    <li className={`rule-row${rule.error ? " rule-ignored" : ""}`}>
      <span className={`badge rule-action-${rule.spec?.action ?? "none"}`}>
        {rule.spec?.action ?? "?"}
      </span>{" "}
      <code>{ruleText(rule.spec)}</code>{" "}
      <span className="muted small">{ruleOrigin(rule.origin)}</span>
      {rule.error && <span className="rule-error small"> Ignored: {rule.error}</span>}
      <span className="rule-actions">{children}</span>
    </li>
  );
}

function RuleForm(props: {
  editing: Editing;
  busy: boolean;
  error: string | null;
  onChange: (draft: RuleDraft) => void;
  onSubmit: () => void;
  onCancel: () => void;
}) {
  const { draft } = props.editing;
  const title = props.editing.index === null ? "New rule" : "Edit rule";
  const setRow = (i: number, row: { key?: string; pattern?: string }) =>
    props.onChange({
      ...draft,
      when: draft.when.map((r, j) => (j === i ? { ...r, ...row } : r)),
    });
  return (
    <form
      aria-label={title}
      className="rule-form"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      <label>
        Tool
        <input
          value={draft.tool}
          placeholder="web_fetch, github.*, *"
          onChange={(e) => props.onChange({ ...draft, tool: e.target.value })}
        />
      </label>
      <fieldset>
        <legend>When (all must match)</legend>
        {draft.when.map((row, i) => (
          <div className="rule-when-row" key={i}>
            <input
              aria-label={`Parameter ${i + 1}`}
              value={row.key}
              placeholder="url, $host, $url, $method"
              onChange={(e) => setRow(i, { key: e.target.value })}
            />
            <input
              aria-label={`Pattern ${i + 1}`}
              value={row.pattern}
              placeholder="https://docs.rs/** or re:…"
              onChange={(e) => setRow(i, { pattern: e.target.value })}
            />
            <button
              type="button"
              aria-label={`Remove condition ${i + 1}`}
              onClick={() =>
                props.onChange({ ...draft, when: draft.when.filter((_, j) => j !== i) })
              }
            >
              Remove
            </button>
          </div>
        ))}
        <button
          type="button"
          onClick={() =>
            props.onChange({ ...draft, when: [...draft.when, { key: "", pattern: "" }] })
          }
        >
          Add condition
        </button>
      </fieldset>
      <label>
        Action
        <select
          value={draft.action}
          onChange={(e) =>
            props.onChange({ ...draft, action: e.target.value as RuleDraft["action"] })
          }
        >
          <option value="allow">allow</option>
          <option value="confirm">confirm</option>
          <option value="deny">deny</option>
        </select>
      </label>
      {props.error && (
        <p className="form-errors" role="alert">
          {props.error}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={props.busy}>
          {props.busy ? <Spinner /> : "Save rule"}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
