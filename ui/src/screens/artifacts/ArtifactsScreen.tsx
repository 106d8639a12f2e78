import { useEffect, useRef, useState } from "react";
import { RelativeTime } from "../../components/RelativeTime";
import { useVirtualizer } from "@tanstack/react-virtual";
import { diffLines } from "diff";
import {
  commands,
  type ArtifactSummary,
  type ArtifactView,
  type ConversationSummary,
  type VersionInfo,
} from "../../bindings";
import { BinaryContent, formatSize } from "../../components/BinaryContent";
import { ConfirmButton } from "../../components/ConfirmButton";
import { SourcePassage, WHOLE_SOURCE } from "../../components/SourcePassage";
import { call, errorMessage } from "../../ipc/call";
import { AddSources } from "./AddSources";
import { ArtifactBody } from "./ArtifactBody";
import { EMPTY_FILTER, useLibrary, type LibraryFilter } from "./useLibrary";

const TYPES = [
  "text/markdown",
  "text/plain",
  "application/json",
  "text/csv",
  "text/html",
  "text/x-python",
];

/** Every artifact across conversations: search, filter, sort, view, history with diffs,
 * export, open the conversation that made it, delete. The list is virtualised and pages in
 * 100 at a time as it scrolls. */
export function ArtifactsScreen({
  onOpenConversation,
  open = null,
}: {
  onOpenConversation?: (conversationId: string) => void;
  /** An artifact to show first (the command palette opens one). */
  open?: ArtifactSummary | null;
}) {
  const lib = useLibrary();
  const conversations = useConversations();
  const [selected, setSelected] = useState<ArtifactSummary | null>(open);
  const set = (patch: Partial<LibraryFilter>) => lib.setFilter({ ...lib.filter, ...patch });
  const filtered =
    lib.filter.text !== "" ||
    lib.filter.contentType !== "" ||
    lib.filter.source !== "" ||
    lib.filter.conversationId !== "" ||
    lib.filter.from !== "" ||
    lib.filter.to !== "";
  return (
    <section className="library" aria-labelledby="screen-title">
      <div className="library-list">
        <h1 id="screen-title" tabIndex={-1}>
          Artifacts
        </h1>
        <AddSources onAdded={lib.refresh} />
        <div className="library-filters">
          <input
            type="search"
            aria-label="Search artifacts"
            placeholder="Search titles and content"
            value={lib.filter.text}
            onChange={(e) => set({ text: e.target.value })}
            data-testid="artifact-search"
          />
          <select
            aria-label="Content type"
            value={lib.filter.contentType}
            onChange={(e) => set({ contentType: e.target.value })}
          >
            <option value="">All types</option>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
          <select
            aria-label="Source"
            value={lib.filter.source}
            onChange={(e) => set({ source: e.target.value as LibraryFilter["source"] })}
          >
            <option value="">All sources</option>
            <option value="agent">agent</option>
            <option value="tool">tool</option>
            <option value="user">user</option>
          </select>
          <select
            aria-label="Conversation"
            value={lib.filter.conversationId}
            onChange={(e) => set({ conversationId: e.target.value })}
            data-testid="artifact-conversation"
          >
            <option value="">All conversations</option>
            {conversations.map((c) => (
              <option key={c.id} value={c.id}>
                {c.title || c.id}
              </option>
            ))}
          </select>
          <label className="date-filter">
            Changed from
            <input
              type="date"
              value={lib.filter.from}
              onChange={(e) => set({ from: e.target.value })}
              data-testid="artifact-from"
            />
          </label>
          <label className="date-filter">
            to
            <input
              type="date"
              value={lib.filter.to}
              onChange={(e) => set({ to: e.target.value })}
              data-testid="artifact-to"
            />
          </label>
          <select
            aria-label="Sort"
            value={lib.filter.sort}
            onChange={(e) => set({ sort: e.target.value as LibraryFilter["sort"] })}
            data-testid="artifact-sort"
          >
            <option value="relevance">{lib.filter.text ? "Best match" : "Newest first"}</option>
            <option value="newest">Newest first</option>
            <option value="oldest">Oldest first</option>
            <option value="title">Title A–Z</option>
            <option value="largest">Largest first</option>
          </select>
          {filtered && (
            <button
              type="button"
              className="link-button"
              onClick={() => lib.setFilter(EMPTY_FILTER)}
            >
              Clear filters
            </button>
          )}
        </div>
        <p className="muted small" data-testid="artifact-count">
          {lib.total} {lib.total === 1 ? "artifact" : "artifacts"}
        </p>
        {lib.error && <p role="alert">{lib.error}</p>}
        <LibraryList
          items={lib.items}
          total={lib.total}
          selected={selected}
          onSelect={setSelected}
          onNeedMore={() => void lib.loadMore()}
          empty={
            lib.error
              ? null
              : filtered
                ? "Nothing matches."
                : "No artifacts yet: agents create them as they work."
          }
        />
      </div>
      <div className="library-viewer">
        {selected ? (
          <Viewer
            key={`${selected.conversation_id}/${selected.id}`}
            summary={selected}
            conversationTitle={conversations.find((c) => c.id === selected.conversation_id)?.title}
            onOpenConversation={onOpenConversation}
            onDeleted={() => {
              setSelected(null);
              lib.refresh();
            }}
          />
        ) : (
          <p className="muted">Select an artifact to view it.</p>
        )}
      </div>
    </section>
  );
}

