import type { EngineEvent } from "../../bindings";
import { emptyChat, fromHistory, reduce, type ChatState } from "./timeline";

const C = "c1";
const run = (events: EngineEvent[], start: ChatState = emptyChat) => events.reduce(reduce, start);

describe("timeline reducer", () => {
  it("streams tokens into one answer and records usage when it finishes", () => {
    const s = run([
      { type: "run_started", conversation_id: C, run_id: "r", agent: "lead" },
      { type: "token", conversation_id: C, agent: "lead", depth: 0, text: "Hel" },
      { type: "token", conversation_id: C, agent: "lead", depth: 0, text: "lo" },
    ]);
    expect(s.running).toBe(true);
    expect(s.items).toHaveLength(1);
    expect(s.items[0]).toMatchObject({ kind: "assistant", text: "Hello", streaming: true });
    const done = reduce(s, {
      type: "model_answer",
      conversation_id: C,
      agent: "lead",
      depth: 0,
      finish_reason: "stop",
      prompt_tokens: 10,
      completion_tokens: 2,
    });
    expect(done.items[0]).toMatchObject({ streaming: false, usage: { prompt: 10, completion: 2 } });
  });

  it("tracks a tool call from 'calling' to its result and artifact", () => {
    const s = run([
      {
        type: "tool_call_started",
        conversation_id: C,
        agent: "lead",
        index: 0,
        name: "create_artifact",
      },
    ]);
    expect(s.callingTool).toBe("create_artifact");
    const started = reduce(s, {
      type: "tool_start",
      conversation_id: C,
      call_id: "k1",
      tool: "create_artifact",
      params: { id: "notes" },
    });
    expect(started.items[0]).toMatchObject({ kind: "tool", status: "running" });
    const done = reduce(started, {
      type: "tool_complete",
      conversation_id: C,
      call_id: "k1",
      tool: "create_artifact",
      success: true,
      result: "created",
      metadata: { artifact_snapshot: { id: "notes" } },
      duration_ms: 12,
    });
    expect(done.items[0]).toMatchObject({
      status: "succeeded",
      durationMs: 12,
      artifactId: "notes",
    });
  });

  it("shows refused calls as denied or failed cards", () => {
    const denied = run([
      {
        type: "tool_complete",
        conversation_id: C,
        call_id: "k2",
        tool: "web_fetch",
        success: false,
        result: "the user did not allow `web_fetch` to run (denied)",
        metadata: {},
        duration_ms: 3,
      },
      {
        type: "tool_complete",
        conversation_id: C,
        call_id: "k3",
        tool: "__malformed__",
        success: false,
        result: "could not be read",
        metadata: {},
        duration_ms: 0,
      },
    ]);
    expect(denied.items.map((i) => i.kind === "tool" && i.status)).toEqual(["denied", "failed"]);
  });

  it("nests sub-agent work and ends cancelled runs with a note", () => {
    const s = run([
      { type: "run_started", conversation_id: C, run_id: "r", agent: "lead" },
      {
        type: "agent_switch",
        conversation_id: C,
        from: "lead",
        to: "search_agent",
        instruction: "find",
        depth: 1,
      },
      { type: "tool_start", conversation_id: C, call_id: "k", tool: "web_search", params: {} },
      { type: "agent_return", conversation_id: C, from: "search_agent", to: "lead", success: true },
      {
        type: "run_ended",
        conversation_id: C,
        run_id: "r",
        status: "cancelled",
        final_answer: null,
        error: null,
      },
    ]);
    expect(s.items.map((i) => i.kind)).toEqual(["handover", "tool", "return", "run_end"]);
    expect(s.items[1]).toMatchObject({ depth: 1 });
    expect(s.running).toBe(false);
  });

  it("rebuilds a conversation from stored messages, interrupted runs included", () => {
    const s = fromHistory(
      [
        {
          id: 1,
          role: "user",
          agent: "lead",
          content: "task",
          run_id: "r",
          depth: 0,
          prompt_tokens: null,
          completion_tokens: null,
        },
        {
          id: 2,
          role: "assistant",
          agent: "lead",
          content: "answer",
          run_id: "r",
          depth: 0,
          prompt_tokens: 5,
          completion_tokens: 7,
        },
        {
          id: 3,
          role: "tool",
          agent: "lead",
          content: "<tool_result/>",
          run_id: "r",
          depth: 0,
          prompt_tokens: null,
          completion_tokens: null,
        },
      ],
      "interrupted",
      false,
    );
    expect(s.items.map((i) => i.kind)).toEqual(["user", "assistant", "tool_results", "run_end"]);
    expect(s.items[1]).toMatchObject({ usage: { prompt: 5, completion: 7 } });
  });
});
