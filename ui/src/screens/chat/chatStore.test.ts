import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../../bindings";
import { ChatStore } from "./chatStore";
import { emptyChat } from "./timeline";
import { tokenEvent } from "../../test/engineData";

const token = (text: string) => tokenEvent("a", text);
const nextFrame = () => new Promise((frame) => requestAnimationFrame(frame));

describe("ChatStore", () => {
  it("shows a burst of tokens in one render, at the next frame", async () => {
    const store = new ChatStore(async () => {});
    store.set("a", { ...emptyChat, running: true });
    let renders = 0;
    store.subscribe(() => (renders += 1));

    for (let i = 0; i < 50; i += 1) store.apply(token(`${i} `));
    expect(renders).toBe(0);
    await nextFrame();
    expect(renders).toBe(1);
    const answer = store.get("a")?.items.find((item) => item.kind === "assistant");
    expect(answer && "text" in answer ? answer.text : "").toContain("0 1 2");
    expect(answer && "text" in answer ? answer.text : "").toContain("49");
  });

  it("shows pending tokens at once when another event changes the chat", async () => {
    const store = new ChatStore(async () => {});
    store.set("a", { ...emptyChat, running: true });
    const seen: string[] = [];
    store.subscribe(() => {
      const answer = store.get("a")?.items.find((item) => item.kind === "assistant");
      seen.push(answer && "text" in answer ? answer.text : "");
    });

    store.apply(token("Hello"));
    store.apply({
      type: "tool_start",
      conversation_id: "a",
      call_id: "k",
      tool: "web_fetch",
      params: {},
    } as unknown as EngineEvent);
    expect(seen).toEqual(["Hello"]);
    await nextFrame();
    expect(seen).toEqual(["Hello"]);
  });

  it("keeps each conversation's context usage apart", () => {
    const store = new ChatStore(async () => {});
    store.set("a", { ...emptyChat, running: true });
    store.set("b", { ...emptyChat, running: true });
    const usage = (conversation: string, depth: number, estimated: number) =>
      ({
        type: "context_usage",
        conversation_id: conversation,
        agent: "lead_agent",
        depth,
        estimated_tokens: estimated,
        reserved_tokens: 512,
        window_tokens: 4096,
      }) as EngineEvent;

    store.apply(usage("a", 0, 1000));
    store.apply(usage("b", 0, 3000));
    store.apply(usage("a", 1, 3500));
    store.apply(usage("gone", 0, 10));
    expect(store.get("a")?.contextUsage).toEqual({ estimated: 1000, reserved: 512, window: 4096 });
    expect(store.get("b")?.contextUsage).toEqual({ estimated: 3000, reserved: 512, window: 4096 });
    expect(store.get("gone")).toBeUndefined();
  });
});
