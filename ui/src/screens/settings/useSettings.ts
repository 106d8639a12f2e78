import { useCallback, useEffect, useRef, useState } from "react";
import { commands, events, type SettingsView } from "../../bindings";
import { IpcError, call } from "../../ipc/call";

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
    let off: (() => void) | null = null;
    let unmounted = false;
    events.statusChanged
      .listen(() => void fetch())
      .then((unlisten) => {
        if (unmounted) unlisten();
        else off = unlisten;
      })
      .catch(() => undefined);
    return () => {
      alive.current = false;
      unmounted = true;
      off?.();
    };
  }, [fetch]);

  return { settings, error, loading, reload };
}
