/**
 * What the window's first script needs of Markdown rendering: fences, and highlight.js loaded
 * when a code block needs it. The renderer itself (markdownRender.ts, marked and DOMPurify) comes
 * through markdownLoader.ts.
 */
import type { HLJSApi } from "highlight.js";

/** Link reference definitions (`[tag]: href "title"`), by lower-cased tag, first one wins. */
export type LinkRefs = Record<string, { href: string; title: string }>;

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Whether a fenced code token's raw text ends with its closing fence (while streaming, the
 * last block may be a fence whose end has not arrived: it stays plain text until it has). */
export function fenceClosed(raw: string): boolean {
  const open = /^ {0,3}(`{3,}|~{3,})/.exec(raw);
  if (!open) return true; // an indented code block: nothing to wait for
  const fence = open[1] ?? "";
  const lines = raw.replace(/\n+$/, "").split("\n");
  if (lines.length < 2) return false;
  const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(lines.at(-1) ?? "")?.[1] ?? "";
  return close[0] === fence[0] && close.length >= fence.length;
}

/**
 * highlight.js with its common languages (about 150 KB, a quarter of the startup script) loads
 * when the first closed code fence with a language needs it, not with the app: until then such
 * a block is escaped text, and components showing one re-render once it is there (see
 * {@link subscribeHighlighter}).
 */
let hljs: HLJSApi | null = null;
let loading: Promise<void> | null = null;
const loaded = new Set<() => void>();

/** Load highlight.js (once; a failed load is tried again by the next fence that needs it). */
export function loadHighlighter(): Promise<void> {
  loading ??= import("highlight.js/lib/common").then(
    (m) => {
      hljs = m.default;
      for (const notify of loaded) notify();
    },
    // Without it code stays plain, readable text; the next closed fence tries again.
    () => {
      loading = null;
    },
  );
  return loading;
}

/** Load highlight.js once the window is idle after startup (at the latest `ms` later), so a
 * streamed answer's first code block does not pay for parsing it mid-stream (a 90 ms stall
 * in the rendering benchmark). The startup script stays without it. WebKitGTK has no
 * `requestIdleCallback`: there the timeout decides, and a second after startup the window is
 * idle (the first page is on screen) while nobody has sent a question yet. */
export function preloadHighlighterWhenIdle(ms = 1000): void {
  const idle = (globalThis as { requestIdleCallback?: (cb: () => void, o: object) => void })
    .requestIdleCallback;
  if (idle) idle(() => void loadHighlighter(), { timeout: ms });
  else setTimeout(() => void loadHighlighter(), ms);
}

/** The loaded highlighter, or null (not needed yet, or on its way). */
export function highlighter(): HLJSApi | null {
  return hljs;
}

/** Whether loading highlight.js was ever asked for (by a closed fence with a language). */
export function highlighterRequested(): boolean {
  return loading !== null || hljs !== null;
}

/** Call `notify` when highlight.js has loaded; returns the unsubscribe function. */
export function subscribeHighlighter(notify: () => void): () => void {
  loaded.add(notify);
  return () => loaded.delete(notify);
}

/** Whether `raw` may hold a code fence (so its rendering may change when highlight.js loads). */
export function mayHaveFence(raw: string): boolean {
  return raw.includes("```") || raw.includes("~~~");
}

/** A top-level block: its source, and whether later definitions can change it. */
export interface Block {
  raw: string;
  /** The block has a `[`, so a link definition anywhere in the document may apply to it. */
  usesRefs: boolean;
  /** The block holds raw HTML, which may open an element another block closes. */
  hasHtml: boolean;
}

export interface SplitResult {
  /** Finished blocks first, then the growing tail (if any). */
  blocks: Block[];
  /** How many of `blocks` are finished (never change as text is appended). */
  stable: number;
  links: LinkRefs;
  /** A stable string for `links`, to key blocks that use references. */
  linksKey: string;
  hasHtml: boolean;
}
