//! Artifact library: every artifact across conversations, searched, filtered, viewed by
//! version, deleted.

use engine::artifacts::{ArtifactPage, ArtifactSource, ListFilter, ListSort, VersionInfo};
use serde::Deserialize;
use tauri::State;

use crate::commands::chat::ArtifactView;
use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// What the library lists.
#[derive(Debug, Clone, Default, Deserialize, specta::Type)]
pub struct LibraryQuery {
    /// Full-text words over titles and latest content.
    pub query: Option<String>,
    /// Only this conversation.
    pub conversation_id: Option<String>,
    /// Only this content type.
    pub content_type: Option<String>,
    /// Only this source.
    pub source: Option<ArtifactSource>,
    /// Only those last changed on or after this day (`YYYY-MM-DD`, UTC).
    pub updated_from: Option<String>,
    /// Only those last changed before this day (`YYYY-MM-DD`, UTC; exclusive).
    pub updated_before: Option<String>,
    /// The order (default: relevance when searching, else newest first).
    pub sort: Option<ListSort>,
}

fn not_found(e: impl std::fmt::Display) -> AppError {
    AppError::new(ErrorCode::NotFound, e.to_string())
}

/// One page of the library (newest first, or by relevance when searching).
#[tauri::command]
#[specta::specta]
pub fn list_artifacts(
    state: State<'_, AppState>,
    query: LibraryQuery,
    limit: u32,
    offset: u32,
) -> Result<ArtifactPage, AppError> {
    let filter = ListFilter {
        conversation_id: query.conversation_id,
        content_type: query.content_type,
        source: query.source,
        query: query.query.filter(|q| !q.trim().is_empty()),
        updated_from: query.updated_from,
        updated_before: query.updated_before,
        sort: query.sort,
    };
    Ok(state.engine()?.ctx.artifact_store().list(
        &filter,
        limit.clamp(1, 500) as usize,
        offset as usize,
    )?)
}

/// Every version of an artifact, oldest first.
#[tauri::command]
#[specta::specta]
pub fn artifact_versions(
    state: State<'_, AppState>,
    conversation_id: String,
    id: String,
) -> Result<Vec<VersionInfo>, AppError> {
    Ok(state
        .engine()?
        .ctx
        .artifact_store()
        .versions(&conversation_id, &id)?)
}

/// One version of an artifact (the latest when `version` is null).
#[tauri::command]
#[specta::specta]
pub fn get_artifact_version(
    state: State<'_, AppState>,
    conversation_id: String,
    id: String,
    version: Option<i64>,
) -> Result<ArtifactView, AppError> {
    view(&state, &conversation_id, &id, version)
}

/// An artifact version as the UI shows it.
pub(crate) fn view(
    state: &AppState,
    conversation_id: &str,
    id: &str,
    version: Option<i64>,
) -> Result<ArtifactView, AppError> {
    let (artifact, content) =
        state
            .engine()?
            .ctx
            .artifact_store()
            .content(conversation_id, id, version)?;
    Ok(ArtifactView {
        id: artifact.id,
        title: artifact.title,
        content_type: artifact.content_type,
        version: artifact.version,
        content,
    })
}

/// Delete an artifact with all its versions.
#[tauri::command]
#[specta::specta]
pub fn delete_artifact(
    state: State<'_, AppState>,
    conversation_id: String,
    id: String,
) -> Result<(), AppError> {
    let deleted = state
        .engine()?
        .ctx
        .artifact_store()
        .delete(&conversation_id, &id)?;
    deleted.then_some(()).ok_or_else(|| {
        not_found(format!(
            "no artifact `{id}` in conversation `{conversation_id}`"
        ))
    })
}

/// A file name extension for a content type.
fn extension(content_type: &str) -> &'static str {
    match content_type {
        "text/markdown" => "md",
        "application/json" => "json",
        "text/csv" => "csv",
        "text/html" => "html",
        "text/x-python" => "py",
        "application/javascript" | "text/javascript" => "js",
        "application/yaml" | "text/yaml" => "yaml",
        _ => "txt",
    }
}

/// Export a version of an artifact (the latest when `version` is null) to a file the user
/// picks in the native save dialog. Returns the path written, or null when cancelled.
#[tauri::command]
#[specta::specta]
pub async fn export_artifact(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
    id: String,
    version: Option<i64>,
) -> Result<Option<String>, AppError> {
    let artifact = view(&state, &conversation_id, &id, version)?;
    let file_name = format!(
        "{}.{}",
        id.replace(['/', '\\', ':'], "_"),
        extension(&artifact.content_type)
    );
    let Some(path) = super::export::pick_save_path(&app, "Export artifact", &file_name).await
    else {
        return Ok(None);
    };
    super::export::write_export(&path, artifact.content.as_bytes()).map(Some)
}
