import { useId, useState } from "react";
import { commands } from "../../../bindings";
import { call, errorMessage } from "../../../ipc/call";
import { useLeaveGuard } from "../../../shell/leaveGuard";

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
 * under another name renames it. Ctrl/Cmd+S saves.
 */
export function McpServerEditor(props: {
  /** The server being edited, or null for new ones. */
  name: string | null;
  text: string;
  /** Saved: back to the list. */
  onClose: () => void;
  /** Close without saving (asks first when the text changed). */
  onCancel: () => void;
}) {
  const [text, setText] = useState(props.text);
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
      await call(commands.mcpSaveServers(text, props.name));
      props.onClose();
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
        value={text}
        aria-describedby={error ? `${id}-hint ${id}-error` : `${id}-hint`}
        aria-invalid={error ? true : undefined}
        data-testid="mcp-json"
        onChange={(e) => setText(e.target.value)}
      />
      {error && (
        <p role="alert" className="field-error" id={`${id}-error`} data-testid="mcp-save-error">
          {error}
        </p>
      )}
    </section>
  );
}
