import { useCallback, useRef, useState } from "react";
import { commands, type ImportedTool, type OpenApiImport } from "../../bindings";
import { call, errorMessage } from "../../ipc/call";

/** What one "Save N tools" did: the tools saved, and those that failed with the reason. */
export type SaveReport = { saved: string[]; failed: { name: string; message: string }[] };

/** A read description and where it came from (its URL or the chosen file's name). */
export type LoadedImport = { source: string; data: OpenApiImport };

/**
 * The state of the "Import from OpenAPI" panel: the source, the description read, the
 * selection and filter, and saving. Held by the Tools page, so it outlives the panel while a
 * tool is open in the editor for review.
 */
export function useOpenApiImport(onSaved: () => void) {
  const [shown, setShown] = useState(false);
  const [url, setUrl] = useState("");
  /** The source being read, while it is. */
  const [reading, setReading] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loaded, setLoaded] = useState<LoadedImport | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [query, setQuery] = useState("");
  const [tag, setTag] = useState("");
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [report, setReport] = useState<SaveReport | null>(null);
  /** Tools saved from this panel (now in the config folder). */
  const [saved, setSaved] = useState<ReadonlySet<string>>(new Set());
  /** The read being waited for was cancelled by the user (its error is not shown). */
  const cancelled = useRef(false);

  /** Read a description: a URL (`text` null, the backend fetches it) or a file's content.
   * True when it was read. */
  const read = useCallback(async (source: string, text: string | null): Promise<boolean> => {
    setReading(source);
    setError(null);
    cancelled.current = false;
    try {
      const data = await call(commands.importOpenapi(source, text));
      setLoaded({ source, data });
      setSelected(new Set());
      setSaved(new Set());
      setReport(null);
      setQuery("");
      setTag("");
      return true;
    } catch (e) {
      if (!cancelled.current) setError(errorMessage(e));
      return false;
    } finally {
      setReading(null);
    }
  }, []);

  /** Stop the read in progress (fetching or generating); the panel keeps what it showed. */
  const cancel = useCallback(async () => {
    cancelled.current = true;
    try {
      await call(commands.cancelOpenapiImport());
    } catch {
      // Nothing was being read any more.
    }
  }, []);

  /** Save each tool in order; a failure does not stop the others. */
  const save = useCallback(
    async (tools: ImportedTool[]) => {
      const done: SaveReport = { saved: [], failed: [] };
      setReport(null);
      for (const [i, t] of tools.entries()) {
        setProgress({ done: i + 1, total: tools.length });
        try {
          await call(commands.saveConfigFile("tool", null, t.text, null));
          done.saved.push(t.name);
        } catch (e) {
          done.failed.push({ name: t.name, message: errorMessage(e) });
        }
      }
      setProgress(null);
      setReport(done);
      setSaved((s) => new Set([...s, ...done.saved]));
      setSelected((s) => new Set([...s].filter((n) => !done.saved.includes(n))));
      onSaved();
    },
    [onSaved],
  );

  const toggle = useCallback((name: string, on: boolean) => {
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(name);
      else next.delete(name);
      return next;
    });
  }, []);

  return {
    shown,
    show: () => setShown(true),
    close: () => setShown(false),
    url,
    setUrl,
    reading,
    error,
    loaded,
    read,
    cancel,
    selected,
    toggle,
    selectAll: (names: string[]) => setSelected((s) => new Set([...s, ...names])),
    clear: () => setSelected(new Set()),
    query,
    setQuery,
    tag,
    setTag,
    progress,
    report,
    saved,
    save,
  };
}

export type OpenApiImportState = ReturnType<typeof useOpenApiImport>;
