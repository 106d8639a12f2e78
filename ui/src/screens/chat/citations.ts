import type { Citation } from "../../bindings";
import type { SourceAt } from "../../components/SourcePassage";

export type { SourceAt };

const HREF = /^#cite-[uv]-(\d+)$/;

/** The chip's words: the source's title and the page (or lines), and "unverified" when the
 * agent never retrieved that passage in this conversation. */
export function citationLabel(c: Citation): string {
  const where =
    c.page !== null
      ? `p. ${c.page}`
      : c.line_first !== null
        ? `lines ${c.line_first}–${c.line_last ?? c.line_first}`
        : null;
  const parts = [c.title ?? c.artifact_id, where, c.verified ? null : "unverified"];
  return parts.filter((p) => p !== null).join(" · ");
}

function escapeLinkText(text: string): string {
  return text.replace(/[\\[\]*_`<>~]/g, (ch) => `\\${ch}`);
}

/** `prose` with each citation the engine found (its exact text, `marker`) made a link the chat
 * shows as a chip: `#cite-v-N` for a verified one, `#cite-u-N` for one never retrieved. */
export function withCitationLinks(prose: string, citations: readonly Citation[]): string {
  let out = prose;
  citations.forEach((c, i) => {
    const title = c.verified
      ? `Open ${c.title ?? c.artifact_id} at this passage`
      : "Not retrieved in this conversation: the agent never read this passage";
    const link = `[${escapeLinkText(citationLabel(c))}](#cite-${c.verified ? "v" : "u"}-${i} "${title.replace(/"/g, "'")}")`;
    out = out.split(c.marker).join(link);
  });
  return out;
}

/** The citation a click on a chip in `target` is for, if it was one. */
export function citationClicked(
  target: EventTarget | null,
  citations: readonly Citation[],
): Citation | null {
  const link = target instanceof Element ? target.closest("a[href^='#cite-']") : null;
  const match = HREF.exec(link?.getAttribute("href") ?? "");
  return match ? (citations[Number(match[1])] ?? null) : null;
}

/** Where `c` points, for the source viewer. */
export function citationAt(c: Citation): SourceAt {
  return { page: c.page, lineFirst: c.line_first, lineLast: c.line_last };
}
