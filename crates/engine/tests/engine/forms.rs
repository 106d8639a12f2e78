//! Calls written in a local model family's own form (the parser's `FORMS.md`) run like calls
//! in the `<tool_call>` form, in native and in text mode: the fenced JSON call Qwen2.5-Coder
//! writes creates its artifact in the real library, its card starts before it runs, a broken
//! one is answered with the tool's schema, and prose that only mentions a tool runs nothing.

use engine::calls::{store, CallRecord, CallStatus};
use engine::conversations::RunStatus;
use engine::events::EngineEvent;
use engine::run::RunOptions;
use test_support::Turn;

use crate::harness::Harness;

/// The answer of Qwen2.5-Coder-0.5B-Instruct reported in issue 45 (its content shortened).
const FENCED: &str = "```json\n{\"name\": \"create_artifact\", \"arguments\": {\"id\": \"groceries\", \"title\": \"Groceries: eggs, milk\", \"content\": \"eggs, milk\"}}\n```";

const TASK: &str = "Save a note with id groceries titled Groceries: eggs, milk.";

fn rows(h: &Harness) -> Vec<CallRecord> {
    h.ctx.with_db(|c| store::list(c, "conv")).unwrap()
}

async fn harness(turns: Vec<Turn>, mode: &str) -> Harness {
    let h = Harness::new(turns, "openai", RunOptions::default()).await;
    h.set_tool_calls(mode);
    h
}

#[tokio::test(flavor = "multi_thread")]
async fn the_fenced_json_call_of_a_small_model_runs_in_native_and_text_mode() {
    for mode in ["native", "text"] {
        let h = harness(vec![Turn::text(FENCED), Turn::text("Saved.")], mode).await;
        let outcome = h.run("tester", TASK).await;
        assert_eq!(outcome.status, RunStatus::Completed, "{mode}: {outcome:?}");
        assert_eq!(outcome.final_answer.as_deref(), Some("Saved."), "{mode}");

        // The artifact is in the library, and the call has its record.
        let (_, content) = h
            .ctx
            .artifact_store()
            .content("conv", "groceries", None)
            .unwrap_or_else(|e| panic!("{mode}: no artifact: {e}"));
        assert_eq!(content, "eggs, milk", "{mode}");
        let rows = rows(&h);
        assert_eq!(rows.len(), 1, "{mode}: {rows:?}");
        assert_eq!(rows[0].tool, "create_artifact", "{mode}");
        assert_eq!(rows[0].status, CallStatus::Succeeded, "{mode}");

        // Its card started, with the tool's name, before it ran, under its record's id.
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
            "{mode}: {started:?} {ran:?}"
        );

        // The model got the result back.
        let second = &h.model.requests()[1];
        let told: String = match mode {
            "native" => second
                .tool_results()
                .into_iter()
                .map(|(_, text)| text)
                .collect(),
            _ => second
                .messages()
                .into_iter()
                .map(|(_, text)| text)
                .collect(),
        };
        assert!(told.contains("groceries"), "{mode}: {told}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_written_call_is_answered_with_the_schema_and_the_retry_runs() {
    let broken = FENCED.replace("\"eggs, milk\"}}", "\"eggs, milk\",}}");
    let h = harness(
        vec![
            Turn::text(&broken),
            Turn::text(FENCED),
            Turn::text("Saved."),
        ],
        "native",
    )
    .await;
    let outcome = h.run("tester", TASK).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let results = h.model.requests()[1].tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    let told = &results[0].1;
    assert!(
        told.contains("`create_artifact` could not be read"),
        "{told}"
    );
    assert!(told.contains("\"properties\""), "the schema: {told}");
    assert!(
        !told.contains("<tool_call>"),
        "no XML advice in native mode: {told}"
    );
    let rows = rows(&h);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1].status, CallStatus::Succeeded);
    assert!(h
        .ctx
        .artifact_store()
        .content("conv", "groceries", None)
        .is_ok());
}

#[tokio::test(flavor = "multi_thread")]
async fn prose_that_mentions_a_tool_runs_nothing() {
    for mode in ["native", "text"] {
        let prose = "I can use create_artifact to save it. {\"name\": \"create_artifact\"} is how it is called; what should the title be?";
        let h = harness(vec![Turn::text(prose)], mode).await;
        let outcome = h.run("tester", TASK).await;
        assert_eq!(outcome.status, RunStatus::Completed, "{mode}: {outcome:?}");
        assert_eq!(outcome.final_answer.as_deref(), Some(prose), "{mode}");
        assert!(rows(&h).is_empty(), "{mode}");
        assert_eq!(h.model.requests().len(), 1, "{mode}");
        assert!(
            !h.events()
                .iter()
                .any(|e| matches!(e, EngineEvent::ToolCallStarted { .. })),
            "{mode}"
        );
    }
}

/// The text of each assistant message of a request.
fn answers(request: &test_support::RecordedRequest) -> Vec<String> {
    request
        .messages()
        .into_iter()
        .filter(|(role, _)| role == "assistant")
        .map(|(_, text)| text)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_written_call_is_sent_back_once_in_native_mode_and_as_written_in_text_mode() {
    let answer = format!("I will save it.\n\n{FENCED}");
    for mode in ["native", "text"] {
        let h = harness(
            vec![
                Turn::text(&answer),
                Turn::text("Saved."),
                Turn::text("It is saved."),
            ],
            mode,
        )
        .await;
        let outcome = h.run("tester", TASK).await;
        assert_eq!(outcome.status, RunStatus::Completed, "{mode}: {outcome:?}");
        // The next round (history held in memory) and the next run (history read back from
        // the database) send the call the same way.
        let outcome = h.run("tester", "Is it saved?").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{mode}: {outcome:?}");
        let requests = h.model.requests();
        for (which, request) in [("next round", &requests[1]), ("next run", &requests[2])] {
            let texts = answers(request);
            let written: String = texts.concat();
            let calls = request.assistant_tool_calls();
            let results = request.tool_results();
            match mode {
                "native" => {
                    // Once, as data: not in the answer's text, which keeps its prose.
                    assert!(texts[0].contains("I will save it."), "{which}: {texts:?}");
                    assert!(
                        !written.contains("create_artifact") && !written.contains("```"),
                        "{which}: the call is in the text too: {texts:?}"
                    );
                    assert_eq!(calls.len(), 1, "{which}: {calls:?}");
                    assert_eq!(calls[0].1, "create_artifact", "{which}");
                    assert!(calls[0].2.contains("\"groceries\""), "{which}: {calls:?}");
                    assert_eq!(results.len(), 1, "{which}: {results:?}");
                    assert_eq!(results[0].0, calls[0].0, "{which}: the result answers it");
                    assert!(results[0].1.contains("groceries"), "{which}: {results:?}");
                }
                _ => {
                    // As the model wrote it, once, with no XML call added.
                    assert_eq!(
                        written.matches("\"name\": \"create_artifact\"").count(),
                        1,
                        "{which}: {texts:?}"
                    );
                    assert!(!written.contains("<tool_call>"), "{which}: {texts:?}");
                    assert!(calls.is_empty(), "{which}: {calls:?}");
                    let told: String = request
                        .messages()
                        .into_iter()
                        .filter(|(role, _)| role == "user")
                        .map(|(_, text)| text)
                        .collect();
                    assert_eq!(
                        told.matches("<tool_result name=\"create_artifact\" success=\"true\">")
                            .count(),
                        1,
                        "{which}: the result: {told}"
                    );
                }
            }
        }
    }
}