/** Conversations for the filter and for naming where an artifact came from. */
function useConversations() {
  const [list, setList] = useState<ConversationSummary[]>([]);
  useEffect(() => {
    let alive = true;
    // Without the list the filter offers no conversations; the library itself still works.
    call(commands.listConversations(null))
      .then((list) => alive && setList(list))
      .catch(() => {});
    return () => {
      alive = false;
    };
  }, []);
  return list;
}

const ROW_HEIGHT = 56;
/** Longer lists keep only the rows in view in the DOM. */
const VIRTUALIZE_FROM = 150;

/** The list: plain while short, virtualised beyond 150 rows (only the rows in view are in the
 * DOM), and the next page is asked for when the last loaded rows come into view. */
function LibraryList(props: {
  items: ArtifactSummary[];
  total: number;
  selected: ArtifactSummary | null;
  onSelect: (s: ArtifactSummary) => void;
  onNeedMore: () => void;
  /** Shown in the list's own place (not below it) when there is nothing to list. */
  empty: string | null;
}) {
  const { items, total, selected, onNeedMore } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const virtualize = items.length > VIRTUALIZE_FROM;
  // TanStack Virtual returns fresh functions each render, so the React compiler skips this
  // component; that is expected and harmless here.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtual = useVirtualizer({
    count: virtualize ? items.length : 0,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
    initialRect: { width: 360, height: 700 },
  });
  const rows = virtual.getVirtualItems();
  const last = rows.at(-1)?.index ?? -1;
  useEffect(() => {
    if (virtualize && items.length < total && last >= items.length - 20) onNeedMore();
  }, [virtualize, last, items.length, total, onNeedMore]);
  const row = (a: ArtifactSummary) => {
    const current = selected?.id === a.id && selected.conversation_id === a.conversation_id;
    return (
      <button
        type="button"
        className="conv-item"
        aria-current={current ? "true" : undefined}
        onClick={() => props.onSelect(a)}
        data-testid="artifact-item"
      >
        <span className="conv-title">{a.title || a.id}</span>
        <span className="muted small">
          {a.id} · {a.content_type} · {a.source} · v{a.version} ·{" "}
          {a.binary ? formatSize(a.size_bytes) : `${a.line_count} lines`}
        </span>
      </button>
    );
  };
  return (
    <div className="library-items" ref={scroller} data-testid="artifact-list">
      {items.length === 0 && props.empty !== null && (
        <p className="muted library-empty" data-testid="library-empty">
          {props.empty}
        </p>
      )}
      {virtualize ? (
        <ul style={{ height: virtual.getTotalSize(), position: "relative" }}>
          {rows.map((r) => {
            const a = items[r.index];
            return a ? (
              <li
                key={`${a.conversation_id}/${a.id}`}
                style={{
                  position: "absolute",
                  top: 0,
                  left: 0,
                  right: 0,
                  transform: `translateY(${r.start}px)`,
                }}
              >
                {row(a)}
              </li>
            ) : null;
          })}
        </ul>
      ) : (
        <ul>
          {items.map((a) => (
            <li key={`${a.conversation_id}/${a.id}`}>{row(a)}</li>
          ))}
        </ul>
      )}
      {items.length < total && (
        <button type="button" onClick={onNeedMore}>
          Show more ({total - items.length} left)
        </button>
      )}
    </div>
  );
}

