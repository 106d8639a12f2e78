import { useEffect, useState } from "react";
import { ArtifactViewer } from "./ArtifactViewer";
import { Composer } from "./Composer";
import { ConversationList } from "./ConversationList";
import { Timeline } from "./TimelineView";
import { useChat } from "./useChat";

export { stripCalls } from "./TimelineView";

/** The chat. It opens `conversation` when it mounts, and reports the conversation it shows
 * through `onCurrentChange`, so coming back to the chat returns to it. */
export function ChatScreen({
  conversation = null,
  onCurrentChange,
}: {
  conversation?: string | null;
  onCurrentChange?: (id: string | null) => void;
}) {
  const [initial] = useState(conversation);
  const chat = useChat(initial);
  const { currentId } = chat;
  useEffect(() => {
    onCurrentChange?.(currentId);
  }, [currentId, onCurrentChange]);
  const [viewing, setViewing] = useState<string | null>(null);
  return (
    <section className="chat" aria-labelledby="screen-title">
      <ConversationList chat={chat} />
      <div className="chat-main">
        <ChatHeader chat={chat} />
        <Timeline
          items={chat.chat.items}
          conversationId={chat.currentId}
          onOpenArtifact={setViewing}
        />
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

function ChatHeader({ chat }: { chat: Chat }) {
  const title = chat.conversations.find((c) => c.id === chat.currentId)?.title;
  return (
    <header className="chat-header">
      <h1 id="screen-title">{chat.currentId ? title || "Conversation" : "New conversation"}</h1>
      <label className="agent-picker">
        Agent{" "}
        <select
          value={chat.agent}
          onChange={(e) => chat.setAgent(e.target.value)}
          disabled={chat.chat.running}
          data-testid="agent-picker"
        >
          {chat.agents.map((a) => (
            <option key={a.name} value={a.name} title={a.description}>
              {a.display_name ?? a.name}
            </option>
          ))}
        </select>
      </label>
      {chat.chat.running && (
        <span className="badge badge-running" data-testid="run-status">
          Running
        </span>
      )}
    </header>
  );
}
