import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from "react";
import {
  commands,
  type ConversationSummary,
  type ConversationView,
  type ExportFormat,
} from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { useAgents, useSharedSettings } from "../../ipc/shared";
import { missingModelOf, noModelToSend } from "../settings/missingModel";
import { useEngineEvents } from "../../ipc/useEngineEvents";
import { useChatStore } from "./ChatStoreProvider";
import { emptyChat, fromHistory } from "./timeline";
import { useConversationPages } from "./useConversationPages";

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
  // The agent chosen (or the open conversation's); until then the lead agent, or the first.
  const [chosen, setAgent] = useState<string>("");
  const [currentId, setCurrentId] = useState<string | null>(initial);
  const store = useChatStore();
  const chat = useSyncExternalStore(store.subscribe, () => store.get(currentId) ?? emptyChat);
  const [error, setError] = useState<string | null>(null);

  const { refresh: refreshPages } = pages;
  const refresh = useCallback(async () => refreshPages(), [refreshPages]);

  // The agents and the model of each profile are the app's shared answers (see ipc/shared):
  // a config reload or a profile saved in Settings shows here at once.
  const sharedAgents = useAgents();
  const settings = useSharedSettings();
  const agents = useMemo(
    () => (sharedAgents.value ?? []).filter((a) => !a.internal),
    [sharedAgents.value],
  );
  // Model id of each profile, so the composer shows what the chosen agent talks to (without
  // the settings, the composer names the profile alone).
  const models = useMemo<Record<string, string>>(
    () => Object.fromEntries((settings.value?.profiles ?? []).map((p) => [p.name, p.model])),
    [settings.value],
  );
  const agent = chosen || (agents.find((a) => a.name === "lead_agent") ?? agents[0])?.name || "";
  // The chosen agent's profile, when it runs on this computer and its model is missing
  // (deleted, never installed): the composer marks it, and sending says what to do.
  const agentProfile = agents.find((a) => a.name === agent)?.model ?? "default";
  const missingModel = useMemo(
    () => missingModelOf(settings.value?.profile_models, agentProfile),
    [settings.value, agentProfile],
  );
  const agentsError = sharedAgents.error ? errorMessage(sharedAgents.error) : null;

  // The store applies events to the conversations; here they only refresh the list.
  useEngineEvents((event) => {
    if (event.type === "run_ended" || event.type === "run_started") void refresh();
  });

  /** Show a loaded conversation: a kept live state wins over the stored history. */
  const show = useCallback(
    (id: string, view: ConversationView) => {
      if (store.get(id) === undefined)
        store.set(id, {
          ...fromHistory(view.messages, view.summary?.last_status ?? null, view.running),
          // (`?`: a view from an older shell, or a test's, may not carry it.)
          contextUsage: view.context_usage
            ? {
                estimated: view.context_usage.estimated_tokens,
                reserved: view.context_usage.reserved_tokens,
                window: view.context_usage.window_tokens,
              }
            : null,
        });
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

  /** Send `task`, or queue it while a run goes on (it is sent when the run ends). False when
   * nothing was sent or queued (the error says why). */
  const send = useCallback(
    async (task: string) => {
      const text = task.trim();
      if (!text || !agent) return false;
      setError(null);
      if (missingModel) {
        // Not a run that fails at once with the engine's error: what to do, the text kept.
        setError(noModelToSend(missingModel, models[missingModel.profile] ?? ""));
        return false;
      }
      const id = currentId ?? newId();
      if (currentId === null) setCurrentId(id);
      if (store.get(id)?.running) {
        store.enqueue(id, agent, text);
        return true;
      }
      try {
        await store.send(id, agent, text);
      } catch (e) {
        setError(errorMessage(e));
        return false;
      }
      // (The list refreshes on the run's run_started event, once: not here too.)
      return true;
    },
    [agent, currentId, store, missingModel, models],
  );

  /** Go on from the user's `turn`-th task (0-based) with `task` instead: that task and
   * everything after it are deleted (engine and timeline), then `task` is sent. */
  const resendFrom = useCallback(
    async (turn: number, task: string) => {
      const text = task.trim();
      if (!currentId || !text || !agent) return false;
      setError(null);
      if (missingModel) {
        setError(noModelToSend(missingModel, models[missingModel.profile] ?? ""));
        return false;
      }
      try {
        await call(commands.truncateConversation(currentId, turn));
      } catch (e) {
        setError(errorMessage(e));
        return false;
      }
      const state = store.get(currentId) ?? emptyChat;
      let seen = -1;
      const cut = state.items.findIndex(
        (i) => i.kind === "user" && i.depth === 0 && ++seen === turn,
      );
      store.set(currentId, {
        ...state,
        items: cut < 0 ? state.items : state.items.slice(0, cut),
      });
      try {
        await store.send(currentId, agent, text);
      } catch (e) {
        setError(errorMessage(e));
        return false;
      }
      // (The list refreshes on the run's run_started event, once: not here too.)
      return true;
    },
    [agent, currentId, store, missingModel, models],
  );

  const queue = {
    edit: (queuedId: string, text: string) =>
      currentId && store.editQueued(currentId, queuedId, text),
    remove: (queuedId: string) => currentId && store.removeQueued(currentId, queuedId),
    sendNow: () => currentId && void store.sendQueued(currentId),
  };

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
    listLoadingMore: pages.loadingMore,
    loadMore: pages.loadMore,
    retryList: pages.retry,
    current: current?.id === currentId ? current : null,
    query,
    setQuery,
    agents,
    agent,
    setAgent,
    models,
    missingModel,
    currentId,
    chat,
    error: error ?? agentsError,
    open,
    send,
    resendFrom,
    queue,
    cancel,
    retry,
    rename,
    remove,
    exported,
    exportConversation,
  };
}
