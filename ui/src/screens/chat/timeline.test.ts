import type { EngineEvent } from "../../bindings";
import { storedMessage, tokenEvent } from "../../test/engineData";
import {
  agentChains,
  answerSpeed,
  emptyChat,
  fromHistory,
  reduce,
  type ChatState,
} from "./timeline";
import type {
  CallStatus,
  HistoryCall,
  HistoryMessage,
  HistoryResult,
  JsonValue,
  StoredMessage,
} from "../../bindings";

const C = "c1";
const run = (events: EngineEvent[], start: ChatState = emptyChat) =>
  events.reduce((s, e) => reduce(s, e), start);

describe("timeline reducer", () => {
  it("streams tokens into one answer and records usage when it finishes", () => {
    const s = run([
      { type: "run_started", conversation_id: C, run_id: "r", agent: "lead" },
      tokenEvent(C, "Hel", { agent: "lead" }),
      tokenEvent(C, "lo", { agent: "lead" }),
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
      citations: [],
    });
    expect(done.items[0]).toMatchObject({ streaming: false, usage: { prompt: 10, completion: 2 } });
  });

  it("tracks a tool call from 'calling' to its result and artifact", () => {
    const s = run([
      {
        type: "tool_call_started",
        conversation_id: C,
        call_id: "k1",
        agent: "lead",
        depth: 0,
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
      view_of: null,
    });
    expect(started.items[0]).toMatchObject({ kind: "tool", status: "running" });
    const done = reduce(started, {
      type: "tool_complete",
      params: {},
      conversation_id: C,
      call_id: "k1",
      agent: "lead",
      depth: 0,
      tool: "create_artifact",
      success: true,
      status: "succeeded",
      reason: null,
      result: "created",
      metadata: { artifact_snapshot: { id: "notes" } },
      artifact_ids: ["notes"],
      attachments: [],
      duration_ms: 12,
      guided: false,
      view: null,
      view_of: null,
    });
    expect(done.items[0]).toMatchObject({
      status: "succeeded",
      durationMs: 12,
      artifactId: "notes",
    });
  });

  /** A finished call as the engine reports it: `status` says how it ended, `result` is the
   * engine's English for the model. */
  const complete = (
    call_id: string,
    tool: string,
    status: CallStatus,
    result: string,
  ): EngineEvent => ({
    type: "tool_complete",
    params: {},
    conversation_id: C,
    call_id,
    agent: "lead",
    depth: 0,
    tool,
    success: status === "succeeded",
    status,
    reason: status === "succeeded" ? null : result,
    result,
    metadata: {},
    artifact_ids: [],
    attachments: [],
    duration_ms: 0,
    guided: false,
    view: null,
    view_of: null,
  });

  it("shows refused calls as denied, failed, not-run or stopped cards from their status", () => {
    const s = run([
      complete("k2", "web_fetch", "denied", "the user did not allow `web_fetch` to run (denied)"),
      complete("k3", "__malformed__", "failed", "could not be read"),
      complete("k4", "probe", "not_run", "not run: the run was stopped while waiting"),
      complete("k5", "slow", "stopped", "stopped by the user while running"),
    ]);
    expect(s.items.map((i) => i.kind === "tool" && i.status)).toEqual([
      "denied",
      "failed",
      "not_run",
      "stopped",
    ]);
  });

  it("reads a live call's status, not the engine's wording", () => {
    // Reworded: no "did not allow", no "not run:" — the status alone decides.
    const s = run([
      complete("k6", "web_fetch", "denied", "Permission refused by the person at the keyboard."),
      complete("k7", "probe", "not_run", "Skipped because the run ended."),
      complete("k8", "echo", "failed", "the user did not allow this text to fool anyone"),
    ]);
    expect(s.items.map((i) => i.kind === "tool" && i.status)).toEqual([
      "denied",
      "not_run",
      "failed",
    ]);
  });

  it("keeps a refused call's arguments and who refused it (it had no tool_start)", () => {
    const rule =
      "denied by rule `deny web_fetch when url: https://intranet.example.com/**` (settings.yaml:3)";
    const s = run([
      {
        ...complete(
          "k9",
          "web_fetch",
          "denied",
          "`web_fetch` was not run: denied by a permission rule",
        ),
        params: { url: "https://intranet.example.com/pay" },
        reason: rule,
      } as EngineEvent,
    ]);
    const card = s.items[0];
    expect(card?.kind === "tool" && card.params).toEqual({
      url: "https://intranet.example.com/pay",
    });
    expect(card?.kind === "tool" && card.reason).toBe(rule);
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
      {
        type: "tool_start",
        conversation_id: C,
        call_id: "k",
        tool: "web_search",
        params: {},
        view_of: null,
      },
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
    // The sub-agent's call carries its chain; the lead's own calls have none.
    const chains = agentChains(s.items);
    expect(chains.get("k")).toEqual(["lead", "search_agent", "web_search"]);
    expect(chains.size).toBe(1);
  });

  it("rebuilds a conversation from stored messages, interrupted runs included", () => {
    const s = fromHistory(
      [
        stored(1, "user", "task"),
        {
          ...stored(2, "assistant", "answer"),
          message: { ...msg(2, "assistant", "answer"), prompt_tokens: 5, completion_tokens: 7 },
        },
        { ...stored(3, "tool", "the round limit"), notes: "You have used all 3 tool rounds." },
      ],
      "interrupted",
      false,
    );
    expect(s.items.map((i) => i.kind)).toEqual(["user", "assistant", "tool_results", "run_end"]);
    expect(s.items[1]).toMatchObject({ usage: { prompt: 5, completion: 7 } });
    expect(s.items[2]).toMatchObject({ text: "You have used all 3 tool rounds." });
  });

  it("shows stored calls and results as the cards a live run shows", () => {
    const s = fromHistory(
      [
        stored(1, "user", "task"),
        {
          ...stored(2, "assistant", "Writing.<tool_call>…</tool_call>"),
          calls: [
            call("m2-0", "create_artifact", { id: "notes", title: "Notes" }, "succeeded"),
            call("m2-1", "probe", {}, "denied"),
            call("m2-2", "web_fetch", { url: "http://x" }, "failed"),
          ],
        },
        {
          ...stored(3, "tool", ""),
          results: [
            result(
              "m2-0",
              "create_artifact",
              { id: "notes", title: "Notes" },
              "succeeded",
              "created notes v1",
              {
                artifact_ids: ["notes"],
                attachments: [],
              },
            ),
            result("m2-1", "probe", {}, "denied", "refused"),
            result("m2-2", "web_fetch", { url: "http://x" }, "failed", "HTTP 404"),
          ],
        },
        {
          ...stored(4, "assistant", "again"),
          calls: [call("m4-0", "probe", { a: "1" }, "not_run")],
        },
      ],
      "cancelled",
      false,
    );
    const cards = s.items.filter((i) => i.kind === "tool");
    expect(cards.map((c) => [c.callId, c.tool, c.status, c.result])).toEqual([
      ["m2-0", "create_artifact", "succeeded", "created notes v1"],
      ["m2-1", "probe", "denied", "refused"],
      ["m2-2", "web_fetch", "failed", "HTTP 404"],
      [
        "m4-0",
        "probe",
        "not_run",
        "No result was recorded for this call: it was not run, or the app stopped before it finished.",
      ],
    ]);
    expect(cards[0]).toMatchObject({
      params: { id: "notes", title: "Notes" },
      artifactId: "notes",
    });
    expect(cards[2]).toMatchObject({ params: { url: "http://x" }, artifactId: null });
    // Cards follow the answer that made them.
    expect(s.items.map((i) => i.kind)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "tool",
      "assistant",
      "tool",
      "run_end",
    ]);

    // While a run is still working on its last calls, they are not declared lost.
    const live = fromHistory(
      [{ ...stored(1, "assistant", "x"), calls: [call("m1-0", "probe", {}, "not_run")] }],
      "running",
      true,
    );
    expect(live.items.map((i) => i.kind)).toEqual(["assistant"]);
  });

  it("keeps a call's attachments as data, live and from history, apart from its artifact link", () => {
    const attachments = [
      { artifact_id: "image_a", mime: "image/png", title: "Shot", size_bytes: 67 },
    ];
    const live = run([
      {
        type: "tool_complete",
        params: {},
        conversation_id: C,
        call_id: "k1",
        agent: "lead",
        depth: 0,
        tool: "camera.snap",
        success: true,
        status: "succeeded",
        reason: null,
        result: "Here.",
        metadata: { persisted_artifact_id: "tool_camera_snap_1" },
        artifact_ids: ["tool_camera_snap_1", "image_a"],
        attachments,
        duration_ms: 1,
        guided: false,
        view: null,
        view_of: null,
      },
    ]);
    expect(live.items[0]).toMatchObject({ attachments, artifactId: "tool_camera_snap_1" });
    const history = fromHistory(
      [
        { ...stored(1, "assistant", "x"), calls: [call("m1-0", "camera.snap", {}, "succeeded")] },
        {
          ...stored(2, "tool", ""),
          results: [
            result("m1-0", "camera.snap", {}, "succeeded", "Here.", {
              artifact_ids: ["image_a"],
              attachments,
            }),
          ],
        },
      ],
      "completed",
      false,
    );
    // The image is shown as an attachment, not offered as a text artifact to open.
    expect(history.items.find((i) => i.kind === "tool")).toMatchObject({
      attachments,
      artifactId: null,
    });
  });

  it("marks a guided call live and from history, and no other", () => {
    const complete = (call_id: string, guided: boolean) => ({
      type: "tool_complete" as const,
      params: {},
      conversation_id: C,
      call_id,
      agent: "lead",
      depth: 0,
      tool: "create_artifact",
      success: true,
      status: "succeeded" as const,
      reason: null,
      result: "ok",
      metadata: {},
      artifact_ids: [],
      attachments: [],
      duration_ms: 1,
      guided,
      view: null,
      view_of: null,
    });
    const live = run([complete("g1", true), complete("g2", false)]);
    expect(live.items.map((i) => i.kind === "tool" && i.guided)).toEqual([true, false]);
    const history = fromHistory(
      [
        {
          ...stored(1, "assistant", "x"),
          calls: [call("m1-0", "create_artifact", {}, "succeeded")],
        },
        {
          ...stored(2, "tool", ""),
          results: [result("m1-0", "create_artifact", {}, "succeeded", "ok", { guided: true })],
        },
      ],
      "completed",
      false,
    );
    expect(history.items.find((i) => i.kind === "tool")).toMatchObject({ guided: true });
  });

  it("keeps a call's view with its card, and leaves the calls a view makes to the view", () => {
    const view = { server: "apps", resource_uri: "ui://counter/view" };
    const event = (call_id: string, tool: string, extra: Partial<EngineEvent>) =>
      ({
        type: "tool_complete",
        params: {},
        conversation_id: C,
        call_id,
        agent: "lead",
        depth: 0,
        tool,
        success: true,
        status: "succeeded",
        reason: null,
        result: "ok",
        metadata: {},
        artifact_ids: [],
        attachments: [],
        duration_ms: 1,
        guided: false,
        view: null,
        view_of: null,
        ...extra,
      }) as EngineEvent;
    const live = run([
      event("c1", "apps.show_counter", { view } as Partial<EngineEvent>),
      {
        type: "tool_start",
        conversation_id: C,
        call_id: "v1",
        tool: "apps.increment",
        params: {},
        view_of: "apps",
      },
      event("v1", "apps.increment", { view_of: "apps" } as Partial<EngineEvent>),
    ]);
    const tools = live.items.filter((i) => i.kind === "tool");
    expect(tools.map((i) => i.callId)).toEqual(["c1"]);
    expect(tools[0]).toMatchObject({ view });
  });

  it("reads each status from the stored record, whatever the engine's wording", () => {
    // The texts say the opposite of the statuses: only the statuses count.
    const s = fromHistory(
      [
        {
          ...stored(1, "assistant", "x"),
          calls: ["denied", "not_run", "stopped", "failed"].map((st, i) =>
            call(`m1-${i}`, "probe", {}, st as CallStatus),
          ),
        },
        {
          ...stored(2, "tool", ""),
          results: [
            result("m1-0", "probe", {}, "denied", "Permission refusée par l'utilisateur"),
            result("m1-1", "probe", {}, "not_run", "the user did not allow `probe`"),
            result("m1-2", "probe", {}, "stopped", "not run: whatever"),
            result("m1-3", "probe", {}, "failed", "not run: the user did not allow it"),
          ],
        },
      ],
      "completed",
      false,
    );
    const cards = s.items.filter((i) => i.kind === "tool");
    expect(cards.map((c) => c.status)).toEqual(["denied", "not_run", "stopped", "failed"]);
  });

  it("pairs results with calls by id: two calls of one tool answered in another order", () => {
    const s = fromHistory(
      [
        {
          ...stored(1, "assistant", "x"),
          calls: [
            call("m1-0", "echo", { text: "a" }, "succeeded"),
            call("m1-1", "echo", { text: "b" }, "failed"),
          ],
        },
        {
          ...stored(2, "tool", ""),
          results: [
            result("m1-1", "echo", { text: "b" }, "failed", "b broke"),
            result("m1-0", "echo", { text: "a" }, "succeeded", "a done"),
          ],
        },
      ],
      "completed",
      false,
    );
    const cards = s.items.filter((i) => i.kind === "tool");
    expect(cards.map((c) => [c.callId, c.params, c.status, c.result])).toEqual([
      ["m1-1", { text: "b" }, "failed", "b broke"],
      ["m1-0", { text: "a" }, "succeeded", "a done"],
    ]);
  });

  it("keeps a sub-agent's messages between the hand-over call and its result", () => {
    const handover = { target: "r", instruction: "research this" };
    const s = fromHistory(
      [
        {
          ...stored(1, "assistant", "handing over"),
          calls: [
            call("m1-0", "call_subagent", { agent_name: "r" }, "succeeded"),
            call("m1-1", "web_fetch", { url: "u" }, "succeeded"),
          ],
        },
        {
          ...stored(2, "user", "research this"),
          message: { ...msg(2, "user", "research this"), depth: 1, agent: "r" },
        },
        {
          ...stored(3, "assistant", "found it"),
          message: { ...msg(3, "assistant", "found it"), depth: 1, agent: "r" },
          calls: [call("m3-0", "probe", {}, "not_run")],
        },
        {
          ...stored(4, "tool", ""),
          results: [
            result("m1-0", "call_subagent", { agent_name: "r" }, "succeeded", "found it", {
              handover,
            }),
            result("m1-1", "web_fetch", { url: "u" }, "succeeded", "page"),
          ],
        },
      ],
      "completed",
      false,
    );
    expect(s.items.map((i) => `${i.kind}:${"depth" in i ? i.depth : ""}`)).toEqual([
      "assistant:0",
      "handover:1",
      "assistant:1",
      // The sub-agent's pending call ended with it, before the caller's results.
      "tool:1",
      "return:0",
      "tool:0",
      "tool:0",
    ]);
    expect(s.items[1]).toMatchObject({ from: "lead", to: "r", instruction: "research this" });
    expect(s.items[3]).toMatchObject({ tool: "probe", status: "not_run" });
    expect(s.items[4]).toMatchObject({ from: "r", to: "lead", success: true });
    expect(s.items[5]).toMatchObject({ params: { agent_name: "r" }, status: "succeeded" });

    // A hand-over refused before it happened has no return.
    const refused = fromHistory(
      [
        {
          ...stored(1, "assistant", "x"),
          calls: [call("m1-0", "call_subagent", { agent_name: "nobody" }, "failed")],
        },
        {
          ...stored(2, "tool", ""),
          results: [
            result("m1-0", "call_subagent", { agent_name: "nobody" }, "failed", "no such agent"),
          ],
        },
      ],
      "completed",
      false,
    );
    expect(refused.items.map((i) => i.kind)).toEqual(["assistant", "tool"]);
  });
});

