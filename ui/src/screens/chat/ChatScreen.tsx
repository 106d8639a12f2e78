import { useEffect, useRef, useState } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { Markdown } from "../../components/Markdown";
import { ArtifactViewer } from "./ArtifactViewer";
import { ToolCard } from "./ToolCard";
import { useChat } from "./useChat";
import type { TimelineItem } from "./timeline";

/** The chat. It opens `conversation` when it mounts, and reports the conversation it shows
 * through `onCurrentChange`, so coming back to the chat returns to it. */
export function ChatScreen({
  conversation = null,
  onCurrentChange,
}: {
  conversation?: string | null;
  onCurrentChange?: (id: string | null) => void;
}) {
  const [initial] = useState(conversation);
  const chat = useChat(initial);
  const { currentId } = chat;
  useEffect(() => {
    onCurrentChange?.(currentId);
  }, [currentId, onCurrentChange]);
  const [viewing, setViewing] = useState<string | null>(null);
  return (
    <section className="chat" aria-labelledby="screen-title">
      <ConversationList chat={chat} />
      <div className="chat-main">
        <ChatHeader chat={chat} />
        <Timeline
          items={chat.chat.items}
          conversationId={chat.currentId}
          onOpenArtifact={setViewing}
        />
        {chat.chat.callingTool && (
          <p className="calling" role="status" data-testid="calling-tool">
            Calling {chat.chat.callingTool}…
          </p>
        )}
        {chat.exported && (
          <p className="muted small" role="status" data-testid="conversation-exported">
            Exported to {chat.exported}
          </p>
        )}
        {chat.error && (
          <p className="chat-error" role="alert" data-testid="chat-error">
            {chat.error}
          </p>
        )}
        <Composer chat={chat} />
        {viewing && chat.currentId && (
          <ArtifactViewer
            conversationId={chat.currentId}
            id={viewing}
            onClose={() => setViewing(null)}
          />
        )}
      </div>
    </section>
  );
}

type Chat = ReturnType<typeof useChat>;

