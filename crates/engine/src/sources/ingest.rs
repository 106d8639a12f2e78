//! Adding files and folders to the library: one job, its files read in parallel by worker
//! processes and stored as they are read.
//!
//! [`add`] walks the paths first (folders recursively, with include and exclude globs matched
//! against the path below the folder), so the total is known, and records the job and its items.
//! Then `N` threads (one per core) take files in order; each owns a [`Worker`] and its own
//! connection to the database. For each file: hash it while copying it into the originals'
//! folder; if the same bytes are in the library already, record the path and report a
//! duplicate; otherwise stream the worker's pages into the store in batches (each its own short
//! transaction) and make the version ready at the end. Two files of one job with the same bytes
//! are never read at once: the second waits for the first, then is its duplicate (or is read
//! itself when the first failed). Every failure is recorded on its item
//! with its kind and a located message, and the batch goes on. Cancelling stops the walk of the
//! queue, kills the workers, and rolls back the files being read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;
use std::time::{Instant, UNIX_EPOCH};

use artifactflow_extract::protocol::Request;
use artifactflow_extract::{ExtractError, Limits, Page};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::workers::{worker_path, Event, Failure, Watchdog, Worker};
use crate::owner::ProcessOwner;
use artifactflow_store::sources::{
    FileFacts, ItemStatus, ItemUpdate, JobStatus, PageRecord, PassageRecord, PendingVersion,
    SourceError, SourceStore,
};

/// Pages are written in batches of about this much Markdown (or [`BATCH_PAGES`] pages).
const BATCH_BYTES: usize = 256 * 1024;
/// The most pages in one batch.
const BATCH_PAGES: usize = 256;

/// How files are added.
#[derive(Debug, Clone, Default)]
pub struct AddOptions {
    /// Globs a file below a folder must match (any of them); all files when empty.
    pub include: Vec<String>,
    /// Globs that leave a file below a folder out.
    pub exclude: Vec<String>,
    /// Files larger than this many MB (10^6 bytes) fail as too large.
    pub max_file_mb: Option<u64>,
    /// Worker processes (default: the number of cores).
    pub workers: Option<usize>,
    /// When a worker is taken for hung.
    pub watchdog: Watchdog,
    /// The worker program (default: found by [`worker_path`]).
    pub worker_program: Option<PathBuf>,
    /// Who starts the job (`cli`, `app`).
    pub origin: String,
}

/// What became of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FileOutcome {
    /// The file's path.
    pub path: String,
    /// `added`, `new_version`, `duplicate`, `failed` or `cancelled`.
    pub status: ItemStatus,
    /// The source it became (or is a duplicate of).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Pages read.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(type = Option<f64>))]
    pub pages: Option<u32>,
    /// The failure's kind (`encrypted`, `unsupported`, `timeout`, `crashed`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// What happened, for a person: the failure, or what a duplicate duplicates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Where a job is, reported after each file and as pages are read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Progress {
    /// Files handled.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub files_done: usize,
    /// Files found.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub files_total: usize,
    /// Pages read.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub pages: u64,
    /// Bytes of the files handled.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub bytes_done: u64,
    /// Bytes of all files.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub bytes_total: u64,
    /// The file just finished, when this report is about one.
    pub finished: Option<FileOutcome>,
    /// A file being read, when this report is about one.
    pub current: Option<String>,
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AddSummary {
    /// The job's id.
    pub job_id: String,
    /// `done` or `cancelled`.
    pub status: JobStatus,
    /// Files found.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub files_total: usize,
    /// New sources.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub added: usize,
    /// New versions of sources already there.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub new_versions: usize,
    /// Files whose bytes were in the library already.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub duplicates: usize,
    /// Files that failed.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub failed: usize,
    /// Files not reached because the job was cancelled.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub cancelled: usize,
    /// Pages read.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub pages: u64,
    /// Bytes of the files found.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub bytes_total: u64,
    /// Seconds the job took.
    pub seconds: f64,
    /// Every file, in the order found.
    pub files: Vec<FileOutcome>,
}

