import { lazy, Suspense, useState } from "react";
import { BinaryContent } from "../../components/BinaryContent";
import type { TimelineItem } from "./timeline";

/** An MCP App's view, with the MCP Apps SDK it talks through: loaded when a call has a view,
 * not with the window (the SDK and its schema library are most of the chat's script). */
const McpView = lazy(() => import("./McpView").then((m) => ({ default: m.McpView })));

type ToolItem = Extract<TimelineItem, { kind: "tool" }>;

const LABEL: Record<ToolItem["status"], string> = {
  running: "Running…",
  succeeded: "Succeeded",
  failed: "Failed",
  denied: "Denied",
  not_run: "Not run",
  stopped: "Stopped",
};

/** What a skill tool does, for the line naming its skill. */
const SKILL_ACTION: Record<string, string> = {
  load_skill: "Loads the skill",
  read_skill_file: "Reads a file of the skill",
  run_skill_script: "Runs a script of the skill",
};

/** The skill a skill tool's call is about, with its file or script: `csv-report`,
 * `csv-report: references/format.md`. Null for other tools. */
function skillOf(item: ToolItem): { action: string; skill: string; part: string | null } | null {
  const action = SKILL_ACTION[item.tool];
  const skill = item.params.skill;
  if (!action || typeof skill !== "string") return null;
  const part = item.params.path ?? item.params.script;
  return { action, skill, part: typeof part === "string" ? part : null };
}

/** One tool call, live: name, parameters, status, duration, result preview, its images and
 * audio (stored as artifacts of `conversationId`), artifact link. */
export function ToolCard({
  item,
  conversationId,
  onOpenArtifact,
  agentChain,
}: {
  item: ToolItem;
  conversationId?: string | null;
  onOpenArtifact?: (id: string) => void;
  /** For a sub-agent's call: the agents from the conversation's down to the caller, then the
   * tool (`lead_agent → search_agent → web_fetch`). */
  agentChain?: string[] | undefined;
}) {
  const [open, setOpen] = useState(false);
  const malformed = item.tool === "__malformed__";
  const params = Object.entries(item.params);
  const reasonShown =
    !malformed && !!item.reason && (item.status === "denied" || item.status === "not_run");
  // A call that did not run has the engine's "not run: <reason>" as its result: the reason
  // line already says it (Details still shows the result as the model saw it).
  const restated = reasonShown && item.result?.trim() === `not run: ${item.reason}`;
  const preview = item.result && !restated ? item.result.slice(0, 600) : null;
  const skill = skillOf(item);
  return (
    <article
      className={`tool-card tool-${item.status}`}
      data-testid={`tool-card-${item.tool}`}
      data-call-id={item.callId}
      data-status={item.status}
      aria-label={`${malformed ? "Unreadable tool call" : item.tool}: ${LABEL[item.status]}`}
    >
      <header className="tool-card-header">
        <span className="tool-name">{malformed ? "Unreadable tool call" : item.tool}</span>
        <span className={`badge badge-${item.status}`} data-testid="tool-status">
          {LABEL[item.status]}
        </span>
        {agentChain && agentChain.length > 1 && (
          <span className="muted small tool-chain" data-testid="tool-chain">
            {agentChain.join(" → ")}
          </span>
        )}
        {item.durationMs !== null && <span className="muted">{item.durationMs} ms</span>}
        {(params.length > 0 || item.result) && (
          <button
            type="button"
            className="link-button"
            aria-expanded={open}
            onClick={() => setOpen(!open)}
          >
            {open ? "Hide details" : "Details"}
          </button>
        )}
      </header>
      {item.status === "running" && item.progress && (
        <div className="tool-progress" data-testid="tool-progress">
          <progress
            aria-label={`${item.tool} progress`}
            value={item.progress.total ? item.progress.value : undefined}
            max={item.progress.total ?? undefined}
          />
          <span className="muted">
            {item.progress.total
              ? `${item.progress.value} of ${item.progress.total}`
              : `${item.progress.value}`}
            {item.progress.message ? ` · ${item.progress.message}` : ""}
          </span>
        </div>
      )}
      {skill && (
        <p className="tool-skill small" data-testid="tool-skill">
          {skill.action} <strong>{skill.skill}</strong>
          {skill.part && (
            <>
              : <code>{skill.part}</code>
            </>
          )}
        </p>
      )}
      {item.guided && (
        <p
          className="tool-guided muted small"
          data-testid="tool-guided"
          title="The app's runtime made the model follow a grammar of this agent's calls while it wrote this one: its tool, parameters and value types were checked token by token."
        >
          Guided: written under this agent's call grammar
        </p>
      )}
      {reasonShown && (
        <p className="tool-reason" data-testid="tool-reason">
          {item.status === "denied" ? "Refused" : "Not run"}: {item.reason}
        </p>
      )}
      {malformed && item.result && (
        <p className="tool-malformed">
          The model wrote a tool call that could not be read: {item.result}
        </p>
      )}
      {!malformed && params.length > 0 && !open && (
        <p className="tool-params-inline muted">
          {params.map(([k, v]) => `${k}=${short(v)}`).join(" · ")}
        </p>
      )}
      {open && (
        <div className="tool-details">
          {params.length > 0 && (
            <pre className="code" aria-label="Parameters">
              {JSON.stringify(item.params, null, 2)}
            </pre>
          )}
          {item.result && (
            <pre className="code tool-result" aria-label="Result">
              {item.result}
            </pre>
          )}
        </div>
      )}
      {!open && !malformed && preview && item.status !== "running" && (
        <pre className="tool-result-preview">
          {preview}
          {item.result && item.result.length > 600 ? "…" : ""}
        </pre>
      )}
      {conversationId && item.attachments.length > 0 && (
        <div className="tool-attachments" data-testid="tool-attachments">
          {item.attachments.map((a) => (
            <BinaryContent
              key={a.artifact_id}
              conversationId={conversationId}
              id={a.artifact_id}
              mime={a.mime}
              sizeBytes={a.size_bytes}
              title={a.title}
              text={a.text}
              onOpen={onOpenArtifact}
            />
          ))}
        </div>
      )}
      {item.view && item.status !== "running" && (
        <Suspense fallback={null}>
          <McpView callId={item.callId} tool={item.tool} />
        </Suspense>
      )}
      {item.artifactId && (
        <button
          type="button"
          className="link-button"
          data-testid="artifact-link"
          onClick={() => item.artifactId && onOpenArtifact?.(item.artifactId)}
        >
          Artifact: {item.artifactId}
        </button>
      )}
    </article>
  );
}

function short(v: unknown): string {
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
