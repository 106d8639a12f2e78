//! Conversations in the database: creation, the always-allowed tools (whole-tool grants, see
//! [`crate::grants`]), the messages of every run as they happen, and the runs themselves.
//! Each write is its own transaction, so a crash loses at most the message being streamed;
//! [`mark_interrupted_runs`] (called when the app or a CLI command opens) turns runs whose
//! process is gone (see [`crate::owner`]) into `interrupted`, and leaves the runs of live
//! processes alone.

use std::collections::BTreeSet;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::owner::ProcessOwner;

/// Create the conversation `id` if it does not exist.
pub fn ensure(conn: &Connection, id: &str, title: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO conversations (id, title) VALUES (?1, ?2) ON CONFLICT(id) DO NOTHING",
        params![id, title],
    )?;
    Ok(())
}

/// The tools the user always allows in conversation `id` as whole-tool grants (empty for an
/// unknown conversation). See [`crate::grants`] for grants and their bindings.
pub fn always_allowed(conn: &Connection, id: &str) -> rusqlite::Result<BTreeSet<String>> {
    Ok(crate::grants::whole_tools(conn, id)?.into_iter().collect())
}

/// Change whether `tool` is always allowed in conversation `id` (a whole-tool grant bound to
/// nothing, or none). A conversation that does not exist (it was deleted, perhaps while a
/// permission request was open) is never re-created: allowing fails with
/// [`rusqlite::Error::QueryReturnedNoRows`], revoking does nothing.
pub fn set_always_allowed(
    conn: &Connection,
    id: &str,
    tool: &str,
    allowed: bool,
) -> rusqlite::Result<()> {
    use crate::grants;
    if allowed {
        grants::add(conn, id, tool, None, &grants::Binding::none()).map(|_| ())
    } else {
        grants::delete_tool(conn, id, tool).map(|_| ())
    }
}

/// The conversation's agent's share of its model's context window at its latest request (what
/// the engine's `ContextUsage` event of that request said).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ContextUsage {
    /// Estimated tokens of the request (system prompt, tool instructions, history).
    pub estimated_tokens: u32,
    /// Tokens kept free for the answer.
    pub reserved_tokens: u32,
    /// The model's context window in tokens.
    pub window_tokens: u32,
}

/// Remember `usage` as `conversation`'s latest (replacing the one before).
pub fn set_context_usage(
    conn: &Connection,
    conversation: &str,
    usage: ContextUsage,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO context_usage (conversation_id, estimated_tokens, reserved_tokens, window_tokens)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (conversation_id) DO UPDATE SET estimated_tokens = ?2, reserved_tokens = ?3,
             window_tokens = ?4",
        params![
            conversation,
            usage.estimated_tokens,
            usage.reserved_tokens,
            usage.window_tokens
        ],
    )?;
    Ok(())
}

/// `conversation`'s latest context usage, if a request was ever sent in it.
pub fn context_usage(
    conn: &Connection,
    conversation: &str,
) -> rusqlite::Result<Option<ContextUsage>> {
    conn.query_row(
        "SELECT estimated_tokens, reserved_tokens, window_tokens FROM context_usage
         WHERE conversation_id = ?1",
        [conversation],
        |r| {
            Ok(ContextUsage {
                estimated_tokens: r.get(0)?,
                reserved_tokens: r.get(1)?,
                window_tokens: r.get(2)?,
            })
        },
    )
    .optional()
}

/// A conversation in the list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConversationSummary {
    /// Id.
    pub id: String,
    /// Title (the first task, unless renamed).
    pub title: String,
    /// The agent of its latest run.
    pub agent: String,
    /// Last change (RFC 3339).
    pub updated_at: String,
    /// Status of the latest run, if any.
    pub last_status: Option<String>,
    /// Tools always allowed in it.
    pub always_allowed: Vec<String>,
}

/// One page of the conversation list, and how many conversations the whole list has.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConversationPage {
    /// The conversations of this page, most recently changed first.
    pub items: Vec<ConversationSummary>,
    /// How many conversations match the query (all pages).
    pub total: u32,
}

/// Shortest search text the trigram index answers (see migration 7). Shorter text is looked
/// for in titles only: one or two letters match nearly every message anyway, and scanning
/// every message for them took seconds at a year of use, while the user was still typing.
const TRIGRAM: usize = 3;

