//! MCP Apps (interactive views of tool results) through a whole run: a server built on the
//! extension's own server helpers (tests/mcp/apps-server.mjs, `@modelcontextprotocol/ext-apps`)
//! declares a view for its tools; the client says it renders views; the call the model makes
//! keeps its view (HTML stored once, declared needs, the call's input and result); the tool only
//! views may call never reaches the model; and the view's own calls go through the gate, named
//! as the view of their server, recorded, a denial reaching the view as an error; the latest
//! result a view drew from its own calls is kept, for the view drawn again.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::api::direct::Asker;
use engine::api::mcp::{
    call_from_view, latest_view_result, unmute_view, view_muted, ViewCallAnswer, ViewCallError,
};
use engine::calls::CallStatus;
use engine::conversations::RunStatus;
use engine::engine::EngineOptions;
use engine::events::{EngineEvent, EventSink};
use engine::mcp::ServerStatus;
use engine::paths::AppPaths;
use engine::permissions::{Answer, PermissionRequest};
use engine::run::RunRequest;
use engine::Engine;
use serde_json::{json, Map, Value};
use test_support::{ScriptedModel, Turn};
use tokio_util::sync::CancellationToken;

use crate::support::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The apps server over stdio, its calls logged to `log`.
fn stdio_server(log: &Path) -> Value {
    let server = test_servers_dir().join("apps-server.mjs");
    json!({
        "command": "node",
        "args": [server.display().to_string()],
        "env": {"APPS_SERVER_LOG": log.display().to_string()},
    })
}

/// The apps server over HTTP on a free port of 127.0.0.1; killed when dropped.
struct HttpApps {
    child: std::process::Child,
    url: String,
}

impl HttpApps {
    async fn start(dir: &Path, log: &Path) -> Self {
        let port_file = dir.join("port");
        let child = std::process::Command::new("node")
            .arg(test_servers_dir().join("apps-server.mjs"))
            .arg("http")
            .arg(&port_file)
            .env("APPS_SERVER_LOG", log)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("node starts");
        assert!(
            eventually(30, || port_file.is_file()).await,
            "the apps server did not listen"
        );
        let port = std::fs::read_to_string(&port_file).unwrap();
        HttpApps {
            child,
            url: format!("http://127.0.0.1:{}/mcp", port.trim()),
        }
    }
}

