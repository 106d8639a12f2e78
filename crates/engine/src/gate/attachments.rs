//! A result's attachments (images, audio, blobs, embedded text resources) stored as artifacts
//! of the conversation, with one line each for the model in their place.

use crate::artifacts::store::{human_size, ArtifactStore};
use crate::calls::StoredAttachment;
use crate::tools::ToolResult;

/// An embedded text resource of at most this many characters is also shown to the model in
/// full, under its line: short ones stay readable in one step, long ones cost a
/// `read_artifact` call instead of filling the context.
pub const INLINE_RESOURCE_CHARS: usize = 1_000;

/// Store each of `result`'s attachments as an artifact of `conversation`, drop the content
/// from the result, and add one line per attachment to the text the model sees (its data, or
/// its error when it failed), or why it was not stored. Images, audio and blobs become binary
/// artifacts (`[image/png, 12 KB, stored as artifact image_… "title"]`), whose bytes never
/// reach the model. An embedded text resource becomes a text artifact titled by its URI
/// (`[resource URI, text/plain, 3 KB, stored as artifact resource_…]`), followed by its text
/// when it is at most [`INLINE_RESOURCE_CHARS`] long, or by how to read it. Returns the
/// stored ones, in order.
pub fn store_attachments(
    store: &ArtifactStore,
    conversation: &str,
    result: &mut ToolResult,
) -> Vec<StoredAttachment> {
    let attachments = std::mem::take(&mut result.attachments);
    let mut stored = Vec::with_capacity(attachments.len());
    let mut lines = Vec::with_capacity(attachments.len());
    for a in attachments {
        let (line, kept) = match &a.resource_uri {
            Some(uri) => store_text_resource(store, conversation, uri, &a),
            None => store_binary(store, conversation, &a),
        };
        lines.push(line);
        stored.extend(kept);
    }
    if !lines.is_empty() {
        let text = if result.success {
            &mut result.data
        } else {
            result.error.get_or_insert_with(String::new)
        };
        for line in lines {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&line);
        }
    }
    stored
}

/// One binary attachment as an artifact, and its line for the model.
fn store_binary(
    store: &ArtifactStore,
    conversation: &str,
    a: &crate::tools::Attachment,
) -> (String, Option<StoredAttachment>) {
    let size = human_size(a.bytes.len() as u64);
    match store.create_binary(conversation, &a.title, &a.mime, &a.bytes) {
        Ok(artifact) => (
            format!(
                "[{}, {size}, stored as artifact {} {:?}]",
                artifact.content_type, artifact.id, artifact.title
            ),
            Some(StoredAttachment {
                artifact_id: artifact.id,
                mime: artifact.content_type,
                title: artifact.title,
                size_bytes: u32::try_from(a.bytes.len()).unwrap_or(u32::MAX),
                text: false,
            }),
        ),
        Err(e) => {
            tracing::warn!(mime = %a.mime, error = %e, "could not store a tool result's attachment");
            (format!("[{}, {size}, not stored: {e}]", a.mime), None)
        }
    }
}

/// One embedded text resource as a text artifact `resource_<12 hex>` titled by its URI, and
/// its lines for the model (see [`store_attachments`]). When storing fails the model gets
/// the text itself, as before resources were stored (fail-open, like oversized results).
fn store_text_resource(
    store: &ArtifactStore,
    conversation: &str,
    uri: &str,
    a: &crate::tools::Attachment,
) -> (String, Option<StoredAttachment>) {
    let text = String::from_utf8_lossy(&a.bytes);
    let mime = if a.mime.is_empty() {
        "text/plain"
    } else {
        a.mime.as_str()
    };
    let size = human_size(a.bytes.len() as u64);
    let id = format!("resource_{}", crate::ids::random_hex12());
    let created = store.create(&crate::artifacts::store::NewArtifact {
        conversation_id: conversation,
        id: &id,
        title: uri,
        content_type: mime,
        source: crate::artifacts::store::ArtifactSource::Tool,
        content: &text,
    });
    let artifact = match created {
        Ok(artifact) => artifact,
        Err(e) => {
            tracing::warn!(error = %e, "could not store a tool result's text resource");
            return (
                format!("[resource {uri}, {mime}, {size}, not stored: {e}]\n{text}"),
                None,
            );
        }
    };
    let head = format!(
        "[resource {uri}, {mime}, {size}, stored as artifact {}]",
        artifact.id
    );
    let line = if text.chars().count() <= INLINE_RESOURCE_CHARS {
        format!("{head}\n{text}")
    } else {
        format!(
            "{head} (too long to show here: read it with read_artifact(id='{}'))",
            artifact.id
        )
    };
    let kept = StoredAttachment {
        artifact_id: artifact.id,
        mime: artifact.content_type,
        title: artifact.title,
        size_bytes: u32::try_from(a.bytes.len()).unwrap_or(u32::MAX),
        text: true,
    };
    (line, Some(kept))
}
