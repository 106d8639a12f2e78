//! Deleting a conversation while its run is in progress: the run is stopped and has ended
//! before anything is deleted, and nothing of the conversation is left or written afterwards.
//!
//! The tests run on one thread, so nothing of the run happens between two steps of the delete
//! unless the delete waits for it: deleting first and letting the run finish afterwards (what
//! the app did) fails them.

use std::sync::Arc;
use std::time::Duration;

use engine::conversations::RunStatus;
use engine::events::EngineEvent;
use engine::permissions::Answer;
use engine::run::{RunManager, RunOptions, RunRequest};
use test_support::Turn;

use crate::harness::{call, until_event, Harness};

/// Rows of conversation `m` left anywhere: the conversation, its messages, runs and artifacts,
/// plus every artifact version, chunk and full-text row (only `m` has artifacts here).
fn rows_left(h: &Harness) -> i64 {
    h.ctx.with_db(|c| {
        c.query_row(
            "SELECT (SELECT count(*) FROM conversations WHERE id = 'm')
                  + (SELECT count(*) FROM messages WHERE conversation_id = 'm')
                  + (SELECT count(*) FROM runs WHERE conversation_id = 'm')
                  + (SELECT count(*) FROM artifacts WHERE conversation_id = 'm')
                  + (SELECT count(*) FROM artifact_versions)
                  + (SELECT count(*) FROM artifact_chunks)
                  + (SELECT count(*) FROM artifacts_fts WHERE artifacts_fts MATCH 'drafted')",
            [],
            |r| r.get(0),
        )
        .unwrap()
    })
}

async fn start_blocked_on_permission(
    h: &Harness,
) -> (
    Arc<RunManager>,
    tokio::task::JoinHandle<engine::run::RunOutcome>,
) {
    let manager = Arc::new(RunManager::new(h.runner.clone()));
    let handle = manager
        .start(RunRequest {
            conversation_id: "m".into(),
            agent: "tester".into(),
            task: "Draft it".into(),
        })
        .unwrap();
    until_event(&h.events, |e| {
        matches!(e, EngineEvent::PermissionRequest { .. })
    })
    .await;
    (manager, handle)
}

fn harness_turns() -> Vec<Turn> {
    vec![
        Turn::text(format!(
            "{}{}",
            call(
                "create_artifact",
                &[
                    ("id", "draft"),
                    ("title", "Draft"),
                    ("content", "drafted text")
                ]
            ),
            call("echo", &[("text", "hi")])
        )),
        Turn::text("done"),
    ]
}

#[tokio::test(flavor = "current_thread")]
async fn deleting_during_a_run_stops_it_first_and_leaves_nothing() {
    let h = Harness::new(harness_turns(), "openai", RunOptions::default()).await;
    let (manager, handle) = start_blocked_on_permission(&h).await;
    assert!(rows_left(&h) > 0, "the run wrote its artifact and messages");

    assert!(manager.delete_conversation("m").await.unwrap());
    assert!(
        h.events().iter().any(
            |e| matches!(e, EngineEvent::RunEnded { conversation_id, .. } if conversation_id == "m")
        ),
        "the run had ended before the conversation was deleted"
    );
    assert_eq!(rows_left(&h), 0);

    let outcome = tokio::time::timeout(Duration::from_secs(30), handle)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert_eq!(rows_left(&h), 0, "nothing written after the delete");
    assert!(manager.running().is_empty());
    assert!(
        !manager.delete_conversation("m").await.unwrap(),
        "already gone"
    );
}

/// "Approve and always allow" clicked just before the delete: the answer is remembered in the
/// conversation (still there), then deleted with it; it never brings the conversation back.
#[tokio::test(flavor = "current_thread")]
async fn always_allow_answered_just_before_a_delete_does_not_bring_the_conversation_back() {
    let h = Harness::new(harness_turns(), "openai", RunOptions::default()).await;
    let (manager, handle) = start_blocked_on_permission(&h).await;
    let request_id = h
        .events()
        .into_iter()
        .find_map(|e| match e {
            EngineEvent::PermissionRequest { request_id, .. } => Some(request_id),
            _ => None,
        })
        .unwrap();
    h.runner
        .broker()
        .answer(&request_id, Answer::ApproveAlways)
        .unwrap();
    assert!(manager.delete_conversation("m").await.unwrap());
    tokio::time::timeout(Duration::from_secs(30), handle)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rows_left(&h), 0, "not re-created by the always-allow");
    let gone = h
        .ctx
        .with_db(|c| engine::conversations::set_always_allowed(c, "m", "echo", true));
    assert!(
        gone.is_err(),
        "always-allow for a deleted conversation fails"
    );
    assert_eq!(rows_left(&h), 0);
}

/// A run of another live process (here a second owner in this one, as the CLI would be) keeps
/// its conversation: the delete is refused, naming the conversation; once that process is gone
/// the delete works.
#[tokio::test(flavor = "current_thread")]
async fn a_conversation_running_in_another_process_is_not_deleted() {
    let h = Harness::new(harness_turns(), "openai", RunOptions::default()).await;
    let other = engine::owner::ProcessOwner::acquire(&h.ctx.paths().data_dir).unwrap();
    h.ctx.with_db(|c| {
        engine::conversations::ensure(c, "m", "Quarterly notes").unwrap();
        engine::conversations::start_run(c, "r-cli", "m", "tester", &other).unwrap();
    });
    let manager = RunManager::new(h.runner.clone());
    let err = manager
        .delete_conversation("m")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "conversation 'Quarterly notes' is already running in another ArtifactFlow process"
        ),
        "{err}"
    );
    assert!(rows_left(&h) > 0, "nothing deleted");
    drop(other);
    assert!(manager.delete_conversation("m").await.unwrap());
    assert_eq!(rows_left(&h), 0);
}
