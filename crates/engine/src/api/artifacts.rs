//! The artifact library as the front ends read and change it: a page of the library, one
//! artifact's versions, a version's text, an artifact's bytes (for images and audio), deleting,
//! and the file an export writes. Each function takes the opened [`AppContext`]; a failure is a
//! [`StoreError`] (or an [`ExportError`]), never a database type.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::artifacts::{
    ArtifactPage, ArtifactSource, ArtifactStore, ListFilter, ListSort, StoreError, VersionInfo,
};
use crate::context::AppContext;

/// What the library lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
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

/// An artifact version's text, for the chat's artifact links and the library's viewer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ArtifactView {
    /// Id.
    pub id: String,
    /// Title.
    pub title: String,
    /// MIME type.
    pub content_type: String,
    /// The version shown.
    pub version: i64,
    /// The content.
    pub content: String,
}

/// An artifact's content as bytes: what the library and a tool card show for binary content
/// (an image as `data:MIME;base64,…`, which the window's CSP admits for images and media).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
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

/// What an export writes: a suggested file name (the id, made safe, with the extension of its
/// content type), the version and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactFile {
    /// The artifact's id.
    pub id: String,
    /// A file name to propose (`notes.md`, `chart.png`).
    pub file_name: String,
    /// The version written.
    pub version: i64,
    /// The content (a text version as UTF-8, or binary content's bytes).
    pub bytes: Vec<u8>,
}

/// Why an export could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The store failed, or there is no such artifact or version.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Binary content has one version, and another was asked for.
    #[error("'{id}' is binary content with a single version; leave out the version")]
    SingleVersion {
        /// The artifact.
        id: String,
    },
}

/// Library items `offset..offset + limit` matching `query` (newest first, or by relevance when
/// searching; blank search words do not filter).
pub fn list(
    ctx: &AppContext,
    query: LibraryQuery,
    limit: usize,
    offset: usize,
) -> Result<ArtifactPage, StoreError> {
    let filter = ListFilter {
        conversation_id: query.conversation_id,
        content_type: query.content_type,
        source: query.source,
        query: query.query.filter(|q| !q.trim().is_empty()),
        updated_from: query.updated_from,
        updated_before: query.updated_before,
        sort: query.sort,
    };
    ctx.artifact_store().list(&filter, limit, offset)
}

/// Every version of artifact `id` of `conversation_id`, oldest first.
pub fn versions(
    ctx: &AppContext,
    conversation_id: &str,
    id: &str,
) -> Result<Vec<VersionInfo>, StoreError> {
    ctx.artifact_store().versions(conversation_id, id)
}

/// Version `version` of a text artifact (the latest when `None`).
pub fn view(
    ctx: &AppContext,
    conversation_id: &str,
    id: &str,
    version: Option<i64>,
) -> Result<ArtifactView, StoreError> {
    let (artifact, content) = ctx.artifact_store().content(conversation_id, id, version)?;
    Ok(ArtifactView {
        id: artifact.id,
        title: artifact.title,
        content_type: artifact.content_type,
        version: artifact.version,
        content,
    })
}

/// The latest content of an artifact as base64, with its MIME type (text as its UTF-8 bytes).
pub fn bytes(
    ctx: &AppContext,
    conversation_id: &str,
    id: &str,
) -> Result<ArtifactBytes, StoreError> {
    bytes_of(&ctx.artifact_store(), conversation_id, id)
}

fn bytes_of(
    store: &ArtifactStore,
    conversation_id: &str,
    id: &str,
) -> Result<ArtifactBytes, StoreError> {
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

/// Delete an artifact with all its versions; [`StoreError::NotFound`] when there is none.
pub fn delete(ctx: &AppContext, conversation_id: &str, id: &str) -> Result<(), StoreError> {
    if ctx.artifact_store().delete(conversation_id, id)? {
        Ok(())
    } else {
        Err(StoreError::NotFound {
            conversation_id: conversation_id.to_string(),
            id: id.to_string(),
        })
    }
}

/// What exporting version `version` (the latest when `None`) of an artifact writes. Binary
/// content has one version: its bytes (asking for another version is an error).
pub fn export(
    ctx: &AppContext,
    conversation_id: &str,
    id: &str,
    version: Option<i64>,
) -> Result<ArtifactFile, ExportError> {
    export_from(&ctx.artifact_store(), conversation_id, id, version)
}

fn export_from(
    store: &ArtifactStore,
    conversation_id: &str,
    id: &str,
    version: Option<i64>,
) -> Result<ArtifactFile, ExportError> {
    let binary = store.get(conversation_id, id)?.is_some_and(|a| a.binary);
    let (artifact, bytes) = if binary {
        if version.is_some_and(|v| v != 1) {
            return Err(ExportError::SingleVersion { id: id.to_string() });
        }
        store.bytes(conversation_id, id)?
    } else {
        let (a, text) = store.content(conversation_id, id, version)?;
        (a, text.into_bytes())
    };
    Ok(ArtifactFile {
        file_name: format!(
            "{}.{}",
            artifact.id.replace(['/', '\\', ':'], "_"),
            extension(&artifact.content_type)
        ),
        id: artifact.id,
        version: artifact.version,
        bytes,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::NewArtifact;

    #[test]
    fn binary_content_comes_as_base64_with_its_type_and_exports_with_its_extension() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(&dir.path().join("a.db")).unwrap();
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

        let file = export_from(&store, "c", &image.id, None).unwrap();
        assert_eq!(file.bytes, [0x89, b'P', b'N', b'G', 0xff]);
        assert_eq!(file.file_name, format!("{}.png", image.id));
        assert!(export_from(&store, "c", &image.id, Some(1)).is_ok());
        assert!(matches!(
            export_from(&store, "c", &image.id, Some(2)),
            Err(ExportError::SingleVersion { .. })
        ));
    }

    #[test]
    fn a_text_export_writes_the_version_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(&dir.path().join("a.db")).unwrap();
        store
            .create(&NewArtifact {
                conversation_id: "c",
                id: "notes/v:1",
                title: "Notes",
                content_type: "text/markdown",
                content: "first\n",
                source: ArtifactSource::Agent,
            })
            .unwrap();
        store.rewrite("c", "notes/v:1", "second\n").unwrap();
        let old = export_from(&store, "c", "notes/v:1", Some(1)).unwrap();
        assert_eq!((old.version, old.bytes.as_slice()), (1, &b"first\n"[..]));
        let latest = export_from(&store, "c", "notes/v:1", None).unwrap();
        assert_eq!(
            (latest.version, latest.file_name.as_str()),
            (2, "notes_v_1.md")
        );
        assert!(matches!(
            export_from(&store, "c", "nope", None),
            Err(ExportError::Store(StoreError::NotFound { .. }))
        ));
    }
}
