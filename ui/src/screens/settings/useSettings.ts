import { useCallback, useEffect, useRef, useState } from "react";
import { commands, type SettingsView } from "../../bindings";
import { IpcError, call } from "../../ipc/call";
import { useStatusChanges } from "../../ipc/useEngineEvents";

export interface SettingsState {
  settings: SettingsView | null;
  error: IpcError | null;
  loading: boolean;
  /** Fetch again (after a change, or when the config folder was reloaded). */
  reload: () => Promise<void>;
}

/** Everything the Settings screen shows; refreshed on `status-changed` and by `reload`. */
export function useSettings(): SettingsState {
  const [settings, setSettings] = useState<SettingsView | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  const [loading, setLoading] = useState(true);
  const alive = useRef(true);
  const statusChanges = useStatusChanges();

  /** Fetch the settings, then show them or the error. */
  const fetch = useCallback(
    () =>
      call(commands.getSettings()).then(
        (view) => {
          if (!alive.current) return;
          setSettings(view);
          setError(null);
          setLoading(false);
        },
        (e: unknown) => {
          if (!alive.current) return;
          setError(e instanceof IpcError ? e : new IpcError("transport", String(e)));
          setLoading(false);
        },
      ),
    [],
  );

  const reload = useCallback(async () => {
    setLoading(true);
    await fetch();
  }, [fetch]);

  useEffect(() => {
    alive.current = true;
    void fetch();
    const off = statusChanges.subscribe(() => void fetch());
    return () => {
      alive.current = false;
      off();
    };
  }, [fetch, statusChanges]);

  return { settings, error, loading, reload };
}
