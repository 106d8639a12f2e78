//! `artifactflow-cli conversations …`: list conversations, show one with its tool calls (read
//! from the stored call records) and export it as Markdown or JSON.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use engine::context::AppContext;
use engine::history::Transcript;

use crate::term;

/// How many characters of each call's result `show` prints.
const PREVIEW_CHARS: usize = 300;

/// Conversation subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ConversationsCommand {
    /// List conversations, most recently changed first.
    List {
        /// Print JSON (an array of {id, title, agent, updated_at, last_status, always_allowed}).
        #[arg(long)]
        json: bool,
    },
    /// Show a conversation's messages with their tool calls (call id, tool, parameters, status,
    /// reason, result preview, artifact ids).
    Show {
        /// The conversation id (see `artifactflow-cli conversations list`).
        id: String,
        /// Print JSON ({"conversation": {..}, "messages": [{.., "calls": [..]}]}).
        #[arg(long)]
        json: bool,
    },
    /// Export a whole conversation (full results) as Markdown or JSON.
    Export {
        /// The conversation id (see `artifactflow-cli conversations list`).
        id: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Md)]
        format: Format,
        /// Write to FILE instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

/// Export formats.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Markdown, for people.
    Md,
    /// JSON, the same shape as `show --json` with whole results.
    Json,
}

/// Run one conversations subcommand.
pub fn run(ctx: &AppContext, cmd: ConversationsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ConversationsCommand::List { json } => {
            let all = engine::api::conversations::list(ctx, None)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&all)?);
            } else if all.is_empty() {
                println!("No conversations.");
            } else {
                for c in &all {
                    println!(
                        "{}\t{}\t{}\t{}\t{}",
                        c.id,
                        c.updated_at,
                        c.last_status.as_deref().unwrap_or("-"),
                        term::clean(&c.agent),
                        term::clean(&c.title)
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ConversationsCommand::Show { id, json } => {
            let t = transcript(ctx, &id)?.with_result_previews(PREVIEW_CHARS);
            if json {
                println!("{}", serde_json::to_string_pretty(&t)?);
            } else {
                print!("{}", human(&t));
            }
            Ok(ExitCode::SUCCESS)
        }
        ConversationsCommand::Export { id, format, out } => {
            let t = transcript(ctx, &id)?;
            let text = match format {
                Format::Md => t.to_markdown(),
                Format::Json => serde_json::to_string_pretty(&t)? + "\n",
            };
            match out {
                Some(file) => {
                    std::fs::write(&file, &text)
                        .with_context(|| format!("cannot write {}", file.display()))?;
                    eprintln!(
                        "Exported conversation '{id}' ({} bytes) to {}",
                        text.len(),
                        file.display()
                    );
                }
                // Exact bytes, as `artifacts export` writes them: this is the file's content.
                None => std::io::stdout().write_all(text.as_bytes())?,
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The transcript of `id`, or an error saying how to find the ids.
fn transcript(ctx: &AppContext, id: &str) -> anyhow::Result<Transcript> {
    engine::api::conversations::transcript(ctx, id)?.with_context(|| {
        format!(
            "no conversation with id '{id}'; `artifactflow-cli conversations list` shows the ids"
        )
    })
}

/// `show` for a person: each message, then its calls one per line with a result preview.
fn human(t: &Transcript) -> String {
    use std::fmt::Write;
    let c = &t.conversation;
    let mut out = format!(
        "{}\t{}\t{}\n",
        c.id,
        term::clean(&c.agent),
        term::clean(&c.title)
    );
    for m in &t.messages {
        let indent = "  ".repeat(m.depth as usize);
        if m.role == "context" {
            let _ = writeln!(
                out,
                "\n{indent}[context note for {}: the model saw this instead of the messages above]",
                term::clean(&m.agent)
            );
        } else {
            let _ = writeln!(out, "\n{indent}[{} {}]", m.role, term::clean(&m.agent));
        }
        for line in m.content.trim_end().lines() {
            let _ = writeln!(out, "{indent}{}", term::clean(line));
        }
        for call in &m.calls {
            let _ = write!(
                out,
                "{indent}  → {} {} {}",
                call.call_id,
                term::clean(&call.tool),
                call.status.as_str()
            );
            if let Some(reason) = &call.reason {
                let _ = write!(out, " ({})", term::clean(reason));
            }
            if let Some(h) = &call.handover {
                let _ = write!(out, " handed over to {}", term::clean(&h.target));
            }
            if !call.artifact_ids.is_empty() {
                let _ = write!(
                    out,
                    " artifacts: {}",
                    term::clean(&call.artifact_ids.join(", "))
                );
            }
            let params = serde_json::to_string(&call.params).unwrap_or_default();
            let _ = writeln!(out, "\n{indent}    params: {}", term::clean(&params));
            let preview = call.result.replace('\n', " ");
            let _ = writeln!(out, "{indent}    result: {}", term::clean(&preview));
            if let Some(view) = &call.view {
                let _ = writeln!(
                    out,
                    "{indent}    view: {} of MCP server {} (shown in the app)",
                    term::clean(&view.resource_uri),
                    term::clean(&view.server)
                );
            }
        }
    }
    out
}
