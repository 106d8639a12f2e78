//! A conversation as the desktop shows it when reopened: its messages with their tool calls,
//! read from the `tool_calls` rows (status, reason, result, artifacts, hand-over as data). No
//! result text is parsed back and no result is paired with a call by name: a row names its
//! call (`call_id`) and the assistant message that made it.

use std::collections::HashMap;

use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::calls::{CallRecord, CallStatus, Handover, StoredAttachment};
use crate::citations::{Citation, CitationHandle};
use crate::conversations::{ConversationSummary, StoredMessage};

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
    /// The result's binary content, stored as artifacts (see [`StoredAttachment`]).
    pub attachments: Vec<StoredAttachment>,
    /// For a `call_subagent` that handed over: to whom and what.
    pub handover: Option<Handover>,
    /// The model wrote the call under the grammar of guided calls.
    pub guided: bool,
    /// Its MCP server's interactive view (MCP Apps), kept with the call.
    pub view: Option<crate::calls::ViewRef>,
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
    /// In an assistant message: what it says besides its tool calls (the calls are shown as
    /// cards), as the parser reads it; `None` for the other roles.
    pub prose: Option<String>,
    /// In an assistant message: the sources its prose cites, each checked against what the
    /// conversation's calls before it retrieved (see [`crate::citations`]).
    pub citations: Vec<Citation>,
}

/// Every message of a conversation with its calls.
pub fn history(conn: &Connection, conversation_id: &str) -> rusqlite::Result<Vec<HistoryMessage>> {
    let messages = crate::conversations::messages(conn, conversation_id)?;
    let mut by_message = calls_by_message(conn, conversation_id)?;
    // The calls of the last assistant message at each depth, until the tool message answering
    // them (sub-agent messages one level down come in between).
    let mut waiting: HashMap<u32, Vec<CallRecord>> = HashMap::new();
    let mut retrieved = Retrieved::new(conn);
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        let mut view = HistoryMessage {
            message,
            calls: Vec::new(),
            results: Vec::new(),
            notes: None,
            prose: None,
            citations: Vec::new(),
        };
        let depth = view.message.depth;
        match view.message.role.as_str() {
            "assistant" => {
                let prose = crate::parser::strip_calls(&view.message.content);
                view.citations = retrieved.check(&prose);
                view.prose = Some(prose);
                let records = by_message.remove(&view.message.id).unwrap_or_default();
                retrieved.add(&records);
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

/// The passages a conversation's calls retrieved so far, read in message order, against which
/// each answer's citations are checked.
struct Retrieved<'c> {
    conn: &'c Connection,
    handles: Vec<CitationHandle>,
    titles: HashMap<String, Option<String>>,
}

impl<'c> Retrieved<'c> {
    fn new(conn: &'c Connection) -> Self {
        Retrieved {
            conn,
            handles: Vec::new(),
            titles: HashMap::new(),
        }
    }

    /// What the calls of one message retrieved.
    fn add(&mut self, records: &[CallRecord]) {
        for r in records {
            self.handles.extend(r.citations.iter().cloned());
        }
    }

    /// The citations in `text`, checked against what was retrieved before it.
    fn check(&mut self, text: &str) -> Vec<Citation> {
        let (conn, titles) = (self.conn, &mut self.titles);
        crate::citations::cited(text, &self.handles, &mut |id| {
            titles
                .entry(id.to_string())
                .or_insert_with(|| crate::sources::library_title(conn, id))
                .clone()
        })
    }
}

/// The citations of a new answer in `conversation`, checked against every call stored there so
/// far (the answer's own calls have not run yet). Nothing is read when `text` cites nothing.
pub fn citations_of_answer(
    conn: &rusqlite::Connection,
    conversation: &str,
    text: &str,
) -> rusqlite::Result<Vec<Citation>> {
    if !crate::citations::may_cite(text) {
        return Ok(Vec::new());
    }
    let retrieved: Vec<CitationHandle> = crate::calls::store::list(conn, conversation)?
        .into_iter()
        .flat_map(|r| r.citations)
        .collect();
    Ok(crate::citations::cited(text, &retrieved, &mut |id| {
        crate::sources::library_title(conn, id)
    }))
}

/// The call rows of a conversation by assistant message. Every call has its row: the run loop
/// records each call, and databases from before call records were backfilled once when they
/// were migrated (`crate::calls_backfill`).
fn calls_by_message(
    conn: &Connection,
    conversation_id: &str,
) -> rusqlite::Result<HashMap<i64, Vec<CallRecord>>> {
    let mut by_message: HashMap<i64, Vec<CallRecord>> = HashMap::new();
    for record in crate::calls::store::list(conn, conversation_id)? {
        if let Some(id) = record.message_id {
            by_message.entry(id).or_default().push(record);
        }
    }
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
        attachments: r.attachments,
        handover: r.handover,
        guided: r.guided,
        view: r.view,
    }
}

/// A conversation as plain data, for `artifactflow-cli conversations show|export` and the
/// desktop's Export: its summary and its user and assistant messages, each assistant message
/// with the calls it made (tool messages are not listed: their calls are), and the
/// "conversation so far" notes (role `context`) the model was shown instead of older messages.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Transcript {
    /// The conversation.
    pub conversation: ConversationSummary,
    /// Its messages, in order.
    pub messages: Vec<TranscriptMessage>,
}

