/**
 * The HTTP tool editor's form ⇄ Markdown sync.
 *
 * The Markdown file is the truth: the form is parsed from it, and a form change is written back
 * into the file's YAML document field by field (with the `yaml` library's document API), so
 * comments, key order and fields the form does not know survive. Validation is not done here:
 * the backend's own loader checks the text (`check_tool_draft`).
 */
import { isMap, isNode, isScalar, isSeq, parseDocument, type Document } from "yaml";
import { explainYamlError } from "./yamlErrors";

export const PARAM_TYPES = ["string", "integer", "number", "boolean"] as const;
export type ParamType = (typeof PARAM_TYPES)[number];
export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;
/** Where a parameter travels (`in:`); absent = body for POST/PUT/PATCH, query otherwise. */
export const PARAM_LOCATIONS = ["path", "query", "header", "body"] as const;
export type ParamLocation = "" | (typeof PARAM_LOCATIONS)[number];
/** The methods whose parameters go in a JSON body by default. */
export const BODY_METHODS: readonly string[] = ["POST", "PUT", "PATCH"];

/** One parameter as the form edits it: `default` and `enum` as typed text. */
export type ParamDraft = {
  name: string;
  type: ParamType;
  description: string;
  required: boolean;
  /** Typed text; empty means no default. */
  default: string;
  /** Comma-separated values; empty means any value. */
  enum: string;
  /** Where it travels: a {@link ParamLocation}, `""` = the default (no `in:` key). Any other
   * text is what the file says, kept so the backend's error shows and nothing is lost. */
  in: string;
  /** `json: true`: a string body parameter whose JSON text is sent as the value it holds. */
  json: boolean;
};

export type HeaderDraft = { name: string; value: string };

/** Every field of the form. Numbers are kept as typed text so typing is never fought. */
export type ToolDraft = {
  name: string;
  description: string;
  permission: "auto" | "confirm";
  method: string;
  endpoint: string;
  headers: HeaderDraft[];
  timeout: string;
  response_extract: string;
  parameters: ParamDraft[];
  /** The Markdown usage notes after the frontmatter. */
  notes: string;
};

export type ParseResult =
  { ok: true; draft: ToolDraft } | { ok: false; error: string; line: number | null };

type Split = { yaml: string; body: string; bodySep: string };

/** Split a file into its frontmatter YAML and Markdown body (`null` without frontmatter). */
export function splitFrontmatter(text: string): Split | null {
  const match = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)(?:^|\r?\n)---[ \t]*(?:\r?\n|$)/m.exec(text);
  if (!match || match.index !== 0) return null;
  const rest = text.slice(match[0].length);
  const sep = /^((?:[ \t]*\r?\n)*)/.exec(rest)?.[1] ?? "";
  let yaml = match[1] ?? "";
  if (yaml !== "" && !yaml.endsWith("\n")) yaml += "\n";
  return { yaml, body: rest.slice(sep.length), bodySep: sep };
}

const str = (v: unknown): string =>
  v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v);

/** Parse a tool file into the form's draft. */
export function parseToolMarkdown(text: string): ParseResult {
  const split = splitFrontmatter(text);
  if (!split) {
    return {
      ok: false,
      error: "The file must start with a line `---`, then the YAML fields, then a line `---`.",
      line: 1,
    };
  }
  const doc = parseDocument(split.yaml);
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const line = e?.linePos?.[0]?.line;
    return {
      ok: false,
      error: e ? explainYamlError(e) : "The YAML does not parse.",
      line: line === undefined ? null : line + 1,
    };
  }
  const raw: unknown = doc.toJS();
  const y = (raw && typeof raw === "object" ? raw : {}) as Record<string, unknown>;
  const headers =
    y.headers && typeof y.headers === "object" ? (y.headers as Record<string, unknown>) : {};
  const params = Array.isArray(y.parameters) ? (y.parameters as Record<string, unknown>[]) : [];
  return {
    ok: true,
    draft: {
      name: str(y.name),
      description: str(y.description),
      permission: y.permission === "auto" ? "auto" : "confirm",
      method: y.method === undefined ? "GET" : str(y.method).toUpperCase(),
      endpoint: str(y.endpoint),
      headers: Object.entries(headers).map(([name, value]) => ({ name, value: str(value) })),
      timeout: y.timeout === undefined ? "" : str(y.timeout),
      response_extract: str(y.response_extract),
      parameters: params.map((p) => {
        const item = (p && typeof p === "object" ? p : {}) as Record<string, unknown>;
        const type = PARAM_TYPES.includes(item.type as ParamType)
          ? (item.type as ParamType)
          : "string";
        return {
          name: str(item.name),
          type,
          description: str(item.description),
          required: item.required !== false,
          default: str(item.default),
          enum: Array.isArray(item.enum) ? item.enum.map(str).join(", ") : "",
          in: str(item.in),
          json: item.json === true,
        };
      }),
      notes: split.body.replace(/\s+$/, ""),
    },
  };
}

