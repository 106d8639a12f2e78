import { useCallback, useEffect, useState } from "react";
import {
  commands,
  type CheckResult,
  type InstalledChecks,
  type ModelCheckProgress,
} from "../../bindings";
import { call, errorMessage } from "../../ipc/call";
import { useModelCheckEvents } from "../../ipc/useEngineEvents";

/** How a check asks: `auto` (the best mode known, else the family's own form) or a mode. */
export type CheckHow = "auto" | "text_guided" | "text" | "native_guided" | "native";

/** The `models_check_start` arguments of each way to ask. */
export const CHECK_HOW: Record<CheckHow, { mode: string; guided: boolean | null }> = {
  auto: { mode: "auto", guided: null },
  text_guided: { mode: "text", guided: true },
  text: { mode: "text", guided: false },
  native_guided: { mode: "native", guided: true },
  native: { mode: "native", guided: false },
};

/** An installed model's tool-use check as the row shows it. */
export interface ModelCheckState {
  /** Its stored checks (newest first) and the best, as the backend last said. */
  stored: InstalledChecks | null;
  /** The newest report of the check running or just ended in this window. */
  progress: ModelCheckProgress | null;
  /** Why starting or running it failed. */
  error: string | null;
}

/**
 * The tool-use checks of the installed models `names` on the Models screen: their stored
 * results (read again when the list changes and when a check ends), the running check's
 * progress from pushed `model_check` events, and start / cancel. One check runs at a time (the
 * backend refuses a second).
 */
export function useModelChecks(names: string[]) {
  const [stored, setStored] = useState<Record<string, InstalledChecks>>({});
  const [itemCount, setItemCount] = useState<number | null>(null);
  const [progress, setProgress] = useState<Record<string, ModelCheckProgress>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [loadError, setLoadError] = useState<string | null>(null);
  const key = names.join("\n");

  const reload = useCallback(async () => {
    if (key === "") return;
    try {
      const view = await call(commands.modelsChecks());
      setItemCount(view.item_count);
      setStored(Object.fromEntries(view.models.map((m) => [m.model, m])));
      setProgress((all) => {
        const next = { ...all };
        for (const m of view.models) if (m.running) next[m.model] = m.running;
        return next;
      });
      setLoadError(null);
    } catch (e) {
      setLoadError(errorMessage(e));
    }
  }, [key]);

  useEffect(() => {
    void reload();
  }, [reload]);

  useModelCheckEvents((p) => {
    setProgress((all) => ({ ...all, [p.model]: p }));
    if (p.phase === "done") void reload();
  });

  const start = useCallback(
    async (model: string, how: CheckHow): Promise<CheckResult | null> => {
      setErrors((all) => Object.fromEntries(Object.entries(all).filter(([m]) => m !== model)));
      const { mode, guided } = CHECK_HOW[how];
      try {
        const result = await call(commands.modelsCheckStart(model, mode, guided));
        // The end's own event may come after the answer (events are polled): the answer ends
        // the check in the row already.
        const phase = result ? "done" : "cancelled";
        setProgress((all) => {
          const last = all[model];
          return last ? { ...all, [model]: { ...last, phase, eta_secs: 0 } } : all;
        });
        await reload();
        return result;
      } catch (e) {
        setErrors((all) => ({ ...all, [model]: errorMessage(e) }));
        return null;
      }
    },
    [reload],
  );

  const cancel = useCallback(async (model: string) => {
    try {
      await call(commands.modelsCheckCancel(model));
    } catch (e) {
      setErrors((all) => ({ ...all, [model]: errorMessage(e) }));
    }
  }, []);

  const stateOf = (model: string): ModelCheckState => ({
    stored: stored[model] ?? null,
    progress: progress[model] ?? null,
    error: errors[model] ?? null,
  });

  const running = Object.values(progress).some(
    (p) => p.phase === "starting" || p.phase === "asking",
  );

  return { itemCount, loadError, stateOf, running, start, cancel };
}
