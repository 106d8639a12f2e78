import { useCallback, useEffect, useState } from "react";
import { commands, type AppError, type AppInfo, type UpdateCheck } from "../bindings";

/** What "Check for updates" has found so far. */
export type UpdateState =
  | { kind: "idle" }
  | { kind: "checking" }
  | { kind: "result"; check: UpdateCheck }
  | { kind: "installing" }
  | { kind: "error"; message: string };

export interface AboutState {
  info: AppInfo | null;
  loadError: string | null;
  /** Saving the feed URL. */
  saving: boolean;
  saveError: string | null;
  saved: boolean;
  update: UpdateState;
  saveUpdateUrl: (url: string) => Promise<void>;
  check: () => Promise<void>;
  install: () => Promise<void>;
  clearSaveState: () => void;
}

function message(e: AppError | unknown): string {
  if (e && typeof e === "object" && "message" in e) return String((e as AppError).message);
  return `Cannot reach the backend: ${String(e)}`;
}

/** The About dialog's data and actions, loaded while `open`. */
export function useAbout(open: boolean): AboutState {
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [update, setUpdate] = useState<UpdateState>({ kind: "idle" });

  useEffect(() => {
    if (!open) return;
    let alive = true;
    commands
      .getAppInfo()
      .then((res) => {
        if (!alive) return;
        if (res.status === "ok") {
          setInfo(res.data);
          setLoadError(null);
        } else setLoadError(res.error.message);
      })
      .catch((e: unknown) => alive && setLoadError(message(e)));
    return () => {
      alive = false;
    };
  }, [open]);

  const saveUpdateUrl = useCallback(async (url: string) => {
    setSaving(true);
    setSaveError(null);
    setSaved(false);
    try {
      const res = await commands.saveUpdateUrl(url);
      if (res.status === "ok") {
        setInfo((i) => (i ? { ...i, update_url: res.data } : i));
        setSaved(true);
        setUpdate({ kind: "idle" });
      } else setSaveError(res.error.message);
    } catch (e) {
      setSaveError(message(e));
    } finally {
      setSaving(false);
    }
  }, []);

  const check = useCallback(async () => {
    setUpdate({ kind: "checking" });
    try {
      const res = await commands.checkForUpdates();
      setUpdate(
        res.status === "ok"
          ? { kind: "result", check: res.data }
          : { kind: "error", message: res.error.message },
      );
    } catch (e) {
      setUpdate({ kind: "error", message: message(e) });
    }
  }, []);

  const install = useCallback(async () => {
    setUpdate({ kind: "installing" });
    try {
      // On success the app restarts, so only a failure comes back.
      const res = await commands.installUpdate();
      if (res.status === "error") setUpdate({ kind: "error", message: res.error.message });
    } catch (e) {
      setUpdate({ kind: "error", message: message(e) });
    }
  }, []);

  const clearSaveState = useCallback(() => {
    setSaveError(null);
    setSaved(false);
  }, []);

  return {
    info,
    loadError,
    saving,
    saveError,
    saved,
    update,
    saveUpdateUrl,
    check,
    install,
    clearSaveState,
  };
}
