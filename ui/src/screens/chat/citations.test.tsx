import { fireEvent, render, screen, within } from "@testing-library/react";
import type { Citation } from "../../bindings";
import { citationLabel, withCitationLinks } from "./citations";
import { SourcePassage, segments } from "../../components/SourcePassage";
import { Timeline } from "./TimelineView";
import type { TimelineItem } from "./timeline";

const ID = "src_0123456789ab";
const read: Citation = {
  marker: `[cite: ${ID}, p. 7]`,
  artifact_id: ID,
  title: "Field report",
  page: 7,
  line_first: 40,
  line_last: 41,
  verified: true,
};
const unread: Citation = {
  marker: `[cite: ${ID}, p. 4]`,
  artifact_id: ID,
  title: "Field report",
  page: 4,
  line_first: null,
  line_last: null,
  verified: false,
};

const answer = (citations: Citation[]): TimelineItem => ({
  kind: "assistant",
  key: "a1",
  agent: "lead_agent",
  depth: 0,
  text: "",
  prose: `A quokka was seen [cite: ${ID}, p. 7]. Days began at dawn [cite: ${ID}, p. 4].`,
  citations,
  streaming: false,
  usage: null,
  at: null,
  timing: null,
});

/** A 10-page source: page N's lines say "Day N", page 7 also has the quokka. */
function source(): string {
  const lines: string[] = [];
  for (let page = 1; page <= 10; page++) {
    lines.push(`<!-- page ${page} -->`, `Day ${page} of the survey.`, "");
    if (page === 7) lines.push("The quokka was seen near the lake.", "");
  }
  return lines.join("\n");
}

describe("citations", () => {
  it("label the source and page, and say when the passage was never retrieved", () => {
    expect(citationLabel(read)).toBe("Field report · p. 7");
    expect(citationLabel(unread)).toBe("Field report · p. 4 · unverified");
    expect(citationLabel({ ...read, title: null, page: null })).toBe(`${ID} · lines 40–41`);
    const text = withCitationLinks(`x ${read.marker} y ${read.marker}`, [read]);
    expect(text).not.toContain("[cite:");
    expect(text.match(/#cite-v-0/g)).toHaveLength(2);
  });

  it("show as chips in an answer; a click opens the source at the cited passage", () => {
    const opened: unknown[] = [];
    render(
      <Timeline
        shown
        items={[answer([read, unread])]}
        conversationId="c1"
        onOpenArtifact={(id, at) => opened.push([id, at])}
      />,
    );
    const message = screen.getByTestId("msg-assistant");
    expect(message).not.toHaveTextContent("[cite:");
    const chip = within(message).getByRole("link", { name: "Field report · p. 7" });
    const unverified = within(message).getByRole("link", {
      name: "Field report · p. 4 · unverified",
    });
    expect(unverified).toHaveAttribute("title", expect.stringContaining("Not retrieved"));
    fireEvent.click(chip);
    expect(opened).toEqual([[ID, { page: 7, lineFirst: 40, lineLast: 41 }]]);
  });

  it("without citations, an answer's text is left as written", () => {
    render(<Timeline shown items={[answer([])]} conversationId="c1" onOpenArtifact={() => {}} />);
    expect(screen.getByTestId("msg-assistant")).toHaveTextContent(`[cite: ${ID}, p. 7]`);
  });
});

describe("SourcePassage", () => {
  it("cuts a source at its page markers and keeps the cited lines apart", () => {
    const content = source();
    // Page 7 starts at line 19; its quokka line is line 22.
    expect(content.split("\n")[21]).toBe("The quokka was seen near the lake.");
    const parts = segments(content, { page: 7, lineFirst: 22, lineLast: 22 });
    expect(parts.filter((p) => p.divider !== null)).toHaveLength(10);
    expect(parts.filter((p) => p.cited).map((p) => p.text)).toEqual([
      "The quokka was seen near the lake.",
    ]);
  });

  it("shows the pages around the cited one with the passage highlighted", () => {
    const scrolled: Element[] = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this);
    };
    try {
      render(<SourcePassage content={source()} at={{ page: 7, lineFirst: 22, lineLast: 22 }} />);
      expect(screen.getByText("Pages 5–9 of 10 shown.")).toBeInTheDocument();
      expect(screen.getByRole("heading", { name: "Page 7" })).toHaveClass("page-cited");
      expect(screen.queryByRole("heading", { name: "Page 2" })).toBeNull();
      const passage = screen.getByTestId("passage-cited");
      expect(passage).toHaveTextContent("The quokka was seen near the lake.");
      expect(scrolled).toContain(passage);
    } finally {
      delete (Element.prototype as { scrollIntoView?: unknown }).scrollIntoView;
    }
  });

  it("with only a page cited, scrolls to that page's divider", () => {
    const scrolled: Element[] = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this);
    };
    try {
      render(
        <SourcePassage content={source()} at={{ page: 4, lineFirst: null, lineLast: null }} />,
      );
      expect(screen.queryByTestId("passage-cited")).toBeNull();
      expect(scrolled).toContain(screen.getByRole("heading", { name: "Page 4" }));
    } finally {
      delete (Element.prototype as { scrollIntoView?: unknown }).scrollIntoView;
    }
  });
});
