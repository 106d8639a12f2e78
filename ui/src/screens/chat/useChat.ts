import { useCallback, useEffect, useState, useSyncExternalStore } from "react";
import {
  commands,
  type AgentInfo,
  type ConversationSummary,
  type ConversationView,
  type ExportFormat,
} from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { useEngineEvents } from "../../ipc/useEngineEvents";
import { useChatStore } from "./ChatStoreProvider";
import { emptyChat, fromHistory, type ChatState } from "./timeline";
import { useConversationPages } from "./useConversationPages";

function withUserMessage(state: ChatState, text: string, agent: string): ChatState {
  return {
    ...state,
    items: [...state.items, { kind: "user", key: `u${state.seq + 1}`, text, agent, depth: 0 }],
    seq: state.seq + 1,
  };
}

function newId(): string {
  return (
    globalThis.crypto?.randomUUID?.() ??
    `c${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`
  );
}

/** The chat: conversations, the open one's live timeline (kept in the app's ChatStore), runs.
 * `initial` opens that conversation first. */
export function useChat(initial: string | null = null) {
  const [query, setQuery] = useState("");
  // The list, a page at a time (see useConversationPages).
  const pages = useConversationPages(query);
  const conversations = pages.items;
  // The open conversation's summary, which may not be in the pages loaded so far.
  const [current, setCurrent] = useState<ConversationSummary | null>(null);
  const [agents, setAgents] = useState<AgentInfo[]>([]);
  const [agent, setAgent] = useState<string>("");
  const [currentId, setCurrentId] = useState<string | null>(initial);
  const store = useChatStore();
  const chat = useSyncExternalStore(store.subscribe, () => store.get(currentId) ?? emptyChat);
  const [error, setError] = useState<string | null>(null);

  const { refresh: refreshPages } = pages;
  const refresh = useCallback(async () => refreshPages(), [refreshPages]);

  useEffect(() => {
    call(commands.listAgents())
      .then((all) => {
        const callable = all.filter((a) => !a.internal);
        setAgents(callable);
        setAgent(
          (current) =>
            current || (callable.find((a) => a.name === "lead_agent") ?? callable[0])?.name || "",
        );
      })
      .catch((e: unknown) => setError(errorMessage(e)));
  }, []);

  // The store applies events to the conversations; here they only refresh the list.
  useEngineEvents((event) => {
    if (event.type === "run_ended" || event.type === "run_started") void refresh();
  });

  /** Show a loaded conversation: a kept live state wins over the stored history. */
  const show = useCallback(
    (id: string, view: ConversationView) => {
      if (store.get(id) === undefined)
        store.set(id, fromHistory(view.messages, view.summary?.last_status ?? null, view.running));
      if (view.summary?.agent) setAgent(view.summary.agent);
      setCurrent(view.summary);
    },
    [store],
  );

  const load = useCallback(
    async (id: string) => {
      try {
        show(id, await call(commands.getConversation(id)));
      } catch (e) {
        setError(errorMessage(e));
      }
    },
    [show],
  );

  const open = useCallback(
    async (id: string | null) => {
      setError(null);
      setCurrentId(id);
      if (id !== null) await load(id);
    },
    [load],
  );

  useEffect(() => {
    if (initial === null) return;
    let alive = true;
    void call(commands.getConversation(initial)).then(
      (view) => alive && show(initial, view),
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [initial, show]);

  const send = useCallback(
    async (task: string) => {
      const text = task.trim();
      if (!text || !agent) return false;
      setError(null);
      const id = currentId ?? newId();
      if (currentId === null) setCurrentId(id);
      store.set(id, withUserMessage(store.get(id) ?? emptyChat, text, agent));
      try {
        await call(commands.startRun(id, agent, text));
      } catch (e) {
        setError(errorMessage(e));
        return false;
      }
      void refresh();
      return true;
    },
    [agent, currentId, refresh, store],
  );

  const cancel = useCallback(async () => {
    if (currentId)
      await call(commands.cancelRun(currentId)).catch((e: unknown) => setError(errorMessage(e)));
  }, [currentId]);

  const lastTask = [...chat.items].reverse().find((i) => i.kind === "user" && i.depth === 0);
  const retry = useCallback(async () => {
    if (lastTask?.kind === "user") await send(lastTask.text);
  }, [lastTask, send]);

  const rename = useCallback(
    async (id: string, title: string) => {
      await call(commands.renameConversation(id, title)).catch((e: unknown) =>
        setError(errorMessage(e)),
      );
      await refresh();
    },
    [refresh],
  );

  const remove = useCallback(
    async (id: string) => {
      try {
        await call(commands.deleteConversation(id));
        store.forget(id);
      } catch (e) {
        setError(errorMessage(e));
      }
      if (id === currentId) await open(null);
      await refresh();
    },
    [currentId, open, refresh, store],
  );

  // Where the last export was written, shown until the next one.
  const [exported, setExported] = useState<string | null>(null);
  const exportConversation = useCallback(async (id: string, format: ExportFormat) => {
    const res = await commands.exportConversation(id, format);
    if (res.status !== "ok") setError(res.error.message);
    else if (res.data !== null) setExported(res.data);
  }, []);

  return {
    conversations,
    total: pages.total,
    listLoadedFor: pages.loadedFor,
    listError: pages.error,
    loadMore: pages.loadMore,
    current: current?.id === currentId ? current : null,
    query,
    setQuery,
    agents,
    agent,
    setAgent,
    currentId,
    chat,
    error,
    open,
    send,
    cancel,
    retry,
    rename,
    remove,
    exported,
    exportConversation,
  };
}
