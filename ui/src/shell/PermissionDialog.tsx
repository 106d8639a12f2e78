import { useCallback, useEffect, useRef, useState } from "react";
import type { Answer, GrantChoice, RuleSpec } from "../bindings";
import { Modal } from "../components/Modal";
import type { PendingPermission } from "../screens/chat/timeline";
import { ArmingNote } from "./ArmingNote";
import { useArming } from "./arming";

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

/** A skill script's preview (see the engine's `RunSkillScript::request_preview`). */
interface ScriptPreview {
  /** The command line, as a shell would take it. */
  script_command: string;
  /** The program started (the interpreter's path, or the script). */
  program?: string;
  working_folder?: string;
  environment?: string;
  timeout_secs?: number;
}

const isScriptPreview = (p: unknown): p is ScriptPreview =>
  typeof p === "object" && p !== null && typeof (p as ScriptPreview).script_command === "string";

const isMcpPreview = (p: unknown): p is McpPreview =>
  typeof p === "object" && p !== null && typeof (p as McpPreview).mcp_server === "string";

/** Elements where Enter or Space already mean something (they click or type): the dialog's
 * own shortcuts leave those keys to them. */
const NATIVE_KEYS = "button, a[href], input, textarea, select, summary";

/**
 * The permission dialog: who asks (conversation and agent chain), exactly what will run
 * (tool, every parameter, for HTTP tools the method, URL, headers and body with secrets shown
 * as {{NAME}}, the real destination and the secret names), a countdown to the timeout, and
 * Approve / Deny / Always allow, the last as two choices: this tool in this conversation, or
 * "calls like this" (an editable rule the engine proposes, saved with Save & approve). When a
 * rule asks every time it says which and offers no always-allow; when an earlier grant no
 * longer applies it says why it asks again. Keyboard: Enter approves, Escape denies,
 * Ctrl+Enter always allows the tool; approving works only once armed ({@link useArming}).
 * Several requests are answered in the order they came. `onAnswer` may return an error
 * message (an invalid rule): the dialog then stays and shows it. At any window size the app
 * allows, the request scrolls inside the dialog's body while the title, the countdown and the
 * decision buttons (a footer outside the body) stay in view.
 */
