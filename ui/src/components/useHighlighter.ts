import { useSyncExternalStore } from "react";
import type { HLJSApi } from "highlight.js";
import { highlighter, mayHaveFence, subscribeHighlighter } from "./markdownBlocks";

/** highlight.js for Markdown `raw` once it has loaded (null before, and always for text without
 * a code fence, which then never renders again when it loads). */
export function useHighlighter(raw: string): HLJSApi | null {
  const fenced = mayHaveFence(raw);
  return useSyncExternalStore(subscribeHighlighter, () => (fenced ? highlighter() : null));
}
