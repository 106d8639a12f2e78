/**
 * Loading the Markdown renderer (markdownRender.ts) after the window's first frame.
 */
/**
 * The renderer (marked and DOMPurify, about 70 KB, a sixth of the window's first script) loads
 * right after the first frame, not with it: the window opens on a conversation list and an
 * empty chat, and an answer opened sooner shows as plain text until it is there (a few
 * milliseconds), then rendered. Components follow it with {@link subscribeMarkdown}.
 */
export type MarkdownRenderer = typeof import("./markdownRender");
let renderer: MarkdownRenderer | null = null;
let rendererLoading: Promise<MarkdownRenderer> | null = null;
const rendererLoaded = new Set<() => void>();

/** Load the renderer (once; a failed load is tried again by the next call). */
export function loadMarkdown(): Promise<MarkdownRenderer> {
  rendererLoading ??= import("./markdownRender").then(
    (m) => {
      renderer = m;
      for (const notify of rendererLoaded) notify();
      return m;
    },
    (e: unknown) => {
      rendererLoading = null;
      throw e;
    },
  );
  return rendererLoading;
}

/** The loaded renderer, or null (on its way). */
export function markdownRenderer(): MarkdownRenderer | null {
  return renderer;
}

/** Call `notify` when the renderer has loaded; returns the unsubscribe function. */
export function subscribeMarkdown(notify: () => void): () => void {
  rendererLoaded.add(notify);
  return () => rendererLoaded.delete(notify);
}
