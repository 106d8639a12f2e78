/**
 * Markdown to sanitised HTML, whole or block by block.
 *
 * A streamed answer grows by a few characters at a time. Parsing, sanitising and highlighting
 * the whole message on every token batch made a 2,000-line answer freeze the window for a
 * minute, so {@link BlockSplitter} cuts the text into top-level blocks (marked's own lexer, so
 * fences, lists and tables end where marked says they end) and only the last two blocks, those
 * that may still change, are lexed again when text arrives. Each block is rendered on its own by
 * {@link renderBlock}, with the document's link reference definitions, and the result equals
 * {@link renderMarkdown} of the whole text (raw HTML spanning blocks aside: see `hasHtml`).
 *
 * Loaded after the window's first frame: see markdownLoader.ts.
 */
import { Lexer, Marked, type Token, type Tokens } from "marked";
import DOMPurify from "dompurify";
import type { HLJSApi } from "highlight.js";
import {
  escapeHtml,
  fenceClosed,
  highlighter,
  loadHighlighter,
  type Block,
  type LinkRefs,
  type SplitResult,
} from "./markdownBlocks";

/** Highlighted HTML by language and code: a block re-rendered (a new link definition, the final
 * render) is not highlighted again. Bounded so a long session does not keep every answer. */
const highlighted = new Map<string, string>();
const HIGHLIGHT_CACHE = 400;

/** The highlighter this parse uses: the one its caller rendered with (so what a component
 * memoised matches the highlighter it subscribed to). Set only while a parse runs. */
let active: HLJSApi | null = null;

function withHighlighter<T>(hl: HLJSApi | null, parse: () => T): T {
  active = hl;
  try {
    return parse();
  } finally {
    active = null;
  }
}

/** Code highlighted with its declared language only: guessing the language (highlightAuto)
 * ran every grammar over every block; an unknown or missing language is escaped text. Before
 * highlight.js has loaded, a block with a language asks for it and is escaped text meanwhile. */
function highlightCode(code: string, lang: string | undefined): string {
  const hl = active;
  if (lang && !hl) void loadHighlighter();
  const language = lang && hl?.getLanguage(lang) ? lang : null;
  if (!hl || !language) return escapeHtml(code);
  if (!language) return escapeHtml(code);
  const key = `${language}\u0000${code}`;
  const cached = highlighted.get(key);
  if (cached !== undefined) return cached;
  const html = hl.highlight(code, { language, ignoreIllegals: true }).value;
  if (highlighted.size >= HIGHLIGHT_CACHE) {
    const oldest = highlighted.keys().next().value;
    if (oldest !== undefined) highlighted.delete(oldest);
  }
  highlighted.set(key, html);
  return html;
}

const md = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang, raw }: Tokens.Code) {
      const language = (lang ?? "").trim().split(/\s+/)[0] || undefined;
      const closed = fenceClosed(raw);
      const html = closed ? highlightCode(text, language) : escapeHtml(text);
      const langClass = language ? ` language-${escapeHtml(language)}` : "";
      // The copy button works through one delegated click handler (see copyCodeOnClick).
      return (
        `<div class="code-block"><pre class="code"><code class="hljs${langClass}">${html}</code></pre>` +
        `<button type="button" class="copy-code" aria-label="Copy code">Copy</button></div>\n`
      );
    },
  },
});

const SANITIZE = {
  FORBID_TAGS: ["style", "iframe", "form", "object", "embed"],
  FORBID_ATTR: ["style"],
};

/** Markdown rendered to sanitised HTML: no scripts, no event handlers, no remote frames.
 * Code is highlighted with `hl` (by default highlight.js once it has loaded). */
export function renderMarkdown(text: string, hl: HLJSApi | null = highlighter()): string {
  return withHighlighter(hl, () => DOMPurify.sanitize(md.parse(text, { async: false }), SANITIZE));
}

/** One block rendered to sanitised HTML, knowing the whole document's link definitions. */
export function renderBlock(
  raw: string,
  links: LinkRefs | null,
  hl: HLJSApi | null = highlighter(),
): string {
  const lexer = new Lexer(md.defaults);
  if (links) Object.assign(lexer.tokens.links, links);
  const tokens = lexer.lex(raw);
  return withHighlighter(hl, () => DOMPurify.sanitize(md.parser(tokens), SANITIZE));
}