/// The `WHERE` clause of a list and its parameters: `?1` is `None` without a query, else the
/// `LIKE` pattern for titles; `?2` is the full-text phrase for message text (`None` below
/// [`TRIGRAM`] characters). Every clause names `?2`, so both bind in every statement. A query
/// is a substring, matched in any case, as `LIKE` matches it.
fn filter(query: Option<&str>) -> (&'static str, Option<String>, Option<String>) {
    let Some(q) = query.map(str::trim).filter(|q| !q.is_empty()) else {
        return ("?2 IS NULL", None, None);
    };
    let pattern = format!(
        "%{}%",
        q.replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    if q.chars().count() < TRIGRAM {
        return (
            "?2 IS NULL AND c.title LIKE ?1 ESCAPE '\\'",
            Some(pattern),
            None,
        );
    }
    (
        "c.title LIKE ?1 ESCAPE '\\'
         OR c.id IN (SELECT m.conversation_id FROM messages m WHERE m.id IN
            (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?2))",
        Some(pattern),
        Some(format!("\"{}\"", q.replace('"', "\"\""))),
    )
}

const SUMMARY_COLUMNS: &str = "c.id, c.title, c.agent, c.updated_at,
    (SELECT json_group_array(tool) FROM (SELECT DISTINCT g.tool FROM permission_grants g
        WHERE g.conversation_id = c.id AND g.rule_json IS NULL ORDER BY g.tool)),
    (SELECT status FROM runs r WHERE r.conversation_id = c.id ORDER BY r.started_at DESC, r.rowid DESC LIMIT 1)";

fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationSummary> {
    let allowed: String = r.get(4)?;
    Ok(ConversationSummary {
        id: r.get(0)?,
        title: r.get(1)?,
        agent: r.get(2)?,
        updated_at: r.get(3)?,
        always_allowed: serde_json::from_str(&allowed).unwrap_or_default(),
        last_status: r.get(5)?,
    })
}

/// Conversations `offset..offset + limit`, most recently changed first; `query` filters by
/// title or message text. The list is read through the `updated_at` index and the message
/// text through the full-text index, so a page costs the same with 10 or 10,000 conversations.
pub fn page(
    conn: &Connection,
    query: Option<&str>,
    limit: u32,
    offset: u32,
) -> rusqlite::Result<ConversationPage> {
    let (clause, pattern, phrase) = filter(query);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {SUMMARY_COLUMNS} FROM conversations c WHERE {clause}
         ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ?3 OFFSET ?4"
    ))?;
    let items = stmt
        .query_map(params![pattern, phrase, limit, offset], summary_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let total: u32 = conn.query_row(
        &format!("SELECT count(*) FROM conversations c WHERE {clause}"),
        params![pattern, phrase],
        |r| r.get(0),
    )?;
    Ok(ConversationPage { items, total })
}

/// Every conversation, most recently changed first; `query` filters by title or message text.
pub fn list(conn: &Connection, query: Option<&str>) -> rusqlite::Result<Vec<ConversationSummary>> {
    Ok(page(conn, query, u32::MAX, 0)?.items)
}

/// One conversation's summary, or None when it does not exist.
pub fn summary(conn: &Connection, id: &str) -> rusqlite::Result<Option<ConversationSummary>> {
    conn.query_row(
        &format!("SELECT {SUMMARY_COLUMNS} FROM conversations c WHERE c.id = ?1"),
        [id],
        summary_from_row,
    )
    .optional()
}

/// Give an untitled conversation a title taken from its first task (first line, ≤ 60 chars).
pub fn title_if_untitled(conn: &Connection, id: &str, task: &str) -> rusqlite::Result<()> {
    let first_line = task
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut title: String = first_line.chars().take(60).collect();
    if first_line.chars().count() > 60 {
        title.push('…');
    }
    conn.execute(
        "UPDATE conversations SET title = ?2 WHERE id = ?1 AND title = ''",
        params![id, title],
    )?;
    Ok(())
}

/// A conversation's title (empty while untitled), or None when it does not exist.
pub fn title(conn: &Connection, id: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT title FROM conversations WHERE id = ?1",
        params![id],
        |r| r.get(0),
    )
    .optional()
}

/// Rename a conversation. Returns false when it does not exist.
pub fn rename(conn: &Connection, id: &str, title: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute(
        "UPDATE conversations SET title = ?2, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1",
        params![id, title],
    )? > 0)
}

