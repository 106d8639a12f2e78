import { act, screen, waitFor, within } from "@testing-library/react";
import axe from "axe-core";
import userEvent from "@testing-library/user-event";
import { pushEngine } from "../../test/pushed";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { ContextUsage, HistoryMessage } from "../../bindings";
import { render } from "../../test/render";
import { ChatScreen } from "./ChatScreen";
import { ChatStoreProvider } from "./ChatStoreProvider";
import { shortTokens } from "./ContextMeter";
import { storedMessage } from "../../test/engineData";

/** The context meter (composer) and the condensation markers (timeline), fed by the engine's
 * `context_usage` and `context_condensed` events and by stored `context` messages. */

const summary = (id: string) => ({
  id,
  title: `Conversation ${id}`,
  agent: "lead_agent",
  updated_at: "2026-12-01T00:00:00Z",
  last_status: "running",
  always_allowed: [],
});

/** The shell's commands as the chat uses them; `history` is each conversation's stored
 * messages, `running` the conversations whose run goes on. */
function backend(
  history: Record<string, HistoryMessage[]> = {},
  running: string[] = [],
  usages: Record<string, ContextUsage> = {},
) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    if (cmd === "list_conversation_page") {
      const items = Object.keys(history).map(summary);
      return { items, total: items.length };
    }
    if (cmd === "list_agents")
      return [{ name: "lead_agent", description: "Lead", model: null, internal: false }];
    if (cmd === "get_settings") return { profiles: [{ name: "default", model: "smollm2" }] };
    if (cmd === "get_conversation") {
      const id = (args as { id: string }).id;
      return {
        summary: summary(id),
        messages: history[id] ?? [],
        running: running.includes(id),
        context_usage: usages[id] ?? null,
      };
    }
    if (cmd === "start_run") return null;
    if (cmd === "truncate_conversation") return 2;
    throw new Error(`unexpected ${cmd}`);
  });
  return calls;
}

const engine = (payload: Record<string, unknown>) =>
  act(async () => {
    await pushEngine(payload);
    await new Promise((frame) => requestAnimationFrame(frame));
  });

const usage = (conversation: string, depth: number, estimated: number, reserved = 1000) =>
  engine({
    type: "context_usage",
    conversation_id: conversation,
    agent: depth === 0 ? "lead_agent" : "helper",
    depth,
    estimated_tokens: estimated,
    reserved_tokens: reserved,
    window_tokens: 8000,
  });

const condensed = (conversation: string, fields: Record<string, unknown>) =>
  engine({
    type: "context_condensed",
    conversation_id: conversation,
    agent: "lead_agent",
    depth: 0,
    message_id: null,
    results_referenced: 0,
    results_cut: 0,
    messages_condensed: 0,
    note: null,
    reason: "budget",
    ...fields,
  });

function renderChat(conversation: string | null = null) {
  return render(
    <ChatStoreProvider>
      <ChatScreen conversation={conversation} />
    </ChatStoreProvider>,
  );
}

const meter = () => screen.getByRole("meter", { name: "Context window used" });