function ConversationList({ chat }: { chat: Chat }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [exporting, setExporting] = useState<string | null>(null);
  const [title, setTitle] = useState("");
  return (
    <aside className="conv-list" aria-label="Conversations">
      <div className="conv-list-top">
        <button
          type="button"
          className="primary"
          onClick={() => void chat.open(null)}
          data-testid="new-conversation"
        >
          New conversation
        </button>
        <input
          type="search"
          placeholder="Search conversations"
          aria-label="Search conversations"
          value={chat.query}
          onChange={(e) => chat.setQuery(e.target.value)}
        />
      </div>
      <ul>
        {chat.conversations.map((c) => (
          <li key={c.id} className={c.id === chat.currentId ? "current" : undefined}>
            {editing === c.id ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void chat.rename(c.id, title);
                  setEditing(null);
                }}
              >
                <input
                  aria-label="Conversation title"
                  value={title}
                  autoFocus
                  onChange={(e) => setTitle(e.target.value)}
                  onKeyDown={(e) => e.key === "Escape" && setEditing(null)}
                />
              </form>
            ) : (
              <button
                type="button"
                className="conv-item"
                aria-current={c.id === chat.currentId ? "true" : undefined}
                onClick={() => void chat.open(c.id)}
                data-testid="conversation-item"
              >
                <span className="conv-title">{c.title || "Untitled"}</span>
                <span className="muted small">
                  {c.agent}
                  {c.last_status && c.last_status !== "completed" ? ` · ${c.last_status}` : ""}
                </span>
              </button>
            )}
            {confirming === c.id ? (
              <span className="conv-actions">
                Delete?
                <button
                  type="button"
                  onClick={() => void chat.remove(c.id).then(() => setConfirming(null))}
                >
                  Yes
                </button>
                <button type="button" onClick={() => setConfirming(null)}>
                  No
                </button>
              </span>
            ) : exporting === c.id ? (
              <span className="conv-actions" data-testid="export-choice">
                Export as
                {(["md", "json"] as const).map((format) => (
                  <button
                    key={format}
                    type="button"
                    onClick={() =>
                      void chat.exportConversation(c.id, format).then(() => setExporting(null))
                    }
                  >
                    {format === "md" ? "Markdown" : "JSON"}
                  </button>
                ))}
                <button type="button" onClick={() => setExporting(null)}>
                  Cancel
                </button>
              </span>
            ) : (
              <span className="conv-actions">
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Export ${c.title}`}
                  onClick={() => setExporting(c.id)}
                >
                  Export
                </button>
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Rename ${c.title}`}
                  onClick={() => {
                    setTitle(c.title);
                    setEditing(c.id);
                  }}
                >
                  Rename
                </button>
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Delete ${c.title}`}
                  onClick={() => setConfirming(c.id)}
                >
                  Delete
                </button>
              </span>
            )}
          </li>
        ))}
        {chat.conversations.length === 0 && <li className="muted small">No conversations yet.</li>}
      </ul>
    </aside>
  );
}

function ChatHeader({ chat }: { chat: Chat }) {
  const title = chat.conversations.find((c) => c.id === chat.currentId)?.title;
  return (
    <header className="chat-header">
      <h1 id="screen-title">{chat.currentId ? title || "Conversation" : "New conversation"}</h1>
      <label className="agent-picker">
        Agent{" "}
        <select
          value={chat.agent}
          onChange={(e) => chat.setAgent(e.target.value)}
          disabled={chat.chat.running}
          data-testid="agent-picker"
        >
          {chat.agents.map((a) => (
            <option key={a.name} value={a.name} title={a.description}>
              {a.name}
            </option>
          ))}
        </select>
      </label>
      {chat.chat.running && (
        <span className="badge badge-running" data-testid="run-status">
          Running
        </span>
      )}
    </header>
  );
}

/** Conversations longer than this are virtualised (only visible rows are in the DOM). */
const VIRTUALIZE_FROM = 150;

function Timeline({
  items,
  conversationId,
  onOpenArtifact,
}: {
  items: TimelineItem[];
  conversationId: string | null;
  onOpenArtifact: (id: string) => void;
}) {
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
    if (!stick.current || items.length === 0) return;
    if (virtualize) virtual.scrollToIndex(items.length - 1, { align: "end" });
    else scroller.current?.scrollTo?.({ top: scroller.current.scrollHeight });
  }, [items, virtual, virtualize]);
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
}: {
  item: TimelineItem;
  conversationId: string | null;
  onOpenArtifact: (id: string) => void;
}) {
  switch (item.kind) {
    case "user":
      return (
        <div className="msg msg-user" style={indent(item.depth)} data-testid="msg-user">
          {item.depth > 0 && <span className="muted small">Instruction to {item.agent}</span>}
          <p>{item.text}</p>
        </div>
      );
    case "assistant": {
      const prose = stripCalls(item.text);
      if (!prose && !item.streaming) {
        // An answer that only called tools: the cards say it all; keep the token usage.
        return item.usage ? (
          <span className="usage muted small" style={indent(item.depth)} data-testid="usage">
            {item.agent}: {item.usage.prompt ?? "?"} tokens in · {item.usage.completion ?? "?"} out
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
          <span className="msg-agent muted small">{item.agent}</span>
          <Markdown text={prose} />
          {item.usage && (item.usage.prompt !== null || item.usage.completion !== null) && (
            <span className="usage muted small" data-testid="usage">
              {item.usage.prompt ?? "?"} tokens in · {item.usage.completion ?? "?"} out
            </span>
          )}
        </div>
      );
    }
    case "tool":
      return (
        <div style={indent(item.depth)}>
          <ToolCard item={item} conversationId={conversationId} onOpenArtifact={onOpenArtifact} />
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
          <strong>{item.from}</strong> hands over to <strong>{item.to}</strong>
          <p className="muted small">{item.instruction}</p>
        </div>
      );
    case "return":
      return (
        <div className="handover muted small" style={indent(item.depth)}>
          {item.from} {item.success ? "finished" : "could not finish"}; back to {item.to}
        </div>
      );
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

/** The assistant's prose without the raw tool-call XML (the calls are shown as cards). */
export function stripCalls(text: string): string {
  return text.replace(/<tool_call>[\s\S]*?(<\/tool_call>|$)/g, "").trim();
}

function Composer({ chat }: { chat: Chat }) {
  const [text, setText] = useState("");
  const running = chat.chat.running;
  const last = chat.chat.items[chat.chat.items.length - 1];
  const canRetry = !running && last?.kind === "run_end";
  const submit = async () => {
    if (await chat.send(text)) setText("");
  };
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <textarea
        aria-label="Message"
        placeholder={
          chat.agent
            ? `Message ${chat.agent} (Enter to send, Shift+Enter for a new line)`
            : "No agent available"
        }
        value={text}
        rows={3}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            void submit();
          }
        }}
        data-testid="composer-input"
      />
      <div className="composer-actions">
        {canRetry && (
          <button type="button" onClick={() => void chat.retry()} data-testid="retry">
            Retry
          </button>
        )}
        {running ? (
          <button type="button" onClick={() => void chat.cancel()} data-testid="cancel-run">
            Cancel
          </button>
        ) : (
          <button
            type="submit"
            className="primary"
            disabled={!text.trim() || !chat.agent}
            data-testid="send"
          >
            Send
          </button>
        )}
      </div>
    </form>
  );
}
