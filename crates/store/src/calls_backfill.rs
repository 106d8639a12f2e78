//! The one-time backfill of `tool_calls` from the text stored by versions before migration 5.
//!
//! Those versions kept a call only as text: the `<tool_call>`s of an assistant message and, in
//! the tool message after it, one `<tool_result>` per call (call_subagent's last, the others in
//! the order written). This module reads that text back once, when migration 5 runs (a hook of
//! [`crate::db::migrations`]), and writes one [`CallRecord`] per call.
//!
//! **This is the one place allowed to read the engine's English wording** ("not run: …", the
//! denial message of [`crate::calls::denied_message`], "stopped by the user while
//! running"): old rows have nothing else to tell a denial from a failure. Everything written
//! after migration 5 stores its status as data, so this wording may change freely; only the
//! constants below must keep matching what the old versions wrote (the fixture test in
//! `tests/history` checks them against a database made by such a version).

use std::collections::HashMap;

use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::calls::{CallRecord, CallStatus, Handover};
use crate::parser::{self, ResultFrame, ToolCall};

/// What old versions wrote for a call a stop came before.
const OLD_NOT_RUN: &str = "not run: ";
/// What old versions wrote for a call stopped while it ran.
const OLD_STOPPED: &str = "stopped by the user while running";
/// What a call without any stored result is (a cut-off answer, or the app stopped first).
const NO_RESULT: &str = "no result was recorded: it was not run, or the app stopped first";

/// A stored message, as much of it as the backfill needs.
struct Row {
    id: i64,
    conversation_id: String,
    role: String,
    agent: String,
    content: String,
    run_id: Option<String>,
    depth: u32,
    created_at: String,
}

/// An assistant message whose calls wait for their results.
struct Pending {
    row: Row,
    calls: Vec<ToolCall>,
    /// The agent a `user` message one level down was sent to (a hand-over that happened).
    handed_to: Option<String>,
}

/// Write a `tool_calls` row for every call stored as text; returns how many were written.
/// Runs inside migration 5's transaction, so it happens exactly once per database.
pub fn backfill(conn: &Connection) -> rusqlite::Result<usize> {
    let ids: Vec<String> = conn
        .prepare("SELECT DISTINCT conversation_id FROM messages ORDER BY conversation_id")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut written = 0;
    for id in ids {
        for record in from_text(conn, &id)? {
            crate::calls::store::record(conn, &record)?;
            written += 1;
        }
    }
    Ok(written)
}