export function PermissionDialog(props: {
  queue: PendingPermission[];
  onAnswer: (
    requestId: string,
    answer: Answer,
    grant?: GrantChoice | null,
  ) => Promise<string | null>;
}) {
  const current = props.queue[0];
  const title = useRef<HTMLHeadingElement>(null);
  const [now, setNow] = useState(() => Date.now());
  const { armed, disarm } = useArming(current?.requestId ?? null);
  /** The "calls like this" rule being edited, and why saving it was refused, for the request
   * shown (another request starts with the editor closed). */
  const [editing, setEditing] = useState<{
    requestId: string;
    draft: RuleDraft | null;
    error: string | null;
  } | null>(null);
  const mine = editing && editing.requestId === current?.requestId ? editing : null;
  const draft = mine?.draft ?? null;
  const ruleError = mine?.error ?? null;
  const setDraft = useCallback(
    (d: RuleDraft | null) =>
      current && setEditing({ requestId: current.requestId, draft: d, error: null }),
    [current],
  );
  const setRuleError = useCallback(
    (error: string | null) => setEditing((e) => (e ? { ...e, error } : e)),
    [],
  );

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
  const grantable = current?.request.grantable ?? false;
  const answer = useCallback(
    (a: Answer, grant?: GrantChoice) => {
      if (!current) return;
      if (a !== "deny" && !armed) {
        disarm();
        return;
      }
      if (a === "approve_always" && !grantable) return;
      const chosen = a === "approve_always" ? (grant ?? { kind: "tool" }) : null;
      void onAnswer(current.requestId, a, chosen).then((error) => {
        if (error) setRuleError(error);
      });
    },
    [current, armed, disarm, onAnswer, grantable, setRuleError],
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
      answer(e.ctrlKey || e.metaKey ? (grantable ? "approve_always" : "approve") : "approve");
    };
    document.addEventListener("keydown", onKey, true);
    return () => document.removeEventListener("keydown", onKey, true);
  }, [current, armed, disarm, answer, grantable]);

  if (!current) return <Modal open={false} className="permission-dialog" />;
  const { request } = current;
  const left =
    current.deadlineMs === null ? null : Math.max(0, Math.ceil((current.deadlineMs - now) / 1000));
  const mcp = isMcpPreview(request.request) ? request.request : null;
  const script = isScriptPreview(request.request) ? request.request : null;
  const http = mcp || script ? null : (request.request as null | HttpPreview);
  // An MCP call sends its parameters as its arguments: shown once, under what the server gets.
  const paramsShown = !(
    mcp &&
    mcp.arguments !== undefined &&
    sameJson(mcp.arguments, request.params)
  );

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
        {request.view_of ? (
          <>
            Asked by <strong>the view of {request.view_of}</strong> (an MCP server&apos;s
            interactive view in a tool card)
          </>
        ) : current.agentChain.length > 0 ? (
          <>
            Asked by <strong>{[...current.agentChain, request.tool].join(" → ")}</strong>
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
      <div className="dialog-body" data-testid="permission-body">
        {paramsShown && (
          <>
            <h3>Parameters</h3>
            <pre className="code permission-params" tabIndex={0}>
              {JSON.stringify(request.params, null, 2)}
            </pre>
          </>
        )}
        {http && <HttpRequest http={http} />}
        {mcp && <McpRequest mcp={mcp} />}
        {script && <ScriptRequest script={script} />}
        {request.stale_grants.length > 0 && (
          <ul className="permission-stale" data-testid="permission-stale">
            {request.stale_grants.map((why) => (
              <li key={why}>Asking again: {why}</li>
            ))}
          </ul>
        )}
        {!grantable && request.asking_rule && (
          <p className="permission-rule-asks" data-testid="permission-rule-asks">
            A rule asks every time: {request.asking_rule}
          </p>
        )}
        {draft && (
          <RuleEditor
            draft={draft}
            note={request.proposal_note}
            error={ruleError}
            onChange={setDraft}
          />
        )}
      </div>
      <div className="dialog-actions dialog-footer" data-testid="permission-actions">
        <ArmingNote
          armed={armed}
          action={draft ? "Save & approve" : "Approve"}
          testid="permission-arming"
        />
        <button type="button" onClick={() => answer("deny")} data-testid="permission-deny">
          Deny <kbd>Esc</kbd>
        </button>
        {draft ? (
          // While a rule is edited its own decisions take the footer (always in view, however
          // long the rule grows in the scrolling body).
          <>
            <button
              type="button"
              onClick={() => setDraft(null)}
              data-testid="permission-rule-cancel"
            >
              Back
            </button>
            <button
              type="button"
              className="primary"
              onClick={() => answer("approve_always", { kind: "rule", rule: ruleFromDraft(draft) })}
              disabled={!armed}
              data-testid="permission-save-rule"
            >
              Save &amp; approve
            </button>
          </>
        ) : (
          <>
            {grantable && (
              <div role="group" aria-label="Always allow" className="permission-always-group">
                <span className="muted small">Always allow:</span>
                <button
                  type="button"
                  onClick={() => answer("approve_always")}
                  disabled={!armed}
                  data-testid="permission-always"
                >
                  This tool in this conversation <kbd>Ctrl+Enter</kbd>
                </button>
                <button
                  type="button"
                  onClick={() =>
                    setDraft(draft ? null : draftFrom(request.proposed_rule, request.tool))
                  }
                  aria-expanded={draft !== null}
                  data-testid="permission-like-this"
                >
                  Calls like this…
                </button>
              </div>
            )}
            <button
              type="button"
              className="primary"
              onClick={() => answer("approve")}
              disabled={!armed}
              data-testid="permission-approve"
            >
              Approve <kbd>Enter</kbd>
            </button>
          </>
        )}
      </div>
    </Modal>
  );
}

/** Whether two JSON values are equal, whatever the order of their objects' keys. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.prototype.hasOwnProperty.call(b, k) &&
        sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

/** A "calls like this" rule while it is edited: the tool pattern and `when` rows in order. */
interface RuleDraft {
  tool: string;
  when: { key: string; pattern: string }[];
}

