import { useEffect, useState } from "react";
import { diffLines } from "diff";
import {
  commands,
  type ArtifactSummary,
  type ArtifactView,
  type VersionInfo,
} from "../../bindings";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ArtifactBody } from "./ArtifactBody";
import { useLibrary } from "./useLibrary";

const TYPES = [
  "text/markdown",
  "text/plain",
  "application/json",
  "text/csv",
  "text/html",
  "text/x-python",
];

/** Every artifact across conversations: search, filter, view, history with diffs, delete. */
export function ArtifactsScreen() {
  const lib = useLibrary();
  const [selected, setSelected] = useState<ArtifactSummary | null>(null);
  return (
    <section className="library" aria-labelledby="screen-title">
      <div className="library-list">
        <h1 id="screen-title">Artifacts</h1>
        <div className="library-filters">
          <input
            type="search"
            aria-label="Search artifacts"
            placeholder="Search titles and content"
            value={lib.filter.text}
            onChange={(e) => lib.setFilter({ ...lib.filter, text: e.target.value })}
            data-testid="artifact-search"
          />
          <select
            aria-label="Content type"
            value={lib.filter.contentType}
            onChange={(e) => lib.setFilter({ ...lib.filter, contentType: e.target.value })}
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
            onChange={(e) =>
              lib.setFilter({ ...lib.filter, source: e.target.value as typeof lib.filter.source })
            }
          >
            <option value="">All sources</option>
            <option value="agent">agent</option>
            <option value="tool">tool</option>
            <option value="user">user</option>
          </select>
        </div>
        <p className="muted small" data-testid="artifact-count">
          {lib.total} {lib.total === 1 ? "artifact" : "artifacts"}
        </p>
        {lib.error && <p role="alert">{lib.error}</p>}
        <ul className="library-items">
          {lib.items.map((s) => {
            const a = s;
            const key = `${a.conversation_id}/${a.id}`;
            const current = selected?.id === a.id && selected.conversation_id === a.conversation_id;
            return (
              <li key={key}>
                <button
                  type="button"
                  className="conv-item"
                  aria-current={current ? "true" : undefined}
                  onClick={() => setSelected(s)}
                  data-testid="artifact-item"
                >
                  <span className="conv-title">{a.title || a.id}</span>
                  <span className="muted small">
                    {a.id} · {a.content_type} · {a.source} · v{a.version} · {s.line_count} lines
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
        {lib.items.length < lib.total && (
          <button type="button" onClick={() => void lib.loadMore()}>
            Show more
          </button>
        )}
        {lib.items.length === 0 && !lib.error && (
          <p className="muted">
            {lib.filter.text
              ? "Nothing matches."
              : "No artifacts yet: agents create them as they work."}
          </p>
        )}
      </div>
      <div className="library-viewer">
        {selected ? (
          <Viewer
            key={`${selected.conversation_id}/${selected.id}`}
            summary={selected}
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

function Viewer({ summary, onDeleted }: { summary: ArtifactSummary; onDeleted: () => void }) {
  const a = summary;
  const [tab, setTab] = useState<"view" | "history">("view");
  const [view, setView] = useState<ArtifactView | null>(null);
  const [versions, setVersions] = useState<VersionInfo[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let alive = true;
    void commands.getArtifactVersion(a.conversation_id, a.id, null).then((res) => {
      if (!alive) return;
      if (res.status === "ok") setView(res.data);
      else setError(res.error.message);
    });
    void commands.artifactVersions(a.conversation_id, a.id).then((res) => {
      if (alive && res.status === "ok") setVersions(res.data);
    });
    return () => {
      alive = false;
    };
  }, [a.conversation_id, a.id, a.version]);

  const copy = () => void globalThis.navigator?.clipboard?.writeText(view?.content ?? "");
  return (
    <article data-testid="library-viewer">
      <header className="viewer-header">
        <h2>{a.title || a.id}</h2>
        <p className="muted small">
          {a.id} · {a.content_type} · from {a.source} · conversation {a.conversation_id} · version{" "}
          {a.version} · updated {a.updated_at}
        </p>
        <div className="viewer-actions" role="tablist" aria-label="Artifact">
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
          <button type="button" onClick={copy}>
            Copy
          </button>
          <ConfirmButton
            question={`Delete ${a.id} and all its versions?`}
            confirmLabel="Delete"
            onConfirm={async () => {
              const res = await commands.deleteArtifact(a.conversation_id, a.id);
              if (res.status === "ok") onDeleted();
              else setError(res.error.message);
            }}
          >
            Delete
          </ConfirmButton>
        </div>
      </header>
      {error && <p role="alert">{error}</p>}
      {tab === "view" && view && (
        <div className="artifact-body" data-testid="artifact-content">
          <ArtifactBody contentType={view.content_type} content={view.content} />
        </div>
      )}
      {tab === "history" && (
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
      commands.getArtifactVersion(props.conversationId, props.id, from),
      commands.getArtifactVersion(props.conversationId, props.id, to),
    ]).then(([a, b]) => {
      if (alive && a.status === "ok" && b.status === "ok")
        setTexts([a.data.content, b.data.content]);
    });
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
            v{v.version} · {v.created_at}
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