/// The call records a conversation's stored text describes (nothing is written); only the
/// backfill uses it.
pub fn from_text(conn: &Connection, conversation_id: &str) -> rusqlite::Result<Vec<CallRecord>> {
    let mut stmt = conn.prepare(
        "SELECT id, conversation_id, role, agent, content, run_id, depth, created_at
         FROM messages WHERE conversation_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([conversation_id], |r| {
        Ok(Row {
            id: r.get(0)?,
            conversation_id: r.get(1)?,
            role: r.get(2)?,
            agent: r.get(3)?,
            content: r.get(4)?,
            run_id: r.get(5)?,
            depth: r.get(6)?,
            created_at: r.get(7)?,
        })
    })?;
    Ok(records(rows.collect::<rusqlite::Result<_>>()?))
}

/// The call records of one conversation's messages (in order).
fn records(rows: Vec<Row>) -> Vec<CallRecord> {
    let mut out = Vec::new();
    // The last assistant message with calls at each depth, until its tool message comes.
    let mut pending: HashMap<u32, Pending> = HashMap::new();
    for row in rows {
        match row.role.as_str() {
            "assistant" => {
                if let Some(p) = pending.remove(&row.depth) {
                    out.extend(pair(p, Vec::new(), None));
                }
                let calls = parser::parse(&row.content);
                if !calls.is_empty() {
                    pending.insert(
                        row.depth,
                        Pending {
                            row,
                            calls,
                            handed_to: None,
                        },
                    );
                }
            }
            "user" if row.depth > 0 => {
                if let Some(p) = pending.get_mut(&(row.depth - 1)) {
                    p.handed_to = Some(row.agent.clone());
                }
            }
            "tool" => {
                let (frames, _notes) = parser::parse_results(&row.content);
                if frames.is_empty() {
                    continue; // the engine's note alone (round limit): no results
                }
                if let Some(p) = pending.remove(&row.depth) {
                    out.extend(pair(p, frames, Some(&row.created_at)));
                }
            }
            _ => {}
        }
    }
    let mut rest: Vec<Pending> = pending.into_values().collect();
    rest.sort_by_key(|p| p.row.id);
    for p in rest {
        out.extend(pair(p, Vec::new(), None));
    }
    out
}

/// Pair an answer's calls with their result frames. The engine ran (and answered) the calls in
/// the order written with `call_subagent`s moved last, so the frames follow that order; a frame
/// whose name does not match falls back to the first unanswered call of that name.
fn pair(p: Pending, frames: Vec<ResultFrame>, ended_at: Option<&str>) -> Vec<CallRecord> {
    let mut order: Vec<usize> = (0..p.calls.len()).collect();
    order.sort_by_key(|&i| p.calls[i].name == "call_subagent");
    let mut results: Vec<Option<ResultFrame>> = p.calls.iter().map(|_| None).collect();
    let mut unmatched = Vec::new();
    for (k, frame) in frames.into_iter().enumerate() {
        match order.get(k) {
            Some(&i) if p.calls[i].name == frame.name && results[i].is_none() => {
                results[i] = Some(frame)
            }
            _ => unmatched.push(frame),
        }
    }
    for frame in unmatched {
        if let Some(&i) = order
            .iter()
            .find(|&&i| results[i].is_none() && p.calls[i].name == frame.name)
        {
            results[i] = Some(frame);
        }
    }
    let mut handed_to = p.handed_to.clone();
    p.calls
        .iter()
        .zip(results)
        .enumerate()
        .map(|(position, (call, frame))| {
            let (status, reason, result) = match &frame {
                Some(f) => outcome(&call.name, f),
                None => (
                    CallStatus::NotRun,
                    Some(NO_RESULT.to_string()),
                    String::new(),
                ),
            };
            let params: Map<String, Value> = call
                .params
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            let handover = handover(call, status, &params, &mut handed_to);
            CallRecord {
                call_id: format!("m{}-{position}", p.row.id),
                provider_call_id: None,
                conversation_id: p.row.conversation_id.clone(),
                run_id: p.row.run_id.clone(),
                message_id: Some(p.row.id),
                position: position as u32,
                agent: p.row.agent.clone(),
                depth: p.row.depth,
                tool: call.name.clone(),
                artifact_ids: artifact_ids(&call.name, status, &params),
                attachments: Vec::new(),
                citations: Vec::new(),
                params,
                status,
                reason,
                result,
                handover,
                started_at: p.row.created_at.clone(),
                ended_at: frame.and(ended_at.map(str::to_string)),
                guided: false,
                view: None,
                view_of: None,
            }
        })
        .collect()
}

/// Status, reason and result text of a stored result frame, read from the old wording.
fn outcome(tool: &str, frame: &ResultFrame) -> (CallStatus, Option<String>, String) {
    let text = frame.text.clone();
    if frame.success {
        return (CallStatus::Succeeded, None, text);
    }
    let trimmed = text.trim();
    if let Some(why) = trimmed.strip_prefix(OLD_NOT_RUN) {
        return (CallStatus::NotRun, Some(why.to_string()), text);
    }
    if trimmed.starts_with(OLD_STOPPED) {
        return (CallStatus::Stopped, Some(trimmed.to_string()), text);
    }
    if let Some(why) = denial_reason(tool, trimmed) {
        return (CallStatus::Denied, Some(why), text);
    }
    (CallStatus::Failed, Some(trimmed.to_string()), text)
}

/// The "why" of a denial written by [`crate::calls::denied_message`], if `text` is one.
fn denial_reason(tool: &str, text: &str) -> Option<String> {
    const MARK: &str = "\u{1}";
    let template = crate::calls::denied_message(tool, MARK);
    let (before, after) = template.split_once(MARK)?;
    let why = text.strip_prefix(before)?.strip_suffix(after)?;
    Some(why.to_string())
}

/// A `call_subagent` that handed over: the sub-agent got its instruction (a message one level
/// down went to the named agent) and the call was not refused before running.
fn handover(
    call: &ToolCall,
    status: CallStatus,
    params: &Map<String, Value>,
    handed_to: &mut Option<String>,
) -> Option<Handover> {
    if call.name != "call_subagent" || matches!(status, CallStatus::Denied | CallStatus::NotRun) {
        return None;
    }
    let target = params.get("agent_name")?.as_str()?;
    let instruction = params.get("instruction")?.as_str()?;
    if handed_to.as_deref() != Some(target) {
        return None;
    }
    *handed_to = None; // one hand-over per answer
    Some(Handover {
        target: target.to_string(),
        instruction: instruction.to_string(),
    })
}

/// The artifact a succeeded artifact tool named in its `id` (old rows recorded nothing else).
fn artifact_ids(tool: &str, status: CallStatus, params: &Map<String, Value>) -> Vec<String> {
    match params.get("id").and_then(Value::as_str) {
        Some(id) if status.succeeded() && tool.ends_with("_artifact") => vec![id.to_string()],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, role: &str, agent: &str, depth: u32, content: &str) -> Row {
        Row {
            id,
            conversation_id: "c".into(),
            role: role.into(),
            agent: agent.into(),
            content: content.into(),
            run_id: Some("r".into()),
            depth,
            created_at: format!("t{id}"),
        }
    }

    fn call(tool: &str, params: &[(&str, &str)]) -> String {
        let params: String = params
            .iter()
            .map(|(k, v)| format!("<{k}><![CDATA[{v}]]></{k}>"))
            .collect();
        format!("<tool_call><name>{tool}</name><params>{params}</params></tool_call>")
    }

    /// The engine answered call_subagent last, so results come in another order than written.
    #[test]
    fn results_written_in_run_order_pair_with_the_calls_written_before_them() {
        let handover = call(
            "call_subagent",
            &[("agent_name", "helper"), ("instruction", "go")],
        );
        let answer = format!(
            "{handover}{}{}",
            call("echo", &[("text", "a")]),
            call("echo", &[("text", "b")])
        );
        let results = [
            parser::format_result("echo", true, "got a"),
            parser::format_result("echo", false, "boom b"),
            parser::format_result("call_subagent", true, "helped"),
        ]
        .join("\n\n");
        let records = records(vec![
            row(1, "user", "lead", 0, "task"),
            row(2, "assistant", "lead", 0, &answer),
            row(3, "user", "helper", 1, "go"),
            row(4, "assistant", "helper", 1, "helped"),
            row(5, "tool", "lead", 0, &results),
            row(6, "assistant", "lead", 0, &call("echo", &[("text", "cut")])),
        ]);
        let got: Vec<_> = records
            .iter()
            .map(|r| {
                (
                    r.call_id.as_str(),
                    r.tool.as_str(),
                    r.status,
                    r.result.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("m2-0", "call_subagent", CallStatus::Succeeded, "helped"),
                ("m2-1", "echo", CallStatus::Succeeded, "got a"),
                ("m2-2", "echo", CallStatus::Failed, "boom b"),
                ("m6-0", "echo", CallStatus::NotRun, ""),
            ]
        );
        assert_eq!(records[0].handover.as_ref().unwrap().target, "helper");
        assert_eq!(records[2].reason.as_deref(), Some("boom b"));
        assert_eq!(records[3].ended_at, None, "no result was ever stored");
    }

    #[test]
    fn the_old_wording_reads_as_statuses() {
        let frame = |success, text: &str| ResultFrame {
            name: "echo".into(),
            success,
            text: text.into(),
        };
        let denied =
            crate::calls::denied_message("echo", "no answer before the permission timeout");
        let cases = [
            (
                frame(false, &denied),
                CallStatus::Denied,
                "no answer before the permission timeout",
            ),
            (
                frame(false, "not run: the user stopped the run"),
                CallStatus::NotRun,
                "the user stopped the run",
            ),
            (
                frame(
                    false,
                    "stopped by the user while running; it may have partly happened",
                ),
                CallStatus::Stopped,
                "stopped by the user while running; it may have partly happened",
            ),
            (frame(false, "HTTP 500"), CallStatus::Failed, "HTTP 500"),
        ];
        for (f, status, reason) in cases {
            let (s, r, text) = outcome("echo", &f);
            assert_eq!(
                (s, r.as_deref(), text.as_str()),
                (status, Some(reason), f.text.as_str())
            );
        }
        assert_eq!(outcome("echo", &frame(true, "ok")).0, CallStatus::Succeeded);
    }
}
