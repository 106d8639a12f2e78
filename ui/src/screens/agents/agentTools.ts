import { isMap, isScalar, parseDocument, type Document, type Pair, type YAMLMap } from "yaml";
import type { Permission } from "../../bindings";
import { explainYamlError } from "../tools/yamlErrors";

/** Why an agent file's tools cannot be read or changed: where (1-based line in the file, when
 * known) and what to do. */
export type ToolsProblem = { line: number | null; message: string };

export type ReadTools = { ok: true; tools: Map<string, string> } | ({ ok: false } & ToolsProblem);

export type EditTools = { ok: true; text: string } | ({ ok: false } & ToolsProblem);

/** One change to an agent's `tools:` map: give `tool` with `permission`, or take it away
 * (`null`). */
export type ToolChange = { tool: string; permission: Permission | null };

export const PERMISSIONS: readonly Permission[] = ["auto", "confirm"];

/** The frontmatter of a file, located: `start`/`end` are offsets in the text (the YAML runs
 * from `start` to `end`, the closing `---` line starts at `end`). As the engine splits it
 * (`crates/platform/src/frontmatter.rs`): a first line `---`, a later line `---`. */
function frontmatter(text: string): { start: number; end: number } | null {
  const bom = text.startsWith("\uFEFF") ? 1 : 0;
  const isFence = (line: string) => line.replace(/[\r\n]+$/, "").trimEnd() === "---";
  let pos = bom;
  let first = true;
  let start = -1;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    const next = nl === -1 ? text.length : nl + 1;
    const line = text.slice(pos, next);
    if (first) {
      if (!isFence(line)) return null;
      start = next;
      first = false;
    } else if (isFence(line)) {
      return { start, end: pos };
    }
    pos = next;
  }
  return null;
}

type Parsed = {
  /** The YAML between the fences, and where it starts in the file. */
  yaml: string;
  start: number;
  doc: Document.Parsed;
  /** The `tools` entry, when the file has one. */
  pair: Pair | null;
};

const FRONTMATTER_PROBLEM: ToolsProblem = {
  line: 1,
  message:
    "the file must start with a line `---`, then the YAML fields, then a line `---`; fix it in the Markdown",
};

/** The 1-based line of `offset` in `text`. */
const lineOf = (text: string, offset: number) => text.slice(0, offset).split("\n").length;

function parse(text: string): { ok: true; parsed: Parsed } | ({ ok: false } & ToolsProblem) {
  const fm = frontmatter(text);
  if (!fm) return { ok: false, ...FRONTMATTER_PROBLEM };
  const yaml = text.slice(fm.start, fm.end);
  const doc = parseDocument(yaml, { keepSourceTokens: false });
  const error = doc.errors[0];
  if (error) {
    const at = error.linePos?.[0]?.line;
    return {
      ok: false,
      line: at === undefined ? lineOf(text, fm.start) : lineOf(text, fm.start) + at - 1,
      message: explainYamlError(error),
    };
  }
  const root = doc.contents;
  if (root !== null && !(isMap(root) && !root.flow)) {
    return {
      ok: false,
      line: lineOf(text, fm.start),
      message: "the frontmatter must be fields, one a line (`name: …`, `tools:` …)",
    };
  }
  const pair =
    (root?.items.find((p) => isScalar(p.key) && p.key.value === "tools") as Pair | undefined) ??
    null;
  if (pair && !(pair.value === null || isMap(pair.value) || isNullScalar(pair.value))) {
    return {
      ok: false,
      line: lineOf(text, fm.start + (rangeOf(pair.key)?.[0] ?? 0)),
      message:
        "`tools` must be a map of tool names to a permission (`web_search: auto`), not a list or a value",
    };
  }
  return { ok: true, parsed: { yaml, start: fm.start, doc, pair } };
}

const isNullScalar = (node: unknown) => isScalar(node) && node.value === null;
const rangeOf = (node: unknown): [number, number, number] | null =>
  node && typeof node === "object" && "range" in node
    ? ((node as { range?: [number, number, number] | null }).range ?? null)
    : null;

