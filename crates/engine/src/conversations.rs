//! Conversations in the database: creation and the always-allowed tool set that
//! "approve and always allow" adds to.

use std::collections::BTreeSet;

use rusqlite::{params, Connection, OptionalExtension};

/// Create the conversation `id` if it does not exist.
pub fn ensure(conn: &Connection, id: &str, title: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO conversations (id, title) VALUES (?1, ?2) ON CONFLICT(id) DO NOTHING",
        params![id, title],
    )?;
    Ok(())
}

/// The tools the user always allows in conversation `id` (empty for an unknown conversation).
pub fn always_allowed(conn: &Connection, id: &str) -> rusqlite::Result<BTreeSet<String>> {
    let json: Option<String> = conn
        .query_row(
            "SELECT always_allowed_tools FROM conversations WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(json
        .and_then(|j| serde_json::from_str(&j).ok())
        .unwrap_or_default())
}

/// Change whether `tool` is always allowed in conversation `id` (creating the conversation if
/// needed).
pub fn set_always_allowed(
    conn: &Connection,
    id: &str,
    tool: &str,
    allowed: bool,
) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    ensure(&tx, id, "")?;
    let mut set = always_allowed(&tx, id)?;
    if allowed {
        set.insert(tool.to_string());
    } else {
        set.remove(tool);
    }
    tx.execute(
        "UPDATE conversations SET always_allowed_tools = ?2,
            updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1",
        params![id, serde_json::to_string(&set).expect("set serialises")],
    )?;
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_allowed_set_persists() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.db");
        {
            let conn = crate::db::open(&path).unwrap();
            assert!(always_allowed(&conn, "c").unwrap().is_empty());
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
}
