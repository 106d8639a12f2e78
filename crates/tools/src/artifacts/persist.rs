//! Oversized tool results: stored as an artifact, replaced by a preview.
//!
//! A successful result whose `data` is longer (in characters) than the tool's
//! `max_result_size_chars` is written in full to a new artifact `tool_<name>_<12 hex>` (source
//! `tool`, `text/plain`) and the model gets the first [`PREVIEW_CHARS`] characters in an
//! `<artifact_slice>` plus a hint to call `read_artifact(id='…')`. Failed results, tools with no
//! cap and results within the cap pass through unchanged, and so does everything when storing
//! fails (fail-open: the call still completes).

use serde_json::Value;

use super::lines::count_lines;
use super::slice::{envelope, SliceHeader};
use super::store::{ArtifactSource, ArtifactStore, NewArtifact};
use crate::tools::ToolResult;

/// Characters of an oversized result the model sees as a preview.
pub const PREVIEW_CHARS: usize = 1_000;

/// `tool_<sanitized name>_<12 hex>`: the name reduced to `[A-Za-z0-9_]` (other characters become
/// `_`, at most 40 kept).
pub fn persisted_id(tool_name: &str) -> String {
    let mut name = String::new();
    for c in tool_name.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if !(c == '_' && name.ends_with('_')) {
            name.push(c);
        }
    }
    let name: String = name.trim_matches('_').chars().take(40).collect();
    let name = if name.is_empty() {
        "result".to_string()
    } else {
        name
    };
    format!("tool_{name}_{}", crate::ids::random_hex12())
}

/// Store `result` as an artifact of `conversation_id` when it is a success longer than `max`
/// characters (`None` = never), and return what the model should see. See the module docs.
pub fn persist_oversized(
    store: &ArtifactStore,
    tool_name: &str,
    max: Option<usize>,
    result: ToolResult,
    conversation_id: &str,
) -> ToolResult {
    let Some(max) = max else {
        return result;
    };
    if !result.success || result.data.len() <= max {
        return result;
    }
    let size = result.data.chars().count();
    if size <= max {
        return result;
    }
    let id = persisted_id(tool_name);
    let title = format!("Result of {tool_name}");
    let stored = store.create(&NewArtifact {
        conversation_id,
        id: &id,
        title: &title,
        content_type: "text/plain",
        source: ArtifactSource::Tool,
        content: &result.data,
    });
    let artifact = match stored {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!(tool = tool_name, error = %e, "could not store an oversized result; passing it through");
            return result;
        }
    };
    let preview: String = result.data.chars().take(PREVIEW_CHARS).collect();
    let total_lines = count_lines(&result.data);
    let preview_lines = count_lines(&preview);
    let mut data = envelope(
        &SliceHeader {
            id: &id,
            version: artifact.version,
            content_type: "text/plain",
            total_lines,
            shown_lines: format!("1-{preview_lines}"),
            has_more: true,
            truncated_by: "preview",
        },
        &preview,
    );
    data.push_str(&format!(
        "\nThis result was {size} characters, too long to show in full; it was stored as artifact '{id}' and only its first {PREVIEW_CHARS} characters are shown. To read the rest: read_artifact(id='{id}') (by line, with offset and limit), or search it with grep_artifact(pattern='…', id='{id}')."
    ));
    let mut out = result;
    out.data = data;
    out.metadata
        .insert("persisted_artifact_id".into(), Value::String(id));
    out.metadata
        .insert("original_size_chars".into(), Value::from(size as u64));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_sanitized_with_twelve_hex_digits() {
        let id = persisted_id("My Tool/v2!");
        let (head, hex) = id.rsplit_once('_').unwrap();
        assert_eq!(head, "tool_My_Tool_v2");
        assert_eq!(hex.len(), 12);
        assert!(hex.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(persisted_id("x"), persisted_id("x"));
    }
}
