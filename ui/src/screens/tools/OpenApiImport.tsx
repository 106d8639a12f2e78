import {
  useDeferredValue,
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
  type RefObject,
} from "react";
import type { ImportedTool } from "../../bindings";
import type { LoadedImport, OpenApiImportState, SaveReport } from "./useOpenApiImport";

/** Rows rendered at most (GitHub's description has ~1,200 operations). */
const SHOWN = 200;

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * "Import from OpenAPI": read an OpenAPI description (URL or file), pick operations, review one
 * in the tool editor or save the picked ones as tool files. Its state lives in `imp`, held by
 * the Tools page.
 */
export function OpenApiImport(props: {
  imp: OpenApiImportState;
  /** Tool names and file names already in the config folder. */
  existing: ReadonlySet<string>;
  /** Open an imported tool in the editor, unsaved. */
  onReview: (tool: ImportedTool) => void;
  /** Offer saved tools to an agent ("Add to agent…"). */
  onAddToAgent: (tools: ImportedTool[]) => void;
}) {
  const { imp, existing, onReview, onAddToAgent } = props;
  const id = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const [justRead, setJustRead] = useState(0);
  useEffect(() => {
    if (justRead > 0) heading.current?.focus();
  }, [justRead]);

  const read = async (source: string, text: string | null) => {
    if (await imp.read(source, text)) setJustRead((n) => n + 1);
  };
  const reading = imp.reading !== null;

  return (
    <section
      className="openapi-import"
      aria-labelledby={`${id}-title`}
      data-testid="openapi-import"
    >
      <div className="openapi-head">
        <h2 id={`${id}-title`}>Import from OpenAPI</h2>
        <button type="button" onClick={imp.close}>
          Close
        </button>
      </div>
      <p className="muted small">
        Read an OpenAPI (or Swagger) description: each operation becomes an HTTP tool. Review one in
        the editor, or pick several and save them.
      </p>
      <form
        className="openapi-source"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const url = imp.url.trim();
          if (url && !reading) void read(url, null);
        }}
      >
        <label htmlFor={`${id}-url`}>Description URL</label>
        <input
          id={`${id}-url`}
          type="url"
          data-testid="openapi-url"
          placeholder="https://example.com/openapi.json"
          value={imp.url}
          onChange={(e) => imp.setUrl(e.target.value)}
        />
        <button
          type="submit"
          data-testid="openapi-read"
          disabled={reading || imp.url.trim() === ""}
        >
          {reading ? "Reading…" : "Read"}
        </button>
      </form>
      <p className="openapi-file">
        <label htmlFor={`${id}-file`}>…or choose a file</label>{" "}
        <input
          id={`${id}-file`}
          type="file"
          accept=".json,.yaml,.yml"
          data-testid="openapi-file"
          disabled={reading}
          onChange={(e) => {
            const input = e.currentTarget;
            const file = input.files?.[0];
            if (!file) return;
            void file.text().then(
              (text) => read(file.name, text),
              () => {},
            );
            // Choosing the same file again reads it again.
            input.value = "";
          }}
        />
      </p>
      {imp.reading !== null && (
        <p className="muted small">
          <span role="status">Reading {imp.reading}…</span>{" "}
          <button type="button" data-testid="openapi-cancel" onClick={() => void imp.cancel()}>
            Cancel
          </button>
        </p>
      )}
      {imp.error && (
        <p role="alert" className="field-error" data-testid="openapi-error">
          {imp.error}
        </p>
      )}
      {imp.loaded && (
        <ImportResult
          imp={imp}
          loaded={imp.loaded}
          existing={existing}
          onReview={onReview}
          onAddToAgent={onAddToAgent}
          heading={heading}
        />
      )}
    </section>
  );
}

