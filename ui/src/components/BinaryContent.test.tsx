import { fireEvent, render, screen } from "@testing-library/react";
import { vi } from "vitest";
import { ToolCard } from "../screens/chat/ToolCard";
import type { StoredAttachment } from "../bindings";
import type { TimelineItem } from "../screens/chat/timeline";

type ToolItem = Extract<TimelineItem, { kind: "tool" }>;

const RESOURCE: StoredAttachment = {
  artifact_id: "resource_0123456789ab",
  mime: "text/plain",
  title: "demo://log",
  size_bytes: 5700,
  text: true,
};

/** A finished MCP call whose result held an embedded text resource, stored as a text
 * artifact titled by its URI. */
const withResource: ToolItem = {
  kind: "tool",
  key: "c1",
  callId: "c1",
  tool: "everything.get-resource-reference",
  depth: 0,
  params: {},
  status: "succeeded",
  result: "[resource demo://log, text/plain, 6 KB, stored as artifact resource_0123456789ab]",
  reason: null,
  durationMs: 12,
  artifactId: null,
  attachments: [RESOURCE],
  progress: null,
  guided: false,
  view: null,
};

describe("a tool card's text resource", () => {
  it("links to its artifact, and never loads it as bytes", () => {
    const onOpen = vi.fn();
    render(<ToolCard item={withResource} conversationId="conv" onOpenArtifact={onOpen} />);
    const link = screen.getByRole("button", { name: "Open demo://log" });
    expect(screen.getByTestId("binary-content")).toHaveTextContent(
      "text/plain · 6 KB · resource_0123456789ab",
    );
    fireEvent.click(link);
    expect(onOpen).toHaveBeenCalledWith("resource_0123456789ab");
    expect(screen.queryByTestId("binary-image")).toBeNull();
  });

  it("binary content that is not shown inline is no link", () => {
    render(
      <ToolCard
        item={{
          ...withResource,
          attachments: [{ ...RESOURCE, text: false }],
        }}
        conversationId="conv"
        onOpenArtifact={vi.fn()}
      />,
    );
    expect(screen.queryByTestId("attachment-open")).toBeNull();
  });
});
