import { useRef, useState } from "react";
import { commands, type Added, type Progress } from "../../bindings";
import { formatSize } from "../../components/BinaryContent";
import { call, errorMessage } from "../../ipc/call";
import { useLibraryIngest } from "../../ipc/useEngineEvents";

/** "Add files…" and "Add folder…": the user's documents become sources in the library. While
 * they are read, a panel shows files, pages and bytes done, the rate and the time left, with
 * Cancel; at the end, what was added and every file that failed, with why. */
export function AddSources({ onAdded }: { onAdded: () => void }) {
  const [running, setRunning] = useState(false);
  // The latest report, and the seconds since the add started when it came.
  const [progress, setProgress] = useState<{ report: Progress; seconds: number } | null>(null);
  const [result, setResult] = useState<Added | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const startedAt = useRef(0);
  const active = useRef(false);
  useLibraryIngest((p) => {
    if (active.current) {
      setProgress({ report: p, seconds: (performance.now() - startedAt.current) / 1000 });
    }
  });

  const add = async (folder: boolean) => {
    active.current = true;
    startedAt.current = performance.now();
    setRunning(true);
    setCancelling(false);
    setProgress(null);
    setResult(null);
    setError(null);
    try {
      const added = await call(commands.libraryAdd(null, folder));
      if (added) {
        setResult(added);
        onAdded();
      }
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      active.current = false;
      setRunning(false);
    }
  };

  return (
    <div className="add-sources">
      <div className="add-sources-buttons">
        <button
          type="button"
          disabled={running}
          onClick={() => void add(false)}
          data-testid="add-files"
        >
          Add files…
        </button>
        <button
          type="button"
          disabled={running}
          onClick={() => void add(true)}
          data-testid="add-folder"
        >
          Add folder…
        </button>
      </div>
      {running && (
        <IngestProgress
          progress={progress?.report ?? null}
          seconds={progress?.seconds ?? 0}
          cancelling={cancelling}
          onCancel={() => {
            setCancelling(true);
            void commands.libraryCancel();
          }}
        />
      )}
      {result && <IngestSummary added={result} onClose={() => setResult(null)} />}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}

function duration(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Where the add is: files, pages and bytes done, the rate and the time left. */
export function IngestProgress({
  progress: p,
  seconds,
  cancelling,
  onCancel,
}: {
  progress: Progress | null;
  /** Seconds from the add's start to this report. */
  seconds: number;
  cancelling: boolean;
  onCancel: () => void;
}) {
  const rate = p && seconds > 0 ? p.bytes_done / seconds : 0;
  const left = p && rate > 0 ? (p.bytes_total - p.bytes_done) / rate : null;
  return (
    <div className="ingest-progress" role="status" data-testid="ingest-progress">
      <progress max={p?.bytes_total || 1} value={p?.bytes_done ?? 0} aria-label="Adding files" />
      <p className="small">
        {p === null ? (
          "Looking for files…"
        ) : (
          <>
            <span data-testid="ingest-files">
              {p.files_done} of {p.files_total} files
            </span>{" "}
            · {p.pages} pages · {formatSize(p.bytes_done)} of {formatSize(p.bytes_total)}
            {rate > 0 && ` · ${formatSize(rate)}/s`}
            {left !== null && p.files_done < p.files_total && ` · about ${duration(left)} left`}
          </>
        )}
      </p>
      {p?.current && <p className="muted small ingest-current">Reading {fileName(p.current)}</p>}
      <button type="button" onClick={onCancel} disabled={cancelling} data-testid="ingest-cancel">
        {cancelling ? "Cancelling…" : "Cancel"}
      </button>
    </div>
  );
}

function fileName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

/** How an add ended: the counts, what a restart rolled back, and each file that failed. */
export function IngestSummary({ added, onClose }: { added: Added; onClose: () => void }) {
  const s = added.summary;
  const failed = s.files.filter((f) => f.status === "failed");
  const parts = [
    `${s.added} added`,
    s.new_versions > 0 ? `${s.new_versions} new versions` : null,
    s.duplicates > 0 ? `${s.duplicates} already in the library` : null,
    s.failed > 0 ? `${s.failed} failed` : null,
    s.cancelled > 0 ? `${s.cancelled} not added (cancelled)` : null,
  ].filter((p) => p !== null);
  return (
    <div className="ingest-summary" role="status" data-testid="ingest-summary">
      <p>
        <strong>{s.status === "cancelled" ? "Cancelled" : "Done"}:</strong>{" "}
        <span data-testid="ingest-counts">{parts.join(" · ")}</span>{" "}
        <span className="muted small">
          ({s.pages} pages in {duration(s.seconds)})
        </span>
      </p>
      {added.notices.map((n) => (
        <p key={n} className="muted small">
          {n}
        </p>
      ))}
      {failed.length > 0 && (
        <ul className="ingest-failures" data-testid="ingest-failures">
          {failed.map((f) => (
            <li key={f.path}>
              <strong>{fileName(f.path)}</strong>: {f.message ?? f.error_kind ?? "failed"}
            </li>
          ))}
        </ul>
      )}
      <button type="button" onClick={onClose}>
        Close
      </button>
    </div>
  );
}