describe("context meter", () => {
  it("writes token counts short", () => {
    expect([950, 3100, 8000, 8192, 131072].map(shortTokens)).toEqual([
      "950",
      "3.1k",
      "8k",
      "8.2k",
      "131k",
    ]);
  });

  it("shows a conversation opened again with its latest request's stored usage", async () => {
    backend(
      {
        c1: [storedMessage(1, "user", "Research Rust"), storedMessage(2, "assistant", "Done.")],
        c2: [],
      },
      [],
      { c1: { estimated_tokens: 5200, reserved_tokens: 1000, window_tokens: 8000 } },
    );
    renderChat("c1");
    const m = await screen.findByRole("meter", { name: "Context window used" });
    expect(m).toHaveTextContent("6.2k / 8k tokens");
    expect(m).toHaveAttribute("aria-valuenow", "6200");
  });

  it("appears at the first request, shows both parts of the window and warns near the limit", async () => {
    const calls = backend();
    const user = userEvent.setup();
    renderChat();
    await screen.findByRole("option", { name: "lead_agent" });
    await user.type(screen.getByTestId("composer-input"), "Research Rust{Enter}");
    const id = calls.find((c) => c.cmd === "start_run")?.args.conversationId as string;
    await engine({ type: "run_started", conversation_id: id, run_id: "r", agent: "lead_agent" });
    expect(screen.queryByRole("meter")).toBeNull();

    await usage(id, 0, 2100);
    const m = await screen.findByRole("meter", { name: "Context window used" });
    // No ARIA problem for axe-core (jsdom has no layout: colours are checked by the E2E audit).
    const audit = await axe.run(m.closest("form") as HTMLElement, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "best-practice"] },
      rules: { "color-contrast": { enabled: false }, region: { enabled: false } },
    });
    expect(audit.violations.map((v) => v.id)).toEqual([]);
    expect(m).toHaveTextContent("3.1k / 8k tokens");
    expect(m).toHaveAttribute("aria-valuemin", "0");
    expect(m).toHaveAttribute("aria-valuemax", "8000");
    expect(m).toHaveAttribute("aria-valuenow", "3100");
    const text = m.getAttribute("aria-valuetext") ?? "";
    expect(text).toContain("39%");
    expect(text).toContain("2,100 tokens of history and instructions");
    expect(text).toContain("1,000 kept for the answer");
    expect(m.getAttribute("title")).toBe(`${text}.`.replace("39%:", "39% of the context window:"));
    expect(m).not.toHaveClass("nearly-full");

    // A sub-agent's request has its own budget: the conversation's meter stays.
    await usage(id, 1, 7000);
    expect(meter()).toHaveAttribute("aria-valuenow", "3100");

    await usage(id, 0, 5400);
    expect(meter()).toHaveTextContent("6.4k / 8k tokens · nearly full");
    expect(meter()).toHaveClass("nearly-full");
    expect(meter().getAttribute("aria-valuetext")).toContain("Nearly full");
  });

  it("never calls a request over the window nearly full: it says so and what to do", async () => {
    // Issue 33.6: the reading after a run through a 2,048-token window.
    backend({ c1: [storedMessage(1, "user", "Read the report")] }, [], {
      c1: { estimated_tokens: 1606, reserved_tokens: 512, window_tokens: 2048 },
    });
    renderChat("c1");
    const m = await screen.findByRole("meter", { name: "Context window used" });
    expect(m).toHaveTextContent("2.1k / 2k tokens · over the window");
    expect(m).not.toHaveTextContent("nearly full");
    expect(m).toHaveClass("over-window");
    expect(m).toHaveAttribute("aria-valuenow", "2048");
    const text = m.getAttribute("aria-valuetext") ?? "";
    expect(text).toMatch(
      /^103%: 1,606 tokens of history and instructions, only 442 of the 512 kept/,
    );
    expect(text).toContain("Over the window: the answer may be cut short.");
    expect(text).toContain("choose a model profile with a larger context window");
    expect(text).not.toMatch(/nearly full/i);

    // Just over rounds to no less than 101 %; exactly the window is still within it.
    await usage("c1", 0, 7001);
    expect(meter().getAttribute("aria-valuetext")).toMatch(/^101%: .*Over the window/);
    await usage("c1", 0, 7000);
    expect(meter()).toHaveTextContent("8k / 8k tokens · nearly full");
    expect(meter()).not.toHaveClass("over-window");
  });

  it("shows each conversation's own latest value", async () => {
    backend({ a: [], b: [] });
    const user = userEvent.setup();
    renderChat("a");
    const rows = await screen.findAllByTestId("conversation-item");
    await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("a"));
    await usage("a", 0, 1000);
    expect(meter()).toHaveTextContent("2k / 8k tokens");

    const [first, second] = rows;
    if (!first || !second) throw new Error("both conversations are listed");
    await user.click(within(second).getByText("Conversation b"));
    await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("b"));
    expect(screen.queryByRole("meter")).toBeNull();
    await usage("b", 0, 5000);
    await usage("a", 0, 2000);
    expect(meter()).toHaveTextContent("6k / 8k tokens");

    await user.click(within(first).getByText("Conversation a"));
    await waitFor(() => expect(meter()).toHaveTextContent("3k / 8k tokens"));
  });
});

