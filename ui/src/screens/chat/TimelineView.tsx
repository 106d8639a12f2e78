import { useEffect, useRef, useState } from "react";
import { ConfirmButton } from "../../components/ConfirmButton";
import { useVirtualizer } from "@tanstack/react-virtual";
import { Markdown } from "../../components/Markdown";
import { StreamingMarkdown } from "../../components/StreamingMarkdown";
import { useAgentName } from "./agentNames";
import { citationAt, citationClicked, withCitationLinks, type SourceAt } from "./citations";
import { ToolCard } from "./ToolCard";
import { agentChains, answerSpeed, type TimelineItem } from "./timeline";

/** What the message actions may do; null while a run goes on (nothing can change then). */
export interface MessageActions {
  /** Go on from the user's `turn`-th task with `text` (later messages are replaced). */
  resendFrom: (turn: number, text: string) => Promise<boolean>;
}

/** Where an item stands for its actions: the task it belongs to, and whether it is the last
 * answer (the one Regenerate replaces). */
interface Place {
  turn: number;
  /** The text of the task `turn`. */
  task: string;
  lastAnswer: boolean;
  /** Is anything shown after it? (Edit then replaces it, and asks first.) */
  followed: boolean;
}

/** Each item's place: turns counted over the user's own messages (depth 0), as the engine
 * counts them when it cuts a conversation. */
function places(items: TimelineItem[]): Map<string, Place> {
  const out = new Map<string, Place>();
  let turn = -1;
  let task = "";
  const lastAnswer = [...items]
    .reverse()
    .find((i) => i.kind === "assistant" && i.depth === 0 && i.prose.trim() !== "");
  const lastUser = [...items].reverse().find((i) => i.kind === "user" && i.depth === 0);
  items.forEach((item, index) => {
    if (item.kind === "user" && item.depth === 0) {
      turn += 1;
      task = item.text;
    }
    out.set(item.key, {
      turn,
      task,
      lastAnswer: item === lastAnswer && lastUser !== undefined && items.indexOf(lastUser) < index,
      followed: index < items.length - 1,
    });
  });
  return out;
}

/** Conversations longer than this are virtualised (only visible rows are in the DOM). */
const VIRTUALIZE_FROM = 150;

/** The conversation's messages, tool cards and hand-overs, kept scrolled to the end while it
 * grows. Out of sight (`shown` false: another screen shows) it is left as it is, and scrolled to
 * the end when shown again if it was there. */
export function Timeline({
  shown = true,
  items,
  conversationId,
  onOpenArtifact,
  actions = null,
}: {
  /** Is it in sight? */
  shown?: boolean;
  items: TimelineItem[];
  conversationId: string | null;
  onOpenArtifact: (id: string, at?: SourceAt) => void;
  actions?: MessageActions | null;
}) {
  const placed = places(items);
  const chains = agentChains(items);
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const virtualize = items.length > VIRTUALIZE_FROM;
  // TanStack Virtual returns fresh functions each render, so the React compiler skips this
  // component; that is expected and harmless here.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtual = useVirtualizer({
    count: virtualize ? items.length : 0,
    getScrollElement: () => scroller.current,
    estimateSize: () => 120,
    overscan: 8,
    initialRect: { width: 800, height: 600 },
  });
  useEffect(() => {
    // A hidden element has no height to scroll by: the end is reached once it shows.
    if (!shown || !stick.current || items.length === 0) return;
    if (virtualize) virtual.scrollToIndex(items.length - 1, { align: "end" });
    else scroller.current?.scrollTo?.({ top: scroller.current.scrollHeight });
  }, [items, virtual, virtualize, shown]);
  return (
    <div
      className={items.length === 0 ? "timeline empty" : "timeline"}
      ref={scroller}
      data-testid="timeline"
      onScroll={(e) => {
        const el = e.currentTarget;
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
      }}
    >
      {items.length === 0 && (
        <p className="muted">
          Ask an agent to research, write or organise something. Its tool calls appear here as they
          happen.
        </p>
      )}
      {!virtualize &&
        items.map((item) => (
          <div key={item.key} className="timeline-row">
            <TimelineEntry
              item={item}
              conversationId={conversationId}
              onOpenArtifact={onOpenArtifact}
              actions={actions}
              place={placed.get(item.key)}
              chain={chains.get(item.key)}
            />
          </div>
        ))}
      {virtualize && (
        <div style={{ height: virtual.getTotalSize(), position: "relative" }}>
          {virtual.getVirtualItems().map((row) => {
            const item = items[row.index];
            if (!item) return null;
            return (
              <div
                key={item.key}
                ref={virtual.measureElement}
                data-index={row.index}
                className="timeline-row"
                style={{
                  position: "absolute",
                  top: 0,
                  left: 0,
                  right: 0,
                  transform: `translateY(${row.start}px)`,
                }}
              >
                <TimelineEntry
                  item={item}
                  conversationId={conversationId}
                  onOpenArtifact={onOpenArtifact}
                  actions={actions}
                  place={placed.get(item.key)}
                  chain={chains.get(item.key)}
                />
              </div>
            );
          })}
        </div>
      )}
    </div>
  );
}

