//! Resumable, verified downloads of a model file from the Hub.
//!
//! A pull finds the file's size and sha256 (the tree API, else the `X-Linked-Size` and
//! `X-Linked-Etag` headers of the file's address), checks the free disk, and writes into
//! `.downloads/<file>.part` beside a small JSON naming what it is. A pull that finds such a part
//! of the same file (same sha256) resumes it with `Range: bytes=N-`; a server that ignores the
//! range starts it over. A lost connection, a body cut short or a 5xx answer is retried with
//! backoff, each time resuming; a web page, a 404 or a refused token is not. When every byte is
//! there the file is hashed; only a match, and a header that reads, renames it into the folder.
//! A wrong hash removes the part (resuming it would keep the wrong bytes).
//!
//! Only one process downloads a file at a time: the part file is locked while written.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs4::FileExt;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::hub::{check_repo, is_sha256, Hub};
use super::{gguf, hex, new_file_name, InstalledModel, Library, LibraryError, ModelSource};

/// What to download.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    /// `owner/name`.
    pub repo: String,
    /// A branch or a commit (`main` by default).
    pub revision: String,
    /// The file's path in the repository.
    pub file: String,
    /// The sha256 the file must have (a catalogue entry that pins one); the Hub's must match.
    pub sha256: Option<String>,
    /// The id of the catalogue entry this is the file of: the installed model is compared with
    /// it (see [`super::catalog::mismatch`]).
    #[serde(default)]
    pub catalog_id: Option<String>,
}

/// How a pull behaves.
#[derive(Debug, Clone)]
pub struct PullOptions {
    /// How many times a request is made before the pull gives up (the first try included).
    pub attempts: u32,
    /// The first wait between tries; it doubles each time.
    pub backoff: Duration,
    /// The least time between two progress reports.
    pub report_every: Duration,
}

impl Default for PullOptions {
    fn default() -> Self {
        PullOptions {
            attempts: 6,
            backoff: Duration::from_secs(1),
            report_every: Duration::from_millis(250),
        }
    }
}

/// Where a pull is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum PullPhase {
    /// Asking the Hub for the file's size and hash.
    Resolving,
    /// Bytes are arriving.
    Downloading,
    /// The connection failed; waiting before the next try.
    Retrying,
    /// Every byte is there; checking the sha256.
    Verifying,
    /// Installed.
    Done,
}

/// A progress report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PullProgress {
    /// The file name it will have in the folder.
    pub file: String,
    /// The phase.
    pub phase: PullPhase,
    /// Bytes on disk.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub downloaded: u64,
    /// The file's size (0 while resolving).
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub total: u64,
    /// Where this pull started (more than 0 when it resumed a part).
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub resumed_from: u64,
    /// Bytes per second since this pull started receiving.
    pub bytes_per_sec: f64,
    /// Seconds left at that speed.
    pub eta_secs: Option<f64>,
    /// Which try this is (1 for the first).
    pub attempt: u32,
    /// Why the last try failed, while retrying.
    pub note: Option<String>,
}

/// Where progress reports go.
pub type ProgressSink = Arc<dyn Fn(&PullProgress) + Send + Sync>;

/// The JSON beside a part file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct State {
    pub source: ModelSource,
    pub size: u64,
    pub sha256: String,
}

pub(crate) fn read_state(path: &Path) -> Option<State> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The file name a pulled file gets in the folder: the last part of its path, when that name
/// works on every system (see [`super::names`]); a pull of a file named otherwise is refused
/// before anything is asked of the Hub.
pub fn local_name(file: &str) -> Result<String, LibraryError> {
    let base = file.rsplit('/').next().unwrap_or(file);
    if !base.to_ascii_lowercase().ends_with(".gguf") {
        return Err(LibraryError::Invalid(format!(
            "\"{file}\" is not a GGUF file (the runtime runs .gguf files)"
        )));
    }
    if file.split('/').any(|p| p == ".." || p.is_empty()) {
        return Err(LibraryError::Invalid(format!(
            "\"{file}\" is not a file path of a repository"
        )));
    }
    new_file_name(base, |fixed| {
        format!(
            "nothing was downloaded. Download it by hand and import it under a name that does, \
             such as \"{fixed}\""
        )
    })
}