function Viewer(props: {
  summary: ArtifactSummary;
  conversationTitle: string | undefined;
  onOpenConversation: ((conversationId: string) => void) | undefined;
  onDeleted: () => void;
}) {
  const { summary: a, onDeleted } = props;
  const [exported, setExported] = useState<string | null>(null);
  const [tab, setTab] = useState<"view" | "history">("view");
  const [view, setView] = useState<ArtifactView | null>(null);
  const [versions, setVersions] = useState<VersionInfo[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    // Binary content is shown by BinaryContent; it has one version and no text.
    if (a.binary) return;
    let alive = true;
    void call(commands.getArtifactVersion(a.conversation_id, a.id, null)).then(
      (view) => alive && setView(view),
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    void call(commands.artifactVersions(a.conversation_id, a.id)).then(
      (versions) => alive && setVersions(versions),
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [a.conversation_id, a.id, a.version, a.binary]);

  const copy = () => void globalThis.navigator?.clipboard?.writeText(view?.content ?? "");
  return (
    <article data-testid="library-viewer">
      <header className="viewer-header">
        <h2>{a.title || a.id}</h2>
        <p className="muted small">
          {a.id} · {a.content_type} · from {a.source} · conversation{" "}
          {props.conversationTitle ?? a.conversation_id} ·{" "}
          {a.binary ? formatSize(a.size_bytes) : `version ${a.version}`} · updated{" "}
          <RelativeTime value={a.updated_at} />
        </p>
        <div className="viewer-actions">
          {!a.binary && (
            <>
              <div role="tablist" aria-label="Artifact" className="viewer-tabs">
                <button
                  type="button"
                  role="tab"
                  aria-selected={tab === "view"}
                  onClick={() => setTab("view")}
                >
                  View
                </button>
                <button
                  type="button"
                  role="tab"
                  aria-selected={tab === "history"}
                  onClick={() => setTab("history")}
                  data-testid="history-tab"
                >
                  History ({versions.length})
                </button>
              </div>
              <button type="button" onClick={copy}>
                Copy
              </button>
            </>
          )}
          <button
            type="button"
            data-testid="export-artifact"
            onClick={() =>
              void call(commands.exportArtifact(a.conversation_id, a.id, null)).then(
                (path) => path !== null && setExported(path),
                (e: unknown) => setError(errorMessage(e)),
              )
            }
          >
            {a.binary ? "Save as…" : "Export…"}
          </button>
          {props.onOpenConversation && (
            <button
              type="button"
              data-testid="open-conversation"
              onClick={() => props.onOpenConversation?.(a.conversation_id)}
            >
              Open conversation
            </button>
          )}
          <ConfirmButton
            question={`Delete ${a.id} and all its versions?`}
            confirmLabel="Delete"
            onConfirm={async () => {
              try {
                await call(commands.deleteArtifact(a.conversation_id, a.id));
                onDeleted();
              } catch (e) {
                setError(errorMessage(e));
              }
            }}
          >
            Delete
          </ConfirmButton>
        </div>
      </header>
      {error && <p role="alert">{error}</p>}
      {exported && (
        <p role="status" className="muted small" data-testid="exported">
          Exported to {exported}
        </p>
      )}
      {a.binary && (
        <div className="artifact-body" data-testid="artifact-content">
          <BinaryContent
            conversationId={a.conversation_id}
            id={a.id}
            mime={a.content_type}
            sizeBytes={a.size_bytes}
            title={a.title}
          />
        </div>
      )}
      {!a.binary && tab === "view" && view && (
        <div className="artifact-body" data-testid="artifact-content">
          {isSource(a) ? (
            <SourcePassage content={view.content} at={WHOLE_SOURCE} />
          ) : (
            <ArtifactBody contentType={view.content_type} content={view.content} />
          )}
        </div>
      )}
      {!a.binary && tab === "history" && (
        <History conversationId={a.conversation_id} id={a.id} versions={versions} />
      )}
    </article>
  );
}

function History(props: { conversationId: string; id: string; versions: VersionInfo[] }) {
  const last = props.versions.at(-1)?.version ?? 1;
  const [from, setFrom] = useState(Math.max(1, last - 1));
  const [to, setTo] = useState(last);
  const [texts, setTexts] = useState<[string, string] | null>(null);
  useEffect(() => {
    let alive = true;
    void Promise.all([
      call(commands.getArtifactVersion(props.conversationId, props.id, from)),
      call(commands.getArtifactVersion(props.conversationId, props.id, to)),
    ]).then(
      ([a, b]) => alive && setTexts([a.content, b.content]),
      // The versions were listed a moment ago; one that vanished leaves the diff empty.
      () => {},
    );
    return () => {
      alive = false;
    };
  }, [props.conversationId, props.id, from, to]);
  const pick = (label: string, value: number, set: (v: number) => void) => (
    <label>
      {label}{" "}
      <select value={value} onChange={(e) => set(Number(e.target.value))}>
        {props.versions.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version} · <RelativeTime value={v.created_at} />
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <div>
      <div className="viewer-actions">
        {pick("From", from, setFrom)}
        {pick("to", to, setTo)}
      </div>
      {texts && (
        <pre className="code diff" data-testid="diff">
          {diffLines(texts[0], texts[1]).map((part, i) => (
            <span
              key={i}
              className={part.added ? "diff-add" : part.removed ? "diff-del" : undefined}
            >
              {part.value
                .split("\n")
                .filter((line, j, all) => j < all.length - 1 || line !== "")
                .map((line) => `${part.added ? "+" : part.removed ? "-" : " "} ${line}\n`)
                .join("")}
            </span>
          ))}
        </pre>
      )}
    </div>
  );
}

/** One of the user's own sources (a file added to the library), shown with its pages. */
function isSource(a: ArtifactSummary): boolean {
  return a.conversation_id === "" && a.source === "user" && a.id.startsWith("src_");
}
