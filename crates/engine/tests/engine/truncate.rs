//! Edit-and-resend: a conversation's history cut at one of its tasks, on the real SQLite file,
//! so the next run goes on from that point; and the busy error never quotes a raw id.

use std::sync::Arc;
use std::time::Duration;

use engine::conversations::{truncate_at_turn, ConflictError, RunStatus};
use engine::events::EngineEvent;
use engine::run::{RunManager, RunOptions, RunRequest};
use test_support::Turn;

use crate::harness::{call, until_event, Harness};

fn count(h: &Harness, sql: &str) -> i64 {
    h.ctx
        .with_db(|c| c.query_row(sql, [], |r| r.get(0)).unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn cutting_at_a_task_drops_it_and_everything_after_and_the_next_run_goes_on_from_there() {
    let h = Harness::new(
        vec![
            Turn::text("First answer."),
            Turn::text(call(
                "create_artifact",
                &[("id", "notes"), ("title", "Notes"), ("content", "kept")],
            )),
            Turn::text("Second answer."),
            Turn::text("Answer to the edited task."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    assert_eq!(
        h.run("tester", "first task").await.status,
        RunStatus::Completed
    );
    assert_eq!(
        h.run("tester", "second task").await.status,
        RunStatus::Completed
    );
    assert_eq!(count(&h, "SELECT count(*) FROM tool_calls"), 1);
    let before = count(
        &h,
        "SELECT count(*) FROM messages WHERE conversation_id = 'conv'",
    );

    let owner = h.ctx.owner();
    let deleted = h
        .ctx
        .with_db(|c| truncate_at_turn(c, "conv", 1, owner))
        .unwrap();
    // The second task, its call, the call's result and the final answer.
    assert_eq!(deleted, 4);
    let left = h
        .ctx
        .with_db(|c| engine::conversations::messages(c, "conv"))
        .unwrap();
    assert_eq!(before - 4, left.len() as i64);
    let texts: Vec<_> = left
        .iter()
        .map(|m| (m.role.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(
        texts,
        [("user", "first task"), ("assistant", "First answer.")]
    );
    assert!(left.iter().all(|m| !m.created_at.is_empty()));
    assert_eq!(
        count(&h, "SELECT count(*) FROM tool_calls"),
        0,
        "its call records went too"
    );
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM artifacts WHERE conversation_id = 'conv'"
        ),
        1,
        "what the dropped turn wrote stays in the library"
    );
    let history = h
        .ctx
        .with_db(|c| engine::history::history(c, "conv"))
        .unwrap();
    assert_eq!(history.len(), 2);

    // A turn past the end cuts nothing.
    assert_eq!(
        h.ctx
            .with_db(|c| truncate_at_turn(c, "conv", 5, owner))
            .unwrap(),
        0
    );

    assert_eq!(
        h.run("tester", "edited task").await.status,
        RunStatus::Completed
    );
    let sent = h.sent_to_model(3);
    assert!(
        sent.contains("first task") && sent.contains("First answer."),
        "{sent}"
    );
    assert!(sent.contains("edited task"), "{sent}");
    assert!(
        !sent.contains("second task") && !sent.contains("Second answer"),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_conversation_is_not_cut_and_its_busy_error_never_quotes_the_raw_id() {
    let h = Harness::new(
        vec![Turn::text("slow ".repeat(400))
            .chunk_chars(5)
            .chunk_delay(Duration::from_millis(20))],
        "openai",
        RunOptions::default(),
    )
    .await;
    let manager = Arc::new(RunManager::new(h.runner.clone()));
    let id = "0b9e6c1e-4a53-4f5b-9d63-raw-id";
    let request = || RunRequest {
        conversation_id: id.into(),
        agent: "tester".into(),
        task: "Talk".into(),
    };
    let handle = manager.start(request()).unwrap();
    // Once the run streams, it has stored the conversation and its title (from the task): an
    // untitled one (renamed to "" only now, so the run cannot title it again afterwards) is
    // called "this conversation" in the error, never by its id.
    until_event(&h.events, |e| matches!(e, EngineEvent::Token { .. })).await;
    h.ctx
        .with_db(|c| engine::conversations::rename(c, id, ""))
        .unwrap();
    let busy = manager.start(request()).unwrap_err().to_string();
    assert!(
        busy.starts_with("this conversation already has a run"),
        "{busy}"
    );
    assert!(!busy.contains(id), "{busy}");

    let owner = h.ctx.owner();
    let refused = h.ctx.with_db(|c| truncate_at_turn(c, id, 0, owner));
    match refused {
        Err(ConflictError::Busy(message)) => {
            assert!(
                message.contains("already has a run in progress"),
                "{message}"
            );
            assert!(!message.contains(id), "{message}");
        }
        other => panic!("a running conversation was cut: {other:?}"),
    }
    assert!(manager.cancel(id));
    let outcome = tokio::time::timeout(Duration::from_secs(30), handle)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
}