function indent(depth: number) {
  return { marginLeft: `${Math.min(depth, 4) * 24}px` };
}

function TimelineEntry({
  item,
  conversationId,
  onOpenArtifact,
  actions,
  place,
  chain,
}: {
  item: TimelineItem;
  conversationId: string | null;
  onOpenArtifact: (id: string, at?: SourceAt) => void;
  actions: MessageActions | null;
  place: Place | undefined;
  /** A sub-agent's tool call: who made it, then the tool. */
  chain?: string[] | undefined;
}) {
  const agentName = useAgentName();
  switch (item.kind) {
    case "user":
      return <UserMessage item={item} actions={actions} place={place} />;
    case "assistant": {
      const prose = item.prose.trim();
      if (!prose && !item.streaming) {
        // An answer that only called tools: the cards say it all; keep the token usage.
        return item.usage ? (
          <span className="usage muted small" style={indent(item.depth)} data-testid="usage">
            {agentName(item.agent)}: {usageText(item.usage)}
          </span>
        ) : null;
      }
      return (
        <div
          className="msg msg-assistant"
          style={indent(item.depth)}
          data-testid="msg-assistant"
          data-streaming={item.streaming}
        >
          <span className="msg-agent muted small">{agentName(item.agent)}</span>
          {item.citations.length > 0 ? (
            <div
              className="cited"
              onClick={(e) => {
                const cited = citationClicked(e.target, item.citations);
                if (!cited) return;
                e.preventDefault();
                onOpenArtifact(cited.artifact_id, citationAt(cited));
              }}
            >
              <StreamingMarkdown
                text={withCitationLinks(prose, item.citations)}
                streaming={item.streaming}
              />
            </div>
          ) : (
            <StreamingMarkdown text={prose} streaming={item.streaming} />
          )}
          <AnswerFooter item={item} prose={prose} actions={actions} place={place} />
        </div>
      );
    }
    case "tool":
      return (
        <div style={indent(item.depth)}>
          <ToolCard
            item={item}
            conversationId={conversationId}
            onOpenArtifact={onOpenArtifact}
            agentChain={chain}
          />
        </div>
      );
    case "tool_results":
      return (
        <details className="msg msg-tool" style={indent(item.depth)}>
          <summary className="muted small">Note to the model</summary>
          <pre className="code">{item.text}</pre>
        </details>
      );
    case "handover":
      return (
        <div className="handover" style={indent(item.depth - 1)} data-testid="handover">
          <strong>{agentName(item.from)}</strong> hands over to{" "}
          <strong>{agentName(item.to)}</strong>
          <p className="muted small">{item.instruction}</p>
        </div>
      );
    case "return":
      return (
        <div className="handover muted small" style={indent(item.depth)}>
          {agentName(item.from)} {item.success ? "finished" : "could not finish"}; back to{" "}
          {agentName(item.to)}
        </div>
      );
    case "context":
      return <ContextMarker item={item} />;
    case "run_end":
      return (
        <div className={`run-end run-${item.status}`} role="status" data-testid="run-end">
          {item.status === "cancelled" && "Run cancelled."}
          {item.status === "failed" && `Run failed: ${item.error ?? "unknown error"}`}
          {item.status === "interrupted" && "This run was interrupted when the app stopped."}
        </div>
      );
  }
}

