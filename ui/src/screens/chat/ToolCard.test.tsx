import { render, screen } from "@testing-library/react";
import { ToolCard } from "./ToolCard";
import type { TimelineItem } from "./timeline";

type ToolItem = Extract<TimelineItem, { kind: "tool" }>;

const running: ToolItem = {
  kind: "tool",
  key: "p1",
  callId: "p1",
  tool: "everything.trigger-long-running-operation",
  depth: 0,
  params: { steps: 4 },
  status: "running",
  result: null,
  reason: null,
  durationMs: null,
  artifactId: null,
  attachments: [],
  progress: null,
  guided: false,
  view: null,
};

describe("ToolCard refusals", () => {
  it("says once why a call did not run", () => {
    render(
      <ToolCard
        item={{
          ...running,
          tool: "create_artifact",
          params: { id: "car" },
          status: "not_run",
          result: "not run: the agent had used up its tool rounds (max_tool_rounds: 1)",
          reason: "the agent had used up its tool rounds (max_tool_rounds: 1)",
        }}
      />,
    );
    expect(screen.getByTestId("tool-reason")).toHaveTextContent(
      "Not run: the agent had used up its tool rounds (max_tool_rounds: 1)",
    );
    expect(screen.getAllByText(/used up its tool rounds/)).toHaveLength(1);
  });

  it("shows a refused call's arguments and who refused it", () => {
    render(
      <ToolCard
        item={{
          ...running,
          tool: "web_fetch",
          params: { url: "https://intranet.example.com/pay" },
          status: "denied",
          result: "`web_fetch` was not run: denied by a permission rule",
          reason:
            "denied by rule `deny web_fetch when url: https://intranet.example.com/**` (settings.yaml:3)",
        }}
      />,
    );
    expect(screen.getByText("url=https://intranet.example.com/pay")).toBeInTheDocument();
    expect(screen.getByTestId("tool-reason")).toHaveTextContent(
      "Refused: denied by rule `deny web_fetch when url: https://intranet.example.com/**` (settings.yaml:3)",
    );
  });

  it("says the person refused it, or the timeout", () => {
    const { rerender } = render(
      <ToolCard
        item={{ ...running, status: "denied", result: "x", reason: "denied by the user" }}
      />,
    );
    expect(screen.getByTestId("tool-reason")).toHaveTextContent("Refused: denied by the user");
    rerender(
      <ToolCard
        item={{
          ...running,
          status: "denied",
          result: "x",
          reason: "no answer before the permission timeout",
        }}
      />,
    );
    expect(screen.getByTestId("tool-reason")).toHaveTextContent(
      "Refused: no answer before the permission timeout",
    );
    rerender(<ToolCard item={{ ...running, status: "succeeded", result: "ok" }} />);
    expect(screen.queryByTestId("tool-reason")).toBeNull();
  });
});

describe("ToolCard progress", () => {
  it("shows how far a running call is, with the tool's message", () => {
    render(<ToolCard item={{ ...running, progress: { value: 2, total: 4, message: "step 2" } }} />);
    const bar = screen.getByRole("progressbar", { name: `${running.tool} progress` });
    expect(bar).toHaveAttribute("value", "2");
    expect(bar).toHaveAttribute("max", "4");
    expect(screen.getByTestId("tool-progress")).toHaveTextContent("2 of 4 · step 2");
  });

  it("shows an open-ended bar when the tool gives no total", () => {
    render(<ToolCard item={{ ...running, progress: { value: 7, total: null, message: null } }} />);
    expect(screen.getByRole("progressbar")).not.toHaveAttribute("value");
    expect(screen.getByTestId("tool-progress")).toHaveTextContent("7");
  });

  it("shows no bar before any report, nor once the call ended", () => {
    const { rerender } = render(<ToolCard item={running} />);
    expect(screen.queryByTestId("tool-progress")).toBeNull();
    rerender(
      <ToolCard
        item={{
          ...running,
          status: "succeeded",
          result: "done",
          progress: { value: 4, total: 4, message: null },
        }}
      />,
    );
    expect(screen.queryByTestId("tool-progress")).toBeNull();
  });
});

describe("ToolCard agent chain", () => {
  it("shows who made a sub-agent's call, and nothing for the conversation's agent", () => {
    const { rerender } = render(
      <ToolCard
        item={{ ...running, tool: "web_fetch", depth: 1 }}
        agentChain={["lead_agent", "search_agent", "web_fetch"]}
      />,
    );
    expect(screen.getByTestId("tool-chain")).toHaveTextContent(
      "lead_agent → search_agent → web_fetch",
    );
    rerender(<ToolCard item={{ ...running, tool: "web_fetch" }} />);
    expect(screen.queryByTestId("tool-chain")).toBeNull();
  });
});

describe("ToolCard guided calls", () => {
  it("says when the model wrote the call under the call grammar, and only then", () => {
    const done = {
      ...running,
      tool: "create_artifact",
      status: "succeeded" as const,
      result: "ok",
    };
    const { rerender } = render(<ToolCard item={{ ...done, guided: true }} />);
    expect(screen.getByTestId("tool-guided")).toHaveTextContent(
      "Guided: written under this agent's call grammar",
    );
    rerender(<ToolCard item={done} />);
    expect(screen.queryByTestId("tool-guided")).not.toBeInTheDocument();
  });
});

describe("ToolCard for skills", () => {
  it("names the skill a call loads, reads from or runs a script of", () => {
    const { rerender } = render(
      <ToolCard item={{ ...running, tool: "load_skill", params: { skill: "csv-report" } }} />,
    );
    expect(screen.getByTestId("tool-skill")).toHaveTextContent("Loads the skill csv-report");
    rerender(
      <ToolCard
        item={{
          ...running,
          tool: "read_skill_file",
          params: { skill: "csv-report", path: "references/format.md" },
        }}
      />,
    );
    expect(screen.getByTestId("tool-skill")).toHaveTextContent(
      "Reads a file of the skill csv-report: references/format.md",
    );
    rerender(<ToolCard item={{ ...running, tool: "web_fetch", params: { skill: "x" } }} />);
    expect(screen.queryByTestId("tool-skill")).toBeNull();
  });
});
