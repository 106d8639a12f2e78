//! Databases made before call records migrate: the calls of a database written by the version
//! users have (commit d48d954, schema 3; see `tests/fixtures/history_v3/README.md`) are
//! backfilled into `tool_calls` once, with their statuses, reasons and hand-overs.

use engine::calls::store::list as rows_for_conversation;
use engine::calls::{CallRecord, CallStatus, Handover};
use serde_json::json;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/history_v3/artifactflow.db"
);

/// A copy of the fixture (opening migrates it; the committed file stays at schema 3).
fn fixture_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("artifactflow.db");
    std::fs::copy(FIXTURE, &path).unwrap();
    (dir, path)
}

/// The fields a backfilled row is checked on (ids and times are checked apart).
fn summary(r: &CallRecord) -> serde_json::Value {
    json!({
        "tool": r.tool,
        "position": r.position,
        "agent": r.agent,
        "depth": r.depth,
        "params": r.params,
        "status": r.status.as_str(),
        "reason": r.reason,
        "artifact_ids": r.artifact_ids,
        "handover": r.handover,
    })
}

#[test]
fn an_old_database_gets_its_calls_backfilled_once() {
    let (_dir, path) = fixture_copy();
    {
        let old = rusqlite::Connection::open(&path).unwrap();
        assert_eq!(
            engine::db::schema_version(&old).unwrap(),
            3,
            "made by the old version"
        );
    }
    let conn = engine::db::open(&path).unwrap();
    assert_eq!(
        engine::db::schema_version(&conn).unwrap(),
        engine::db::latest_version()
    );
    let calls = rows_for_conversation(&conn, "conv").unwrap();
    let got: Vec<_> = calls.iter().map(summary).collect();
    assert_eq!(
        got,
        vec![
            json!({"tool": "echo", "position": 0, "agent": "tester", "depth": 0,
                   "params": {"text": "first"}, "status": "succeeded", "reason": null,
                   "artifact_ids": [], "handover": null}),
            json!({"tool": "echo", "position": 1, "agent": "tester", "depth": 0,
                   "params": {"text": "second"}, "status": "succeeded", "reason": null,
                   "artifact_ids": [], "handover": null}),
            json!({"tool": "read_artifact", "position": 2, "agent": "tester", "depth": 0,
                   "params": {"id": "missing"}, "status": "failed",
                   "reason": "no artifact with id 'missing' in this conversation",
                   "artifact_ids": [], "handover": null}),
            json!({"tool": "create_artifact", "position": 3, "agent": "tester", "depth": 0,
                   "params": {"id": "notes", "title": "Notes", "content": "# Notes"},
                   "status": "succeeded", "reason": null,
                   "artifact_ids": ["notes"], "handover": null}),
            json!({"tool": "echo", "position": 0, "agent": "tester", "depth": 0,
                   "params": {"text": "refuse me"}, "status": "denied", "reason": "denied",
                   "artifact_ids": [], "handover": null}),
            json!({"tool": "echo", "position": 0, "agent": "tester", "depth": 0,
                   "params": {"text": "waiting"}, "status": "not_run",
                   "reason": "the run was stopped while waiting for permission",
                   "artifact_ids": [], "handover": null}),
            json!({"tool": "slow", "position": 1, "agent": "tester", "depth": 0,
                   "params": {}, "status": "not_run", "reason": "the user stopped the run",
                   "artifact_ids": [], "handover": null}),
            json!({"tool": "slow", "position": 0, "agent": "tester", "depth": 0,
                   "params": {"text": "running"}, "status": "stopped",
                   "reason": "stopped by the user while running; it may have partly happened",
                   "artifact_ids": [], "handover": null}),
        ]
    );
    // Two calls of the same tool keep their own results.
    assert!(calls[0].result.contains("first") && !calls[0].result.contains("second"));
    assert!(calls[1].result.contains("second") && !calls[1].result.contains("first"));
    // Stable ids from the assistant message and the position; every call has ended.
    for c in &calls {
        assert_eq!(
            c.call_id,
            format!("m{}-{}", c.message_id.unwrap(), c.position)
        );
        assert!(c.run_id.is_some() && c.ended_at.is_some(), "{c:?}");
    }
    assert_eq!(calls[0].message_id, calls[1].message_id);
    assert_ne!(calls[0].message_id, calls[4].message_id);

    let handed = rows_for_conversation(&conn, "conv2").unwrap();
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0].tool, "call_subagent");
    assert_eq!(handed[0].status, CallStatus::Succeeded);
    assert_eq!(
        handed[0].handover,
        Some(Handover {
            target: "search_agent".into(),
            instruction: "Find the Rust release date".into()
        })
    );
    assert!(
        handed[0].result.contains("2015-05-15"),
        "{}",
        handed[0].result
    );

    // Opening again backfills nothing: rows removed since stay removed.
    let count = |conn: &rusqlite::Connection| -> i64 {
        conn.query_row("SELECT count(*) FROM tool_calls", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count(&conn), 9);
    conn.execute("DELETE FROM tool_calls WHERE conversation_id = 'conv'", [])
        .unwrap();
    drop(conn);
    let conn = engine::db::open(&path).unwrap();
    assert_eq!(count(&conn), 1, "backfilled once, not on every open");
}

#[test]
fn a_new_database_has_nothing_to_backfill() {
    let dir = tempfile::tempdir().unwrap();
    let conn = engine::db::open(&dir.path().join("new.db")).unwrap();
    assert!(rows_for_conversation(&conn, "conv").unwrap().is_empty());
}

