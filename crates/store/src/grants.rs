//! Conversation grants as stored: "always allow" answers, scoped, one row each.
//!
//! A grant is either a whole tool in one conversation or a "calls like this" rule
//! ([`RuleSpec`], always `allow`). It records what it was granted for ([`Binding`]): for a tool
//! that sends a request, the host it went to (a SHA-256 digest, and the host as a label unless a
//! secret holds it); for an MCP tool, its server (name and a digest of its launch settings); for
//! other built-in tools, nothing. Whether a grant applies to a call, and why it no longer does,
//! is the permission checker's business (the engine's `permissions::grants`); this module only
//! keeps the rows.
//!
//! Grants kept from before bindings existed (the old `always_allowed_tools` list, migration 10)
//! are bound to nothing: they apply whatever the destination, as they did.

use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

use crate::rule_spec::RuleSpec;

/// What a grant is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum BindingKind {
    /// Nothing: it applies to every call of the tool.
    None,
    /// The host the tool's request went to.
    Host,
    /// The MCP server (its name and launch settings).
    Server,
}

impl BindingKind {
    fn as_str(self) -> &'static str {
        match self {
            BindingKind::None => "none",
            BindingKind::Host => "host",
            BindingKind::Server => "server",
        }
    }

    fn parse(text: &str) -> BindingKind {
        match text {
            "host" => BindingKind::Host,
            "server" => BindingKind::Server,
            _ => BindingKind::None,
        }
    }
}

/// What a call was (or is) for: compared by digest, shown by label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Binding {
    /// Host, server or nothing.
    pub kind: BindingKind,
    /// SHA-256 (hex) of the host or of the server's launch settings; never sent to the UI.
    #[serde(skip)]
    pub digest: Option<String>,
    /// For people: the host (`api.a.com`), "the host from API_BASE" when a secret holds the
    /// host, or the server's name.
    pub label: Option<String>,
}

impl Binding {
    /// Bound to nothing.
    pub fn none() -> Binding {
        Binding {
            kind: BindingKind::None,
            digest: None,
            label: None,
        }
    }
}

/// One stored grant.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Grant {
    /// Its id (to delete it).
    pub id: String,
    /// The conversation it belongs to.
    pub conversation_id: String,
    /// The conversation's title (empty while untitled).
    pub conversation_title: String,
    /// The tool it was granted for.
    pub tool: String,
    /// `None` for the whole tool, else the "calls like this" rule.
    pub rule: Option<RuleSpec>,
    /// What it is bound to.
    pub binding: Binding,
    /// When it was granted (RFC 3339).
    pub created_at: String,
}

/// Remember a grant in conversation `conversation`. A conversation that does not exist (it was
/// deleted while the dialog was open) is never re-created: that fails with
/// [`rusqlite::Error::QueryReturnedNoRows`]. A grant replaces an equal earlier one (the same
/// whole tool, or the same rule), a stale one included. Returns the grant's id.
pub fn add(
    conn: &Connection,
    conversation: &str,
    tool: &str,
    rule: Option<&RuleSpec>,
    binding: &Binding,
) -> rusqlite::Result<String> {
    let tx = conn.unchecked_transaction()?;
    let exists: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1)",
        [conversation],
        |r| r.get(0),
    )?;
    if !exists {
        return Err(rusqlite::Error::QueryReturnedNoRows);
    }
    let rule_json = rule.map(|r| serde_json::to_string(r).expect("a rule serialises"));
    // The same grant again (the tool, or the same rule) replaces the earlier one, stale or not.
    tx.execute(
        "DELETE FROM permission_grants WHERE conversation_id = ?1 AND tool = ?2
            AND rule_json IS ?3",
        params![conversation, tool, rule_json],
    )?;
    let id = crate::ids::new_id("grant");
    tx.execute(
        "INSERT INTO permission_grants
            (id, conversation_id, tool, rule_json, binding_kind, binding_digest, binding_label)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            id,
            conversation,
            tool,
            rule_json,
            binding.kind.as_str(),
            binding.digest,
            binding.label
        ],
    )?;
    tx.execute(
        "UPDATE conversations SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')
            WHERE id = ?1",
        [conversation],
    )?;
    tx.commit()?;
    Ok(id)
}

const GRANT_COLUMNS: &str = "g.id, g.conversation_id, c.title, g.tool, g.rule_json,
    g.binding_kind, g.binding_digest, g.binding_label, g.created_at";

