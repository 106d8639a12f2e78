import { useMemo } from "react";
import { copyCodeOnClick } from "./copyCode";
import type { MarkdownRenderer } from "./markdownLoader";
import { PlainText } from "./StreamingMarkdown";
import { useHighlighter } from "./useHighlighter";
import { useMarkdownRenderer } from "./useMarkdown";

/** Finished Markdown (an artifact, a role prompt) rendered in one go; streamed answers use
 * StreamingMarkdown, which renders block by block. */
export function Markdown({ text, className }: { text: string; className?: string }) {
  const renderer = useMarkdownRenderer();
  if (!renderer) return <PlainText text={text} className={className} />;
  return <Rendered renderer={renderer} text={text} className={className} />;
}

function Rendered({
  renderer,
  text,
  className,
}: {
  renderer: MarkdownRenderer;
  text: string;
  className?: string | undefined;
}) {
  // Rendered again, once, when highlight.js has loaded (if the text has a code fence).
  const hl = useHighlighter(text);
  const html = useMemo(() => renderer.renderMarkdown(text, hl), [renderer, text, hl]);
  // Sanitised by DOMPurify in renderMarkdown.
  return (
    <div
      className={`markdown ${className ?? ""}`}
      onClick={copyCodeOnClick}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