/// A message of a [`Transcript`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TranscriptMessage {
    /// Row id.
    pub id: i64,
    /// `user`, `assistant`, or `context` (a "conversation so far" note the model saw instead
    /// of the messages before it; they are all still listed).
    pub role: String,
    /// The agent that wrote or received it.
    pub agent: String,
    /// 0 for the conversation's agent, 1+ for sub-agents.
    pub depth: u32,
    /// The run it belongs to.
    pub run_id: Option<String>,
    /// Its text as stored (an assistant message's calls are written in it as the model wrote
    /// them).
    pub content: String,
    /// The calls of an assistant message, in the order written.
    pub calls: Vec<TranscriptCall>,
    /// The sources an assistant message cites, checked against what the calls before it
    /// retrieved (see [`crate::citations`]).
    pub citations: Vec<Citation>,
}

/// A call of a [`TranscriptMessage`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TranscriptCall {
    /// Stable id.
    pub call_id: String,
    /// Tool name.
    pub tool: String,
    /// Parameters.
    pub params: Map<String, Value>,
    /// How it ended.
    pub status: CallStatus,
    /// Why it ended so (none for a plain success).
    pub reason: Option<String>,
    /// The result text the model was sent (maybe shortened: see `result_chars`).
    pub result: String,
    /// The full result's length in characters.
    pub result_chars: u32,
    /// Artifacts it created or changed.
    pub artifact_ids: Vec<String>,
    /// Its binary content, stored as artifacts.
    pub attachments: Vec<StoredAttachment>,
    /// For a `call_subagent` that handed over: to whom and what.
    pub handover: Option<Handover>,
    /// Its MCP server's interactive view (MCP Apps), kept with the call: the view's server and
    /// `ui://` URI (its document is not part of the transcript). Left out when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<crate::calls::ViewRef>,
}

