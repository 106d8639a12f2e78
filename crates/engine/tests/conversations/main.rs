//! The conversation list at a year of use, on a real SQLite file: thousands of conversations
//! of 20 messages (`test_support::seed`), paged through the `updated_at` index and searched
//! through the messages' trigram full-text index instead of reading every row.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::OnceLock;

use engine::conversations::{self, ConversationPage};
use rusqlite::Connection;

const COUNT: usize = 3000;

/// The seeded database, written once (a debug build takes a while) and copied for each test.
fn template() -> &'static PathBuf {
    static TEMPLATE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &TEMPLATE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("template.db");
            let conn = engine::db::open(&path).unwrap();
            test_support::seed::seed(&conn, COUNT, 20).unwrap();
            // Everything into the main file, so copying it alone copies the database.
            conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
            (dir, path)
        })
        .1
}

fn seeded() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("artifactflow.db");
    std::fs::copy(template(), &path).unwrap();
    let conn = engine::db::open(&path).unwrap();
    (dir, conn)
}

fn ids(page: &ConversationPage) -> Vec<&str> {
    page.items.iter().map(|c| c.id.as_str()).collect()
}

/// SQLite's plan for the statement, one line per step.
fn plan(conn: &Connection, sql: &str) -> String {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows.join("\n")
}

#[test]
fn pages_cover_every_conversation_once_newest_first() {
    let (_dir, conn) = seeded();
    let first = conversations::page(&conn, None, 100, 0).unwrap();
    assert_eq!(first.total as usize, COUNT);
    assert_eq!(first.items.len(), 100);
    assert_eq!(first.items[0].id, "seed-00000", "newest first");
    assert_eq!(first.items[0].title, test_support::seed::title(0));
    let mut seen = HashSet::new();
    let mut last_updated = first.items[0].updated_at.clone();
    for offset in (0..COUNT as u32 + 100).step_by(250) {
        let page = conversations::page(&conn, None, 250, offset).unwrap();
        assert_eq!(page.total as usize, COUNT);
        for c in &page.items {
            assert!(
                c.updated_at <= last_updated,
                "{} after {last_updated}",
                c.updated_at
            );
            last_updated = c.updated_at.clone();
            assert!(seen.insert(c.id.clone()), "{} twice", c.id);
        }
    }
    assert_eq!(seen.len(), COUNT);
    let past_end = conversations::page(&conn, None, 100, COUNT as u32).unwrap();
    assert!(past_end.items.is_empty());
    assert_eq!(past_end.total as usize, COUNT);
}

#[test]
fn search_finds_message_text_in_any_case_through_the_full_text_index() {
    let (_dir, conn) = seeded();
    let needle = test_support::seed::ticket(2345);
    let found = conversations::page(&conn, Some(&needle), 100, 0).unwrap();
    assert_eq!(ids(&found), ["seed-02345"]);
    assert_eq!(found.total, 1);
    let upper = conversations::page(&conn, Some(&needle.to_uppercase()), 100, 0).unwrap();
    assert_eq!(ids(&upper), ["seed-02345"], "any case");
    // A substring inside a word, as `LIKE '%…%'` found it.
    let part = conversations::page(&conn, Some("cket 0234"), 100, 0).unwrap();
    assert_eq!(part.total, 10, "{:?}", ids(&part));
    // Titles are searched too, and characters LIKE treats specially are literal.
    let titled = conversations::page(&conn, Some("#2999"), 100, 0).unwrap();
    assert_eq!(ids(&titled), ["seed-02999"]);
    assert_eq!(
        conversations::page(&conn, Some("100%"), 10, 0)
            .unwrap()
            .total,
        0
    );
    assert_eq!(
        conversations::page(&conn, Some("a\"b"), 10, 0)
            .unwrap()
            .total,
        0
    );
    // Shorter than a trigram: titles only (a message scan took seconds while typing).
    conversations::ensure(&conn, "short", "zq").unwrap();
    let short = conversations::page(&conn, Some("zq"), 10, 0).unwrap();
    assert_eq!(ids(&short), ["short"]);
    assert_eq!(
        conversations::page(&conn, Some("#7"), 1, 0).unwrap().total,
        1 + 10 + 100
    );
    assert_eq!(
        conversations::page(&conn, Some("(s"), 1, 0).unwrap().total,
        0,
        "not in titles"
    );
    // Pages of a search.
    let many = conversations::page(&conn, Some("ticket 01"), 40, 40).unwrap();
    assert_eq!(many.total, 1000);
    assert_eq!(many.items.len(), 40);

    let sql_plan = plan(
        &conn,
        "SELECT rowid FROM messages_fts WHERE messages_fts MATCH '\"ticket 02345\"'",
    );
    assert!(sql_plan.contains("VIRTUAL TABLE INDEX"), "{sql_plan}");
}

#[test]
fn the_first_page_is_read_through_the_updated_at_index() {
    let (_dir, conn) = seeded();
    let sql_plan = plan(
        &conn,
        "SELECT c.id FROM conversations c ORDER BY c.updated_at DESC, c.rowid DESC LIMIT 100",
    );
    assert!(sql_plan.contains("conversations_by_updated"), "{sql_plan}");
    assert!(
        !sql_plan.contains("TEMP B-TREE"),
        "no sort of every row: {sql_plan}"
    );
}

#[test]
fn deleted_conversations_leave_the_index_and_new_messages_enter_it() {
    let (_dir, conn) = seeded();
    let needle = test_support::seed::ticket(17);
    assert!(conversations::delete(&conn, "seed-00017").unwrap());
    assert_eq!(
        conversations::page(&conn, Some(&needle), 10, 0)
            .unwrap()
            .total,
        0
    );
    let indexed: i64 = conn
        .query_row(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '\"ticket 00017\"'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 0, "the full-text rows went with the messages");
    conversations::add_message(
        &conn,
        &conversations::NewMessage {
            conversation_id: "seed-00500",
            run_id: "r",
            role: "user",
            agent: "lead_agent",
            content: "a brand new heliotrope question",
            depth: 0,
            usage: None,
        },
    )
    .unwrap();
    let found = conversations::page(&conn, Some("Heliotrope"), 10, 0).unwrap();
    assert_eq!(ids(&found), ["seed-00500"]);
    let first = conversations::page(&conn, None, 1, 0).unwrap();
    assert_eq!(
        ids(&first),
        ["seed-00500"],
        "a new message moves it to the top"
    );
    assert_eq!(
        conversations::summary(&conn, "seed-00500")
            .unwrap()
            .unwrap()
            .title,
        test_support::seed::title(500)
    );
    assert!(conversations::summary(&conn, "seed-00017")
        .unwrap()
        .is_none());
}

/// A database written before the index (schema 6) has its messages indexed by the upgrade.
#[test]
fn upgrading_indexes_the_messages_already_stored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v6.db");
    {
        let mut conn = Connection::open(&path).unwrap();
        engine::db::migrations().to_version(&mut conn, 6).unwrap();
        conn.execute_batch(
            "INSERT INTO conversations (id, title) VALUES ('old', 'kept');
             INSERT INTO messages (conversation_id, role, content) VALUES ('old', 'user', 'an older heliotrope');",
        )
        .unwrap();
    }
    let conn = engine::db::open(&path).unwrap();
    let found = conversations::page(&conn, Some("heliotrope"), 10, 0).unwrap();
    assert_eq!(ids(&found), ["old"]);
}
