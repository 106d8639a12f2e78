//! `artifactflow-cli models list|catalog|search|files|pull|import|rm|check`: the model library
//! (the GGUF files `api: local` profiles run), over `engine::api::models`; `check` is in
//! `models_check_cmd`. `rm` (or `remove`) says which profiles ran the model it removes.
//!
//! `pull` shows progress on stderr (one line redrawn at a terminal, a line every few seconds
//! otherwise). Ctrl+C pauses it: the part is kept and the same command resumes it.
//!
//! The commands that ask the Hub (`search`, `files`, `pull`) first print a warning on stderr
//! when the Hub's token is kept back (`HF_TOKEN` set, `HF_ENDPOINT` plain http to another
//! computer), saying why and never the token. A Hub that cannot be reached is one line, the
//! library's sentence: what failed at which address, and what to check. A pulled file that is
//! not what its catalogue entry describes (another architecture or size) is installed with a
//! warning saying what it is, which `list` repeats.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::api::models;
use engine::context::AppContext;
use engine::models::library::{Fit, Hub, LibraryError, ProgressSink, PullPhase, PullProgress};
use tokio_util::sync::CancellationToken;

use crate::term::clean;

/// Model library subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ModelsCommand {
    /// The installed models (size, quantisation, context, architecture, last used) and the
    /// downloads that have not finished.
    List {
        /// Print JSON (keys: dir, installed, downloads, machine).
        #[arg(long)]
        json: bool,
    },
    /// Small models that call tools, with how each fits this computer.
    Catalog {
        /// Print JSON (keys: machine, items).
        #[arg(long)]
        json: bool,
    },
    /// Search the Hugging Face Hub for GGUF repositories.
    Search {
        /// Words of the model's name.
        query: String,
        /// Print JSON (a list of {id, downloads, likes, gated}).
        #[arg(long)]
        json: bool,
    },
    /// The GGUF files of a Hub repository, by size, with how each fits.
    Files {
        /// `owner/name`.
        repo: String,
        /// A branch or commit.
        #[arg(long, default_value = "main")]
        revision: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Download a model: a catalogue id (`qwen3-1.7b`), `owner/name/file.gguf` or
    /// `owner/name:file.gguf`. Resumes a download that was paused or cut; verifies its sha256.
    Pull {
        /// What to download.
        target: String,
        /// A branch or commit.
        #[arg(long, default_value = "main")]
        revision: String,
        /// Print the installed model as JSON when done.
        #[arg(long)]
        json: bool,
    },
    /// Copy a .gguf file into the models folder (its header is checked first).
    Import {
        /// The file.
        path: PathBuf,
        /// Print the installed model as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a model, or a download that has not finished. Says which profiles ran the model:
    /// they have no model until another is picked.
    #[command(visible_alias = "remove")]
    Rm {
        /// The model's name (its file name, with or without .gguf).
        name: String,
        /// Print JSON (keys: removed, the paths; profiles, the profiles that ran it;
        /// stopped_runs; runtime_stopped).
        #[arg(long)]
        json: bool,
    },
    /// How well a model calls tools: about 200 built-in items asked in a mode and scored by
    /// rules (a score and a breakdown by kind); the result is kept per model file, mode and
    /// guidance.
    Check(crate::models_check_cmd::CheckArgs),
}

pub fn run(ctx: AppContext, cmd: ModelsCommand) -> anyhow::Result<ExitCode> {
    let ctx = Arc::new(ctx);
    let ctx = &ctx;
    match cmd {
        ModelsCommand::Check(args) => crate::models_check_cmd::run(Arc::clone(ctx), args),
        ModelsCommand::List { json } => list(ctx, json),
        ModelsCommand::Catalog { json } => catalog(ctx, json),
        ModelsCommand::Search { query, json } => {
            let hub = hub(ctx);
            let repos = runtime()?.block_on(models::search(&hub, &query))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&repos)?);
            } else if repos.is_empty() {
                eprintln!("no GGUF repositories match \"{}\"", clean(&query));
            } else {
                for r in &repos {
                    let gated = if r.gated {
                        "  (gated: needs HF_TOKEN)"
                    } else {
                        ""
                    };
                    println!("{:<60} {:>10} downloads{gated}", clean(&r.id), r.downloads);
                }
                eprintln!("see a repository's files: artifactflow-cli models files OWNER/NAME");
            }
            Ok(ExitCode::SUCCESS)
        }
        ModelsCommand::Files {
            repo,
            revision,
            json,
        } => {
            let hub = hub(ctx);
            let files = runtime()?.block_on(models::files(ctx, &hub, &repo, &revision))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&files)?);
            } else if files.is_empty() {
                eprintln!("{} has no GGUF files", clean(&repo));
            } else {
                for f in &files {
                    println!(
                        "{:<56} {:>8} {:>9}  {}",
                        clean(&f.file.path),
                        f.file.quantization.as_deref().unwrap_or("?"),
                        size(f.file.size),
                        fit_label(f.fit.fit)
                    );
                }
                eprintln!(
                    "download one: artifactflow-cli models pull {}/FILE",
                    clean(&repo)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        ModelsCommand::Pull {
            target,
            revision,
            json,
        } => pull(ctx, &target, &revision, json),
        ModelsCommand::Import { path, json } => {
            let model = models::import(ctx, &path)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&model)?);
            } else {
                eprintln!(
                    "imported {} into {}; use it with `api: local` and `model: {}`",
                    clean(&model.file),
                    ctx.paths().models_dir().display(),
                    clean(&model.name)
                );
                if let Some(why) = &model.template_refused {
                    eprintln!("{}", clean(&template_refused_note(why)));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ModelsCommand::Rm { name, json } => {
            let removal = models::remove(ctx, &name)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&removal)?);
            } else {
                for p in &removal.removed {
                    eprintln!("removed {}", p.display());
                }
                if let Some(note) = models::profiles_left_note(&removal.profiles) {
                    eprintln!("{}", clean(&note));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The Hub, after a warning on stderr when its token is kept back (see the module docs).
fn hub(ctx: &AppContext) -> Hub {
    let hub = models::hub(ctx);
    if let Some(warning) = hub.warning() {
        eprintln!("warning: {}", clean(warning));
    }
    hub
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

fn fit_label(fit: Fit) -> &'static str {
    match fit {
        Fit::Good => "fits",
        Fit::Tight => "tight",
        Fit::TooBig => "too big",
        Fit::NoDisk => "no disk space",
    }
}

fn ago(secs: Option<u64>) -> String {
    let Some(at) = secs else {
        return "never".into();
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(at);
    let d = now.saturating_sub(at);
    match d {
        0..=59 => "just now".into(),
        60..=3599 => format!("{} min ago", d / 60),
        3600..=86399 => format!("{} h ago", d / 3600),
        _ => format!("{} days ago", d / 86400),
    }
}

/// What a refused chat template means for the person running the model.
fn template_refused_note(why: &str) -> String {
    format!(
        "warning: the runtime refuses this file's chat template ({}); with native tool calls \
         the tools go in the system message instead",
        why.trim_start_matches("the chat template ")
    )
}

fn list(ctx: &AppContext, json: bool) -> anyhow::Result<ExitCode> {
    let view = models::list(ctx)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&view)?);
        return Ok(ExitCode::SUCCESS);
    }
    if view.installed.is_empty() && view.downloads.is_empty() {
        eprintln!(
            "no models in {} yet: `artifactflow-cli models catalog` lists some to pull",
            view.dir.display()
        );
    }
    for m in &view.installed {
        match (&m.info, &m.error) {
            (Some(info), _) => println!(
                "{:<44} {:>9} {:<8} {:>7} ctx  {:<10} used {}{}",
                clean(&m.name),
                size(m.size),
                info.quantization.as_deref().unwrap_or("?"),
                info.context_length.map_or("?".into(), |c| c.to_string()),
                clean(info.architecture.as_deref().unwrap_or("?")),
                ago(m.last_used),
                if info.has_chat_template {
                    ""
                } else {
                    "  (no chat template: its architecture's known one is used, else ChatML)"
                }
            ),
            (None, Some(e)) => println!(
                "{:<44} {:>9} unusable: {}",
                clean(&m.name),
                size(m.size),
                clean(e)
            ),
            (None, None) => {}
        }
        if let Some(why) = &m.template_refused {
            println!("{:<44} {}", "", clean(&template_refused_note(why)));
        }
        if let Some(mismatch) = &m.catalog_mismatch {
            println!("{:<44} warning: {}", "", clean(&mismatch.message));
        }
    }
    for d in &view.downloads {
        let pct = if d.total > 0 {
            d.downloaded as f64 * 100.0 / d.total as f64
        } else {
            0.0
        };
        println!(
            "{:<44} {:>9} paused at {pct:.0}% (from {}): `models pull {}/{}` resumes it",
            clean(&d.file),
            size(d.total),
            clean(&d.source.repo),
            clean(&d.source.repo),
            clean(&d.source.file)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn catalog(ctx: &AppContext, json: bool) -> anyhow::Result<ExitCode> {
    let view = models::catalog_view(ctx);
    if json {
        println!("{}", serde_json::to_string_pretty(&view)?);
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "this computer: {} memory, {} free disk, {} cores",
        size(view.machine.total_memory),
        size(view.machine.free_disk),
        view.machine.cores
    );
    for item in &view.items {
        let mark = if item.installed {
            "installed"
        } else if item.recommended {
            "recommended"
        } else {
            ""
        };
        let check = match &item.check {
            Some(c) if c.here => format!("check {} here", c.score.percent()),
            Some(c) => format!("check {}", c.score.percent()),
            None => "not checked".into(),
        };
        println!(
            "{:<18} {:<24} {:>9} {:>7} ctx  {:<8} {:<12} {:<16} {}",
            item.entry.id,
            item.entry.name,
            size(item.entry.size),
            item.entry.context,
            fit_label(item.fit.fit),
            mark,
            check,
            item.fit.reason
        );
    }
    if let Some(why) = &view.recommendation {
        eprintln!("recommended: {why}");
    }
    eprintln!("download one: artifactflow-cli models pull ID");
    Ok(ExitCode::SUCCESS)
}

fn pull(ctx: &AppContext, target: &str, revision: &str, json: bool) -> anyhow::Result<ExitCode> {
    let request = models::pull_request(target, revision)?;
    let hub = hub(ctx);
    let rt = runtime()?;
    let cancel = CancellationToken::new();
    let tty = std::io::stderr().is_terminal();
    let last_line = Arc::new(Mutex::new(None::<Instant>));
    let progress: ProgressSink = Arc::new(move |p: &PullProgress| {
        let mut last = last_line.lock().unwrap();
        let due = last.is_none_or(|l| l.elapsed() >= Duration::from_secs(2));
        let line = progress_line(p);
        if tty {
            eprint!("\r\x1b[2K{line}");
        } else if due || p.phase != PullPhase::Downloading {
            eprintln!("{line}");
        } else {
            return;
        }
        *last = Some(Instant::now());
        let _ = std::io::stderr().flush();
    });
    let result = rt.block_on(async {
        let stop = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.cancel();
            }
        });
        models::pull(ctx, &hub, &request, progress, &cancel).await
    });
    if tty {
        eprintln!();
    }
    match result {
        Ok(model) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&model)?);
            } else {
                eprintln!(
                    "installed {}: use it with `api: local` and `model: {}`",
                    clean(&model.file),
                    clean(&model.name)
                );
            }
            // Said with --json too: a file other than its catalogue entry is news either way.
            if let Some(mismatch) = &model.catalog_mismatch {
                eprintln!("warning: {}", clean(&mismatch.message));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ LibraryError::Paused { .. }) => {
            eprintln!("{e}");
            Ok(ExitCode::from(crate::signals::INTERRUPTED as u8))
        }
        Err(e) => Err(e.into()),
    }
}

