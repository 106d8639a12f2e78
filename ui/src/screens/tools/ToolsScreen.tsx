import { useCallback, useEffect, useState } from "react";
import {
  commands,
  type AppError,
  type FileEntry,
  type ImportedTool,
  type Permission,
  type Result,
  type RuleView,
  type ToolInfo,
} from "../../bindings";
import { attempt, call, errorMessage } from "../../ipc/call";
import { ConfirmButton } from "../../components/ConfirmButton";
import type { StatusState } from "../../ipc/useStatus";
import { useConfirmLeave } from "../../shell/leaveGuard";
import { ParamTable } from "./ParamTable";
import { ToolEditor } from "./ToolEditor";
import { duplicateText } from "./toolDraft";
import { useTools } from "./useTools";
import { usePermissionRules } from "../settings/usePermissionRules";
import { ruleOrigin, ruleText, rulesFor } from "../settings/permissionRules";
import { useStatusChanges } from "../../ipc/useEngineEvents";
import { McpServerEditor, NEW_SERVER_TEXT } from "./mcp/McpServerEditor";
import { McpServers } from "./mcp/McpServers";
import { useMcpServers } from "./mcp/useMcpServers";
import { failedServers } from "../../shell/StatusArea";
import { OpenApiImport } from "./OpenApiImport";
import { AddToAgent, type Offered } from "./AddToAgent";
import { SOURCE_LABEL } from "./sources";
import { useOpenApiImport } from "./useOpenApiImport";

type Opened = { path: string | null; text: string; key: number };
/** The MCP server editor: the server edited (null: new ones) and the text it starts with. */
type McpOpened = { name: string | null; text: string };

let opens = 0;
/** Every open gets its own key, so opening again (after "Discard") really starts over. */
const opening = (path: string | null, text: string): Opened => ({ path, text, key: ++opens });

/** Tool files on disk, enabled or not, refreshed on every config reload. */
function useToolFiles() {
  const [files, setFiles] = useState<FileEntry[]>([]);
  const statusChanges = useStatusChanges();
  const load = useCallback(
    () =>
      // A failed listing keeps the last one; the tool list above shows the backend's state.
      void call(commands.listConfigFiles("tool")).then(setFiles, () => {}),
    [],
  );
  useEffect(() => {
    load();
    return statusChanges.subscribe(load);
  }, [load, statusChanges]);
  return { files, reload: load };
}

/** What "Add to agent…" offers: named tools (a row, an import; `fallback`: their default
 * permission until the tool list has them), or every tool of new MCP servers. */
type AddTarget =
  { names: string[]; fallback: Partial<Record<string, Permission>> } | { servers: string[] };

