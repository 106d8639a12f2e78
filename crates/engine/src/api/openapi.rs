//! Importing HTTP tools from an OpenAPI 3.0/3.1 or Swagger 2.0 description, as the Tools page
//! and `artifactflow-cli tools import-openapi` do: read the description (given, or fetched from
//! an http(s) URL), generate a tool for every selected operation that can be one, and say which
//! ones a tool file of the config folder already has. Nothing is saved here.

use std::collections::HashSet;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::config_files::{self, FileKind};
use crate::context::AppContext;
use crate::openapi::{self, Selection};

/// One tool an OpenAPI import generated, to pick and review before saving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportedTool {
    /// The tool name.
    pub name: String,
    /// The file it would be saved as.
    pub file_name: String,
    /// The whole tool file (Markdown with frontmatter), as the editor opens it.
    pub text: String,
    /// `GET /pets/{petId}`.
    pub operation: String,
    /// The operation's one-line summary.
    pub summary: String,
    /// The operation's tags.
    pub tags: Vec<String>,
    /// The secrets it uses (their names).
    pub secrets: Vec<String>,
    /// A tool file of that name is already in the config folder (saving it would not replace
    /// it: the editor's save refuses).
    pub exists: bool,
}

/// An operation that could not be imported, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportSkipped {
    /// `operationId (GET /path)`.
    pub operation: String,
    /// Why.
    pub reason: String,
}

/// Everything an OpenAPI description offers as HTTP tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OpenApiImport {
    /// The API's title.
    pub title: String,
    /// Operations in the description.
    pub total: u32,
    /// The operations that can be tools, in document order.
    pub tools: Vec<ImportedTool>,
    /// Those that cannot, with the reason.
    pub skipped: Vec<ImportSkipped>,
}

/// Why an import gave nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// No text was given and the source is not an http(s) URL.
    #[error("`{0}` is not an http:// or https:// URL; choose a file instead")]
    NotAUrl(String),
    /// Fetching the URL failed (the message names it).
    #[error("{0}")]
    Fetch(String),
    /// The description does not read, or has no operation that can be a tool (the message
    /// names the source and the JSON pointer or line).
    #[error("{0}")]
    Invalid(String),
    /// `cancel` was cancelled while fetching or generating.
    #[error("{}", openapi::schema::CANCELLED)]
    Cancelled,
    /// The worker generating the tools stopped.
    #[error("the import stopped: {0}")]
    Stopped(String),
}

/// Read the description at `source` (its `text` when the caller has it, e.g. a file the user
/// chose; else `source` is an http(s) URL, fetched here) and generate the `selection`'s tools.
/// Cancelling `cancel` stops it soon, while fetching or generating, with
/// [`ImportError::Cancelled`].
pub async fn read(
    ctx: &AppContext,
    source: &str,
    text: Option<String>,
    selection: &Selection,
    cancel: &CancellationToken,
) -> Result<OpenApiImport, ImportError> {
    let source = source.trim().to_string();
    let text = match text {
        Some(text) => text,
        None if source.starts_with("http://") || source.starts_with("https://") => {
            tokio::select! {
                fetched = openapi::fetch(&source) => fetched.map_err(ImportError::Fetch)?,
                _ = cancel.cancelled() => return Err(ImportError::Cancelled),
            }
        }
        None => return Err(ImportError::NotAUrl(source)),
    };
    let stop = cancel.clone();
    let selection = selection.clone();
    let imported = tokio::task::spawn_blocking(move || {
        openapi::import_cancellable(&source, &text, &selection, &|| stop.is_cancelled())
    })
    .await
    .map_err(|e| ImportError::Stopped(e.to_string()))?
    .map_err(|e| {
        if cancel.is_cancelled() {
            ImportError::Cancelled
        } else {
            ImportError::Invalid(e.to_string())
        }
    })?;
    // A tool of that name, or a file of that name (enabled or not), is already there.
    let existing: HashSet<String> = config_files::list(&ctx.paths().config_dir, FileKind::Tool)
        .into_iter()
        .flat_map(|f| {
            let stem = f.file_name.trim_start_matches('_').to_string();
            [f.name, Some(stem)]
        })
        .flatten()
        .collect();
    Ok(OpenApiImport {
        title: imported.title,
        total: u32::try_from(imported.total).unwrap_or(u32::MAX),
        tools: imported
            .tools
            .into_iter()
            .map(|t| ImportedTool {
                exists: existing.contains(&t.name) || existing.contains(&t.file_name),
                name: t.name,
                file_name: t.file_name,
                text: t.text,
                operation: t.operation,
                summary: t.summary,
                tags: t.tags,
                secrets: t.secrets,
            })
            .collect(),
        skipped: imported
            .skipped
            .into_iter()
            .map(|s| ImportSkipped {
                operation: s.operation,
                reason: s.reason,
            })
            .collect(),
    })
}