/// `(tool, status, reason)` of the results of each tool message of a reopened conversation.
fn shown(conn: &rusqlite::Connection, id: &str) -> Vec<Vec<(String, String, Option<String>)>> {
    engine::history::history(conn, id)
        .unwrap()
        .into_iter()
        .filter(|m| m.message.role == "tool")
        .map(|m| {
            m.results
                .into_iter()
                .map(|r| (r.name, r.status.as_str().to_string(), r.reason))
                .collect()
        })
        .collect()
}

#[test]
fn a_reopened_conversation_shows_its_calls_from_the_rows() {
    let (_dir, path) = fixture_copy();
    let conn = engine::db::open(&path).unwrap();
    let s = |v: &str| v.to_string();
    assert_eq!(
        shown(&conn, "conv"),
        vec![
            vec![
                (s("echo"), s("succeeded"), None),
                (s("echo"), s("succeeded"), None),
                (
                    s("read_artifact"),
                    s("failed"),
                    Some(s("no artifact with id 'missing' in this conversation"))
                ),
                (s("create_artifact"), s("succeeded"), None),
            ],
            vec![(s("echo"), s("denied"), Some(s("denied")))],
            vec![
                (
                    s("echo"),
                    s("not_run"),
                    Some(s("the run was stopped while waiting for permission"))
                ),
                (s("slow"), s("not_run"), Some(s("the user stopped the run"))),
            ],
            vec![(
                s("slow"),
                s("stopped"),
                Some(s(
                    "stopped by the user while running; it may have partly happened"
                ))
            )],
        ]
    );
    let history = engine::history::history(&conn, "conv2").unwrap();
    let tool = history.iter().find(|m| m.message.role == "tool").unwrap();
    assert_eq!(tool.message.content, "", "results are not sent twice");
    assert_eq!(
        tool.results[0].handover.as_ref().map(|h| h.target.as_str()),
        Some("search_agent")
    );
    let asked = history.iter().find(|m| !m.calls.is_empty()).unwrap();
    assert_eq!(asked.calls[0].call_id, tool.results[0].call_id);

    // The rows are the source: what a row says is shown, whatever the stored text says
    // (the second of two echo calls pairs by its id, not by its name).
    conn.execute(
        "UPDATE tool_calls SET status = 'failed', reason = 'changed', result = 'second, changed'
         WHERE call_id = (SELECT call_id FROM tool_calls WHERE conversation_id = 'conv'
                          ORDER BY message_id, position LIMIT 1 OFFSET 1)",
        [],
    )
    .unwrap();
    let history = engine::history::history(&conn, "conv").unwrap();
    let first = history.iter().find(|m| m.message.role == "tool").unwrap();
    let got: Vec<_> = first.results[..2]
        .iter()
        .map(|r| (r.status.as_str(), r.text.as_str()))
        .collect();
    assert_eq!(got[1], ("failed", "second, changed"));
    assert_eq!(got[0].0, "succeeded");
    assert!(got[0].1.contains("first"), "{got:?}");
}

/// The history reads calls from rows only, never from the stored text: without its rows, a
/// conversation shows its messages and no call cards.
#[test]
fn the_history_never_reads_calls_back_from_text() {
    let (_dir, path) = fixture_copy();
    let conn = engine::db::open(&path).unwrap();
    assert!(shown(&conn, "conv")
        .iter()
        .any(|results| !results.is_empty()));
    conn.execute("DELETE FROM tool_calls", []).unwrap();
    assert!(
        shown(&conn, "conv")
            .iter()
            .all(|results| results.is_empty()),
        "{:?}",
        shown(&conn, "conv")
    );
}

/// Moved here from the store's own tests when the store became its own crate: the grant rows
/// migration 10 writes are checked against the engine's grant matching.
#[test]
fn migration_10_turns_always_allowed_tools_into_unbound_whole_tool_grants() {
    use engine::permissions::grants::{self, Binding, BindingKind};
    use engine::permissions::rules::{CallFacts, Destination, GrantCheck};
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("v9.db");
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        engine::db::migrations().to_version(&mut conn, 9).unwrap();
        conn.execute_batch(
            r#"INSERT INTO conversations (id, always_allowed_tools) VALUES ('c', '["web_fetch","stock_price"]');
             INSERT INTO conversations (id, always_allowed_tools) VALUES ('d', '[]');
             INSERT INTO conversations (id, always_allowed_tools) VALUES ('e', 'not json');"#,
        )
        .unwrap();
    }
    let conn = engine::db::open(&path).unwrap();
    let stored = grants::for_conversation(&conn, "c").unwrap();
    let mut tools: Vec<&str> = stored.iter().map(|g| g.tool.as_str()).collect();
    tools.sort();
    assert_eq!(tools, ["stock_price", "web_fetch"]);
    assert!(stored
        .iter()
        .all(|g| g.rule.is_none() && g.binding.kind == BindingKind::None));
    assert!(grants::for_conversation(&conn, "d").unwrap().is_empty());
    assert!(grants::for_conversation(&conn, "e").unwrap().is_empty());
    // Unbound: it applies whatever the destination, as the old list did.
    let params = engine::tool_spec::Params::new();
    let dest = Destination {
        method: "GET".into(),
        url: "https://anywhere.example/x".into(),
        host: "anywhere.example".into(),
    };
    let now = Binding {
        kind: BindingKind::Host,
        digest: Some("0".repeat(64)),
        label: Some("anywhere.example".into()),
    };
    let checks = grants::check(
        &stored,
        &CallFacts {
            tool: "stock_price",
            params: &params,
            destination: Some(&dest),
        },
        &now,
    );
    assert!(matches!(checks.as_slice(), [GrantCheck::Applies { .. }]));
    // Deleting the conversation deletes its grants.
    assert!(engine::conversations::delete(&conn, "c").unwrap());
    assert!(grants::list(&conn).unwrap().is_empty());
    let left: i64 = conn
        .query_row("SELECT count(*) FROM permission_grants", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0);
}