/// A file the walk found (or a path that could not be walked).
struct Found {
    path: PathBuf,
    size: u64,
    mtime_ns: Option<i64>,
    /// Why it cannot even be tried.
    problem: Option<(String, String)>,
}

fn glob_set(globs: &[String], what: &str) -> Result<Option<GlobSet>, SourceError> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        let parsed = Glob::new(glob).map_err(|e| {
            SourceError::Invalid(format!(
                "the {what} glob '{glob}' is not valid ({e}); write it like '**/*.pdf'"
            ))
        })?;
        builder.add(parsed);
    }
    builder
        .build()
        .map(Some)
        .map_err(|e| SourceError::Invalid(format!("the {what} globs are not valid ({e})")))
}

fn found(path: PathBuf, meta: &std::fs::Metadata) -> Found {
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos().min(i64::MAX as u128) as i64);
    Found {
        path,
        size: meta.len(),
        mtime_ns,
        problem: None,
    }
}

fn problem(path: PathBuf, kind: &str, message: String) -> Found {
    Found {
        path,
        size: 0,
        mtime_ns: None,
        problem: Some((kind.to_string(), message)),
    }
}

/// The files below `paths` (named files as they are; folders recursively, in name order,
/// filtered by the globs).
fn walk(paths: &[PathBuf], options: &AddOptions) -> Result<Vec<Found>, SourceError> {
    let include = glob_set(&options.include, "include")?;
    let exclude = glob_set(&options.exclude, "exclude")?;
    let mut files = Vec::new();
    for root in paths {
        let root = std::path::absolute(root).unwrap_or_else(|_| root.clone());
        let meta = match std::fs::metadata(&root) {
            Ok(meta) => meta,
            Err(e) => {
                let err = ExtractError::io("read it", &e);
                files.push(problem(root, err.kind.as_str(), err.message));
                continue;
            }
        };
        if !meta.is_dir() {
            files.push(found(root, &meta));
            continue;
        }
        for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let path = e.path().map_or_else(|| root.clone(), Path::to_path_buf);
                    files.push(problem(
                        path,
                        "unreadable",
                        format!("cannot read the folder: {e}"),
                    ));
                    continue;
                }
            };
            if !entry.file_type().is_file() {
                continue;
            }
            let below = entry.path().strip_prefix(&root).unwrap_or(entry.path());
            if include.as_ref().is_some_and(|g| !g.is_match(below))
                || exclude.as_ref().is_some_and(|g| g.is_match(below))
            {
                continue;
            }
            match entry.metadata() {
                Ok(meta) => files.push(found(entry.path().to_path_buf(), &meta)),
                Err(e) => files.push(problem(
                    entry.path().to_path_buf(),
                    "unreadable",
                    format!("cannot read the file: {e}"),
                )),
            }
        }
    }
    Ok(files)
}

/// What the threads share.
struct Shared<'a> {
    job: &'a str,
    owner: &'a ProcessOwner,
    files: &'a [Found],
    next: AtomicUsize,
    state: Mutex<(Progress, Vec<Option<FileOutcome>>)>,
    report: &'a (dyn Fn(&Progress) + Sync),
    cancel: &'a CancellationToken,
    options: &'a AddOptions,
    program: PathBuf,
    limits: Limits,
    /// Hashes of the files being added now, and a signal when one is done.
    in_flight: Mutex<HashSet<String>>,
    in_flight_done: Condvar,
}

/// A hash being added by this thread; released on drop.
struct Claim<'s, 'a> {
    shared: &'s Shared<'a>,
    sha256: String,
}

impl Drop for Claim<'_, '_> {
    fn drop(&mut self) {
        let mut set = self
            .shared
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        set.remove(&self.sha256);
        self.shared.in_flight_done.notify_all();
    }
}