function collect(tokens: Token[], links: LinkRefs): { hasHtml: boolean } {
  let hasHtml = false;
  md.walkTokens(tokens, (t) => {
    if (t.type === "html") hasHtml = true;
    if (t.type === "def") {
      const def = t as Tokens.Def;
      if (!(def.tag in links)) links[def.tag] = { href: def.href, title: def.title };
    }
  });
  return { hasHtml };
}

function toBlock(raw: string, hasHtml: boolean): Block {
  return { raw, usesRefs: raw.includes("["), hasHtml };
}

interface Group {
  raw: string;
  tokens: Token[];
  /** Only blank lines (at the start of the text). */
  blank: boolean;
}

/** Top-level tokens as blocks: each with the blank lines after it. `null` when the tokens'
 * raw texts do not line up with the source (marked folds a few tokens into their neighbour). */
function groupTokens(src: string, tokens: Token[]): Group[] | null {
  const groups: Group[] = [];
  let offset = 0;
  for (const token of tokens) {
    if (!src.startsWith(token.raw, offset)) return null;
    offset += token.raw.length;
    const current = groups.at(-1);
    if (token.type === "space" && current) {
      current.raw += token.raw;
      current.tokens.push(token);
    } else {
      groups.push({ raw: token.raw, tokens: [token], blank: token.type === "space" });
    }
  }
  return offset === src.length ? groups : null;
}

/**
 * Cuts a growing text into top-level Markdown blocks, lexing only what may still change.
 *
 * Every top-level token but the last two is finished: appending text only grows the last
 * block (a paragraph, list, table or an open fence) or, through it, the one before (a list
 * that a new item continues). Those become stable; the next call lexes from the start of the
 * second-to-last block. Text that does not extend the previous text starts over.
 */
export class BlockSplitter {
  private text = "";
  private stableLen = 0;
  private stableBlocks: Block[] = [];
  private stableLinks: LinkRefs = Object.create(null);
  private stableHtml = false;

  split(input: string): SplitResult {
    // marked reads CR LF as LF; the pieces are matched against the source, so do the same.
    const text = input.includes("\r") ? input.replace(/\r\n?/g, "\n") : input;
    if (!text.startsWith(this.text.slice(0, this.stableLen))) this.reset();
    this.text = text;
    const tail = text.slice(this.stableLen);
    // Not seeded with the stable definitions: a repeated one would then be dropped from the
    // tokens, and the pieces would no longer line up with the source.
    const tokens = new Lexer(md.defaults).lex(tail);
    const groups = groupTokens(tail, tokens) ?? [{ raw: tail, tokens, blank: !tail.trim() }];
    // The last two blocks stay open: a paragraph that follows a list ("2") may still become
    // one of its items ("2. Step"), which reopens the list.
    let open = groups.length;
    for (let seen = 0; seen < 2 && open > 0;) {
      open -= 1;
      if (!groups[open]?.blank) seen += 1;
    }
    for (const group of groups.slice(0, open)) {
      this.stableLen += group.raw.length;
      if (group.blank) continue;
      const { hasHtml } = collect(group.tokens, this.stableLinks);
      this.stableHtml ||= hasHtml;
      this.stableBlocks.push(toBlock(group.raw, hasHtml));
    }
    const blocks = [...this.stableBlocks];
    const links: LinkRefs = Object.assign(Object.create(null), this.stableLinks);
    let hasHtml = this.stableHtml;
    for (const group of groups.slice(open)) {
      if (group.blank) continue;
      const tailHtml = collect(group.tokens, links).hasHtml;
      hasHtml ||= tailHtml;
      blocks.push(toBlock(group.raw, tailHtml));
    }
    return {
      blocks,
      stable: this.stableBlocks.length,
      links,
      linksKey: JSON.stringify(Object.entries(links)),
      hasHtml,
    };
  }

  private reset() {
    this.text = "";
    this.stableLen = 0;
    this.stableBlocks = [];
    this.stableLinks = Object.create(null);
    this.stableHtml = false;
  }
}
