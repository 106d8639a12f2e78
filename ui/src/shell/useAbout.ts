import { useCallback, useEffect, useState } from "react";
import { commands, type AppInfo, type UpdateCheck } from "../bindings";
import { call, errorMessage } from "../ipc/call";

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
    call(commands.getAppInfo())
      .then((info) => {
        if (!alive) return;
        setInfo(info);
        setLoadError(null);
      })
      .catch((e: unknown) => alive && setLoadError(errorMessage(e)));
    return () => {
      alive = false;
    };
  }, [open]);

  const saveUpdateUrl = useCallback(async (url: string) => {
    setSaving(true);
    setSaveError(null);
    setSaved(false);
    try {
      const stored = await call(commands.saveUpdateUrl(url));
      setInfo((i) => (i ? { ...i, update_url: stored } : i));
      setSaved(true);
      setUpdate({ kind: "idle" });
    } catch (e) {
      setSaveError(errorMessage(e));
    } finally {
      setSaving(false);
    }
  }, []);

  const check = useCallback(async () => {
    setUpdate({ kind: "checking" });
    try {
      setUpdate({ kind: "result", check: await call(commands.checkForUpdates()) });
    } catch (e) {
      setUpdate({ kind: "error", message: errorMessage(e) });
    }
  }, []);

  const install = useCallback(async () => {
    setUpdate({ kind: "installing" });
    try {
      // On success the app restarts, so only a failure comes back.
      await call(commands.installUpdate());
    } catch (e) {
      setUpdate({ kind: "error", message: errorMessage(e) });
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
