import { useEffect, useMemo, useRef } from "react";
import { Markdown } from "./Markdown";

/** Where a citation points in its source: the page and the passage's lines (all null: the
 * whole source, nothing highlighted). */
export type SourceAt = { page: number | null; lineFirst: number | null; lineLast: number | null };

/** Nothing cited: the whole source with its page dividers. */
export const WHOLE_SOURCE: SourceAt = { page: null, lineFirst: null, lineLast: null };

/** A page marker line of a source's extracted Markdown: `<!-- page 7 -->`, `<!-- slide 3 -->`,
 * `<!-- page 7 (vii) -->`, `<!-- sheet 2 (Budget) -->` (the library's documented form). */
const MARKER = /^<!-- (page|slide|sheet|chapter) (\d+)(?: \((.*)\))? -->\s*$/;

/** Pages shown on each side of the cited one in a long source. */
const AROUND = 2;

type Segment = {
  key: string;
  /** A page divider's words, or null for text. */
  divider: string | null;
  page: number | null;
  text: string;
  cited: boolean;
};

/** Cut `content` into page dividers and runs of text, the cited lines a run of their own. */
export function segments(content: string, at: SourceAt): Segment[] {
  const lines = content.split("\n");
  const out: Segment[] = [];
  let page: number | null = null;
  let run: string[] = [];
  let runCited = false;
  const flush = () => {
    if (run.length > 0 && run.some((l) => l.trim() !== "")) {
      out.push({
        key: `t${out.length}`,
        divider: null,
        page,
        text: run.join("\n"),
        cited: runCited,
      });
    }
    run = [];
  };
  lines.forEach((line, i) => {
    const n = i + 1;
    const marker = MARKER.exec(line);
    if (marker) {
      flush();
      page = Number(marker[2]);
      const kind = marker[1] ?? "page";
      const label = marker[3] ? ` (${marker[3]})` : "";
      const word = kind.charAt(0).toUpperCase() + kind.slice(1);
      out.push({
        key: `p${out.length}`,
        divider: `${word} ${page}${label}`,
        page,
        text: "",
        cited: false,
      });
      return;
    }
    const cited = at.lineFirst !== null && n >= at.lineFirst && n <= (at.lineLast ?? at.lineFirst);
    if (cited !== runCited) {
      flush();
      runCited = cited;
    }
    run.push(line);
  });
  flush();
  return out;
}

/** A source with its page dividers. Opened from a citation: the cited passage highlighted and
 * scrolled into view, and of a long source only the pages around the cited one. */
export function SourcePassage({ content, at }: { content: string; at: SourceAt }) {
  const all = useMemo(() => segments(content, at), [content, at]);
  const pages = all.filter((s) => s.divider !== null).length;
  const shown =
    at.page === null || pages <= 2 * AROUND + 1
      ? all
      : all.filter((s) => s.page !== null && Math.abs(s.page - (at.page ?? 0)) <= AROUND);
  const target = useRef<HTMLDivElement | null>(null);
  const targetKey =
    shown.find((s) => s.cited)?.key ??
    shown.find((s) => s.divider !== null && s.page === at.page)?.key ??
    null;
  useEffect(() => {
    target.current?.scrollIntoView?.({ block: "center" });
  }, [all, targetKey]);
  return (
    <div className="source-passage" data-testid="source-passage">
      {shown.length < all.length && (
        <p className="muted small">
          Pages {Math.max(1, (at.page ?? 1) - AROUND)}–{Math.min(pages, (at.page ?? 1) + AROUND)} of{" "}
          {pages} shown.
        </p>
      )}
      {shown.map((s) =>
        s.divider !== null ? (
          <h3
            key={s.key}
            className={`page-divider${s.page === at.page ? " page-cited" : ""}`}
            ref={s.key === targetKey ? target : undefined}
          >
            {s.divider}
          </h3>
        ) : (
          <div
            key={s.key}
            className={s.cited ? "passage-cited" : undefined}
            data-testid={s.cited ? "passage-cited" : undefined}
            ref={s.key === targetKey ? target : undefined}
          >
            <Markdown text={s.text} />
          </div>
        ),
      )}
    </div>
  );
}