/** A typed YAML value for text the user typed into a field of type `type`. */
function typedValue(type: ParamType, text: string): unknown {
  const t = text.trim();
  if (type === "integer" && /^-?\d+$/.test(t)) return Number.parseInt(t, 10);
  if (type === "number" && t !== "" && Number.isFinite(Number(t))) return Number(t);
  if (type === "boolean" && /^(true|false)$/i.test(t)) return t.toLowerCase() === "true";
  return text;
}

/** Allowed values are strings in the file whatever the type (the model writes text). */
function enumValue(text: string): string[] | undefined {
  const items = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  return items.length === 0 ? undefined : items;
}

/** The YAML value each top-level field gets (`undefined` = leave the key out). */
function fieldValues(d: ToolDraft): Record<string, unknown> {
  const timeout = d.timeout.trim();
  return {
    name: d.name,
    description: d.description === "" ? undefined : d.description,
    permission: d.permission,
    endpoint: d.endpoint,
    method: d.method,
    headers:
      d.headers.length === 0
        ? undefined
        : Object.fromEntries(d.headers.map((h) => [h.name, h.value])),
    timeout: timeout === "" ? undefined : /^\d+$/.test(timeout) ? Number(timeout) : timeout,
    response_extract: d.response_extract === "" ? undefined : d.response_extract,
  };
}

