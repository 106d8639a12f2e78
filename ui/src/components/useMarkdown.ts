import { useEffect, useSyncExternalStore } from "react";
import {
  loadMarkdown,
  markdownRenderer,
  subscribeMarkdown,
  type MarkdownRenderer,
} from "./markdownLoader";

/** The Markdown renderer once it has loaded, null before (asking for it if nobody has). */
export function useMarkdownRenderer(): MarkdownRenderer | null {
  const renderer = useSyncExternalStore(subscribeMarkdown, markdownRenderer);
  useEffect(() => {
    // Shown as plain text meanwhile; a failed load is tried again by the next component.
    if (!renderer) loadMarkdown().catch(() => {});
  }, [renderer]);
  return renderer;
}
