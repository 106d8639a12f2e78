//! Guided calls through the run loop: a profile with `guided_calls` sends the grammar of the
//! agent's calls (in llama.cpp's fields); an answer the runtime reports as guided marks its
//! last call, in the `ToolComplete` event and the stored record; a profile without it sends
//! no grammar, and neither does an agent with a tool too large to guide (the log says why).

use engine::calls::store;
use engine::conversations::RunStatus;
use engine::events::EngineEvent;
use engine::run::RunOptions;
use test_support::Turn;

use crate::harness::{call, write, Harness};

/// An OpenAI-style stream of `text`, ending with the runtime's `"guided": true`.
fn guided_stream(text: &str) -> String {
    let piece = serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]});
    let end = serde_json::json!({
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        "guided": true,
    });
    format!("data: {piece}\n\ndata: {end}\n\ndata: [DONE]\n\n")
}

#[tokio::test]
async fn a_guided_profile_sends_the_call_grammar_and_the_guided_call_is_marked() {
    // Two calls in one answer: the runtime guides only the last (its grammar ends the answer).
    let answer = format!(
        "{}\n{}",
        call("slow", &[("text", "first")]),
        call("slow", &[("text", "second")])
    );
    let h = Harness::new(
        vec![Turn::raw_sse(guided_stream(&answer)), Turn::text("Done.")],
        "openai",
        RunOptions::default(),
    )
    .await;
    h.set_profile_field("guided_calls", "on");
    let outcome = h.run("tester", "go").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");

    let requests = h.model.requests();
    let body = &requests[0].body;
    let grammar = body["grammar"]
        .as_str()
        .expect("the request carries a grammar");
    // The tester agent's tools, and no others.
    for tool in [
        "\"slow\"",
        "\"echo\"",
        "\"create_artifact\"",
        "\"call_subagent\"",
    ] {
        assert!(grammar.contains(tool), "{tool} in {grammar}");
    }
    assert!(!grammar.contains("\"web_search\""), "{grammar}");
    assert_eq!(body["grammar_lazy"], true);
    assert_eq!(
        body["grammar_triggers"][0]["value"],
        engine::parser::grammar::TRIGGER_PATTERN
    );

    let rows = h.ctx.with_db(|c| store::list(c, "conv")).unwrap();
    let guided: Vec<(String, bool)> = rows
        .iter()
        .map(|r| {
            (
                r.params["text"].as_str().unwrap_or("").to_string(),
                r.guided,
            )
        })
        .collect();
    assert_eq!(
        guided,
        [("first".to_string(), false), ("second".to_string(), true)]
    );
    let complete: Vec<bool> = h
        .events()
        .iter()
        .filter_map(|e| match e {
            EngineEvent::ToolComplete { guided, .. } => Some(*guided),
            _ => None,
        })
        .collect();
    assert_eq!(complete, [false, true]);
    // The history a reopened conversation shows keeps the mark.
    let history = h
        .ctx
        .with_db(|c| engine::history::history(c, "conv"))
        .unwrap();
    let marked: Vec<bool> = history
        .iter()
        .flat_map(|m| m.results.iter().map(|r| r.guided))
        .collect();
    assert_eq!(marked, [false, true]);
}

#[tokio::test]
async fn a_profile_without_guided_calls_sends_no_grammar() {
    let h = Harness::new(
        vec![Turn::text("No tools needed.")],
        "openai",
        RunOptions::default(),
    )
    .await;
    let outcome = h.run("tester", "hello").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let body = &h.model.requests()[0].body;
    assert!(body.get("grammar").is_none(), "{body}");
    assert!(body.get("grammar_triggers").is_none(), "{body}");
}

/// The stream the app's runtime sends for a guided native call: the call as a `tool_calls`
/// delta with the runtime's id, then `"guided": true`.
fn guided_native_stream(name: &str, arguments: &str) -> String {
    let call = serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
        "index": 0, "id": "call_rt_1", "type": "function",
        "function": {"name": name, "arguments": arguments}}]}}]});
    let end = serde_json::json!({
        "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        "guided": true,
    });
    format!("data: {call}\n\ndata: {end}\n\ndata: [DONE]\n\n")
}

