//! The extraction worker: reads the files its supervisor names, one request per line on
//! standard input, and writes what it reads as JSON lines on standard output (the protocol is
//! in `artifactflow_extract::protocol`).
//!
//! It exists so that a hostile or broken file can only take this process down: pdfium runs
//! here, never in the app. A panic while reading a file is reported as a `crashed` error for
//! that file, and the worker then exits (status 3), since the PDF engine's state is no longer
//! to be trusted; a crash inside pdfium ends the process without a word, which the supervisor
//! reports for the file. The worker ends when its standard input closes.

use std::io::{BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use artifactflow_extract::protocol::{Progress, Reply, Request};
use artifactflow_extract::{extract, ErrorKind, ExtractError, Page, PageSink, SourceMeta};

/// Progress lines are written at most this often (and always for the last page).
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// Writes replies as JSON lines, flushing each.
struct Replies<W: Write> {
    out: W,
    last_progress: Option<Instant>,
}

impl<W: Write> Replies<W> {
    fn send(&mut self, reply: &Reply) -> Result<(), ExtractError> {
        serde_json::to_writer(&mut self.out, reply)
            .map_err(std::io::Error::from)
            .and_then(|()| self.out.write_all(b"\n"))
            .and_then(|()| self.out.flush())
            .map_err(|e| {
                ExtractError::new(
                    ErrorKind::Crashed,
                    format!("the worker could not write its output: {e}"),
                )
            })
    }
}

impl<W: Write> PageSink for Replies<W> {
    fn meta(&mut self, meta: &SourceMeta) -> Result<(), ExtractError> {
        self.send(&Reply::Meta { meta: meta.clone() })
    }

    fn progress(&mut self, page: u32, pages: Option<u32>) -> Result<(), ExtractError> {
        let due = self
            .last_progress
            .is_none_or(|at| at.elapsed() >= PROGRESS_EVERY);
        if due || Some(page) == pages {
            self.last_progress = Some(Instant::now());
            self.send(&Reply::Progress {
                progress: Progress { page, pages },
            })?;
        }
        Ok(())
    }

    fn page(&mut self, page: Page) -> Result<(), ExtractError> {
        self.send(&Reply::Page(page))
    }
}

fn main() -> ExitCode {
    let stdin = std::io::stdin().lock();
    let mut replies = Replies {
        out: std::io::stdout().lock(),
        last_progress: None,
    };
    for line in stdin.lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let request: Request = match serde_json::from_str(&line) {
            Ok(request) => request,
            Err(e) => {
                let error = ExtractError::new(
                    ErrorKind::BadRequest,
                    format!("not a request ({e}): expected {{\"path\": \"…\", \"limits\": {{…}}}}"),
                );
                if replies.send(&Reply::Error { error }).is_err() {
                    return ExitCode::FAILURE;
                }
                continue;
            }
        };
        replies.last_progress = None;
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            extract(Path::new(&request.path), &request.limits, &mut replies)
        }));
        let (reply, crashed) = match outcome {
            Ok(Ok(done)) => (Reply::Done { done }, false),
            Ok(Err(error)) => (Reply::Error { error }, false),
            Err(panic) => {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "no message".into());
                let error = ExtractError::new(
                    ErrorKind::Crashed,
                    format!("the reader failed on this file ({why})"),
                );
                (Reply::Error { error }, true)
            }
        };
        if replies.send(&reply).is_err() {
            return ExitCode::FAILURE;
        }
        if crashed {
            return ExitCode::from(3);
        }
    }
    ExitCode::SUCCESS
}