fn progress_line(p: &PullProgress) -> String {
    let name = clean(&p.file);
    match p.phase {
        PullPhase::Resolving => format!("{name}: asking the Hub for its size and sha256…"),
        PullPhase::Verifying => {
            format!("{name}: {} downloaded, checking its sha256…", size(p.total))
        }
        PullPhase::Done => format!("{name}: done"),
        PullPhase::Retrying => format!(
            "{name}: {} — retrying ({})",
            p.note.as_deref().unwrap_or("the download stopped"),
            p.attempt + 1
        ),
        PullPhase::Downloading => {
            let pct = if p.total > 0 {
                p.downloaded as f64 * 100.0 / p.total as f64
            } else {
                0.0
            };
            let eta = p.eta_secs.map_or(String::new(), |s| {
                let s = s.round() as u64;
                if s >= 60 {
                    format!(" · {}m {:02}s left", s / 60, s % 60)
                } else {
                    format!(" · {s}s left")
                }
            });
            let resumed = if p.resumed_from > 0 {
                format!(" (resumed at {})", size(p.resumed_from))
            } else {
                String::new()
            };
            format!(
                "{name}: {pct:.0}% {} of {} · {}/s{eta}{resumed}",
                size(p.downloaded),
                size(p.total),
                size(p.bytes_per_sec as u64)
            )
        }
    }
}
