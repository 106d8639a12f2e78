import { useCallback, useEffect, useRef, useState } from "react";
import { commands, type AgentCheck, type AgentView, type FileEntry } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { ConfirmButton } from "../../components/ConfirmButton";
import { Markdown } from "../../components/Markdown";
import { FileEditorFrame } from "../../editor/FileEditorFrame";
import { ProblemList } from "../../editor/ProblemList";
import { selectLine } from "../../editor/selectLine";
import { useFileEditor } from "../../editor/useFileEditor";
import { useConfirmLeave, useLeaveGuard } from "../../shell/leaveGuard";
import { NEW_AGENT } from "./agentFile";
import { useStatusChanges } from "../../ipc/useEngineEvents";
import { ShowFile } from "../../components/ShowFile";
import { useTools } from "../tools/useTools";
import { ToolPicker } from "./ToolPicker";

/** A file open in the editor; `pick`: with the tool picker open. */
type Opened = { path: string | null; text: string; key: number; pick: boolean };

let opens = 0;
/** Every open gets its own key, so opening again (after "Discard") really starts over. */
const opening = (path: string | null, text: string, pick = false): Opened => ({
  path,
  text,
  key: ++opens,
  pick,
});

function useAgentFiles() {
  const [files, setFiles] = useState<FileEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(
    () =>
      void call(commands.listConfigFiles("agent")).then(
        (files) => {
          setFiles(files);
          setError(null);
        },
        (e: unknown) => setError(errorMessage(e)),
      ),
    [],
  );
  const statusChanges = useStatusChanges();
  useEffect(() => {
    load();
    return statusChanges.subscribe(load);
  }, [load, statusChanges]);
  return { files, error, reload: load };
}

/** Every agent: description, model, tools and permissions, role prompt; edit its Markdown with
 * the backend's validation, create, disable and delete. */
export function AgentsScreen({ openPath }: { openPath?: string | null | undefined } = {}) {
  const { files, error, reload } = useAgentFiles();
  const [selected, setSelected] = useState<string | null>(openPath ?? null);
  const [opened, setOpened] = useState<Opened | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const confirmLeave = useConfirmLeave();

  const current = files?.find((f) => f.path === selected) ?? files?.[0] ?? null;
  const select = (path: string) =>
    confirmLeave(() => {
      setOpened(null);
      setSelected(path);
    });
  const edit = (path: string, pick = false) =>
    confirmLeave(
      () =>
        void call(commands.readConfigFile("agent", path)).then(
          (file) => setOpened(opening(file.path, file.text, pick)),
          (e: unknown) => setActionError(errorMessage(e)),
        ),
    );
  // Opened from elsewhere (Settings' "Open in editor" on an agent's rule): its file in the editor.
  const openedFrom = useRef<string | null>(null);
  useEffect(() => {
    if (!openPath || openedFrom.current === openPath) return;
    openedFrom.current = openPath;
    void call(commands.readConfigFile("agent", openPath)).then(
      (file) => setOpened(opening(file.path, file.text)),
      (e: unknown) => setActionError(errorMessage(e)),
    );
  }, [openPath]);
  const act = async (run: () => Promise<unknown>) => {
    try {
      await run();
      setActionError(null);
    } catch (e) {
      setActionError(errorMessage(e));
    }
    reload();
  };

  return (
    <section className="screen agents-screen">
      <h1 id="screen-title" tabIndex={-1}>
        Agents
      </h1>
      {error && <p role="alert">{error}</p>}
      {actionError && (
        <p role="alert" className="field-error">
          {actionError}
        </p>
      )}
      <div className="agents-layout">
        <nav aria-label="Agents" className="agent-list">
          <ul data-testid="agent-list">
            {(files ?? []).map((f) => (
              <li key={f.path}>
                <button
                  type="button"
                  className="nav-item"
                  aria-current={current?.path === f.path ? "true" : undefined}
                  data-testid={`agent-${f.name ?? f.file_name}`}
                  onClick={() => select(f.path)}
                >
                  {f.display_name ?? f.name ?? f.file_name}
                  {!f.enabled && <span className="badge">disabled</span>}
                </button>
              </li>
            ))}
          </ul>
          <button
            type="button"
            onClick={() => confirmLeave(() => setOpened(opening(null, NEW_AGENT)))}
            data-testid="new-agent"
          >
            New agent
          </button>
        </nav>
        <div className="agent-detail">
          {opened ? (
            <AgentEditor
              key={opened.key}
              opened={opened}
              onClose={() => confirmLeave(() => setOpened(null))}
              onSaved={(path) => {
                setSelected(path);
                reload();
              }}
            />
          ) : current ? (
            <AgentDetail
              file={current}
              onEdit={() => edit(current.path)}
              onPickTools={() => edit(current.path, true)}
              onToggle={() =>
                void act(async () => {
                  const file = await call(
                    commands.setConfigFileEnabled("agent", current.path, !current.enabled),
                  );
                  setSelected(file.path);
                })
              }
              onDelete={() => act(() => call(commands.deleteConfigFile("agent", current.path)))}
            />
          ) : (
            files && <p className="muted">No agents yet.</p>
          )}
        </div>
      </div>
    </section>
  );
}