function paramValues(p: ParamDraft): Record<string, unknown> {
  return {
    name: p.name,
    type: p.type,
    description: p.description === "" ? undefined : p.description,
    required: p.required ? undefined : false,
    default: p.default === "" ? undefined : typedValue(p.type, p.default),
    enum: enumValue(p.enum),
    in: p.in === "" ? undefined : p.in,
    json: p.json ? true : undefined,
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

type Patch = { start: number; end: number; text: string };

/** Text that is safe as a plain YAML scalar anywhere, including inside `{ }` / `[ ]`: no
 * indicators, separators, comments or words YAML reads as something else. */
const PLAIN_SAFE = /^[A-Za-z_][A-Za-z0-9_./ -]{0,59}$/;
const YAML_WORDS = /^(true|false|yes|no|on|off|null|y|n)$/i;

/** A scalar written in the style the file already used for it, when that style is safe for
 * the new value; otherwise double-quoted (JSON strings are valid YAML). Always one line. */
function scalarText(value: string | number | boolean, style: unknown, old: unknown): string {
  if (typeof value !== "string") return String(value);
  // An empty string had to be quoted; what replaces it need not be.
  const keepQuotes = style === "QUOTE_DOUBLE" && old !== "";
  const plainOk = PLAIN_SAFE.test(value) && !value.endsWith(" ") && !YAML_WORDS.test(value);
  if (keepQuotes || !plainOk) {
    if (style === "QUOTE_SINGLE" && !value.includes("\n")) return `'${value.replace(/'/g, "''")}'`;
    return JSON.stringify(value);
  }
  return value;
}

/**
 * Edits `doc` towards the draft. A changed scalar is patched in place in the source text, so
 * every other byte (comments, alignment, quoting) stays; a structural change (a key added or
 * removed, a list resized) re-renders the YAML from the document, which keeps comments.
 */
class Editor {
  patches: Patch[] = [];
  structural = false;
  constructor(readonly doc: Document) {}

  put(path: (string | number)[], value: unknown) {
    const { doc } = this;
    const exists = doc.hasIn(path);
    if (value === undefined) {
      if (exists) {
        doc.deleteIn(path);
        this.structural = true;
      }
      return;
    }
    const node: unknown = doc.getIn(path, true);
    const plain = isNode(node) ? node.toJSON() : node;
    if (exists && same(plain, value)) return;
    const block = isScalar(node) && (node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED");
    if (
      exists &&
      isScalar(node) &&
      !block &&
      node.range &&
      (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    ) {
      this.patches.push({
        start: node.range[0],
        end: node.range[1],
        text: scalarText(value, node.type, node.value),
      });
      node.value = value;
      return;
    }
    doc.setIn(path, value);
    this.structural = true;
  }

  render(source: string): string {
    if (this.structural) return this.doc.toString({ lineWidth: 0 });
    let out = source;
    for (const p of [...this.patches].sort((a, b) => b.start - a.start)) {
      out = out.slice(0, p.start) + p.text + out.slice(p.end);
    }
    return out;
  }
}

const FIELD_ORDER = [
  "name",
  "description",
  "permission",
  "endpoint",
  "method",
  "headers",
  "timeout",
  "response_extract",
];

/** Write `draft` into `text`, changing only what differs. */
export function applyDraft(text: string, draft: ToolDraft): string {
  const before = parseToolMarkdown(text);
  if (before.ok && same(before.draft, draft)) return text;
  const split = splitFrontmatter(text) ?? { yaml: "", body: "", bodySep: "\n" };
  const doc = parseDocument(split.yaml);
  if (doc.errors.length > 0) return renderNew(draft);
  const edit = new Editor(doc);
  if (!isMap(doc.contents)) {
    doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
    edit.structural = true;
  }
  // Only fields the user changed are written: an untouched field keeps its exact form (e.g. an
  // allowed value containing a comma, which the form shows comma-joined).
  const prev = before.ok ? before.draft : null;
  const values = fieldValues(draft);
  for (const key of FIELD_ORDER) {
    const k = key as keyof ToolDraft;
    if (prev && same(prev[k], draft[k])) continue;
    edit.put([key], values[key]);
  }

  const wanted = draft.parameters.map(paramValues);
  if (wanted.length === 0) {
    edit.put(["parameters"], undefined);
  } else {
    const seq = doc.getIn(["parameters"], true);
    if (!isSeq(seq)) {
      doc.setIn(["parameters"], wanted.map(stripUndefined));
      edit.structural = true;
    } else {
      // Each wanted parameter keeps its own YAML map (with the keys the form does not know, and
      // its comments): by position while the list keeps its length, else by the name it had.
      const prevParams = prev?.parameters ?? [];
      const match =
        seq.items.length === wanted.length
          ? wanted.map((_, i) => i)
          : matchParams(
              prevParams.map((p) => p.name),
              draft.parameters.map((p) => p.name),
              seq.items.length,
            );
      const old = [...seq.items];
      if (match.some((j, i) => j !== i) || old.length !== wanted.length) {
        seq.items = match.map((j, i) =>
          j >= 0 && isMap(old[j]) ? old[j] : doc.createNode(stripUndefined(wanted[i] ?? {})),
        );
        edit.structural = true;
      }
      wanted.forEach((values, i) => {
        const j = match[i] ?? -1;
        const item = seq.items[i];
        const was = j >= 0 ? prevParams[j] : undefined;
        const now = draft.parameters[i];
        if (!isMap(item) || j < 0 || !isMap(old[j])) {
          if (!isMap(item)) {
            seq.items[i] = doc.createNode(stripUndefined(values));
            edit.structural = true;
          }
          return;
        }
        for (const [key, value] of Object.entries(values)) {
          if (was && now && same(was[key as keyof ParamDraft], now[key as keyof ParamDraft]))
            continue;
          // `required: true` is the default: an explicit one stays, a missing one is not added.
          const keep = key === "required" && value === undefined && item.has("required");
          edit.put(["parameters", i, key], keep ? true : value);
        }
      });
    }
  }
  let yaml = edit.render(split.yaml);
  if (yaml.trim() === "{}") yaml = "";
  const notes = draft.notes.replace(/\s+$/, "");
  return `---\n${yaml}---\n${notes === "" ? "" : `${split.bodySep}${notes}\n`}`;
}

/**
 * For each wanted parameter, the index of the old one it is (`-1` = new): the first unused old
 * parameter of the same name, else (a renamed one) the unused old one at the same position.
 */
export function matchParams(
  oldNames: readonly string[],
  newNames: readonly string[],
  oldCount: number,
): number[] {
  const used = new Set<number>();
  const match = newNames.map((name) => {
    const j = oldNames.findIndex((n, k) => n === name && !used.has(k));
    if (j >= 0 && j < oldCount) used.add(j);
    return j < oldCount ? j : -1;
  });
  return match.map((j, i) => {
    if (j >= 0) return j;
    if (i < oldCount && !used.has(i)) {
      used.add(i);
      return i;
    }
    return -1;
  });
}

function stripUndefined(o: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** A fresh file for `draft`. */
export function renderNew(draft: ToolDraft): string {
  return applyDraft("---\n---\n\n", draft);
}

/** The draft for a copy of a tool: a free name (`x_copy`, `x_copy2`, …) and the same fields. */
export function duplicateText(text: string, taken: readonly string[]): string {
  const parsed = parseToolMarkdown(text);
  if (!parsed.ok) return text;
  const base = `${parsed.draft.name}_copy`;
  let name = base;
  for (let n = 2; taken.includes(name); n++) name = `${base}${n}`;
  return applyDraft(text, { ...parsed.draft, name });
}

export const emptyParam = (): ParamDraft => ({
  name: "",
  type: "string",
  description: "",
  required: true,
  default: "",
  enum: "",
  in: "",
  json: false,
});
