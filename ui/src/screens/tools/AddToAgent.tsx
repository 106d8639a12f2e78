import { useEffect, useId, useRef, useState, type RefObject } from "react";
import { commands, type ConfigFile, type FileEntry, type Permission } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { Modal } from "../../components/Modal";
import { PERMISSIONS, readAgentTools, setAgentTools } from "../agents/agentTools";

/** A tool to offer: its name and default permission (what it is given with unless changed). */
export type Offered = { name: string; permission: Permission };

/**
 * "Add to agent…": choose an agent, and the tools (one from its row on the Tools page, or
 * those an import or a new MCP server just brought) are written into its file's `tools:` map
 * with the permission chosen for each; the rest of the file stays as written. A file that does
 * not parse is left alone, its problem shown with its line. Escape or Cancel closes.
 */
export function AddToAgent(props: {
  open: boolean;
  /** What to offer; it may grow while the dialog is open (an MCP server getting ready). */
  tools: Offered[];
  /** Shown while `tools` is empty (e.g. "the server is starting"). */
  waiting?: string | undefined;
  onClose: () => void;
  /** Written: what to tell the user. */
  onAdded: (message: string) => void;
}) {
  const agent = useRef<HTMLSelectElement>(null);
  return (
    <Modal
      open={props.open}
      initialFocus={agent}
      className="permission-dialog add-to-agent"
      aria-labelledby="add-to-agent-title"
      data-testid="add-to-agent"
      onEscape={props.onClose}
    >
      {props.open && <AddBody {...props} agentRef={agent} />}
    </Modal>
  );
}

type Choice = { give: boolean; permission: Permission };

const agentLabel = (f: FileEntry) =>
  `${f.display_name ?? f.name ?? f.file_name}${f.enabled ? "" : " (disabled)"}`;

