import { act, screen, waitFor, within } from "@testing-library/react";
import { render } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { pushEngine } from "../../test/pushed";
import { mockIPC } from "@tauri-apps/api/mocks";
import { ChatScreen } from "./ChatScreen";
import { ChatStoreProvider } from "./ChatStoreProvider";
import { storedMessage, tokenEvent } from "../../test/engineData";

function backend() {
  const calls: { cmd: string; args: unknown }[] = [];
  mockIPC((cmd, args) => {
    calls.push({ cmd, args });
    if (cmd === "list_conversation_page") return { items: [], total: 0 };
    if (cmd === "list_agents")
      return [
        { name: "lead_agent", description: "Lead", model: "default", internal: false },
        { name: "hidden", description: "", model: null, internal: true },
      ];
    if (cmd === "start_run") return null;
    if (cmd === "cancel_run") return true;
    throw new Error(`unexpected ${cmd}`);
  });
  return calls;
}

// Tokens are shown at the next animation frame (chatStore batches them): wait for it.
const engine = (payload: Record<string, unknown>) =>
  act(async () => {
    await pushEngine(payload);
    await new Promise((frame) => requestAnimationFrame(frame));
  });

describe("ChatScreen", () => {
  it("names agents by their display name in the picker and the timeline", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "list_conversation_page") return { items: [], total: 0 };
      if (cmd === "list_agents")
        return [
          {
            name: "lead_agent",
            display_name: "Lead researcher",
            description: "Lead",
            model: "default",
            internal: false,
          },
        ];
      if (cmd === "start_run") return null;
      throw new Error(`unexpected ${cmd}`);
    });
    const user = userEvent.setup();
    render(
      <ChatStoreProvider>
        <ChatScreen />
      </ChatStoreProvider>,
    );
    const picker = await screen.findByTestId("agent-picker");
    await waitFor(() =>
      expect(within(picker).getByRole("option")).toHaveTextContent("Lead researcher"),
    );
    await user.type(screen.getByTestId("composer-input"), "Research Rust{Enter}");
    const start = calls.find((c) => c.cmd === "start_run");
    expect(start?.args).toMatchObject({ agent: "lead_agent" });
    const conversationId = (start?.args as { conversationId: string }).conversationId;
    await engine({
      type: "run_started",
      conversation_id: conversationId,
      run_id: "r",
      agent: "lead_agent",
    });
    await engine(tokenEvent(conversationId, "Hello."));
    const answer = await screen.findByTestId("msg-assistant");
    expect(answer.querySelector(".msg-agent")).toHaveTextContent("Lead researcher");
  });

  it("asks for the conversation list once when a run starts (its run_started event), not also on send", async () => {
    const calls = backend();
    const user = userEvent.setup();
    render(
      <ChatStoreProvider>
        <ChatScreen />
      </ChatStoreProvider>,
    );
    await screen.findByTestId("agent-picker");
    await waitFor(() =>
      expect(calls.filter((c) => c.cmd === "list_conversation_page")).toHaveLength(1),
    );
    await user.type(screen.getByTestId("composer-input"), "Research Rust{Enter}");
    const start = calls.find((c) => c.cmd === "start_run");
    const conversationId = (start?.args as { conversationId: string }).conversationId;
    // The send itself does not refresh the list…
    expect(calls.filter((c) => c.cmd === "list_conversation_page")).toHaveLength(1);
    await engine({
      type: "run_started",
      conversation_id: conversationId,
      run_id: "r",
      agent: "lead_agent",
    });
    // …the run's start does, once.
    await waitFor(() =>
      expect(calls.filter((c) => c.cmd === "list_conversation_page")).toHaveLength(2),
    );
    await engine(tokenEvent(conversationId, "Hi"));
    expect(calls.filter((c) => c.cmd === "list_conversation_page")).toHaveLength(2);
  });

  it("sends a task, streams the answer and shows a live tool card", async () => {
    const calls = backend();
    const user = userEvent.setup();
    render(
      <ChatStoreProvider>
        <ChatScreen />
      </ChatStoreProvider>,
    );
    const picker = await screen.findByTestId("agent-picker");
    expect(
      within(picker)
        .getAllByRole("option")
        .map((o) => o.textContent),
    ).toEqual(["lead_agent"]);
    await user.type(screen.getByTestId("composer-input"), "Research Rust{Enter}");
    const start = calls.find((c) => c.cmd === "start_run");
    expect(start?.args).toMatchObject({ agent: "lead_agent", task: "Research Rust" });
    const conversationId = (start?.args as { conversationId: string }).conversationId;
    expect(screen.getByTestId("msg-user")).toHaveTextContent("Research Rust");

    await engine({
      type: "run_started",
      conversation_id: conversationId,
      run_id: "r",
      agent: "lead_agent",
    });
    expect(screen.getByTestId("cancel-run")).toBeInTheDocument();
    await engine(tokenEvent(conversationId, "Let me **look**."));
    await engine({
      type: "tool_call_started",
      conversation_id: conversationId,
      call_id: "k",
      agent: "lead_agent",
      depth: 0,
      index: 0,
      name: "web_search",
    });
    expect(screen.getByTestId("calling-tool")).toHaveTextContent("Calling web_search…");
    expect(screen.getByTestId("msg-assistant").querySelector("strong")).toHaveTextContent("look");
    await engine({
      type: "model_answer",
      conversation_id: conversationId,
      agent: "lead_agent",
      depth: 0,
      finish_reason: "stop",
      prompt_tokens: 100,
      completion_tokens: 20,
      citations: [],
    });
    expect(screen.getByTestId("usage")).toHaveTextContent("100 tokens in · 20 out");
    await engine({
      type: "tool_start",
      conversation_id: conversationId,
      call_id: "k",
      tool: "web_search",
      params: { query: "rust" },
      view_of: null,
    });
    expect(screen.getByTestId("tool-card-web_search")).toHaveAttribute("data-status", "running");
    await engine({
      type: "tool_complete",
      conversation_id: conversationId,
      call_id: "k",
      agent: "lead_agent",
      depth: 0,
      tool: "web_search",
      success: true,
      status: "succeeded",
      reason: null,
      result: "3 results",
      metadata: {},
      artifact_ids: [],
      attachments: [],
      duration_ms: 42,
    });
    const card = screen.getByTestId("tool-card-web_search");
    expect(card).toHaveAttribute("data-status", "succeeded");
    expect(card).toHaveTextContent("42 ms");
    expect(card).toHaveTextContent("3 results");
    // Events of other conversations are ignored.
    await engine(tokenEvent("other", "NOT MINE", { agent: "x" }));
    expect(screen.queryByText("NOT MINE")).toBeNull();

    await user.click(screen.getByTestId("cancel-run"));
    expect(calls.some((c) => c.cmd === "cancel_run")).toBe(true);
    await engine({
      type: "run_ended",
      conversation_id: conversationId,
      run_id: "r",
      status: "cancelled",
      final_answer: null,
      error: null,
    });
    expect(screen.getByTestId("run-end")).toHaveTextContent("Run cancelled.");
    await user.click(screen.getByTestId("retry"));
    expect(calls.filter((c) => c.cmd === "start_run")).toHaveLength(2);
  });

  it("shows a tool's image and audio in its card, from the call's attachments", async () => {
    const calls = backend();
    // The bytes come from the attachment's artifact, never from the result text.
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "list_conversation_page") return { items: [], total: 0 };
      if (cmd === "list_agents")
        return [{ name: "lead_agent", description: "", model: null, internal: false }];
      if (cmd === "start_run") return null;
      if (cmd === "get_artifact_bytes") {
        const { conversationId, id } = args as { conversationId: string; id: string };
        return {
          id,
          title: "t",
          content_type: id === "image_a" ? "image/png" : "audio/wav",
          binary: true,
          size_bytes: 67,
          base64: `${conversationId}-${id}`,
        };
      }
      throw new Error(`unexpected ${cmd}`);
    });
    const user = userEvent.setup();
    render(
      <ChatStoreProvider>
        <ChatScreen />
      </ChatStoreProvider>,
    );
    await screen.findByTestId("agent-picker");
    await user.type(screen.getByTestId("composer-input"), "Take a picture{Enter}");
    const start = calls.find((c) => c.cmd === "start_run");
    const conversationId = (start?.args as { conversationId: string }).conversationId;
    await engine({ type: "run_started", conversation_id: conversationId, run_id: "r", agent: "a" });
    await engine({
      type: "tool_start",
      conversation_id: conversationId,
      call_id: "k",
      tool: "camera.snap",
      params: {},
      view_of: null,
    });
    await engine({
      type: "tool_complete",
      conversation_id: conversationId,
      call_id: "k",
      agent: "a",
      depth: 0,
      tool: "camera.snap",
      success: true,
      status: "succeeded",
      reason: null,
      result: 'Here.\n[image/png, 67 B, stored as artifact image_a "Shot"]',
      metadata: {},
      artifact_ids: ["image_a", "audio_b"],
      attachments: [
        { artifact_id: "image_a", mime: "image/png", title: "Shot", size_bytes: 67 },
        { artifact_id: "audio_b", mime: "audio/wav", title: "Click", size_bytes: 3000 },
      ],
      duration_ms: 5,
    });
    const card = screen.getByTestId("tool-card-camera.snap");
    const image = await within(card).findByTestId("binary-image");
    expect(image).toHaveAttribute("src", `data:image/png;base64,${conversationId}-image_a`);
    expect(image).toHaveAttribute("alt", "Shot (image/png, 67 B)");
    const audio = await within(card).findByTestId("binary-audio");
    expect(audio).toHaveAttribute("src", `data:audio/wav;base64,${conversationId}-audio_b`);
    expect(card).toHaveTextContent("Click · audio/wav · 3 KB · audio_b");
    // The attachments are not offered as a text artifact to open.
    expect(within(card).queryByTestId("artifact-link")).toBeNull();
  });

  it("keeps a running conversation live while another screen or conversation is shown", async () => {
    const summary = (id: string) => ({
      id,
      title: `Conversation ${id}`,
      agent: "lead_agent",
      updated_at: "2026-11-30T00:00:00Z",
      last_status: id === "a" ? "running" : "completed",
      always_allowed: [],
    });
    const opened: string[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "list_conversation_page")
        return { items: [summary("a"), summary("b")], total: 2 };
      if (cmd === "list_agents")
        return [{ name: "lead_agent", description: "Lead", model: "default", internal: false }];
      if (cmd === "get_conversation") {
        const id = (args as { id: string }).id;
        opened.push(id);
        return { summary: summary(id), messages: [], running: id === "a" };
      }
      throw new Error(`unexpected ${cmd}`);
    });
    const token = (text: string) => engine(tokenEvent("a", text));
    const app = (content: React.ReactNode) => <ChatStoreProvider>{content}</ChatStoreProvider>;
    const user = userEvent.setup();

    const { rerender } = render(app(<ChatScreen conversation="a" />));
    await waitFor(() => expect(opened).toEqual(["a"]));
    await token("First part. ");
    expect(screen.getByTestId("msg-assistant")).toHaveTextContent("First part.");

    // Another screen: the chat is gone, the run goes on.
    rerender(app(<p>Tools</p>));
    await token("Second part.");
    await engine({
      type: "tool_start",
      conversation_id: "a",
      call_id: "k",
      tool: "web_fetch",
      params: { url: "https://example.com" },
      view_of: null,
    });
    rerender(app(<ChatScreen conversation="a" />));
    await waitFor(() => expect(opened).toEqual(["a", "a"]));
    expect(screen.getByTestId("msg-assistant")).toHaveTextContent("First part. Second part.");
    expect(screen.getByTestId("tool-card-web_fetch")).toHaveAttribute("data-status", "running");

    // Another conversation, and back.
    const [first, second] = await screen.findAllByTestId("conversation-item");
    if (!first || !second) throw new Error("both conversations are listed");
    await user.click(within(second).getByText("Conversation b"));
    await waitFor(() => expect(screen.queryByTestId("msg-assistant")).toBeNull());
    await engine({
      type: "tool_complete",
      conversation_id: "a",
      call_id: "k",
      agent: "lead_agent",
      depth: 0,
      tool: "web_fetch",
      success: true,
      status: "succeeded",
      reason: null,
      result: "page text",
      metadata: {},
      artifact_ids: [],
      attachments: [],
      duration_ms: 5,
    });
    await user.click(within(first).getByText("Conversation a"));
    await waitFor(() =>
      expect(screen.getByTestId("tool-card-web_fetch")).toHaveAttribute("data-status", "succeeded"),
    );
    expect(screen.getByTestId("msg-assistant")).toHaveTextContent("First part. Second part.");
  });

  it("shows an answer's prose as the engine reads it, never its tool-call text", async () => {
    // A bare call (its name as the tag): the engine's parser finds it; the old pattern,
    // which only knew <tool_call>, showed it as text.
    const stored = storedMessage(
      1,
      "assistant",
      "Stored answer.\n<web_fetch><params><url>https://a.example</url></params></web_fetch>",
      {},
      "Stored answer.",
    );
    mockIPC((cmd) => {
      if (cmd === "list_conversation_page") return { items: [], total: 0 };
      if (cmd === "list_agents")
        return [{ name: "lead_agent", description: "Lead", model: "default", internal: false }];
      if (cmd === "get_conversation")
        return { summary: null, messages: [stored], running: true, context_usage: null };
      throw new Error(`unexpected ${cmd}`);
    });
    render(
      <ChatStoreProvider>
        <ChatScreen conversation="p" />
      </ChatStoreProvider>,
    );
    const first = await screen.findByTestId("msg-assistant");
    expect(first).toHaveTextContent("Stored answer.");
    expect(first.textContent).not.toContain("a.example");

    const token = (text: string, prose: string, reset = false) =>
      engine(tokenEvent("p", text, { depth: 1, prose, prose_reset: reset }));
    await token("Sure. <tool_ca", "Sure. <tool_ca");
    const live = () => screen.getAllByTestId("msg-assistant")[1];
    expect(live()).toHaveTextContent("Sure. <tool_ca");
    // The tag turned out to be a call: the engine takes the shown text back.
    await token("ll><name>x</name></tool_call>", "Sure.", true);
    expect(live()).toHaveTextContent(/^.*Sure\.$/);
    expect(live()?.textContent).not.toContain("<tool_ca");
    await token(" Done", "  Done");
    expect(live()).toHaveTextContent("Sure. Done");
    expect(live()?.textContent).not.toContain("name>x");
  });
  it("exports a conversation from its menu as Markdown or JSON through the save dialog", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    let fail = false;
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "list_conversation_page")
        return {
          items: [
            {
              id: "c1",
              title: "Rust dates",
              agent: "lead_agent",
              updated_at: "2026-01-01T00:00:00Z",
              last_status: "completed",
              always_allowed: [],
            },
          ],
          total: 1,
        };
      if (cmd === "list_agents")
        return [{ name: "lead_agent", description: "", model: null, internal: false }];
      if (cmd === "export_conversation") {
        if (fail)
          throw { code: "io", message: "cannot write /ro/c1.md: read-only; pick another folder" };
        const { format } = args as { format: string };
        return `/home/u/Downloads/conversation-c1.${format}`;
      }
      throw new Error(`unexpected ${cmd}`);
    });
    const user = userEvent.setup();
    render(
      <ChatStoreProvider>
        <ChatScreen />
      </ChatStoreProvider>,
    );
    await user.click(await screen.findByRole("button", { name: "Actions for Rust dates" }));
    await user.click(screen.getByRole("menuitem", { name: "Export" }));
    const choice = screen.getByTestId("export-choice");
    await user.click(within(choice).getByRole("button", { name: "JSON" }));
    expect(calls.filter((c) => c.cmd === "export_conversation").map((c) => c.args)).toEqual([
      { id: "c1", format: "json" },
    ]);
    expect(await screen.findByTestId("conversation-exported")).toHaveTextContent(
      "Exported to /home/u/Downloads/conversation-c1.json",
    );
    expect(screen.queryByTestId("export-choice")).toBeNull();

    fail = true;
    await user.click(screen.getByRole("button", { name: "Actions for Rust dates" }));
    await user.click(screen.getByRole("menuitem", { name: "Export" }));
    await user.click(screen.getByRole("button", { name: "Markdown" }));
    expect(calls.filter((c) => c.cmd === "export_conversation").at(-1)?.args).toEqual({
      id: "c1",
      format: "md",
    });
    expect(await screen.findByTestId("chat-error")).toHaveTextContent(
      "cannot write /ro/c1.md: read-only; pick another folder",
    );
  });
});
