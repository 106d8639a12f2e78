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
    if let Some(server) = &record.view_of {
        // Separate for the same reason (migration 13 adds the column).
        conn.prepare_cached("UPDATE tool_calls SET view_of = ?1 WHERE call_id = ?2")?
            .execute(params![server, record.call_id])?;
    }
    if !record.citations.is_empty() {
        // Separate for the same reason (migration 16 adds the column).
        conn.prepare_cached("UPDATE tool_calls SET citations = ?1 WHERE call_id = ?2")?
            .execute(params![
                serde_json::to_string(&record.citations).unwrap_or_else(|_| "[]".into()),
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
                attachments, provider_call_id, guided,
                (SELECT json_object('server', json_extract(v.view, '$.server'),
                                    'resource_uri', json_extract(v.view, '$.resource_uri'))
                 FROM call_views v WHERE v.call_id = tool_calls.call_id), view_of, citations
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
            citations: serde_json::from_str(&r.get::<_, String>(21)?).unwrap_or_default(),
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

/// Keep `view` (its document stored with [`put_view_document`]) with the call `call_id` of
/// `conversation`, replacing what it had.
pub fn put_view(
    conn: &Connection,
    call_id: &str,
    conversation: &str,
    view: &super::StoredView,
) -> rusqlite::Result<()> {
    let json = serde_json::to_string(view)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    // An upsert, not INSERT OR REPLACE: a replace deletes the row first, which (with recursive
    // triggers) could delete a document the new row names.
    conn.prepare_cached(
        "INSERT INTO call_views (call_id, conversation_id, document, view)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(call_id) DO UPDATE SET conversation_id = excluded.conversation_id,
             document = excluded.document, view = excluded.view",
    )?
    .execute(params![call_id, conversation, view.document, json])?;
    Ok(())
}

/// The view of the call `call_id`, its conversation and its HTML document (`None` when the
/// call has no view, or its document is gone).
pub fn view_of_call(
    conn: &Connection,
    call_id: &str,
) -> rusqlite::Result<Option<(String, super::StoredView, String)>> {
    use rusqlite::OptionalExtension;
    let row: Option<(String, String, String)> = conn
        .query_row(
            "SELECT v.conversation_id, v.view, d.html FROM call_views v
             JOIN view_documents d ON d.sha256 = v.document WHERE v.call_id = ?1",
            [call_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    Ok(row.and_then(|(conversation, view, html)| {
        let view = serde_json::from_str::<super::StoredView>(&view).ok()?;
        Some((conversation, view, html))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::StoredView;

    fn view(document: &str) -> StoredView {
        StoredView {
            server: "apps".into(),
            resource_uri: "ui://counter/view".into(),
            document: document.into(),
            launch_digest: "0".repeat(64),
            local_server: true,
            meta: serde_json::json!({"prefersBorder": true}),
            tool_input: serde_json::json!({}),
            tool_result: Some(serde_json::json!({"content": []})),
        }
    }

    fn documents(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM view_documents", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_document_is_kept_once_and_goes_with_the_last_view_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = crate::db::open(&tmp.path().join("v.db")).unwrap();
        for c in ["a", "b"] {
            crate::conversations::ensure(&conn, c, "").unwrap();
        }
        let html = "<p>view</p>";
        let sha = put_view_document(&conn, html).unwrap();
        assert_eq!(put_view_document(&conn, html).unwrap(), sha);
        put_view(&conn, "call_1", "a", &view(&sha)).unwrap();
        put_view(&conn, "call_2", "b", &view(&sha)).unwrap();
        assert_eq!(documents(&conn), 1);
        let (conversation, kept, text) = view_of_call(&conn, "call_1").unwrap().unwrap();
        assert_eq!((conversation.as_str(), text.as_str()), ("a", html));
        assert_eq!(kept, view(&sha));
        assert!(view_of_call(&conn, "call_3").unwrap().is_none());

        // The call's row deleted (edit-and-resend cuts a conversation so): its view goes too.
        let record = |id: &str, conversation: &str| {
            conn.execute(
                "INSERT INTO tool_calls (call_id, conversation_id, tool, status)
                 VALUES (?1, ?2, 'apps.show_counter', 'succeeded')",
                [id, conversation],
            )
            .unwrap()
        };
        record("call_2", "b");
        conn.execute("DELETE FROM tool_calls WHERE call_id = 'call_2'", [])
            .unwrap();
        assert!(view_of_call(&conn, "call_2").unwrap().is_none());
        put_view(&conn, "call_2", "b", &view(&sha)).unwrap();

        // A view given another document lets go of the one no view names any more.
        let other = put_view_document(&conn, "<p>other</p>").unwrap();
        put_view(&conn, "call_3", "a", &view(&sha)).unwrap();
        put_view(&conn, "call_3", "a", &view(&other)).unwrap();
        assert_eq!(documents(&conn), 2);
        let lone = put_view_document(&conn, "<p>lone</p>").unwrap();
        put_view(&conn, "call_3", "a", &view(&lone)).unwrap();
        assert_eq!(documents(&conn), 2, "`other` went when call_3 let go of it");
        assert_eq!(
            view_of_call(&conn, "call_3").unwrap().unwrap().2,
            "<p>lone</p>"
        );

        crate::conversations::delete(&conn, "a").unwrap();
        assert!(view_of_call(&conn, "call_1").unwrap().is_none());
        assert_eq!(documents(&conn), 1, "call_2 still names it");
        crate::conversations::delete(&conn, "b").unwrap();
        assert_eq!(documents(&conn), 0, "gone with the last view");
    }
}
