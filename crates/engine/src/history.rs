//! A conversation as the desktop shows it when reopened: its messages with their tool calls,
//! read from the `tool_calls` rows (status, reason, result, artifacts, hand-over as data). No
//! result text is parsed back and no result is paired with a call by name: a row names its
//! call (`call_id`) and the assistant message that made it.

use std::collections::HashMap;

use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::calls::{CallRecord, CallStatus, Handover};
use crate::conversations::StoredMessage;

/// A tool call of an assistant message, as the model asked for it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HistoryCall {
    /// The call's stable id.
    pub call_id: String,
    /// The tool's name ([`crate::parser::MALFORMED`] for a call that could not be read).
    pub name: String,
    /// Its parameters.
    pub params: Map<String, Value>,
    /// Why it could not be read, for a malformed call.
    pub error: Option<String>,
    /// How it ended.
    pub status: CallStatus,
    /// Why it ended so (none for a plain success).
    pub reason: Option<String>,
}

/// How a call ended, listed in the tool message that answered it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HistoryResult {
    /// The call's stable id (the same as in the assistant message's `calls`).
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// Its parameters.
    pub params: Map<String, Value>,
    /// Did it succeed? (`status == succeeded`)
    pub success: bool,
    /// How it ended.
    pub status: CallStatus,
    /// Why it ended so, in words for a person (none for a plain success).
    pub reason: Option<String>,
    /// The data or the error the model was sent (a preview when it became an artifact).
    pub text: String,
    /// Artifacts the call created or changed.
    pub artifact_ids: Vec<String>,
    /// For a `call_subagent` that handed over: to whom and what.
    pub handover: Option<Handover>,
}

/// A stored message with its calls, so a reopened conversation shows tool calls and results as
/// they were shown live. A tool message's text is replaced by its `results` and `notes` (its
/// `message.content` is left empty: results can be large and are not sent twice).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HistoryMessage {
    /// The message.
    pub message: StoredMessage,
    /// The tool calls of an assistant message, in the order written.
    pub calls: Vec<HistoryCall>,
    /// In a tool message: the calls it answered, in the order written.
    pub results: Vec<HistoryResult>,
    /// The engine's notes to the model in a tool message (round limit, call format), if any.
    pub notes: Option<String>,
}

/// Every message of a conversation with its calls.
pub fn history(conn: &Connection, conversation_id: &str) -> rusqlite::Result<Vec<HistoryMessage>> {
    let messages = crate::conversations::messages(conn, conversation_id)?;
    let mut by_message = calls_by_message(conn, conversation_id)?;
    // The calls of the last assistant message at each depth, until the tool message answering
    // them (sub-agent messages one level down come in between).
    let mut waiting: HashMap<u32, Vec<CallRecord>> = HashMap::new();
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        let mut view = HistoryMessage {
            message,
            calls: Vec::new(),
            results: Vec::new(),
            notes: None,
        };
        let depth = view.message.depth;
        match view.message.role.as_str() {
            "assistant" => {
                let records = by_message.remove(&view.message.id).unwrap_or_default();
                view.calls = records.iter().map(history_call).collect();
                if records.is_empty() {
                    waiting.remove(&depth);
                } else {
                    waiting.insert(depth, records);
                }
            }
            "tool" => {
                let (_, notes) = crate::parser::parse_results(&view.message.content);
                view.message.content.clear();
                view.notes = (!notes.is_empty()).then_some(notes);
                // It answers the calls waiting at its depth (with the round-limit note alone,
                // calls that were never run: their rows say so).
                view.results = waiting
                    .remove(&depth)
                    .unwrap_or_default()
                    .into_iter()
                    .map(history_result)
                    .collect();
            }
            _ => {}
        }
        out.push(view);
    }
    Ok(out)
}

/// The call rows of a conversation by assistant message. Messages without rows (written by a
/// build whose runs did not record calls yet) get the records their text describes.
fn calls_by_message(
    conn: &Connection,
    conversation_id: &str,
) -> rusqlite::Result<HashMap<i64, Vec<CallRecord>>> {
    let mut by_message: HashMap<i64, Vec<CallRecord>> = HashMap::new();
    for record in crate::calls_backfill::rows_for_conversation(conn, conversation_id)? {
        if let Some(id) = record.message_id {
            by_message.entry(id).or_default().push(record);
        }
    }
    let mut unrecorded: HashMap<i64, Vec<CallRecord>> = HashMap::new();
    for record in crate::calls_backfill::from_text(conn, conversation_id)? {
        if let Some(id) = record.message_id.filter(|id| !by_message.contains_key(id)) {
            unrecorded.entry(id).or_default().push(record);
        }
    }
    by_message.extend(unrecorded);
    Ok(by_message)
}

fn history_call(r: &CallRecord) -> HistoryCall {
    HistoryCall {
        call_id: r.call_id.clone(),
        name: r.tool.clone(),
        params: r.params.clone(),
        error: (r.tool == crate::parser::MALFORMED)
            .then(|| r.reason.clone())
            .flatten(),
        status: r.status,
        reason: r.reason.clone(),
    }
}

fn history_result(r: CallRecord) -> HistoryResult {
    HistoryResult {
        call_id: r.call_id,
        name: r.tool,
        params: r.params,
        success: r.status.succeeded(),
        status: r.status,
        reason: r.reason,
        text: r.result,
        artifact_ids: r.artifact_ids,
        handover: r.handover,
    }
}
