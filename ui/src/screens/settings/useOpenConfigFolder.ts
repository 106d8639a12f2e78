import { useCallback, useState } from "react";
import { settingsIpc } from "./settingsIpc";

/** "Open folder": asks the backend to show the config folder in the file manager. */
export function useOpenConfigFolder() {
  const [opening, setOpening] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const open = useCallback(async () => {
    setOpening(true);
    setError(null);
    const res = await settingsIpc.openConfigFolder();
    setOpening(false);
    if (res.status === "error") setError(res.error.message);
  }, []);
  return { opening, error, open };
}
