import { useCallback, useEffect, useRef, useState } from "react";
import { events, type AppError, type Result, type SettingsView } from "../../bindings";
import { settingsIpc } from "./settingsIpc";

export interface SettingsState {
  settings: SettingsView | null;
  error: AppError | null;
  loading: boolean;
  /** Fetch again (after a change, or when the config folder was reloaded). */
  reload: () => Promise<void>;
}

/** Everything the Settings screen shows; refreshed on `status-changed` and by `reload`. */
export function useSettings(): SettingsState {
  const [settings, setSettings] = useState<SettingsView | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [loading, setLoading] = useState(true);
  const alive = useRef(true);

  const apply = useCallback((res: Result<SettingsView, AppError>) => {
    if (!alive.current) return;
    if (res.status === "ok") {
      setSettings(res.data);
      setError(null);
    } else setError(res.error);
    setLoading(false);
  }, []);

  const reload = useCallback(async () => {
    setLoading(true);
    apply(await settingsIpc.getSettings());
  }, [apply]);

  useEffect(() => {
    alive.current = true;
    void settingsIpc.getSettings().then(apply);
    let off: (() => void) | null = null;
    let unmounted = false;
    events.statusChanged
      .listen(() => void settingsIpc.getSettings().then(apply))
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
  }, [apply]);

  return { settings, error, loading, reload };
}
