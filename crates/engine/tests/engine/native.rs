//! Native tool calling against the scripted model server speaking each API's documented wire
//! format: tools sent as JSON Schemas, streamed call deltas assembled, provider ids kept in the
//! call records and sent back with the results, tolerant argument reading, XML calls still run,
//! and a conversation switching between the formats.

use engine::calls::{store, CallRecord, CallStatus};
use engine::conversations::RunStatus;
use engine::events::EngineEvent;
use engine::permissions::Answer;
use engine::run::RunOptions;
use test_support::Turn;

use crate::harness::{call, Harness, Policy};

const APIS: [&str; 2] = ["openai", "anthropic"];

fn rows(h: &Harness) -> Vec<CallRecord> {
    h.ctx.with_db(|c| store::list(c, "conv")).unwrap()
}

async fn native(turns: Vec<Turn>, api: &str) -> Harness {
    let h = Harness::new(turns, api, RunOptions::default()).await;
    h.set_tool_calls("native");
    h
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_run_with_their_provider_ids_and_results_go_back_under_them() {
    for api in APIS {
        let h = native(
            vec![
                Turn::text("Saving and reading.")
                    .with_call(
                        "create_artifact",
                        r#"{"id": "notes", "title": "Notes", "content": "alpha"}"#,
                    )
                    .with_call_id("call_save")
                    .with_call_chunk_chars(7)
                    .with_call("read_artifact", r#"{"id": "notes"}"#)
                    .with_call_id("call_read"),
                Turn::text("Done: alpha."),
            ],
            api,
        )
        .await;
        let outcome = h.run("tester", "Save a note").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{api}: {outcome:?}");
        assert_eq!(outcome.final_answer.as_deref(), Some("Done: alpha."));

        let requests = h.model.requests();
        // The tools went as definitions; the system prompt has no XML instructions.
        let tools = requests[0].tools();
        for name in ["echo", "create_artifact", "read_artifact", "call_subagent"] {
            assert!(tools.contains(&name.to_string()), "{api}: {tools:?}");
        }
        assert!(
            !h.system_prompt(0).contains("<tool_instructions>"),
            "{api}: {}",
            h.system_prompt(0)
        );
        let schema = match api {
            "openai" => requests[0].body["tools"][1]["function"]["parameters"].clone(),
            _ => requests[0].body["tools"][1]["input_schema"].clone(),
        };
        assert_eq!(schema["type"], "object", "{api}: {schema}");

        // The records keep the provider's ids; the next request sends the calls and their
        // results under them.
        let rows = rows(&h);
        let ids: Vec<_> = rows.iter().map(|r| r.provider_call_id.clone()).collect();
        assert_eq!(
            ids,
            [Some("call_save".to_string()), Some("call_read".to_string())],
            "{api}"
        );
        assert!(rows.iter().all(|r| r.status == CallStatus::Succeeded));
        let calls = requests[1].assistant_tool_calls();
        assert_eq!(calls.len(), 2, "{api}: {calls:?}");
        assert_eq!(calls[0].0, "call_save");
        assert_eq!(calls[0].1, "create_artifact");
        let args: serde_json::Value = serde_json::from_str(&calls[0].2).unwrap();
        assert_eq!(args["content"], "alpha", "{api}");
        let results = requests[1].tool_results();
        assert_eq!(
            results.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
            ["call_save", "call_read"],
            "{api}"
        );
        assert!(results[1].1.contains("alpha"), "{api}: {results:?}");

        // "calling X…" from the first delta: the start comes before the call runs, under the
        // id of its record.
        let events = h.events();
        let started = events.iter().position(|e| {
            matches!(e, EngineEvent::ToolCallStarted { call_id, name: Some(n), .. }
                if *call_id == rows[0].call_id && n == "create_artifact")
        });
        let ran = events.iter().position(
            |e| matches!(e, EngineEvent::ToolStart { call_id, .. } if *call_id == rows[0].call_id),
        );
        assert!(
            started.is_some() && started < ran,
            "{api}: {started:?} {ran:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_confirm_tool_asks_before_a_native_call_runs() {
    for api in APIS {
        let h = native(
            vec![
                Turn::text("").with_call("echo", r#"{"text": "hi"}"#),
                Turn::text("Echoed."),
            ],
            api,
        )
        .await;
        h.answer_with(Policy::Answer(Answer::Approve));
        let outcome = h.run("tester", "Echo hi").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{api}: {outcome:?}");
        let asked = h.events().iter().any(|e| {
            matches!(e, EngineEvent::PermissionRequest { request, .. } if request.tool == "echo")
        });
        assert!(asked, "{api}");
        let results = h.model.requests()[1].tool_results();
        assert!(results[0].1.contains("hi"), "{api}: {results:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_arguments_are_repaired_where_unambiguous_else_reported_with_the_schema() {
    for api in APIS {
        let h = native(
            vec![
                Turn::text("")
                    .with_call(
                        "create_artifact",
                        "{'id': 'a', 'title': 'A', 'content': 'line 1\nline 2',}",
                    )
                    .with_call("read_artifact", r#"{"id": "a"#),
                Turn::text("Noted."),
            ],
            api,
        )
        .await;
        let outcome = h.run("tester", "Go").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{api}: {outcome:?}");
        let rows = rows(&h);
        assert_eq!(rows[0].status, CallStatus::Succeeded, "{api}: {rows:?}");
        assert_eq!(rows[0].params["content"], "line 1\nline 2");
        assert_eq!(rows[1].status, CallStatus::Failed, "{api}: {rows:?}");
        let results = h.model.requests()[1].tool_results();
        let unread = &results[1].1;
        assert!(
            unread.contains("read_artifact") && unread.contains("middle of a string"),
            "{api}: {unread}"
        );
        assert!(unread.contains("\"properties\""), "{api}: {unread}");
        // The format reminder is for XML calls only.
        assert!(!h
            .sent_to_model(1)
            .contains("<tool_call>\n  <name>TOOL_NAME"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn xml_calls_written_in_native_mode_still_run_and_are_sent_back_as_calls() {
    for api in APIS {
        let h = native(
            vec![
                Turn::text(format!(
                    "I will write it.\n{}",
                    call(
                        "create_artifact",
                        &[("id", "x"), ("title", "X"), ("content", "xml")]
                    )
                )),
                Turn::text("Written."),
            ],
            api,
        )
        .await;
        let outcome = h.run("tester", "Write").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{api}: {outcome:?}");
        let rows = rows(&h);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].status, CallStatus::Succeeded);
        assert_eq!(rows[0].provider_call_id, None);
        let second = &h.model.requests()[1];
        let calls = second.assistant_tool_calls();
        assert_eq!(calls.len(), 1, "{api}: {calls:?}");
        assert_eq!(calls[0].0, rows[0].call_id);
        let messages = second.messages();
        let answer = messages
            .iter()
            .find(|(role, _)| role == "assistant")
            .unwrap();
        assert_eq!(answer.1, "I will write it.", "{api}");
        assert_eq!(second.tool_results()[0].0, rows[0].call_id);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_native_call_cut_off_by_the_token_limit_is_not_run() {
    for api in APIS {
        let h = native(
            vec![
                Turn::text("")
                    .with_call("create_artifact", r#"{"id": "a", "title": "A", "con"#)
                    .finish_length(),
                Turn::text("I will be brief."),
            ],
            api,
        )
        .await;
        let outcome = h.run("tester", "Go").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{api}: {outcome:?}");
        let rows = rows(&h);
        assert_eq!(rows[0].status, CallStatus::NotRun, "{api}: {rows:?}");
        assert!(h.sent_to_model(1).contains("cut off by the token limit"));
        assert!(h.model.requests()[1].assistant_tool_calls().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn switching_format_renders_the_history_from_the_call_records() {
    for api in APIS {
        // Native first, then text: the native call is shown as an XML call, its result as a
        // result block.
        let h = native(
            vec![
                Turn::text("Saving.").with_call(
                    "create_artifact",
                    r#"{"id": "n", "title": "N", "content": "native"}"#,
                ),
                Turn::text("Saved."),
                Turn::text("Still saved."),
            ],
            api,
        )
        .await;
        assert_eq!(
            h.run("tester", "Save").await.status,
            RunStatus::Completed,
            "{api}"
        );
        h.set_tool_calls("text");
        assert_eq!(h.run("tester", "Again?").await.status, RunStatus::Completed);
        let third = &h.model.requests()[2];
        assert!(third.tools().is_empty(), "{api}");
        assert!(third.assistant_tool_calls().is_empty(), "{api}");
        let sent = h.sent_to_model(2);
        assert!(
            sent.contains("Saving.\n\n<tool_call>\n  <name>create_artifact</name>"),
            "{api}: {sent}"
        );
        assert!(
            sent.contains("<tool_result name=\"create_artifact\""),
            "{api}: {sent}"
        );
        assert!(h.system_prompt(2).contains("<tool_instructions>"), "{api}");

        // Text first, then native: the XML call becomes a native call with a tool result.
        let h = Harness::new(
            vec![
                Turn::text(format!(
                    "Saving.\n{}",
                    call(
                        "create_artifact",
                        &[("id", "t"), ("title", "T"), ("content", "text")]
                    )
                )),
                Turn::text("Saved."),
                Turn::text("Still saved."),
            ],
            api,
            RunOptions::default(),
        )
        .await;
        assert_eq!(h.run("tester", "Save").await.status, RunStatus::Completed);
        h.set_tool_calls("native");
        assert_eq!(h.run("tester", "Again?").await.status, RunStatus::Completed);
        let third = &h.model.requests()[2];
        let id = rows(&h)[0].call_id.clone();
        let calls = third.assistant_tool_calls();
        assert_eq!(calls.len(), 1, "{api}: {calls:?}");
        assert_eq!(
            (calls[0].0.as_str(), calls[0].1.as_str()),
            (id.as_str(), "create_artifact")
        );
        assert_eq!(third.tool_results()[0].0, id, "{api}");
        assert!(!h.sent_to_model(2).contains("<tool_call>"), "{api}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_name_the_apis_refuse_is_offered_under_a_safe_name_and_mapped_back() {
    let wire = engine::models::wire_tool_name("notes.save").into_owned();
    assert_ne!(wire, "notes.save");
    for api in APIS {
        let h = native(
            vec![
                Turn::text("").with_call(&wire, r#"{"text": "kept"}"#),
                Turn::text("Saved."),
            ],
            api,
        )
        .await;
        let config = h.ctx.paths().config_dir.clone();
        let echo = std::fs::read_to_string(config.join("tools/echo.md")).unwrap();
        crate::harness::write(
            &config.join("tools/notes_save.md"),
            &echo
                .replace("name: echo", "name: notes.save")
                .replace("permission: confirm", "permission: auto"),
        );
        crate::harness::write(
            &config.join("agents/dotted.md"),
            "---\nname: dotted\ndescription: Dotted tools\nmodel: default\ntools:\n  notes.save: auto\n---\nYou save notes.\n",
        );
        h.ctx.reload_config();
        assert!(
            h.ctx.config_problems().is_empty(),
            "{:?}",
            h.ctx.config_problems()
        );
        let outcome = h.run("dotted", "Save").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{api}: {outcome:?}");
        let requests = h.model.requests();
        assert_eq!(requests[0].tools(), vec![wire.as_str()], "{api}");
        let rows = rows(&h);
        assert_eq!(rows[0].tool, "notes.save", "{api}");
        assert_eq!(rows[0].status, CallStatus::Succeeded, "{api}: {rows:?}");
        assert_eq!(requests[1].assistant_tool_calls()[0].1, wire, "{api}");
    }
}

/// A native call in the answer after the round limit is recorded as not run and its result is
/// kept in the history: the conversation's next run sends it with the real reason, not as a
/// call of a run that stopped before it ran.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_in_the_answer_after_the_round_limit_keeps_the_history_whole() {
    for api in APIS {
        let read = |id: &str| format!(r#"{{"id": "{id}"}}"#);
        let h = native(
            vec![
                Turn::text("").with_call("read_artifact", read("a")),
                Turn::text("").with_call("read_artifact", read("b")),
                Turn::text("").with_call("read_artifact", read("c")),
                Turn::text("").with_call("read_artifact", read("d")),
                Turn::text("Nothing found.").with_call("read_artifact", read("e")),
                Turn::text("Asked again: still nothing."),
            ],
            api,
        )
        .await;
        let first = h.run("tester", "Find a note").await;
        assert_eq!(first.status, RunStatus::Completed, "{api}: {first:?}");
        let records = rows(&h);
        let statuses: Vec<CallStatus> = records.iter().map(|r| r.status).collect();
        assert_eq!(statuses.len(), 5, "{api}: {statuses:?}");
        assert!(
            statuses[3..].iter().all(|s| *s == CallStatus::NotRun),
            "{api}: {statuses:?}"
        );
        let second = h.run("tester", "Look again").await;
        assert_eq!(second.status, RunStatus::Completed, "{api}: {second:?}");
        let requests = h.model.requests();
        let last = requests.last().unwrap();
        let mut called: Vec<String> = last
            .assistant_tool_calls()
            .into_iter()
            .map(|(id, _, _)| id)
            .collect();
        let mut answered: Vec<String> = last.tool_results().into_iter().map(|(id, _)| id).collect();
        called.sort();
        answered.sort();
        assert_eq!(called.len(), 5, "{api}: {called:?}");
        assert_eq!(
            called, answered,
            "{api}: every call is sent with its result"
        );
        let results = last.tool_results();
        let (_, text) = results.last().unwrap();
        assert!(
            text.contains("not run: the agent had used up its tool rounds"),
            "{api}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_round_limit_and_oversized_results_behave_as_in_text_mode() {
    for api in APIS {
        // tester may use 3 rounds: the 4th answer's call is not run and the model is told to
        // answer; the first result (60,000 characters) reaches it as a preview.
        let missing = |id: &str| format!(r#"{{"id": "{id}"}}"#);
        let h = native(
            vec![
                Turn::text("").with_call("long", "{}"),
                Turn::text("").with_call("read_artifact", missing("b")),
                Turn::text("").with_call("read_artifact", missing("c")),
                Turn::text("").with_call("read_artifact", missing("d")),
                Turn::text("Done within the limit."),
            ],
            api,
        )
        .await;
        let outcome = h.run("tester", "Go").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{api}: {outcome:?}");
        assert_eq!(
            outcome.final_answer.as_deref(),
            Some("Done within the limit.")
        );
        let records = rows(&h);
        assert_eq!(records.len(), 4, "{api}: the 4th call has a record");
        assert_eq!(
            records[3].status,
            CallStatus::NotRun,
            "{api}: the 4th call did not run"
        );
        let requests = h.model.requests();
        let preview = &requests[1].tool_results()[0].1;
        assert!(
            preview.contains("read_artifact(id='tool_long_") && preview.len() < 3_000,
            "{api}: {} chars",
            preview.len()
        );
        assert!(
            h.sent_to_model(4)
                .contains("You have used all 3 tool rounds"),
            "{api}"
        );
        // The 4th call's id gets its result, as every native call needs one.
        let results = requests[4].tool_results();
        assert!(
            results
                .iter()
                .any(|(_, text)| text.contains("not run: the agent had used up its tool rounds")),
            "{api}: {results:?}"
        );
        if api == "anthropic" {
            // The 4th answer was only a call that did not run: nothing empty is sent.
            let messages = requests[4].body["messages"].as_array().unwrap();
            assert!(
                messages
                    .iter()
                    .all(|m| m["content"] != "" && m["content"] != serde_json::json!([])),
                "{messages:?}"
            );
        }
    }
}
