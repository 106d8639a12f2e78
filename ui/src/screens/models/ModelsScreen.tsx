import { useRef, useState, type FormEvent } from "react";
import {
  commands,
  type CatalogItem,
  type Fit,
  type HubRepo,
  type InstalledModel,
  type PartialDownload,
  type PullProgress,
  type Removal,
  type RepoFile,
} from "../../bindings";
import { ConfirmButton } from "../../components/ConfirmButton";
import { Spinner } from "../../components/Spinner";
import { call, errorMessage } from "../../ipc/call";
import { useSharedSettings } from "../../ipc/shared";
import { refocusIfLost } from "../../shell/focus";
import { ToolCheck } from "./ToolCheck";
import { useModelChecks, type CheckHow, type ModelCheckState } from "./useModelChecks";
import { profilesLeftNote, profilesNote, profilesRunning } from "./profilesUsing";
import { fileOfTarget, useModels, type Download } from "./useModels";

/** Bytes for people, in powers of 1000 as disks and downloads count them. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let v = bytes;
  let unit = 0;
  while (v >= 1000 && unit < units.length - 1) {
    v /= 1000;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${v.toFixed(1)} ${units[unit]}`;
}

function formatEta(secs: number): string {
  const s = Math.max(0, Math.round(secs));
  if (s < 60) return `${s} s left`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s left`;
  return `${Math.floor(m / 60)} h ${m % 60} min left`;
}

const FIT_LABEL: Record<Fit, string> = {
  good: "Fits",
  tight: "Tight fit",
  too_big: "Too big",
  no_disk: "Not enough disk",
};

export function FitBadge({ fit, reason }: { fit: Fit; reason: string }) {
  return (
    <span className={`badge fit-${fit}`} title={reason}>
      {FIT_LABEL[fit]}
    </span>
  );
}

/** One line of a download's state: the bar, how far, how fast, how long. */
export function progressText(p: PullProgress): string {
  switch (p.phase) {
    case "resolving":
      return "Asking the Hub for the file's size and checksum…";
    case "verifying":
      return `Checking the sha256 of ${formatBytes(p.total)}…`;
    case "done":
      return "Installed";
    case "retrying":
      return `${p.note ?? "The connection failed"}; trying again…`;
    case "downloading": {
      const pct = p.total > 0 ? Math.floor((p.downloaded * 100) / p.total) : 0;
      const parts = [`${pct}%`, `${formatBytes(p.downloaded)} of ${formatBytes(p.total)}`];
      if (p.bytes_per_sec > 0) parts.push(`${formatBytes(p.bytes_per_sec)}/s`);
      if (p.eta_secs != null) parts.push(formatEta(p.eta_secs));
      return parts.join(" · ");
    }
  }
}

/**
 * A download that has not finished, as the Models screen and the first run show it: its
 * progress while it runs (with Pause), else how far it got ("Paused at X of Y") with Resume and
 * Discard, and why it stopped when it failed. A download that stopped before its first byte
 * (the Hub could not be reached) offers Try again, and Discard without asking (nothing is on
 * disk).
 */
export function DownloadRow(props: {
  file: string;
  /** The name people read (the file name unless given). */
  label?: string;
  download: Download | undefined;
  partial: PartialDownload | undefined;
  onPause: () => void;
  onResume: () => void;
  onDiscard: () => void;
}) {
  const { download, partial } = props;
  const label = props.label ?? props.file;
  const running = download?.running ?? false;
  const p = download?.progress;
  const done = p?.downloaded ?? partial?.downloaded ?? 0;
  const total = p?.total || partial?.total || 0;
  const text = running
    ? p
      ? progressText(p)
      : "Starting…"
    : done > 0 || total > 0
      ? `Paused at ${formatBytes(done)} of ${formatBytes(total)}`
      : "Not started: nothing was downloaded";
  return (
    <li className="model-download" data-testid={`download-${props.file}`}>
      <div className="model-download-head">
        <span className="model-name">{label}</span>
        <span className="model-download-actions">
          {running ? (
            <button type="button" onClick={props.onPause}>
              Pause
            </button>
          ) : (
            <>
              <button type="button" onClick={props.onResume}>
                {done > 0 ? "Resume" : "Try again"}
              </button>
              {done > 0 ? (
                <ConfirmButton
                  label={`Discard the download of ${label}`}
                  question={`Delete the ${formatBytes(done)} downloaded so far?`}
                  confirmLabel="Discard"
                  onConfirm={props.onDiscard}
                >
                  Discard
                </ConfirmButton>
              ) : (
                <button
                  type="button"
                  aria-label={`Discard the download of ${label}`}
                  onClick={props.onDiscard}
                >
                  Discard
                </button>
              )}
            </>
          )}
        </span>
      </div>
      <progress
        max={total || 1}
        value={done}
        aria-label={`Download of ${label}`}
        aria-valuetext={text}
      />
      <p className="muted" role={running ? "status" : undefined}>
        {text}
      </p>
      {download?.error && (
        <p className="form-errors" role="alert">
          {download.error}
        </p>
      )}
    </li>
  );
}

