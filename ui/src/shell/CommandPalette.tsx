import {
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type RefObject,
} from "react";
import {
  commands,
  type ArtifactSummary,
  type ConversationSummary,
  type ToolInfo,
} from "../bindings";
import { call } from "../ipc/call";
import { useAgents } from "../ipc/shared";
import { Modal } from "../components/Modal";
import { fuzzyFilter } from "./fuzzy";
import { SCREENS, type ScreenId } from "./Sidebar";

/** What the palette can do; the app shell carries each out. */
export interface PaletteActions {
  goTo: (screen: ScreenId) => void;
  newConversation: (agent?: string) => void;
  openConversation: (id: string) => void;
  openTool: (name: string) => void;
  openArtifact: (artifact: ArtifactSummary) => void;
  showShortcuts: () => void;
}

interface Entry {
  key: string;
  kind: string;
  label: string;
  detail?: string;
  run: () => void;
}

/** Entries shown at most, so a broad query stays quick to read and to render. */
const LIMIT = 40;

/**
 * Ctrl/Cmd+K: one box to go to a screen, open a conversation (searched by the engine, titles
 * and message text), a tool or an artifact, or start a new conversation with an agent. Typing
 * filters fuzzily, the arrow keys move, Enter runs, Escape closes (`onClose`, which gives the
 * focus back where it was: see App.tsx).
 */
export function CommandPalette(props: {
  open: boolean;
  onClose: () => void;
  actions: PaletteActions;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <Modal
      open={props.open}
      initialFocus={input}
      className="palette"
      aria-label="Command palette"
      data-testid="command-palette"
      onEscape={props.onClose}
    >
      {/* Mounted while open, so each opening starts empty. */}
      {props.open && <Palette input={input} onClose={props.onClose} actions={props.actions} />}
    </Modal>
  );
}

function Palette(props: {
  input: RefObject<HTMLInputElement | null>;
  onClose: () => void;
  actions: PaletteActions;
}) {
  const { input, onClose, actions } = props;
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const sharedAgents = useAgents().value;
  const agents = useMemo(() => (sharedAgents ?? []).filter((a) => !a.internal), [sharedAgents]);
  const [tools, setTools] = useState<ToolInfo[]>([]);
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  const [artifacts, setArtifacts] = useState<ArtifactSummary[]>([]);
  const listId = useId();

  // Load what does not depend on the query.
  useEffect(() => {
    let alive = true;
    void call(commands.listTools()).then(
      (all) => alive && setTools(all),
      () => undefined,
    );
    return () => {
      alive = false;
    };
  }, []);

  // Conversations and artifacts are searched by the engine (they may be thousands).
  useEffect(() => {
    let alive = true;
    const q = query.trim() === "" ? null : query.trim();
    void call(commands.listConversationPage(q, 8, 0)).then(
      (page) => alive && setConversations(page.items),
      () => alive && setConversations([]),
    );
    if (q !== null)
      void call(
        commands.listArtifacts(
          {
            query: q,
            conversation_id: null,
            content_type: null,
            source: null,
            updated_from: null,
            updated_before: null,
            sort: "relevance",
          },
          8,
          0,
        ),
      ).then(
        (page) => alive && setArtifacts(page.items),
        () => alive && setArtifacts([]),
      );
    return () => {
      alive = false;
    };
  }, [query]);

  const entries = useMemo(() => {
    const local: Entry[] = [
      {
        key: "new",
        kind: "Action",
        label: "New conversation",
        run: () => actions.newConversation(),
      },
      ...SCREENS.map((s) => ({
        key: `screen:${s.id}`,
        kind: "Go to",
        label: s.label,
        run: () => actions.goTo(s.id),
      })),
      ...agents.map((a) => ({
        key: `agent:${a.name}`,
        kind: "Run agent",
        label: a.name,
        detail: a.description,
        run: () => actions.newConversation(a.name),
      })),
      ...tools.map((t) => ({
        key: `tool:${t.name}`,
        kind: "Tool",
        label: t.name,
        detail: t.source,
        run: () => actions.openTool(t.name),
      })),
      {
        key: "shortcuts",
        kind: "Help",
        label: "Keyboard shortcuts",
        run: actions.showShortcuts,
      },
    ];
    const found: Entry[] = [
      ...conversations.map((c) => ({
        key: `conversation:${c.id}`,
        kind: "Conversation",
        label: c.title || "Untitled",
        detail: c.agent,
        run: () => actions.openConversation(c.id),
      })),
      ...(query.trim() === "" ? [] : artifacts).map((a) => ({
        key: `artifact:${a.conversation_id}/${a.id}`,
        kind: "Artifact",
        label: a.title || a.id,
        detail: a.content_type,
        run: () => actions.openArtifact(a),
      })),
    ];
    const matched = fuzzyFilter(local, query, (e) => `${e.kind} ${e.label}`);
    // The engine already matched conversations and artifacts (by title or text).
    return [...matched, ...found].slice(0, LIMIT);
  }, [actions, agents, tools, conversations, artifacts, query]);

  const current = Math.min(active, Math.max(0, entries.length - 1));
  const close = onClose;
  const run = (entry: Entry | undefined) => {
    if (!entry) return;
    close();
    entry.run();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    const move = (to: number) => {
      e.preventDefault();
      if (entries.length > 0) setActive((to + entries.length) % entries.length);
    };
    if (e.key === "ArrowDown") move(current + 1);
    else if (e.key === "ArrowUp") move(current - 1);
    else if (e.key === "Home" && e.ctrlKey) move(0);
    else if (e.key === "End" && e.ctrlKey) move(entries.length - 1);
    else if (e.key === "Enter") {
      e.preventDefault();
      run(entries[current]);
    }
  };
  useEffect(() => {
    document.getElementById(`${listId}-${current}`)?.scrollIntoView?.({ block: "nearest" });
  }, [current, listId]);

  return (
    <>
      <input
        ref={input}
        type="text"
        role="combobox"
        aria-expanded="true"
        aria-controls={listId}
        aria-activedescendant={entries.length > 0 ? `${listId}-${current}` : undefined}
        aria-autocomplete="list"
        aria-label="Go to a screen, conversation, tool, artifact or agent"
        placeholder="Go to a screen, conversation, tool, artifact or agent…"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
        }}
        onKeyDown={onKeyDown}
        data-testid="palette-input"
      />
      <ul id={listId} role="listbox" aria-label="Results" className="palette-list">
        {entries.map((entry, i) => (
          <li
            key={entry.key}
            id={`${listId}-${i}`}
            role="option"
            aria-selected={i === current}
            className={i === current ? "palette-item active" : "palette-item"}
            onMouseMove={() => i !== current && setActive(i)}
            onClick={() => run(entry)}
            data-testid="palette-item"
          >
            <span className="palette-kind">{entry.kind}</span>
            <span className="palette-label">{entry.label}</span>
            {entry.detail && <span className="muted small palette-detail">{entry.detail}</span>}
          </li>
        ))}
        {entries.length === 0 && (
          <li className="muted small palette-empty" role="presentation">
            Nothing matches “{query}”.
          </li>
        )}
      </ul>
    </>
  );
}
