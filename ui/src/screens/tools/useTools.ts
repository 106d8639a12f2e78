import { useEffect, useState } from "react";
import { commands, events, type ToolInfo } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";

/** Every tool from the backend, refreshed when the config folder reloads. */
export function useTools() {
  const [tools, setTools] = useState<ToolInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
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
    const off = events.statusChanged.listen(load);
    return () => {
      alive = false;
      void off.then((unlisten) => unlisten());
    };
  }, []);
  return { tools, error };
}
