//! Saving to a file the user picks: the native save dialog (or, in E2E builds, the save-path
//! seam), and the conversation export that uses it.

use std::path::PathBuf;

use serde::Deserialize;
use tauri::State;

use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// Ask where to save `file_name` (starting in Downloads); `None` when the user cancels.
pub(crate) async fn pick_save_path(
    app: &tauri::AppHandle,
    title: &str,
    file_name: &str,
) -> Option<PathBuf> {
    use tauri_plugin_dialog::DialogExt;
    // The end-to-end tests' stand-in for a person answering the save dialog (e2e builds only).
    if let Some(p) = crate::seams::save_path() {
        return Some(p);
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = app
        .dialog()
        .file()
        .set_title(title)
        .set_file_name(file_name);
    if let Some(dir) = tauri::Manager::path(app)
        .download_dir()
        .ok()
        .filter(|d| d.is_dir())
    {
        dialog = dialog.set_directory(dir);
    }
    dialog.save_file(move |picked| {
        let _ = tx.send(picked.and_then(|p| p.into_path().ok()));
    });
    rx.await.ok().flatten()
}

/// Write `bytes` to `path` (atomically), as a located error the user can act on.
pub(crate) fn write_export(path: &std::path::Path, bytes: &[u8]) -> Result<String, AppError> {
    engine::config::write_atomically(path, bytes).map_err(|e| {
        AppError::new(
            ErrorCode::Io,
            format!("cannot write {}: {e}; pick another folder", path.display()),
        )
    })?;
    Ok(path.display().to_string())
}

/// The format of an exported conversation.
#[derive(Debug, Clone, Copy, Deserialize, specta::Type)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// Markdown, for people.
    Md,
    /// JSON, the shape `artifactflow-cli conversations export --format json` writes.
    Json,
}

/// Export a conversation with its tool calls (read from the stored call records) to a file the
/// user picks in the native save dialog. Returns the path written, or null when cancelled.
#[tauri::command]
#[specta::specta]
pub async fn export_conversation(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    id: String,
    format: ExportFormat,
) -> Result<Option<String>, AppError> {
    let transcript = engine::api::conversations::transcript(&state.engine()?.ctx, &id)?
        .ok_or_else(|| {
            AppError::new(
                ErrorCode::NotFound,
                format!("no conversation with id '{id}'; it may have been deleted"),
            )
        })?;
    let (text, extension) = match format {
        ExportFormat::Md => (transcript.to_markdown(), "md"),
        ExportFormat::Json => (
            serde_json::to_string_pretty(&transcript).map_err(|e| {
                AppError::new(
                    ErrorCode::Io,
                    format!("cannot write the conversation as JSON: {e}"),
                )
            })? + "\n",
            "json",
        ),
    };
    let file_name = format!(
        "conversation-{}.{extension}",
        id.replace(['/', '\\', ':'], "_")
    );
    let Some(path) = pick_save_path(&app, "Export conversation", &file_name).await else {
        return Ok(None);
    };
    write_export(&path, text.as_bytes()).map(Some)
}
