import { Markdown } from "../../components/Markdown";

/** An artifact's content rendered for its type: Markdown safely, JSON pretty-printed, CSV as a
 * table, everything else (HTML included) as text — nothing from an artifact ever runs. */
export function ArtifactBody({ contentType, content }: { contentType: string; content: string }) {
  if (contentType === "text/markdown") return <Markdown text={content} />;
  if (contentType === "application/json") return <pre className="code">{prettyJson(content)}</pre>;
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