function call(
  call_id: string,
  name: string,
  params: Record<string, JsonValue>,
  status: CallStatus,
): HistoryCall {
  return { call_id, name, params, error: null, status, reason: null };
}

function result(
  call_id: string,
  name: string,
  params: Record<string, JsonValue>,
  status: CallStatus,
  text: string,
  extra: Partial<HistoryResult> = {},
): HistoryResult {
  return {
    call_id,
    name,
    params,
    success: status === "succeeded",
    status,
    reason: status === "succeeded" ? null : text,
    text,
    artifact_ids: [],
    attachments: [],
    handover: null,
    guided: false,
    view: null,
    ...extra,
  };
}

function msg(id: number, role: string, content: string): StoredMessage {
  return storedMessage(id, role, content, { agent: "lead" }).message;
}

function stored(id: number, role: string, content: string): HistoryMessage {
  return storedMessage(id, role, content, { agent: "lead" });
}

describe("a running call's progress", () => {
  const start: EngineEvent = {
    type: "tool_start",
    conversation_id: C,
    call_id: "p1",
    tool: "everything.trigger-long-running-operation",
    params: {},
    view_of: null,
  };
  const progress = (value: number, message: string | null): EngineEvent => ({
    type: "tool_progress",
    conversation_id: C,
    call_id: "p1",
    progress: value,
    total: 4,
    message,
  });

  it("keeps the latest report on the running card, and drops late ones after it ended", () => {
    const s = run([start, progress(1, "step 1"), progress(2, null)]);
    expect(s.items[0]).toMatchObject({
      kind: "tool",
      status: "running",
      progress: { value: 2, total: 4, message: null },
    });
    const done = reduce(s, {
      type: "tool_complete",
      params: {},
      conversation_id: C,
      call_id: "p1",
      agent: "lead",
      depth: 0,
      tool: start.tool,
      success: true,
      status: "succeeded",
      reason: null,
      result: "done",
      metadata: {},
      artifact_ids: [],
      attachments: [],
      duration_ms: 1000,
      guided: false,
      view: null,
      view_of: null,
    });
    const late = reduce(done, progress(4, "late"));
    expect(late).toBe(done);
  });

  it("ignores a report for a call it does not show", () => {
    const s = run([start]);
    expect(reduce(s, { ...progress(1, null), call_id: "other" } as EngineEvent)).toBe(s);
  });
});

