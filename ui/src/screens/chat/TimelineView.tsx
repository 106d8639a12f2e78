import { useEffect, useRef } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { StreamingMarkdown } from "../../components/StreamingMarkdown";
import { ToolCard } from "./ToolCard";
import type { TimelineItem } from "./timeline";

/** Conversations longer than this are virtualised (only visible rows are in the DOM). */
const VIRTUALIZE_FROM = 150;

/** The conversation's messages, tool cards and hand-overs, kept scrolled to the end while it grows. */
export function Timeline({
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
          <StreamingMarkdown text={prose} streaming={item.streaming} />
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