/// Delete a conversation with its messages, runs and artifacts. Returns false when it did not exist.
pub fn delete(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute("DELETE FROM conversations WHERE id = ?1", [id])? > 0)
}

/// [`delete`], refused with [`ConflictError::Busy`] while another live process (the CLI, a
/// second app) runs the conversation: what that run stores would outlive the delete. Runs of
/// this process are the caller's to stop first (see `RunManager::delete_conversation`).
pub fn delete_unless_running_elsewhere(
    conn: &Connection,
    id: &str,
    owner: &ProcessOwner,
) -> Result<bool, ConflictError> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let other: Option<String> = tx
        .query_row(
            "SELECT owner FROM runs WHERE conversation_id = ?1 AND status = 'running'
                AND owner IS NOT NULL AND owner != ?2",
            params![id, owner.id()],
            |r| r.get(0),
        )
        .optional()?;
    if other.is_some_and(|o| owner.is_alive(&o)) {
        if let Some(message) = busy_message(&tx, id, owner)? {
            return Err(ConflictError::Busy(message));
        }
    }
    let deleted = delete(&tx, id)?;
    tx.commit()?;
    Ok(deleted)
}

/// A stored message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoredMessage {
    /// Row id (order of writing).
    pub id: i64,
    /// `user`, `assistant` or `tool`.
    pub role: String,
    /// The agent that wrote or received it.
    pub agent: String,
    /// Text.
    pub content: String,
    /// Run it belongs to.
    pub run_id: Option<String>,
    /// 0 for the conversation's agent, 1+ for sub-agents.
    pub depth: u32,
    /// Tokens, for assistant messages when reported.
    pub prompt_tokens: Option<u32>,
    /// Tokens, for assistant messages when reported.
    pub completion_tokens: Option<u32>,
    /// When it was written (UTC, RFC 3339 with milliseconds), for the timestamp the chat shows.
    pub created_at: String,
}

/// A message to store.
#[derive(Debug, Clone, Copy)]
pub struct NewMessage<'a> {
    /// Conversation.
    pub conversation_id: &'a str,
    /// Run.
    pub run_id: &'a str,
    /// `user`, `assistant` or `tool`.
    pub role: &'a str,
    /// Agent.
    pub agent: &'a str,
    /// Text.
    pub content: &'a str,
    /// Nesting depth.
    pub depth: u32,
    /// Token usage of an assistant message.
    pub usage: Option<(u32, u32)>,
}

/// Append a message.
pub fn add_message(conn: &Connection, m: &NewMessage<'_>) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO messages (conversation_id, run_id, role, agent, content, depth, prompt_tokens, completion_tokens)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            m.conversation_id,
            m.run_id,
            m.role,
            m.agent,
            m.content,
            m.depth,
            m.usage.map(|u| u.0),
            m.usage.map(|u| u.1)
        ],
    )?;
    conn.execute(
        "UPDATE conversations SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1",
        [m.conversation_id],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Every message of a conversation, in order.
pub fn messages(conn: &Connection, conversation_id: &str) -> rusqlite::Result<Vec<StoredMessage>> {
    let mut stmt = conn.prepare(
        "SELECT id, role, agent, content, run_id, depth, prompt_tokens, completion_tokens, created_at
         FROM messages WHERE conversation_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([conversation_id], |r| {
        Ok(StoredMessage {
            id: r.get(0)?,
            role: r.get(1)?,
            agent: r.get(2)?,
            content: r.get(3)?,
            run_id: r.get(4)?,
            depth: r.get(5)?,
            prompt_tokens: r.get(6)?,
            completion_tokens: r.get(7)?,
            created_at: r.get(8)?,
        })
    })?;
    rows.collect()
}

/// Cut a conversation's history at its `turn`-th task (0-based: the `turn`-th user message
/// of the conversation's own agent, depth 0), so the conversation goes on from that point
/// (edit-and-resend): that message and everything written after it (answers, sub-agent
/// messages, tool results and their call records) are deleted; artifacts are kept (they are
/// the conversation's, whichever turn wrote them). Refused with [`ConflictError::Busy`] while a
/// run of the conversation is in progress in a live process (this one included): the run would
/// go on writing after the cut. Returns how many messages were deleted (0 when there is no
/// such turn).
pub fn truncate_at_turn(
    conn: &Connection,
    conversation_id: &str,
    turn: u32,
    owner: &ProcessOwner,
) -> Result<usize, ConflictError> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    if let Some(message) = busy_message(&tx, conversation_id, owner)? {
        return Err(ConflictError::Busy(message));
    }
    let from: Option<i64> = tx
        .query_row(
            "SELECT id FROM messages WHERE conversation_id = ?1 AND role = 'user' AND depth = 0
             ORDER BY id LIMIT 1 OFFSET ?2",
            params![conversation_id, turn],
            |r| r.get(0),
        )
        .optional()?;
    let Some(from) = from else {
        return Ok(0);
    };
    // Call records point at their assistant message (set to NULL when it goes): delete them
    // first, by the messages they belong to.
    tx.execute(
        "DELETE FROM tool_calls WHERE conversation_id = ?1 AND message_id >= ?2",
        params![conversation_id, from],
    )?;
    let deleted = tx.execute(
        "DELETE FROM messages WHERE conversation_id = ?1 AND id >= ?2",
        params![conversation_id, from],
    )?;
    tx.execute(
        "UPDATE conversations SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1",
        [conversation_id],
    )?;
    tx.commit()?;
    Ok(deleted)
}

/// Status of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// In progress (or the process died: see [`mark_interrupted_runs`]).
    Running,
    /// The agent gave its final answer.
    Completed,
    /// The user cancelled it.
    Cancelled,
    /// It stopped on an error.
    Failed,
    /// The app stopped while it ran.
    Interrupted,
}

