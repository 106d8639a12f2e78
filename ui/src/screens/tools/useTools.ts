import { useCallback, useEffect, useState } from "react";
import { commands, type ToolInfo } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { useEngineEvents, useStatusChanges } from "../../ipc/useEngineEvents";

/** Every tool from the backend, refreshed when the config folder reloads or an MCP server's
 * status changes (its tools join or leave), or when `reload` is called. */
export function useTools() {
  const [tools, setTools] = useState<ToolInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const statusChanges = useStatusChanges();
  const [changes, setChanges] = useState(0);
  useEngineEvents((event) => {
    if (event.type === "mcp_server_status") setChanges((n) => n + 1);
  });
  const reload = useCallback(() => setChanges((n) => n + 1), []);
  useEffect(() => {
    let alive = true;
    const load = () =>
      void call(commands.listTools()).then(
        (tools) => {
          if (!alive) return;
          setTools(tools);
          setError(null);
        },
        (e: unknown) => alive && setError(errorMessage(e)),
      );
    load();
    const off = statusChanges.subscribe(load);
    return () => {
      alive = false;
      off();
    };
  }, [statusChanges, changes]);
  return { tools, error, reload };
}
