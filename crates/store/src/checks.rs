//! The tool-use check's results as rows of `tool_checks` (migration 14).
//!
//! One row per completed check: which model (its content identity, see the engine's
//! `check::identity`), the mode and guidance it ran in, the item set, the counts and the whole
//! report as JSON. Nothing is ever updated: a new check adds a row, and [`latest`] reads the
//! newest row of each mode, guidance and item set of a model, which is what the Models screen's badge and
//! `tool_calls: auto` go by.

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

/// A check's result as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoredCheck {
    /// The row's id (newer checks have larger ids).
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub id: i64,
    /// The model's content identity: `sha256:HEX` of a model file, `server:HEX` (a digest of the
    /// server's address and model name) for a profile's model on a server.
    pub model_key: String,
    /// The name the check was run under (a model file's name or a profile's).
    pub model_name: String,
    /// `text` or `native`.
    pub mode: String,
    /// Calls were guided by the call grammar.
    pub guided: bool,
    /// `built-in` or the items file's name with its sha256.
    pub item_set: String,
    /// Items asked.
    pub items: u32,
    /// Items answered as asked.
    pub as_asked: u32,
    /// Items whose calls named the right tools.
    pub right_tool: u32,
    /// Items that needed a call and got only valid calls.
    pub valid_calls: u32,
    /// Items that needed a call.
    pub calls_expected: u32,
    /// Items whose request failed.
    pub failed: u32,
    /// Wall time of the whole check.
    pub seconds: f64,
    /// The whole report, as JSON.
    pub report: String,
    /// When it finished (UTC, ISO 8601).
    pub created_at: String,
}

/// Store a finished check (its `id` and `created_at` are ignored: the database gives them).
/// Returns the new row's id.
pub fn insert(conn: &Connection, check: &StoredCheck) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO tool_checks (model_key, model_name, mode, guided, item_set, items, as_asked,
             right_tool, valid_calls, calls_expected, failed, seconds, report)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            check.model_key,
            check.model_name,
            check.mode,
            check.guided,
            check.item_set,
            check.items,
            check.as_asked,
            check.right_tool,
            check.valid_calls,
            check.calls_expected,
            check.failed,
            check.seconds,
            check.report,
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

const COLUMNS: &str = "id, model_key, model_name, mode, guided, item_set, items, as_asked, \
    right_tool, valid_calls, calls_expected, failed, seconds, report, created_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredCheck> {
    Ok(StoredCheck {
        id: r.get(0)?,
        model_key: r.get(1)?,
        model_name: r.get(2)?,
        mode: r.get(3)?,
        guided: r.get(4)?,
        item_set: r.get(5)?,
        items: r.get(6)?,
        as_asked: r.get(7)?,
        right_tool: r.get(8)?,
        valid_calls: r.get(9)?,
        calls_expected: r.get(10)?,
        failed: r.get(11)?,
        seconds: r.get(12)?,
        report: r.get(13)?,
        created_at: r.get(14)?,
    })
}

/// The newest check of `model_key` in each mode, guidance and item set, newest first.
pub fn latest(conn: &Connection, model_key: &str) -> rusqlite::Result<Vec<StoredCheck>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM tool_checks WHERE id IN (
             SELECT max(id) FROM tool_checks WHERE model_key = ?1 GROUP BY mode, guided, item_set)
         ORDER BY id DESC"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([model_key], row)?;
    rows.collect()
}

/// One stored check, by id.
pub fn get(conn: &Connection, id: i64) -> rusqlite::Result<Option<StoredCheck>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM tool_checks WHERE id = ?1"),
        [id],
        row,
    )
    .optional()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(key: &str, mode: &str, guided: bool, as_asked: u32) -> StoredCheck {
        StoredCheck {
            id: 0,
            model_key: key.into(),
            model_name: "m".into(),
            mode: mode.into(),
            guided,
            item_set: "built-in".into(),
            items: 10,
            as_asked,
            right_tool: as_asked,
            valid_calls: as_asked,
            calls_expected: 8,
            failed: 0,
            seconds: 1.5,
            report: "{}".into(),
            created_at: String::new(),
        }
    }

    #[test]
    fn latest_keeps_the_newest_row_of_each_mode_and_guidance() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = crate::db::open(&tmp.path().join("a.db")).unwrap();
        insert(&conn, &check("sha256:aa", "text", true, 3)).unwrap();
        let newer = insert(&conn, &check("sha256:aa", "text", true, 7)).unwrap();
        insert(&conn, &check("sha256:aa", "native", false, 5)).unwrap();
        insert(&conn, &check("sha256:bb", "text", true, 9)).unwrap();
        let rows = latest(&conn, "sha256:aa").unwrap();
        let seen: Vec<_> = rows
            .iter()
            .map(|r| (r.mode.as_str(), r.guided, r.as_asked))
            .collect();
        assert_eq!(seen, [("native", false, 5), ("text", true, 7)]);
        assert_eq!(get(&conn, newer).unwrap().unwrap().as_asked, 7);
        assert!(!rows[0].created_at.is_empty());
        assert!(latest(&conn, "sha256:cc").unwrap().is_empty());
    }

    #[test]
    fn a_mode_the_table_does_not_know_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = crate::db::open(&tmp.path().join("a.db")).unwrap();
        assert!(insert(&conn, &check("sha256:aa", "auto", false, 1)).is_err());
    }
}
