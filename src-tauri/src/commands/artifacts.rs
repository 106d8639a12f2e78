//! Artifact library: every artifact across conversations, searched, filtered, viewed by
//! version, deleted, exported. Each command delegates to `engine::api::artifacts`.

use engine::api::artifacts::{self, ArtifactBytes, ArtifactView, LibraryQuery};
use engine::artifacts::{ArtifactPage, VersionInfo};
use tauri::State;

use crate::error::AppError;
use crate::state::AppState;

/// One page of the library (newest first, or by relevance when searching).
#[tauri::command]
#[specta::specta]
pub fn list_artifacts(
    state: State<'_, AppState>,
    query: LibraryQuery,
    limit: u32,
    offset: u32,
) -> Result<ArtifactPage, AppError> {
    let limit = limit.clamp(1, 500) as usize;
    Ok(artifacts::list(
        &state.engine()?.ctx,
        query,
        limit,
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
    Ok(artifacts::versions(
        &state.engine()?.ctx,
        &conversation_id,
        &id,
    )?)
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
    Ok(artifacts::view(
        &state.engine()?.ctx,
        &conversation_id,
        &id,
        version,
    )?)
}

/// The latest content of an artifact as base64, with its MIME type.
#[tauri::command]
#[specta::specta]
pub fn get_artifact_bytes(
    state: State<'_, AppState>,
    conversation_id: String,
    id: String,
) -> Result<ArtifactBytes, AppError> {
    Ok(artifacts::bytes(
        &state.engine()?.ctx,
        &conversation_id,
        &id,
    )?)
}

/// Delete an artifact with all its versions.
#[tauri::command]
#[specta::specta]
pub fn delete_artifact(
    state: State<'_, AppState>,
    conversation_id: String,
    id: String,
) -> Result<(), AppError> {
    Ok(artifacts::delete(
        &state.engine()?.ctx,
        &conversation_id,
        &id,
    )?)
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
    let file = artifacts::export(&state.engine()?.ctx, &conversation_id, &id, version)?;
    let Some(path) = super::export::pick_save_path(&app, "Export artifact", &file.file_name).await
    else {
        return Ok(None);
    };
    super::export::write_export(&path, &file.bytes).map(Some)
}

/// The latest version of artifact `id` in `conversation_id`.
#[tauri::command]
#[specta::specta]
pub fn get_artifact(
    state: State<'_, AppState>,
    conversation_id: String,
    id: String,
) -> Result<ArtifactView, AppError> {
    Ok(artifacts::view(
        &state.engine()?.ctx,
        &conversation_id,
        &id,
        None,
    )?)
}