/** What a file pulled for a catalogue entry really is, when it is not that entry's file. */
export function CatalogMismatchNote({ model }: { model: InstalledModel }) {
  if (!model.catalog_mismatch) return null;
  return (
    <div className="status-warning small" role="note" data-testid={`mismatch-${model.name}`}>
      {model.catalog_mismatch.message}
    </div>
  );
}

function ago(secs: number | null): string {
  if (secs == null) return "never";
  const d = Math.max(0, Date.now() / 1000 - secs);
  if (d < 60) return "just now";
  if (d < 3600) return `${Math.floor(d / 60)} min ago`;
  if (d < 86400) return `${Math.floor(d / 3600)} h ago`;
  return `${Math.floor(d / 86400)} days ago`;
}

/** What an installed model's row shows of its tool-use check, and does with it. */
interface RowCheck {
  state: ModelCheckState;
  itemCount: number | null;
  busy: boolean;
  justInstalled: boolean;
  onStart: (how: CheckHow) => void;
  onCancel: () => void;
}

function InstalledRow({
  model,
  check,
  usedBy,
  onRemove,
}: {
  model: InstalledModel;
  check: RowCheck;
  /** The profiles that run it (the confirmation names them). */
  usedBy: readonly string[];
  onRemove: () => void;
}) {
  const info = model.info;
  // A chat model: one whose header reads (the runtime refuses the others).
  const chat = info !== null && model.error === null;
  return (
    <tr data-testid={`model-${model.name}`}>
      <th scope="row">
        <span className="model-name">{model.name}</span>
        {model.source && <div className="muted small">{model.source.repo}</div>}
        <CatalogMismatchNote model={model} />
        {model.error && (
          <div className="field-error small" role="note">
            {model.error}
          </div>
        )}
        {info && !info.has_chat_template && (
          <div className="muted small" role="note">
            No chat template in the file: the runtime uses the known format of its architecture
            (Gemma, Llama 3, Phi…), else ChatML, which may not be how this model was trained to
            chat.
          </div>
        )}
        {model.template_refused && (
          <div className="field-error small" role="note">
            The runtime refuses this file&apos;s chat template ({model.template_refused}): with
            native tool calls the tools go in the system message instead.
          </div>
        )}
      </th>
      <td>{formatBytes(model.size)}</td>
      <td>{info?.quantization ?? "?"}</td>
      <td>{info?.context_length != null ? info.context_length.toLocaleString() : "?"}</td>
      <td>{info?.architecture ?? "?"}</td>
      <td>{ago(model.last_used)}</td>
      <td>
        {chat ? (
          <ToolCheck
            model={model.name}
            check={check.state}
            itemCount={check.itemCount}
            busy={check.busy}
            justInstalled={check.justInstalled}
            onStart={check.onStart}
            onCancel={check.onCancel}
          />
        ) : (
          <span className="muted small">—</span>
        )}
      </td>
      <td className="row-actions">
        <ConfirmButton
          label={`Delete ${model.name}`}
          question={[
            `Delete ${model.file} (${formatBytes(model.size)}) from this computer?`,
            profilesNote(usedBy),
          ]
            .filter(Boolean)
            .join(" ")}
          confirmLabel="Delete"
          onConfirm={onRemove}
        >
          Delete
        </ConfirmButton>
      </td>
    </tr>
  );
}

/** What deleting a model did: gone, the profiles that ran it left without a model, the runs
 * that used it stopped. */
function RemovedNote({ model, removal }: { model: InstalledModel; removal: Removal }) {
  const runs = removal.stopped_runs.length;
  return (
    <p className="muted" role="status" data-testid="models-remove-status">
      {[
        `Deleted ${model.file} (${formatBytes(model.size)}).`,
        profilesLeftNote(removal.profiles),
        runs === 0
          ? null
          : runs === 1
            ? "The run that used it was stopped."
            : `The ${runs} runs that used it were stopped.`,
      ]
        .filter(Boolean)
        .join(" ")}
    </p>
  );
}

