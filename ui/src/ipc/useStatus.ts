import { useCallback, useEffect, useState } from "react";
import { commands, events, type AppError, type Status } from "../bindings";

export interface StatusState {
  status: Status | null;
  error: AppError | null;
  loading: boolean;
  reload: () => Promise<void>;
}

/** The backend's status: fetched once, refreshed by `status-changed` events and by `reload`. */
export function useStatus(): StatusState {
  const [status, setStatus] = useState<Status | null>(null);
  const [error, setError] = useState<AppError | null>(null);
  const [loading, setLoading] = useState(true);

  useEffect(() => {
    let alive = true;
    commands
      .getStatus()
      .then((res) => {
        if (!alive) return;
        if (res.status === "ok") setStatus(res.data);
        else setError(res.error);
      })
      .catch((e: unknown) => alive && setError(unexpected(e)))
      .finally(() => alive && setLoading(false));
    const unlisten = events.statusChanged.listen((event) => {
      setStatus(event.payload.status);
      setError(null);
    });
    return () => {
      alive = false;
      void unlisten.then((off) => off());
    };
  }, []);

  const reload = useCallback(async () => {
    setLoading(true);
    try {
      const res = await commands.reloadConfig();
      if (res.status === "ok") {
        setStatus(res.data);
        setError(null);
      } else setError(res.error);
    } catch (e) {
      setError(unexpected(e));
    } finally {
      setLoading(false);
    }
  }, []);

  return { status, error, loading, reload };
}

function unexpected(e: unknown): AppError {
  return { code: "engine_unavailable", message: `Cannot reach the backend: ${String(e)}` };
}
