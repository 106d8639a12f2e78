import { useCallback, useEffect, useState } from "react";
import { commands, type McpServerView } from "../../../bindings";
import { call, errorMessage } from "../../../ipc/call";
import { useEngineEvents, useStatusChanges } from "../../../ipc/useEngineEvents";

/**
 * The configured MCP servers with their status, reloaded when a server's status changes (the
 * engine's event) and when the config folder reloads (e.g. `mcp.json` edited by hand).
 */
export function useMcpServers() {
  const [servers, setServers] = useState<McpServerView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
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
  return { servers, error, reload: load };
}
