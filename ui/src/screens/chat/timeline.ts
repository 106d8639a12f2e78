import type {
  CallStatus,
  Citation,
  EngineEvent,
  HistoryCall,
  HistoryMessage,
  JsonValue,
  StoredAttachment,
  ViewRef,
} from "../../bindings";

/** One thing shown in a conversation. */
export type TimelineItem =
  | {
      kind: "user";
      key: string;
      text: string;
      agent: string;
      depth: number;
      /** When it was sent (ms since the Unix epoch); null when unknown. */
      at: number | null;
    }
  | {
      kind: "assistant";
      key: string;
      agent: string;
      depth: number;
      /** The answer as the model wrote it, tool calls included. */
      text: string;
      /** What it says besides its tool calls (shown as cards), as the engine's parser reads
       * it: from the stored message, or built from the streamed tokens' `prose`. */
      prose: string;
      streaming: boolean;
      usage: { prompt: number | null; completion: number | null } | null;
      /** When it was written (ms since the Unix epoch): its first token live, its row stored. */
      at: number | null;
      /** The live timing of its stream (null for an answer read from history). */
      timing: StreamTiming | null;
      /** The user's sources it cites, checked by the engine against what the conversation's
       * calls retrieved (empty while it streams). */
      citations: Citation[];
    }
  | {
      kind: "tool";
      key: string;
      callId: string;
      tool: string;
      depth: number;
      params: Record<string, JsonValue>;
      status: "running" | CallStatus;
      result: string | null;
      /** Why it ended so, in words for a person: for a refused call, who refused it (a rule
       * with its file and line, the person, the timeout). Null for a plain success. */
      reason: string | null;
      durationMs: number | null;
      /** The text artifact to link (a changed artifact, an oversized result). */
      artifactId: string | null;
      /** The result's images, audio and other binary content, stored as artifacts. */
      attachments: StoredAttachment[];
      /** The latest progress the tool reported while running (MCP servers), or null. */
      progress: ToolProgress | null;
      /** The model wrote the call under the grammar of guided calls (the app's runtime). */
      guided: boolean;
      /** Its MCP server's interactive view (MCP Apps), kept with the call; null for none. */
      view: ViewRef | null;
    }
  /** The engine's own words to the model beside the results (round limit, call format). */
  | { kind: "tool_results"; key: string; agent: string; depth: number; text: string }
  | { kind: "handover"; key: string; from: string; to: string; instruction: string; depth: number }
  | { kind: "return"; key: string; from: string; to: string; success: boolean; depth: number }
  /** Where the model's view of the conversation was shortened (the full history stays here). */
  | {
      kind: "context";
      key: string;
      agent: string;
      depth: number;
      /** The "conversation so far" note the model reads instead of the older turns, if one
       * was written (null when only older tool results were replaced by references). */
      note: string | null;
      /** Older tool results replaced by references to their artifacts (null when unknown: a
       * note read from history). */
      resultsReferenced: number | null;
      /** Latest tool results cut to the beginning that fits (null when unknown: a note read
       * from history). */
      resultsCut: number | null;
      /** Messages condensed into the note (null when unknown: a note read from history). */
      messagesCondensed: number | null;
      /** The server refused the request as too long (it was retried once, shortened). */
      server: boolean;
    }
  | {
      kind: "run_end";
      key: string;
      status: "completed" | "cancelled" | "failed" | "interrupted";
      error: string | null;
    };

/** When an answer's stream went (ms since the Unix epoch), for its speed. */
export interface StreamTiming {
  /** When its model request went out (the task was sent, or the tools before it finished). */
  requestedAt: number | null;
  /** Its first token. */
  firstTokenAt: number;
  /** Its latest token. */
  lastTokenAt: number;
  /** When the model said it had finished (null while streaming). */
  finishedAt: number | null;
}

/** A message typed while a run goes on, sent when the run ends (see `chatStore.ts`). */
export interface QueuedMessage {
  id: string;
  text: string;
  agent: string;
}

/** How an answer is going: the time to its first token and its speed in tokens per second.
 * The speed is the server's completion token count over the streaming time when the server
 * reported usage (`estimated: false`), otherwise an estimate from the streamed characters (four
 * characters a token, the usual rule of thumb for English). Null while too little has streamed
 * to tell (one token batch). */