impl Drop for HttpApps {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An engine over a fresh home: the scripted model as `default` (native tool calls), `server`
/// as the MCP server `apps`, and a `tester` agent that may show the counter.
async fn open(model: &ScriptedModel, home: &Path, server: Value) -> Engine {
    everything_js(); // the same install provides the SDK and the extension
    let config = home.join("config");
    engine::paths::seed_config(&config).unwrap();
    write(
        &config.join("models.yaml"),
        &format!(
            "profiles:\n  - name: default\n    api: openai\n    base_url: \"{}\"\n    model: scripted\n    tool_calls: native\n",
            model.openai_base_url()
        ),
    );
    write(
        &config.join("mcp.json"),
        &json!({"mcpServers": {"apps": server}}).to_string(),
    );
    write(
        &config.join("agents/tester.md"),
        "---\nname: tester\ndescription: Test agent\nmodel: default\ntools:\n  apps.show_counter: auto\n  apps.increment: auto\nmax_tool_rounds: 3\n---\nYou are the tester.\n",
    );
    let engine = Engine::open_with(
        AppPaths::resolve(Some(home)).unwrap(),
        Arc::new(engine::events::discard()),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap();
    match engine
        .mcp()
        .wait_settled("apps", Duration::from_secs(30))
        .await
        .unwrap()
    {
        ServerStatus::Ready { .. } => {}
        other => panic!("apps is not ready: {other:?}"),
    }
    engine
}

fn server_calls(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The text of a `CallToolResult`'s content.
fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A run in which the model shows the counter: the engine and its home.
async fn show_counter(
    server: impl FnOnce(&Path) -> Value,
) -> (Engine, ScriptedModel, tempfile::TempDir) {
    let wire = engine::models::wire_tool_name("apps.show_counter").into_owned();
    let model = ScriptedModel::start(vec![
        Turn::text("Showing it.").with_call(&wire, "{}"),
        Turn::text("There it is."),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let engine = open(&model, home.path(), server(home.path())).await;
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        engine.runner().run(
            RunRequest {
                conversation_id: "conv".into(),
                agent: "tester".into(),
                task: "Show me the counter".into(),
            },
            CancellationToken::new(),
        ),
    )
    .await
    .expect("the run ends");
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    (engine, model, home)
}

/// The recorded call of `tool` in the test conversation.
fn recorded(engine: &Engine, tool: &str) -> engine::calls::CallRecord {
    engine
        .ctx
        .with_db(|c| engine::calls::store::list(c, "conv"))
        .unwrap()
        .into_iter()
        .find(|r| r.tool == tool)
        .expect("the call is recorded")
}

/// The view kept with the call `call` calls its server's `tool` (no arguments), the person
/// asked through `ask`: what the view gets back, and whether the view is muted now.
async fn view_answer(
    engine: &Engine,
    call: &str,
    tool: &str,
    ask: Asker<'_>,
) -> Result<ViewCallAnswer, ViewCallError> {
    let sink = engine::events::discard();
    call_from_view(engine, call, tool, Map::new(), ask, &sink).await
}

/// [`view_answer`]'s result only: what the view gets back.
async fn from_view(
    engine: &Engine,
    call: &str,
    tool: &str,
    ask: Asker<'_>,
) -> Result<Value, ViewCallError> {
    view_answer(engine, call, tool, ask).await.map(|a| a.result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_view_is_kept_with_its_call_and_its_calls_go_through_the_gate() {
    let log = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    let (engine, model, _home) = show_counter(|_| stdio_server(&log)).await;
    let wire = engine::models::wire_tool_name("apps.show_counter").into_owned();

    // The model gets the tool with a view, never the one only views may call, though its
    // agent lists it.
    let sent: Vec<String> = model.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    assert!(sent.contains(&wire), "{sent:?}");
    let hidden = engine::models::wire_tool_name("apps.increment").into_owned();
    assert!(!sent.contains(&hidden), "{sent:?}");

    // The call keeps its view: the server, the URI, the declared needs, the input and the
    // result as the server sent them, and the document.
    let shown = recorded(&engine, "apps.show_counter");
    let named = shown.view.as_ref().expect("the call keeps its view");
    assert_eq!(
        (named.server.as_str(), named.resource_uri.as_str()),
        ("apps", "ui://counter/view")
    );
    let (conversation, view, html) = engine
        .ctx
        .with_db(|c| engine::calls::store::view_of_call(c, &shown.call_id))
        .unwrap()
        .expect("its document is kept");
    assert_eq!(conversation, "conv");
    assert_eq!(view.meta["prefersBorder"], json!(true));
    assert_eq!(view.tool_input, json!({}));
    assert!(view.local_server, "a stdio server runs here");
    assert_eq!(
        view.tool_result.as_ref().unwrap()["structuredContent"],
        json!({"count": 0})
    );
    assert!(html.contains("Add one"), "the counter's view");

    // The view's button: through the gate, asked as the view of `apps`, recorded.
    let asked: Arc<Mutex<Vec<PermissionRequest>>> = Arc::default();
    let ask = |answer: Answer| {
        let asked = asked.clone();
        Asker::Now(Box::new(move |r: &PermissionRequest| {
            asked.lock().unwrap().push(r.clone());
            answer
        }))
    };
    let result = from_view(&engine, &shown.call_id, "increment", ask(Answer::Approve))
        .await
        .unwrap();
    assert_eq!(result["structuredContent"], json!({"count": 1}), "{result}");
    {
        let asked = asked.lock().unwrap();
        assert_eq!(
            asked.len(),
            1,
            "the view's call asks (confirm is the default)"
        );
        assert_eq!(asked[0].view_of.as_deref(), Some("apps"));
        assert_eq!(asked[0].tool, "apps.increment");
        // Nothing a view is allowed is remembered: the dialog does not offer it.
        assert!(!asked[0].grantable);
        assert!(asked[0].proposed_rule.is_none());
    }

    // Denied: the view gets an error result, and the server never sees the call.
    let result = from_view(&engine, &shown.call_id, "increment", ask(Answer::Deny))
        .await
        .unwrap();
    assert_eq!(result["isError"], json!(true));
    assert!(text_of(&result).contains("did not allow"), "{result}");
    let increments = server_calls(&log)
        .into_iter()
        .filter(|c| c["tool"] == "increment")
        .count();
    assert_eq!(increments, 1, "only the approved call reached the server");

    // Both are calls of the conversation, made by the view.
    let records = engine
        .ctx
        .with_db(|c| engine::calls::store::list(c, "conv"))
        .unwrap();
    let by_view: Vec<_> = records
        .iter()
        .filter(|r| r.view_of.as_deref() == Some("apps"))
        .map(|r| (r.tool.as_str(), r.status))
        .collect();
    assert_eq!(
        by_view,
        [
            ("apps.increment", CallStatus::Succeeded),
            ("apps.increment", CallStatus::Denied)
        ]
    );
    assert!(
        records
            .iter()
            .all(|r| r.view_of.is_none() || r.view.is_none()),
        "a view's own call opens no other view"
    );

    // A tool its server does not have, one only the model may call, and a call without a
    // view: none is asked for, none reaches the server.
    for tool in ["format_disk", "reset"] {
        let result = from_view(&engine, &shown.call_id, tool, ask(Answer::Approve))
            .await
            .unwrap();
        assert_eq!(result["isError"], json!(true));
        assert!(
            text_of(&result).contains(&format!("has no tool `{tool}` its views may call")),
            "{result}"
        );
    }
    assert!(!server_calls(&log).iter().any(|c| c["tool"] == "reset"));
    let missing = from_view(&engine, "call_nope", "increment", ask(Answer::Approve)).await;
    assert!(
        matches!(missing, Err(ViewCallError::NoView(_))),
        "{missing:?}"
    );
    assert_eq!(asked.lock().unwrap().len(), 2, "neither of these asked");
}

/// Views come from a local HTTP server too (Streamable HTTP on 127.0.0.1), and its view's calls
/// reach it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_http_servers_view_works_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("apps.log");
    let server = HttpApps::start(dir.path(), &log).await;
    let (engine, _model, _home) = show_counter(|_| json!({"url": server.url})).await;
    let shown = recorded(&engine, "apps.show_counter");
    let view = shown.view.as_ref().expect("the call keeps its view");
    assert_eq!(view.resource_uri, "ui://counter/view");
    let (_, kept, _) = engine
        .ctx
        .with_db(|c| engine::calls::store::view_of_call(c, &shown.call_id))
        .unwrap()
        .unwrap();
    assert!(kept.local_server, "HTTP on 127.0.0.1 is this computer");
    let result = from_view(
        &engine,
        &shown.call_id,
        "increment",
        Asker::Now(Box::new(|_| Answer::Approve)),
    )
    .await
    .unwrap();
    assert_eq!(result["structuredContent"], json!({"count": 1}), "{result}");
    let tools: Vec<Value> = server_calls(&log)
        .into_iter()
        .map(|c| c["tool"].clone())
        .collect();
    assert_eq!(tools, [json!("show_counter"), json!("increment")]);
}

/// A server of the same name launched otherwise is another program: the views its namesake
/// left do not drive it (their calls are refused, nothing reaches it), and a view's "always
/// allow" approves its one call only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_drives_only_the_server_it_came_from() {
    let log = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    let (engine, _model, home) = show_counter(|_| stdio_server(&log)).await;
    let shown = recorded(&engine, "apps.show_counter");
    let asked = Arc::new(Mutex::new(0));
    let ask = |answer: Answer| {
        let asked = asked.clone();
        Asker::Now(Box::new(move |_: &PermissionRequest| {
            *asked.lock().unwrap() += 1;
            answer
        }))
    };
    let increment = |answer| from_view(&engine, &shown.call_id, "increment", ask(answer));
    // "Always allow" is not kept for a view: the next call asks again.
    let first = increment(Answer::ApproveAlways).await.unwrap();
    assert_eq!(first["structuredContent"], json!({"count": 1}), "{first}");
    let second = increment(Answer::Approve).await.unwrap();
    assert_eq!(second["structuredContent"], json!({"count": 2}), "{second}");
    assert_eq!(*asked.lock().unwrap(), 2);

    // The same name, another launch (an argument added): the old view is refused.
    let mut other = stdio_server(&log);
    other["args"].as_array_mut().unwrap().push(json!("--other"));
    write(
        &home.path().join("config/mcp.json"),
        &json!({"mcpServers": {"apps": other}}).to_string(),
    );
    engine.reload_config();
    assert!(
        eventually(30, || engine.mcp().launch_digest("apps").is_some_and(|d| {
            let (_, view, _) = engine
                .ctx
                .with_db(|c| engine::calls::store::view_of_call(c, &shown.call_id))
                .unwrap()
                .unwrap();
            d != view.launch_digest
        }))
        .await,
        "the new launch is in"
    );
    let refused = increment(Answer::Approve).await.unwrap();
    assert_eq!(refused["isError"], json!(true));
    assert!(
        text_of(&refused).contains("is no longer configured as it was"),
        "{refused}"
    );
    assert_eq!(*asked.lock().unwrap(), 2, "not even asked");
    let increments = server_calls(&log)
        .into_iter()
        .filter(|c| c["tool"] == "increment")
        .count();
    assert_eq!(increments, 2);
}

/// The apps server over stdio with `increment` set to `auto` in `mcp.json` (a model's call of
/// it would run without asking).
fn auto_increment(log: &Path) -> Value {
    let mut server = stdio_server(log);
    server["permissions"] = json!({"increment": "auto"});
    server
}

/// Counts the questions it is asked, answering each `answer`.
#[derive(Clone, Default)]
struct Person(Arc<Mutex<u32>>);

impl Person {
    fn answers(&self, answer: Answer) -> Asker<'static> {
        let asked = self.0.clone();
        Asker::Now(Box::new(move |_: &PermissionRequest| {
            *asked.lock().unwrap() += 1;
            answer
        }))
    }

    fn asked(&self) -> u32 {
        *self.0.lock().unwrap()
    }
}

fn increments(log: &Path) -> usize {
    server_calls(log)
        .into_iter()
        .filter(|c| c["tool"] == "increment")
        .count()
}

fn write_rules(engine: &Engine, home: &Path, rules: &str) {
    write(&home.join("config/settings.yaml"), rules);
    engine.ctx.reload_config();
    assert!(
        engine.ctx.config_problems().is_empty(),
        "{:?}",
        engine.ctx.config_problems()
    );
}

/// A view is asked for every call it makes: a tool set to `auto` and a rule that allows it
/// do not spare the question (they are the person's choices for agents); a rule that denies
/// it still denies, without asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_a_view_makes_is_asked_for_and_a_deny_rule_still_denies() {
    let log = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    let (engine, _model, home) = show_counter(|_| auto_increment(&log)).await;
    let shown = recorded(&engine, "apps.show_counter");
    let person = Person::default();
    for n in 1..=5 {
        let result = from_view(
            &engine,
            &shown.call_id,
            "increment",
            person.answers(Answer::Approve),
        )
        .await
        .unwrap();
        assert_eq!(result["structuredContent"], json!({"count": n}), "{result}");
    }
    assert_eq!(person.asked(), 5, "5 calls of an auto tool, 5 questions");

    // A global rule that allows it: still asked.
    write_rules(
        &engine,
        home.path(),
        "permission_rules:\n  - tool: apps.increment\n    action: allow\n",
    );
    let result = from_view(
        &engine,
        &shown.call_id,
        "increment",
        person.answers(Answer::Approve),
    )
    .await
    .unwrap();
    assert_eq!(result["structuredContent"], json!({"count": 6}), "{result}");
    assert_eq!(person.asked(), 6);

    // A rule that denies it: denied without asking, and not counted as the person's refusal.
    write_rules(
        &engine,
        home.path(),
        "permission_rules:\n  - tool: apps.increment\n    action: deny\n",
    );
    for _ in 0..4 {
        let answer = view_answer(
            &engine,
            &shown.call_id,
            "increment",
            person.answers(Answer::Approve),
        )
        .await
        .unwrap();
        assert_eq!(answer.result["isError"], json!(true));
        assert!(
            text_of(&answer.result).contains("denied by a permission rule"),
            "{}",
            answer.result
        );
        assert!(!answer.muted, "a rule's denial does not mute the view");
    }
    assert_eq!(person.asked(), 6, "a denied call is not asked for");
    assert_eq!(increments(&log), 6);
}

/// Three refusals in a row mute a view: its further calls are refused without asking, the view
/// told why, and none reaches the server; the person can let it ask again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_refused_three_times_is_muted_and_its_calls_reach_nobody() {
    let log = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    let (engine, _model, _home) = show_counter(|_| auto_increment(&log)).await;
    let shown = recorded(&engine, "apps.show_counter");
    let person = Person::default();
    let mut answers = Vec::new();
    for _ in 0..8 {
        answers.push(
            view_answer(
                &engine,
                &shown.call_id,
                "increment",
                person.answers(Answer::Deny),
            )
            .await
            .unwrap(),
        );
    }
    assert_eq!(person.asked(), 3, "3 questions, then none");
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!(answer.result["isError"], json!(true));
        let text = text_of(&answer.result);
        if i < 3 {
            assert!(text.contains("did not allow"), "{i}: {text}");
        } else {
            assert!(
                text.contains("calls from this view were blocked after three refusals"),
                "{i}: {text}"
            );
        }
        assert_eq!(answer.muted, i >= 2, "{i}: muted from the third refusal on");
    }
    assert_eq!(increments(&log), 0, "no call reached the server");
    assert!(view_muted(&engine, &shown.call_id));
    // Each is a call of the conversation, made by the view: 3 refused by the person, 5 blocked.
    let reasons: Vec<String> = engine
        .ctx
        .with_db(|c| engine::calls::store::list(c, "conv"))
        .unwrap()
        .into_iter()
        .filter(|r| r.view_of.is_some())
        .inspect(|r| assert_eq!(r.status, CallStatus::Denied))
        .map(|r| r.reason.unwrap_or_default())
        .collect();
    assert_eq!(reasons.len(), 8);
    assert!(
        reasons[..3].iter().all(|r| r == "denied by the user"),
        "{reasons:?}"
    );
    assert!(
        reasons[3..].iter().all(|r| r.starts_with("blocked: ")),
        "{reasons:?}"
    );