impl<'a> Shared<'a> {
    /// Claims `sha256` for this thread, waiting while another thread adds the same bytes;
    /// `None` when the job is cancelled meanwhile.
    fn claim<'s>(&'s self, sha256: &str) -> Option<Claim<'s, 'a>> {
        let mut set = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        while set.contains(sha256) {
            if self.cancel.is_cancelled() {
                return None;
            }
            set = self
                .in_flight_done
                .wait_timeout(set, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        set.insert(sha256.to_string());
        Some(Claim {
            shared: self,
            sha256: sha256.to_string(),
        })
    }
}

impl Shared<'_> {
    fn pages_read(&self, n: u64) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.0.pages += n;
    }

    fn started(&self, path: &Path) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut progress = state.0.clone();
        progress.current = Some(path.display().to_string());
        (self.report)(&progress);
    }

    fn finished(&self, seq: usize, outcome: FileOutcome) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.0.files_done += 1;
        state.0.bytes_done += self.files[seq].size;
        let mut progress = state.0.clone();
        progress.finished = Some(outcome.clone());
        state.1[seq] = Some(outcome);
        (self.report)(&progress);
    }
}

/// Adds `paths` to the library of the database at `db_path` (originals in `blob_root`) as one
/// job owned by `owner`, reporting progress to `report`; see the module docs.
pub fn add(
    db_path: &Path,
    blob_root: &Path,
    owner: &ProcessOwner,
    paths: &[PathBuf],
    options: &AddOptions,
    cancel: &CancellationToken,
    report: &(dyn Fn(&Progress) + Sync),
) -> Result<AddSummary, SourceError> {
    let started = Instant::now();
    let program = match &options.worker_program {
        Some(program) => program.clone(),
        None => worker_path().map_err(SourceError::Invalid)?,
    };
    let files = walk(paths, options)?;
    let mut store = SourceStore::connect(db_path, blob_root)?;
    let list: Vec<(String, u64)> = files
        .iter()
        .map(|f| (f.path.display().to_string(), f.size))
        .collect();
    let origin = if options.origin.is_empty() {
        "cli"
    } else {
        options.origin.as_str()
    };
    let job_options = serde_json::json!({
        "paths": paths, "include": options.include, "exclude": options.exclude,
        "max_file_mb": options.max_file_mb,
    });
    let job = store.create_job(origin, owner, &job_options, &list)?;
    let bytes_total = files.iter().map(|f| f.size).sum();
    let shared = Shared {
        job: &job,
        owner,
        files: &files,
        next: AtomicUsize::new(0),
        state: Mutex::new((
            Progress {
                files_total: files.len(),
                bytes_total,
                ..Progress::default()
            },
            vec![None; files.len()],
        )),
        report,
        cancel,
        options,
        program,
        limits: Limits {
            max_file_bytes: options.max_file_mb.map(|mb| mb.saturating_mul(1_000_000)),
            ..Limits::default()
        },
        in_flight: Mutex::default(),
        in_flight_done: Condvar::new(),
    };
    let threads = options
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .clamp(1, files.len().max(1));
    let errors: Vec<SourceError> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| run_thread(&shared, db_path, blob_root)))
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap_or(Ok(())).err())
            .collect()
    });
    let status = if cancel.is_cancelled() {
        JobStatus::Cancelled
    } else {
        JobStatus::Done
    };
    let (progress, outcomes) = shared.state.into_inner().unwrap_or_else(|p| p.into_inner());
    let notice = errors.first().map(|e| format!("stopped: {e}"));
    store.end_job(&job, status, notice.as_deref())?;
    if let Some(error) = errors.into_iter().next() {
        return Err(error);
    }
    let files: Vec<FileOutcome> = outcomes
        .into_iter()
        .zip(files.iter())
        .map(|(outcome, found)| {
            outcome.unwrap_or_else(|| FileOutcome {
                path: found.path.display().to_string(),
                status: ItemStatus::Cancelled,
                id: None,
                pages: None,
                error_kind: None,
                message: Some("not added: the job was cancelled".into()),
            })
        })
        .collect();
    let count = |s: ItemStatus| files.iter().filter(|f| f.status == s).count();
    Ok(AddSummary {
        job_id: job,
        status,
        files_total: files.len(),
        added: count(ItemStatus::Added),
        new_versions: count(ItemStatus::NewVersion),
        duplicates: count(ItemStatus::Duplicate),
        failed: count(ItemStatus::Failed),
        cancelled: count(ItemStatus::Cancelled),
        pages: progress.pages,
        bytes_total,
        seconds: started.elapsed().as_secs_f64(),
        files,
    })
}