describe("run timing", () => {
  const conv = "c";
  const token = (text: string): EngineEvent => tokenEvent(conv, text, { agent: "lead" });
  const answer = (completion: number | null): EngineEvent => ({
    type: "model_answer",
    conversation_id: conv,
    agent: "lead",
    depth: 0,
    finish_reason: "stop",
    prompt_tokens: null,
    completion_tokens: completion,
    citations: [],
  });
  const started: EngineEvent = {
    type: "run_started",
    conversation_id: conv,
    run_id: "r",
    agent: "lead",
  };

  it("shows a model on this computer loading until its first token", () => {
    let s = reduce(emptyChat, started, 1_000);
    s = reduce(s, {
      type: "model_loading",
      conversation_id: conv,
      agent: "lead",
      model: "Qwen3-1.7B-Q8_0",
    });
    expect(s.loadingModel).toBe("Qwen3-1.7B-Q8_0");
    expect(s.waitingSince).toBe(1_000);
    s = reduce(s, token("hi"), 9_000);
    expect(s.loadingModel).toBeNull();
    // A run that fails while loading does not leave it shown.
    s = reduce(s, { type: "model_loading", conversation_id: conv, agent: "lead", model: "m" });
    s = reduce(s, answer(1));
    expect(s.loadingModel).toBeNull();
  });

  it("waits from the request until the first token, then measures the speed from the usage", () => {
    let s = reduce(emptyChat, started, 1_000);
    expect(s.waitingSince).toBe(1_000);
    s = reduce(s, token("a".repeat(40)), 13_000);
    expect(s.waitingSince).toBeNull();
    s = reduce(s, token("b".repeat(40)), 14_000);
    const streaming = s.items[0];
    if (streaming?.kind !== "assistant") throw new Error("no answer");
    // While streaming: estimated from 80 characters (20 tokens) over one second.
    expect(answerSpeed(streaming)).toEqual({
      firstTokenMs: 12_000,
      tokensPerSecond: 20,
      estimated: true,
    });
    s = reduce(s, answer(50), 15_000);
    const done = s.items[0];
    if (done?.kind !== "assistant") throw new Error("no answer");
    // Finished: the server's 50 tokens over two seconds of streaming.
    expect(answerSpeed(done)).toEqual({
      firstTokenMs: 12_000,
      tokensPerSecond: 25,
      estimated: false,
    });
    expect(done.at).toBe(13_000);
  });

  it("estimates the speed from the characters when the server reports no usage", () => {
    let s = reduce(emptyChat, started, 0);
    s = reduce(s, token("x".repeat(100)), 500);
    s = reduce(s, answer(null), 3_000);
    const done = s.items[0];
    if (done?.kind !== "assistant") throw new Error("no answer");
    expect(answerSpeed(done)).toEqual({ firstTokenMs: 500, tokensPerSecond: 10, estimated: true });
  });

  it("waits for the model again once the last running tool finished, not while tools run", () => {
    let s = reduce(emptyChat, started, 0);
    s = reduce(s, token("<tool_call>"), 100);
    s = reduce(s, answer(3), 200);
    expect(s.waitingSince).toBeNull();
    const tool = (call_id: string): EngineEvent => ({
      type: "tool_start",
      conversation_id: conv,
      call_id,
      tool: "probe",
      params: {},
      view_of: null,
    });
    const complete = (call_id: string): EngineEvent => ({
      type: "tool_complete",
      params: {},
      conversation_id: conv,
      call_id,
      agent: "lead",
      depth: 0,
      tool: "probe",
      success: true,
      status: "succeeded",
      reason: null,
      result: "ok",
      metadata: {},
      artifact_ids: [],
      attachments: [],
      duration_ms: 1,
      guided: false,
      view: null,
      view_of: null,
    });
    s = reduce(reduce(s, tool("k1"), 300), tool("k2"), 300);
    s = reduce(s, complete("k1"), 400);
    expect(s.waitingSince).toBeNull();
    s = reduce(s, complete("k2"), 900);
    expect(s.waitingSince).toBe(900);
    s = reduce(
      s,
      {
        type: "run_ended",
        conversation_id: conv,
        run_id: "r",
        status: "completed",
        final_answer: "",
        error: null,
      },
      1_000,
    );
    expect(s.waitingSince).toBeNull();
  });

  it("holds the queue when a run is cancelled or fails, not when it completes", () => {
    const queued = {
      ...emptyChat,
      running: true,
      queued: [{ id: "q1", text: "next", agent: "lead" }],
    };
    const end = (status: "completed" | "cancelled" | "failed"): EngineEvent => ({
      type: "run_ended",
      conversation_id: conv,
      run_id: "r",
      status,
      final_answer: null,
      error: null,
    });
    expect(reduce(queued, end("completed")).queueHeld).toBeNull();
    expect(reduce(queued, end("cancelled")).queueHeld).toMatch(/cancelled/);
    expect(reduce(queued, end("failed")).queueHeld).toMatch(/did not finish/);
    expect(reduce(queued, end("failed")).queued).toHaveLength(1);
  });
});