/// Download `req` into the library, resuming a part of it, verifying it, then installing it.
/// `cancel` pauses: the part is kept and [`LibraryError::Paused`] returned.
pub async fn pull(
    library: &Library,
    hub: &Hub,
    req: &PullRequest,
    options: &PullOptions,
    progress: ProgressSink,
    cancel: &CancellationToken,
) -> Result<InstalledModel, LibraryError> {
    check_repo(&req.repo)?;
    let name = local_name(&req.file)?;
    let revision = if req.revision.trim().is_empty() {
        "main".to_string()
    } else {
        req.revision.trim().to_string()
    };
    let source = ModelSource {
        repo: req.repo.clone(),
        revision: revision.clone(),
        file: req.file.clone(),
    };
    let mut report = Reporter::new(&name, progress, options.report_every);
    report.send(PullPhase::Resolving, 0, 0, 1, None, true);

    let (size, sha256) = tokio::select! {
        r = resolve(hub, &source) => r?,
        _ = cancel.cancelled() => return Err(LibraryError::Paused { downloaded: 0, total: 0 }),
    };
    if let Some(pinned) = req.sha256.as_deref().map(str::to_ascii_lowercase) {
        if pinned != sha256 {
            return Err(LibraryError::Hub(format!(
                "the Hub lists sha256 {sha256} for {} in {}, but the catalogue pins {pinned}: the file changed upstream; nothing was downloaded",
                req.file, req.repo
            )));
        }
    }

    // Already installed: the same file is done, another one of that name is in the way.
    if let Ok(installed) = library.get(&name) {
        if installed.sha256.as_deref() == Some(sha256.as_str()) {
            report.send(PullPhase::Done, size, size, 1, None, true);
            return Ok(installed);
        }
        return Err(LibraryError::Invalid(format!(
            "a different model named \"{}\" is already installed; remove it first",
            installed.name
        )));
    }

    let downloads = library.downloads_dir();
    std::fs::create_dir_all(&downloads)
        .map_err(|e| LibraryError::io(format!("cannot create {}", downloads.display()), e))?;
    let part_path = downloads.join(format!("{name}.part"));
    let state_path = downloads.join(format!("{name}.json"));

    let mut part = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&part_path)
        .map_err(|e| LibraryError::io(format!("cannot open {}", part_path.display()), e))?;
    if FileExt::try_lock(&part).is_err() {
        return Err(LibraryError::Invalid(format!(
            "{name} is already being downloaded (by another window or process)"
        )));
    }

    // A part of the same file is resumed; anything else starts over.
    let same = read_state(&state_path).is_some_and(|s| s.sha256 == sha256 && s.size == size);
    let mut have = part.metadata().map(|m| m.len()).unwrap_or(0);
    if !same || have > size {
        part.set_len(0)
            .map_err(|e| LibraryError::io(format!("cannot reset {}", part_path.display()), e))?;
        have = 0;
        let state = State {
            source: source.clone(),
            size,
            sha256: sha256.clone(),
        };
        crate::util::fs::write_atomically(
            &state_path,
            &serde_json::to_vec_pretty(&state).unwrap_or_default(),
        )
        .map_err(|e| LibraryError::io(format!("cannot write {}", state_path.display()), e))?;
    }

    let free = fs4::available_space(&downloads).unwrap_or(u64::MAX);
    let needed = size - have;
    // Room for the file and a little more: a disk filled to the last byte breaks other programs.
    if free < needed.saturating_add(64 << 20) {
        return Err(LibraryError::NoSpace {
            file: name,
            needed,
            free,
            dir: library.dir().to_path_buf(),
        });
    }

    report.resumed_from = have;
    let url = hub.file_url(&source.repo, &source.revision, &source.file);
    let mut attempt = 1;
    loop {
        if have == size {
            break;
        }
        match fetch(
            hub,
            &url,
            &mut part,
            &mut have,
            size,
            &mut report,
            attempt,
            cancel,
        )
        .await
        {
            Ok(()) if have == size => break,
            Ok(()) => {
                // The body ended early: retried like a lost connection.
                let why = format!("the server closed the download at {have} of {size} bytes");
                retry_or_fail(&mut report, options, &mut attempt, why, have, size, cancel).await?;
            }
            Err(Fetch::Fatal(e)) => return Err(e),
            Err(Fetch::Paused) => {
                return Err(LibraryError::Paused {
                    downloaded: have,
                    total: size,
                })
            }
            Err(Fetch::Retry(why)) => {
                retry_or_fail(&mut report, options, &mut attempt, why, have, size, cancel).await?;
            }
            Err(Fetch::Restart) => {
                part.set_len(0).map_err(|e| {
                    LibraryError::io(format!("cannot reset {}", part_path.display()), e)
                })?;
                have = 0;
                report.resumed_from = 0;
            }
        }
    }

    report.send(PullPhase::Verifying, size, size, attempt, None, true);
    let hashed = {
        let path = part_path.clone();
        tokio::task::spawn_blocking(move || hash_file(&path, None))
            .await
            .map_err(|e| LibraryError::Hub(format!("hashing stopped: {e}")))?
            .map_err(|e| LibraryError::io(format!("cannot read {}", part_path.display()), e))?
    };
    if hashed != sha256 {
        drop(part);
        let _ = std::fs::remove_file(&part_path);
        let _ = std::fs::remove_file(&state_path);
        return Err(LibraryError::HashMismatch {
            file: name,
            expected: sha256,
            got: hashed,
        });
    }
    let info = match gguf::read(&part_path) {
        Ok(info) => info,
        Err(e) => {
            drop(part);
            let _ = std::fs::remove_file(&part_path);
            let _ = std::fs::remove_file(&state_path);
            return Err(LibraryError::Gguf(e));
        }
    };
    part.sync_all()
        .map_err(|e| LibraryError::io(format!("cannot write {}", part_path.display()), e))?;
    let dest = library.dir().join(&name);
    std::fs::rename(&part_path, &dest).map_err(|e| {
        LibraryError::io(format!("cannot move the download to {}", dest.display()), e)
    })?;
    drop(part);
    let _ = std::fs::remove_file(&state_path);
    library.record_install(
        &name,
        Some(source),
        Some(sha256),
        &info,
        req.catalog_id.clone(),
    )?;
    report.send(PullPhase::Done, size, size, attempt, None, true);
    library.get(&name)
}

