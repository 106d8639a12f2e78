//! `artifactflow-cli models check MODEL`: the built-in tool-use check (see `engine::check`).
//!
//! MODEL is a profile of `models.yaml` or an installed model. Progress goes to stderr, one
//! line per item with an estimate of the time left (redrawn in place at a terminal); the
//! score table (or the whole report with `--json`) to stdout. A finished check is kept in the
//! database by the model file's identity, mode and guidance; Ctrl+C stops it, prints what was
//! scored and keeps nothing.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use engine::check::{self, CheckProgress, CheckReport, Verdict};
use engine::context::AppContext;
use tokio_util::sync::CancellationToken;

use crate::term::clean;

/// How the items are asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// XML calls described in the system prompt.
    Text,
    /// The API's own tool calls.
    Native,
    /// The best mode an earlier check found, else native.
    Auto,
}

/// On or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    /// On.
    On,
    /// Off.
    Off,
}

/// `models check`'s arguments.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// A model profile of models.yaml, or an installed model (its file name).
    pub model: String,
    /// How tools are offered: text, native or auto (default: the profile's `tool_calls`; auto
    /// for an installed model).
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Guided calls (default: the profile's `guided_calls`; on for the app's runtime).
    #[arg(long, value_enum)]
    pub guided: Option<OnOff>,
    /// Print the whole report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Ask the items of this JSONL file instead of the built-in ones.
    #[arg(long)]
    pub items: Option<PathBuf>,
    /// Ask only N items, spread over the kinds (the first of each kind, then the second…).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Ask nothing: list the checks kept for MODEL (the newest in each mode, guidance and item
    /// set), the one `tool_calls: auto` goes by marked.
    #[arg(long, conflicts_with_all = ["mode", "guided", "items", "limit"])]
    pub kept: bool,
}