/** Where the model's view was shortened: a divider (the messages above stay on screen, only
 * the model reads less), and the note it reads instead, behind a disclosure. */
function ContextMarker({ item }: { item: Extract<TimelineItem, { kind: "context" }> }) {
  const agentName = useAgentName();
  const results = item.resultsReferenced ?? 0;
  const referenced = `${results} older tool result${results === 1 ? "" : "s"} replaced by references`;
  const cut = item.resultsCut ?? 0;
  const cutText = `${cut === 1 ? "the latest tool result" : `the latest ${cut} tool results`} cut to fit the window`;
  // What the marker's line says: the note, else the references, else the cut.
  const headline = item.note !== null ? "note" : results === 0 && cut > 0 ? "cut" : "references";
  const details = [
    item.note !== null && item.messagesCondensed
      ? `${item.messagesCondensed} messages condensed`
      : null,
    headline === "note" && results > 0 ? referenced : null,
    headline !== "cut" && cut > 0 ? cutText : null,
    item.depth > 0 ? `for ${agentName(item.agent)}` : null,
  ].filter((d) => d !== null);
  return (
    <div
      className="context-marker"
      style={indent(item.depth)}
      data-testid="context-marker"
      data-kind={item.note === null ? "results" : "note"}
    >
      <p className="context-marker-line">
        <span>
          {headline === "note"
            ? "Earlier messages condensed for the model — the full history is kept"
            : headline === "references"
              ? `${referenced} for the model — the full results are kept`
              : `${cutText.charAt(0).toUpperCase()}${cutText.slice(1)} for the model — the full ${cut === 1 ? "result is" : "results are"} kept`}
        </span>
      </p>
      {(details.length > 0 || item.server) && (
        <p className="context-marker-details muted small">
          {details.join(" · ")}
          {item.server &&
            `${details.length > 0 ? " · " : ""}the model's server said the conversation was too long, so it was shortened and sent again`}
        </p>
      )}
      {item.note !== null && (
        <details className="context-note">
          <summary data-testid="context-note-toggle">Show what the model sees</summary>
          <div className="context-note-body" data-testid="context-note">
            <Markdown text={item.note} />
          </div>
        </details>
      )}
    </div>
  );
}

/** Token usage in words: numbers the server reported, "unknown" for what it did not. */
export function usageText(usage: { prompt: number | null; completion: number | null } | null) {
  if (!usage || (usage.prompt === null && usage.completion === null)) return "token usage unknown";
  const input = usage.prompt === null ? "input tokens unknown" : `${usage.prompt} tokens in`;
  const output = usage.completion === null ? "output unknown" : `${usage.completion} out`;
  return `${input} · ${output}`;
}

/** Local time of a message (hours and minutes; the exact time in its title). */
function Timestamp({ at }: { at: number | null }) {
  if (at === null) return null;
  const date = new Date(at);
  return (
    <time
      className="msg-time"
      dateTime={date.toISOString()}
      title={date.toLocaleString(undefined, { dateStyle: "full", timeStyle: "medium" })}
      data-testid="msg-time"
    >
      {date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })}
    </time>
  );
}

/** Copies `text` (the message's Markdown) and says so on the button. */
function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <button
      type="button"
      className="msg-action"
      aria-label={`Copy ${what}`}
      onClick={() => {
        void copyText(text).then(setCopied);
      }}
      onBlur={() => setCopied(null)}
      data-testid="msg-copy"
    >
      {copied === null ? "Copy" : copied ? "Copied" : "Copy failed"}
    </button>
  );
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

