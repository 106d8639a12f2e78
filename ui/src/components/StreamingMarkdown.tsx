import { memo, useMemo, useState } from "react";
import type { LinkRefs } from "./markdownBlocks";
import type { MarkdownRenderer } from "./markdownLoader";
import { useMarkdownRenderer } from "./useMarkdown";
import { copyCodeOnClick } from "./copyCode";
import { useHighlighter } from "./useHighlighter";

interface BlockProps {
  renderer: MarkdownRenderer;
  raw: string;
  links: LinkRefs | null;
  /** Changes when a link definition the block may use changes ("" if it uses none). */
  linksKey: string;
}

/** One top-level block, rendered again only when its source or the definitions it may use
 * change: finished blocks of a streaming answer keep their DOM (and their copy buttons). */
const MarkdownBlock = memo(
  function MarkdownBlock({ renderer, raw, links }: BlockProps) {
    // A block with a code fence renders again, once, when highlight.js has loaded.
    const hl = useHighlighter(raw);
    const html = useMemo(() => renderer.renderBlock(raw, links, hl), [renderer, raw, links, hl]);
    // Sanitised by DOMPurify in renderBlock.
    return <div className="md-block" dangerouslySetInnerHTML={{ __html: html }} />;
  },
  (a, b) => a.raw === b.raw && a.linksKey === b.linksKey,
);

/**
 * Markdown that may still be growing (a streamed answer): split into top-level blocks, each
 * rendered once it changes, so a token batch costs the size of the last block, not of the
 * whole answer. Code blocks are highlighted once their fence closes (highlight.js loads when
 * the first one does; see markdownBlocks).
 *
 * Raw HTML may open an element in one block and close it in another; once the text is final
 * (`streaming` false), such a message is rendered whole, so the result is the same as
 * rendering it in one go.
 */
export function StreamingMarkdown({
  text,
  streaming,
  className,
}: {
  text: string;
  streaming: boolean;
  className?: string;
}) {
  const renderer = useMarkdownRenderer();
  if (!renderer) return <PlainText text={text} className={className} />;
  return (
    <RenderedMarkdown renderer={renderer} text={text} streaming={streaming} className={className} />
  );
}

/** Markdown source shown as it is, while the renderer loads (see `loadMarkdown`). */
export function PlainText({ text, className }: { text: string; className?: string | undefined }) {
  return (
    <div className={`markdown ${className ?? ""}`}>
      <p className="md-plain">{text}</p>
    </div>
  );
}

function RenderedMarkdown({
  renderer,
  text,
  streaming,
  className,
}: {
  renderer: MarkdownRenderer;
  text: string;
  streaming: boolean;
  className?: string | undefined;
}) {
  const [splitter] = useState(() => new renderer.BlockSplitter());
  const doc = useMemo(() => splitter.split(text), [splitter, text]);
  const whole = !streaming && doc.hasHtml;
  return (
    <div className={`markdown ${className ?? ""}`} onClick={copyCodeOnClick}>
      {whole ? (
        <MarkdownBlock key="whole" renderer={renderer} raw={text} links={null} linksKey="" />
      ) : (
        doc.blocks.map((block, i) => (
          <MarkdownBlock
            key={i}
            renderer={renderer}
            raw={block.raw}
            links={block.usesRefs ? doc.links : null}
            linksKey={block.usesRefs ? doc.linksKey : ""}
          />
        ))
      )}
    </div>
  );
}