async fn retry_or_fail(
    report: &mut Reporter,
    options: &PullOptions,
    attempt: &mut u32,
    why: String,
    have: u64,
    size: u64,
    cancel: &CancellationToken,
) -> Result<(), LibraryError> {
    if *attempt >= options.attempts {
        return Err(LibraryError::Interrupted {
            message: format!("{why} (tried {} times)", *attempt),
            downloaded: have,
            total: size,
        });
    }
    let wait = options.backoff.saturating_mul(1 << (*attempt - 1).min(6));
    tracing::info!("download retry {} in {:?}: {why}", *attempt + 1, wait);
    report.send(PullPhase::Retrying, have, size, *attempt, Some(why), true);
    tokio::select! {
        _ = tokio::time::sleep(wait) => {}
        _ = cancel.cancelled() => return Err(LibraryError::Paused { downloaded: have, total: size }),
    }
    *attempt += 1;
    Ok(())
}

/// The size and sha256 of a file: the tree API, else the headers of its address. A tree answer
/// past the cap ends the pull there: that endpoint is not a Hub to download from.
async fn resolve(hub: &Hub, source: &ModelSource) -> Result<(u64, String), LibraryError> {
    let tree = hub.files(&source.repo, &source.revision).await;
    if let Err(e @ LibraryError::AnswerTooLarge { .. }) = tree {
        return Err(e);
    }
    if let Ok(files) = &tree {
        match files.iter().find(|f| f.path == source.file) {
            Some(f) if f.sha256.is_some() => {
                return Ok((f.size, f.sha256.clone().unwrap_or_default()));
            }
            Some(_) => {}
            None => {
                let ggufs: Vec<&str> = files
                    .iter()
                    .filter(|f| f.path.to_ascii_lowercase().ends_with(".gguf"))
                    .map(|f| f.path.as_str())
                    .collect();
                let listed = if ggufs.is_empty() {
                    "it has no GGUF files".to_string()
                } else {
                    format!("its GGUF files: {}", ggufs.join(", "))
                };
                return Err(LibraryError::Invalid(format!(
                    "{} has no file {} at {} ({listed})",
                    source.repo, source.file, source.revision
                )));
            }
        }
    }
    // The headers of the file's own address, without following the redirect to the CDN.
    let url = hub.file_url(&source.repo, &source.revision, &source.file);
    let resp = hub
        .head(&url)
        .send()
        .await
        .map_err(|e| hub.unreachable(&e))?;
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.trim_matches('"')
                    .trim_start_matches("W/")
                    .trim_matches('"')
                    .to_string()
            })
    };
    let size = header("x-linked-size").and_then(|s| s.parse::<u64>().ok());
    let sha = header("x-linked-etag").filter(|h| is_sha256(h));
    match (size, sha, tree) {
        (Some(size), Some(sha), _) => Ok((size, sha.to_ascii_lowercase())),
        (_, _, Err(e)) => Err(e),
        _ if !resp.status().is_success() => Err(hub.status_error(
            resp.status().as_u16(),
            &format!("{} in {}", source.file, source.repo),
        )),
        _ => Err(LibraryError::Hub(format!(
            "the Hub gives no sha256 for {} in {}, so it cannot be verified; it was not downloaded",
            source.file, source.repo
        ))),
    }
}

