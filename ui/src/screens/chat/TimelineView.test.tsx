import { render, screen } from "@testing-library/react";
import { Timeline } from "./TimelineView";
import type { TimelineItem } from "./timeline";

const said = (n: number): TimelineItem => ({
  kind: "user",
  key: `u${n}`,
  text: `Message ${n}`,
  agent: "lead_agent",
  depth: 0,
  at: null,
});

describe("Timeline", () => {
  it("out of sight, leaves its scroll alone; shown again, goes to the end it was kept at", () => {
    // jsdom lays nothing out and has no element scrolling: each scroll asked for is recorded.
    const scrolls: ScrollToOptions[] = [];
    Object.defineProperty(HTMLElement.prototype, "scrollTo", {
      configurable: true,
      value: (options?: ScrollToOptions) => scrolls.push(options ?? {}),
    });
    try {
      const props = { conversationId: "c1", onOpenArtifact: () => {} };
      const view = render(<Timeline shown items={[said(1)]} {...props} />);
      const atFirst = scrolls.length;
      expect(atFirst).toBeGreaterThan(0);
      // Another screen shows; the conversation grows meanwhile.
      view.rerender(<Timeline shown={false} items={[said(1)]} {...props} />);
      view.rerender(<Timeline shown={false} items={[said(1), said(2)]} {...props} />);
      expect(scrolls).toHaveLength(atFirst);
      expect(screen.getByText("Message 2")).toBeInTheDocument();
      // Back: at the end, where it was.
      view.rerender(<Timeline shown items={[said(1), said(2)]} {...props} />);
      expect(scrolls.length).toBeGreaterThan(atFirst);
    } finally {
      delete (HTMLElement.prototype as { scrollTo?: unknown }).scrollTo;
    }
  });
});