impl RunStatus {
    fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// Why a run could not start, or a conversation could not be deleted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConflictError {
    /// The conversation has a run in progress, in this or another live process.
    #[error("{0}")]
    Busy(String),
    /// The database refused.
    #[error(transparent)]
    Db(#[from] crate::db::StoreFailure),
}

impl From<rusqlite::Error> for ConflictError {
    fn from(e: rusqlite::Error) -> Self {
        ConflictError::Db(e.into())
    }
}

/// Record the start of a run owned by `owner` (creating the conversation if needed). Fails
/// with [`ConflictError::Busy`] while another run of the conversation is in progress in a live
/// process; a `running` run whose process is gone is marked interrupted first. Check and insert
/// are one `IMMEDIATE` transaction, so two processes starting at once cannot both win.
pub fn start_run(
    conn: &Connection,
    run_id: &str,
    conversation_id: &str,
    agent: &str,
    owner: &ProcessOwner,
) -> Result<(), ConflictError> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    if let Some(message) = busy_message(&tx, conversation_id, owner)? {
        return Err(ConflictError::Busy(message));
    }
    interrupt_orphans(&tx, Some(conversation_id), owner)?;
    ensure(&tx, conversation_id, "")?;
    tx.execute(
        "UPDATE conversations SET agent = ?2 WHERE id = ?1",
        params![conversation_id, agent],
    )?;
    tx.execute(
        "INSERT INTO runs (id, conversation_id, agent, status, owner, owner_pid, owner_label)
         VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6)",
        params![
            run_id,
            conversation_id,
            agent,
            owner.id(),
            owner.pid(),
            owner.label()
        ],
    )?;
    tx.commit()?;
    Ok(())
}

/// The error to show when `conversation_id` has a run in progress in a live process (this one
/// included), naming the conversation by its title and the process by what it is and its pid.
pub fn busy_message(
    conn: &Connection,
    conversation_id: &str,
    owner: &ProcessOwner,
) -> rusqlite::Result<Option<String>> {
    /// owner, owner_pid, owner_label, title.
    type RunningRow = (Option<String>, Option<u32>, Option<String>, String);
    let running: Option<RunningRow> = conn
        .query_row(
            "SELECT r.owner, r.owner_pid, r.owner_label, c.title FROM runs r
             JOIN conversations c ON c.id = r.conversation_id
             WHERE r.conversation_id = ?1 AND r.status = 'running'",
            [conversation_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((Some(run_owner), pid, label, title)) = running else {
        return Ok(None);
    };
    if !owner.is_alive(&run_owner) {
        return Ok(None);
    }
    // An untitled conversation is "this conversation": its id means nothing to a person.
    let name = if title.trim().is_empty() {
        "this conversation".to_string()
    } else {
        format!("conversation '{title}'")
    };
    Ok(Some(if run_owner == owner.id() {
        format!("{name} already has a run in progress; wait for it to finish or stop it")
    } else {
        format!(
            "{name} is already running in another ArtifactFlow process ({}, pid {}); wait for it to finish or stop it there",
            label.as_deref().unwrap_or("another program"),
            pid.map_or_else(|| "unknown".to_string(), |p| p.to_string())
        )
    }))
}

/// Record how a run ended.
pub fn finish_run(
    conn: &Connection,
    run_id: &str,
    status: RunStatus,
    error: Option<&str>,
) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE runs SET status = ?2, error = ?3, ended_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1",
        params![run_id, status.as_str(), error],
    )?;
    Ok(())
}

