import type { EngineEvent } from "../../bindings";
import { errorMessage } from "../../ipc/call";
import { conversationOf, emptyChat, reduce, type ChatState, type QueuedMessage } from "./timeline";

/** Starts a run of `agent` on `task` in a conversation; rejects when it could not start. */
export type StartRun = (conversationId: string, agent: string, task: string) => Promise<void>;

/**
 * The live state of every conversation opened or started in this session, kept outside the
 * chat screen: events keep updating a conversation while another one (or another screen) is
 * shown, so coming back shows the answer as it streamed, running tool cards included, rather
 * than what the database had when it was last written.
 *
 * It also sends the tasks, and holds the messages typed while a run goes on: they are queued
 * (never shown as sent) and go out one per run, in order, each when the run before it
 * completes, whichever screen is shown. A run that is cancelled or fails holds the queue (see
 * `reduce`'s `run_ended`), and so does a queued message that could not be sent: nothing queued
 * is dropped, the user sends, edits or removes it.
 */
export class ChatStore {
  private chats = new Map<string, ChatState>();
  private listeners = new Set<() => void>();
  private nextQueued = 0;

  constructor(private readonly startRun: StartRun) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** The conversation's state, if it is kept. */
  get(id: string | null): ChatState | undefined {
    return id === null ? undefined : this.chats.get(id);
  }

  set(id: string, state: ChatState): void {
    this.chats.set(id, state);
    this.emit();
  }

  /** Apply an engine event to the conversation it belongs to, if that one is kept. */
  apply(event: EngineEvent): void {
    const id = conversationOf(event);
    const state = this.get(id);
    if (id === null || state === undefined) return;
    const next = reduce(state, event);
    if (event.type === "token") {
      // Tokens arrive many times a frame: render them once per frame, so a fast stream never
      // renders the chat more often than the screen can show it.
      this.chats.set(id, next);
      this.emitNextFrame();
    } else {
      this.set(id, next);
    }
    if (event.type === "run_ended" && next.queueHeld === null && next.queued.length > 0)
      void this.sendQueued(id);
  }

  forget(id: string): void {
    if (this.chats.delete(id)) this.emit();
  }

  /** Send `task` to `agent`: shown as the user's message at once, taken back if the run could
   * not start (the error is thrown). */
  async send(id: string, agent: string, task: string): Promise<void> {
    const before = this.get(id) ?? emptyChat;
    const key = `u${before.seq + 1}`;
    const now = Date.now();
    this.set(id, {
      ...before,
      items: [...before.items, { kind: "user", key, text: task, agent, depth: 0, at: now }],
      seq: before.seq + 1,
      // Running from the request on: a second Enter before the run's first event is queued.
      running: true,
      waitingSince: now,
    });
    try {
      await this.startRun(id, agent, task);
    } catch (e) {
      const now = this.get(id) ?? emptyChat;
      this.set(id, {
        ...now,
        items: now.items.filter((i) => i.key !== key),
        running: false,
        waitingSince: null,
      });
      throw e;
    }
  }

  /** Queue `text` for `agent`, to send when the current run ends. */
  enqueue(id: string, agent: string, text: string): void {
    const state = this.get(id) ?? emptyChat;
    this.nextQueued += 1;
    const message: QueuedMessage = { id: `q${this.nextQueued}`, text, agent };
    this.set(id, { ...state, queued: [...state.queued, message] });
  }

  /** Change a queued message's text (an empty text removes it). */
  editQueued(id: string, queuedId: string, text: string): void {
    const state = this.get(id);
    if (!state) return;
    const queued = text.trim()
      ? state.queued.map((q) => (q.id === queuedId ? { ...q, text: text.trim() } : q))
      : state.queued.filter((q) => q.id !== queuedId);
    this.set(id, { ...state, queued, queueHeld: queued.length ? state.queueHeld : null });
  }

  removeQueued(id: string, queuedId: string): void {
    this.editQueued(id, queuedId, "");
  }

  /** Send the first queued message now (the queue goes on by itself from there). A failure
   * puts it back first in the queue and holds the queue with the reason. */
  async sendQueued(id: string): Promise<void> {
    const state = this.get(id);
    const [first, ...rest] = state?.queued ?? [];
    if (!state || !first || state.running) return;
    this.set(id, { ...state, queued: rest, queueHeld: null });
    try {
      await this.send(id, first.agent, first.text);
    } catch (e) {
      const now = this.get(id) ?? emptyChat;
      this.set(id, {
        ...now,
        queued: [first, ...now.queued],
        queueHeld: `The queued message was not sent: ${errorMessage(e)}`,
      });
    }
  }

  private frame: number | null = null;

  private emitNextFrame(): void {
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.emit();
    });
  }

  private emit(): void {
    if (this.frame !== null) {
      // Anything else that changes the state shows the tokens before it too.
      cancelAnimationFrame(this.frame);
      this.frame = null;
    }
    for (const listener of this.listeners) listener();
  }
}