/** The text of a tool name as a YAML key: plain when that reads back as the same string. */
export function yamlKey(name: string): string {
  const plain =
    /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name) && !/^(true|false|null|yes|no|on|off|y|n)$/i.test(name);
  return plain ? name : JSON.stringify(name);
}

const keyName = (pair: Pair) => (isScalar(pair.key) ? String(pair.key.value) : null);

/** The tools an agent file gives, with their permission as written (in file order). */
export function readAgentTools(text: string): ReadTools {
  const read = parse(text);
  if (!read.ok) return read;
  const tools = new Map<string, string>();
  const map = read.parsed.pair?.value;
  if (isMap(map)) {
    for (const item of map.items) {
      const name = keyName(item);
      if (name !== null) tools.set(name, isScalar(item.value) ? String(item.value.value) : "");
    }
  }
  return { ok: true, tools };
}

/** Give (or take away) one tool: the smallest change to the text, everything else byte for
 * byte. */
function editOne(text: string, change: ToolChange): EditTools {
  const read = parse(text);
  if (!read.ok) return read;
  const { yaml, start, pair } = read.parsed;
  const nl = text.includes("\r\n") ? "\r\n" : "\n";
  const { tool, permission } = change;
  const entry = (indent: string) => `${indent}${yamlKey(tool)}: ${permission}`;
  /** Offset of the end of the line holding `offset` (its line break, or the YAML's end). */
  const lineEnd = (offset: number) => {
    const i = yaml.indexOf("\n", offset);
    return i === -1 ? yaml.length : yaml[i - 1] === "\r" ? i - 1 : i;
  };
  const lineStart = (offset: number) => yaml.lastIndexOf("\n", offset - 1) + 1;
  /** After the line break that ends the line holding `offset`. */
  const nextLine = (offset: number) => {
    const i = yaml.indexOf("\n", offset);
    return i === -1 ? yaml.length : i + 1;
  };
  const splice = (from: number, to: number, insert: string): EditTools => ({
    ok: true,
    text: text.slice(0, start + from) + insert + text.slice(start + to),
  });

  if (pair === null) {
    if (permission === null) return { ok: true, text };
    // No `tools:` yet: add it as the frontmatter's last field.
    const sep = yaml === "" || yaml.endsWith("\n") ? "" : nl;
    return splice(yaml.length, yaml.length, `${sep}tools:${nl}${entry("  ")}${nl}`);
  }
  const keyRange = rangeOf(pair.key);
  if (!keyRange) return { ok: false, line: null, message: "cannot locate `tools` in the file" };
  const colon = yaml.indexOf(":", keyRange[1]);

  if (!isMap(pair.value)) {
    // `tools:` with nothing (or `~`, `null`) after it.
    if (permission === null) return { ok: true, text };
    const value = rangeOf(pair.value);
    const end = lineEnd(colon);
    const items = `${nl}${entry("  ")}`;
    if (value && value[1] > value[0]) {
      const cut = yaml.slice(0, value[0]).replace(/[ \t]+$/, "");
      return {
        ok: true,
        text:
          text.slice(0, start) +
          cut +
          yaml.slice(value[1], end) +
          items +
          yaml.slice(end) +
          text.slice(start + yaml.length),
      };
    }
    return splice(end, end, items);
  }

  const map = pair.value as YAMLMap;
  const mapRange = rangeOf(map);
  const index = map.items.findIndex((p) => keyName(p as Pair) === tool);
  const item = index === -1 ? null : (map.items[index] as Pair);

  if (item) {
    const itemKey = rangeOf(item.key);
    const itemValue = rangeOf(item.value);
    if (!itemKey) return { ok: false, line: null, message: `cannot locate \`${tool}\`` };
    if (permission !== null) {
      // Change its permission in place.
      if (itemValue && itemValue[1] > itemValue[0]) {
        return splice(itemValue[0], itemValue[1], permission);
      }
      const itemColon = yaml.indexOf(":", itemKey[1]);
      return splice(itemColon + 1, itemColon + 1, ` ${permission}`);
    }
    const itemEnd = Math.max(itemKey[1], itemValue?.[1] ?? 0);
    if (map.items.length === 1) {
      // The last one goes: an empty map stays a map (`tools: {}`), comments stay.
      if (map.flow) return mapRange ? splice(mapRange[0], mapRange[1], "{}") : fail(tool);
      const from = lineStart(itemKey[0]);
      const to = nextLine(itemEnd);
      const rest = yaml.slice(colon + 1, lineEnd(colon)).trim();
      const head = ` {}${rest === "" ? "" : ` ${rest}`}`;
      return {
        ok: true,
        text:
          text.slice(0, start + colon + 1) +
          head +
          yaml.slice(lineEnd(colon), from) +
          yaml.slice(to) +
          text.slice(start + yaml.length),
      };
    }
    if (map.flow) {
      const next = map.items[index + 1] as Pair | undefined;
      if (next) {
        const nextKey = rangeOf(next.key);
        return nextKey ? splice(itemKey[0], nextKey[0], "") : fail(tool);
      }
      const prev = map.items[index - 1] as Pair;
      const prevEnd = Math.max(rangeOf(prev.key)?.[1] ?? 0, rangeOf(prev.value)?.[1] ?? 0);
      return splice(prevEnd, itemEnd, "");
    }
    // Its whole line (or lines) goes.
    return splice(lineStart(itemKey[0]), nextLine(itemEnd), "");
  }

  if (permission === null) return { ok: true, text };
  if (map.items.length === 0) {
    // `tools: {}`: becomes a block map with its first entry.
    if (!mapRange) return fail(tool);
    const after = yaml.slice(mapRange[1], lineEnd(mapRange[1]));
    return splice(
      colon + 1,
      lineEnd(mapRange[1]),
      `${after.trim() === "" ? "" : after.replace(/^[ \t]*/, " ")}${nl}${entry("  ")}`,
    );
  }
  const last = map.items[map.items.length - 1] as Pair;
  const lastEnd = Math.max(rangeOf(last.key)?.[1] ?? 0, rangeOf(last.value)?.[1] ?? 0);
  if (map.flow) return splice(lastEnd, lastEnd, `, ${yamlKey(tool)}: ${permission}`);
  const firstKey = rangeOf((map.items[0] as Pair).key);
  if (!firstKey) return fail(tool);
  const indent = yaml.slice(lineStart(firstKey[0]), firstKey[0]);
  const at = nextLine(lastEnd);
  const before = at === yaml.length && !yaml.endsWith("\n") ? nl : "";
  return splice(at, at, `${before}${entry(/^[ \t]*$/.test(indent) ? indent : "  ")}${nl}`);
}