/** A catalogue entry's tool-use check in a line: where it was run, and its best mode. */
export function catalogCheckLine(item: CatalogItem): string {
  const check = item.check;
  if (!check) return "Tool-use check: not run yet (install it, then check it)";
  const percent = check.items === 0 ? 0 : Math.floor((check.as_asked * 100) / check.items);
  const mode = `${check.mode} calls${check.guided ? ", guided" : ""}`;
  const where = check.here ? "on this computer" : `measured ${check.measured ?? "elsewhere"}`;
  return `Tool-use check: ${percent} % of ${check.items} items as asked (${mode}), ${where}`;
}

function CatalogCard(props: {
  item: CatalogItem;
  recommendation: string | null;
  busy: boolean;
  onDownload: () => void;
}) {
  const { item } = props;
  return (
    <li className="model-card" data-testid={`catalog-${item.id}`}>
      <div className="model-card-head">
        <span className="model-name">{item.name}</span>
        {item.recommended && <span className="badge badge-recommended">Recommended</span>}
        <FitBadge fit={item.fit.fit} reason={item.fit.reason} />
      </div>
      <p className="muted small">
        {item.params} · {item.quantization} · {formatBytes(item.size)} ·{" "}
        {item.context.toLocaleString()} tokens · {item.license}
      </p>
      <p className="small">{item.about}</p>
      <p className="muted small">{item.fit.reason}</p>
      <p className="muted small" data-testid={`catalog-check-${item.id}`}>
        {catalogCheckLine(item)}
      </p>
      {item.recommended && props.recommendation && (
        <p className="small" data-testid="catalog-recommendation">
          Recommended: {props.recommendation}
        </p>
      )}
      {item.installed ? (
        <span className="badge badge-succeeded">Installed</span>
      ) : (
        <button
          type="button"
          disabled={props.busy || item.fit.fit === "no_disk"}
          onClick={props.onDownload}
          aria-label={`Download ${item.name}`}
        >
          Download
        </button>
      )}
    </li>
  );
}

/**
 * The Hub search: repositories with GGUF files, an opened one's files, and a Download for each
 * (waiting while `downloading` says that target's file is being downloaded). A search or a
 * listing that fails says why (the engine's sentence: what failed, what to check) with Try
 * again, which asks the same again; a failed search shows no results of an earlier one.
 */