/// A row as a grant; `None` for a rule grant whose rule no longer reads (written by a newer
/// build): it is left out, so it never widens anything.
fn grant_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<Grant>> {
    let rule_json: Option<String> = r.get(4)?;
    let rule = match rule_json {
        None => None,
        Some(j) => match serde_json::from_str(&j) {
            Ok(rule) => Some(rule),
            Err(_) => return Ok(None),
        },
    };
    let kind: String = r.get(5)?;
    Ok(Some(Grant {
        id: r.get(0)?,
        conversation_id: r.get(1)?,
        conversation_title: r.get(2)?,
        tool: r.get(3)?,
        rule,
        binding: Binding {
            kind: BindingKind::parse(&kind),
            digest: r.get(6)?,
            label: r.get(7)?,
        },
        created_at: r.get(8)?,
    }))
}

fn query(conn: &Connection, filter: &str, args: &[&str]) -> rusqlite::Result<Vec<Grant>> {
    let sql = format!(
        "SELECT {GRANT_COLUMNS} FROM permission_grants g
            JOIN conversations c ON c.id = g.conversation_id
         {filter} ORDER BY c.updated_at DESC, g.created_at, g.id"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), grant_from_row)?;
    rows.filter_map(Result::transpose).collect()
}

/// Every grant, of every conversation (most recently changed conversation first).
pub fn list(conn: &Connection) -> rusqlite::Result<Vec<Grant>> {
    query(conn, "", &[])
}

/// The grants of conversation `conversation`.
pub fn for_conversation(conn: &Connection, conversation: &str) -> rusqlite::Result<Vec<Grant>> {
    query(conn, "WHERE g.conversation_id = ?1", &[conversation])
}

/// The whole-tool grants' tools of conversation `conversation` (what the conversation list
/// shows as always allowed).
pub fn whole_tools(conn: &Connection, conversation: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT DISTINCT tool FROM permission_grants
         WHERE conversation_id = ?1 AND rule_json IS NULL ORDER BY tool",
    )?;
    let tools = stmt.query_map([conversation], |r| r.get(0))?;
    tools.collect()
}

/// Delete grant `id`. Returns false when it did not exist.
pub fn delete(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute("DELETE FROM permission_grants WHERE id = ?1", [id])? > 0)
}

/// Delete the whole-tool grants of `tool` in `conversation` (the old "revoke always allowed").
pub fn delete_tool(conn: &Connection, conversation: &str, tool: &str) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM permission_grants WHERE conversation_id = ?1 AND tool = ?2
            AND rule_json IS NULL",
        params![conversation, tool],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule_spec::RuleAction;

    fn host(label: &str) -> Binding {
        Binding {
            kind: BindingKind::Host,
            digest: Some(format!("{:0>64}", label.len())),
            label: Some(label.into()),
        }
    }

    #[test]
    fn granting_again_replaces_the_equal_grant_and_needs_the_conversation() {
        let tmp = tempfile::tempdir().unwrap();
        let conn = crate::db::open(&tmp.path().join("g.db")).unwrap();
        let a = host("api.a.com");
        assert!(matches!(
            add(&conn, "c", "t", None, &a),
            Err(rusqlite::Error::QueryReturnedNoRows)
        ));
        crate::conversations::ensure(&conn, "c", "").unwrap();
        let rule = |q: &str| RuleSpec {
            tool: "t".into(),
            when: [("q".to_string(), q.to_string())].into_iter().collect(),
            action: RuleAction::Allow,
        };
        add(&conn, "c", "t", None, &Binding::none()).unwrap();
        let kept = add(&conn, "c", "t", None, &a).unwrap();
        add(&conn, "c", "t", Some(&rule("a*")), &a).unwrap();
        add(&conn, "c", "t", Some(&rule("a*")), &a).unwrap();
        add(&conn, "c", "t", Some(&rule("b*")), &a).unwrap();
        let all = for_conversation(&conn, "c").unwrap();
        assert_eq!(all.len(), 3, "{all:?}");
        let whole: Vec<_> = all.iter().filter(|g| g.rule.is_none()).collect();
        assert_eq!(whole.len(), 1);
        assert_eq!(whole[0].id, kept);
        assert_eq!(whole[0].binding.label.as_deref(), Some("api.a.com"));
        assert!(delete(&conn, &kept).unwrap());
        assert!(!delete(&conn, &kept).unwrap());
    }
}