enum Fetch {
    /// Not worth another try.
    Fatal(LibraryError),
    /// Another try may work.
    Retry(String),
    /// The server ignored the range: start over.
    Restart,
    /// Cancelled.
    Paused,
}

#[allow(clippy::too_many_arguments)]
async fn fetch(
    hub: &Hub,
    url: &str,
    part: &mut std::fs::File,
    have: &mut u64,
    size: u64,
    report: &mut Reporter,
    attempt: u32,
    cancel: &CancellationToken,
) -> Result<(), Fetch> {
    let mut req = hub.get(url).header("Accept-Encoding", "identity");
    if *have > 0 {
        req = req.header("Range", format!("bytes={}-", *have));
    }
    let send = tokio::select! {
        r = req.send() => r,
        _ = cancel.cancelled() => return Err(Fetch::Paused),
    };
    let mut resp = match send {
        Ok(r) => r,
        Err(e) => return Err(Fetch::Retry(hub.unreachable(&e).to_string())),
    };
    let status = resp.status().as_u16();
    let html = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"));
    match status {
        206 => {
            let start = resp
                .headers()
                .get(reqwest::header::CONTENT_RANGE)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("bytes "))
                .and_then(|v| v.split('-').next())
                .and_then(|v| v.parse::<u64>().ok());
            if start != Some(*have) {
                return Err(Fetch::Restart);
            }
        }
        200 if html => {
            return Err(Fetch::Fatal(LibraryError::Hub(format!(
                "{} answered with a web page (text/html), not the model file; the part downloaded so far is kept",
                hub.shown_url(url)
            ))))
        }
        200 if *have > 0 => return Err(Fetch::Restart),
        200 => {}
        416 => return Err(Fetch::Restart),
        408 | 429 | 500..=599 => return Err(Fetch::Retry(format!("the server answered HTTP {status}"))),
        s => {
            return Err(Fetch::Fatal(
                hub.status_error(s, &format!("the file {}", hub.shown_url(url))),
            ))
        }
    }
    part.seek(SeekFrom::Start(*have))
        .map_err(|e| Fetch::Fatal(LibraryError::io("cannot write the download", e)))?;
    loop {
        let chunk = tokio::select! {
            c = resp.chunk() => c,
            _ = cancel.cancelled() => {
                let _ = part.flush();
                return Err(Fetch::Paused);
            }
        };
        match chunk {
            Ok(Some(bytes)) => {
                if *have + bytes.len() as u64 > size {
                    return Err(Fetch::Fatal(LibraryError::Hub(format!(
                        "{} sent more than the {size} bytes the Hub lists for it",
                        hub.shown_url(url)
                    ))));
                }
                part.write_all(&bytes).map_err(|e| {
                    Fetch::Fatal(LibraryError::io(
                        "cannot write the download (is the disk full?)",
                        e,
                    ))
                })?;
                *have += bytes.len() as u64;
                report.send(PullPhase::Downloading, *have, size, attempt, None, false);
            }
            Ok(None) => return Ok(()),
            Err(e) => return Err(Fetch::Retry(hub.unreachable(&e).to_string())),
        }
    }
}