function AddBody(props: {
  tools: Offered[];
  waiting?: string | undefined;
  onClose: () => void;
  onAdded: (message: string) => void;
  agentRef: RefObject<HTMLSelectElement | null>;
}) {
  const { tools, waiting, onClose, onAdded, agentRef } = props;
  const id = useId();
  const [agents, setAgents] = useState<FileEntry[] | null>(null);
  const [path, setPath] = useState("");
  const [file, setFile] = useState<ConfigFile | null>(null);
  const [choices, setChoices] = useState<ReadonlyMap<string, Choice>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    let alive = true;
    call(commands.listConfigFiles("agent")).then(
      (list) => {
        if (!alive) return;
        setAgents(list);
        const first = list.find((f) => f.enabled) ?? list[0];
        if (first) setPath(first.path);
      },
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, []);

  // The chosen agent's file: what it gives already, or why it cannot be changed.
  useEffect(() => {
    if (path === "") return;
    let alive = true;
    call(commands.readConfigFile("agent", path)).then(
      (f) => alive && setFile(f),
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [path]);

  const current = file ? readAgentTools(file.text) : null;
  const has = current?.ok ? current.tools : new Map<string, string>();
  const chosen = agents?.find((a) => a.path === path) ?? null;
  const name = chosen ? (chosen.display_name ?? chosen.name ?? chosen.file_name) : "";
  const choice = (t: Offered): Choice =>
    choices.get(t.name) ?? {
      give: true,
      permission: PERMISSIONS.includes(has.get(t.name) as Permission)
        ? (has.get(t.name) as Permission)
        : t.permission,
    };
  const choose = (tool: string, c: Choice) => setChoices((m) => new Map(m).set(tool, c));
  const picked = tools.filter((t) => choice(t).give);
  const broken =
    file && current && !current.ok
      ? `${file.file_name}${current.line === null ? "" : `, line ${current.line}`}: ${current.message}. Fix the file on the Agents page first; nothing was changed.`
      : null;

  const add = async () => {
    if (!file || picked.length === 0) return;
    const edited = setAgentTools(
      file.text,
      picked.map((t) => ({ tool: t.name, permission: choice(t).permission })),
    );
    if (!edited.ok) {
      setError(
        `${file.file_name}${edited.line === null ? "" : `, line ${edited.line}`}: ${edited.message}. Nothing was changed.`,
      );
      return;
    }
    setSaving(true);
    setError(null);
    try {
      await call(commands.saveConfigFile("agent", file.path, edited.text, file.text));
      const what = picked.length === 1 ? (picked[0]?.name ?? "") : `${picked.length} tools`;
      onAdded(`Gave ${what} to ${name}.`);
      onClose();
    } catch (e) {
      setError(errorMessage(e));
      // The file may have changed meanwhile: show what it holds now.
      call(commands.readConfigFile("agent", file.path)).then(setFile, () => {});
    } finally {
      setSaving(false);
    }
  };

  const title =
    tools.length === 1
      ? `Add ${tools[0]?.name ?? ""} to an agent`
      : `Add ${tools.length} tools to an agent`;
  return (
    <>
      <h2 id="add-to-agent-title">{tools.length === 0 ? "Add tools to an agent" : title}</h2>
      {agents !== null && agents.length === 0 ? (
        <p className="muted">No agents yet: create one on the Agents page.</p>
      ) : (
        <div className="field">
          <label htmlFor={`${id}-agent`}>Agent</label>
          <select
            ref={agentRef}
            id={`${id}-agent`}
            data-testid="add-to-agent-agent"
            value={path}
            onChange={(e) => {
              setChoices(new Map());
              setFile(null);
              setError(null);
              setPath(e.target.value);
            }}
          >
            {(agents ?? []).map((a) => (
              <option key={a.path} value={a.path}>
                {agentLabel(a)}
              </option>
            ))}
          </select>
        </div>
      )}
      {tools.length === 0 && waiting && (
        <p className="muted" role="status">
          {waiting}
        </p>
      )}
      {tools.length > 0 && (
        <ul className="add-to-agent-tools" aria-label="Tools to give">
          {tools.map((t) => {
            const c = choice(t);
            const box = `${id}-give-${t.name}`;
            const already = has.get(t.name);
            return (
              <li key={t.name} className="tool-picker-row" data-testid={`add-tool-${t.name}`}>
                <input
                  id={box}
                  type="checkbox"
                  checked={c.give}
                  onChange={(e) => choose(t.name, { ...c, give: e.target.checked })}
                />
                <div className="tool-picker-text">
                  <label htmlFor={box} className="tool-name">
                    {t.name}
                  </label>
                  {already !== undefined && (
                    <div className="muted small">
                      {name} has it already ({already}): adding sets the permission.
                    </div>
                  )}
                </div>
                <select
                  aria-label={`Permission for ${t.name}`}
                  data-testid={`add-permission-${t.name}`}
                  value={c.permission}
                  disabled={!c.give}
                  onChange={(e) =>
                    choose(t.name, { ...c, permission: e.target.value as Permission })
                  }
                >
                  {PERMISSIONS.map((p) => (
                    <option key={p} value={p}>
                      {p}
                    </option>
                  ))}
                </select>
              </li>
            );
          })}
        </ul>
      )}
      <p className="muted small">
        <strong>auto</strong> runs a tool without asking; <strong>confirm</strong> asks you before
        every call.
      </p>
      {(broken ?? error) && (
        <p role="alert" className="field-error" data-testid="add-to-agent-error">
          {broken ?? error}
        </p>
      )}
      <div className="dialog-actions">
        <button
          type="button"
          className="primary"
          data-testid="add-to-agent-confirm"
          disabled={!file || broken !== null || picked.length === 0 || saving}
          onClick={() => void add()}
        >
          {saving ? "Adding…" : name ? `Add to ${name}` : "Add"}
        </button>
        <button type="button" onClick={onClose} data-testid="add-to-agent-cancel">
          Cancel
        </button>
      </div>
    </>
  );
}
