import { useMemo, useState } from "react";
import hljs from "highlight.js/lib/common";
import DOMPurify from "dompurify";
import { Markdown } from "../../components/Markdown";

/** Content types shown as highlighted code, with highlight.js's language for each. */
const CODE_LANGUAGES: Record<string, string> = {
  "text/x-python": "python",
  "application/javascript": "javascript",
  "text/javascript": "javascript",
  "application/typescript": "typescript",
  "text/x-rust": "rust",
  "text/x-shellscript": "bash",
  "application/x-sh": "bash",
  "application/yaml": "yaml",
  "text/yaml": "yaml",
  "application/xml": "xml",
  "text/x-sql": "sql",
  "text/css": "css",
};

/** Above this size JSON shows as text (a tree of millions of nodes would freeze the window). */
const JSON_TREE_MAX_CHARS = 1_000_000;

/** The HTML frame's own sanitiser (the Markdown one keeps its links): a link may only jump
 * within the page, since following it would load a remote page outside the frame's CSP. */
const framePurifier = DOMPurify(window);
framePurifier.addHook("afterSanitizeAttributes", (node) => {
  for (const attr of ["href", "xlink:href", "action", "formaction"]) {
    const value = node.getAttribute(attr);
    if (value !== null && !value.startsWith("#")) node.removeAttribute(attr);
  }
});

/** Inside the HTML frame: nothing may load or run, whatever the artifact says. */
const FRAME_CSP =
  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">";

/** An artifact's content rendered for its type: Markdown safely, JSON as a foldable tree, CSV
 * as a table, HTML in a sandboxed frame without scripts or network, everything else as text.
 * Nothing from an artifact ever runs. */
export function ArtifactBody({ contentType, content }: { contentType: string; content: string }) {
  if (contentType === "text/markdown") return <Markdown text={content} />;
  if (contentType === "application/json") return <JsonView text={content} />;
  if (contentType === "text/html") return <HtmlView html={content} />;
  const language = CODE_LANGUAGES[contentType];
  if (language) return <Code language={language} code={content} />;
  if (contentType === "text/csv") {
    const rows = parseCsv(content);
    const [head, ...body] = rows;
    return (
      <table className="param-table" data-testid="csv-table">
        {head && (
          <thead>
            <tr>
              {head.map((h, i) => (
                <th key={i}>{h}</th>
              ))}
            </tr>
          </thead>
        )}
        <tbody>
          {body.map((r, i) => (
            <tr key={i}>
              {r.map((c, j) => (
                <td key={j}>{c}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
  return <pre className="code">{content}</pre>;
}

/** JSON pretty-printed, or the text as it is when it does not parse. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** RFC 4180 CSV: quoted fields, doubled quotes, CR LF or LF line ends. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

function JsonView({ text }: { text: string }) {
  const [asText, setAsText] = useState(false);
  let value: unknown;
  let parsed = text.length <= JSON_TREE_MAX_CHARS;
  if (parsed) {
    try {
      value = JSON.parse(text);
    } catch {
      parsed = false;
    }
  }
  if (!parsed) return <pre className="code">{prettyJson(text)}</pre>;
  return (
    <div>
      <button type="button" className="link-button" onClick={() => setAsText(!asText)}>
        {asText ? "Show as tree" : "Show as text"}
      </button>
      {asText ? (
        // The text as written: re-serialising would round integers beyond 2^53.
        <pre className="code">{text}</pre>
      ) : (
        <div className="json-tree" data-testid="json-tree">
          <JsonNode name={null} value={value} depth={0} />
        </div>
      )}
    </div>
  );
}

/** One JSON value; objects and arrays fold (the first two levels start open). */
export function JsonNode({
  name,
  value,
  depth,
}: {
  name: string | null;
  value: unknown;
  depth: number;
}) {
  const label = name === null ? null : <span className="json-key">{name}: </span>;
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value as Record<string, unknown>);
    const summary = Array.isArray(value)
      ? `[ ${entries.length} items ]`
      : `{ ${entries.length} keys }`;
    return (
      <details open={depth < 2} className="json-node">
        <summary>
          {label}
          <span className="muted">{summary}</span>
        </summary>
        <div className="json-children">
          {entries.map(([k, v]) => (
            <JsonNode key={k} name={k} value={v} depth={depth + 1} />
          ))}
        </div>
      </details>
    );
  }
  const kind = value === null ? "null" : typeof value;
  return (
    <div className="json-leaf">
      {label}
      <span className={`json-${kind}`}>{JSON.stringify(value)}</span>
    </div>
  );
}

/** HTML rendered in a frame that may not run scripts, submit forms, open windows or load
 * anything (sanitised, then the sandbox plus a CSP of its own); the source is one click away. */
function HtmlView({ html }: { html: string }) {
  const [source, setSource] = useState(false);
  // Defence in depth behind the sandbox: no scripts, handlers, refreshes, base URLs, forms or
  // nested frames even reach the frame.
  const clean = useMemo(
    () =>
      framePurifier.sanitize(html, {
        WHOLE_DOCUMENT: true,
        FORBID_TAGS: ["meta", "base", "form", "iframe", "frame", "object", "embed", "link"],
      }),
    [html],
  );
  return (
    <div>
      <button type="button" className="link-button" onClick={() => setSource(!source)}>
        {source ? "Show rendered" : "Show source"}
      </button>
      {source ? (
        <pre className="code">{html}</pre>
      ) : (
        <iframe
          className="html-frame"
          title="HTML artifact (sandboxed: no scripts, no network)"
          sandbox="allow-same-origin"
          referrerPolicy="no-referrer"
          srcDoc={`${FRAME_CSP}${clean}`}
          data-testid="html-frame"
        />
      )}
    </div>
  );
}

/** Source code highlighted by highlight.js (its output escapes the text; nothing runs). */
function Code({ language, code }: { language: string; code: string }) {
  const html = useMemo(
    () =>
      code.length > 500_000
        ? null
        : hljs.getLanguage(language)
          ? hljs.highlight(code, { language }).value
          : null,
    [code, language],
  );
  return (
    <pre className="code" data-testid="code-view">
      {html === null ? (
        <code>{code}</code>
      ) : (
        <code className={`hljs language-${language}`} dangerouslySetInnerHTML={{ __html: html }} />
      )}
    </pre>
  );
}
