//! The HTTP tool editor's backend: drafts checked like the loader and registry check files,
//! and test runs through the real pipeline against a local server, permission included.

use std::time::Duration;

use engine::api::direct::Asker;
use engine::api::editor::{check_tool, test_tool};
use engine::context::AppContext;
use engine::events::{EngineEvent, EventSink};
use engine::interrupts::PermissionBroker;
use engine::permissions::Answer;
use tokio_util::sync::CancellationToken;

use crate::http_tool::params;
use crate::servers;

fn draft(endpoint: &str, permission: &str, extract: &str) -> String {
    [
        "---",
        "name: stock_price",
        "description: Price of a stock",
        &format!("permission: {permission}"),
        &format!("endpoint: \"{endpoint}\""),
        "method: POST",
        "headers:",
        "  Authorization: \"Bearer {{EDITOR_TEST_KEY}}\"",
        "  X-Other: \"{{EDITOR_MISSING_VAR}}\"",
        &format!("response_extract: \"{extract}\""),
        "parameters:",
        "  - name: symbol",
        "    type: string",
        "    description: Ticker",
        "  - name: days",
        "    type: integer",
        "    description: Days back",
        "    default: 7",
        "---",
        "Use for prices.",
        "",
    ]
    .join("\n")
}

/// Collects events, and answers permission requests through the broker as they arrive.
struct Answering<'a> {
    broker: &'a PermissionBroker,
    answer: Option<Answer>,
    events: std::sync::Mutex<Vec<EngineEvent>>,
}