const fail = (tool: string): EditTools => ({
  ok: false,
  line: null,
  message: `cannot change \`${tool}\` in this file safely; edit its Markdown by hand`,
});

/** What a file's frontmatter holds besides `tools`, to check an edit touched nothing else. */
function others(text: string): string | null {
  const read = parse(text);
  if (!read.ok) return null;
  const data = read.parsed.doc.toJS() as Record<string, unknown> | null;
  const { tools: _tools, ...rest } = data ?? {};
  void _tools;
  const fm = frontmatter(text);
  return JSON.stringify(rest) + "\u0000" + (fm ? text.slice(fm.end) : "");
}

/**
 * Apply `changes` to an agent file's `tools:` map, changing only the lines they need (comments,
 * key order and every other field stay as written). A file that does not parse, or whose
 * `tools` is not a map, is not changed: the problem comes back with its line. Each result is
 * read back and checked (the tools are as asked, nothing else moved) before it is returned.
 */
export function setAgentTools(text: string, changes: readonly ToolChange[]): EditTools {
  const before = readAgentTools(text);
  if (!before.ok) return before;
  let out = text;
  for (const change of changes) {
    const edited = editOne(out, change);
    if (!edited.ok) return edited;
    out = edited.text;
  }
  const after = readAgentTools(out);
  const expected = new Map(before.tools);
  for (const c of changes) {
    if (c.permission === null) expected.delete(c.tool);
    else expected.set(c.tool, c.permission);
  }
  const same =
    after.ok &&
    after.tools.size === expected.size &&
    [...expected].every(([k, v]) => after.tools.get(k) === v) &&
    others(out) === others(text);
  if (!same) return fail(changes[0]?.tool ?? "tools");
  return { ok: true, text: out };
}
