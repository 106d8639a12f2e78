import { useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import type { ConversationSummary } from "../../bindings";
import { withGroups, type ListRow } from "./dateGroups";
import { mark } from "./firstPage";
import type { useChat } from "./useChat";

type Chat = ReturnType<typeof useChat>;

/** Longer lists keep only the rows in view in the DOM (a year of use is thousands of rows). */
const VIRTUALIZE_FROM = 40;
/** Row heights, fixed (see `.conv-scroll li` in styles.css), so the list never measures. */
const ITEM_HEIGHT = 52;
const GROUP_HEIGHT = 30;
/** What a row's inline confirmation ("Delete? Yes No") or export choice adds. */
const ACTIONS_HEIGHT = 36;
/** How close to the end of the loaded rows (px) the list asks for the next page. */
const NEAR_END = 20 * ITEM_HEIGHT;

/** The conversations: new, search, open, and rename, export, delete from each row's menu,
 * grouped by date and loaded a page at a time as the list scrolls. */
export function ConversationList({ chat }: { chat: Chat }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [exporting, setExporting] = useState<string | null>(null);
  const [menu, setMenu] = useState<string | null>(null);
  const [title, setTitle] = useState("");
  const rows = useMemo(() => withGroups(chat.conversations), [chat.conversations]);
  const searching = chat.query.trim() !== "";

  const row = (c: ConversationSummary) => (
    <div className={c.id === chat.currentId ? "conv-row current" : "conv-row"}>
      {editing === c.id ? (
        <form
          className="conv-rename"
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
            autoFocus
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
        editing !== c.id && (
          <RowMenu
            title={c.title || "Untitled"}
            open={menu === c.id}
            onOpenChange={(open) => setMenu(open ? c.id : null)}
            onRename={() => {
              setTitle(c.title);
              setEditing(c.id);
            }}
            onExport={() => setExporting(c.id)}
            onDelete={() => setConfirming(c.id)}
          />
        )
      )}
    </div>
  );

  return (
    <aside className="conv-list" aria-label="Conversations" id="conversation-list">
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
          data-testid="conversation-search"
        />
      </div>
      <Rows
        rows={rows}
        expanded={confirming ?? exporting}
        total={chat.total}
        loaded={chat.conversations.length}
        onNeedMore={() => void chat.loadMore()}
        render={row}
        busy={chat.listLoadedFor !== chat.query.trim()}
        // A failed page is asked again only by Retry (or Show more), never in a loop.
        paused={chat.listLoadingMore || chat.listError !== null}
      />
      {chat.listError && (
        <p
          className="chat-error small conv-empty"
          role="alert"
          data-testid="conversation-list-error"
        >
          {chat.listError}{" "}
          <button type="button" className="link-button" onClick={chat.retryList}>
            Retry
          </button>
        </p>
      )}
      {chat.listLoadedFor !== null && chat.conversations.length === 0 && (
        <p className="muted small conv-empty" data-testid="no-conversations">
          {searching ? "No conversation matches." : "No conversations yet."}
        </p>
      )}
    </aside>
  );
}

/** The rows: plain while short, virtualised beyond [`VIRTUALIZE_FROM`] rows; the next page is
 * asked for when the last loaded rows come into view. */
function Rows(props: {
  rows: ListRow<ConversationSummary>[];
  /** The row showing its inline confirmation or export choice, taller than the others. */
  expanded: string | null;
  total: number;
  loaded: number;
  busy: boolean;
  /** A page is on its way, or the last one failed: ask for none now. */
  paused: boolean;
  onNeedMore: () => void;
  render: (c: ConversationSummary) => React.ReactNode;
}) {
  const { rows, total, loaded, onNeedMore, expanded, busy, paused } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const virtualize = rows.length > VIRTUALIZE_FROM;
  // TanStack Virtual returns fresh functions each render, so the React compiler skips this
  // component; that is expected and harmless here.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtual = useVirtualizer({
    count: virtualize ? rows.length : 0,
    getScrollElement: () => scroller.current,
    estimateSize: (i) => {
      const r = rows[i];
      if (r?.kind === "group") return GROUP_HEIGHT;
      return r?.item.id === expanded ? ITEM_HEIGHT + ACTIONS_HEIGHT : ITEM_HEIGHT;
    },
    overscan: 10,
    initialRect: { width: 260, height: 600 },
    getItemKey: (i) => {
      const r = rows[i];
      return !r ? i : r.kind === "group" ? `g:${r.label}` : r.item.id;
    },
  });
  useEffect(() => virtual.measure(), [virtual, expanded]);
  // When the window first has conversations in its DOM (the startup benchmark reads it);
  // a layout effect, so the mark is there as soon as the rows are.
  useLayoutEffect(() => {
    if (rows.length > 0) mark("list-shown", true);
  }, [rows.length]);
  const shown = virtual.getVirtualItems();
  const last = shown.at(-1)?.index ?? -1;

  /** Whether the list sits near the end of what is loaded, with more to load: by the rows the
   * virtualiser shows, or by the scroll position itself (which does not depend on the
   * virtualiser having caught up with the last scroll). */
  const wantsMore = () => {
    if (!virtualize || loaded >= total || busy || paused) return false;
    if (last >= rows.length - 20) return true;
    const el = scroller.current;
    // Without layout (nothing to scroll) the rows in view decide alone.
    if (!el || el.scrollHeight <= el.clientHeight) return false;
    return el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_END;
  };
  // After every render: a page arriving, dropped or failing, a refresh, a scroll the
  // virtualiser rendered. Cheap, and nothing can leave the list at its end without asking.
  useEffect(() => {
    if (wantsMore()) onNeedMore();
  });

  const content = (r: ListRow<ConversationSummary>) =>
    r.kind === "group" ? (
      <h2 className="conv-group" data-testid="conversation-group">
        {r.label}
      </h2>
    ) : (
      props.render(r.item)
    );
  return (
    <div
      className="conv-scroll"
      ref={scroller}
      data-testid="conversation-list"
      aria-busy={busy || undefined}
      onScroll={() => wantsMore() && onNeedMore()}
    >
      {virtualize ? (
        <ul style={{ height: virtual.getTotalSize(), position: "relative" }}>
          {shown.map((v) => {
            const r = rows[v.index];
            return r ? (
              <li
                key={v.key}
                style={{
                  position: "absolute",
                  top: 0,
                  left: 0,
                  right: 0,
                  height: v.size,
                  transform: `translateY(${v.start}px)`,
                }}
              >
                {content(r)}
              </li>
            ) : null;
          })}
        </ul>
      ) : (
        <ul>
          {rows.map((r) => (
            <li key={r.kind === "group" ? `g:${r.label}` : r.item.id}>{content(r)}</li>
          ))}
        </ul>
      )}
      {virtualize && loaded < total && (
        <button type="button" className="link-button conv-more" onClick={onNeedMore}>
          Show more ({total - loaded} left)
        </button>
      )}
    </div>
  );
}

