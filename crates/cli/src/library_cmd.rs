//! `artifactflow-cli library …`: users' own sources. `add` reads files and folders into the
//! library (progress on stderr, Ctrl+C cancels and still prints the summary, exit 1 when any
//! file failed); `list`, `show`, `search`, `export`, `rm` and `jobs` read and change it.
//!
//! Text from the files (titles, passages, Markdown) is untrusted and printed through
//! [`term::clean`]; `--json` output is exact, and `export` writes the original bytes as they are.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use engine::api::library::{self, AddOptions, Progress, ShowAs};
use engine::artifacts::store::human_size;
use engine::context::AppContext;
use engine::source_store::ItemStatus;
use tokio_util::sync::CancellationToken;

use crate::signals::{INTERRUPTED, TERMINATED};
use crate::term;

/// Library subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum LibraryCommand {
    /// Add files and folders (recursively) to the library; exit 1 when any file failed.
    Add {
        /// Files and folders.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Only files below a folder matching this glob (repeatable; e.g. '**/*.pdf').
        #[arg(long, value_name = "GLOB")]
        include: Vec<String>,
        /// Leave out files below a folder matching this glob (repeatable).
        #[arg(long, value_name = "GLOB")]
        exclude: Vec<String>,
        /// Files over this many MB fail as too large (default: no limit).
        #[arg(long, value_name = "N")]
        max_file_mb: Option<u64>,
        /// Print the summary as JSON (job_id, status, counts, files: [{path, status, id,
        /// pages, error_kind, message}], notices).
        #[arg(long)]
        json: bool,
    },
    /// List the sources, most recently added first.
    List {
        /// Print JSON (an array of sources with their metadata).
        #[arg(long)]
        json: bool,
    },
    /// A source's metadata, or its extracted text.
    Show {
        /// The source's id (`src_…`).
        id: String,
        /// The plain text: no markup, no page markers, no running headers or footers.
        #[arg(long, conflicts_with = "markdown")]
        text: bool,
        /// The Markdown, with page markers (`<!-- page 7 -->`).
        #[arg(long)]
        markdown: bool,
        /// Print JSON ({"source": {..}, "text": ".."}).
        #[arg(long)]
        json: bool,
    },
    /// Remove a source (its original goes when no other source has the same bytes).
    Rm {
        /// The source's id.
        id: String,
    },
    /// Search the sources' passages: best first, with page and line range; exit 1 when
    /// nothing matches.
    Search {
        /// Words (all required; the last also as a prefix).
        words: String,
        /// At most this many passages.
        #[arg(long, default_value_t = 10, value_name = "N")]
        k: usize,
        /// Print JSON (an array of {id, title, page, line_first, line_last, score, passage}).
        #[arg(long)]
        json: bool,
    },
    /// Write a source's original file, byte for byte, to FILE.
    Export {
        /// The source's id.
        id: String,
        /// Where to write it.
        file: PathBuf,
    },
    /// The recent add jobs, newest first (opening the library rolls back jobs cut short).
    Jobs {
        /// Print JSON ({"jobs": [..], "notices": [..]}).
        #[arg(long)]
        json: bool,
    },
}

