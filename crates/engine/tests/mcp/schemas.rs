//! An MCP tool's JSON Schema through a whole run with native tool calling: the server's
//! `inputSchema` (JSON Schema 2020-12: `$schema`, `$defs`, `$ref`, `additionalProperties`)
//! reaches the model's request as the server wrote it, and the arguments are checked against
//! it (the `$ref` followed) before the server is called. And the limits on what a server
//! lists: pages, tools, description lengths. The server is `tests/mcp/schema-tools.mjs` over
//! stdio, the model the scripted one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use engine::conversations::RunStatus;
use engine::engine::EngineOptions;
use engine::mcp::client::{connect, ConnectOptions, MAX_TOOLS, MAX_TOOL_PAGES};
use engine::mcp::tool::{MAX_DESCRIPTION_CHARS, MAX_PARAM_DESCRIPTION_CHARS};
use engine::mcp::{McpServerConfig, McpTool, ServerStatus};
use engine::paths::AppPaths;
use engine::run::RunRequest;
use engine::tools::Tool;
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

/// A session with `schema-tools.mjs ARGS…` (calls logged in a temporary file), calls timing
/// out after 20 s (a guard against a listing that never ends, not a measured time).
async fn session(
    args: &[&str],
) -> (
    Arc<engine::mcp::McpClient>,
    McpServerConfig,
    tempfile::TempDir,
) {
    everything_js(); // the same install provides the SDK the script uses
    let dir = tempfile::tempdir().unwrap();
    let mut argv = vec![
        script().display().to_string(),
        dir.path().join("calls.log").display().to_string(),
    ];
    argv.extend(args.iter().map(|a| a.to_string()));
    let mut cfg = stdio("listing", "node", argv);
    cfg.timeout_secs = 20;
    let client = connect(&cfg, &ConnectOptions::default()).await.unwrap();
    (Arc::new(client), cfg, dir)
}

#[tokio::test]
async fn a_server_paging_forever_is_cut_at_the_page_limit() {
    let (client, _cfg, _dir) = session(&["forever", "1"]).await;
    let tools = client.list_tools().await.expect("the listing ends");
    // `book`, then one tool a page.
    assert_eq!(tools.len(), 1 + MAX_TOOL_PAGES);
    assert_eq!(tools[0].name, "book");
}

#[tokio::test]
async fn a_server_listing_too_many_tools_keeps_the_first_ones() {
    let (client, _cfg, _dir) = session(&["3", "200"]).await;
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), MAX_TOOLS);
    assert_eq!(tools[0].name, "book");
    assert_eq!(tools[1].name, "tool_0_0");
    assert_eq!(tools[MAX_TOOLS - 1].name, "tool_1_54");
}

#[tokio::test]
async fn long_descriptions_are_cut_before_they_reach_the_prompt() {
    let (client, cfg, _dir) = session(&["1", "1", "100000"]).await;
    let listed = client.list_tools().await.unwrap();
    let long = listed.iter().find(|t| t.name == "tool_0_0").unwrap();
    let tool = McpTool::new("listing.tool_0_0".into(), long, &cfg, client.clone());
    let spec = tool.spec();
    assert!(
        spec.description
            .starts_with(&"d".repeat(MAX_DESCRIPTION_CHARS)),
        "the start is kept"
    );
    assert!(
        spec.description.ends_with(&format!(
            "… (cut to {MAX_DESCRIPTION_CHARS} of 100000 characters)"
        )),
        "{}",
        &spec.description[MAX_DESCRIPTION_CHARS..]
    );
    let q = &spec.params[0];
    assert!(
        q.description.ends_with(&format!(
            "… (cut to {MAX_PARAM_DESCRIPTION_CHARS} of 100000 characters)"
        )),
        "{}",
        &q.description[MAX_PARAM_DESCRIPTION_CHARS..]
    );
    // Both prompts stay small: the text-mode instructions and the native schema (the
    // server's, over MAX_SCHEMA_BYTES, is replaced by the one built from the parameters).
    let instructions = engine::parser::tool_instructions(std::slice::from_ref(spec));
    assert!(instructions.len() < 8_000, "{} bytes", instructions.len());
    let native = spec.json_schema().to_string();
    assert!(native.len() < 2_000, "{} bytes", native.len());
    assert!(native.contains("\"q\""), "{native}");
    // The short `book` keeps its schema whole.
    let book = listed.iter().find(|t| t.name == "book").unwrap();
    let book = McpTool::new("listing.book".into(), book, &cfg, client.clone());
    assert_eq!(book.spec().json_schema(), book_schema());
}
