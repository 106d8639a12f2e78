import type { EngineEvent, HistoryMessage, StoredMessage } from "../bindings";

type TokenEvent = Extract<EngineEvent, { type: "token" }>;

/** A streamed token batch of `conversation`: by `lead_agent` at depth 0 unless `fields` say
 * otherwise, its prose the text itself (no tool call in it) unless given. */
export function tokenEvent(
  conversation: string,
  text: string,
  fields: Partial<Omit<TokenEvent, "type" | "conversation_id" | "text">> = {},
): TokenEvent {
  return {
    type: "token",
    conversation_id: conversation,
    agent: "lead_agent",
    depth: 0,
    text,
    prose: text,
    prose_reset: false,
    ...fields,
  };
}

/** A stored message as the engine sends it back in a conversation's history: no calls or
 * results, an assistant message's prose its whole content. */
export function storedMessage(
  id: number,
  role: string,
  content: string,
  extra: Partial<StoredMessage> = {},
  prose: string | null = role === "assistant" ? content : null,
): HistoryMessage {
  return {
    message: {
      id,
      role,
      agent: "lead_agent",
      content,
      run_id: "r",
      depth: 0,
      prompt_tokens: null,
      completion_tokens: null,
      created_at: "2026-12-01T09:30:00.000Z",
      ...extra,
    },
    calls: [],
    results: [],
    notes: null,
    prose,
    citations: [],
  };
}