/// Run one library subcommand.
pub fn run(ctx: &AppContext, cmd: LibraryCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        LibraryCommand::Add {
            paths,
            include,
            exclude,
            max_file_mb,
            json,
        } => add(
            ctx,
            &paths,
            AddOptions {
                include,
                exclude,
                max_file_mb,
                origin: "cli".into(),
                ..AddOptions::default()
            },
            json,
        ),
        LibraryCommand::List { json } => {
            let sources = library::list(ctx)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&sources)?);
            } else if sources.is_empty() {
                println!("No sources. Add some with `artifactflow-cli library add PATH…`.");
            } else {
                for s in &sources {
                    let pages = s
                        .page_count
                        .map_or(String::new(), |n| format!(", {n} pages"));
                    println!(
                        "{}  {}  ({}, {}{pages})  {}",
                        s.id,
                        term::clean(&s.title),
                        s.kind,
                        human_size(s.size.max(0) as u64),
                        term::clean(s.path.as_deref().unwrap_or(&s.file_name))
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        LibraryCommand::Show {
            id,
            text,
            markdown,
            json,
        } => {
            let what = if text {
                ShowAs::Text
            } else if markdown {
                ShowAs::Markdown
            } else {
                ShowAs::Meta
            };
            let shown = library::show(ctx, &id, what)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else if let Some(text) = &shown.text {
                print!("{}", term::clean(text));
            } else {
                let s = &shown.source;
                println!("{}  {}", s.id, term::clean(&s.title));
                println!(
                    "  file:      {}",
                    term::clean(s.path.as_deref().unwrap_or(&s.file_name))
                );
                println!("  type:      {} ({})", s.kind, s.mime);
                println!(
                    "  size:      {} (sha256 {})",
                    human_size(s.size.max(0) as u64),
                    s.sha256
                );
                if let Some(pages) = s.page_count {
                    println!("  pages:     {pages}");
                }
                if let Some(author) = &s.author {
                    println!("  author:    {}", term::clean(author));
                }
                println!("  version:   {} (added {})", s.version, s.added_at);
                println!("  extractor: {}", s.extractor);
                if let Some(warnings) = s.warnings.as_array().filter(|w| !w.is_empty()) {
                    for w in warnings {
                        let message = w["message"].as_str().unwrap_or_default();
                        println!("  warning:   {}", term::clean(message));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        LibraryCommand::Rm { id } => {
            if library::rm(ctx, &id)? {
                println!("Removed {id}.");
                Ok(ExitCode::SUCCESS)
            } else {
                anyhow::bail!(
                    "no source '{id}' in the library (see `artifactflow-cli library list`)"
                )
            }
        }
        LibraryCommand::Search { words, k, json } => {
            let hits = library::search(ctx, &words, k.max(1))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&hits)?);
            } else {
                for hit in &hits {
                    let page = hit.page.map_or(String::new(), |p| format!("p. {p}, "));
                    println!(
                        "{}  {}  ({page}lines {}–{}, score {:.2})",
                        hit.id,
                        term::clean(&hit.title),
                        hit.line_first,
                        hit.line_last,
                        hit.score
                    );
                    for line in hit.passage.lines() {
                        println!("    {}", term::clean(line));
                    }
                }
                if hits.is_empty() {
                    eprintln!("No passage matches.");
                }
            }
            Ok(if hits.is_empty() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        LibraryCommand::Export { id, file } => {
            let bytes = library::export_original(ctx, &id, &file)?;
            println!("Wrote {} to {}.", human_size(bytes), file.display());
            Ok(ExitCode::SUCCESS)
        }
        LibraryCommand::Jobs { json } => {
            let (jobs, notices) = library::jobs(ctx, 50)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &serde_json::json!({"jobs": jobs, "notices": notices})
                    )?
                );
            } else {
                for notice in &notices {
                    eprintln!("note: {notice}");
                }
                if jobs.is_empty() {
                    println!("No jobs.");
                }
                for job in &jobs {
                    let counts: Vec<String> =
                        job.counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
                    println!(
                        "{}  {}  {} ({})  started {}",
                        job.id,
                        job.status,
                        count(job.files_total.max(0) as u64, "file"),
                        counts.join(", "),
                        job.created_at
                    );
                    if let Some(notice) = &job.notice {
                        println!("    {}", term::clean(notice));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `library add`: the job, with progress on stderr and Ctrl+C (or SIGTERM) cancelling it.
fn add(
    ctx: &AppContext,
    paths: &[PathBuf],
    options: AddOptions,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let cancel = CancellationToken::new();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let signal = cancel_on_signal(&runtime, cancel.clone())?;
    let tty = std::io::stderr().is_terminal();
    let report = |p: &Progress| print_progress(p, tty);
    let added = library::add(ctx, paths, &options, &cancel, &report)
        .context("cannot add to the library")?;
    if tty {
        eprint!("\r\x1b[2K");
    }
    let summary = &added.summary;
    let any_failed = summary.failed > 0;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "job_id": summary.job_id,
                "status": summary.status,
                "files_total": summary.files_total,
                "added": summary.added,
                "new_versions": summary.new_versions,
                "duplicates": summary.duplicates,
                "failed": summary.failed,
                "cancelled": summary.cancelled,
                "pages": summary.pages,
                "bytes_total": summary.bytes_total,
                "seconds": summary.seconds,
                "files": summary.files,
                "notices": added.notices,
            }))?
        );
    } else {
        for notice in &added.notices {
            eprintln!("note: {}", term::clean(notice));
        }
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "{} {} in {:.1} s: {} added, {}, {}, {} failed{}; {}.",
            if summary.status == engine::source_store::JobStatus::Cancelled {
                "Cancelled after"
            } else {
                "Done:"
            },
            count(summary.files_total as u64, "file"),
            summary.seconds,
            summary.added,
            count(summary.new_versions as u64, "new version"),
            count(summary.duplicates as u64, "duplicate"),
            summary.failed,
            if summary.cancelled > 0 {
                format!(", {} not added (cancelled)", summary.cancelled)
            } else {
                String::new()
            },
            count(summary.pages, "page")
        )?;
        if any_failed {
            writeln!(out, "Failed:")?;
            for f in summary
                .files
                .iter()
                .filter(|f| f.status == ItemStatus::Failed)
            {
                writeln!(
                    out,
                    "  {}: {}: {}",
                    term::clean(&f.path),
                    f.error_kind.as_deref().unwrap_or("failed"),
                    term::clean(f.message.as_deref().unwrap_or(""))
                )?;
            }
        }
    }
    drop(runtime);
    if let Some(code) = signal.code() {
        return Ok(ExitCode::from(code as u8));
    }
    Ok(if any_failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The signal that cancelled the job, once one came.
struct SignalSeen(std::sync::Arc<std::sync::atomic::AtomicI32>);

impl SignalSeen {
    fn code(&self) -> Option<i32> {
        match self.0.load(std::sync::atomic::Ordering::SeqCst) {
            0 => None,
            code => Some(code),
        }
    }
}

/// Ctrl+C or SIGTERM cancels the job (workers are killed, the files being read rolled back, the
/// summary printed); a second one exits at once.
fn cancel_on_signal(
    runtime: &tokio::runtime::Runtime,
    cancel: CancellationToken,
) -> anyhow::Result<SignalSeen> {
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    let _guard = runtime.enter();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        let seen = seen.clone();
        runtime.spawn(async move {
            loop {
                let code = tokio::select! {
                    _ = interrupt.recv() => INTERRUPTED,
                    _ = terminate.recv() => TERMINATED,
                };
                if cancel.is_cancelled() {
                    std::process::exit(code);
                }
                seen.store(code, std::sync::atomic::Ordering::SeqCst);
                eprintln!("\n[cancelling…]");
                cancel.cancel();
            }
        });
    }
    #[cfg(not(unix))]
    {
        let seen = seen.clone();
        runtime.spawn(async move {
            loop {
                let _ = tokio::signal::ctrl_c().await;
                if cancel.is_cancelled() {
                    std::process::exit(INTERRUPTED);
                }
                seen.store(INTERRUPTED, std::sync::atomic::Ordering::SeqCst);
                cancel.cancel();
            }
        });
    }
    Ok(SignalSeen(seen))
}

/// One line per finished file (redrawn in place for the file being read on a terminal).
fn print_progress(p: &Progress, tty: bool) {
    let mut err = std::io::stderr().lock();
    let counter = format!(
        "[{}/{}] {} pages, {} of {}",
        p.files_done,
        p.files_total,
        p.pages,
        human_size(p.bytes_done),
        human_size(p.bytes_total)
    );
    if let Some(f) = &p.finished {
        let what = match f.status {
            ItemStatus::Added => format!("added as {}", f.id.as_deref().unwrap_or("")),
            ItemStatus::NewVersion => format!("new version of {}", f.id.as_deref().unwrap_or("")),
            ItemStatus::Duplicate => {
                term::clean(f.message.as_deref().unwrap_or("duplicate")).into_owned()
            }
            ItemStatus::Failed => format!(
                "failed: {}: {}",
                f.error_kind.as_deref().unwrap_or("failed"),
                term::clean(f.message.as_deref().unwrap_or(""))
            ),
            _ => "not added (cancelled)".to_string(),
        };
        if tty {
            let _ = write!(err, "\r\x1b[2K");
        }
        let _ = writeln!(err, "{counter} {}: {what}", term::clean(&f.path));
    } else if let (Some(current), true) = (&p.current, tty) {
        let _ = write!(err, "\r\x1b[2K{counter} reading {}", term::clean(current));
    }
}

/// "1 file", "3 files".
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_read_as_english() {
        assert_eq!(count(1, "file"), "1 file");
        assert_eq!(count(0, "page"), "0 pages");
        assert_eq!(count(2, "new version"), "2 new versions");
    }
}