function draftFrom(rule: RuleSpec | null, tool: string): RuleDraft {
  return {
    tool: rule?.tool ?? tool,
    when: Object.entries(rule?.when ?? {}).map(([key, pattern]) => ({
      key,
      pattern: pattern ?? "",
    })),
  };
}

function ruleFromDraft(draft: RuleDraft): RuleSpec {
  const when: Record<string, string> = {};
  for (const row of draft.when) {
    if (row.key.trim()) when[row.key.trim()] = row.pattern;
  }
  return { tool: draft.tool.trim(), when, action: "allow" };
}

/**
 * The inline editor of a "calls like this" rule: tool pattern and `when` rows (its Back and
 * Save & approve are in the dialog's footer).
 */
function RuleEditor(props: {
  draft: RuleDraft;
  note: string | null;
  error: string | null;
  onChange: (d: RuleDraft) => void;
}) {
  const { draft, onChange } = props;
  // The editor opens at the end of the dialog's scrolling body: bring it into view.
  const frame = useRef<HTMLFieldSetElement>(null);
  useEffect(() => frame.current?.scrollIntoView?.({ block: "nearest" }), []);
  const setRow = (i: number, row: { key: string; pattern: string }) =>
    onChange({ ...draft, when: draft.when.map((r, j) => (j === i ? row : r)) });
  return (
    <fieldset className="permission-rule-editor" data-testid="permission-rule-editor" ref={frame}>
      <legend>Allow calls like this in this conversation</legend>
      <p className="muted small">
        Patterns are globs: <code>*</code> within one path segment, <code>**</code> across segments,{" "}
        <code>re:</code> for a regular expression. <code>$host</code>, <code>$url</code> and{" "}
        <code>$method</code> match where the call goes.
      </p>
      {props.note && (
        <p className="muted small" data-testid="permission-rule-note">
          {props.note}
        </p>
      )}
      <label>
        Tool
        <input
          value={draft.tool}
          onChange={(e) => onChange({ ...draft, tool: e.target.value })}
          data-testid="permission-rule-tool"
        />
      </label>
      {draft.when.map((row, i) => (
        <div className="permission-rule-row" key={i}>
          <label>
            When
            <input
              value={row.key}
              aria-label={`Condition ${i + 1} parameter`}
              onChange={(e) => setRow(i, { ...row, key: e.target.value })}
              data-testid={`permission-rule-key-${i}`}
            />
          </label>
          <label>
            matches
            <input
              value={row.pattern}
              aria-label={`Condition ${i + 1} pattern`}
              onChange={(e) => setRow(i, { ...row, pattern: e.target.value })}
              data-testid={`permission-rule-pattern-${i}`}
            />
          </label>
          <button
            type="button"
            aria-label={`Remove condition ${i + 1}`}
            onClick={() => onChange({ ...draft, when: draft.when.filter((_, j) => j !== i) })}
          >
            Remove
          </button>
        </div>
      ))}
      <button
        type="button"
        onClick={() => onChange({ ...draft, when: [...draft.when, { key: "", pattern: "" }] })}
        data-testid="permission-rule-add"
      >
        Add condition
      </button>
      {props.error && (
        <p className="form-errors" role="alert" data-testid="permission-rule-error">
          {props.error}
        </p>
      )}
    </fieldset>
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
function ScriptRequest({ script }: { script: ScriptPreview }) {
  return (
    <>
      <h3>Runs on this computer</h3>
      <pre className="code" tabIndex={0} aria-label="Command line" data-testid="permission-script">
        {script.script_command}
      </pre>
      <dl className="permission-script-facts">
        {script.program && (
          <>
            <dt>Program</dt>
            <dd>
              <code>{script.program}</code>
            </dd>
          </>
        )}
        {script.working_folder && (
          <>
            <dt>In the folder</dt>
            <dd>
              <code>{script.working_folder}</code>
            </dd>
          </>
        )}
        {script.environment && (
          <>
            <dt>Environment</dt>
            <dd>{script.environment}</dd>
          </>
        )}
        {script.timeout_secs !== undefined && (
          <>
            <dt>Stopped after</dt>
            <dd>{script.timeout_secs} s</dd>
          </>
        )}
      </dl>
      <p className="muted small">
        It runs with your account’s rights: it can read and change your files. It is not a sandbox.
      </p>
    </>
  );
}

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
