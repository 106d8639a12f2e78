//! `artifactflow-cli artifacts …`: list, show, search and export artifacts.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use engine::api::artifacts::{self as library, LibraryQuery};
use engine::artifacts::grep::{Grep, GrepLimits, GrepOptions};
use engine::artifacts::store::human_size;
use engine::artifacts::{Artifact, ArtifactStore};
use engine::context::AppContext;

use crate::term;

/// Artifact subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ArtifactsCommand {
    /// List artifacts, most recently updated first.
    List {
        /// Only this conversation's artifacts.
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
        /// Print JSON ({"items":[..],"total":N}).
        #[arg(long)]
        json: bool,
        /// At most this many.
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Print an artifact's content (latest version unless --version); for binary content
    /// (an image, audio) its type and size, or its bytes into FILE with --out.
    Show {
        /// The artifact id.
        id: String,
        /// A past version.
        #[arg(long, value_name = "N")]
        version: Option<i64>,
        /// The conversation, when the id exists in several.
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
        /// Write the content to FILE instead of printing it (the bytes of binary content).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Search artifacts' latest content (ripgrep semantics); exit 1 when nothing matches.
    Grep {
        /// A regex, or a literal with -F.
        pattern: String,
        /// Only this conversation's artifacts.
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
        /// Case-insensitive.
        #[arg(short = 'i', long)]
        ignore_case: bool,
        /// Treat the pattern as a literal string.
        #[arg(short = 'F', long)]
        fixed_strings: bool,
        /// Lines of context around each match.
        #[arg(short = 'C', long, default_value_t = 0, value_name = "N")]
        context: usize,
        /// Most matching lines per artifact.
        #[arg(short = 'm', long, default_value_t = 20, value_name = "N")]
        max_count: usize,
    },
    /// Write an artifact's content to FILE.
    Export {
        /// The artifact id.
        id: String,
        /// Where to write it.
        file: PathBuf,
        /// A past version.
        #[arg(long, value_name = "N")]
        version: Option<i64>,
        /// The conversation, when the id exists in several.
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
    },
}

/// Run one artifacts subcommand.
pub fn run(ctx: &AppContext, cmd: ArtifactsCommand) -> anyhow::Result<ExitCode> {
    let store = ctx.artifact_store();
    match cmd {
        ArtifactsCommand::List {
            conversation,
            json,
            limit,
        } => {
            let query = LibraryQuery {
                conversation_id: conversation,
                ..Default::default()
            };
            let page = library::list(ctx, query, limit, 0)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&page)?);
            } else if page.items.is_empty() {
                println!("No artifacts.");
            } else {
                for s in &page.items {
                    let a = &s.artifact;
                    let size = if a.binary {
                        human_size(s.size_bytes.max(0) as u64)
                    } else {
                        format!("{} lines", s.line_count)
                    };
                    println!(
                        "{}\t{}\t{}\t{}\tv{}\t{size}\t{}\t{}",
                        a.conversation_id,
                        a.id,
                        a.content_type,
                        a.source.as_str(),
                        a.version,
                        a.updated_at,
                        term::clean(&a.title)
                    );
                }
                if page.total as usize > page.items.len() {
                    println!(
                        "({} of {} shown; use --limit)",
                        page.items.len(),
                        page.total
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ArtifactsCommand::Show {
            id,
            version,
            conversation,
            out,
        } => {
            let a = resolve(&store, &id, conversation.as_deref())?;
            if let Some(file) = out {
                return export(ctx, &a, version, &file);
            }
            if a.binary {
                let (_, bytes) = store.bytes(&a.conversation_id, &id)?;
                println!(
                    "{}: {}, {} (binary content; write it to a file with --out FILE)",
                    a.id,
                    a.content_type,
                    human_size(bytes.len() as u64)
                );
                return Ok(ExitCode::SUCCESS);
            }
            let view = library::view(ctx, &a.conversation_id, &id, version)?;
            print!("{}", term::clean(&view.content));
            Ok(ExitCode::SUCCESS)
        }
        ArtifactsCommand::Export {
            id,
            file,
            version,
            conversation,
        } => {
            let a = resolve(&store, &id, conversation.as_deref())?;
            export(ctx, &a, version, &file)
        }
        ArtifactsCommand::Grep {
            pattern,
            conversation,
            ignore_case,
            fixed_strings,
            context,
            max_count,
        } => {
            let mut grep = Grep::new(
                GrepOptions {
                    pattern: pattern.clone(),
                    fixed_strings,
                    ignore_case,
                    context,
                    max_count,
                },
                GrepLimits {
                    max_total_matches: usize::MAX,
                    max_output_chars: usize::MAX,
                    ..GrepLimits::default()
                },
            )
            .map_err(anyhow::Error::msg)?;
            let one_conversation = conversation.is_some();
            store.for_each_latest(conversation.as_deref(), None, |a, text| {
                let heading = if one_conversation {
                    a.id.clone()
                } else {
                    format!("{}/{}", a.conversation_id, a.id)
                };
                grep.search(&heading, text)
            })?;
            let outcome = grep.finish();
            println!("{}", term::clean(&outcome.render(&pattern)));
            Ok(if outcome.matches > 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}

/// Write a version of `a` (its bytes, for binary content, which has one version) to `file`.
fn export(
    ctx: &AppContext,
    a: &Artifact,
    version: Option<i64>,
    file: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    let out = library::export(ctx, &a.conversation_id, &a.id, version).map_err(|e| match e {
        library::ExportError::SingleVersion { id } => {
            anyhow::anyhow!("'{id}' is binary content with a single version; leave out --version")
        }
        e => e.into(),
    })?;
    std::fs::write(file, &out.bytes).with_context(|| format!("cannot write {}", file.display()))?;
    eprintln!(
        "Exported '{}' version {} ({} bytes) to {}",
        out.id,
        out.version,
        out.bytes.len(),
        file.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The one artifact called `id` (in `conversation` if given).
fn resolve(
    store: &ArtifactStore,
    id: &str,
    conversation: Option<&str>,
) -> anyhow::Result<Artifact> {
    if let Some(c) = conversation {
        return store
            .get(c, id)?
            .with_context(|| format!("no artifact '{id}' in conversation '{c}'"));
    }
    let mut found = store.find_by_id(id)?;
    match found.len() {
        0 => bail!("no artifact with id '{id}'"),
        1 => Ok(found.remove(0)),
        _ => bail!(
            "artifact id '{id}' exists in several conversations ({}); pass --conversation",
            found
                .iter()
                .map(|a| a.conversation_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
