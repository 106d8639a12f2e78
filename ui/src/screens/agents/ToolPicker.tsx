import { useDeferredValue, useId, useRef, useState, type RefObject } from "react";
import type { Permission, ToolInfo } from "../../bindings";
import { Modal } from "../../components/Modal";
import { groupBySource, type ToolGroup } from "../tools/sources";
import { PERMISSIONS, readAgentTools, setAgentTools } from "./agentTools";

/**
 * The agent editor's tool picker: every tool by source (built-in, artifact, HTTP, each MCP
 * server), searchable, with a checkbox to give or take away each and the agent's permission for
 * the given ones. Each change edits the draft's `tools:` map in place (the rest of the file stays
 * as written); the draft is saved with the editor's Save. Escape or Done closes it.
 */
export function ToolPicker(props: {
  open: boolean;
  onClose: () => void;
  /** The agent file being edited, and where its edits go. */
  text: string;
  onChange: (text: string) => void;
  /** Every loaded tool (null while loading). */
  tools: ToolInfo[] | null;
  toolsError: string | null;
  agentName: string;
}) {
  const search = useRef<HTMLInputElement>(null);
  return (
    <Modal
      open={props.open}
      initialFocus={search}
      className="permission-dialog tool-picker"
      aria-labelledby="tool-picker-title"
      data-testid="tool-picker"
      onEscape={props.onClose}
    >
      {/* Mounted while open, so each opening starts with an empty search. */}
      {props.open && <PickerBody {...props} search={search} />}
    </Modal>
  );
}

function PickerBody(props: {
  onClose: () => void;
  text: string;
  onChange: (text: string) => void;
  tools: ToolInfo[] | null;
  toolsError: string | null;
  agentName: string;
  search: RefObject<HTMLInputElement | null>;
}) {
  const { text, tools, toolsError, agentName, onChange, onClose, search } = props;
  const id = useId();
  const [query, setQuery] = useState("");
  const deferred = useDeferredValue(query);
  const [editError, setEditError] = useState<string | null>(null);
  const given = readAgentTools(text);
  const givenTools = given.ok ? given.tools : new Map<string, string>();

  // Tools the file gives that are not loaded (an MCP server still starting, a wrong name):
  // listed too, so they can be taken away.
  const known = new Set((tools ?? []).map((t) => t.name));
  const missing: ToolInfo[] = [...givenTools.keys()]
    .filter((name) => tools !== null && !known.has(name))
    .map((name) => ({
      name,
      description:
        "Not among the loaded tools: its MCP server may be starting, or the name is wrong.",
      source: "not loaded",
      file: null,
      server: null,
      permission: "confirm",
      params: [],
      used_by: [],
      instructions: "",
    }));
  const q = deferred.trim().toLowerCase();
  const match = (t: ToolInfo, group: ToolGroup) =>
    q === "" || `${t.name}\n${t.description}\n${group.label}`.toLowerCase().includes(q);
  const groups = groupBySource([...(tools ?? []), ...missing])
    .map((g) => ({ ...g, tools: g.tools.filter((t) => match(t, g)) }))
    .filter((g) => g.tools.length > 0);

  const change = (tool: string, permission: Permission | null) => {
    const edited = setAgentTools(text, [{ tool, permission }]);
    if (edited.ok) {
      setEditError(null);
      onChange(edited.text);
    } else {
      setEditError(located(edited.line, edited.message));
    }
  };
  const problem = given.ok ? editError : located(given.line, given.message);

  return (
    <>
      <h2 id="tool-picker-title">Tools of {agentName}</h2>
      <p className="muted small">
        Tick a tool to give it to the agent. <strong>auto</strong> runs it without asking;{" "}
        <strong>confirm</strong> asks you before every call. The file changes as you tick; Save in
        the editor makes it live.
      </p>
      <div className="tool-picker-search">
        <label htmlFor={`${id}-search`}>Search tools</label>
        <input
          ref={search}
          id={`${id}-search`}
          type="search"
          data-testid="tool-picker-search"
          placeholder="name, description or source"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <span className="muted small" aria-live="polite">
          {givenTools.size} given
        </span>
      </div>
      {problem && (
        <p role="alert" className="field-error" data-testid="tool-picker-error">
          {problem}
        </p>
      )}
      {toolsError && (
        <p role="alert" className="field-error">
          {toolsError}
        </p>
      )}
      {tools === null && !toolsError && <p className="muted">Loading tools…</p>}
      {tools !== null && groups.length === 0 && (
        <p className="muted">{deferred.trim() ? "No tool matches the search." : "No tools."}</p>
      )}
      <div className="tool-picker-list" data-testid="tool-picker-list">
        {groups.map((g) => (
          <fieldset
            key={g.key}
            className="tool-picker-group"
            data-testid={`tool-picker-group-${g.key}`}
          >
            <legend>
              {g.label}{" "}
              <span className="muted small">
                ({g.tools.filter((t) => givenTools.has(t.name)).length} of {g.tools.length} given)
              </span>
            </legend>
            <ul>
              {g.tools.map((t) => (
                <PickerRow
                  key={t.name}
                  tool={t}
                  idPrefix={id}
                  permission={givenTools.get(t.name) ?? null}
                  disabled={!given.ok}
                  onChange={(permission) => change(t.name, permission)}
                />
              ))}
            </ul>
          </fieldset>
        ))}
      </div>
      <div className="dialog-actions">
        <button type="button" className="primary" onClick={onClose} data-testid="tool-picker-done">
          Done
        </button>
      </div>
    </>
  );
}

const located = (line: number | null, message: string) =>
  `The agent file cannot be changed here${line === null ? "" : ` (line ${line})`}: ${message}. Fix it in the Markdown; nothing was changed.`;

function PickerRow(props: {
  tool: ToolInfo;
  idPrefix: string;
  /** The agent's permission for it as written, or null when not given. */
  permission: string | null;
  disabled: boolean;
  onChange: (permission: Permission | null) => void;
}) {
  const { tool: t, permission } = props;
  const box = `${props.idPrefix}-give-${t.name}`;
  const given = permission !== null;
  const summary = t.description.split("\n")[0] ?? "";
  return (
    <li className="tool-picker-row" data-testid={`pick-${t.name}`}>
      <input
        id={box}
        type="checkbox"
        checked={given}
        disabled={props.disabled}
        aria-describedby={summary ? `${box}-about` : undefined}
        onChange={(e) => props.onChange(e.target.checked ? t.permission : null)}
      />
      <div className="tool-picker-text">
        <label htmlFor={box} className="tool-name">
          {t.name}
        </label>
        {summary && (
          <div id={`${box}-about`} className="muted small">
            {summary}
          </div>
        )}
      </div>
      {given ? (
        <select
          aria-label={`Permission for ${t.name}`}
          data-testid={`pick-permission-${t.name}`}
          value={permission}
          disabled={props.disabled}
          onChange={(e) => props.onChange(e.target.value as Permission)}
        >
          {!PERMISSIONS.includes(permission as Permission) && (
            <option value={permission}>{permission || "(none)"}</option>
          )}
          {PERMISSIONS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      ) : (
        <span
          className={`badge ${t.permission === "confirm" ? "badge-confirm" : ""}`}
          title="The tool's default permission, used when it is given"
        >
          {t.permission}
        </span>
      )}
    </li>
  );
}