export function answerSpeed(
  item: Extract<TimelineItem, { kind: "assistant" }>,
): { firstTokenMs: number | null; tokensPerSecond: number | null; estimated: boolean } | null {
  const t = item.timing;
  if (t === null) return null;
  const firstTokenMs = t.requestedAt === null ? null : t.firstTokenAt - t.requestedAt;
  const end = t.finishedAt ?? t.lastTokenAt;
  const seconds = (end - t.firstTokenAt) / 1000;
  const reported = t.finishedAt !== null ? (item.usage?.completion ?? null) : null;
  const tokens = reported ?? item.text.length / 4;
  return {
    firstTokenMs,
    tokensPerSecond: seconds > 0.2 ? tokens / seconds : null,
    estimated: reported === null,
  };
}

/** How far a running call is, as its tool reported. */
export interface ToolProgress {
  value: number;
  /** The end of the scale, when the tool knows it. */
  total: number | null;
  /** What it is doing, in the tool's words. */
  message: string | null;
}

/** How much of the model's context window the latest request of the conversation's agent
 * filled (the context meter), from the engine's `context_usage`. */
export interface ContextUsage {
  /** Estimated tokens of the request: system prompt, tool instructions, history. */
  estimated: number;
  /** Tokens kept free for the answer. */
  reserved: number;
  /** The model's context window. */
  window: number;
}

export interface PendingPermission {
  requestId: string;
  conversationId: string;
  /** The conversation's title (empty while untitled). */
  conversationTitle: string;
  /** Who asks: the conversation's agent, then each sub-agent down to the caller. */
  agentChain: string[];
  request: Extract<EngineEvent, { type: "permission_request" }>["request"];
  /** When the engine denies it unanswered (ms since the Unix epoch); null when it never does. */
  deadlineMs: number | null;
}

export interface ChatState {
  items: TimelineItem[];
  running: boolean;
  /** "calling web_search…" while the model is still writing the call. */
  callingTool: string | null;
  depth: number;
  seq: number;
  /** Since when the run waits for the model (ms since the Unix epoch): the task was sent, or
   * tools finished and the next request went out. Null while tokens stream or tools run. */
  waitingSince: number | null;
  /** Messages typed during the run, oldest first; sent one per run when a run completes. */
  queued: QueuedMessage[];
  /** Why the queue is not being sent: the run was cancelled or failed (the user decides), or
   * sending failed. Null while it goes out by itself. */
  queueHeld: string | null;
  /** The conversation's agent's share of the window at its latest request; null before the
   * first one (sub-agents' requests do not change it). */
  contextUsage: ContextUsage | null;
  /** The model on this computer being loaded for the next answer (its name), until the answer
   * starts or the run ends. */
  loadingModel: string | null;
}

export const emptyChat: ChatState = {
  items: [],
  running: false,
  callingTool: null,
  depth: 0,
  seq: 0,
  waitingSince: null,
  queued: [],
  queueHeld: null,
  contextUsage: null,
  loadingModel: null,
};

