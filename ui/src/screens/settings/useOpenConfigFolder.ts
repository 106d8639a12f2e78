import { useCallback, useState } from "react";
import { commands } from "../../bindings";
import { attempt } from "../../ipc/call";

/** "Open folder": asks the backend to show the config folder in the file manager. */
export function useOpenConfigFolder() {
  const [opening, setOpening] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const open = useCallback(async () => {
    setOpening(true);
    setError(null);
    const failed = await attempt(commands.openConfigFolder());
    setOpening(false);
    if (failed) setError(failed.message);
  }, []);
  return { opening, error, open };
}