/// One thread: takes the next file until there are none or the job is cancelled. A database
/// failure stops the thread (and is the job's error).
fn run_thread(shared: &Shared<'_>, db_path: &Path, blob_root: &Path) -> Result<(), SourceError> {
    let mut store = SourceStore::connect(db_path, blob_root)?;
    let mut worker: Option<Worker> = None;
    loop {
        if shared.cancel.is_cancelled() {
            return Ok(());
        }
        let seq = shared.next.fetch_add(1, Ordering::SeqCst);
        let Some(file) = shared.files.get(seq) else {
            return Ok(());
        };
        let path = file.path.display().to_string();
        let outcome = match &file.problem {
            Some((kind, message)) => failed(&path, kind, message.clone(), None),
            None => {
                store.update_item(
                    shared.job,
                    seq,
                    &ItemUpdate {
                        status: ItemStatus::Extracting,
                        error_kind: None,
                        error: None,
                        artifact_id: None,
                        pages: None,
                    },
                )?;
                shared.started(&file.path);
                add_file(shared, &mut store, &mut worker, file)?
            }
        };
        store.update_item(
            shared.job,
            seq,
            &ItemUpdate {
                status: outcome.status,
                error_kind: outcome.error_kind.as_deref(),
                error: outcome.message.as_deref(),
                artifact_id: outcome.id.as_deref(),
                pages: outcome.pages,
            },
        )?;
        shared.finished(seq, outcome);
    }
}

fn failed(path: &str, kind: &str, message: String, pages: Option<u32>) -> FileOutcome {
    FileOutcome {
        path: path.to_string(),
        status: ItemStatus::Failed,
        id: None,
        pages,
        error_kind: Some(kind.to_string()),
        message: Some(message),
    }
}

