import { useCallback, useEffect, useState } from "react";
import { commands, type Status } from "../bindings";
import { IpcError, call } from "./call";
import { useStatusChanged } from "./useEngineEvents";

export interface StatusState {
  status: Status | null;
  error: IpcError | null;
  loading: boolean;
  reload: () => Promise<void>;
}

/** The backend's status: fetched once, refreshed by `status-changed` events and by `reload`. */
export function useStatus(): StatusState {
  const [status, setStatus] = useState<Status | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  const [loading, setLoading] = useState(true);

  useEffect(() => {
    let alive = true;
    call(commands.getStatus())
      .then((status) => alive && setStatus(status))
      .catch((e: unknown) => alive && setError(unexpected(e)))
      .finally(() => alive && setLoading(false));
    return () => {
      alive = false;
    };
  }, []);
  useStatusChanged((event) => {
    setStatus(event.status);
    setError(null);
  });

  const reload = useCallback(async () => {
    setLoading(true);
    try {
      setStatus(await call(commands.reloadConfig()));
      setError(null);
    } catch (e) {
      setError(unexpected(e));
    } finally {
      setLoading(false);
    }
  }, []);

  return { status, error, loading, reload };
}

function unexpected(e: unknown): IpcError {
  return e instanceof IpcError ? e : new IpcError("transport", String(e));
}
