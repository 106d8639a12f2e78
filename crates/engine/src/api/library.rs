//! Users' own sources, as the front ends use them: add files and folders (one job, with
//! progress and cancellation), list, show (metadata, the Markdown with page markers, or the
//! plain text), search passages, export the original bytes, remove, and the jobs.
//!
//! Each call opens the sources store on its own connection ([`SourceStore::open`]), which rolls
//! back what a killed process left half-written and says so: those notices come back with
//! [`add`] and [`jobs`].

use std::path::{Path, PathBuf};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::context::AppContext;
use crate::source_store::{
    JobSummary, SearchHit, SourceError, SourceInfo, SourceStore, SOURCES_DIR,
};
pub use crate::sources::ingest::{AddOptions, AddSummary, FileOutcome, Progress};

/// What [`show`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShowAs {
    /// The metadata.
    Meta,
    /// The extracted Markdown, with page markers.
    Markdown,
    /// The plain text: no markup, no page markers, no running headers or footers.
    Text,
}

/// What [`show`] returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shown {
    /// The source's metadata.
    pub source: SourceInfo,
    /// The Markdown or text asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A job's outcome and what the store rolled back on opening.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Added {
    /// The job.
    pub summary: AddSummary,
    /// One notice per earlier job rolled back.
    pub notices: Vec<String>,
}

fn open(ctx: &AppContext) -> Result<(SourceStore, Vec<String>), SourceError> {
    let paths = ctx.paths();
    SourceStore::open(
        &paths.database,
        &paths.data_dir.join(SOURCES_DIR),
        ctx.owner(),
    )
}

/// Adds files and folders as one job (see [`crate::sources::ingest`]); `report` is called
/// after each file and as files start; `cancel` stops the job (workers killed, the files being
/// read rolled back).
pub fn add(
    ctx: &AppContext,
    paths: &[PathBuf],
    options: &AddOptions,
    cancel: &CancellationToken,
    report: &(dyn Fn(&Progress) + Sync),
) -> Result<Added, SourceError> {
    let (_store, notices) = open(ctx)?;
    let app_paths = ctx.paths();
    let summary = crate::sources::ingest::add(
        &app_paths.database,
        &app_paths.data_dir.join(SOURCES_DIR),
        ctx.owner(),
        paths,
        options,
        cancel,
        report,
    )?;
    Ok(Added { summary, notices })
}

/// The sources, most recently updated first.
pub fn list(ctx: &AppContext) -> Result<Vec<SourceInfo>, SourceError> {
    open(ctx)?.0.list()
}

/// One source, with its Markdown or plain text when asked.
pub fn show(ctx: &AppContext, id: &str, what: ShowAs) -> Result<Shown, SourceError> {
    let (store, _) = open(ctx)?;
    let source = store.get(id)?;
    let text = match what {
        ShowAs::Meta => None,
        ShowAs::Markdown | ShowAs::Text => {
            let mut markdown = Vec::new();
            store.write_markdown(id, &mut markdown)?;
            let markdown = String::from_utf8_lossy(&markdown).into_owned();
            Some(if what == ShowAs::Text {
                artifactflow_extract::plain_text(&markdown)
            } else {
                markdown
            })
        }
    };
    Ok(Shown { source, text })
}

/// Removes a source (its versions, pages, passages, paths; its original when no other source
/// has the same bytes). `false` when there was none.
pub fn rm(ctx: &AppContext, id: &str) -> Result<bool, SourceError> {
    open(ctx)?.0.remove(id)
}

/// The `k` passages best matching `words`, best first.
pub fn search(ctx: &AppContext, words: &str, k: usize) -> Result<Vec<SearchHit>, SourceError> {
    open(ctx)?.0.search(words, k)
}

/// Copies the source's original bytes to `dest`; returns how many bytes were written.
pub fn export_original(ctx: &AppContext, id: &str, dest: &Path) -> Result<u64, SourceError> {
    let (store, _) = open(ctx)?;
    let original = store.original_path(id)?;
    std::fs::copy(&original, dest).map_err(|source| SourceError::Files {
        doing: format!("copy the original of {id} to {}", dest.display()),
        folder: original,
        source,
    })
}

/// The most recent jobs, newest first, and the notices of jobs rolled back on opening.
pub fn jobs(ctx: &AppContext, limit: usize) -> Result<(Vec<JobSummary>, Vec<String>), SourceError> {
    let (store, notices) = open(ctx)?;
    Ok((store.jobs(limit)?, notices))
}
