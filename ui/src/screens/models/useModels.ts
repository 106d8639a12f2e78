import { useCallback, useEffect, useState } from "react";
import {
  commands,
  type CatalogView,
  type InstalledModel,
  type ModelsView,
  type PullProgress,
} from "../../bindings";
import { call, errorMessage, IpcError } from "../../ipc/call";
import { useModelDownloads } from "../../ipc/useEngineEvents";

/** A download this window started or saw, with its newest report or how it ended. */
export interface Download {
  file: string;
  /** What was asked for (a catalogue id or `owner/name/file.gguf`): what Resume pulls. */
  target: string;
  progress: PullProgress | null;
  /** Running in the backend now. */
  running: boolean;
  /** Why it stopped, when it failed (a pause is not a failure). */
  error: string | null;
}

function without(all: Record<string, Download>, files: string[]): Record<string, Download> {
  return Object.fromEntries(Object.entries(all).filter(([file]) => !files.includes(file)));
}

/** The file name a pull target lands as (the last part of its path). */
export function fileOfTarget(target: string, catalog: CatalogView | null): string {
  const entry = catalog?.items.find((i) => i.id.toLowerCase() === target.toLowerCase());
  const file = entry ? entry.file : (target.split(":")[1] ?? target);
  return file.split("/").pop() ?? file;
}

/**
 * The model library as the Models screen and the first-run setup use it: the installed models
 * and unfinished downloads, the catalogue, and the downloads running (their progress arrives as
 * pushed events). `pull` resolves with the installed model, or null when paused or failed (the
 * download's `error` then says why).
 */
export function useModels() {
  const [view, setView] = useState<ModelsView | null>(null);
  const [catalog, setCatalog] = useState<CatalogView | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [downloads, setDownloads] = useState<Record<string, Download>>({});

  const reload = useCallback(async () => {
    try {
      const [v, c] = await Promise.all([
        call(commands.modelsList()),
        call(commands.modelsCatalog()),
      ]);
      setView(v);
      setCatalog(c);
      setLoadError(null);
    } catch (e) {
      setLoadError(errorMessage(e));
    }
  }, []);

  useEffect(() => {
    void reload();
  }, [reload]);

  useModelDownloads((p) => {
    // Events arrive by polling, so the last reports (checking the sha256, done) can come after
    // the pull's own answer has removed the row: a late report must not bring it back for good.
    // The end is always reported last, and takes the row away whenever it comes.
    if (p.phase === "done") {
      setDownloads((all) => without(all, [p.file]));
      return;
    }
    setDownloads((all) => {
      const known = all[p.file];
      return {
        ...all,
        [p.file]: {
          file: p.file,
          target: known?.target ?? p.file,
          progress: p,
          running: p.phase !== "done",
          error: null,
        },
      };
    });
  });

  const pull = useCallback(
    async (target: string): Promise<InstalledModel | null> => {
      const file = fileOfTarget(target, catalog);
      setDownloads((all) => ({
        ...all,
        [file]: { file, target, progress: all[file]?.progress ?? null, running: true, error: null },
      }));
      try {
        const model = await call(commands.modelsPull(target));
        setDownloads((all) => without(all, [file]));
        await reload();
        return model;
      } catch (e) {
        const paused = e instanceof IpcError && e.code === "paused";
        setDownloads((all) => ({
          ...all,
          [file]: {
            file,
            target,
            progress: all[file]?.progress ?? null,
            running: false,
            error: paused ? null : errorMessage(e),
          },
        }));
        await reload();
        return null;
      }
    },
    [catalog, reload],
  );

  const pause = useCallback(async (file: string) => {
    await call(commands.modelsPause(file));
  }, []);

  /** Delete the model (or download) `name`: resolves with what the deletion did (the
   * profiles left without a model, the runs stopped). */
  const remove = useCallback(
    async (name: string) => {
      const removal = await call(commands.modelsRemove(name));
      setDownloads((all) => without(all, [name, `${name}.gguf`]));
      await reload();
      return removal;
    },
    [reload],
  );

  /** Discard the download of `file`: its part on disk goes through the engine (when there is
   * one: a download that failed before its first byte has none), and its row goes. */
  const discard = useCallback(
    async (file: string) => {
      const onDisk =
        (view?.downloads.some((p) => p.file === file) ?? false) ||
        (downloads[file]?.progress?.downloaded ?? 0) > 0;
      if (onDisk) await call(commands.modelsRemove(file));
      setDownloads((all) => without(all, [file]));
      await reload();
    },
    [view, downloads, reload],
  );

  return { view, catalog, loadError, downloads, reload, pull, pause, remove, discard };
}
