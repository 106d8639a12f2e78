//! A tool call as data, from the model to the screen: every call has a stable id from the moment
//! it is parsed, ends with a typed [`CallStatus`] and a reason, and is stored as a
//! [`CallRecord`]. The UI, the history reader and the CLI read these fields; none of them parses
//! the engine's English (the text for the model) back.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub mod store;

/// The failed-result message a denial sends back to the model.
pub fn denied_message(tool: &str, why: &str) -> String {
    format!("the user did not allow `{tool}` to run ({why}); do not retry it unchanged — continue without it or ask the user")
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum CallStatus {
    /// The tool ran and did what was asked.
    Succeeded,
    /// The tool ran, or was refused before running for a reason of its own (unknown tool,
    /// invalid parameters, unreadable call), and failed.
    Failed,
    /// Permission was refused: by the user, a timeout, a closed window, or a rule.
    Denied,
    /// The call never started: the run was stopped before it (while it waited for permission or
    /// for an earlier call), or the answer was cut off.
    NotRun,
    /// The run was stopped while the tool was running; it may have partly happened.
    Stopped,
}

impl CallStatus {
    /// The name stored in the database and shown in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Succeeded => "succeeded",
            CallStatus::Failed => "failed",
            CallStatus::Denied => "denied",
            CallStatus::NotRun => "not_run",
            CallStatus::Stopped => "stopped",
        }
    }

    /// The status named `s` (as written by [`CallStatus::as_str`]).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "succeeded" => CallStatus::Succeeded,
            "failed" => CallStatus::Failed,
            "denied" => CallStatus::Denied,
            "not_run" => CallStatus::NotRun,
            "stopped" => CallStatus::Stopped,
            _ => return None,
        })
    }

    /// Did the tool do what was asked?
    pub fn succeeded(self) -> bool {
        self == CallStatus::Succeeded
    }
}

/// A `call_subagent` call that hands the task over: the engine runs `target` on `instruction`
/// and the sub-agent's final answer becomes the call's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Handover {
    /// The agent that takes over.
    pub target: String,
    /// What it is asked to do.
    pub instruction: String,
}

/// A tool result's binary content (an MCP server's image or audio), stored by the gate as an
/// artifact of the conversation. The tool card shows it from these fields; its bytes are read
/// with [`ArtifactStore::bytes`](crate::artifacts::ArtifactStore::bytes) and never reach the
/// model (it gets one line per attachment).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoredAttachment {
    /// The artifact holding the bytes.
    pub artifact_id: String,
    /// Its MIME type, e.g. `image/png`.
    pub mime: String,
    /// Its title.
    pub title: String,
    /// Its size in bytes.
    pub size_bytes: u32,
    /// A text artifact (an MCP server's embedded text resource, titled by its URI), which the
    /// tool card links to rather than shows. `false` for binary content and for records
    /// written before text resources were stored.
    #[serde(default)]
    pub text: bool,
}

/// One stored tool call (a row of the `tool_calls` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CallRecord {
    /// Stable id, given when the call is parsed (a native call's too: see `provider_call_id`).
    pub call_id: String,
    /// For a call made through native tool calling: the provider's id for it (sent back with
    /// its result); none for a call written in the XML format.
    #[serde(default)]
    pub provider_call_id: Option<String>,
    /// Conversation.
    pub conversation_id: String,
    /// The run it belongs to (none for a direct call outside a run, e.g. a test-run).
    pub run_id: Option<String>,
    /// The assistant message (`messages.id`) whose text holds the call.
    pub message_id: Option<i64>,
    /// 0-based position of the call in that message.
    pub position: u32,
    /// The agent that called it.
    pub agent: String,
    /// 0 for the conversation's agent, 1+ for sub-agents.
    pub depth: u32,
    /// Tool name as the model wrote it.
    pub tool: String,
    /// Parameters (typed after the pipeline's coercion when it got that far; secrets masked).
    pub params: Map<String, Value>,
    /// How it ended.
    pub status: CallStatus,
    /// Why it ended so, in words for a person (none for a plain success).
    pub reason: Option<String>,
    /// The result text the model was sent (or a preview of it when it became an artifact).
    pub result: String,
    /// Artifacts the call created or changed (including an oversized result's artifact).
    pub artifact_ids: Vec<String>,
    /// The result's binary content, stored as artifacts (also listed in `artifact_ids`).
    #[serde(default)]
    pub attachments: Vec<StoredAttachment>,
    /// The passages of the user's sources it read or found (`search_library`,
    /// `read_artifact` of a source): what its conversation's answers may cite.
    #[serde(default)]
    pub citations: Vec<crate::citations::CitationHandle>,
    /// For a `call_subagent` that handed over: to whom and what.
    pub handover: Option<Handover>,
    /// When it started and ended (RFC 3339, UTC).
    pub started_at: String,
    /// When it ended; none while it runs.
    pub ended_at: Option<String>,
    /// The model wrote it under the grammar of guided calls (the app's runtime).
    #[serde(default)]
    pub guided: bool,
    /// Its server's interactive view (MCP Apps), kept with the call (the whole view, with its
    /// document, is read with [`store::view_of_call`]).
    #[serde(default)]
    pub view: Option<ViewRef>,
    /// Made by the view of this MCP server (not by an agent).
    #[serde(default)]
    pub view_of: Option<String>,
}

/// Which view a call has (MCP Apps): what the history, the events and the CLI carry. The app
/// asks for the view itself ([`store::view_of_call`]) when it shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ViewRef {
    /// The server (its name in `mcp.json`).
    pub server: String,
    /// The view resource's `ui://` URI.
    pub resource_uri: String,
}

/// An MCP server's interactive view of a call (MCP Apps), kept with the call so it is shown
/// again when the conversation is opened. Its HTML is stored once per distinct document
/// ([`store::put_view_document`]), named here by its SHA-256.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoredView {
    /// The server (its name in `mcp.json`).
    pub server: String,
    /// The view resource's `ui://` URI.
    pub resource_uri: String,
    /// SHA-256 (hex) of its HTML document.
    pub document: String,
    /// How the server was launched when the view was read (see the tools' `launch_digest`):
    /// a server of the same name launched otherwise is another program, which this view must
    /// not drive.
    #[serde(default)]
    pub launch_digest: String,
    /// Its server runs on this computer (stdio, or HTTP on this computer's address): only
    /// such a view may reach this computer's addresses (see the tools' `view_csp`).
    #[serde(default)]
    pub local_server: bool,
    /// The resource's `_meta.ui` (`csp`, `permissions`, `prefersBorder`), as the server sent it.
    pub meta: Value,
    /// The call's arguments, as sent to the server.
    pub tool_input: Value,
    /// The call's result, as the server sent it (a `CallToolResult`); none when it failed
    /// before the server answered.
    pub tool_result: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::CallStatus;

    #[test]
    fn statuses_round_trip_through_their_names() {
        for s in [
            CallStatus::Succeeded,
            CallStatus::Failed,
            CallStatus::Denied,
            CallStatus::NotRun,
            CallStatus::Stopped,
        ] {
            assert_eq!(CallStatus::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::Value::String(s.as_str().into())
            );
        }
        assert_eq!(CallStatus::parse("ok"), None);
    }
}