    // Let it ask again: its next call is asked for and runs; an approval starts the count again.
    assert!(unmute_view(&engine, &shown.call_id));
    assert!(!view_muted(&engine, &shown.call_id));
    let answer = view_answer(
        &engine,
        &shown.call_id,
        "increment",
        person.answers(Answer::Approve),
    )
    .await
    .unwrap();
    assert_eq!(answer.result["structuredContent"], json!({"count": 1}));
    assert!(!answer.muted);
    assert_eq!(person.asked(), 4);

    assert_eq!(
        increments(&log),
        1,
        "only the approved call reached the server"
    );
}

/// A view's questions come one at a time: eight calls made at once, each refused through the
/// permission dialog's broker as it is asked, give three questions (never two open together),
/// and the five that waited their turn are refused without asking. On one thread, so every
/// call gets as far as it can before the person answers anything.
#[tokio::test]
async fn a_views_questions_come_one_at_a_time() {
    let log = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    let (engine, _model, _home) = show_counter(|_| auto_increment(&log)).await;
    let engine = Arc::new(engine);
    let shown = recorded(&engine, "apps.show_counter");
    let (tx, mut asked) = tokio::sync::mpsc::unbounded_channel();
    let sink: Arc<dyn EventSink> = Arc::new(move |event: EngineEvent| {
        if let EngineEvent::PermissionRequest { request_id, .. } = event {
            let _ = tx.send(request_id);
        }
    });
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let (engine, sink, call) = (engine.clone(), sink.clone(), shown.call_id.clone());
            tokio::spawn(async move {
                let ask = Asker::Broker {
                    broker: engine.runs.runner().broker(),
                    timeout: Duration::from_secs(600),
                    cancel: CancellationToken::new(),
                };
                call_from_view(&engine, &call, "increment", Map::new(), ask, sink.as_ref())
                    .await
                    .unwrap()
            })
        })
        .collect();
    // The person answers each question as it comes, noting how many were open then; the
    // questions end when every call has ended (the last sender goes with the last call).
    drop(sink);
    let broker = engine.runs.runner().broker();
    let mut open_when_asked = Vec::new();
    while let Some(request) = asked.recv().await {
        open_when_asked.push(broker.pending().len());
        broker.answer(&request, Answer::Deny).unwrap();
    }
    assert_eq!(open_when_asked, [1, 1, 1], "three questions, one at a time");
    let mut blocked = 0;
    for call in calls {
        let answer = call.await.unwrap();
        assert_eq!(answer.result["isError"], json!(true));
        if text_of(&answer.result)
            .contains("calls from this view were blocked after three refusals")
        {
            blocked += 1;
        }
    }
    assert_eq!(blocked, 5);
    assert_eq!(increments(&log), 0, "no call reached the server");
}

