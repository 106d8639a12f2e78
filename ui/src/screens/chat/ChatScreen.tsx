import { useEffect, useMemo, useState } from "react";
import { AgentNames, namer } from "./agentNames";
import { ArtifactViewer } from "./ArtifactViewer";
import { Composer } from "./Composer";
import { ConversationList } from "./ConversationList";
import { Timeline } from "./TimelineView";
import { useChat } from "./useChat";
import { ViewActionsContext, type ViewActions } from "./viewActions";

/** The chat. It opens `conversation` when it mounts, and reports the conversation it shows
 * through `onCurrentChange`, so coming back to the chat returns to it. */
export function ChatScreen({
  conversation = null,
  agent,
  onCurrentChange,
}: {
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
  const [viewing, setViewing] = useState<string | null>(null);
  useEscapeStopsRun(chat);
  const agentName = useMemo(() => namer(chat.agents), [chat.agents]);
  const send = chat.send;
  const viewActions = useMemo<ViewActions>(() => ({ send }), [send]);
  return (
    <section className="chat" aria-labelledby="screen-title">
      <ConversationList chat={chat} />
      <div className="chat-main">
        <ChatHeader chat={chat} />
        <AgentNames.Provider value={agentName}>
          <ViewActionsContext.Provider value={viewActions}>
            <Timeline
              items={chat.chat.items}
              conversationId={chat.currentId}
              onOpenArtifact={setViewing}
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
            id={viewing}
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
 * used the key itself (a confirmation, an edit being dropped, a menu).
 */
function useEscapeStopsRun(chat: Chat) {
  const { running } = chat.chat;
  const { cancel } = chat;
  useEffect(() => {
    if (!running) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented || e.isComposing) return;
      if (document.querySelector("dialog[open], [role=dialog], [aria-modal=true]")) return;
      e.preventDefault();
      void cancel();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [running, cancel]);
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