#[tokio::test]
async fn a_guided_native_profile_sends_the_native_call_grammar_and_marks_the_call() {
    let h = Harness::new(
        vec![
            Turn::raw_sse(guided_native_stream("slow", r#"{"text": "native"}"#)),
            Turn::text("Done."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    h.set_tool_calls("native");
    h.set_profile_field("guided_calls", "on");
    let outcome = h.run("tester", "go").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");

    let body = &h.model.requests()[0].body;
    // The tools go in the request, and the grammar writes calls of those tools, in the JSON
    // form the runtime reads back as native calls (not the XML format's).
    let offered: Vec<&str> = body["tools"]
        .as_array()
        .expect("native tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"slow"), "{offered:?}");
    let grammar = body["grammar"].as_str().expect("a grammar");
    assert!(grammar.contains(r#""\"arguments\"""#), "{grammar}");
    assert!(!grammar.contains("<name>"), "{grammar}");
    for tool in &offered {
        assert!(
            grammar.contains(&format!(r#""\"{tool}\"""#)),
            "{tool} in {grammar}"
        );
    }
    assert_eq!(
        body["grammar_triggers"][0]["value"],
        engine::parser::grammar::TRIGGER_PATTERN
    );

    let rows = h.ctx.with_db(|c| store::list(c, "conv")).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].tool, "slow");
    assert!(rows[0].guided, "{rows:?}");
    assert_eq!(rows[0].provider_call_id.as_deref(), Some("call_rt_1"));
}

/// What the engine logs while a test holds it (`tracing`'s formatted lines).
#[derive(Clone, Default)]
struct Log(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Log {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Log {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// An agent with a tool of more parameters than a grammar of guided calls describes: in
/// either format its requests go without a grammar (the tool still offered), the run completes,
/// and the log names the agent, the tool, what is too large and what to do, once per format.
#[tokio::test]
async fn a_tool_too_large_to_guide_leaves_the_agents_calls_unguided_and_the_log_says_why() {
    let log = Log::default();
    let _logging = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_writer({
                let log = log.clone();
                move || log.clone()
            })
            .with_ansi(false)
            .finish(),
    );
    let h = Harness::new(
        vec![
            Turn::text("Done."),
            Turn::text("Done."),
            Turn::text("Done."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let config = h.ctx.paths().config_dir.clone();
    let too_many = engine::parser::grammar::MAX_TOOL_PARAMS + 1;
    let params: String = (0..too_many)
        .map(|j| format!("  - name: option_{j}\n    type: string\n    required: false\n"))
        .collect();
    write(
        &config.join("tools/wide.md"),
        &format!("---\nname: wide\nmethod: POST\nendpoint: http://127.0.0.1:9/wide\nparameters:\n{params}---\n"),
    );
    write(
        &config.join("agents/wide_user.md"),
        "---\nname: wide_user\ndescription: Uses the wide tool\nmodel: default\ntools:\n  wide: auto\n  slow: auto\n---\nYou use wide.\n",
    );
    // Room in the window for the tool's instructions.
    h.set_profile_field("context_window", "1000000");
    h.set_profile_field("guided_calls", "on");

    for (mode, round) in [("text", 0), ("native", 1)] {
        h.set_tool_calls(mode);
        let outcome = h.run("wide_user", "go").await;
        assert_eq!(outcome.status, RunStatus::Completed, "{mode}: {outcome:?}");
        let body = &h.model.requests()[round].body;
        assert!(body.get("grammar").is_none(), "{mode}: a grammar was sent");
        assert!(body.get("grammar_triggers").is_none(), "{mode}");
        let offered = body.to_string();
        assert!(
            offered.contains("option_4096"),
            "{mode}: the tool is offered"
        );
    }
    let lines: Vec<String> = log
        .text()
        .lines()
        .filter(|l| l.contains("not guided"))
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 2, "once per format: {lines:#?}");
    for line in &lines {
        for says in [
            "WARN",
            "agent `wide_user`",
            "the tool `wide`",
            "4097 parameters",
            "more than the 4096",
            "leave the tool out of the agent's tools",
        ] {
            assert!(line.contains(says), "{says} in {line}");
        }
    }
    // The same tools again: the cached answer, no second line.
    h.run("wide_user", "again").await;
    assert_eq!(
        log.text().matches("not guided").count(),
        2,
        "{}",
        log.text()
    );
}