/** A row's "…" button and its menu (Rename, Export, Delete). The button shows on hover or
 * focus; the menu opens with a click, Enter or Space, its items are reached with the arrow
 * keys, and Escape closes it and puts the focus back on the button. */
function RowMenu(props: {
  title: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onRename: () => void;
  onExport: () => void;
  onDelete: () => void;
}) {
  const button = useRef<HTMLButtonElement>(null);
  const list = useRef<HTMLDivElement>(null);
  const frame = useRef<HTMLDivElement>(null);
  const { open, onOpenChange } = props;
  const change = useRef(onOpenChange);
  useEffect(() => {
    change.current = onOpenChange;
  }, [onOpenChange]);
  useEffect(() => {
    if (!open) return;
    list.current?.querySelector<HTMLElement>("[role=menuitem]")?.focus();
    // A press anywhere else closes it (on pointer down: a click on a menu item must not).
    const outside = (e: PointerEvent) => {
      if (!frame.current?.contains(e.target as Node)) change.current(false);
    };
    document.addEventListener("pointerdown", outside);
    return () => document.removeEventListener("pointerdown", outside);
  }, [open]);
  const close = (refocus: boolean) => {
    onOpenChange(false);
    if (refocus) button.current?.focus();
  };
  const choose = (action: () => void) => () => {
    onOpenChange(false);
    action();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const items = [...(list.current?.querySelectorAll<HTMLElement>("[role=menuitem]") ?? [])];
    const at = items.indexOf(document.activeElement as HTMLElement);
    const move = (to: number) => {
      e.preventDefault();
      items[(to + items.length) % items.length]?.focus();
    };
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      close(true);
    } else if (e.key === "ArrowDown") move(at + 1);
    else if (e.key === "ArrowUp") move(at - 1);
    else if (e.key === "Home") move(0);
    else if (e.key === "End") move(items.length - 1);
    else if (e.key === "Tab") close(false);
  };
  return (
    <div className="conv-menu" ref={frame}>
      <button
        ref={button}
        type="button"
        className="conv-menu-button"
        aria-label={`Actions for ${props.title}`}
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={() => onOpenChange(!open)}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown" && !open) {
            e.preventDefault();
            onOpenChange(true);
          }
        }}
      >
        …
      </button>
      {open && (
        <div
          ref={list}
          role="menu"
          aria-label={`Actions for ${props.title}`}
          className="conv-menu-list"
          onKeyDown={onKeyDown}
        >
          <button type="button" role="menuitem" tabIndex={-1} onClick={choose(props.onRename)}>
            Rename
          </button>
          <button type="button" role="menuitem" tabIndex={-1} onClick={choose(props.onExport)}>
            Export
          </button>
          <button
            type="button"
            role="menuitem"
            tabIndex={-1}
            className="danger-text"
            onClick={choose(props.onDelete)}
          >
            Delete
          </button>
        </div>
      )}
    </div>
  );
}