describe("context management", () => {
  const usage = (depth: number, estimated: number): EngineEvent => ({
    type: "context_usage",
    conversation_id: C,
    agent: depth === 0 ? "lead" : "helper",
    depth,
    estimated_tokens: estimated,
    reserved_tokens: 1000,
    window_tokens: 8192,
  });
  const condensed = (
    fields: Partial<Extract<EngineEvent, { type: "context_condensed" }>>,
  ): EngineEvent => ({
    type: "context_condensed",
    conversation_id: C,
    agent: "lead",
    depth: 0,
    message_id: null,
    results_referenced: 0,
    results_cut: 0,
    messages_condensed: 0,
    note: null,
    reason: "budget",
    ...fields,
  });
  const markers = (s: ChatState) => s.items.filter((i) => i.kind === "context");

  it("keeps the conversation's agent's latest usage for the meter, never a sub-agent's", () => {
    expect(emptyChat.contextUsage).toBeNull();
    const s = run([usage(0, 2100), usage(0, 3100)]);
    expect(s.contextUsage).toEqual({ estimated: 3100, reserved: 1000, window: 8192 });
    const sub = run([usage(1, 7000)], s);
    expect(sub.contextUsage).toEqual({ estimated: 3100, reserved: 1000, window: 8192 });
    expect(run([usage(1, 7000)]).contextUsage).toBeNull();
  });

  it("marks a condensation with its note, once, whether it arrives live or from history", () => {
    const note = "The user asked for weather in 10 cities; 4 are done.";
    const live = run([
      tokenEvent(C, "Fetching.", { agent: "lead" }),
      condensed({ message_id: 7, note, messages_condensed: 12, results_referenced: 3 }),
    ]);
    expect(markers(live)).toEqual([
      {
        kind: "context",
        key: "m7",
        agent: "lead",
        depth: 0,
        note,
        resultsReferenced: 3,
        messagesCondensed: 12,
        resultsCut: 0,
        server: false,
      },
    ]);
    // The same event again (or after the history, which already holds message 7, was read
    // while the run went on) adds nothing.
    expect(markers(run([condensed({ message_id: 7, note })], live))).toHaveLength(1);
    const reloaded = fromHistory(
      [stored(1, "user", "task"), stored(7, "context", note)],
      "running",
      true,
    );
    const after = run([condensed({ message_id: 7, note })], reloaded);
    expect(markers(after)).toEqual([expect.objectContaining({ key: "m7", note })]);
    expect(after.items.map((i) => i.kind)).toEqual(["user", "context"]);
  });

  it("shows one results-only marker per turn, with the latest count", () => {
    const user = {
      ...emptyChat,
      items: [{ kind: "user", key: "u1", text: "t", agent: "lead", depth: 0, at: null }],
    } as ChatState;
    const s = run(
      [
        condensed({ results_referenced: 2 }),
        condensed({ results_referenced: 4, reason: "server" }),
      ],
      user,
    );
    expect(markers(s)).toEqual([
      expect.objectContaining({ note: null, resultsReferenced: 4, server: true }),
    ]);
    // The latest result cut to fit later in the turn: the same marker says so.
    const cut = run([condensed({ results_referenced: 4, results_cut: 1 })], s);
    expect(markers(cut)).toEqual([
      expect.objectContaining({ note: null, resultsReferenced: 4, resultsCut: 1 }),
    ]);
    // A sub-agent's shortening is its own marker; a new turn gets its own too.
    const sub = run([condensed({ depth: 1, agent: "helper", results_referenced: 1 })], s);
    expect(markers(sub).map((m) => m.depth)).toEqual([0, 1]);
    const next = {
      ...s,
      items: [
        ...s.items,
        { kind: "user", key: "u2", text: "again", agent: "lead", depth: 0, at: null },
      ],
    } as ChatState;
    expect(markers(run([condensed({ results_referenced: 5 })], next))).toHaveLength(2);
  });

  it("reads a stored note as a marker, not a message, and keeps calls paired across it", () => {
    const s = fromHistory(
      [
        stored(1, "user", "task"),
        {
          ...stored(2, "assistant", "<tool_call>…</tool_call>"),
          calls: [call("m2-0", "web_fetch", { url: "http://x" }, "succeeded")],
        },
        {
          ...stored(3, "tool", ""),
          results: [result("m2-0", "web_fetch", { url: "http://x" }, "succeeded", "page")],
        },
        stored(4, "context", "So far: fetched http://x."),
        stored(5, "assistant", "Done."),
        stored(6, "user", "next"),
      ],
      "completed",
      false,
    );
    expect(s.items.map((i) => i.kind)).toEqual([
      "user",
      "assistant",
      "tool",
      "context",
      "assistant",
      "user",
    ]);
    expect(s.items[2]).toMatchObject({ status: "succeeded", result: "page" });
    expect(s.items[3]).toMatchObject({
      key: "m4",
      note: "So far: fetched http://x.",
      resultsReferenced: null,
      resultsCut: null,
    });
    expect(s.items.filter((i) => i.kind === "user").map((i) => i.key)).toEqual(["m1", "m6"]);
  });
});
