import { useMemo } from "react";
import { renderMarkdown } from "./markdownBlocks";
import { copyCodeOnClick } from "./copyCode";

export { renderMarkdown };

/** Finished Markdown (an artifact, a role prompt) rendered in one go; streamed answers use
 * StreamingMarkdown, which renders block by block. */
export function Markdown({ text, className }: { text: string; className?: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  // Sanitised by DOMPurify in renderMarkdown.
  return (
    <div
      className={`markdown ${className ?? ""}`}
      onClick={copyCodeOnClick}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
