import { useEffect, useState } from "react";
import { commands, events, type ToolInfo } from "../../bindings";

/** Every tool from the backend, refreshed when the config folder reloads. */
export function useTools() {
  const [tools, setTools] = useState<ToolInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let alive = true;
    const load = () =>
      void commands.listTools().then((res) => {
        if (!alive) return;
        if (res.status === "ok") {
          setTools(res.data);
          setError(null);
        } else setError(res.error.message);
      });
    load();
    const off = events.statusChanged.listen(load);
    return () => {
      alive = false;
      void off.then((unlisten) => unlisten());
    };
  }, []);
  return { tools, error };
}