/// The sha256 of the file at `path`, read once; each block is also written to `copy` when given
/// (an import hashes while it copies).
pub(crate) fn hash_file(
    path: &Path,
    mut copy: Option<&mut std::fs::File>,
) -> std::io::Result<String> {
    use sha2::Digest;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        if let Some(out) = copy.as_mut() {
            out.write_all(&buf[..n])?;
        }
    }
    Ok(hex(&hasher.finalize()))
}

/// Progress reports, at most one per `every` while downloading.
struct Reporter {
    file: String,
    sink: ProgressSink,
    every: Duration,
    last: Option<Instant>,
    last_phase: Option<PullPhase>,
    started: Option<(Instant, u64)>,
    resumed_from: u64,
}

impl Reporter {
    fn new(file: &str, sink: ProgressSink, every: Duration) -> Self {
        Reporter {
            file: file.to_string(),
            sink,
            every,
            last: None,
            last_phase: None,
            started: None,
            resumed_from: 0,
        }
    }

    fn send(
        &mut self,
        phase: PullPhase,
        downloaded: u64,
        total: u64,
        attempt: u32,
        note: Option<String>,
        always: bool,
    ) {
        let now = Instant::now();
        if phase == PullPhase::Downloading && self.started.is_none() {
            self.started = Some((now, downloaded));
        }
        let (t0, b0) = self.started.unwrap_or((now, downloaded));
        // A new phase and the last byte are always reported; bytes on their way at most once
        // per `every`.
        let news = self.last_phase != Some(phase) || (total > 0 && downloaded == total);
        if !always
            && !news
            && self
                .last
                .is_some_and(|l| now.duration_since(l) < self.every)
        {
            return;
        }
        self.last = Some(now);
        self.last_phase = Some(phase);
        let secs = now.duration_since(t0).as_secs_f64();
        let bytes_per_sec = if secs > 0.0 {
            downloaded.saturating_sub(b0) as f64 / secs
        } else {
            0.0
        };
        let eta_secs = (bytes_per_sec > 0.0 && total >= downloaded)
            .then(|| (total - downloaded) as f64 / bytes_per_sec);
        (self.sink)(&PullProgress {
            file: self.file.clone(),
            phase,
            downloaded,
            total,
            resumed_from: self.resumed_from,
            bytes_per_sec,
            eta_secs,
            attempt,
            note,
        });
    }
}