/** A stored timestamp (UTC, RFC 3339) as ms since the Unix epoch, or null. */
function parseTime(text: string | undefined): number | null {
  if (!text) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

/** Timeline items for stored messages (a conversation opened from history): tool calls and
 * their results become the same cards a live run shows. Each result carries its call's id,
 * status, reason and hand-over as data (read from the stored call records), so nothing here
 * reads the engine's wording or pairs a result with a call by name. */
export function fromHistory(
  messages: HistoryMessage[],
  lastStatus: string | null,
  running: boolean,
): ChatState {
  const items: TimelineItem[] = [];
  // The calls of the last assistant message at each depth, until their results arrive.
  const waiting = new Map<number, HistoryCall[]>();
  const unanswered = (fromDepth: number) => {
    for (const [depth, calls] of [...waiting].sort(([a], [b]) => b - a)) {
      if (depth < fromDepth) continue;
      waiting.delete(depth);
      calls.forEach((call) =>
        items.push(
          historyCard(
            call.call_id,
            call.name,
            depth,
            call.params,
            call.status,
            NO_RESULT,
            [],
            [],
            call.reason,
            false,
            null,
          ),
        ),
      );
    }
  };
  // The agent that last answered at each depth: the caller of a hand-over one level down.
  const answering = new Map<number, string>();
  for (const { message: m, calls, results, notes, prose, citations } of messages) {
    const key = `m${m.id}`;
    if (m.role === "user") {
      unanswered(m.depth);
      // A message one level down is a hand-over's instruction.
      items.push(
        m.depth > 0
          ? {
              kind: "handover",
              key,
              from: answering.get(m.depth - 1) ?? "",
              to: m.agent,
              instruction: m.content,
              depth: m.depth,
            }
          : {
              kind: "user",
              key,
              text: m.content,
              agent: m.agent,
              depth: 0,
              at: parseTime(m.created_at),
            },
      );
    } else if (m.role === "assistant") {
      unanswered(m.depth);
      answering.set(m.depth, m.agent);
      items.push({
        kind: "assistant",
        key,
        agent: m.agent,
        depth: m.depth,
        text: m.content,
        prose: prose ?? m.content,
        citations,
        streaming: false,
        usage:
          m.prompt_tokens !== null || m.completion_tokens !== null
            ? { prompt: m.prompt_tokens, completion: m.completion_tokens }
            : null,
        at: parseTime(m.created_at),
        timing: null,
      });
      if (calls.length > 0) waiting.set(m.depth, calls);
    } else if (m.role === "context") {
      // A note the engine wrote for the model: a marker, never a message of the user or the
      // assistant, and no answer to pending calls (it goes before the next request).
      items.push(contextItem(key, m.agent, m.depth, m.content, null, null, null, false));
    } else {
      // A sub-agent that stopped with calls pending ended before this result came back.
      unanswered(m.depth + 1);
      waiting.delete(m.depth);
      for (const r of results) {
        if (r.handover !== null) {
          items.push({
            kind: "return",
            key: `${r.call_id}-return`,
            from: r.handover.target,
            to: m.agent,
            success: r.success,
            depth: m.depth,
          });
        }
        items.push(
          historyCard(
            r.call_id,
            r.name,
            m.depth,
            r.params,
            r.status,
            r.text,
            r.artifact_ids,
            r.attachments,
            r.reason,
            r.guided,
            r.view,
          ),
        );
      }
      if (notes !== null) {
        items.push({ kind: "tool_results", key, agent: m.agent, depth: m.depth, text: notes });
      }
    }
  }
  // A run in progress is still working on its last calls; live events will show them.
  if (!running) unanswered(0);
  if (
    !running &&
    (lastStatus === "cancelled" || lastStatus === "failed" || lastStatus === "interrupted")
  ) {
    items.push({ kind: "run_end", key: "end-history", status: lastStatus, error: null });
  }
  return { ...emptyChat, items, running, seq: items.length };
}

const NO_RESULT =
  "No result was recorded for this call: it was not run, or the app stopped before it finished.";

function historyCard(
  callId: string,
  tool: string,
  depth: number,
  params: Partial<Record<string, JsonValue>>,
  status: CallStatus,
  result: string,
  artifactIds: string[],
  attachments: StoredAttachment[],
  reason: string | null,
  guided: boolean,
  view: ViewRef | null,
): Extract<TimelineItem, { kind: "tool" }> {
  // The attachments are shown as such; the link is for the text artifact, if any.
  const shown = new Set(attachments.map((a) => a.artifact_id));
  return {
    ...toolItem(callId, tool, depth, params),
    status,
    result,
    reason,
    artifactId: artifactIds.find((id) => !shown.has(id)) ?? null,
    attachments,
    guided,
    view,
  };
}

function artifactIdOf(metadata: Partial<Record<string, JsonValue>>): string | null {
  const persisted = metadata["persisted_artifact_id"];
  if (typeof persisted === "string") return persisted;
  const snapshot = metadata["artifact_snapshot"];
  if (snapshot && typeof snapshot === "object" && !Array.isArray(snapshot)) {
    const id = (snapshot as Record<string, JsonValue>)["id"];
    if (typeof id === "string") return id;
  }
  return null;
}

/** Fold one engine event of this conversation into the state; `now` is when it arrived (ms
 * since the Unix epoch), for timestamps and speeds. */
export function reduce(state: ChatState, event: EngineEvent, now: number = Date.now()): ChatState {
  if (event.type === "model_loading") {
    return { ...state, loadingModel: event.model, seq: state.seq + 1 };
  }
  const next = fold(state, event, now);
  // The model answers (or the run ends): it has loaded, or will not.
  const loaded =
    event.type === "token" ||
    event.type === "tool_call_started" ||
    event.type === "model_answer" ||
    event.type === "run_ended";
  return loaded && next.loadingModel !== null ? { ...next, loadingModel: null } : next;
}

function fold(state: ChatState, event: EngineEvent, now: number): ChatState {
  const seq = state.seq + 1;
  const items = state.items;
  switch (event.type) {
    case "run_started":
      return { ...state, running: true, depth: 0, seq, waitingSince: state.waitingSince ?? now };
    case "token": {
      const last = items[items.length - 1];
      if (last && last.kind === "assistant" && last.streaming && last.agent === event.agent) {
        const timing = last.timing && { ...last.timing, lastTokenAt: now };
        const prose = event.prose_reset ? event.prose : last.prose + event.prose;
        const updated = { ...last, text: last.text + event.text, prose, timing };
        return { ...state, items: [...items.slice(0, -1), updated], seq, waitingSince: null };
      }
      const item: TimelineItem = {
        kind: "assistant",
        key: `a${seq}`,
        agent: event.agent,
        depth: event.depth,
        text: event.text,
        prose: event.prose,
        citations: [],
        streaming: true,
        usage: null,
        at: now,
        timing: {
          requestedAt: state.waitingSince,
          firstTokenAt: now,
          lastTokenAt: now,
          finishedAt: null,
        },
      };
      return { ...state, items: [...items, item], seq, waitingSince: null };
    }
    case "tool_call_started":
      return { ...state, callingTool: event.name ?? state.callingTool ?? "a tool", seq };
    case "model_answer": {
      const index = findLastIndex(items, (i) => i.kind === "assistant" && i.streaming);
      const usage = { prompt: event.prompt_tokens, completion: event.completion_tokens };
      // Its tools come next (asking, then running: their cards and dialogs show it), or the
      // run ends; nothing waits for the model until a tool finishes.
      if (index < 0) return { ...state, callingTool: null, seq, waitingSince: null };
      const item = items[index];
      if (item?.kind !== "assistant") return state;
      const next = [...items];
      const timing = item.timing && { ...item.timing, finishedAt: now };
      next[index] = { ...item, streaming: false, usage, timing, citations: event.citations };
      return { ...state, items: next, callingTool: null, seq, waitingSince: null };
    }
    case "tool_start":
      // A call an MCP view makes shows its outcome in the view, not as a card of the run.
      if (event.view_of) return state;
      return {
        ...state,
        items: [...items, toolItem(event.call_id, event.tool, state.depth, event.params)],
        seq,
        waitingSince: null,
      };
    case "tool_progress": {
      const index = findLastIndex(items, (i) => i.kind === "tool" && i.callId === event.call_id);
      const item = items[index];
      if (item?.kind !== "tool" || item.status !== "running") return state;
      const next = [...items];
      const progress = { value: event.progress, total: event.total, message: event.message };
      next[index] = { ...item, progress };
      return { ...state, items: next, seq };
    }
    case "tool_complete": {
      if (event.view_of) return state;
      // The engine's status, never its wording.
      const status = event.status;
      const index = findLastIndex(items, (i) => i.kind === "tool" && i.callId === event.call_id);
      const done = {
        status,
        result: event.result,
        reason: event.reason,
        durationMs: event.duration_ms,
        artifactId: artifactIdOf(event.metadata),
        attachments: event.attachments,
        guided: event.guided,
        view: event.view,
      } as const;
      if (index >= 0) {
        const item = items[index];
        if (item?.kind !== "tool") return state;
        const next = [...items];
        next[index] = { ...item, ...done };
        return { ...state, items: next, seq, waitingSince: afterTools(next, now) };
      }
      // Refused before it ran (validation, permission, malformed, unknown tool).
      const refused = {
        ...toolItem(event.call_id, event.tool, event.depth, event.params),
        ...done,
      };
      const next = [...items, refused];
      return { ...state, items: next, seq, waitingSince: afterTools(next, now) };
    }
    case "agent_switch":
      return {
        ...state,
        waitingSince: now,
        depth: event.depth,
        items: [
          ...items,
          {
            kind: "handover",
            key: `h${seq}`,
            from: event.from,
            to: event.to,
            instruction: event.instruction,
            depth: event.depth,
          },
        ],
        seq,
      };
    case "agent_return":
      return {
        ...state,
        waitingSince: now,
        depth: Math.max(0, state.depth - 1),
        items: [
          ...items,
          {
            kind: "return",
            key: `r${seq}`,
            from: event.from,
            to: event.to,
            success: event.success,
            depth: Math.max(0, state.depth - 1),
          },
        ],
        seq,
      };
    case "context_usage":
      // The meter is the conversation's agent's: a sub-agent's own budget does not move it.
      if (event.depth !== 0) return state;
      return {
        ...state,
        contextUsage: {
          estimated: event.estimated_tokens,
          reserved: event.reserved_tokens,
          window: event.window_tokens,
        },
      };
    case "context_condensed":
      return condensed(state, event, seq);
    case "run_ended": {
      const finished = items.map((i) =>
        i.kind === "assistant" && i.streaming
          ? { ...i, streaming: false, timing: i.timing && { ...i.timing, finishedAt: now } }
          : i,
      );
      const end: TimelineItem[] =
        event.status === "completed"
          ? []
          : [
              {
                kind: "run_end",
                key: `e${seq}`,
                status: event.status === "running" ? "interrupted" : event.status,
                error: event.error,
              },
            ];
      return {
        ...state,
        items: [...finished, ...end],
        running: false,
        callingTool: null,
        depth: 0,
        seq,
        waitingSince: null,
        // A run that did not complete holds the queue: what was typed may depend on an answer
        // that never came, so the user sends it (or edits it) once they have seen why.
        queueHeld:
          event.status === "completed" || state.queued.length === 0
            ? state.queueHeld
            : event.status === "cancelled"
              ? "The run was cancelled: the queued messages wait for you."
              : "The run did not finish: the queued messages wait for you.",
      };
    }
    default:
      return state;
  }
}

/** A marker where the model's view was shortened. A note has the key of its stored message,
 * so the live marker and the one read from history are the same item (never shown twice); a
 * results-only shortening repeated in the same turn (the same older results, referenced again
 * at each request) updates the turn's marker rather than adding one per request. */
function condensed(
  state: ChatState,
  event: Extract<EngineEvent, { type: "context_condensed" }>,
  seq: number,
): ChatState {
  const items = state.items;
  const server = event.reason === "server";
  if (event.note === null && event.message_id === null) {
    const turnStart = findLastIndex(items, (i) => i.kind === "user" && i.depth === 0);
    const index = findLastIndex(items, (i) => i.kind === "context" && i.depth === event.depth);
    const marker = items[index];
    if (index > turnStart && marker?.kind === "context" && marker.note === null) {
      const next = [...items];
      next[index] = {
        ...marker,
        resultsReferenced: Math.max(marker.resultsReferenced ?? 0, event.results_referenced),
        resultsCut: Math.max(marker.resultsCut ?? 0, event.results_cut),
        server: marker.server || server,
      };
      return { ...state, items: next, seq };
    }
  }
  const key = event.message_id === null ? `c${seq}` : `m${event.message_id}`;
  if (items.some((i) => i.key === key)) return state;
  const item = contextItem(
    key,
    event.agent,
    event.depth,
    event.note,
    event.results_referenced,
    event.messages_condensed,
    event.results_cut,
    server,
  );
  return { ...state, items: [...items, item], seq };
}

function contextItem(
  key: string,
  agent: string,
  depth: number,
  note: string | null,
  resultsReferenced: number | null,
  messagesCondensed: number | null,
  resultsCut: number | null,
  server: boolean,
): Extract<TimelineItem, { kind: "context" }> {
  return {
    kind: "context",
    key,
    agent,
    depth,
    note,
    resultsReferenced,
    messagesCondensed,
    resultsCut,
    server,
  };
}

/** Once the last running tool finished, the results go back to the model: it waits from `now`. */
function afterTools(items: TimelineItem[], now: number): number | null {
  return items.some((i) => i.kind === "tool" && i.status === "running") ? null : now;
}

function toolItem(
  callId: string,
  tool: string,
  depth: number,
  params: Partial<Record<string, JsonValue>>,
): Extract<TimelineItem, { kind: "tool" }> {
  return {
    kind: "tool",
    key: callId,
    callId,
    tool,
    depth,
    params: params as Record<string, JsonValue>,
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
}

function findLastIndex<T>(list: T[], pred: (t: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) {
    const item = list[i];
    if (item !== undefined && pred(item)) return i;
  }
  return -1;
}

/** The conversation an event belongs to, if any. */
export function conversationOf(event: EngineEvent): string | null {
  return "conversation_id" in event ? event.conversation_id : null;
}

/**
 * Who made each sub-agent's tool call: for every tool item below the conversation's agent
 * (depth > 0), the agents from the conversation's agent down to the caller, then the tool
 * (`lead_agent → search_agent → web_fetch`), read from the messages and hand-overs before it.
 */
export function agentChains(items: TimelineItem[]): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  let chain: string[] = [];
  const at = (depth: number, agent: string) => {
    chain = [...chain.slice(0, depth), agent];
  };
  for (const item of items) {
    switch (item.kind) {
      case "user":
      case "assistant":
        if (item.agent) at(item.depth, item.agent);
        break;
      case "handover":
        if (item.depth > 0 && item.from) at(item.depth - 1, item.from);
        at(item.depth, item.to);
        break;
      case "tool":
        if (item.depth > 0 && chain.length > item.depth) {
          chains.set(item.key, [...chain.slice(0, item.depth + 1), item.tool]);
        }
        break;
      default:
        break;
    }
  }
  return chains;
}
