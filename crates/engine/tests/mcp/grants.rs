//! A conversation grant for an MCP tool is bound to its server: it stops applying when the
//! server's launch settings in mcp.json change (server-everything, then the same server
//! behind the tee script).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::calls::CallStatus;
use engine::engine::EngineOptions;
use engine::gate::{self, Asker, Caller, Subject};
use engine::mcp::ServerStatus;
use engine::parser::ToolCall;
use engine::paths::AppPaths;
use engine::permissions::{Answer, PermissionRequest};
use engine::Engine;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

const CONVERSATION: &str = "conv-mcp-grants";

fn mcp_json(args: Vec<String>) -> String {
    json!({"mcpServers": {"everything": {"command": "node", "args": args}}}).to_string()
}

async fn ready(engine: &Engine) {
    let status = engine
        .mcp()
        .wait_settled("everything", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(matches!(status, ServerStatus::Ready { .. }), "{status:?}");
}

/// Call everything.echo through the gate (remembering "always allow"), answering `answer`.
async fn echo(engine: &Engine, answer: Answer) -> (CallStatus, Vec<PermissionRequest>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let sink = engine::events::discard();
    let cancel = CancellationToken::new();
    let caller = Caller::direct(&engine.ctx, &sink, CONVERSATION, &cancel, true, None);
    let c = ToolCall::new(
        "everything.echo",
        [("message".to_string(), "hi".to_string())]
            .into_iter()
            .collect(),
    );
    let outcome = gate::run(
        &caller,
        Asker::Now(Box::new(move |r| {
            seen.lock().unwrap().push(r.clone());
            answer
        })),
        c.id.clone(),
        Subject::Parsed(&c),
    )
    .await;
    let asked = asked.lock().unwrap().clone();
    (outcome.status, asked)
}

#[tokio::test]
async fn an_mcp_grant_stops_applying_when_its_servers_launch_changes() {
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::resolve(Some(home.path())).unwrap();
    paths.prepare().unwrap();
    let direct = vec![everything_js().display().to_string(), "stdio".into()];
    std::fs::write(paths.config_dir.join("mcp.json"), mcp_json(direct)).unwrap();
    let engine = Engine::open_with(
        paths.clone(),
        Arc::new(engine::events::discard()),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap();
    ready(&engine).await;

    let (status, asked) = echo(&engine, Answer::ApproveAlways).await;
    assert_eq!((status, asked.len()), (CallStatus::Succeeded, 1));
    let stored = engine
        .ctx
        .with_db(|c| engine::permissions::grants::for_conversation(c, CONVERSATION))
        .unwrap();
    assert_eq!(stored[0].binding.label.as_deref(), Some("everything"));
    let (status, asked) = echo(&engine, Answer::Deny).await;
    assert_eq!(status, CallStatus::Succeeded);
    assert!(asked.is_empty(), "the grant applies to the same server");

    // The same server name, now launched through another program.
    let digest = || {
        engine
            .ctx
            .tool_registry()
            .get("everything.echo")
            .and_then(|t| t.server_launch_digest())
    };
    let before = digest();
    let log = home.path().join("tee.log");
    let teed = match everything_teed("everything", &log).transport {
        engine::mcp::config::McpTransport::Stdio { args, .. } => args,
        other => panic!("{other:?}"),
    };
    std::fs::write(paths.config_dir.join("mcp.json"), mcp_json(teed)).unwrap();
    engine.reload_config();
    assert!(
        eventually(30, || digest().is_some_and(|d| Some(d) != before)).await,
        "the server restarts with its new launch"
    );
    ready(&engine).await;
    let (status, asked) = echo(&engine, Answer::Deny).await;
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(asked.len(), 1, "the launch changed: it asks again");
    assert_eq!(
        asked[0].stale_grants,
        ["You allowed everything.echo in this conversation when server everything was launched differently; its command, arguments or URL have changed since"]
    );
}