function HubSearch({
  onDownload,
  downloading,
}: {
  onDownload: (target: string) => void;
  downloading: (target: string) => boolean;
}) {
  const [query, setQuery] = useState("");
  const [repos, setRepos] = useState<HubRepo[] | null>(null);
  const [open, setOpen] = useState<{ repo: string; files: RepoFile[] | null } | null>(null);
  /** What failed last, and how to ask it again. */
  const [failure, setFailure] = useState<{ message: string; retry: () => void } | null>(null);
  const [searching, setSearching] = useState(false);

  const runSearch = async (words: string) => {
    setSearching(true);
    setFailure(null);
    setOpen(null);
    setRepos(null);
    try {
      setRepos(await call(commands.modelsSearch(words)));
    } catch (err) {
      setFailure({ message: errorMessage(err), retry: () => void runSearch(words) });
    } finally {
      setSearching(false);
    }
  };

  const search = (e: FormEvent) => {
    e.preventDefault();
    void runSearch(query);
  };

  const openRepo = async (repo: string) => {
    setOpen({ repo, files: null });
    setFailure(null);
    try {
      const files = await call(commands.modelsFiles(repo));
      setOpen({ repo, files });
    } catch (err) {
      setFailure({ message: errorMessage(err), retry: () => void openRepo(repo) });
      setOpen(null);
    }
  };

  return (
    <div className="hub-search">
      <form onSubmit={(e) => void search(e)} className="hub-search-form">
        <label htmlFor="hub-query">Search Hugging Face for GGUF models</label>
        <input
          id="hub-query"
          type="search"
          value={query}
          placeholder="e.g. qwen3 gguf"
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="submit" disabled={searching || query.trim() === ""}>
          {searching ? "Searching…" : "Search"}
        </button>
      </form>
      {failure && (
        <div className="error-with-action" data-testid="hub-failure">
          <p className="form-errors" role="alert">
            {failure.message}
          </p>
          <button type="button" disabled={searching} onClick={failure.retry}>
            Try again
          </button>
        </div>
      )}
      {repos && repos.length === 0 && <p className="muted">No GGUF repositories match.</p>}
      {repos && repos.length > 0 && (
        <ul className="hub-repos">
          {repos.map((r) => (
            <li key={r.id}>
              <button
                type="button"
                className="link-button"
                aria-expanded={open?.repo === r.id}
                onClick={() => void openRepo(r.id)}
              >
                {r.id}
              </button>{" "}
              <span className="muted small">
                {r.downloads.toLocaleString()} downloads
                {r.gated ? " · gated: needs a Hub token (secret HF_TOKEN)" : ""}
              </span>
              {open?.repo === r.id && (
                <div className="hub-files">
                  {open.files === null && <p role="status">Reading its files…</p>}
                  {open.files?.length === 0 && <p className="muted">It has no GGUF files.</p>}
                  {open.files && open.files.length > 0 && (
                    <table>
                      <thead>
                        <tr>
                          <th scope="col">File</th>
                          <th scope="col">Quantisation</th>
                          <th scope="col">Size</th>
                          <th scope="col">Fit</th>
                          <th scope="col">
                            <span className="visually-hidden">Actions</span>
                          </th>
                        </tr>
                      </thead>
                      <tbody>
                        {open.files.map((f) => {
                          const target = `${r.id}/${f.path}`;
                          const busy = downloading(target);
                          return (
                            <tr key={f.path}>
                              <td>{f.path}</td>
                              <td>{f.quantization ?? "?"}</td>
                              <td>{formatBytes(f.size)}</td>
                              <td>
                                <FitBadge fit={f.fit.fit} reason={f.fit.reason} />
                              </td>
                              <td>
                                <button
                                  type="button"
                                  aria-label={`Download ${f.path}`}
                                  disabled={busy || f.fit.fit === "no_disk"}
                                  onClick={() => onDownload(target)}
                                >
                                  {busy ? "Downloading…" : "Download"}
                                </button>
                              </td>
                            </tr>
                          );
                        })}
                      </tbody>
                    </table>
                  )}
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function running(check: ModelCheckState): boolean {
  return check.progress?.phase === "starting" || check.progress?.phase === "asking";
}

/** Models that run on this computer: installed ones, downloads, the catalogue, Hub search. */
export function ModelsScreen() {
  const models = useModels();
  const settings = useSharedSettings();
  /** The model deleted last, and what its deletion did (the profiles left without a model…). */
  const [removed, setRemoved] = useState<{ model: InstalledModel; removal: Removal } | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [justInstalled, setJustInstalled] = useState<string[]>([]);
  const { view, catalog } = models;
  const checks = useModelChecks(view?.installed.map((m) => m.name) ?? []);

  /** Download `target`; once installed, its row offers the tool-use check. */
  const pull = async (target: string) => {
    const model = await models.pull(target);
    if (model) setJustInstalled((names) => [...names, model.name]);
  };

  const partials = view?.downloads ?? [];
  const downloadFiles = [
    ...new Set([...Object.keys(models.downloads), ...partials.map((p) => p.file)]),
  ].sort();

  const act = async (what: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await what();
    } catch (e) {
      setActionError(errorMessage(e));
    }
  };

  /** Why the file manager did not open the models folder (the engine's sentence names it). */
  const [folderError, setFolderError] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const openFolder = async () => {
    setFolderError(null);
    setCopied(false);
    try {
      await call(commands.openModelsFolder());
    } catch (e) {
      setFolderError(errorMessage(e));
    }
  };

  const importButton = useRef<HTMLButtonElement>(null);
  /** What the import says: running (the file dialog, then the copy and its checks), or done. */
  const [imported, setImported] = useState<
    { state: "running" } | { state: "done"; model: InstalledModel } | null
  >(null);

  /** Import a .gguf file the user picks: copying gigabytes and reading their checksum takes a
   * while, so the button waits and a status line says so; then what came in, or why not. */
  const importFile = async () => {
    setActionError(null);
    setImported({ state: "running" });
    try {
      const model = await call(commands.modelsImport(null));
      // Its row first, then the line saying it came in (null: the file dialog was cancelled).
      if (model) await models.reload();
      setImported(model ? { state: "done", model } : null);
    } catch (e) {
      setImported(null);
      setActionError(errorMessage(e));
    } finally {
      // The button lost the focus while disabled: give it back to the keyboard.
      refocusIfLost(importButton.current);
    }
  };

  return (
    <section className="screen models-screen" aria-labelledby="screen-title">
      <h1 id="screen-title" tabIndex={-1}>
        Models
      </h1>
      <p className="muted">
        Models that run on this computer, with no account and no server: use one in Settings with a
        profile “On this computer”.
        {view && (
          <>
            {" "}
            This computer: {formatBytes(view.machine.total_memory)} memory,{" "}
            {formatBytes(view.machine.free_disk)} free disk, {view.machine.cores} cores.
          </>
        )}
      </p>
      <div className="toolbar">
        <button
          type="button"
          ref={importButton}
          disabled={imported?.state === "running"}
          onClick={() => void importFile()}
        >
          {imported?.state === "running" ? (
            <>
              <Spinner /> Importing…
            </>
          ) : (
            "Import a .gguf file…"
          )}
        </button>
        <button type="button" onClick={() => void openFolder()}>
          Open the models folder
        </button>
      </div>
      {folderError && (
        <div className="error-with-action" data-testid="models-folder-error">
          <p className="form-errors" role="alert">
            {folderError}
          </p>
          {view && (
            <button
              type="button"
              onClick={() =>
                void globalThis.navigator?.clipboard
                  ?.writeText(view.dir)
                  .then(() => setCopied(true))
              }
            >
              {copied ? "Copied" : "Copy the folder's path"}
            </button>
          )}
        </div>
      )}
      {imported && (
        <p className="muted" role="status" data-testid="models-import-status">
          {imported.state === "running"
            ? "Importing the model file: copying it into the models folder and checking it…"
            : `Imported ${imported.model.name} (${formatBytes(imported.model.size)}, ${
                imported.model.info?.architecture ?? "architecture unknown"
              }).`}
        </p>
      )}
      {models.loadError && (
        <p className="form-errors" role="alert">
          {models.loadError}
        </p>
      )}
      {actionError && (
        <p className="form-errors" role="alert">
          {actionError}
        </p>
      )}
      {removed && <RemovedNote {...removed} />}
      {checks.loadError && (
        <p className="form-errors" role="alert">
          Cannot read the tool-use checks: {checks.loadError}
        </p>
      )}

      <h2>Installed</h2>
      {view === null && !models.loadError && <p role="status">Loading…</p>}
      {view && view.installed.length === 0 && (
        <p className="muted" data-testid="no-models">
          No models yet: download one from the catalogue below, or import a .gguf file.
        </p>
      )}
      {view && view.installed.length > 0 && (
        <table className="models-table">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Size</th>
              <th scope="col">Quantisation</th>
              <th scope="col">Context</th>
              <th scope="col">Architecture</th>
              <th scope="col">Last used</th>
              <th scope="col">Tool use</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {view.installed.map((m) => (
              <InstalledRow
                key={m.file}
                model={m}
                check={{
                  state: checks.stateOf(m.name),
                  itemCount: checks.itemCount,
                  busy: checks.running && !running(checks.stateOf(m.name)),
                  justInstalled: justInstalled.includes(m.name),
                  onStart: (how) => void checks.start(m.name, how),
                  onCancel: () => void checks.cancel(m.name),
                }}
                usedBy={profilesRunning(settings.value?.profile_models, m.file)}
                onRemove={() =>
                  void act(async () => {
                    setRemoved(null);
                    setRemoved({ model: m, removal: await models.remove(m.name) });
                  })
                }
              />
            ))}
          </tbody>
        </table>
      )}

      {downloadFiles.length > 0 && (
        <>
          <h2>Downloads</h2>
          <ul className="model-downloads">
            {downloadFiles.map((file) => {
              const download = models.downloads[file];
              const partial = partials.find((p) => p.file === file);
              const target =
                download?.target ??
                (partial ? `${partial.source.repo}/${partial.source.file}` : file);
              return (
                <DownloadRow
                  key={file}
                  file={file}
                  download={download}
                  partial={partial}
                  onPause={() => void act(() => models.pause(file))}
                  onResume={() => void pull(target)}
                  onDiscard={() => void act(() => models.discard(file))}
                />
              );
            })}
          </ul>
        </>
      )}

      <h2>Catalogue</h2>
      <p className="muted small">
        Small instruct models that call tools. The badge says whether each fits this computer; the
        recommendation is the one that fits with the best tool-use check.
      </p>
      {catalog && (
        <ul className="model-cards">
          {catalog.items.map((item) => (
            <CatalogCard
              key={item.id}
              item={item}
              recommendation={catalog.recommendation}
              busy={models.downloads[item.file]?.running ?? false}
              onDownload={() => void pull(item.id)}
            />
          ))}
        </ul>
      )}

      <h2>Hugging Face</h2>
      <HubSearch
        onDownload={(target) => void pull(target)}
        downloading={(target) => models.downloads[fileOfTarget(target, catalog)]?.running ?? false}
      />
    </section>
  );
}
