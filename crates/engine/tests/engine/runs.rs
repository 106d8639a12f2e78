use std::time::Duration;

use engine::conversations::RunStatus;
use engine::events::EngineEvent;
use engine::interrupts::Resolution;
use engine::permissions::Answer;
use engine::run::RunOptions;
use test_support::Turn;

use crate::harness::{call, until_event, write, Harness, Policy};

fn count(events: &[EngineEvent], pred: impl Fn(&EngineEvent) -> bool) -> usize {
    events.iter().filter(|e| pred(e)).count()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_auto_tool_round_then_a_final_answer() {
    let h = Harness::new(
        vec![
            Turn::text(format!(
                "I'll write it down.\n{}",
                call(
                    "create_artifact",
                    &[
                        ("id", "notes"),
                        ("title", "Notes"),
                        ("content", "# Findings\nRust is fast.")
                    ]
                )
            ))
            .usage(120, 30),
            Turn::text("Done: the artifact `notes` holds the findings.").usage(200, 12),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let outcome = h.run("tester", "Write down that Rust is fast.").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(
        outcome.final_answer.as_deref(),
        Some("Done: the artifact `notes` holds the findings.")
    );

    // The model got the role prompt and the instructions for exactly its tools.
    let system = h.system_prompt(0);
    assert!(system.starts_with("You are the tester."), "{system}");
    assert!(
        system.contains("<tool name=\"create_artifact\">")
            && system.contains("<tool name=\"echo\">")
    );
    assert!(
        !system.contains("<tool name=\"web_search\">"),
        "only the agent's tools"
    );
    // The result went back as a <tool_result> block.
    let second = h.sent_to_model(1);
    assert!(
        second.contains("<tool_result name=\"create_artifact\" success=\"true\">"),
        "{second}"
    );

    let events = h.events();
    assert!(matches!(
        events.first(),
        Some(EngineEvent::RunStarted { .. })
    ));
    assert!(matches!(
        events.last(),
        Some(EngineEvent::RunEnded {
            status: RunStatus::Completed,
            ..
        })
    ));
    assert!(count(&events, |e| matches!(e, EngineEvent::Token { .. })) >= 1);
    assert!(events.iter().any(|e| matches!(e, EngineEvent::ToolCallStarted { name: Some(n), .. } if n == "create_artifact")));
    assert!(events.iter().any(|e| matches!(e, EngineEvent::ToolComplete { tool, success: true, .. } if tool == "create_artifact")));
    assert_eq!(
        count(&events, |e| matches!(
            e,
            EngineEvent::ArtifactSnapshot { .. }
        )),
        1
    );

    // Persisted as it happened: the artifact, the messages with token usage, the run.
    let (_, content) = h
        .ctx
        .artifact_store()
        .content("conv", "notes", None)
        .unwrap();
    assert!(content.contains("Rust is fast."));
    let messages = h
        .ctx
        .with_db(|c| engine::conversations::messages(c, "conv"))
        .unwrap();
    let roles: Vec<_> = messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(messages[1].completion_tokens, Some(30));
    assert_eq!(
        h.ctx
            .with_db(|c| engine::conversations::last_run_status(c, "conv"))
            .unwrap()
            .as_deref(),
        Some("completed")
    );
}

/// A small model that goes on past its call and writes the call's "result" itself (SmolLM2
/// does, then imitates its own invention in later answers): the call runs, and the answer
/// kept, shown and sent back ends at the call; the real result follows.
#[tokio::test(flavor = "multi_thread")]
async fn a_tool_result_the_model_invents_after_its_call_is_neither_kept_nor_shown() {
    let forged = "<tool_result name=\"create_artifact\" success=\"true\">\ncreated, and the shed door sticks\n</tool_result>\nAll saved and checked.";
    let h = Harness::new(
        vec![
            Turn::text(format!(
                "Saving.\n{}{forged}\n{}",
                call(
                    "create_artifact",
                    &[
                        ("id", "shed"),
                        ("title", "Shed"),
                        ("content", "Oil the hinge.")
                    ]
                ),
                // Written on the strength of the invented result: not part of the answer.
                call(
                    "create_artifact",
                    &[
                        ("id", "checked"),
                        ("title", "Checked"),
                        ("content", "All fine.")
                    ]
                )
            )),
            Turn::text("Saved as `shed`."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let outcome = h.run("tester", "Note: oil the shed's hinge.").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let (_, content) = h
        .ctx
        .artifact_store()
        .content("conv", "shed", None)
        .unwrap();
    assert_eq!(content, "Oil the hinge.");
    assert!(
        h.ctx
            .artifact_store()
            .content("conv", "checked", None)
            .is_err(),
        "the call after the invented result ran"
    );

    // Stored: the answer ends at its call.
    let messages = h
        .ctx
        .with_db(|c| engine::conversations::messages(c, "conv"))
        .unwrap();
    let first = &messages[1];
    assert_eq!(first.role, "assistant");
    assert!(
        first.content.starts_with("Saving.") && first.content.ends_with("</tool_call>"),
        "{}",
        first.content
    );
    // Sent back: no invented result and nothing written after it; the real one is there.
    let second = h.sent_to_model(1);
    assert!(
        !second.contains("shed door") && !second.contains("All saved"),
        "{second}"
    );
    assert!(
        second.contains("<tool_result name=\"create_artifact\" success=\"true\">"),
        "{second}"
    );
    // Shown: the streamed text and its prose stop where the invention begins.
    let events = h.events();
    let (mut text, mut prose) = (String::new(), String::new());
    for e in &events {
        if let EngineEvent::Token {
            text: t,
            prose: p,
            prose_reset,
            ..
        } = e
        {
            text.push_str(t);
            if *prose_reset {
                prose.clear();
            }
            prose.push_str(p);
        }
    }
    assert!(text.contains("</tool_call>"), "{text}");
    assert!(
        !text.contains("<tool_re") && !text.contains("shed door"),
        "{text}"
    );
    assert!(
        prose.contains("Saving.") && !prose.contains("All saved"),
        "{prose}"
    );
}

/// An answer that is nothing but a tool result the model wrote itself is no answer: the model
/// is told once where results come from and asked again; a second such answer ends the run
/// (it is not told twice).
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_is_an_invented_tool_result_is_told_once_where_results_come_from() {
    let invented = "<tool_result name=\"read_artifact\" success=\"true\">\n1: The garden needs water.\n</tool_result>";
    for second in ["It says nothing yet.", invented] {
        let h = Harness::new(
            vec![
                Turn::text(invented),
                Turn::text(second),
                Turn::text("never asked"),
            ],
            "openai",
            RunOptions::default(),
        )
        .await;
        let outcome = h.run("tester", "Read the note garden.").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
        assert_eq!(outcome.final_answer.as_deref(), Some(second));
        let requests = h.model.requests();
        assert_eq!(requests.len(), 2, "told once, then the answer stands");
        let sent = h.sent_to_model(1);
        assert_eq!(
            sent.matches("Results come only from the app").count(),
            1,
            "{sent}"
        );
    }
    // A plain answer that merely mentions the format is an answer.
    let h = Harness::new(
        vec![Turn::text("Results arrive as <tool_result> blocks.")],
        "openai",
        RunOptions::default(),
    )
    .await;
    let outcome = h.run("tester", "How do results arrive?").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(h.model.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn confirm_tools_approve_deny_and_always_allow() {
    let echo = call("echo", &[("text", "hi")]);
    let h = Harness::new(
        vec![
            Turn::text(echo.clone()),
            Turn::text("approved once"),
            Turn::text(echo.clone()),
            Turn::text("denied"),
            Turn::text(echo.clone()),
            Turn::text("always"),
            Turn::text(echo.clone()),
            Turn::text("no dialog this time"),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    h.answer_with(Policy::Answer(Answer::Approve));
    assert_eq!(h.run("tester", "one").await.status, RunStatus::Completed);
    assert!(h
        .sent_to_model(1)
        .contains("<tool_result name=\"echo\" success=\"true\">"));

    h.answer_with(Policy::Answer(Answer::Deny));
    assert_eq!(h.run("tester", "two").await.status, RunStatus::Completed);
    let denied = h.sent_to_model(3);
    assert!(
        denied.contains("<tool_result name=\"echo\" success=\"false\">")
            && denied.contains("did not allow"),
        "{denied}"
    );

    h.answer_with(Policy::Answer(Answer::ApproveAlways));
    h.run("tester", "three").await;
    h.answer_with(Policy::Ignore);
    let requests_before = count(&h.events(), |e| {
        matches!(e, EngineEvent::PermissionRequest { .. })
    });
    assert_eq!(h.run("tester", "four").await.status, RunStatus::Completed);
    let requests_after = count(&h.events(), |e| {
        matches!(e, EngineEvent::PermissionRequest { .. })
    });
    assert_eq!(
        requests_before, requests_after,
        "always-allowed: no second dialog"
    );
    assert!(h
        .sent_to_model(7)
        .contains("<tool_result name=\"echo\" success=\"true\">"));
    assert_eq!(requests_after, 3);
    // The request showed the exact HTTP request.
    let shown = h.events().into_iter().find_map(|e| match e {
        EngineEvent::PermissionRequest { request, .. } => Some(request),
        _ => None,
    });
    let shown = serde_json::to_value(shown.unwrap()).unwrap();
    assert_eq!(shown["request"]["method"], "POST");
    assert_eq!(shown["request"]["body"]["text"], "hi");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_request_times_out_as_a_denial() {
    let h = Harness::new(
        vec![Turn::text(call("echo", &[("text", "x")])), Turn::text("ok")],
        "openai",
        RunOptions {
            permission_timeout: Some(Duration::from_millis(300)),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(h.run("tester", "t").await.status, RunStatus::Completed);
    assert!(h
        .sent_to_model(1)
        .contains("no answer before the permission timeout"));
    assert!(h.events().iter().any(|e| matches!(
        e,
        EngineEvent::PermissionResolved {
            answer: Answer::Deny,
            resolution: Resolution::TimedOut,
            ..
        }
    )));
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_mid_stream_and_mid_tool() {
    let h = Harness::new(
        vec![
            Turn::text("word ".repeat(400))
                .chunk_chars(5)
                .chunk_delay(Duration::from_millis(20)),
            Turn::text(call("slow", &[])),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let outcome = h
        .run_stopped_on("tester", "stream", |e| {
            matches!(e, EngineEvent::Token { .. })
        })
        .await;
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert_eq!(
        h.ctx
            .with_db(|c| engine::conversations::last_run_status(c, "conv"))
            .unwrap()
            .as_deref(),
        Some("cancelled")
    );

    let outcome = h
        .run_stopped_on(
            "tester",
            "tool",
            |e| matches!(e, EngineEvent::ToolStart { tool, .. } if tool == "slow"),
        )
        .await;
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert!(h.events().iter().any(
        |e| matches!(e, EngineEvent::ToolComplete { tool, success: false, .. } if tool == "slow")
    ));
}

/// A stop keeps what already happened: the streamed part of an answer, the results of the calls
/// that ran, and a result for every call that did not, so the next run's model sees it all.
#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_run_keeps_what_happened_for_the_next_one() {
    let h = Harness::new(
        vec![
            Turn::text("word ".repeat(400))
                .chunk_chars(5)
                .chunk_delay(Duration::from_millis(20)),
            Turn::text(format!(
                "Three calls.\n{}{}{}",
                call("long", &[]),
                call("echo", &[("text", "asked")]),
                call("slow", &[])
            )),
            Turn::text("fresh start"),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let stored = || {
        h.ctx
            .with_db(|c| engine::conversations::messages(c, "conv"))
            .unwrap()
    };

    // Stopped mid-stream, once at least three words were streamed (a stop on the first token
    // could keep a single word): the part that arrived is stored.
    assert_eq!(
        h.run_stopped_when("tester", "talk", |events| {
            let streamed: usize = events
                .iter()
                .map(|e| match e {
                    EngineEvent::Token { text, .. } => text.matches("word").count(),
                    _ => 0,
                })
                .sum();
            streamed >= 3
        })
        .await
        .status,
        RunStatus::Cancelled
    );
    let messages = stored();
    let partial = &messages.last().unwrap();
    assert_eq!(partial.role, "assistant");
    let words = partial.content.matches("word").count();
    assert!((3..400).contains(&words), "{words} words kept");

    // Stopped while `echo` waits for permission: `long` ran, `echo` and `slow` did not.
    h.answer_with(Policy::Ignore);
    assert_eq!(
        h.run_stopped_on("tester", "calls", |e| {
            matches!(e, EngineEvent::PermissionRequest { .. })
        })
        .await
        .status,
        RunStatus::Cancelled
    );
    let messages = stored();
    let results = messages.last().unwrap();
    assert_eq!(results.role, "tool");
    let blocks: Vec<&str> = results.content.split("\n\n<tool_result").collect();
    assert_eq!(blocks.len(), 3, "{}", results.content);
    assert!(
        blocks[0].contains("name=\"long\" success=\"true\""),
        "{}",
        blocks[0]
    );
    assert!(
        blocks[1].contains("name=\"echo\" success=\"false\"")
            && blocks[1].contains("not run: the run was stopped while waiting for permission"),
        "{}",
        blocks[1]
    );
    assert!(
        blocks[2].contains("name=\"slow\" success=\"false\"")
            && blocks[2].contains("not run: the user stopped the run"),
        "{}",
        blocks[2]
    );

    // The next run's model sees the partial answer and every call's result.
    assert_eq!(h.run("tester", "again").await.status, RunStatus::Completed);
    let sent = h.sent_to_model(2);
    assert!(sent.contains("word word"), "{sent}");
    assert!(
        sent.contains("not run: the run was stopped while waiting for permission"),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agent_runs_to_its_answer_which_returns_to_the_caller() {
    let h = Harness::new(
        vec![
            Turn::text(call(
                "call_subagent",
                &[
                    ("agent_name", "search_agent"),
                    ("instruction", "Find the Rust release date"),
                ],
            )),
            Turn::text("Rust 1.0 was released on 2015-05-15."),
            Turn::text("According to the search agent: 2015-05-15."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let outcome = h.run("tester", "When was Rust 1.0 released?").await;
    assert_eq!(
        outcome.final_answer.as_deref(),
        Some("According to the search agent: 2015-05-15.")
    );
    // The sub-agent got its own system prompt and only the instruction.
    assert!(
        h.system_prompt(1).contains("web search specialist"),
        "{}",
        h.system_prompt(1)
    );
    let sub = h.sent_to_model(1);
    assert!(
        sub.contains("Find the Rust release date") && !sub.contains("When was Rust 1.0 released?"),
        "{sub}"
    );
    let back = h.sent_to_model(2);
    assert!(
        back.contains("<tool_result name=\"call_subagent\" success=\"true\">")
            && back.contains("2015-05-15"),
        "{back}"
    );
    let events = h.events();
    assert!(events.iter().any(|e| matches!(e, EngineEvent::AgentSwitch { from, to, depth: 1, .. } if from == "tester" && to == "search_agent")));
    assert!(events.iter().any(|e| matches!(e, EngineEvent::AgentReturn { from, success: true, .. } if from == "search_agent")));
    // The caller's own prompt lists who it can call.
    assert!(h
        .system_prompt(0)
        .contains("- search_agent: Searches the web"));
}

/// The dialog must say who asks: the conversation (by title) and the agents from the
/// conversation's agent down to the sub-agent making the call.
#[tokio::test(flavor = "multi_thread")]
async fn a_permission_request_names_the_conversation_and_the_agents_asking() {
    let h = Harness::new(
        vec![
            Turn::text(call(
                "call_subagent",
                &[("agent_name", "helper"), ("instruction", "Echo x")],
            )),
            Turn::text(call("echo", &[("text", "x")])),
            Turn::text("Echoed."),
            Turn::text(call("echo", &[("text", "y")])),
            Turn::text("The helper echoed, and so did I."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    write(
        &h.ctx.paths().config_dir.join("agents/helper.md"),
        "---\nname: helper\ndescription: Echoes things\nmodel: default\ntools:\n  echo: confirm\n---\nYou help.\n",
    );
    h.ctx.reload_config();
    h.answer_with(Policy::Answer(Answer::Approve));
    let outcome = h.run("tester", "Quarterly numbers\nfor the board").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let asked: Vec<(String, Vec<String>)> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            EngineEvent::PermissionRequest {
                conversation_title,
                agent_chain,
                ..
            } => Some((conversation_title, agent_chain)),
            _ => None,
        })
        .collect();
    assert_eq!(
        asked,
        [
            (
                "Quarterly numbers".to_string(),
                vec!["tester".to_string(), "helper".to_string()]
            ),
            ("Quarterly numbers".to_string(), vec!["tester".to_string()]),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn self_calls_and_the_round_limit_are_bounded() {
    let again = call(
        "create_artifact",
        &[("id", "a"), ("title", "t"), ("content", "x")],
    );
    let h = Harness::new(
        vec![
            Turn::text(call(
                "call_subagent",
                &[("agent_name", "tester"), ("instruction", "loop")],
            )),
            Turn::text(again.clone()),
            Turn::text(again.clone()),
            Turn::text(again.clone()),
            Turn::text("Final answer without tools."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let outcome = h.run("tester", "go").await;
    assert_eq!(
        outcome.final_answer.as_deref(),
        Some("Final answer without tools.")
    );
    assert!(h.sent_to_model(1).contains("cannot hand a task to itself"));
    let last = h.sent_to_model(4);
    assert!(last.contains("You have used all 3 tool rounds"), "{last}");
    assert_eq!(h.model.requests().len(), 5);
}

/// A create_artifact call saving a note with id `id`.
fn save(id: &str) -> String {
    call(
        "create_artifact",
        &[("id", id), ("title", "t"), ("content", "x")],
    )
}

/// A call past the agent's tool rounds does not run, but it is never silent: a card (a
/// `ToolComplete` with `NotRun`) and a record say why, and the model gets a result for it
/// beside the note asking for the final answer. A call in that final answer is shown so too.
#[tokio::test(flavor = "multi_thread")]
async fn calls_past_the_round_limit_are_recorded_as_not_run() {
    let h = Harness::new(
        vec![
            Turn::text(save("a")),
            Turn::text(save("b")),
            Turn::text(save("c")),
            Turn::text(save("d")),
            Turn::text(format!("Saved a, b and c.\n{}", save("e"))),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let outcome = h.run("tester", "go").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let records = h
        .ctx
        .with_db(|c| engine::calls::store::list(c, "conv"))
        .unwrap();
    let ended: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r.params["id"].as_str().unwrap(), r.status.as_str()))
        .collect();
    assert_eq!(
        ended,
        [
            ("a", "succeeded"),
            ("b", "succeeded"),
            ("c", "succeeded"),
            ("d", "not_run"),
            ("e", "not_run")
        ]
    );
    for record in &records[3..] {
        let reason = record.reason.as_deref().unwrap_or_default();
        assert!(
            reason.contains("used up its tool rounds (max_tool_rounds: 3)"),
            "{reason}"
        );
    }
    let cards = count(&h.events(), |e| {
        matches!(
            e,
            EngineEvent::ToolComplete {
                status: engine::calls::CallStatus::NotRun,
                ..
            }
        )
    });
    assert_eq!(cards, 2, "a card for each call that did not run");
    let sent = h.sent_to_model(4);
    assert!(
        sent.contains("<tool_result name=\"create_artifact\" success=\"false\">")
            && sent.contains("not run: the agent had used up its tool rounds (max_tool_rounds: 3)")
            && sent.contains("You have used all 3 tool rounds"),
        "{sent}"
    );
    assert_eq!(h.model.requests().len(), 5);
}

/// An unreadable call past the round limit is reported as unreadable, as before the limit:
/// the model learns the format from it, and nothing runs.
#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_call_past_the_round_limit_is_reported_as_unreadable() {
    let h = Harness::new(
        vec![
            Turn::text(save("a")),
            Turn::text(save("b")),
            Turn::text(save("c")),
            Turn::text("<tool_call><name>create artifact</name><params><id>x</id></params>"),
            Turn::text("Saved three notes."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    assert_eq!(h.run("tester", "go").await.status, RunStatus::Completed);
    let sent = h.sent_to_model(4);
    assert!(
        sent.contains("could not be read") && sent.contains("You have used all 3 tool rounds"),
        "{sent}"
    );
    let records = h
        .ctx
        .with_db(|c| engine::calls::store::list(c, "conv"))
        .unwrap();
    assert_eq!(records.len(), 4);
    assert_eq!(records[3].status, engine::calls::CallStatus::Failed);
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_and_cut_off_calls_go_back_to_the_model() {
    let h = Harness::new(
        vec![
            Turn::text("<tool_call><name>create artifact</name><params><id>x</id></params>"),
            Turn::text(format!(
                "{}\n<tool_call><name>echo</name><params><text><![CDATA[half",
                call(
                    "create_artifact",
                    &[("id", "b"), ("title", "t"), ("content", "x")]
                )
            ))
            .finish_length(),
            Turn::text("ok"),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    assert_eq!(h.run("tester", "t").await.status, RunStatus::Completed);
    let first = h.sent_to_model(1);
    assert!(
        first.contains("success=\"false\"")
            && first.contains("could not be read")
            && first.contains("<![CDATA[value]]>"),
        "{first}"
    );
    let second = h.sent_to_model(2);
    assert!(
        second.contains("<tool_result name=\"create_artifact\" success=\"true\">"),
        "complete calls still run: {second}"
    );
    assert!(
        second.contains("cut off by the token limit in the middle of a call to `echo`"),
        "{second}"
    );
    assert!(
        !h.events()
            .iter()
            .any(|e| matches!(e, EngineEvent::PermissionRequest { .. })),
        "the cut-off echo call never ran"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_result_reaches_the_model_as_a_preview() {
    let h = Harness::new(
        vec![Turn::text(call("long", &[])), Turn::text("done")],
        "openai",
        RunOptions::default(),
    )
    .await;
    assert_eq!(h.run("tester", "t").await.status, RunStatus::Completed);
    let back = h.model.requests()[1].messages().last().unwrap().1.clone();
    assert!(
        back.contains("artifact_slice id=\"tool_long_")
            && back.contains("read_artifact(id='tool_long_"),
        "{}",
        &back[..back.len().min(2000)]
    );
    assert!(
        back.len() < 3_000,
        "a preview, not 60,000 characters: {} chars",
        back.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_config_change_is_live_in_the_next_round() {
    let h = Harness::new(
        vec![
            Turn::text(call("echo", &[("text", "x")])),
            Turn::text("done"),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let _watcher = engine::watcher::ConfigWatcher::start(
        h.ctx.clone(),
        std::sync::Arc::new(|_e: EngineEvent| {}),
    )
    .unwrap();
    // While the run waits for permission, the agent's prompt is edited; then the user approves.
    let (events, ctx, broker) = (h.events.clone(), h.ctx.clone(), h.runner.broker().clone());
    let editor = tokio::spawn(async move {
        let id = loop {
            let found = events.lock().unwrap().iter().find_map(|e| match e {
                EngineEvent::PermissionRequest { request_id, .. } => Some(request_id.clone()),
                _ => None,
            });
            if let Some(id) = found {
                break id;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let path = ctx.paths().config_dir.join("agents/tester.md");
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("You are the tester.", "You are the edited tester.");
        write(&path, &text);
        while !ctx
            .config()
            .agents
            .iter()
            .any(|a| a.role_prompt.contains("edited"))
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        broker.answer(&id, Answer::Approve).unwrap();
    });
    assert_eq!(h.run("tester", "t").await.status, RunStatus::Completed);
    editor.await.unwrap();
    assert!(h.system_prompt(0).starts_with("You are the tester."));
    assert!(
        h.system_prompt(1).starts_with("You are the edited tester."),
        "{}",
        h.system_prompt(1)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_in_the_anthropic_dialect_with_a_retried_429() {
    let h = Harness::new(
        vec![
            Turn::rate_limited(0),
            Turn::text(call(
                "create_artifact",
                &[("id", "c"), ("title", "t"), ("content", "claude")],
            ))
            .usage(50, 10),
            Turn::text("Saved."),
        ],
        "anthropic",
        RunOptions::default(),
    )
    .await;
    let outcome = h.run("tester", "t").await;
    assert_eq!(
        outcome.final_answer.as_deref(),
        Some("Saved."),
        "{outcome:?}"
    );
    let requests = h.model.requests();
    assert_eq!(
        requests.len(),
        3,
        "a 429, its retry (the first answer), the second answer"
    );
    assert!(requests[1].path.ends_with("/v1/messages"));
    assert!(requests[1]
        .system()
        .unwrap()
        .starts_with("You are the tester."));
    assert_eq!(
        h.ctx.artifact_store().content("conv", "c", None).unwrap().1,
        "claude"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_cannot_be_reached_fails_the_run_cleanly() {
    let h = Harness::new(
        vec![
            Turn::error(500, "boom"),
            Turn::error(500, "boom"),
            Turn::error(500, "boom"),
            Turn::error(500, "boom"),
            Turn::error(500, "boom"),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let outcome = h.run("tester", "t").await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(outcome.error.unwrap().contains("HTTP 500"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_run_manager_runs_one_per_conversation_and_cancels_by_conversation() {
    let h = Harness::new(
        vec![Turn::text("slow ".repeat(500))
            .chunk_chars(5)
            .chunk_delay(Duration::from_millis(20))],
        "openai",
        RunOptions::default(),
    )
    .await;
    let manager = std::sync::Arc::new(engine::run::RunManager::new(h.runner.clone()));
    let request = || engine::run::RunRequest {
        conversation_id: "m".into(),
        agent: "tester".into(),
        task: "Summarise the week\nin detail".into(),
    };
    let handle = manager.start(request()).unwrap();
    let busy = manager.start(request()).unwrap_err().to_string();
    assert!(
        busy.contains("already has a run in progress") && busy.contains("wait for it"),
        "{busy}"
    );
    assert_eq!(manager.running(), ["m"]);
    until_event(&h.events, |e| matches!(e, EngineEvent::Token { .. })).await;
    assert!(
        !manager.wait_idle(Duration::from_millis(50)),
        "a streaming run is in progress"
    );
    assert!(manager.cancel("m"));
    assert!(!manager.cancel("other"));
    let waiting = manager.clone();
    let idle = tokio::task::spawn_blocking(move || waiting.wait_idle(Duration::from_secs(30)));
    assert!(idle.await.unwrap(), "idle once the cancelled run ended");
    let outcome = tokio::time::timeout(Duration::from_secs(30), handle)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert!(manager.running().is_empty());
    let list = h
        .ctx
        .with_db(|c| engine::conversations::list(c, None))
        .unwrap();
    let m = list.iter().find(|c| c.id == "m").unwrap();
    assert_eq!(
        m.title, "Summarise the week",
        "titled from the first line of the task"
    );
    assert_eq!(m.last_status.as_deref(), Some("cancelled"));
}
