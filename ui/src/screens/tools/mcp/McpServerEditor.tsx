import { useId, useState } from "react";
import { commands } from "../../../bindings";
import { call, errorMessage } from "../../../ipc/call";
import { useLeaveGuard } from "../../../shell/leaveGuard";
import { Field } from "../../../components/Field";
import { EMPTY_FORM, serverJson, type ServerForm } from "./serverForm";

/** What a new server's box starts with: the shape other apps use, ready to be replaced. */
export const NEW_SERVER_TEXT = `{
  "mcpServers": {
    "everything": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-everything"]
    }
  }
}
`;

/**
 * Add or edit MCP servers by pasting their JSON: one server or a whole `mcpServers` block, as
 * other apps (Claude Desktop, Cursor, Jan, LM Studio) write it. The engine checks it and says
 * where it is wrong; saving writes `mcp.json` and (re)starts the servers. Editing a server
 * under another name renames it. New servers can also be filled in with a form, which writes the
 * same JSON (shown in the paste box). Ctrl/Cmd+S saves.
 */
export function McpServerEditor(props: {
  /** The server being edited, or null for new ones. */
  name: string | null;
  text: string;
  /** Saved (the names of the servers written): back to the list. */
  onClose: (saved: string[]) => void;
  /** Close without saving (asks first when the text changed). */
  onCancel: () => void;
}) {
  const [text, setText] = useState(props.text);
  const [tab, setTab] = useState<"json" | "form">("json");
  const [form, setForm] = useState<ServerForm>(EMPTY_FORM);
  const edit = (change: Partial<ServerForm>) => {
    const next = { ...form, ...change };
    setForm(next);
    setText(serverJson(next));
  };
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const dirty = text !== props.text;
  useLeaveGuard(dirty, props.name ? `the changes to ${props.name}` : "the new MCP server");
  const id = useId();

  const save = async () => {
    if (saving || text.trim() === "") return;
    setSaving(true);
    setError(null);
    try {
      const saved = await call(commands.mcpSaveServers(text, props.name));
      props.onClose(saved);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setSaving(false);
    }
  };

  return (
    <section
      className="file-editor"
      aria-label={props.name ? `Edit MCP server ${props.name}` : "Add MCP servers"}
      data-testid="mcp-editor"
      onKeyDown={(e) => {
        if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
          e.preventDefault();
          void save();
        }
      }}
    >
      <header className="editor-header">
        <h2>
          {props.name ? `MCP server ${props.name}` : "Add MCP servers"}
          {dirty && <span className="badge badge-confirm">unsaved</span>}
        </h2>
        <div className="row-actions">
          <button
            type="button"
            className="primary"
            data-testid="save-mcp"
            disabled={saving || text.trim() === ""}
            onClick={() => void save()}
            title="Save (Ctrl+S)"
          >
            {saving ? "Saving…" : "Save"}
          </button>
          <button type="button" onClick={props.onCancel} data-testid="close-mcp-editor">
            Close
          </button>
        </div>
      </header>
      {props.name === null && (
        <div className="segmented" role="tablist" aria-label="How to add">
          {(["json", "form"] as const).map((t) => (
            <button
              key={t}
              type="button"
              role="tab"
              className="segment"
              aria-selected={tab === t}
              data-testid={`mcp-tab-${t}`}
              onClick={() => setTab(t)}
            >
              {t === "json" ? "Paste JSON" : "Form"}
            </button>
          ))}
        </div>
      )}
      {tab === "form" && <ServerFormFields form={form} onChange={edit} />}
      {tab === "json" && <JsonBox id={id} text={text} error={error} onChange={setText} />}
      {error && (
        <p role="alert" className="field-error" id={`${id}-error`} data-testid="mcp-save-error">
          {error}
        </p>
      )}
    </section>
  );
}

/** The paste box, with what it takes. */
function JsonBox(props: {
  id: string;
  text: string;
  error: string | null;
  onChange: (text: string) => void;
}) {
  const { id, error } = props;
  return (
    <>
      <label htmlFor={id}>Server configuration (JSON)</label>
      <p className="field-hint" id={`${id}-hint`}>
        One server (<code>{'{"name": {"command": "npx", "args": [...]}}'}</code>, or{" "}
        <code>{'{"name": {"url": "https://..."}}'}</code>) or a whole{" "}
        <code>{'{"mcpServers": {...}}'}</code> block. Write secrets as <code>{"{{NAME}}"}</code> in{" "}
        <code>env</code> and <code>headers</code>: their values stay in the keyring (Settings →
        Secrets).
      </p>
      <textarea
        id={id}
        className="raw-editor"
        spellCheck={false}
        value={props.text}
        aria-describedby={error ? `${id}-hint ${id}-error` : `${id}-hint`}
        aria-invalid={error ? true : undefined}
        data-testid="mcp-json"
        onChange={(e) => props.onChange(e.target.value)}
      />
    </>
  );
}

/** One new server as a form: a local program or a remote URL. */
function ServerFormFields(props: { form: ServerForm; onChange: (c: Partial<ServerForm>) => void }) {
  const { form, onChange } = props;
  return (
    <div className="tool-form" data-testid="mcp-form">
      <Field label="Name" hint="Letters, digits, _ and -: its tools are called NAME.TOOL.">
        {(c) => (
          <input {...c} value={form.name} onChange={(e) => onChange({ name: e.target.value })} />
        )}
      </Field>
      <Field label="Kind">
        {(c) => (
          <select
            {...c}
            value={form.kind}
            onChange={(e) => onChange({ kind: e.target.value as ServerForm["kind"] })}
          >
            <option value="stdio">Local program (stdio)</option>
            <option value="http">Remote server (URL)</option>
          </select>
        )}
      </Field>
      {form.kind === "stdio" ? (
        <>
          <Field label="Command" hint="e.g. npx, uvx, node, or a full path.">
            {(c) => (
              <input
                {...c}
                value={form.command}
                onChange={(e) => onChange({ command: e.target.value })}
              />
            )}
          </Field>
          <Field label="Arguments" hint="One a line.">
            {(c) => (
              <textarea
                {...c}
                rows={3}
                value={form.args}
                onChange={(e) => onChange({ args: e.target.value })}
              />
            )}
          </Field>
          <Field label="Environment" hint="KEY=value, one a line; write secrets as {{NAME}}.">
            {(c) => (
              <textarea
                {...c}
                rows={2}
                value={form.env}
                onChange={(e) => onChange({ env: e.target.value })}
              />
            )}
          </Field>
        </>
      ) : (
        <>
          <Field label="URL" hint="Its Streamable HTTP endpoint.">
            {(c) => (
              <input {...c} value={form.url} onChange={(e) => onChange({ url: e.target.value })} />
            )}
          </Field>
          <Field label="Headers" hint="Name: value, one a line; write secrets as {{NAME}}.">
            {(c) => (
              <textarea
                {...c}
                rows={2}
                value={form.headers}
                onChange={(e) => onChange({ headers: e.target.value })}
              />
            )}
          </Field>
        </>
      )}
    </div>
  );
}
