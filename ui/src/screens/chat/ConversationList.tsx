import { useState } from "react";
import type { useChat } from "./useChat";

type Chat = ReturnType<typeof useChat>;

/** The conversations: new, search, open, rename, export, delete. */
export function ConversationList({ chat }: { chat: Chat }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [exporting, setExporting] = useState<string | null>(null);
  const [title, setTitle] = useState("");
  return (
    <aside className="conv-list" aria-label="Conversations">
      <div className="conv-list-top">
        <button
          type="button"
          className="primary"
          onClick={() => void chat.open(null)}
          data-testid="new-conversation"
        >
          New conversation
        </button>
        <input
          type="search"
          placeholder="Search conversations"
          aria-label="Search conversations"
          value={chat.query}
          onChange={(e) => chat.setQuery(e.target.value)}
        />
      </div>
      <ul>
        {chat.conversations.map((c) => (
          <li key={c.id} className={c.id === chat.currentId ? "current" : undefined}>
            {editing === c.id ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void chat.rename(c.id, title);
                  setEditing(null);
                }}
              >
                <input
                  aria-label="Conversation title"
                  value={title}
                  autoFocus
                  onChange={(e) => setTitle(e.target.value)}
                  onKeyDown={(e) => e.key === "Escape" && setEditing(null)}
                />
              </form>
            ) : (
              <button
                type="button"
                className="conv-item"
                aria-current={c.id === chat.currentId ? "true" : undefined}
                onClick={() => void chat.open(c.id)}
                data-testid="conversation-item"
              >
                <span className="conv-title">{c.title || "Untitled"}</span>
                <span className="muted small">
                  {c.agent}
                  {c.last_status && c.last_status !== "completed" ? ` · ${c.last_status}` : ""}
                </span>
              </button>
            )}
            {confirming === c.id ? (
              <span className="conv-actions">
                Delete?
                <button
                  type="button"
                  onClick={() => void chat.remove(c.id).then(() => setConfirming(null))}
                >
                  Yes
                </button>
                <button type="button" onClick={() => setConfirming(null)}>
                  No
                </button>
              </span>
            ) : exporting === c.id ? (
              <span className="conv-actions" data-testid="export-choice">
                Export as
                {(["md", "json"] as const).map((format) => (
                  <button
                    key={format}
                    type="button"
                    onClick={() =>
                      void chat.exportConversation(c.id, format).then(() => setExporting(null))
                    }
                  >
                    {format === "md" ? "Markdown" : "JSON"}
                  </button>
                ))}
                <button type="button" onClick={() => setExporting(null)}>
                  Cancel
                </button>
              </span>
            ) : (
              <span className="conv-actions">
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Export ${c.title}`}
                  onClick={() => setExporting(c.id)}
                >
                  Export
                </button>
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Rename ${c.title}`}
                  onClick={() => {
                    setTitle(c.title);
                    setEditing(c.id);
                  }}
                >
                  Rename
                </button>
                <button
                  type="button"
                  className="link-button"
                  aria-label={`Delete ${c.title}`}
                  onClick={() => setConfirming(c.id)}
                >
                  Delete
                </button>
              </span>
            )}
          </li>
        ))}
        {chat.conversations.length === 0 && <li className="muted small">No conversations yet.</li>}
      </ul>
    </aside>
  );
}