/// `models check MODEL --kept`.
fn kept(ctx: &AppContext, model: &str, json: bool) -> anyhow::Result<ExitCode> {
    let checks = check::latest_checks(ctx, model).map_err(anyhow::Error::msg)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&checks)?);
        return Ok(ExitCode::SUCCESS);
    }
    if checks.is_empty() {
        eprintln!(
            "`{}` has not been checked yet: artifactflow-cli models check {} runs the check",
            clean(model),
            clean(model)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let best = check::best_result(&checks).map(|c| c.id);
    println!(
        "{:<8} {:<9} {:<16} {:<16} {:<16} {:>9}  finished",
        "mode", "guidance", "items", "as asked", "valid calls", "took"
    );
    for c in &checks {
        println!(
            "{:<8} {:<9} {:<16} {:<16} {:<16} {:>9}  {}{}",
            c.mode.as_str(),
            if c.guided { "guided" } else { "unguided" },
            clean(&c.item_set),
            share(c.totals.as_asked, c.totals.items),
            share(c.totals.valid_calls, c.totals.calls_expected),
            duration(c.seconds),
            clean(&c.finished_at),
            if best == Some(c.id) {
                "  ← tool_calls: auto"
            } else {
                ""
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(ctx: Arc<AppContext>, args: CheckArgs) -> anyhow::Result<ExitCode> {
    if args.kept {
        return kept(&ctx, &args.model, args.json);
    }
    let (mut items, item_set) = match &args.items {
        None => (check::builtin(), check::BUILTIN_SET.to_string()),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            let items = check::parse_items(&text, &path.display().to_string())
                .map_err(anyhow::Error::msg)?;
            (items, check::item_set_name(path, &text))
        }
    };
    let mut item_set = item_set;
    if let Some(limit) = args.limit {
        if limit == 0 {
            anyhow::bail!("--limit must be at least 1");
        }
        if limit < items.len() {
            items = check::spread(items, limit);
            item_set = format!("{item_set}, {limit} spread over the kinds");
        }
    }
    let target = check::target(&ctx, &args.model).map_err(anyhow::Error::msg)?;
    let mode = args.mode.map(|m| match m {
        ModeArg::Text => "text",
        ModeArg::Native => "native",
        ModeArg::Auto => "auto",
    });
    let options = check::resolve_options(&ctx, &target, mode, args.guided.map(|g| g == OnOff::On));
    eprintln!(
        "checking {} ({}) in {} mode, {}: {} items",
        clean(&target.identity.name),
        short_key(&target.identity.key),
        options.mode.as_str(),
        if options.guided { "guided" } else { "unguided" },
        items.len()
    );
    let tty = std::io::stderr().is_terminal();
    let mut progress = |p: &CheckProgress| {
        let line = format!(
            "item {}/{} {} {} · {:.1} s/item · about {} left",
            p.done,
            p.total,
            clean(&p.item.id),
            p.item.verdict.label(),
            p.elapsed_secs / f64::from(p.done.max(1)),
            duration(p.eta_secs)
        );
        if tty {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("{line}");
        }
        let _ = std::io::stderr().flush();
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let cancel = CancellationToken::new();
    let result = rt.block_on(async {
        let stop = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.cancel();
            }
        });
        check::run_check(
            &ctx,
            &target,
            &items,
            &item_set,
            options,
            &mut progress,
            &cancel,
        )
        .await
    });
    if tty {
        eprintln!();
    }
    let report = result.map_err(anyhow::Error::msg)?;
    match check::store_report(&ctx, &report) {
        Ok(Some(id)) => eprintln!("kept as check {id} of {}", short_key(&report.model.key)),
        Ok(None) => eprintln!(
            "stopped after {} items; the result is not kept",
            report.items.len()
        ),
        Err(e) => eprintln!("warning: {}", clean(&e)),
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(if report.cancelled {
        ExitCode::from(crate::signals::INTERRUPTED as u8)
    } else {
        ExitCode::SUCCESS
    })
}

/// `sha256:1d9614638d18…` for people.
fn short_key(key: &str) -> String {
    match key.strip_prefix("sha256:") {
        Some(hex) => format!("sha256:{}…", &hex[..hex.len().min(12)]),
        None => clean(key).into_owned(),
    }
}

fn duration(secs: f64) -> String {
    let secs = secs.max(0.0).round() as u64;
    match secs {
        0..=89 => format!("{secs} s"),
        _ => format!("{} min", (secs + 30) / 60),
    }
}

fn share(n: u32, of: u32) -> String {
    if of == 0 {
        "—".into()
    } else {
        format!("{n}/{of} ({:.0} %)", f64::from(n) * 100.0 / f64::from(of))
    }
}

/// The readable score table.
fn table(report: &CheckReport) -> String {
    let mut out = format!(
        "{} · {} mode, {} · {} · {:.0} s\n\n",
        clean(&report.model.name),
        report.mode.as_str(),
        if report.guided { "guided" } else { "unguided" },
        clean(&report.item_set),
        report.seconds
    );
    out.push_str(&format!(
        "{:<14} {:>6}  {:<16} {:<16} {:<16}\n",
        "kind", "items", "as asked", "right tool", "valid calls"
    ));
    let mut row = |name: &str, t: &check::Tally| {
        out.push_str(&format!(
            "{:<14} {:>6}  {:<16} {:<16} {:<16}\n",
            name,
            t.items,
            share(t.as_asked, t.items),
            share(t.right_tool, t.items),
            share(t.valid_calls, t.calls_expected),
        ));
    };
    for k in &report.by_kind {
        row(k.kind.as_str(), &k.tally);
    }
    row("all", &report.totals);
    let verdicts: Vec<String> = report
        .by_verdict
        .iter()
        .map(|(v, n)| format!("{} {n}", v.label()))
        .collect();
    out.push_str(&format!("\n{}\n", verdicts.join(" · ")));
    let failed: Vec<_> = report
        .items
        .iter()
        .filter(|i| i.verdict == Verdict::Failed)
        .take(3)
        .collect();
    for item in failed {
        out.push_str(&format!(
            "failed {}: {}\n",
            clean(&item.id),
            clean(item.why.as_deref().unwrap_or(""))
        ));
    }
    out
}
