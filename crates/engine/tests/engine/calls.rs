//! Every call's life through the one gate, seen from the run loop: typed statuses in the
//! events and in the `tool_calls` rows, ids equal from the first streamed token to the row.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use engine::calls::{store, CallRecord, CallStatus, Handover};
use engine::conversations::RunStatus;
use engine::events::EngineEvent;
use engine::permissions::Answer;
use engine::run::RunOptions;
use test_support::Turn;

use crate::harness::{call, write, Harness, Policy};

fn rows(h: &Harness) -> Vec<CallRecord> {
    h.ctx.with_db(|c| store::list(c, "conv")).unwrap()
}

/// The call ids an event names, with the event's kind.
fn ids_of(events: &[EngineEvent], id: &str) -> Vec<&'static str> {
    events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::ToolCallStarted { call_id, .. } if call_id == id => Some("started"),
            EngineEvent::PermissionRequest { call_id, .. } if call_id == id => Some("permission"),
            EngineEvent::ToolStart { call_id, .. } if call_id == id => Some("start"),
            EngineEvent::ToolComplete { call_id, .. } if call_id == id => Some("complete"),
            _ => None,
        })
        .fold(Vec::new(), |mut kinds, kind| {
            // The name may be announced more than once while it streams.
            if kinds.last() != Some(&kind) {
                kinds.push(kind);
            }
            kinds
        })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[tokio::test(flavor = "multi_thread")]
