import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { pushEngine } from "../../test/pushed";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { HistoryMessage, ProfileModel } from "../../bindings";
import { render } from "../../test/render";
import { ChatScreen } from "./ChatScreen";
import { ChatStoreProvider } from "./ChatStoreProvider";
import { storedMessage, tokenEvent } from "../../test/engineData";

interface Backend {
  calls: { cmd: string; args: Record<string, unknown> }[];
  /** Make the next start_run fail with this message. */
  failNextStart: string | null;
}

/** The shell's commands as the chat uses them; `history` is what get_conversation returns,
 * `profileModels` what the settings say of the local profiles' models. */
function backend(history: HistoryMessage[] = [], profileModels: ProfileModel[] = []): Backend {
  const state: Backend = { calls: [], failNextStart: null };
  mockIPC((cmd, args) => {
    state.calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    if (cmd === "list_conversations") return [];
    if (cmd === "list_agents")
      return [
        { name: "lead_agent", description: "Lead", model: "local", internal: false },
        { name: "writer", description: "Writes", model: null, internal: false },
      ];
    if (cmd === "get_settings")
      return {
        profiles: [
          { name: "default", model: "gpt-4o-mini" },
          { name: "local", model: "smollm2-135m" },
        ],
        profile_models: profileModels,
      };
    if (cmd === "get_conversation") return { summary: null, messages: history, running: false };
    if (cmd === "start_run") {
      const failure = state.failNextStart;
      state.failNextStart = null;
      if (failure) throw { code: "already_running", message: failure };
      return null;
    }
    if (cmd === "cancel_run") return true;
    if (cmd === "truncate_conversation") return 2;
    throw new Error(`unexpected ${cmd}`);
  });
  return state;
}

/** The `i`-th element, which the test expects to be there. */
function at<T>(list: T[], i: number): T {
  const item = list[i];
  if (item === undefined) throw new Error(`no element ${i}`);
  return item;
}

// Tokens are shown at the next animation frame (chatStore batches them): wait for it.
const engine = (payload: Record<string, unknown>) =>
  act(async () => {
    await pushEngine(payload);
    await new Promise((frame) => requestAnimationFrame(frame));
  });
const started = (b: Backend) => b.calls.filter((c) => c.cmd === "start_run").map((c) => c.args);

function renderChat(conversation: string | null = null) {
  return render(
    <ChatStoreProvider>
      <ChatScreen conversation={conversation} />
    </ChatStoreProvider>,
  );
}

async function sendFirst(b: Backend, user: ReturnType<typeof userEvent.setup>, text: string) {
  await screen.findByRole("option", { name: "lead_agent" });
  await user.type(screen.getByTestId("composer-input"), text);
  await user.click(screen.getByTestId("send"));
  const id = started(b)[0]?.conversationId as string;
  await engine({ type: "run_started", conversation_id: id, run_id: "r1", agent: "lead_agent" });
  return id;
}

