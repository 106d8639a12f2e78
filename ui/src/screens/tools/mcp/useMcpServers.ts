import { useCallback, useEffect, useState } from "react";
import { commands, type McpServerView } from "../../../bindings";
import { call, errorMessage } from "../../../ipc/call";
import { useEngineEvents, useStatusChanges } from "../../../ipc/useEngineEvents";
import { useMcpStatusHistory } from "./statusHistory";

export { HISTORY, type StatusChange } from "./statusHistory";

/**
 * The configured MCP servers with their status, reloaded when a server's status changes (the
 * engine's event) and when the config folder reloads (e.g. `mcp.json` edited by hand). Also
 * each server's recent status changes, kept above the screen (see `McpStatusHistoryProvider`):
 * a crashed server is restarted within a second or two, and the failure would otherwise go
 * unseen.
 */
export function useMcpServers() {
  const [servers, setServers] = useState<McpServerView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const history = useMcpStatusHistory();
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
    if (event.type === "mcp_server_status") void load();
  });
  return { servers, error, history, reload: load };
}