function UserMessage({
  item,
  actions,
  place,
}: {
  item: Extract<TimelineItem, { kind: "user" }>;
  actions: MessageActions | null;
  place: Place | undefined;
}) {
  const agentName = useAgentName();
  const [draft, setDraft] = useState<string | null>(null);
  const canEdit = actions !== null && place !== undefined && item.depth === 0;
  if (draft !== null && canEdit) {
    const resend = async () => {
      if (await actions.resendFrom(place.turn, draft)) setDraft(null);
    };
    return (
      <div className="msg msg-user msg-editing" data-testid="msg-user">
        <textarea
          aria-label="Edit message"
          value={draft}
          rows={3}
          autoFocus
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              e.preventDefault();
              setDraft(null);
            }
          }}
          data-testid="msg-edit-input"
        />
        <div className="msg-edit-actions">
          {place.followed ? (
            <ConfirmButton
              label="Resend the edited message"
              question="The messages after it are replaced by the new answer."
              confirmLabel="Replace and resend"
              disabled={!draft.trim()}
              onConfirm={resend}
            >
              Resend
            </ConfirmButton>
          ) : (
            <button type="button" disabled={!draft.trim()} onClick={() => void resend()}>
              Resend
            </button>
          )}
          <button type="button" onClick={() => setDraft(null)}>
            Keep as it was
          </button>
        </div>
      </div>
    );
  }
  return (
    <div className="msg msg-user" style={indent(item.depth)} data-testid="msg-user">
      {item.depth > 0 && (
        <span className="muted small">Instruction to {agentName(item.agent)}</span>
      )}
      {/* Shown as sent, but a trailing newline would be a blank line at the bubble's end. */}
      <p>{item.text.trimEnd()}</p>
      <div className="msg-meta muted small">
        <span className="msg-actions">
          <Timestamp at={item.at} />
          <CopyButton text={item.text} what="message" />
          {canEdit && (
            <button
              type="button"
              className="msg-action"
              aria-label="Edit and resend"
              onClick={() => setDraft(item.text)}
              data-testid="msg-edit"
            >
              Edit
            </button>
          )}
        </span>
      </div>
    </div>
  );
}

/** Under an answer: its usage and speed, and (on hover or focus) time, Copy, Regenerate. */
function AnswerFooter({
  item,
  prose,
  actions,
  place,
}: {
  item: Extract<TimelineItem, { kind: "assistant" }>;
  prose: string;
  actions: MessageActions | null;
  place: Place | undefined;
}) {
  const speed = answerSpeed(item);
  return (
    <div className="msg-meta muted small">
      {!item.streaming && (
        <span className="usage" data-testid="usage">
          {usageText(item.usage)}
        </span>
      )}
      {speed && speed.tokensPerSecond !== null && (
        <span
          className="speed"
          data-testid="speed"
          title={
            speed.estimated
              ? "Estimated from the streamed characters (about 4 per token): the server reported no token count"
              : "The server's token count over the streaming time"
          }
        >
          {speed.estimated ? "≈ " : ""}
          {speed.tokensPerSecond.toFixed(1)} tokens/s
          {speed.firstTokenMs !== null &&
            !item.streaming &&
            ` · first token after ${(speed.firstTokenMs / 1000).toFixed(1)} s`}
        </span>
      )}
      {!item.streaming && (
        <span className="msg-actions">
          <Timestamp at={item.at} />
          <CopyButton text={prose} what="answer" />
          {actions && place?.lastAnswer && (
            <ConfirmButton
              className="msg-action"
              label="Regenerate the answer"
              question="This answer is replaced by a new one."
              confirmLabel="Regenerate"
              onConfirm={async () => {
                await actions.resendFrom(place.turn, place.task);
              }}
            >
              Regenerate
            </ConfirmButton>
          )}
        </span>
      )}
    </div>
  );
}
