//! The `artifactflow-extract` worker processes: found, started, given one file at a time, and
//! watched.
//!
//! A [`Worker`] is one child process reading request lines on its standard input and answering
//! with JSON lines (the protocol is `artifactflow_extract::protocol`). A thread reads its
//! output into a channel, so the supervisor waits for each line with a deadline: the
//! [`Watchdog`] kills the worker when no line has come for a while (30 s by default) or when a
//! file has taken longer than its allowance (60 s plus 1 s per MB). A worker that dies on a
//! file (a crash in pdfium, a signal) ends that file with a located error and is started again
//! for the next file; the batch always goes on. Cancellation is checked between lines, at
//! least five times a second, and kills the worker at once.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use artifactflow_extract::protocol::{Progress, Reply, Request};
use artifactflow_extract::{ErrorKind, ExtractError, Page, SourceMeta, Summary};
use tokio_util::sync::CancellationToken;

/// The environment variable naming the worker binary (overrides where it is looked for).
pub const EXTRACT_ENV: &str = "ARTIFACTFLOW_EXTRACT";

/// The worker binary's file name.
pub const EXTRACT_BIN: &str = if cfg!(windows) {
    "artifactflow-extract.exe"
} else {
    "artifactflow-extract"
};

/// Output lines read ahead of the supervisor at most.
const OUTPUT_LINES_BUFFERED: usize = 64;

/// How often a wait for the worker looks at the cancellation token.
const CANCEL_CHECK: Duration = Duration::from_millis(100);

/// Where the worker is: [`EXTRACT_ENV`] when set, else beside the running program, else one
/// folder up (test programs run from `target/*/deps`).
pub fn worker_path() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(EXTRACT_ENV) {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the extraction worker ({EXTRACT_BIN}): {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new(".")).to_path_buf();
    let found = [Some(dir.as_path()), dir.parent()]
        .into_iter()
        .flatten()
        .map(|d| d.join(EXTRACT_BIN))
        .find(|p| p.is_file());
    found.ok_or_else(|| {
        format!(
            "the extraction worker ({EXTRACT_BIN}) is not installed next to {}: reinstall \
                 ArtifactFlow (in a source checkout: `cargo build -p artifactflow-extract`), or \
                 set {EXTRACT_ENV} to its path",
            dir.display()
        )
    })
}

/// When a worker is taken for hung and killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watchdog {
    /// No output line for this long.
    pub silence: Duration,
    /// A file may take this long…
    pub base: Duration,
    /// …plus this much per MB (10^6 bytes) of its size.
    pub per_mb: Duration,
}

impl Default for Watchdog {
    fn default() -> Self {
        Watchdog {
            silence: Duration::from_secs(30),
            base: Duration::from_secs(60),
            per_mb: Duration::from_secs(1),
        }
    }
}

impl Watchdog {
    /// The wall-clock allowance for a file of `size` bytes.
    pub fn allowance(&self, size: u64) -> Duration {
        self.base + self.per_mb.mul_f64(size as f64 / 1e6)
    }
}

/// What a worker streams while it reads a file.
#[derive(Debug)]
pub enum Event {
    /// The file's metadata (first).
    Meta(SourceMeta),
    /// Reading reached a page.
    Progress(Progress),
    /// One page of the result.
    Page(Page),
}

/// Why a file was not read.
#[derive(Debug)]
pub enum Failure {
    /// The file could not be read; the error says why and where.
    File(ExtractError),
    /// Whoever consumed the events gave up (a database write failed): this message.
    Sink(String),
    /// The job was cancelled.
    Cancelled,
}