/** The default permission written in a generated tool file (`confirm` when it says none). */
const filePermission = (text: string): Permission =>
  /^permission:\s*["']?auto["']?\s*(#.*)?$/m.test(text) ? "auto" : "confirm";

/** Every tool (built-in, artifact, custom) with its source, permission and users, and every
 * config file that did not load, with its location. */
export function ToolsScreen({ state }: { state: StatusState }) {
  const { status } = state;
  const { tools, error, reload: reloadTools } = useTools();
  const ruleList = usePermissionRules().view;
  const rules = ruleList ? [...ruleList.global, ...ruleList.agents.flatMap((a) => a.rules)] : [];
  const { files, reload } = useToolFiles();
  const [opened, setOpened] = useState<Opened | null>(null);
  const [mcpOpened, setMcpOpened] = useState<McpOpened | null>(null);
  const mcp = useMcpServers();
  const failed = failedServers(mcp.servers);
  const [actionError, setActionError] = useState<string | null>(null);
  const [adding, setAdding] = useState<AddTarget | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  /** New MCP servers just saved: their tools are offered to an agent. */
  const [mcpAdded, setMcpAdded] = useState<string[] | null>(null);
  const confirmLeave = useConfirmLeave();
  // Kept here, so the import panel's state survives reviewing a tool in the editor.
  const openApi = useOpenApiImport(reload);
  const names = [
    ...(tools ?? []).map((t) => t.name),
    ...files.flatMap((f) => (f.name ? [f.name] : [])),
  ];

  const open = (load: () => Promise<Opened | null>) =>
    confirmLeave(() => {
      setActionError(null);
      void load().then((o) => {
        if (o) setOpened(o);
      });
    });
  const read = async (path: string): Promise<Opened | null> => {
    try {
      const file = await call(commands.readConfigFile("tool", path));
      return opening(file.path, file.text);
    } catch (e) {
      setActionError(errorMessage(e));
      return null;
    }
  };
  const act = async (run: () => Promise<Result<unknown, AppError>>) => {
    setActionError((await attempt(run()))?.message ?? null);
    reload();
  };
  const actions: ToolActions = {
    edit: (path) => open(() => read(path)),
    duplicate: (path) =>
      open(async () => {
        const o = await read(path);
        return o ? opening(null, duplicateText(o.text, names)) : null;
      }),
    setEnabled: (path, enabled) =>
      void act(() => commands.setConfigFileEnabled("tool", path, enabled)),
    remove: (path) => act(() => commands.deleteConfigFile("tool", path)),
  };

  const openMcp = (name: string | null) =>
    confirmLeave(() => {
      setActionError(null);
      if (name === null) {
        setMcpOpened({ name, text: NEW_SERVER_TEXT });
        return;
      }
      call(commands.mcpServerConfig(name)).then(
        (text) => setMcpOpened({ name, text }),
        (e: unknown) => setActionError(errorMessage(e)),
      );
    });

  if (mcpOpened) {
    const close = () =>
      confirmLeave(() => {
        setMcpOpened(null);
        void mcp.reload();
      });
    return (
      <section className="screen tools-screen">
        <h1 id="screen-title" tabIndex={-1} className="visually-hidden">
          Tools
        </h1>
        <button type="button" className="link-button" onClick={close}>
          ← All tools
        </button>
        <McpServerEditor
          name={mcpOpened.name}
          text={mcpOpened.text}
          onClose={(saved) => {
            // New servers: offer their tools to an agent (they show once the server is ready).
            if (mcpOpened.name === null && saved.length > 0) setMcpAdded(saved);
            setMcpOpened(null);
            void mcp.reload();
          }}
          onCancel={close}
        />
      </section>
    );
  }

  if (opened) {
    return (
      <section className="screen tools-screen">
        <h1 id="screen-title" tabIndex={-1} className="visually-hidden">
          Tools
        </h1>
        <button
          type="button"
          className="link-button"
          onClick={() => confirmLeave(() => setOpened(null))}
        >
          ← All tools
        </button>
        <ToolEditor
          key={opened.key}
          opened={opened}
          onClose={() => confirmLeave(() => setOpened(null))}
        />
      </section>
    );
  }

  const disabled = files.filter((f) => !f.enabled);
  const offered: Offered[] =
    adding === null
      ? []
      : "servers" in adding
        ? (tools ?? [])
            .filter(
              (t) => t.source === "mcp" && t.server !== null && adding.servers.includes(t.server),
            )
            .map((t) => ({ name: t.name, permission: t.permission }))
        : adding.names.map((name) => ({
            name,
            permission:
              tools?.find((t) => t.name === name)?.permission ?? adding.fallback[name] ?? "confirm",
          }));
  const addImported = (imported: ImportedTool[]) =>
    setAdding({
      names: imported.map((t) => t.name),
      fallback: Object.fromEntries(imported.map((t) => [t.name, filePermission(t.text)])),
    });
  return (
    <section className="screen tools-screen">
      <h1 id="screen-title" tabIndex={-1}>
        Tools
      </h1>
      <div className="row-actions">
        <button
          type="button"
          className="primary"
          data-testid="new-tool"
          onClick={() =>
            open(async () => {
              try {
                return opening(null, await call(commands.toolTemplate()));
              } catch (e) {
                setActionError(errorMessage(e));
                return null;
              }
            })
          }
        >
          New HTTP tool
        </button>
        <button
          type="button"
          data-testid="import-openapi"
          aria-expanded={openApi.shown}
          onClick={openApi.show}
        >
          Import from OpenAPI
        </button>
      </div>
      {actionError && (
        <p role="alert" className="field-error">
          {actionError}
        </p>
      )}
      {notice && (
        <p role="status" className="muted" data-testid="tools-notice">
          {notice}
        </p>
      )}
      {mcpAdded && (
        <div className="add-offer" data-testid="mcp-add-offer">
          <p>
            Added MCP {mcpAdded.length === 1 ? "server" : "servers"} {mcpAdded.join(", ")}. Give{" "}
            {mcpAdded.length === 1 ? "its" : "their"} tools to an agent?
          </p>
          <span className="row-actions">
            <button
              type="button"
              className="primary"
              autoFocus
              data-testid="mcp-add-to-agent"
              onClick={() => setAdding({ servers: mcpAdded })}
            >
              Add to agent…
            </button>
            <button type="button" onClick={() => setMcpAdded(null)}>
              Not now
            </button>
          </span>
        </div>
      )}
      {openApi.shown && (
        <OpenApiImport
          imp={openApi}
          existing={new Set([...names, ...files.map((f) => f.file_name)])}
          onReview={(tool) => open(async () => opening(null, tool.text))}
          onAddToAgent={addImported}
        />
      )}
      <AddToAgent
        open={adding !== null}
        tools={offered}
        waiting={
          adding && "servers" in adding
            ? `${adding.servers.join(", ")} ${adding.servers.length === 1 ? "is" : "are"} starting: the tools show here once ready (see the status under MCP servers).`
            : undefined
        }
        onClose={() => setAdding(null)}
        onAdded={(message) => {
          if (adding && "servers" in adding) setMcpAdded(null);
          setNotice(message);
          reloadTools();
        }}
      />
      {status && (
        <p>
          {tools ? `${tools.length} tools` : "Tools"} and {status.agents_loaded}{" "}
          {status.agents_loaded === 1 ? "agent" : "agents"} loaded from{" "}
          <code>{status.config_dir}</code>.{" "}
          <button type="button" onClick={() => void state.reload()} disabled={state.loading}>
            Reload config folder
          </button>
        </p>
      )}
      {status && (
        <>
          <h2>Load problems</h2>
          {failed.length > 0 && (
            <ul className="error-list" data-testid="mcp-problems">
              {failed.map((s) => (
                <li key={s.name}>
                  MCP server <code>{s.name}</code> failed:{" "}
                  {s.status.state === "failed" ? s.status.reason : ""}{" "}
                  <button type="button" className="link-button" onClick={() => openMcp(s.name)}>
                    Edit server
                  </button>
                </li>
              ))}
            </ul>
          )}
          {status.config_errors.length === 0 ? (
            <p data-testid="no-config-errors">Every file in the config folder loaded.</p>
          ) : (
            <ul className="error-list" data-testid="config-errors">
              {status.config_errors.map((e) => (
                <li key={`${e.file}:${e.line ?? ""}:${e.field ?? ""}`}>
                  <code>
                    {e.file}
                    {e.line !== null ? `:${e.line}` : ""}
                  </code>
                  {e.field !== null && (
                    <>
                      {" "}
                      field <code>{e.field}</code>
                    </>
                  )}
                  : {e.message}
                  {isToolFile(e.file) && (
                    <>
                      {" "}
                      <button
                        type="button"
                        className="link-button"
                        onClick={() => actions.edit(e.file)}
                      >
                        Fix in editor
                      </button>
                    </>
                  )}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      <McpServers
        servers={mcp.servers}
        error={mcp.error}
        history={mcp.history}
        onAdd={() => openMcp(null)}
        onEdit={(name) => openMcp(name)}
        reload={() => void mcp.reload()}
      />
      <h2>All tools</h2>
      {error && <p role="alert">{error}</p>}
      {tools && (
        <ul className="tool-list" data-testid="tool-list">
          {tools.map((t) => (
            <ToolRow
              key={t.name}
              tool={t}
              actions={actions}
              rules={rules}
              onAddToAgent={() =>
                setAdding({ names: [t.name], fallback: { [t.name]: t.permission } })
              }
            />
          ))}
        </ul>
      )}
      {disabled.length > 0 && (
        <>
          <h2>Disabled tools</h2>
          <p className="muted small">Files whose name starts with “_” are not loaded.</p>
          <ul className="tool-list" data-testid="disabled-tools">
            {disabled.map((f) => (
              <li key={f.path} className="tool-row disabled-row">
                <span className="tool-name">{f.name ?? f.file_name}</span>{" "}
                <code className="muted small">{f.file_name}</code>
                <FileActions
                  path={f.path}
                  name={f.name ?? f.file_name}
                  enabled={false}
                  actions={actions}
                />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** A Markdown file directly in the config folder's tools/ folder. */
const isToolFile = (file: string) => /[\\/]tools[\\/][^\\/]+\.md$/.test(file);

type ToolActions = {
  edit: (path: string) => void;
  duplicate: (path: string) => void;
  setEnabled: (path: string, enabled: boolean) => void;
  remove: (path: string) => Promise<void>;
};

function FileActions(props: {
  path: string;
  name: string;
  enabled: boolean;
  actions: ToolActions;
}) {
  const { path, name, enabled, actions } = props;
  return (
    <span className="row-actions">
      <button type="button" onClick={() => actions.edit(path)} data-testid={`edit-${name}`}>
        Edit
      </button>
      <button
        type="button"
        onClick={() => actions.duplicate(path)}
        data-testid={`duplicate-${name}`}
      >
        Duplicate
      </button>
      <button
        type="button"
        onClick={() => actions.setEnabled(path, !enabled)}
        data-testid={`${enabled ? "disable" : "enable"}-${name}`}
      >
        {enabled ? "Disable" : "Enable"}
      </button>
      <ConfirmButton
        label={`Delete ${name}`}
        question={`Delete ${path}? This cannot be undone.`}
        confirmLabel="Delete"
        onConfirm={() => actions.remove(path)}
      >
        Delete
      </ConfirmButton>
    </span>
  );
}

/** The permission rules that cover a tool, one short line each with where it comes from. */
function ToolRules({ tool, rules }: { tool: string; rules: RuleView[] }) {
  const mine = rulesFor(tool, rules);
  if (mine.length === 0) return null;
  return (
    <ul className="tool-rules small" aria-label={`Permission rules for ${tool}`}>
      {mine.map((r, i) => (
        <li key={i}>
          <span className={`badge rule-action-${r.spec?.action ?? "none"}`}>{r.spec?.action}</span>{" "}
          <code>{ruleText(r.spec)}</code> <span className="muted">({ruleOrigin(r.origin)})</span>
        </li>
      ))}
    </ul>
  );
}

function ToolRow({
  tool,
  actions,
  rules,
  onAddToAgent,
}: {
  tool: ToolInfo;
  actions: ToolActions;
  rules: RuleView[];
  onAddToAgent: () => void;
}) {
  return (
    <li>
      <details className="tool-row" data-testid={`tool-row-${tool.name}`}>
        <summary>
          <span className="tool-name">{tool.name}</span>
          <span className="badge">{SOURCE_LABEL[tool.source] ?? tool.source}</span>
          <span className={`badge ${tool.permission === "confirm" ? "badge-confirm" : ""}`}>
            {tool.permission}
          </span>
          <span className="muted small tool-users">
            {tool.used_by.length === 0
              ? "no agent uses it"
              : `used by ${tool.used_by.map((u) => (u.permission === tool.permission ? u.agent : `${u.agent} (${u.permission})`)).join(", ")}`}
          </span>
        </summary>
        <div className="tool-row-body">
          <p className="row-actions">
            <button
              type="button"
              aria-haspopup="dialog"
              onClick={onAddToAgent}
              data-testid={`add-to-agent-${tool.name}`}
            >
              Add to agent…
            </button>
          </p>
          {tool.file && (
            <p className="muted small">
              File: <code>{tool.file}</code>{" "}
              <FileActions path={tool.file} name={tool.name} enabled actions={actions} />
            </p>
          )}
          <p className="tool-description">
            {tool.description || <span className="muted">No description.</span>}
          </p>
          <ToolRules tool={tool.name} rules={rules} />
          {tool.params.length > 0 && <ParamTable params={tool.params} />}
          <h3 className="small">What the model sees</h3>
          <pre className="code">{tool.instructions}</pre>
        </div>
      </details>
    </li>
  );
}
