import { useMemo } from "react";
import { renderMarkdown } from "./markdownBlocks";
import { copyCodeOnClick } from "./copyCode";
import { useHighlighter } from "./useHighlighter";

export { renderMarkdown };

/** Finished Markdown (an artifact, a role prompt) rendered in one go; streamed answers use
 * StreamingMarkdown, which renders block by block. */
export function Markdown({ text, className }: { text: string; className?: string }) {
  // Rendered again, once, when highlight.js has loaded (if the text has a code fence).
  const hl = useHighlighter(text);
  const html = useMemo(() => renderMarkdown(text, hl), [text, hl]);
  // Sanitised by DOMPurify in renderMarkdown.
  return (
    <div
      className={`markdown ${className ?? ""}`}
      onClick={copyCodeOnClick}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
