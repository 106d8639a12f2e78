import type { EngineEvent } from "../../bindings";
import { conversationOf, reduce, type ChatState } from "./timeline";

/**
 * The live state of every conversation opened or started in this session, kept outside the
 * chat screen: events keep updating a conversation while another one (or another screen) is
 * shown, so coming back shows the answer as it streamed, running tool cards included, rather
 * than what the database had when it was last written.
 */
export class ChatStore {
  private chats = new Map<string, ChatState>();
  private listeners = new Set<() => void>();

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
    if (id !== null && state !== undefined) this.set(id, reduce(state, event));
  }

  forget(id: string): void {
    if (this.chats.delete(id)) this.emit();
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }
}
