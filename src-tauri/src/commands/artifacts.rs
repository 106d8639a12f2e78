//! Artifact library: every artifact across conversations, searched, filtered, viewed by
//! version, deleted.

use base64::Engine as _;
use engine::artifacts::{ArtifactPage, ArtifactSource, ListFilter, ListSort, VersionInfo};
use serde::{Deserialize, Serialize};
use tauri::State;

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

/// An artifact's content as bytes: what the library and a tool card show for binary content
/// (an image as `data:MIME;base64,…`, which the window's CSP admits for images and media).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ArtifactBytes {
    /// Id.
    pub id: String,
    /// Title.
    pub title: String,
    /// MIME type.
    pub content_type: String,
    /// Binary content (false: `base64` holds UTF-8 text).
    pub binary: bool,
    /// Size in bytes.
    pub size_bytes: u32,
    /// The content, base64 (standard alphabet, padded).
    pub base64: String,
}

/// The latest content of an artifact as base64, with its MIME type.
#[tauri::command]
#[specta::specta]
pub fn get_artifact_bytes(
    state: State<'_, AppState>,
    conversation_id: String,
    id: String,
) -> Result<ArtifactBytes, AppError> {
    bytes_of(&state.engine()?.ctx.artifact_store(), &conversation_id, &id)
}

fn bytes_of(
    store: &engine::artifacts::ArtifactStore,
    conversation_id: &str,
    id: &str,
) -> Result<ArtifactBytes, AppError> {
    let (artifact, bytes) = store.bytes(conversation_id, id)?;
    Ok(ArtifactBytes {
        id: artifact.id,
        title: artifact.title,
        content_type: artifact.content_type,
        binary: artifact.binary,
        size_bytes: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
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
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "audio/webm" => "webm",
        "application/pdf" => "pdf",
        "text/markdown" => "md",
        "application/json" => "json",
        "text/csv" => "csv",
        "text/html" => "html",
        "text/x-python" => "py",
        "application/javascript" | "text/javascript" => "js",
        "application/yaml" | "text/yaml" => "yaml",
        t if t.starts_with("text/") => "txt",
        _ => "bin",
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
    let store = state.engine()?.ctx.artifact_store();
    let (content_type, bytes) = match store.get(&conversation_id, &id)? {
        // Binary content has one version: its bytes.
        Some(a) if a.binary => {
            let (a, bytes) = store.bytes(&conversation_id, &id)?;
            (a.content_type, bytes)
        }
        _ => {
            let artifact = view(&state, &conversation_id, &id, version)?;
            (artifact.content_type, artifact.content.into_bytes())
        }
    };
    let file_name = format!(
        "{}.{}",
        id.replace(['/', '\\', ':'], "_"),
        extension(&content_type)
    );
    let Some(path) = super::export::pick_save_path(&app, "Export artifact", &file_name).await
    else {
        return Ok(None);
    };
    super::export::write_export(&path, &bytes).map(Some)
}

/// An artifact's latest content, for the chat's artifact links.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ArtifactView {
    /// Id.
    pub id: String,
    /// Title.
    pub title: String,
    /// MIME type.
    pub content_type: String,
    /// Latest version number.
    pub version: i64,
    /// The content.
    pub content: String,
}

/// The latest version of artifact `id` in `conversation_id`.
#[tauri::command]
#[specta::specta]
pub fn get_artifact(
    state: State<'_, AppState>,
    conversation_id: String,
    id: String,
) -> Result<ArtifactView, AppError> {
    view(&state, &conversation_id, &id, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_content_comes_as_base64_with_its_type_and_exports_with_its_extension() {
        let dir = tempfile::tempdir().unwrap();
        let store = engine::artifacts::ArtifactStore::open(&dir.path().join("a.db")).unwrap();
        let image = store
            .create_binary("c", "Shot", "image/png", &[0x89, b'P', b'N', b'G', 0xff])
            .unwrap();
        let b = bytes_of(&store, "c", &image.id).unwrap();
        assert_eq!(
            (
                b.content_type.as_str(),
                b.binary,
                b.size_bytes,
                b.base64.as_str()
            ),
            ("image/png", true, 5, "iVBOR/8=")
        );
        assert!(bytes_of(&store, "c", "missing").is_err());
        assert_eq!(extension(&b.content_type), "png");
        assert_eq!(extension("audio/mpeg"), "mp3");
        assert_eq!(extension("application/octet-stream"), "bin");
        assert_eq!(extension("text/x-rust"), "txt");
    }
}
