import { useCallback, useEffect, useState } from "react";
import { commands, type McpServerView, type ServerStatus } from "../../../bindings";
import { call, errorMessage } from "../../../ipc/call";
import { useEngineEvents, useStatusChanges } from "../../../ipc/useEngineEvents";

/** One status change of a server, as the engine announced it. */
export type StatusChange = { at: Date; status: ServerStatus };

/** How many status changes each server keeps. */
export const HISTORY = 8;

/**
 * The configured MCP servers with their status, reloaded when a server's status changes (the
 * engine's event) and when the config folder reloads (e.g. `mcp.json` edited by hand). Also
 * each server's recent status changes while the page is open: a crashed server is restarted
 * within a second or two, and the failure would otherwise go unseen.
 */
export function useMcpServers() {
  const [servers, setServers] = useState<McpServerView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [history, setHistory] = useState<Record<string, StatusChange[]>>({});
  const statusChanges = useStatusChanges();
  const load = useCallback(
    () =>
      call(commands.mcpServers()).then(
        (list) => {
          setServers(list);
          setError(null);
        },
        (e: unknown) => setError(errorMessage(e)),
      ),
    [],
  );
  useEffect(() => {
    void load();
    return statusChanges.subscribe(() => void load());
  }, [load, statusChanges]);
  useEngineEvents((event) => {
    if (event.type !== "mcp_server_status") return;
    const change = { at: new Date(), status: event.status };
    setHistory((h) => ({
      ...h,
      [event.server]: [change, ...(h[event.server] ?? [])].slice(0, HISTORY),
    }));
    void load();
  });
  return { servers, error, history, reload: load };
}