describe("condensation markers", () => {
  const note = "The user wants a report on Rust; three sources read so far.";
  const history = [
    storedMessage(1, "user", "First task"),
    storedMessage(2, "assistant", "First answer"),
    storedMessage(3, "context", note),
    storedMessage(4, "user", "Second task"),
    storedMessage(5, "assistant", "Second answer"),
  ];

  it("shows a stored note as a divider with its note behind a disclosure, keyboard first", async () => {
    backend({ c1: history });
    const user = userEvent.setup();
    renderChat("c1");
    const marker = await screen.findByTestId("context-marker");
    expect(marker).toHaveTextContent(
      "Earlier messages condensed for the model — the full history is kept",
    );
    const toggle = within(marker).getByText("Show what the model sees");
    expect(toggle.closest("details")).not.toHaveAttribute("open");
    // Reachable with Tab from the answer before it.
    const answers = screen.getAllByTestId("msg-assistant");
    within(answers[0] as HTMLElement)
      .getByTestId("msg-copy")
      .focus();
    await user.tab();
    expect(toggle).toHaveFocus();
    // (A browser opens a focused <summary> on Enter; jsdom does not, so this clicks it.)
    await user.click(toggle);
    await waitFor(() => expect(toggle.closest("details")).toHaveAttribute("open"));
    expect(within(marker).getByTestId("context-note")).toHaveTextContent(note);
    const audit = await axe.run(marker, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "best-practice"] },
      rules: { "color-contrast": { enabled: false }, region: { enabled: false } },
    });
    expect(audit.violations.map((v) => v.id)).toEqual([]);
    // Never a bubble of the user or the assistant.
    expect(screen.getAllByTestId("msg-user")).toHaveLength(2);
    expect(screen.getAllByTestId("msg-assistant")).toHaveLength(2);
    expect(screen.getAllByTestId("msg-user")[1]).not.toHaveTextContent(note);
  });

  it("leaves edit-and-resend counting the user's turns", async () => {
    const calls = backend({ c1: history });
    const user = userEvent.setup();
    renderChat("c1");
    await screen.findByTestId("context-marker");
    const second = screen.getAllByTestId("msg-user")[1] as HTMLElement;
    await user.click(within(second).getByTestId("msg-edit"));
    const edit = screen.getByTestId("msg-edit-input");
    await user.clear(edit);
    await user.type(edit, "Second task, better");
    await user.click(screen.getByRole("button", { name: "Resend the edited message" }));
    await user.click(screen.getByRole("button", { name: "Replace and resend" }));
    await waitFor(() => expect(calls.some((c) => c.cmd === "start_run")).toBe(true));
    expect(calls.find((c) => c.cmd === "truncate_conversation")?.args).toEqual({
      conversationId: "c1",
      turn: 1,
    });
    // The note is before the cut: it stays.
    expect(screen.getByTestId("context-marker")).toBeInTheDocument();
    expect(screen.getAllByTestId("msg-user").map((m) => m.querySelector("p")?.textContent)).toEqual(
      ["First task", "Second task, better"],
    );
  });

  it("marks a live shortening once, also when the history already holds its note", async () => {
    backend(
      { c1: [storedMessage(1, "user", "First task"), storedMessage(9, "context", note)], c2: [] },
      ["c1", "c2"],
    );
    const user = userEvent.setup();
    renderChat("c2");
    await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("c2"));
    await condensed("c2", { results_referenced: 3 });
    const marker = await screen.findByTestId("context-marker");
    expect(marker).toHaveAttribute("data-kind", "results");
    expect(marker).toHaveTextContent(
      "3 older tool results replaced by references for the model — the full results are kept",
    );
    expect(within(marker).queryByText("Show what the model sees")).toBeNull();
    await condensed("c2", { results_referenced: 4 });
    expect(screen.getAllByTestId("context-marker")).toHaveLength(1);
    expect(marker).toHaveTextContent("4 older tool results");

    // c1 was read from the database with its note (message 9) while its run goes on: the live
    // event of that note must not add a second marker.
    const rows = screen.getAllByTestId("conversation-item");
    await user.click(within(rows[0] as HTMLElement).getByText("Conversation c1"));
    await screen.findByText("First task");
    await condensed("c1", {
      message_id: 9,
      note,
      messages_condensed: 6,
      results_referenced: 2,
      reason: "server",
    });
    const markers = screen.getAllByTestId("context-marker");
    expect(markers).toHaveLength(1);
    expect(markers[0]).toHaveAttribute("data-kind", "note");
  });

  it("shows a live note with what was condensed and why", async () => {
    backend({ c2: [] });
    renderChat("c2");
    await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("c2"));
    await condensed("c2", {
      message_id: 12,
      note,
      messages_condensed: 6,
      results_referenced: 2,
      reason: "server",
    });
    const marker = await screen.findByTestId("context-marker");
    expect(marker).toHaveTextContent("Earlier messages condensed for the model");
    expect(marker).toHaveTextContent(
      "6 messages condensed · 2 older tool results replaced by references · the model's server said the conversation was too long",
    );
    expect(within(marker).getByTestId("context-note")).toHaveTextContent(note);
  });

  it("says when the latest tool result was cut to fit, and that it is kept in full", async () => {
    backend({ c2: [] });
    renderChat("c2");
    await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("c2"));
    await condensed("c2", { results_cut: 1 });
    const marker = await screen.findByTestId("context-marker");
    expect(marker).toHaveTextContent(
      "The latest tool result cut to fit the window for the model — the full result is kept",
    );
    await condensed("c2", {
      message_id: 13,
      note,
      messages_condensed: 4,
      results_referenced: 1,
      results_cut: 1,
    });
    const withNote = screen.getAllByTestId("context-marker")[1] as HTMLElement;
    expect(withNote).toHaveTextContent(
      "4 messages condensed · 1 older tool result replaced by references · the latest tool result cut to fit the window",
    );
  });
});
