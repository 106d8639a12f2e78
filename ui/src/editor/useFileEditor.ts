import { useCallback, useEffect, useRef, useState } from "react";
import { commands, type ConfigFile, type FileKind } from "../bindings";
import { IpcError, call, errorMessage } from "../ipc/call";
import { useStatusChanges } from "../ipc/useEngineEvents";

/** What happened to the file on disk while it was open. */
export type External = { kind: "changed"; disk: string } | { kind: "deleted" } | null;

/**
 * One config file open in an editor: its text, the disk text it started from (`base`), saving
 * (refused when the disk changed since — then offered for reload), and detection of edits
 * made outside the app while it is open (checked whenever the config folder reloads).
 */
export function useFileEditor(kind: FileKind, opened: { path: string | null; text: string }) {
  const [path, setPath] = useState(opened.path);
  const [base, setBase] = useState<string | null>(opened.path === null ? null : opened.text);
  const [text, setText] = useState(opened.text);
  const [external, setExternal] = useState<External>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [initial, setInitial] = useState(opened.text);
  const dirty = text !== (base ?? initial);

  const statusChanges = useStatusChanges();
  const latest = useRef({ text, base });
  useEffect(() => {
    latest.current = { text, base };
  }, [text, base]);

  // An edit outside the app: reload silently when nothing is unsaved, otherwise ask.
  useEffect(() => {
    if (path === null) return;
    let alive = true;
    const check = () =>
      void call(commands.readConfigFile(kind, path)).then(
        (file) => {
          if (!alive) return;
          const { text: mine, base: from } = latest.current;
          const disk = file.text;
          if (disk === from) return;
          if (mine === from) {
            setText(disk);
            setBase(disk);
            setExternal(null);
            setNotice("The file was changed outside the app; the editor shows the new version.");
          } else if (disk !== mine) {
            setExternal({ kind: "changed", disk });
          }
        },
        (e: unknown) => {
          if (alive && e instanceof IpcError && e.code === "not_found")
            setExternal({ kind: "deleted" });
        },
      );
    const off = statusChanges.subscribe(check);
    window.addEventListener("focus", check);
    return () => {
      alive = false;
      window.removeEventListener("focus", check);
      off();
    };
  }, [kind, path, statusChanges]);

  const save = useCallback(
    async (overwrite = false): Promise<ConfigFile | null> => {
      setSaving(true);
      setSaveError(null);
      setNotice(null);
      try {
        const saved = await call(
          commands.saveConfigFile(kind, path, text, overwrite ? null : base),
        );
        setPath(saved.path);
        setBase(saved.text);
        setExternal(null);
        // The file's name: its full path is behind "Show file" in the header.
        setNotice(`Saved to ${saved.file_name}; it is live.`);
        return saved;
      } catch (e) {
        setSaveError(errorMessage(e));
        if (e instanceof IpcError && e.code === "conflict" && path !== null) {
          const disk = await call(commands.readConfigFile(kind, path)).catch(() => null);
          if (disk) setExternal({ kind: "changed", disk: disk.text });
        }
        return null;
      } finally {
        setSaving(false);
      }
    },
    [kind, path, text, base],
  );

  /** Take the disk's version (unsaved edits are dropped). */
  const reloadFromDisk = useCallback(() => {
    if (external?.kind !== "changed") return;
    setText(external.disk);
    setBase(external.disk);
    setExternal(null);
    setSaveError(null);
  }, [external]);

  /** Keep the editor's version; the next save replaces the disk's. */
  const keepMine = useCallback(() => {
    if (external?.kind === "changed") setBase(external.disk);
    if (external?.kind === "deleted") {
      setPath(null);
      setBase(null);
      setInitial("");
    }
    setExternal(null);
    setSaveError(null);
  }, [external]);

  return {
    path,
    text,
    setText,
    dirty,
    saving,
    save,
    saveError,
    external,
    reloadFromDisk,
    keepMine,
    notice,
    setPath,
  };
}