describe("Composer", () => {
  it("keeps the focus in the message box after a click on Send, and Esc stops the run", async () => {
    const b = backend();
    const user = userEvent.setup();
    renderChat();
    await sendFirst(b, user, "Research Rust");
    const input = screen.getByTestId("composer-input");
    expect(await screen.findByTestId("cancel-run")).toBeInTheDocument();
    expect(input).toHaveFocus();
    // The next Space is typed, not a press of Cancel.
    await user.keyboard(" ");
    expect(b.calls.some((c) => c.cmd === "cancel_run")).toBe(false);
    expect(input).toHaveValue(" ");
    await user.keyboard("{Escape}");
    await waitFor(() => expect(b.calls.some((c) => c.cmd === "cancel_run")).toBe(true));
  });

  it("does not stop the run on an Esc meant for an open dialog", async () => {
    const b = backend();
    const user = userEvent.setup();
    renderChat();
    await sendFirst(b, user, "Research Rust");
    const dialog = document.createElement("dialog");
    dialog.setAttribute("open", "");
    document.body.append(dialog);
    await user.keyboard("{Escape}");
    dialog.remove();
    expect(b.calls.some((c) => c.cmd === "cancel_run")).toBe(false);
  });

  it("queues a message typed during a run and sends it, in order, once the run completes", async () => {
    const b = backend();
    const user = userEvent.setup();
    renderChat();
    const id = await sendFirst(b, user, "First");
    await engine(tokenEvent(id, "Half "));
    const input = screen.getByTestId("composer-input");
    await user.type(input, "Second{Enter}");
    await user.type(input, "Third{Enter}");
    // Never shown as sent, never started, and the streamed answer stays one bubble.
    expect(screen.getAllByTestId("msg-user")).toHaveLength(1);
    expect(started(b)).toHaveLength(1);
    const queued = screen.getAllByTestId("queued-item");
    expect(queued.map((q) => q.textContent)).toEqual([
      expect.stringContaining("Second"),
      expect.stringContaining("Third"),
    ]);
    expect(input).toHaveValue("");
    // Edit the second queued message.
    await user.click(within(at(queued, 1)).getByTestId("queued-edit"));
    const edit = screen.getByTestId("queued-edit-input");
    await user.clear(edit);
    await user.type(edit, "Third, edited{Enter}");
    await engine(tokenEvent(id, "done"));
    expect(screen.getAllByTestId("msg-assistant")).toHaveLength(1);
    expect(screen.getByTestId("msg-assistant")).toHaveTextContent("Half done");

    await engine({
      type: "run_ended",
      conversation_id: id,
      run_id: "r1",
      status: "completed",
      final_answer: "Half done",
      error: null,
    });
    await waitFor(() => expect(started(b)).toHaveLength(2));
    expect(started(b)[1]).toMatchObject({ conversationId: id, task: "Second" });
    expect(screen.getAllByTestId("msg-user").map((m) => m.querySelector("p")?.textContent)).toEqual(
      ["First", "Second"],
    );
    expect(screen.getAllByTestId("queued-item")).toHaveLength(1);
    await engine({ type: "run_started", conversation_id: id, run_id: "r2", agent: "lead_agent" });
    await engine({
      type: "run_ended",
      conversation_id: id,
      run_id: "r2",
      status: "completed",
      final_answer: "ok",
      error: null,
    });
    await waitFor(() => expect(started(b)).toHaveLength(3));
    expect(started(b)[2]).toMatchObject({ task: "Third, edited" });
    expect(screen.queryByTestId("queued")).toBeNull();
  });

  it("holds the queue when the run fails, and keeps a message whose start failed", async () => {
    const b = backend();
    const user = userEvent.setup();
    renderChat();
    const id = await sendFirst(b, user, "First");
    await user.type(screen.getByTestId("composer-input"), "Later{Enter}");
    await engine({
      type: "run_ended",
      conversation_id: id,
      run_id: "r1",
      status: "failed",
      final_answer: null,
      error: "HTTP 500",
    });
    expect(await screen.findByTestId("queued")).toHaveTextContent("did not finish");
    expect(started(b)).toHaveLength(1);
    // Sending it fails: it stays queued, first, with the reason; nothing is shown as sent.
    b.failNextStart = "this conversation already has a run in progress; wait for it";
    await user.click(screen.getByTestId("queued-send"));
    expect(await screen.findByTestId("queued")).toHaveTextContent(
      "The queued message was not sent: this conversation already has a run in progress",
    );
    expect(screen.getByTestId("queued-item")).toHaveTextContent("Later");
    expect(screen.getAllByTestId("msg-user")).toHaveLength(1);
    await user.click(screen.getByTestId("queued-send"));
    await waitFor(() => expect(started(b)).toHaveLength(3));
    expect(started(b)[2]).toMatchObject({ task: "Later" });
    expect(screen.getAllByTestId("msg-user")).toHaveLength(2);
    expect(screen.queryByTestId("queued")).toBeNull();
  });

  it("takes back a message whose run could not start, and can remove a queued one", async () => {
    const b = backend();
    const user = userEvent.setup();
    renderChat();
    await screen.findByRole("option", { name: "lead_agent" });
    b.failNextStart = "conversation 'Notes' is already running in another ArtifactFlow process";
    await user.type(screen.getByTestId("composer-input"), "Hello{Enter}");
    expect(await screen.findByTestId("chat-error")).toHaveTextContent(
      "another ArtifactFlow process",
    );
    expect(screen.queryByTestId("msg-user")).toBeNull();
    expect(screen.getByTestId("composer-input")).toHaveValue("Hello");
    expect(screen.queryByTestId("cancel-run")).toBeNull();

    // The text is still there: send it again, now it starts.
    await user.click(screen.getByTestId("send"));
    const id = started(b)[1]?.conversationId as string;
    await engine({ type: "run_started", conversation_id: id, run_id: "r1", agent: "lead_agent" });
    expect(screen.getAllByTestId("msg-user")).toHaveLength(1);
    await user.type(screen.getByTestId("composer-input"), "Never mind{Enter}");
    await user.click(screen.getByTestId("queued-remove"));
    expect(screen.queryByTestId("queued")).toBeNull();
    await engine({
      type: "run_ended",
      conversation_id: id,
      run_id: "r1",
      status: "completed",
      final_answer: "ok",
      error: null,
    });
    expect(started(b)).toHaveLength(2);
  });

  it("shows the waiting state from the request, then the speed", async () => {
    const b = backend();
    const user = userEvent.setup();
    renderChat();
    const id = await sendFirst(b, user, "Think");
    expect(screen.getByTestId("waiting-model")).toHaveTextContent(/Waiting for the model… \d+ s/);
    await engine(tokenEvent(id, "Hi"));
    expect(screen.queryByTestId("waiting-model")).toBeNull();
    await engine({
      type: "model_answer",
      conversation_id: id,
      agent: "lead_agent",
      depth: 0,
      finish_reason: "stop",
      prompt_tokens: null,
      completion_tokens: null,
      citations: [],
    });
    expect(screen.getByTestId("usage")).toHaveTextContent("token usage unknown");
    expect(screen.getByTestId("usage")).not.toHaveTextContent("?");
  });

  it("shows the chosen agent's profile and model, and switches agent from the composer", async () => {
    backend();
    const user = userEvent.setup();
    renderChat();
    await screen.findByRole("option", { name: "writer" });
    const composer = screen.getByTestId("composer-input").closest("form") as HTMLFormElement;
    const picker = within(composer).getByTestId("agent-picker");
    await waitFor(() =>
      expect(within(composer).getByTestId("composer-model")).toHaveTextContent(
        "local · smollm2-135m",
      ),
    );
    await user.selectOptions(picker, "writer");
    expect(within(composer).getByTestId("composer-model")).toHaveTextContent(
      "default · gpt-4o-mini",
    );
    expect(screen.getByTestId("composer-input")).toHaveAttribute(
      "placeholder",
      expect.stringContaining("Message writer"),
    );
  });

  it("marks a profile whose model was deleted, and sending says what to do instead", async () => {
    const b = backend([], [{ profile: "local", file: null, missing: "not_installed" }]);
    const user = userEvent.setup();
    renderChat();
    await screen.findByRole("option", { name: "writer" });
    const composer = within(screen.getByTestId("composer-input").closest("form") as HTMLElement);
    expect(await composer.findByTestId("composer-model-missing")).toHaveTextContent("no model");
    expect(composer.getByTestId("composer-model")).toHaveTextContent("local · smollm2-135m");

    await user.type(screen.getByTestId("composer-input"), "Hello");
    await user.click(screen.getByTestId("send"));
    expect(await screen.findByTestId("chat-error")).toHaveTextContent(
      "The profile “local” has no model: its model “smollm2-135m” is not installed (deleted, or never downloaded). Pick another model for it in Settings, or get one in Models, then send again.",
    );
    expect(started(b)).toEqual([]);
    expect(screen.getByTestId("composer-input")).toHaveValue("Hello");

    // An agent whose profile has its model: no mark, and the message goes.
    await user.selectOptions(composer.getByTestId("agent-picker"), "writer");
    expect(composer.queryByTestId("composer-model-missing")).toBeNull();
    await user.click(screen.getByTestId("send"));
    await waitFor(() => expect(started(b)).toHaveLength(1));
    expect(started(b)[0]).toMatchObject({ agent: "writer", task: "Hello" });
  });
});