/// One running worker process.
pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Whether it may take another file (false after it was killed or died).
    usable: bool,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Worker {
    /// Starts the worker at `program`.
    pub fn start(program: &Path) -> std::io::Result<Worker> {
        let mut command = Command::new(program);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        // Bounded, so a worker that outpaces the database waits instead of filling memory.
        let (sender, lines) = mpsc::sync_channel(OUTPUT_LINES_BUFFERED);
        std::thread::Builder::new()
            .name("extract-output".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if sender.send(line).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Worker {
            child,
            stdin,
            lines,
            usable: true,
        })
    }

    /// Whether the worker can take another file.
    pub fn usable(&self) -> bool {
        self.usable
    }

    fn kill(&mut self) {
        self.usable = false;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Reads one file of `size` bytes, handing each event to `on_event`, within `watchdog`.
    pub fn extract(
        &mut self,
        request: &Request,
        size: u64,
        watchdog: &Watchdog,
        cancel: &CancellationToken,
        on_event: &mut dyn FnMut(Event) -> Result<(), String>,
    ) -> Result<Summary, Failure> {
        let line = serde_json::to_string(request).expect("a request serialises");
        if writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .is_err()
        {
            return Err(Failure::File(self.died(None, None)));
        }
        let started = Instant::now();
        let allowance = watchdog.allowance(size);
        let mut last_line = Instant::now();
        let mut page: Option<u32> = None;
        let mut pages: Option<u32> = None;
        loop {
            if cancel.is_cancelled() {
                self.kill();
                return Err(Failure::Cancelled);
            }
            let silent_for = last_line.elapsed();
            if silent_for >= watchdog.silence {
                self.kill();
                let why = format!("no progress for {} s", watchdog.silence.as_secs());
                return Err(Failure::File(stopped(
                    ErrorKind::Timeout,
                    page,
                    pages,
                    &why,
                )));
            }
            if started.elapsed() >= allowance {
                self.kill();
                let why = format!(
                    "it took longer than the {} s allowed for a file of this size",
                    allowance.as_secs()
                );
                return Err(Failure::File(stopped(
                    ErrorKind::Timeout,
                    page,
                    pages,
                    &why,
                )));
            }
            let wait = (watchdog.silence.saturating_sub(silent_for))
                .min(allowance.saturating_sub(started.elapsed()))
                .min(CANCEL_CHECK);
            let line = match self.lines.recv_timeout(wait) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Failure::File(self.died(page, pages)));
                }
            };
            last_line = Instant::now();
            let reply: Reply = match serde_json::from_str(&line) {
                Ok(reply) => reply,
                Err(e) => {
                    self.kill();
                    return Err(Failure::File(ExtractError::new(
                        ErrorKind::Crashed,
                        format!("the extractor wrote something that is not its protocol ({e})"),
                    )));
                }
            };
            let event = match reply {
                Reply::Done { done } => return Ok(done),
                Reply::Error { error } => {
                    if error.kind == ErrorKind::Crashed {
                        // The worker exits after a panic; the next file gets a new one.
                        self.kill();
                    }
                    return Err(Failure::File(error));
                }
                Reply::Meta { meta } => {
                    pages = meta.pages;
                    Event::Meta(meta)
                }
                Reply::Progress { progress } => {
                    pages = progress.pages.or(pages);
                    page = Some(progress.page).max(page);
                    Event::Progress(progress)
                }
                Reply::Page(p) => {
                    page = p.page.or(page);
                    Event::Page(p)
                }
            };
            if let Err(why) = on_event(event) {
                self.kill();
                return Err(Failure::Sink(why));
            }
        }
    }

    /// The worker's output ended in the middle of a file: how it died.
    fn died(&mut self, page: Option<u32>, pages: Option<u32>) -> ExtractError {
        self.usable = false;
        let status = self.child.wait().ok();
        let how = status.map_or_else(|| "it could not be waited for".to_string(), describe_exit);
        let mut error = ExtractError::new(
            ErrorKind::Crashed,
            format!(
                "the extractor crashed on this file ({how}){}",
                where_stopped(page, pages)
            ),
        );
        error.page = page;
        error
    }
}

/// "signal 11" or "exit status 3".
fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => status.to_string(),
    }
}

/// ", after page 12 of 480" (or nothing when no page was read).
fn where_stopped(page: Option<u32>, pages: Option<u32>) -> String {
    match (page, pages) {
        (Some(page), Some(pages)) => format!(", after page {page} of {pages}"),
        (Some(page), None) => format!(", after page {page}"),
        _ => String::new(),
    }
}

/// "stopped after page 12 of 480: no progress for 30 s".
fn stopped(kind: ErrorKind, page: Option<u32>, pages: Option<u32>, why: &str) -> ExtractError {
    let at = match (page, pages) {
        (Some(page), Some(pages)) => format!("stopped after page {page} of {pages}"),
        (Some(page), None) => format!("stopped after page {page}"),
        (None, Some(pages)) => format!("stopped before the first of {pages} pages"),
        (None, None) => "stopped before reading any page".to_string(),
    };
    let mut error = ExtractError::new(kind, format!("{at}: {why}"));
    error.page = page;
    error
}
