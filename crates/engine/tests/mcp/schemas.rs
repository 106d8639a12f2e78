//! An MCP tool's JSON Schema through a whole run with native tool calling: the server's
//! `inputSchema` (JSON Schema 2020-12: `$schema`, `$defs`, `$ref`, `additionalProperties`)
//! reaches the model's request as the server wrote it, and the arguments are checked against
//! it (the `$ref` followed) before the server is called. The server is `tests/mcp/schema-tools.mjs`
//! over stdio, the model the scripted one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use engine::conversations::RunStatus;
use engine::engine::EngineOptions;
use engine::mcp::ServerStatus;
use engine::paths::AppPaths;
use engine::run::RunRequest;
use engine::Engine;
use serde_json::{json, Value};
use test_support::{ScriptedModel, Turn};
use tokio_util::sync::CancellationToken;

use crate::support::*;

const WAIT: Duration = Duration::from_secs(30);

/// The schema `schema-tools.mjs` gives its `book` tool.
fn book_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                "required": ["street"],
                "additionalProperties": false,
            },
        },
        "properties": {
            "name": {"type": "string", "description": "Who books"},
            "address": {"$ref": "#/$defs/address"},
        },
        "required": ["name", "address"],
        "additionalProperties": false,
    })
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// An engine over a fresh home: the `default` profile at `model` (`api`, native tool calls),
/// mcp.json with `schema-tools.mjs ARGS…` as server `schemas` (its tools `auto`), and a
/// `tester` agent using `tools`. Waits for the server to be ready.
pub async fn open_with_server(
    model: &ScriptedModel,
    api: &str,
    args: &[String],
    tools: &str,
) -> (Engine, tempfile::TempDir) {
    everything_js(); // the same install provides the SDK the script uses
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config");
    engine::paths::seed_config(&config).unwrap();
    let base_url = if api == "anthropic" {
        model.base_url.clone()
    } else {
        model.openai_base_url()
    };
    write(
        &config.join("models.yaml"),
        &format!("profiles:\n  - name: default\n    api: {api}\n    base_url: \"{base_url}\"\n    model: scripted\n    tool_calls: native\n"),
    );
    let mut argv = vec![script().display().to_string()];
    argv.extend(args.iter().cloned());
    write(
        &config.join("mcp.json"),
        &json!({"mcpServers": {"schemas": {"command": "node", "args": argv, "permission": "auto"}}})
            .to_string(),
    );
    write(
        &config.join("agents/tester.md"),
        &format!("---\nname: tester\ndescription: Test agent\nmodel: default\ntools:\n  {tools}: auto\nmax_tool_rounds: 3\n---\nYou are the tester.\n"),
    );
    let engine = Engine::open_with(
        AppPaths::resolve(Some(home.path())).unwrap(),
        Arc::new(engine::events::discard()),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap();
    match engine.mcp().wait_settled("schemas", WAIT).await.unwrap() {
        ServerStatus::Ready { .. } => {}
        other => panic!("schemas is not ready: {other:?}"),
    }
    (engine, home)
}

fn script() -> PathBuf {
    test_servers_dir().join("schema-tools.mjs")
}

/// The `parameters` (OpenAI) or `input_schema` (Anthropic) of tool `wire` in a request body.
fn sent_schema(body: &Value, wire: &str) -> Value {
    let tools = body["tools"].as_array().expect("tools in the request");
    let tool = tools
        .iter()
        .find(|t| t.pointer("/function/name").or_else(|| t.get("name")) == Some(&json!(wire)))
        .unwrap_or_else(|| panic!("{wire} not among {tools:?}"));
    tool.pointer("/function/parameters")
        .or_else(|| tool.get("input_schema"))
        .cloned()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2020_12_schema_reaches_the_model_whole_and_checks_the_arguments() {
    let wire = engine::models::wire_tool_name("schemas.book").into_owned();
    for api in ["openai", "anthropic"] {
        let model = ScriptedModel::start(vec![
            // `address` misses `street`, which only its `$ref` says is required.
            Turn::text("Booking.")
                .with_call(&wire, r#"{"name": "Ada", "address": {"city": "Paris"}}"#),
            Turn::text("Again.").with_call(
                &wire,
                r#"{"name": "Ada", "address": {"street": "1 Rue", "city": "Paris"}}"#,
            ),
            Turn::text("Booked."),
        ])
        .await;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("calls.log");
        let (engine, _home) =
            open_with_server(&model, api, &[log.display().to_string()], "schemas.book").await;
        let request = RunRequest {
            conversation_id: "conv".into(),
            agent: "tester".into(),
            task: "Book a visit".into(),
        };
        let outcome = tokio::time::timeout(
            Duration::from_secs(60),
            engine.runner().run(request, CancellationToken::new()),
        )
        .await
        .expect("the run ends");
        assert_eq!(outcome.status, RunStatus::Completed, "{api}: {outcome:?}");

        let requests = model.requests();
        assert_eq!(requests.len(), 3, "{api}");
        assert_eq!(
            sent_schema(&requests[0].body, &wire),
            book_schema(),
            "{api}: the server's schema went out whole"
        );
        let results = requests[1].tool_results();
        let (_, refused) = results.last().expect("a result for the first call");
        assert!(
            refused.contains("`address` needs the member `street`"),
            "{api}: {refused}"
        );
        let results = requests[2].tool_results();
        let (_, booked) = results.last().expect("a result for the second call");
        assert!(booked.contains("booked"), "{api}: {booked}");
        let calls = std::fs::read_to_string(&log).unwrap();
        let calls: Vec<Value> = calls
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            calls,
            [json!({"name": "Ada", "address": {"street": "1 Rue", "city": "Paris"}})],
            "{api}: only the valid call reached the server"
        );
    }
}
