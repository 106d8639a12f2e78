//! Call records in the `tool_calls` table: one row per call, written once when the call has
//! ended (the run loop records each call right after the gate returns, and the calls a stop
//! left unrun as `not_run`), read back by conversation for the history and the CLI.

use rusqlite::{params, Connection};

use super::{CallRecord, CallStatus, Handover};

/// Store `record` (replacing a row with the same call id).
pub fn record(conn: &Connection, record: &CallRecord) -> rusqlite::Result<()> {
    // Cached: the run loop writes one row per call, so this is on its hot path.
    conn.prepare_cached(
        "INSERT OR REPLACE INTO tool_calls (call_id, conversation_id, run_id, message_id, position,
             agent, depth, tool, params, status, reason, result, artifact_ids, handover,
             started_at, ended_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?
    .execute(params![
        record.call_id,
        record.conversation_id,
        record.run_id,
        record.message_id,
        record.position,
        record.agent,
        record.depth,
        record.tool,
        serde_json::Value::Object(record.params.clone()).to_string(),
        record.status.as_str(),
        record.reason,
        record.result,
        serde_json::to_string(&record.artifact_ids).unwrap_or_else(|_| "[]".into()),
        record
            .handover
            .as_ref()
            .and_then(|h| serde_json::to_string(h).ok()),
        record.started_at,
        record.ended_at,
    ])?;
    // A separate statement, run only when there are attachments: the backfill of migration 5
    // writes through this function before migration 6 adds the column (its calls have none).
    if let Some(id) = &record.provider_call_id {
        // Separate for the same reason (migration 11 adds the column).
        conn.prepare_cached("UPDATE tool_calls SET provider_call_id = ?1 WHERE call_id = ?2")?
            .execute(params![id, record.call_id])?;
    }
    if record.guided {
        // Separate for the same reason (migration 12 adds the column).
        conn.prepare_cached("UPDATE tool_calls SET guided = 1 WHERE call_id = ?1")?
            .execute(params![record.call_id])?;
    }
    if record.view.is_some() || record.view_of.is_some() {
        // Separate for the same reason (migration 13 adds the columns).
        conn.prepare_cached("UPDATE tool_calls SET view = ?1, view_of = ?2 WHERE call_id = ?3")?
            .execute(params![
                record
                    .view
                    .as_ref()
                    .and_then(|v| serde_json::to_string(v).ok()),
                record.view_of,
                record.call_id
            ])?;
    }
    if !record.attachments.is_empty() {
        conn.prepare_cached("UPDATE tool_calls SET attachments = ?1 WHERE call_id = ?2")?
            .execute(params![
                serde_json::to_string(&record.attachments).unwrap_or_else(|_| "[]".into()),
                record.call_id
            ])?;
    }
    Ok(())
}

/// Every call of a conversation, in the order of their messages and positions.
pub fn list(conn: &Connection, conversation_id: &str) -> rusqlite::Result<Vec<CallRecord>> {
    let mut stmt = conn.prepare(
        "SELECT call_id, conversation_id, run_id, message_id, position, agent, depth, tool,
                params, status, reason, result, artifact_ids, handover, started_at, ended_at,
                attachments, provider_call_id, guided, view, view_of
         FROM tool_calls WHERE conversation_id = ?1
         ORDER BY message_id IS NULL, message_id, position, started_at, rowid",
    )?;
    let rows = stmt.query_map([conversation_id], |r| {
        let params: String = r.get(8)?;
        let status: String = r.get(9)?;
        let artifact_ids: String = r.get(12)?;
        let handover: Option<String> = r.get(13)?;
        let attachments: String = r.get(16)?;
        Ok(CallRecord {
            call_id: r.get(0)?,
            provider_call_id: r.get(17)?,
            conversation_id: r.get(1)?,
            run_id: r.get(2)?,
            message_id: r.get(3)?,
            position: r.get(4)?,
            agent: r.get(5)?,
            depth: r.get(6)?,
            tool: r.get(7)?,
            params: serde_json::from_str(&params).unwrap_or_default(),
            // The table's CHECK admits only the statuses' names.
            status: CallStatus::parse(&status).unwrap_or(CallStatus::Failed),
            reason: r.get(10)?,
            result: r.get(11)?,
            artifact_ids: serde_json::from_str(&artifact_ids).unwrap_or_default(),
            attachments: serde_json::from_str(&attachments).unwrap_or_default(),
            handover: handover.and_then(|h| serde_json::from_str::<Handover>(&h).ok()),
            started_at: r.get(14)?,
            ended_at: r.get(15)?,
            guided: r.get::<_, i64>(18)? != 0,
            view: r
                .get::<_, Option<String>>(19)?
                .and_then(|v| serde_json::from_str(&v).ok()),
            view_of: r.get(20)?,
        })
    })?;
    rows.collect()
}

/// Store a view's HTML document once, named by its SHA-256 (hex), which is returned.
pub fn put_view_document(conn: &Connection, html: &str) -> rusqlite::Result<String> {
    use sha2::{Digest, Sha256};
    let sha = format!("{:x}", Sha256::digest(html.as_bytes()));
    conn.prepare_cached("INSERT OR IGNORE INTO view_documents (sha256, html) VALUES (?1, ?2)")?
        .execute(params![sha, html])?;
    Ok(sha)
}

/// The view of the call `call_id` and its conversation, with its HTML document (`None` when
/// the call has no view, or its document is gone).
pub fn view_of_call(
    conn: &Connection,
    call_id: &str,
) -> rusqlite::Result<Option<(String, super::StoredView, String)>> {
    use rusqlite::OptionalExtension;
    let row: Option<(String, Option<String>)> = conn
        .query_row(
            "SELECT conversation_id, view FROM tool_calls WHERE call_id = ?1",
            [call_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((conversation, Some(view))) = row else {
        return Ok(None);
    };
    let Ok(view) = serde_json::from_str::<super::StoredView>(&view) else {
        return Ok(None);
    };
    let html: Option<String> = conn
        .query_row(
            "SELECT html FROM view_documents WHERE sha256 = ?1",
            [&view.document],
            |r| r.get(0),
        )
        .optional()?;
    Ok(html.map(|html| (conversation, view, html)))
}