async fn succeeded_denied_and_failed_calls_are_typed_in_events_and_rows() {
    let h = Harness::new(
        vec![
            Turn::text(format!(
                "Five calls.\n{}{}{}{}{}",
                call(
                    "create_artifact",
                    &[("id", "notes"), ("title", "Notes"), ("content", "alpha")]
                ),
                call("echo", &[("text", "x")]),
                call("nope", &[]),
                call("read_artifact", &[("id", "notes")]),
                call("read_artifact", &[("id", "notes"), ("offset", "1")]),
            )),
            Turn::text("Done."),
        ],
        "openai",
        RunOptions {
            permission_timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        },
    )
    .await;
    h.answer_with(Policy::Answer(Answer::Deny));
    let before = now_ms();
    let outcome = h.run("tester", "go").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");

    let rows = rows(&h);
    let summary: Vec<(u32, &str, CallStatus)> = rows
        .iter()
        .map(|r| (r.position, r.tool.as_str(), r.status))
        .collect();
    assert_eq!(
        summary,
        [
            (0, "create_artifact", CallStatus::Succeeded),
            (1, "echo", CallStatus::Denied),
            (2, "nope", CallStatus::Failed),
            (3, "read_artifact", CallStatus::Succeeded),
            (4, "read_artifact", CallStatus::Succeeded),
        ]
    );
    // The same tool twice: two ids, each row at its own position with its own parameters.
    assert_ne!(rows[3].call_id, rows[4].call_id);
    assert_eq!(rows[4].params["offset"], 1);
    // Every row points at the assistant message that holds the call, in this run.
    let messages = h
        .ctx
        .with_db(|c| engine::conversations::messages(c, "conv"))
        .unwrap();
    let answer = messages.iter().find(|m| m.role == "assistant").unwrap();
    for r in &rows {
        assert_eq!(r.message_id, Some(answer.id), "{r:?}");
        assert_eq!(r.run_id.as_deref(), Some(outcome.run_id.as_str()));
        assert_eq!((r.agent.as_str(), r.depth), ("tester", 0));
        assert!(r.ended_at.is_some());
    }
    assert_eq!(rows[0].artifact_ids, ["notes"]);
    assert_eq!(rows[1].reason.as_deref(), Some("denied by the user"));
    assert!(rows[2].result.contains("there is no tool `nope`"));

    // One id from the first streamed token to the completion, for each call.
    let events = h.events();
    assert_eq!(
        ids_of(&events, &rows[1].call_id),
        ["started", "permission", "complete"]
    );
    assert_eq!(
        ids_of(&events, &rows[0].call_id),
        ["started", "start", "complete"]
    );
    let denied = events
        .iter()
        .find_map(|e| match e {
            EngineEvent::ToolComplete {
                call_id,
                agent,
                depth,
                status,
                reason,
                success,
                ..
            } if *call_id == rows[1].call_id => {
                Some((agent.clone(), *depth, *status, reason.clone(), *success))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        denied,
        (
            "tester".into(),
            0,
            CallStatus::Denied,
            Some("denied by the user".into()),
            false
        )
    );
    let (agent, depth, deadline) = events
        .iter()
        .find_map(|e| match e {
            EngineEvent::PermissionRequest {
                agent,
                depth,
                deadline_ms,
                ..
            } => Some((agent.clone(), *depth, *deadline_ms)),
            _ => None,
        })
        .unwrap();
    assert_eq!((agent.as_str(), depth), ("tester", 0));
    let deadline = deadline.expect("a run's request has a deadline");
    assert!(
        deadline >= before + 60_000 && deadline <= now_ms() + 60_000,
        "{deadline} is the permission timeout from the request"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_a_stop_came_before_or_during_are_recorded_not_run_or_stopped() {
    let h = Harness::new(
        vec![
            Turn::text(format!(
                "Three calls.\n{}{}{}",
                call("long", &[]),
                call("echo", &[("text", "asked")]),
                call("slow", &[])
            )),
            Turn::text(call("slow", &[])),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    h.answer_with(Policy::Ignore);
    let first = h
        .run_stopped_on("tester", "calls", |e| {
            matches!(e, EngineEvent::PermissionRequest { .. })
        })
        .await;
    assert_eq!(first.status, RunStatus::Cancelled);
    let second = h
        .run_stopped_on(
            "tester",
            "slow",
            |e| matches!(e, EngineEvent::ToolStart { tool, .. } if tool == "slow"),
        )
        .await;
    assert_eq!(second.status, RunStatus::Cancelled);

    let rows = rows(&h);
    let summary: Vec<(&str, CallStatus, Option<&str>)> = rows
        .iter()
        .map(|r| (r.tool.as_str(), r.status, r.reason.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            ("long", CallStatus::Succeeded, None),
            (
                "echo",
                CallStatus::NotRun,
                Some("the run was stopped while waiting for permission")
            ),
            ("slow", CallStatus::NotRun, Some("the user stopped the run")),
            (
                "slow",
                CallStatus::Stopped,
                Some("stopped by the user while running; it may have partly happened")
            ),
        ]
    );
    assert_eq!(rows[3].run_id.as_deref(), Some(second.run_id.as_str()));
    // The calls a stop left unrun are completed in the events too, with their status.
    let events = h.events();
    assert!(events.iter().any(|e| matches!(e,
        EngineEvent::ToolComplete { call_id, status: CallStatus::NotRun, .. } if *call_id == rows[2].call_id)));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hand_over_is_a_typed_record_not_metadata() {
    let h = Harness::new(
        vec![
            Turn::text(format!(
                "Two hand-overs.\n{}{}",
                call(
                    "call_subagent",
                    &[("agent_name", "helper"), ("instruction", "Say hi")]
                ),
                call(
                    "call_subagent",
                    &[("agent_name", "helper"), ("instruction", "Again")]
                ),
            )),
            Turn::text("hi"),
            Turn::text("The helper said hi."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    write(
        &h.ctx.paths().config_dir.join("agents/helper.md"),
        "---\nname: helper\ndescription: Says things\nmodel: default\ntools:\n  echo: confirm\n---\nYou help.\n",
    );
    h.ctx.reload_config();
    let outcome = h.run("tester", "delegate").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let rows = rows(&h);
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert_eq!(rows[0].status, CallStatus::Succeeded);
    assert_eq!(
        rows[0].handover,
        Some(Handover {
            target: "helper".into(),
            instruction: "Say hi".into()
        })
    );
    assert_eq!(rows[0].result, "hi", "the sub-agent's answer is the result");
    assert_eq!(rows[1].status, CallStatus::NotRun);
    assert_eq!(rows[1].handover, None);
    assert_eq!(rows[1].position, 1);
    // No hand-over travels as metadata strings any more.
    assert!(!h.events().iter().any(|e| matches!(e,
        EngineEvent::ToolComplete { metadata, .. } if metadata.contains_key("subagent") || metadata.contains_key("instruction"))));
}

/// A card's duration is how long the call ran: the time the permission dialog waited for the
/// person is not counted (a call that ran in 0.5 s showed 5.6 s).
#[tokio::test(flavor = "multi_thread")]
async fn a_calls_duration_leaves_out_the_wait_for_permission() {
    const WAIT: Duration = Duration::from_millis(2_000);
    let h = Harness::new(
        vec![
            Turn::text(call("echo", &[("text", "x")])),
            Turn::text("Done."),
        ],
        "openai",
        RunOptions {
            permission_timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        },
    )
    .await;
    h.answer_with(Policy::Ignore);
    let answering = {
        let (events, broker) = (h.events.clone(), h._engine.broker().clone());
        tokio::spawn(async move {
            let request_id = loop {
                let asked = events.lock().unwrap().iter().find_map(|e| match e {
                    EngineEvent::PermissionRequest { request_id, .. } => Some(request_id.clone()),
                    _ => None,
                });
                if let Some(id) = asked {
                    break id;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            };
            // The person takes a while to decide.
            tokio::time::sleep(WAIT).await;
            broker.answer(&request_id, Answer::Approve).unwrap();
        })
    };
    let outcome = h.run("tester", "go").await;
    answering.await.unwrap();
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let (status, duration_ms) = h
        .events()
        .iter()
        .find_map(|e| match e {
            EngineEvent::ToolComplete {
                tool,
                status,
                duration_ms,
                ..
            } if tool == "echo" => Some((*status, *duration_ms)),
            _ => None,
        })
        .expect("the echo call completed");
    assert_eq!(status, CallStatus::Succeeded);
    assert!(
        duration_ms < WAIT.as_millis() as u64,
        "{duration_ms} ms counts the {WAIT:?} the person took to answer"
    );
}
