import { useState } from "react";
import type { useChat } from "./useChat";

type Chat = ReturnType<typeof useChat>;

/** The message box with Send, Cancel and Retry. */
export function Composer({ chat }: { chat: Chat }) {
  const [text, setText] = useState("");
  const running = chat.chat.running;
  const last = chat.chat.items[chat.chat.items.length - 1];
  const canRetry = !running && last?.kind === "run_end";
  const submit = async () => {
    if (await chat.send(text)) setText("");
  };
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <textarea
        aria-label="Message"
        placeholder={
          chat.agent
            ? `Message ${chat.agent} (Enter to send, Shift+Enter for a new line)`
            : "No agent available"
        }
        value={text}
        rows={3}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            void submit();
          }
        }}
        data-testid="composer-input"
      />
      <div className="composer-actions">
        {canRetry && (
          <button type="button" onClick={() => void chat.retry()} data-testid="retry">
            Retry
          </button>
        )}
        {running ? (
          <button type="button" onClick={() => void chat.cancel()} data-testid="cancel-run">
            Cancel
          </button>
        ) : (
          <button
            type="submit"
            className="primary"
            disabled={!text.trim() || !chat.agent}
            data-testid="send"
          >
            Send
          </button>
        )}
      </div>
    </form>
  );
}
