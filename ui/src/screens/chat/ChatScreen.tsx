import { useCallback, useEffect, useMemo, useState } from "react";
import { AgentNames, namer } from "./agentNames";
import { ArtifactViewer } from "./ArtifactViewer";
import type { SourceAt } from "./citations";
import { Composer } from "./Composer";
import { ConversationList } from "./ConversationList";
import { Timeline } from "./TimelineView";
import { useChat } from "./useChat";
import { ViewActionsContext, type ViewActions } from "./viewActions";

/** The chat. It opens `conversation` when it mounts, and reports the conversation it shows
 * through `onCurrentChange`. The app keeps it mounted while another screen shows (`shown`
 * false): it is then out of sight, without its heading (the screen shown has the page's one)
 * and without its keys, while its tool cards' live views (MCP Apps frames) keep running, so
 * coming back finds them as they were. */
export function ChatScreen({
  shown = true,
  conversation = null,
  agent,
  onCurrentChange,
}: {
  /** Is the chat the screen shown? */
  shown?: boolean;
  conversation?: string | null;
  /** The agent a new conversation starts with (the command palette's "Run agent"). */
  agent?: string | undefined;
  onCurrentChange?: (id: string | null) => void;
}) {
  const [initial] = useState(conversation);
  const chat = useChat(initial);
  const { currentId, setAgent } = chat;
  const [initialAgent] = useState(agent);
  useEffect(() => {
    if (initialAgent) setAgent(initialAgent);
  }, [initialAgent, setAgent]);
  useEffect(() => {
    onCurrentChange?.(currentId);
  }, [currentId, onCurrentChange]);
  const [viewing, setViewing] = useState<{ id: string; at: SourceAt | null } | null>(null);
  const openArtifact = useCallback(
    (id: string, at?: SourceAt) => setViewing({ id, at: at ?? null }),
    [],
  );
  useEscapeStopsRun(chat, shown);
  const agentName = useMemo(() => namer(chat.agents), [chat.agents]);
  const send = chat.send;
  const viewActions = useMemo<ViewActions>(() => ({ send }), [send]);
  return (
    <section className="chat" aria-labelledby="screen-title" hidden={!shown}>
      <ConversationList chat={chat} />
      <div className="chat-main">
        {shown && <ChatHeader chat={chat} />}
        <AgentNames.Provider value={agentName}>
          <ViewActionsContext.Provider value={viewActions}>
            <Timeline
              shown={shown}
              items={chat.chat.items}
              conversationId={chat.currentId}
              onOpenArtifact={openArtifact}
              actions={
                chat.currentId && !chat.chat.running
                  ? { resendFrom: (turn, text) => chat.resendFrom(turn, text) }
                  : null
              }
            />
          </ViewActionsContext.Provider>
        </AgentNames.Provider>
        {chat.chat.callingTool && (
          <p className="calling" role="status" data-testid="calling-tool">
            Calling {chat.chat.callingTool}…
          </p>
        )}
        {chat.exported && (
          <p className="muted small" role="status" data-testid="conversation-exported">
            Exported to {chat.exported}
          </p>
        )}
        {chat.error && (
          <p className="chat-error" role="alert" data-testid="chat-error">
            {chat.error}
          </p>
        )}
        <Composer chat={chat} />
        {viewing && chat.currentId && (
          <ArtifactViewer
            conversationId={chat.currentId}
            id={viewing.id}
            at={viewing.at}
            onClose={() => setViewing(null)}
          />
        )}
      </div>
    </section>
  );
}

type Chat = ReturnType<typeof useChat>;

/**
 * Esc stops the run, as Cancel does (Cancel asks nothing: a stopped run keeps what it wrote and
 * Retry starts it again, so Esc asks nothing either). Not while a dialog is open or a control
 * used the key itself (a confirmation, an edit being dropped, a menu), nor while the chat is out
 * of sight (`shown` false: the key is the screen shown's).
 */
function useEscapeStopsRun(chat: Chat, shown: boolean) {
  const { running } = chat.chat;
  const { cancel } = chat;
  useEffect(() => {
    if (!running || !shown) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented || e.isComposing) return;
      if (document.querySelector("dialog[open], [role=dialog], [aria-modal=true]")) return;
      e.preventDefault();
      void cancel();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [running, shown, cancel]);
}

/** The conversation's title and whether it runs (the agent picker is in the composer). */
function ChatHeader({ chat }: { chat: Chat }) {
  const title =
    chat.conversations.find((c) => c.id === chat.currentId)?.title ?? chat.current?.title;
  return (
    <header className="chat-header">
      <h1 id="screen-title" tabIndex={-1}>
        {chat.currentId ? title || "Conversation" : "New conversation"}
      </h1>
      {chat.chat.running && (
        <span className="badge badge-running" data-testid="run-status">
          Running
        </span>
      )}
    </header>
  );
}