impl EventSink for Answering<'_> {
    fn emit(&self, event: EngineEvent) {
        if let (EngineEvent::PermissionRequest { request_id, .. }, Some(answer)) =
            (&event, self.answer)
        {
            self.broker.answer(request_id, answer).unwrap();
        }
        self.events.lock().unwrap().push(event);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_draft_is_checked_like_the_loader_and_lists_its_secrets() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    std::fs::write(
        ctx.paths().config_dir.join(".env"),
        "EDITOR_TEST_KEY=from-dotenv-value\n",
    )
    .unwrap();
    let text = draft("http://127.0.0.1:9/price", "confirm", "$.data.price");
    let check = check_tool(&ctx, None, &text);
    assert!(check.errors.is_empty(), "{:?}", check.errors);
    assert_eq!(check.name.as_deref(), Some("stock_price"));
    let instructions = check.instructions.clone().unwrap();
    assert!(instructions.contains("stock_price") && instructions.contains("Use for prices."));
    let secrets: Vec<_> = check
        .secrets
        .iter()
        .map(|s| (s.name.as_str(), s.found_in.as_deref()))
        .collect();
    assert_eq!(
        secrets,
        [
            ("EDITOR_TEST_KEY", Some(".env")),
            ("EDITOR_MISSING_VAR", None)
        ]
    );
    assert!(!format!("{check:?}").contains("from-dotenv-value"));

    // Loader errors, located in the draft.
    let broken = text.replace("method: POST", "method: FETCH");
    let check = check_tool(&ctx, None, &broken);
    assert_eq!(check.errors.len(), 1);
    assert_eq!(check.errors[0].field.as_deref(), Some("method"));
    assert_eq!(check.errors[0].line, Some(6));
    assert!(check.instructions.is_none());

    // Registry errors: a built-in's name, another file's name; its own file is fine.
    let builtin = text.replace("name: stock_price", "name: web_search");
    let check = check_tool(&ctx, None, &builtin);
    assert!(
        check.errors[0].message.contains("built-in"),
        "{:?}",
        check.errors
    );
    assert_eq!(check.errors[0].line, Some(2));
    let file = ctx.paths().config_dir.join("tools/stock_price.md");
    std::fs::write(&file, &text).unwrap();
    ctx.reload_config();
    assert!(check_tool(&ctx, Some(&file), &text).errors.is_empty());
    let check = check_tool(&ctx, None, &text);
    assert!(
        check.errors[0].message.contains("already defined by"),
        "{:?}",
        check.errors
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_test_run_goes_through_permission_and_shows_the_whole_exchange() {
    let api = servers::json_api().await;
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    std::fs::write(
        ctx.paths().config_dir.join(".env"),
        "EDITOR_TEST_KEY=sk-editor-secret-1234\n",
    )
    .unwrap();
    let broker = PermissionBroker::new();
    let text = draft(&format!("{}/price", api.base), "confirm", "$.data.price");
    // One test run of `text` with `symbol`, the permission answered with `answer` (none: left
    // to time out after `wait`); returns the result and the events.
    let run = |text: String, symbol: &'static str, answer: Option<Answer>, wait: Duration| {
        let (ctx, broker) = (&ctx, &broker);
        async move {
            let sink = Answering {
                broker,
                answer,
                events: Default::default(),
            };
            let ask = Asker::Broker {
                broker,
                timeout: wait,
                cancel: CancellationToken::new(),
            };
            let test = test_tool(ctx, None, &text, &params(&[("symbol", symbol)]), ask, &sink)
                .await
                .unwrap();
            let events = sink.events.lock().unwrap().clone();
            (test, events)
        }
    };
    let long = Duration::from_secs(10);

    // Approved: the extracted value, every parameter typed, the default sent.
    let (test, test_events) = run(text.clone(), "AAPL", Some(Answer::Approve), long).await;
    assert!(test.success, "{test:?}");
    assert_eq!(test.output, "189.5");
    assert_eq!(
        serde_json::Value::Object(test.params.clone()),
        serde_json::json!({"symbol": "AAPL", "days": 7})
    );
    let sent = &api.requests()[0];
    assert_eq!(sent.body, r#"{"symbol":"AAPL","days":7}"#);
    assert_eq!(
        sent.header("authorization"),
        Some("Bearer sk-editor-secret-1234")
    );
    let exchange = test.exchange.clone().unwrap();
    assert_eq!(exchange.method, "POST");
    assert_eq!(exchange.status, Some(200));
    assert_eq!(
        exchange.request_headers["Authorization"], "Bearer {{EDITOR_TEST_KEY}}",
        "secrets shown by name"
    );
    assert!(exchange.request_body.unwrap().contains("\"days\": 7"));
    assert!(exchange
        .response_headers
        .iter()
        .any(|(k, v)| k == "content-type" && v.contains("json")));
    assert!(exchange.response_body.contains("\"price\":189.5"));
    assert_eq!(exchange.response_extract.as_deref(), Some("$.data.price"));
    assert!(matches!(
        test_events[0],
        EngineEvent::PermissionRequest { .. }
    ));
    assert!(!format!("{test:?}{test_events:?}").contains("sk-editor-secret"));

    // "Always allow" in a test approves this call only: the next test asks again, and no
    // conversation is created for it.
    let (always, _) = run(text.clone(), "IBM", Some(Answer::ApproveAlways), long).await;
    assert!(always.success, "{always:?}");
    let (_, again_events) = run(text.clone(), "IBM", Some(Answer::Approve), long).await;
    assert!(
        matches!(again_events[0], EngineEvent::PermissionRequest { .. }),
        "asked again"
    );
    assert_eq!(
        ctx.with_db(|c| engine::conversations::list(c, None))
            .unwrap()
            .len(),
        0,
        "no conversation made for tests"
    );
    let before = api.requests().len();

    // Denied: nothing is sent.
    let (denied, _) = run(text.clone(), "MSFT", Some(Answer::Deny), long).await;
    assert!(!denied.success);
    assert!(denied.output.contains("did not allow"), "{}", denied.output);
    assert!(denied.exchange.is_none());
    assert_eq!(api.requests().len(), before);

    // Unanswered: denied when the wait times out.
    let (timed_out, _) = run(text.clone(), "MSFT", None, Duration::from_millis(50)).await;
    assert!(timed_out
        .output
        .contains("no answer before the permission timeout"));

    // A path that matches nothing is explained against the actual response.
    let auto = draft(&format!("{}/price", api.base), "auto", "$.data.cost");
    let (missed, _) = run(auto.clone(), "AAPL", None, long).await;
    assert!(!missed.success);
    assert!(
        missed
            .output
            .contains("`$.data` matches an object with keys `price`")
            && missed.output.contains("`cost` finds nothing there"),
        "{}",
        missed.output
    );
    assert_eq!(missed.exchange.unwrap().status, Some(200));

    // Missing a required parameter: the pipeline's message, no request.
    let sink = Answering {
        broker: &broker,
        answer: None,
        events: Default::default(),
    };
    let ask = || Asker::Broker {
        broker: &broker,
        timeout: long,
        cancel: CancellationToken::new(),
    };
    let invalid = test_tool(&ctx, None, &auto, &params(&[]), ask(), &sink)
        .await
        .unwrap();
    assert!(invalid.output.contains("symbol"), "{}", invalid.output);
    assert!(invalid.exchange.is_none());
    assert_eq!(api.requests().len(), before + 1);

    // A draft that does not load is an error, not a run.
    let err = test_tool(
        &ctx,
        None,
        &auto.replace("method: POST", "method: FETCH"),
        &params(&[]),
        ask(),
        &sink,
    )
    .await
    .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("method"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_draft_is_checked_for_its_loader_errors_tools_and_model() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let path = ctx.paths().config_dir.join("agents/lead_agent.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let ok = engine::api::editor::check_agent(&ctx, Some(&path), &text);
    assert_eq!(ok.errors, []);
    let view = ok.agent.unwrap();
    assert_eq!(view.name, "lead_agent");
    assert!(view.tools.contains(&(
        "call_subagent".to_string(),
        engine::config::Permission::Auto
    )));
    assert!(!view.role_prompt.is_empty() && !view.role_prompt.starts_with("---"));
    let unknown = text.replacen("tools:", "tools:\n  no_such_tool: auto", 1);
    let check = engine::api::editor::check_agent(&ctx, Some(&path), &unknown);
    assert!(check.agent.is_some(), "it still loads, with a problem");
    let errors = check.errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field.as_deref(), Some("tools.no_such_tool"));
    let line = errors[0].line.unwrap() as usize;
    assert!(unknown
        .lines()
        .nth(line - 1)
        .unwrap()
        .contains("no_such_tool"));

    let model = "---\nname: x\nmodel: nope\n---\nHi\n";
    let errors = engine::api::editor::check_agent(&ctx, None, model).errors;
    assert_eq!(errors[0].field.as_deref(), Some("model"));
    assert_eq!(errors[0].line, Some(3));
    assert!(errors[0].message.contains("default"), "{errors:?}");

    let skills = "---\nname: x\nskills: [no-such-skill]\n---\nHi\n";
    let check = engine::api::editor::check_agent(&ctx, None, skills);
    assert_eq!(check.agent.unwrap().skills, ["no-such-skill"]);
    assert_eq!(check.errors[0].field.as_deref(), Some("skills"));
    assert_eq!(check.errors[0].line, Some(3));
    assert!(check.errors[0]
        .message
        .contains("there is no skill `no-such-skill`"));
    let all = engine::api::editor::check_agent(&ctx, None, "---\nname: x\nskills: all\n---\n");
    assert_eq!(all.errors, []);
    assert!(all.agent.unwrap().all_skills);

    let broken = "---\nname: x\ntools: [web_search\n---\n";
    let check = engine::api::editor::check_agent(&ctx, None, broken);
    assert!(check.agent.is_none());
    let errors = check.errors;
    assert_eq!(errors.len(), 1);
    assert!(errors[0].line.is_some(), "{errors:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_has_an_optional_display_name_and_keeps_its_name_as_the_id() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let config = ctx.paths().config_dir.clone();
    // The bundled agents carry one.
    let path = config.join("agents/lead_agent.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let view = engine::api::editor::check_agent(&ctx, Some(&path), &text)
        .agent
        .unwrap();
    assert_eq!(view.name, "lead_agent");
    assert_eq!(view.display_name.as_deref(), Some("Lead researcher"));
    let listed = engine::config::files::list(&config, engine::config::files::FileKind::Agent);
    let lead = listed
        .iter()
        .find(|f| f.file_name == "lead_agent.md")
        .unwrap();
    assert_eq!(lead.name.as_deref(), Some("lead_agent"));
    assert_eq!(lead.display_name.as_deref(), Some("Lead researcher"));
    // Optional, and a blank one is none.
    for text in [
        "---\nname: plain\n---\nHi\n",
        "---\nname: plain\ndisplay_name: \"  \"\n---\nHi\n",
    ] {
        let check = engine::api::editor::check_agent(&ctx, None, text);
        assert_eq!(check.errors, []);
        let view = check.agent.unwrap();
        assert_eq!((view.name.as_str(), view.display_name), ("plain", None));
    }
}
