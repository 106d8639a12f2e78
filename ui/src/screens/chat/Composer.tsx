import { useEffect, useRef, useState } from "react";
import { missingModelText } from "../settings/missingModel";
import { ContextMeter } from "./ContextMeter";
import type { QueuedMessage } from "./timeline";
import type { useChat } from "./useChat";

type Chat = ReturnType<typeof useChat>;

/** The message box: the agent it talks to (its model and the context meter), Send, Cancel and Retry, the
 * messages queued during a run, and the live "waiting for the model" state. Focus stays in
 * the box after sending, so a key typed next never lands on Cancel. */
export function Composer({ chat }: { chat: Chat }) {
  const [text, setText] = useState("");
  const input = useRef<HTMLTextAreaElement>(null);
  const running = chat.chat.running;
  const last = chat.chat.items[chat.chat.items.length - 1];
  const canRetry = !running && last?.kind === "run_end";
  const submit = async () => {
    // Back in the box at once: the Send button under the pointer must not keep the focus.
    input.current?.focus();
    const sent = await chat.send(text);
    if (sent) setText("");
  };
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <WaitingForModel
        key={String(running ? waitingSince(chat) : null)}
        since={running ? waitingSince(chat) : null}
        loading={chat.chat.loadingModel}
      />
      <QueuedList chat={chat} />
      <AgentLine chat={chat} />
      <textarea
        ref={input}
        aria-label="Message"
        placeholder={
          !chat.agent
            ? "No agent available"
            : running
              ? `Message ${chat.agent} (Enter queues it until the run ends)`
              : `Message ${chat.agent} (Enter to send, Shift+Enter for a new line)`
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
        {running && (
          // Its own element (keyed), so the Send button's focus never carries over to it.
          <button
            key="cancel"
            type="button"
            title="Stop the run (Esc)"
            onClick={() => {
              void chat.cancel();
              input.current?.focus();
            }}
            data-testid="cancel-run"
          >
            Cancel
          </button>
        )}
        <button
          key="send"
          type="submit"
          className={running ? undefined : "primary"}
          disabled={!text.trim() || !chat.agent}
          data-testid="send"
        >
          {running ? "Queue" : "Send"}
        </button>
      </div>
    </form>
  );
}

/** When the run started waiting for the model, unless a tool is running. */
function waitingSince(chat: Chat): number | null {
  const busyTool = chat.chat.items.some((i) => i.kind === "tool" && i.status === "running");
  return busyTool ? null : chat.chat.waitingSince;
}

/** "Waiting for the model… 12 s", counted from the request, ticking every second. (Keyed by
 * `since`: each wait starts with a fresh clock.) */
function WaitingForModel({ since, loading }: { since: number | null; loading: string | null }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (since === null) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [since]);
  if (since === null) return null;
  const seconds = Math.max(0, Math.floor((now - since) / 1000));
  return (
    <p className="waiting-model muted small" role="status" data-testid="waiting-model">
      <span className="waiting-dot" aria-hidden="true" />
      {loading === null
        ? `Waiting for the model… ${seconds} s`
        : `Loading ${loading} on this computer… ${seconds} s`}
    </p>
  );
}

/** The agent the box talks to, its model profile and model id (marked when the profile has no
 * model: deleted, never installed), the picker to switch, and how much of the model's context
 * window the conversation fills. */
function AgentLine({ chat }: { chat: Chat }) {
  const info = chat.agents.find((a) => a.name === chat.agent);
  const profile = info ? (info.model ?? "default") : null;
  const model = profile ? chat.models[profile] : undefined;
  const missing = chat.missingModel;
  return (
    <div className="composer-agent">
      <label className="agent-picker">
        <span className="muted small">Agent</span>{" "}
        <select
          value={chat.agent}
          onChange={(e) => chat.setAgent(e.target.value)}
          disabled={chat.chat.running}
          title={chat.chat.running ? "The agent can change once the run ends" : undefined}
          data-testid="agent-picker"
        >
          {chat.agents.map((a) => (
            <option key={a.name} value={a.name} title={a.description}>
              {a.display_name ?? a.name}
            </option>
          ))}
        </select>
      </label>
      {profile && (
        <span
          className="muted small"
          title={`${profile}${model ? ` · ${model}` : ""}`}
          data-testid="composer-model"
        >
          {profile}
          {model ? ` · ${model}` : ""}
        </span>
      )}
      {profile && missing && (
        <span
          className="tag tag-missing"
          title={`The profile “${profile}” has no model: ${missingModelText(missing, model ?? "")}. Pick another model for it in Settings.`}
          data-testid="composer-model-missing"
        >
          no model
        </span>
      )}
      <ContextMeter usage={chat.chat.contextUsage} />
    </div>
  );
}

/** The messages queued during the run, in the order they will be sent. */
function QueuedList({ chat }: { chat: Chat }) {
  const { queued, queueHeld, running } = chat.chat;
  if (queued.length === 0) return null;
  return (
    <div className="queued" data-testid="queued">
      <p className="muted small" role="status">
        {queueHeld ??
          (running
            ? `Queued: sent when the run ends (${queued.length})`
            : `Sending the queued messages…`)}
      </p>
      <ol>
        {queued.map((q) => (
          <QueuedItem key={q.id} message={q} chat={chat} />
        ))}
      </ol>
      {queueHeld && !running && (
        <button type="button" onClick={() => chat.queue.sendNow()} data-testid="queued-send">
          Send the next queued message
        </button>
      )}
    </div>
  );
}

function QueuedItem({ message, chat }: { message: QueuedMessage; chat: Chat }) {
  const [editing, setEditing] = useState<string | null>(null);
  if (editing !== null) {
    const save = () => {
      chat.queue.edit(message.id, editing);
      setEditing(null);
    };
    return (
      <li className="queued-item" data-testid="queued-item">
        <textarea
          aria-label="Queued message"
          value={editing}
          rows={2}
          autoFocus
          onChange={(e) => setEditing(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              save();
            } else if (e.key === "Escape") {
              e.preventDefault();
              e.stopPropagation();
              setEditing(null);
            }
          }}
          data-testid="queued-edit-input"
        />
        <button type="button" onClick={save} data-testid="queued-save">
          Save
        </button>
        <button type="button" onClick={() => setEditing(null)}>
          Keep as it was
        </button>
      </li>
    );
  }
  return (
    <li className="queued-item" data-testid="queued-item">
      <span className="queued-text">{message.text}</span>
      <span className="badge">Queued</span>
      <button
        type="button"
        aria-label={`Edit queued message: ${message.text}`}
        onClick={() => setEditing(message.text)}
        data-testid="queued-edit"
      >
        Edit
      </button>
      <button
        type="button"
        aria-label={`Remove queued message: ${message.text}`}
        onClick={() => chat.queue.remove(message.id)}
        data-testid="queued-remove"
      >
        Remove
      </button>
    </li>
  );
}
