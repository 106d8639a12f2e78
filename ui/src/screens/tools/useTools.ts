import { useEffect, useState } from "react";
import { commands, type ToolInfo } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { useStatusChanges } from "../../ipc/useEngineEvents";

/** Every tool from the backend, refreshed when the config folder reloads. */
export function useTools() {
  const [tools, setTools] = useState<ToolInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const statusChanges = useStatusChanges();
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
  }, [statusChanges]);
  return { tools, error };
}