/// The transcript of conversation `id`; `None` when there is no such conversation.
pub fn transcript(conn: &Connection, id: &str) -> rusqlite::Result<Option<Transcript>> {
    let Some(conversation) = crate::conversations::summary(conn, id)? else {
        return Ok(None);
    };
    let messages = crate::conversations::messages(conn, id)?;
    let mut by_message = calls_by_message(conn, id)?;
    let mut retrieved = Retrieved::new(conn);
    let messages = messages
        .into_iter()
        .filter(|m| matches!(m.role.as_str(), "user" | "assistant" | "context"))
        .map(|m| {
            let records = by_message.remove(&m.id).unwrap_or_default();
            let citations = if m.role == "assistant" {
                retrieved.check(&m.content)
            } else {
                Vec::new()
            };
            retrieved.add(&records);
            TranscriptMessage {
                citations,
                calls: records
                    .into_iter()
                    .map(|r| TranscriptCall {
                        result_chars: r.result.chars().count() as u32,
                        call_id: r.call_id,
                        tool: r.tool,
                        params: r.params,
                        status: r.status,
                        reason: r.reason,
                        result: r.result,
                        artifact_ids: r.artifact_ids,
                        attachments: r.attachments,
                        handover: r.handover,
                        view: r.view,
                    })
                    .collect(),
                id: m.id,
                role: m.role,
                agent: m.agent,
                depth: m.depth,
                run_id: m.run_id,
                content: m.content,
            }
        })
        .collect();
    Ok(Some(Transcript {
        conversation,
        messages,
    }))
}

impl Transcript {
    /// Every call's result cut to its first `max` characters (`result_chars` keeps the length).
    pub fn with_result_previews(mut self, max: usize) -> Transcript {
        for call in self.messages.iter_mut().flat_map(|m| m.calls.iter_mut()) {
            if let Some((cut, _)) = call.result.char_indices().nth(max) {
                call.result.truncate(cut);
                call.result.push('…');
            }
        }
        self
    }

    /// The transcript as Markdown: a heading per message, each call with its status, reason,
    /// parameters and result.
    pub fn to_markdown(&self) -> String {
        use std::fmt::Write;
        let c = &self.conversation;
        let mut out = format!(
            "# {}\n\nConversation `{}` · agent `{}` · updated {}\n",
            if c.title.is_empty() {
                "Untitled"
            } else {
                &c.title
            },
            c.id,
            c.agent,
            c.updated_at
        );
        for m in &self.messages {
            let who = match (m.role.as_str(), m.depth) {
                ("context", _) => format!(
                    "Conversation so far (note condensed for {}; the model saw it instead of the messages above)",
                    m.agent
                ),
                ("user", 0) => "User".to_string(),
                ("user", _) => format!("Hand-over to {}", m.agent),
                (_, 0) => m.agent.clone(),
                (_, d) => format!("{} (sub-agent, depth {d})", m.agent),
            };
            let _ = write!(out, "\n## {who}\n\n{}\n", m.content.trim_end());
            if !m.citations.is_empty() {
                out.push_str("\nSources cited:\n");
                for c in &m.citations {
                    let title = c.title.as_deref().unwrap_or("an unknown source");
                    let _ = write!(out, "\n- `{}` {title}", c.marker);
                    if let Some(page) = c.page {
                        let _ = write!(out, ", page {page}");
                    }
                    if !c.verified {
                        out.push_str(" (not retrieved in this conversation)");
                    }
                }
                out.push('\n');
            }
            for call in &m.calls {
                let _ = write!(
                    out,
                    "\n### `{}` — {}\n\nCall id `{}`",
                    call.tool,
                    call.status.as_str(),
                    call.call_id
                );
                if let Some(reason) = &call.reason {
                    let _ = write!(out, " · {reason}");
                }
                if let Some(h) = &call.handover {
                    let _ = write!(out, " · handed over to `{}`", h.target);
                }
                if !call.artifact_ids.is_empty() {
                    let _ = write!(out, " · artifacts: {}", call.artifact_ids.join(", "));
                }
                let params = serde_json::to_string_pretty(&call.params).unwrap_or_default();
                let _ = write!(
                    out,
                    "\n\n{}\n\n{}\n",
                    fenced("json", &params),
                    fenced("text", &call.result)
                );
            }
        }
        out
    }
}

/// `text` in a Markdown code fence longer than any backtick run inside it.
fn fenced(lang: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}", text.trim_end())
}