/// The status of the latest run of a conversation.
pub fn last_run_status(
    conn: &Connection,
    conversation_id: &str,
) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT status FROM runs WHERE conversation_id = ?1 ORDER BY started_at DESC, rowid DESC LIMIT 1",
        [conversation_id],
        |r| r.get(0),
    )
    .optional()
}

/// Runs still `running` whose process is gone were cut short by a crash or kill: mark them
/// `interrupted`. Runs of live processes (another app or CLI command using the same database)
/// are left alone. Returns how many were marked.
pub fn mark_interrupted_runs(conn: &Connection, owner: &ProcessOwner) -> rusqlite::Result<usize> {
    interrupt_orphans(conn, None, owner)
}

/// [`mark_interrupted_runs`], for one conversation or all.
fn interrupt_orphans(
    conn: &Connection,
    conversation_id: Option<&str>,
    owner: &ProcessOwner,
) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare(
        "SELECT id, owner FROM runs WHERE status = 'running' AND (?1 IS NULL OR conversation_id = ?1)",
    )?;
    let orphans: Vec<String> = stmt
        .query_map([conversation_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })?
        .filter_map(|row| match row {
            Ok((_, Some(o))) if owner.is_alive(&o) => None,
            Ok((id, _)) => Some(Ok(id)),
            Err(e) => Some(Err(e)),
        })
        .collect::<rusqlite::Result<_>>()?;
    for id in &orphans {
        conn.execute(
            "UPDATE runs SET status = 'interrupted',
                error = 'the ArtifactFlow process running it stopped before it finished',
                ended_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1 AND status = 'running'",
            [id],
        )?;
    }
    Ok(orphans.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_search_rename_delete() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = crate::db::open(&tmp.path().join("a.db")).unwrap();
        let owner = ProcessOwner::acquire(tmp.path()).unwrap();
        ensure(&conn, "a", "Rust history").unwrap();
        ensure(&conn, "b", "Cooking 100% pasta").unwrap();
        start_run(&conn, "r", "b", "lead", &owner).unwrap();
        add_message(
            &conn,
            &NewMessage {
                conversation_id: "b",
                run_id: "r",
                role: "user",
                agent: "lead",
                content: "carbonara please",
                depth: 0,
                usage: None,
            },
        )
        .unwrap();
        let all = list(&conn, None).unwrap();
        assert_eq!(
            all.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["b", "a"],
            "most recent first"
        );
        assert_eq!(all[0].last_status.as_deref(), Some("running"));
        assert_eq!(all[0].agent, "lead");
        assert_eq!(
            list(&conn, Some("carbon")).unwrap().len(),
            1,
            "finds message text"
        );
        assert_eq!(
            list(&conn, Some("100%")).unwrap()[0].id,
            "b",
            "% is literal"
        );
        assert_eq!(list(&conn, Some("_")).unwrap().len(), 0, "_ is literal");
        assert!(rename(&conn, "a", "Renamed").unwrap());
        assert!(!rename(&conn, "zzz", "x").unwrap());
        assert!(delete(&conn, "b").unwrap());
        assert!(
            messages(&conn, "b").unwrap().is_empty(),
            "messages go with it"
        );
        assert_eq!(list(&conn, None).unwrap()[0].title, "Renamed");
    }

    #[test]
    fn always_allowed_set_persists() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.db");
        {
            let conn = crate::db::open(&path).unwrap();
            assert!(always_allowed(&conn, "c").unwrap().is_empty());
            ensure(&conn, "c", "").unwrap();
            set_always_allowed(&conn, "c", "web_fetch", true).unwrap();
            set_always_allowed(&conn, "c", "other", true).unwrap();
            set_always_allowed(&conn, "c", "other", false).unwrap();
        }
        let conn = crate::db::open(&path).unwrap();
        let set = always_allowed(&conn, "c").unwrap();
        assert_eq!(set.into_iter().collect::<Vec<_>>(), ["web_fetch"]);
        assert!(always_allowed(&conn, "other-conversation")
            .unwrap()
            .is_empty());
    }

    #[test]
    fn messages_and_runs_survive_reopening_and_crashed_runs_become_interrupted() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.db");
        {
            let conn = crate::db::open(&path).unwrap();
            // The process that ran it is gone: its owner lock was released.
            let gone = ProcessOwner::acquire(tmp.path()).unwrap();
            start_run(&conn, "r1", "c", "lead", &gone).unwrap();
            let m = |role, content, depth| NewMessage {
                conversation_id: "c",
                run_id: "r1",
                role,
                agent: "lead",
                content,
                depth,
                usage: None,
            };
            add_message(&conn, &m("user", "task", 0)).unwrap();
            add_message(
                &conn,
                &NewMessage {
                    usage: Some((10, 5)),
                    ..m("assistant", "answer", 0)
                },
            )
            .unwrap();
            add_message(&conn, &m("tool", "<tool_result/>", 1)).unwrap();
            // The process dies here: the run is never finished.
        }
        let conn = crate::db::open(&path).unwrap();
        let owner = ProcessOwner::acquire(tmp.path()).unwrap();
        assert_eq!(
            last_run_status(&conn, "c").unwrap().as_deref(),
            Some("running")
        );
        assert_eq!(mark_interrupted_runs(&conn, &owner).unwrap(), 1);
        assert_eq!(
            last_run_status(&conn, "c").unwrap().as_deref(),
            Some("interrupted")
        );
        let all = messages(&conn, "c").unwrap();
        assert_eq!(
            all.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(),
            ["user", "assistant", "tool"]
        );
        assert_eq!(
            (all[1].prompt_tokens, all[1].completion_tokens),
            (Some(10), Some(5))
        );
        assert_eq!(all[2].depth, 1);
        finish_run(&conn, "r1", RunStatus::Completed, None).unwrap();
        assert_eq!(mark_interrupted_runs(&conn, &owner).unwrap(), 0);
    }

    /// Another live process's run is neither interrupted nor doubled; once that process is
    /// gone, its run is interrupted and the conversation can run again.
    #[test]
    fn runs_of_live_owners_are_kept_and_a_second_runner_gets_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = crate::db::open(&tmp.path().join("a.db")).unwrap();
        let app = ProcessOwner::acquire(tmp.path()).unwrap();
        let cli = ProcessOwner::acquire(tmp.path()).unwrap();
        ensure(&conn, "c", "Weekly report").unwrap();
        start_run(&conn, "r1", "c", "lead", &app).unwrap();
        assert_eq!(mark_interrupted_runs(&conn, &cli).unwrap(), 0);
        let err = start_run(&conn, "r2", "c", "lead", &cli)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "conversation 'Weekly report' is already running in another ArtifactFlow process ("
            ),
            "{err}"
        );
        assert!(err.contains(&format!("pid {}", app.pid())), "{err}");
        assert!(
            err.ends_with("wait for it to finish or stop it there"),
            "{err}"
        );
        let same = start_run(&conn, "r3", "c", "lead", &app)
            .unwrap_err()
            .to_string();
        assert!(same.contains("already has a run in progress"), "{same}");
        drop(app);
        start_run(&conn, "r4", "c", "lead", &cli).unwrap();
        let statuses: Vec<(String, String)> = conn
            .prepare("SELECT id, status FROM runs ORDER BY rowid")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let statuses: Vec<_> = statuses
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(statuses, [("r1", "interrupted"), ("r4", "running")]);
    }

    #[test]
    fn always_allow_never_recreates_a_deleted_conversation() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = crate::db::open(&tmp.path().join("a.db")).unwrap();
        ensure(&conn, "c", "t").unwrap();
        assert!(delete(&conn, "c").unwrap());
        assert!(set_always_allowed(&conn, "c", "echo", true).is_err());
        set_always_allowed(&conn, "c", "echo", false).unwrap();
        assert!(list(&conn, None).unwrap().is_empty(), "not re-created");
    }
}