function stored(
  id: number,
  role: string,
  content: string,
  extra: Partial<HistoryMessage["message"]> = {},
): HistoryMessage {
  return storedMessage(id, role, content, extra);
}

describe("Message actions", () => {
  const history = [
    stored(1, "user", "First task"),
    stored(2, "assistant", "First **answer**", { prompt_tokens: 12, completion_tokens: 5 }),
    stored(3, "user", "Second task"),
    stored(4, "assistant", "Second answer"),
  ];

  it("copies a message's Markdown and shows its time and token usage", async () => {
    backend(history);
    const user = userEvent.setup();
    renderChat("c1");
    const answers = await screen.findAllByTestId("msg-assistant");
    await user.click(within(at(answers, 0)).getByTestId("msg-copy"));
    expect(await navigator.clipboard.readText()).toBe("First **answer**");
    expect(within(at(answers, 0)).getByTestId("msg-copy")).toHaveTextContent("Copied");
    expect(within(at(answers, 0)).getByTestId("usage")).toHaveTextContent("12 tokens in · 5 out");
    expect(within(at(answers, 1)).getByTestId("usage")).toHaveTextContent("token usage unknown");
    const time = within(at(answers, 0)).getByTestId("msg-time");
    expect(time).toHaveAttribute("datetime", "2026-12-01T09:30:00.000Z");
    expect(time.getAttribute("title")).toMatch(/2026/);
    // Regenerate is on the last answer only.
    expect(
      within(at(answers, 0)).queryByRole("button", { name: "Regenerate the answer" }),
    ).toBeNull();
  });

  it("ends a sent message's bubble with its text, not with the blank line of a trailing newline", async () => {
    backend([stored(1, "user", "Look at this\n\n"), stored(2, "assistant", "Looked.")]);
    const user = userEvent.setup();
    renderChat("c1");
    const [sent] = await screen.findAllByTestId("msg-user");
    expect(sent?.querySelector("p")?.textContent).toBe("Look at this");
    // Copy still gives the message as it was sent.
    await user.click(within(sent as HTMLElement).getByTestId("msg-copy"));
    expect(await navigator.clipboard.readText()).toBe("Look at this\n\n");
  });

  it("edits a task and resends it: the engine cuts there and the later messages go", async () => {
    const b = backend(history);
    const user = userEvent.setup();
    renderChat("c1");
    const users = await screen.findAllByTestId("msg-user");
    await user.click(within(at(users, 0)).getByTestId("msg-edit"));
    const edit = screen.getByTestId("msg-edit-input");
    expect(edit).toHaveValue("First task");
    await user.clear(edit);
    await user.type(edit, "First task, better");
    await user.click(screen.getByRole("button", { name: "Resend the edited message" }));
    expect(b.calls.some((c) => c.cmd === "truncate_conversation")).toBe(false);
    await user.click(screen.getByRole("button", { name: "Replace and resend" }));
    await waitFor(() => expect(started(b)).toHaveLength(1));
    expect(b.calls.find((c) => c.cmd === "truncate_conversation")?.args).toEqual({
      conversationId: "c1",
      turn: 0,
    });
    expect(started(b)[0]).toMatchObject({ conversationId: "c1", task: "First task, better" });
    expect(screen.getAllByTestId("msg-user").map((m) => m.querySelector("p")?.textContent)).toEqual(
      ["First task, better"],
    );
    expect(screen.queryByTestId("msg-assistant")).toBeNull();
  });

  it("regenerates the last answer after asking, from the keyboard", async () => {
    const b = backend(history);
    const user = userEvent.setup();
    renderChat("c1");
    const answers = await screen.findAllByTestId("msg-assistant");
    const regenerate = within(at(answers, 1)).getByRole("button", {
      name: "Regenerate the answer",
    });
    regenerate.focus();
    await user.keyboard("{Enter}");
    await user.click(screen.getByRole("button", { name: "Regenerate" }));
    await waitFor(() => expect(started(b)).toHaveLength(1));
    expect(b.calls.find((c) => c.cmd === "truncate_conversation")?.args).toEqual({
      conversationId: "c1",
      turn: 1,
    });
    expect(started(b)[0]).toMatchObject({ task: "Second task" });
    expect(screen.getAllByTestId("msg-assistant")).toHaveLength(1);
    expect(screen.getAllByTestId("msg-user")).toHaveLength(2);
  });
});