function ImportResult(props: {
  imp: OpenApiImportState;
  loaded: LoadedImport;
  existing: ReadonlySet<string>;
  onReview: (tool: ImportedTool) => void;
  onAddToAgent: (tools: ImportedTool[]) => void;
  heading: RefObject<HTMLHeadingElement | null>;
}) {
  const { imp, loaded, existing, onReview, onAddToAgent, heading } = props;
  const { title, total, tools, skipped } = loaded.data;
  const id = useId();
  const exists = (t: ImportedTool) =>
    t.exists || imp.saved.has(t.name) || existing.has(t.name) || existing.has(t.file_name);

  const tags = useMemo(
    () => [...new Set(tools.flatMap((t) => t.tags))].sort((a, b) => a.localeCompare(b)),
    [tools],
  );
  // What the search matches, lowercased once per description.
  const searchable = useMemo(
    () =>
      tools.map((tool) => ({
        tool,
        text: `${tool.name}\n${tool.operation}\n${tool.summary}`.toLowerCase(),
      })),
    [tools],
  );
  const query = useDeferredValue(imp.query);
  const filtered = useMemo(() => {
    const q = query.trim().toLowerCase();
    return searchable
      .filter(
        ({ tool, text }) =>
          (imp.tag === "" || tool.tags.includes(imp.tag)) && (q === "" || text.includes(q)),
      )
      .map(({ tool }) => tool);
  }, [searchable, query, imp.tag]);
  const shown = filtered.slice(0, SHOWN);
  const picked = tools.filter((t) => imp.selected.has(t.name) && !exists(t));
  const saving = imp.progress !== null;

  return (
    <div className="openapi-result">
      <h3 ref={heading} tabIndex={-1} data-testid="openapi-result">
        {title}: {tools.length} of {plural(total, "operation", "operations")} can be tools
      </h3>
      <p className="muted small">
        Read from <code>{loaded.source}</code>.
      </p>
      {skipped.length > 0 && (
        <details className="openapi-skipped" data-testid="openapi-skipped">
          <summary>{plural(skipped.length, "operation", "operations")} can't be imported</summary>
          <ul className="small">
            {skipped.map((s, i) => (
              <li key={i}>
                <code>{s.operation}</code>: {s.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
      {tools.length > 0 && (
        <>
          <div className="openapi-filter">
            <label htmlFor={`${id}-search`}>Search</label>
            <input
              id={`${id}-search`}
              type="search"
              data-testid="openapi-search"
              placeholder="name, operation or summary"
              value={imp.query}
              onChange={(e) => imp.setQuery(e.target.value)}
            />
            <label htmlFor={`${id}-tag`}>Tag</label>
            <select
              id={`${id}-tag`}
              data-testid="openapi-tag"
              value={imp.tag}
              onChange={(e) => imp.setTag(e.target.value)}
            >
              <option value="">All tags</option>
              {tags.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
            <span className="row-actions">
              <button
                type="button"
                data-testid="openapi-select-all"
                onClick={() => imp.selectAll(shown.filter((t) => !exists(t)).map((t) => t.name))}
              >
                Select all shown
              </button>
              <button type="button" data-testid="openapi-clear" onClick={imp.clear}>
                Clear
              </button>
            </span>
            <span className="muted small" aria-live="polite">
              {picked.length} selected
            </span>
          </div>
          {filtered.length === 0 ? (
            <p className="muted">No operation matches the filter.</p>
          ) : (
            <ul className="openapi-list" data-testid="openapi-tools" aria-label="Operations">
              {shown.map((t) => (
                <ImportRow
                  key={t.name}
                  tool={t}
                  exists={exists(t)}
                  checked={imp.selected.has(t.name) && !exists(t)}
                  onToggle={(on) => imp.toggle(t.name, on)}
                  onReview={() => onReview(t)}
                  idPrefix={id}
                />
              ))}
            </ul>
          )}
          {filtered.length > SHOWN && (
            <p className="muted small" data-testid="openapi-more">
              showing {SHOWN} of {filtered.length}; narrow the filter
            </p>
          )}
          <div className="row-actions openapi-save">
            <button
              type="button"
              className="primary"
              data-testid="openapi-save"
              disabled={picked.length === 0 || saving}
              onClick={() => void imp.save(picked)}
            >
              Save {plural(picked.length, "tool", "tools")}
            </button>
            {imp.progress && (
              <span role="status" className="muted small">
                Saving {imp.progress.done} of {imp.progress.total}…
              </span>
            )}
          </div>
          {imp.report && (
            <Report
              report={imp.report}
              onAddToAgent={() => {
                const saved = imp.report?.saved ?? [];
                onAddToAgent(tools.filter((t) => saved.includes(t.name)));
              }}
            />
          )}
        </>
      )}
    </div>
  );
}

function ImportRow(props: {
  tool: ImportedTool;
  exists: boolean;
  checked: boolean;
  onToggle: (on: boolean) => void;
  onReview: () => void;
  idPrefix: string;
}) {
  const { tool: t, exists, checked, onToggle, onReview, idPrefix } = props;
  const box = `${idPrefix}-pick-${t.name}`;
  return (
    <li className="openapi-row" data-testid={`openapi-row-${t.name}`}>
      <input
        id={box}
        type="checkbox"
        checked={checked}
        disabled={exists}
        onChange={(e) => onToggle(e.target.checked)}
        aria-describedby={`${box}-about`}
      />
      <div className="openapi-row-text">
        <label htmlFor={box} className="tool-name">
          {t.name}
        </label>{" "}
        <code className="small">{t.operation}</code>
        {exists && (
          <>
            {" "}
            <span className="badge">already exists</span>
          </>
        )}
        <div id={`${box}-about`} className="small">
          {t.summary && <span className="muted">{t.summary}</span>}
          {t.secrets.length > 0 && (
            <span className="openapi-secrets">
              {" "}
              uses {t.secrets.map((s) => `{{${s}}}`).join(", ")} (
              {t.secrets.length === 1 ? "it must" : "they must"} be set in Settings → Secrets)
            </span>
          )}
        </div>
      </div>
      <button
        type="button"
        data-testid={`openapi-review-${t.name}`}
        aria-label={`Review ${t.name}`}
        onClick={onReview}
      >
        Review
      </button>
    </li>
  );
}

function Report({ report, onAddToAgent }: { report: SaveReport; onAddToAgent: () => void }) {
  return (
    <div className="openapi-report" data-testid="openapi-report" role="status">
      {report.saved.length > 0 && (
        <div className="add-offer">
          <p>
            Saved {plural(report.saved.length, "tool", "tools")}: {report.saved.join(", ")}. Give{" "}
            {report.saved.length === 1 ? "it" : "them"} to an agent?
          </p>
          <button
            type="button"
            className="primary"
            data-testid="openapi-add-to-agent"
            onClick={onAddToAgent}
          >
            Add to agent…
          </button>
        </div>
      )}
      {report.failed.length > 0 && (
        <>
          <p className="field-error">
            {plural(report.failed.length, "tool", "tools")} could not be saved:
          </p>
          <ul className="field-error" data-testid="openapi-failures">
            {report.failed.map((f) => (
              <li key={f.name}>
                <strong>{f.name}</strong>: {f.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