/// The latest result a view got from a call of a tool whose results it draws (one declaring the
/// same view) is kept while the engine runs, for the view drawn again (another conversation
/// shown and back, the window reloaded): a refusal, an error, another view's tool or another
/// view's calls leave it as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_latest_result_a_view_drew_is_kept_for_the_view_drawn_again() {
    let log = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    let (engine, _model, _home) = show_counter(|_| stdio_server(&log)).await;
    let shown = recorded(&engine, "apps.show_counter");
    let view = shown.call_id.as_str();
    let person = Person::default();
    assert!(
        latest_view_result(&engine, view).is_none(),
        "no call of the view yet: it is drawn from its call's result"
    );

    for expected in [1, 2] {
        let answer = from_view(&engine, view, "increment", person.answers(Answer::Approve))
            .await
            .unwrap();
        assert_eq!(answer["structuredContent"], json!({"count": expected}));
        let latest = latest_view_result(&engine, view).expect("the view's latest result");
        assert_eq!(latest.tool, "increment");
        assert_eq!(latest.result, answer, "the server's whole answer");
    }

    // Refused, a tool its server does not have, another view's tool: still the count of 2.
    from_view(&engine, view, "increment", person.answers(Answer::Deny))
        .await
        .unwrap();
    from_view(
        &engine,
        view,
        "format_disk",
        person.answers(Answer::Approve),
    )
    .await
    .unwrap();
    let probe = from_view(&engine, view, "show_probe", person.answers(Answer::Approve))
        .await
        .unwrap();
    assert_ne!(probe["isError"], json!(true), "{probe}");
    let latest = latest_view_result(&engine, view).unwrap();
    assert_eq!(
        (latest.tool.as_str(), &latest.result["structuredContent"]),
        ("increment", &json!({"count": 2}))
    );

    // The view's own tool of the model's kind, called from it: its result is the counter's too.
    from_view(
        &engine,
        view,
        "show_counter",
        person.answers(Answer::Approve),
    )
    .await
    .unwrap();
    assert_eq!(
        latest_view_result(&engine, view).unwrap().tool,
        "show_counter"
    );
    assert!(latest_view_result(&engine, "call_other").is_none());
}