function AgentDetail(props: {
  file: FileEntry;
  onEdit: () => void;
  onPickTools: () => void;
  onToggle: () => void;
  onDelete: () => Promise<void>;
}) {
  const [text, setText] = useState<string | null>(null);
  const [check, setCheck] = useState<AgentCheck | null>(null);
  const statusChanges = useStatusChanges();
  const { path } = props.file;
  useEffect(() => {
    let alive = true;
    const load = () =>
      void call(commands.readConfigFile("agent", path))
        .then(async (file) => {
          if (!alive) return;
          setText(file.text);
          const check = await call(commands.checkAgentDraft(path, file.text));
          if (alive) setCheck(check);
        })
        // A file that vanished shows as gone on the next listing; nothing to say here.
        .catch(() => {});
    load();
    const off = statusChanges.subscribe(load);
    return () => {
      alive = false;
      off();
    };
  }, [path, statusChanges]);
  const agent = check?.agent ?? null;
  const problems = check?.errors ?? [];
  const id = agent?.name || props.file.name || props.file.file_name;
  const name = agent ? (agent.display_name ?? agent.name) : (props.file.display_name ?? id);
  return (
    <article data-testid="agent-detail">
      <header className="editor-header">
        <h2>{name}</h2>
        {name !== id && (
          <p className="muted small">
            id <code data-testid="agent-id">{id}</code>
          </p>
        )}
        <ShowFile path={path} />
        <div className="row-actions">
          <button type="button" className="primary" onClick={props.onEdit} data-testid="edit-agent">
            Edit
          </button>
          <button type="button" onClick={props.onToggle}>
            {props.file.enabled ? "Disable" : "Enable"}
          </button>
          <ConfirmButton
            label={`Delete ${name}`}
            question={`Delete ${path}? This cannot be undone.`}
            confirmLabel="Delete"
            onConfirm={props.onDelete}
          >
            Delete
          </ConfirmButton>
        </div>
      </header>
      {problems.length > 0 && (
        <ProblemList errors={problems} checking={false} onGoTo={() => props.onEdit()} />
      )}
      {agent ? (
        <AgentFields agent={agent} onPickTools={props.onPickTools} />
      ) : (
        text !== null && <p className="muted">This file does not parse; edit it to fix it.</p>
      )}
    </article>
  );
}