/// Adds one file (see the module docs). `Err` only when the database fails.
fn add_file(
    shared: &Shared<'_>,
    store: &mut SourceStore,
    worker: &mut Option<Worker>,
    file: &Found,
) -> Result<FileOutcome, SourceError> {
    let path = file.path.display().to_string();
    if let Err(e) = shared.limits.check_file_size(file.size) {
        return Ok(failed(&path, e.kind.as_str(), e.message, None));
    }
    let staged = match store.stage(&file.path, shared.owner) {
        Ok(staged) => staged,
        Err(e) => {
            let e = ExtractError::io("read the file", &e);
            return Ok(failed(&path, e.kind.as_str(), e.message, None));
        }
    };
    let file_name = file
        .path
        .file_name()
        .map_or_else(|| path.clone(), |n| n.to_string_lossy().into_owned());
    let mut facts = FileFacts {
        path: path.clone(),
        file_name,
        size: staged.size,
        mtime_ns: file.mtime_ns,
        ..FileFacts::default()
    };
    let Some(_claim) = shared.claim(&staged.sha256) else {
        return Ok(FileOutcome {
            path,
            status: ItemStatus::Cancelled,
            id: None,
            pages: None,
            error_kind: None,
            message: Some("not added: the job was cancelled".into()),
        });
    };
    if let Some(existing) = store.find_by_sha(&staged.sha256)? {
        store.record_path(&existing.id, &facts, &staged.sha256)?;
        return Ok(FileOutcome {
            path,
            status: ItemStatus::Duplicate,
            id: Some(existing.id.clone()),
            pages: None,
            error_kind: None,
            message: Some(format!(
                "already in the library as {} “{}” (added {})",
                existing.id,
                existing.title,
                existing.added_at.get(..10).unwrap_or(&existing.added_at)
            )),
        });
    }
    if worker.as_ref().is_none_or(|w| !w.usable()) {
        *worker = None;
        match Worker::start(&shared.program) {
            Ok(started) => *worker = Some(started),
            Err(e) => {
                let message = format!(
                    "cannot start the extraction worker {}: {e}",
                    shared.program.display()
                );
                return Ok(failed(&path, "engine", message, None));
            }
        }
    }
    let Some(running) = worker.as_mut() else {
        unreachable!("a worker was just started")
    };
    let request = Request {
        path: path.clone(),
        limits: shared.limits.clone(),
    };
    let mut staged = Some(staged);
    let mut pending: Option<PendingVersion> = None;
    let mut batch: Vec<PageRecord> = Vec::new();
    let mut batch_bytes = 0usize;
    let mut pages_read = 0u32;
    let mut store_error: Option<SourceError> = None;
    let job = shared.job;
    let result = running.extract(
        &request,
        file.size,
        &shared.options.watchdog,
        shared.cancel,
        &mut |event| {
            let outcome: Result<(), SourceError> = (|| {
                match event {
                    Event::Meta(meta) => {
                        facts.kind = serde_json::to_value(meta.kind)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_else(|| "file".into());
                        facts.mime = meta.mime;
                        facts.page_count = meta.pages;
                        facts.title = meta.title;
                        facts.author = meta.author;
                        facts.extractor = meta.extractor;
                        if let Some(staged) = staged.take() {
                            pending = Some(store.begin(job, &facts, staged)?);
                        }
                    }
                    Event::Progress(_) => {}
                    Event::Page(page) => {
                        pages_read += 1;
                        shared.pages_read(1);
                        batch_bytes += page.markdown.len();
                        batch.push(record(page));
                        if batch_bytes >= BATCH_BYTES || batch.len() >= BATCH_PAGES {
                            if let Some(pending) = pending.as_mut() {
                                store.add_pages(pending, &batch)?;
                            }
                            batch.clear();
                            batch_bytes = 0;
                        }
                    }
                }
                Ok(())
            })();
            outcome.map_err(|e| {
                let message = e.to_string();
                store_error = Some(e);
                message
            })
        },
    );
    let finish = |store: &mut SourceStore, pending: &Option<PendingVersion>| {
        if let Some(pending) = pending {
            store.abandon(pending)
        } else {
            Ok(())
        }
    };
    match result {
        Ok(summary) => {
            let Some(mut version) = pending.take() else {
                return Ok(failed(
                    &path,
                    "crashed",
                    "the extractor finished without describing the file".into(),
                    None,
                ));
            };
            store.add_pages(&mut version, &batch)?;
            let warnings = serde_json::to_value(&summary.warnings).unwrap_or_default();
            let id = store.finish(&version, &facts, &warnings)?;
            Ok(FileOutcome {
                path,
                status: if version.is_new_version {
                    ItemStatus::NewVersion
                } else {
                    ItemStatus::Added
                },
                id: Some(id),
                pages: Some(summary.pages),
                error_kind: None,
                message: None,
            })
        }
        Err(Failure::File(error)) => {
            finish(store, &pending)?;
            let message = match error.page {
                Some(page) if !error.message.contains("page") => {
                    format!("{} (page {page})", error.message)
                }
                _ => error.message,
            };
            Ok(failed(
                &path,
                error.kind.as_str(),
                message,
                Some(pages_read),
            ))
        }
        Err(Failure::Cancelled) => {
            finish(store, &pending)?;
            Ok(FileOutcome {
                path,
                status: ItemStatus::Cancelled,
                id: None,
                pages: None,
                error_kind: None,
                message: Some("not added: the job was cancelled while it was read".into()),
            })
        }
        Err(Failure::Sink(_)) => {
            let _ = finish(store, &pending);
            Err(store_error.unwrap_or_else(|| SourceError::Db(rusqlite::Error::InvalidQuery)))
        }
    }
}

fn record(page: Page) -> PageRecord {
    PageRecord {
        page: page.page,
        label: page.label,
        first_line: page.first_line,
        line_count: page.line_count,
        has_text: page.has_text,
        markdown: page.markdown,
        passages: page
            .passages
            .into_iter()
            .map(|p| PassageRecord {
                page: p.page,
                line_first: p.line_first,
                line_last: p.line_last,
                text: p.text,
            })
            .collect(),
    }
}