function AgentFields({ agent, onPickTools }: { agent: AgentView; onPickTools?: () => void }) {
  return (
    <div className="agent-fields">
      <p>{agent.description || <span className="muted">No description.</span>}</p>
      <dl className="facts">
        <dt>Model profile</dt>
        <dd>{agent.model ? <code>{agent.model}</code> : "default (or the first profile)"}</dd>
        <dt>Reachable as a sub-agent</dt>
        <dd>{agent.internal ? "no (internal)" : "yes"}</dd>
        <dt>Tool rounds per run</dt>
        <dd>{agent.max_tool_rounds}</dd>
        <dt>Skills</dt>
        <dd data-testid="agent-skills">
          {agent.all_skills
            ? "every skill that is on"
            : agent.skills.length > 0
              ? agent.skills.join(", ")
              : "none"}
        </dd>
      </dl>
      <div className="agent-tools-head">
        <h3>Tools</h3>
        {onPickTools && (
          <button type="button" onClick={onPickTools} data-testid="agent-pick-tools">
            Choose tools…
          </button>
        )}
      </div>
      {agent.tools.length === 0 ? (
        <p className="muted">No tools: it only writes answers.</p>
      ) : (
        <table className="param-table" data-testid="agent-tools">
          <thead>
            <tr>
              <th>Tool</th>
              <th>Permission</th>
            </tr>
          </thead>
          <tbody>
            {agent.tools.map(([tool, permission]) => (
              <tr key={tool}>
                <td>
                  <code>{tool}</code>
                </td>
                <td>{permission}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>Role prompt</h3>
      <Markdown text={agent.role_prompt} className="role-prompt" />
    </div>
  );
}

/** Raw Markdown on the left, the fields as they will load on the right, checked live by the
 * backend (loader errors, unknown tools, unknown model profile). Ctrl/Cmd+S saves. */
function AgentEditor(props: {
  opened: Opened;
  onClose: () => void;
  onSaved: (path: string) => void;
}) {
  const file = useFileEditor("agent", props.opened);
  const [check, setCheck] = useState<AgentCheck | null>(null);
  const [picking, setPicking] = useState(props.opened.pick);
  const { tools, error: toolsError } = useTools();
  const problems = check?.errors ?? null;
  const agent = check?.agent ?? null;
  const raw = useRef<HTMLTextAreaElement>(null);
  // The agent's name as last loaded: an existing file goes by its file name until the first
  // check answers, and keeps its name while a draft does not load.
  const [known, setKnown] = useState<string | null>(() =>
    props.opened.path
      ? (props.opened.path.split(/[\\/]/).pop()?.replace(/\.md$/, "") ?? null)
      : null,
  );
  if (agent?.name && agent.name !== known) setKnown(agent.name);
  const title = agent?.name || known || "New agent";
  useLeaveGuard(file.dirty, `The agent “${title}”`);
  useEffect(() => {
    let alive = true;
    const timer = window.setTimeout(() => {
      void call(commands.checkAgentDraft(file.path, file.text)).then(
        (check) => alive && setCheck(check),
        (e: unknown) =>
          alive &&
          setCheck({
            errors: [{ file: file.path ?? "", line: null, field: null, message: errorMessage(e) }],
            agent: null,
          }),
      );
    }, 250);
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [file.path, file.text]);
  const save = async () => {
    const saved = await file.save();
    if (saved) props.onSaved(saved.path);
  };
  const goToLine = (line: number | null) => selectLine(raw.current, line);
  return (
    <FileEditorFrame
      kind="agent"
      title={title}
      file={file}
      canSave={(problems ?? []).length === 0}
      onSave={() => void save()}
      onClose={props.onClose}
      actions={
        <button
          type="button"
          aria-haspopup="dialog"
          onClick={() => setPicking(true)}
          data-testid="pick-tools"
        >
          Choose tools…
        </button>
      }
    >
      <ToolPicker
        open={picking}
        onClose={() => setPicking(false)}
        text={file.text}
        onChange={file.setText}
        tools={tools}
        toolsError={toolsError}
        agentName={agent?.display_name ?? title}
      />
      <div className="editor-columns">
        <textarea
          ref={raw}
          className="raw-editor"
          aria-label="Agent file (Markdown with YAML frontmatter)"
          data-testid="agent-raw"
          spellCheck={false}
          value={file.text}
          onChange={(e) => file.setText(e.target.value)}
        />
        <aside className="editor-side">
          <ProblemList errors={problems ?? []} checking={problems === null} onGoTo={goToLine} />
          {agent && <AgentFields agent={agent} />}
        </aside>
      </div>
    </FileEditorFrame>
  );
}
