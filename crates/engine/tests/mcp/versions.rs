//! Protocol versions, per server: a server of the 2026-07-28 generation (the official TypeScript
//! SDK v2, tests/mcp/modern-server.mjs) is spoken to in 2026-07-28 over stdio and HTTP, with
//! its multi round-trip calls answered (the form goes to the user through the app's broker);
//! older servers (server-everything on SDK v1, and a hand-written 2025-06-18 server that
//! answers `server/discover` with an empty result) get the `initialize` handshake and the
//! version they speak; the hub's status list says which version each server speaks.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::calls::CallStatus;
use engine::engine::EngineOptions;
use engine::events::EngineEvent;
use engine::mcp::client::AcceptDefaults;
use engine::mcp::elicitation::ElicitationReply;
use engine::mcp::{connect, ConnectOptions, McpServerConfig, ServerStatus};
use engine::parser::ToolCall;
use engine::paths::AppPaths;
use engine::Engine;
use indexmap::IndexMap;
use rmcp::model::ContentBlock;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::support::*;

fn modern_js() -> String {
    test_servers_dir()
        .join("modern-server.mjs")
        .display()
        .to_string()
}

/// tests/mcp/old-server.mjs logging the methods it gets to `log`, slow to start with `late`.
fn old_server(name: &str, log: &Path, late: bool) -> McpServerConfig {
    let mut args = vec![
        test_servers_dir()
            .join("old-server.mjs")
            .display()
            .to_string(),
        log.display().to_string(),
    ];
    if late {
        args.push("late".into());
    }
    stdio(name, "node", args)
}

fn modern_stdio(name: &str, log: &Path) -> McpServerConfig {
    let mut cfg = stdio(name, "node", vec![modern_js(), "stdio".into()]);
    if let engine::mcp::McpTransport::Stdio { env, .. } = &mut cfg.transport {
        env.insert("MODERN_SERVER_LOG".into(), log.display().to_string());
    }
    cfg
}

/// The modern server over HTTP on a free port of 127.0.0.1; killed when dropped.
struct ModernHttp {
    child: std::process::Child,
    url: String,
}

impl ModernHttp {
    async fn start(dir: &Path, log: &Path) -> Self {
        let port_file = dir.join("port");
        let child = std::process::Command::new("node")
            .arg(modern_js())
            .arg("http")
            .arg(&port_file)
            .env("MODERN_SERVER_LOG", log)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("node starts");
        assert!(
            eventually(30, || port_file.is_file()).await,
            "the modern server did not listen"
        );
        let port = std::fs::read_to_string(&port_file).unwrap();
        ModernHttp {
            child,
            url: format!("http://127.0.0.1:{}/mcp", port.trim()),
        }
    }
}

impl Drop for ModernHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn log_lines(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Over stdio and over HTTP the modern server is spoken to in 2026-07-28: no handshake, the
/// version in every request's metadata (and, over HTTP, in the `MCP-Protocol-Version` header
/// of every POST); a call that asks for a confirmation is answered and sent again with the
/// server's state as given, and the server's answer is the call's result.
#[tokio::test]
async fn a_2026_07_28_server_is_spoken_to_in_2026_07_28_with_its_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let opts = ConnectOptions {
        elicitation: Arc::new(AcceptDefaults),
        ..Default::default()
    };
    let stdio_log = dir.path().join("stdio.log");
    let http_log = dir.path().join("http.log");
    let server = ModernHttp::start(dir.path(), &http_log).await;
    for (cfg, log) in [
        (modern_stdio("modern", &stdio_log), &stdio_log),
        (http("modern-http", &server.url), &http_log),
    ] {
        let client = connect(&cfg, &opts).await.unwrap();
        assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
        assert_eq!(
            client.server_info(),
            Some(("modern-server".into(), "2.4.0".into()))
        );
        let tools = client.list_tools().await.unwrap();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort();
        assert_eq!(names, ["add", "delete_file"]);
        let cancel = CancellationToken::new();
        let sum = client
            .call_tool("add", args(json!({"a": 2, "b": 40})), &cancel, None)
            .await
            .unwrap();
        assert_eq!(text(&sum), "42");
        let deleted = client
            .call_tool(
                "delete_file",
                args(json!({"path": "/tmp/x"})),
                &cancel,
                None,
            )
            .await
            .unwrap();
        assert_eq!(text(&deleted), "deleted /tmp/x", "{deleted:?}");
        client.shutdown().await;

        let lines = log_lines(log);
        // The tool saw the version in the request's metadata.
        assert!(
            lines
                .iter()
                .any(|l| l["tool"] == "add" && l["version"] == "2026-07-28"),
            "{lines:?}"
        );
        // The first round had no answer; the second had the form's answer and the state.
        let rounds: Vec<&Value> = lines
            .iter()
            .filter(|l| l["tool"] == "delete_file")
            .collect();
        assert_eq!(rounds.len(), 2, "{lines:?}");
        assert_eq!(rounds[0]["answer"], Value::Null);
        assert_eq!(rounds[1]["answer"], json!({"confirm": true}));
        assert_eq!(rounds[1]["state"], "pending:/tmp/x");
        if std::ptr::eq(log, &http_log) {
            // Over HTTP: never an `initialize`, and every POST named the version.
            let posts: Vec<&Value> = lines.iter().filter(|l| l.get("method").is_some()).collect();
            assert!(!posts.is_empty());
            assert!(
                posts.iter().all(|l| l["method"] != "initialize"),
                "{posts:?}"
            );
            assert!(
                posts.iter().all(|l| l["header"] == "2026-07-28"),
                "{posts:?}"
            );
        }
    }
}

/// Older servers keep working, each at its own version: server-everything (SDK v1) agrees on
/// 2025-11-25; a server that only speaks 2025-06-18 and answers `server/discover` with an
/// empty result (not an error) still gets the handshake on the same connection, and its tool
/// works.
#[tokio::test]
async fn older_servers_get_the_handshake_and_their_own_version() {
    let dir = tempfile::tempdir().unwrap();
    let opts = ConnectOptions::default();
    let everything = connect(&everything("everything"), &opts).await.unwrap();
    assert_eq!(everything.protocol_version().as_deref(), Some("2025-11-25"));
    let cancel = CancellationToken::new();
    let echoed = everything
        .call_tool("echo", args(json!({"message": "hi"})), &cancel, None)
        .await
        .unwrap();
    assert!(text(&echoed).contains("hi"), "{echoed:?}");
    everything.shutdown().await;

    let log = dir.path().join("old.log");
    let old = connect(&old_server("old", &log, false), &opts)
        .await
        .unwrap();
    assert_eq!(old.protocol_version().as_deref(), Some("2025-06-18"));
    let echoed = old
        .call_tool("echo", args(json!({"text": "still here"})), &cancel, None)
        .await
        .unwrap();
    assert_eq!(text(&echoed), "echo: still here");
    old.shutdown().await;
    let methods = std::fs::read_to_string(&log).unwrap();
    let methods: Vec<&str> = methods.lines().collect();
    assert_eq!(
        &methods[..4],
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ],
        "{methods:?}"
    );
}

/// In the app: the status list says which version each server speaks, and a modern server's
/// confirmation, asked during a call through the gate, reaches the user as a form naming the
/// call; the user's answer goes back in the retried request.
#[tokio::test]
async fn the_app_shows_each_servers_version_and_asks_the_user_a_round_trips_question() {
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::resolve(Some(home.path())).unwrap();
    paths.prepare().unwrap();
    let log = home.path().join("modern.log");
    let mcp_json = json!({"mcpServers": {
        "modern": {"command": "node", "args": [modern_js(), "stdio"], "env": {"MODERN_SERVER_LOG": log}},
        "everything": {"command": "node", "args": [everything_js(), "stdio"]},
    }});
    std::fs::write(paths.config_dir.join("mcp.json"), mcp_json.to_string()).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |e: EngineEvent| {
            if matches!(e, EngineEvent::ElicitationRequest { .. }) {
                let _ = tx.send(e.clone());
            }
            events.lock().unwrap().push(e)
        }
    };
    let engine = Arc::new(
        Engine::open_with(
            paths,
            Arc::new(sink),
            EngineOptions {
                watch: false,
                ..Default::default()
            },
        )
        .unwrap(),
    );
    for server in ["modern", "everything"] {
        let status = engine
            .mcp()
            .wait_settled(server, Duration::from_secs(30))
            .await
            .unwrap();
        assert!(matches!(status, ServerStatus::Ready { .. }), "{status:?}");
    }
    let versions: Vec<(String, Option<String>)> = engine
        .mcp()
        .servers()
        .into_iter()
        .map(|v| (v.name, v.protocol_version))
        .collect();
    assert_eq!(
        versions,
        [
            ("modern".to_string(), Some("2026-07-28".to_string())),
            ("everything".to_string(), Some("2025-11-25".to_string())),
        ]
    );

    let c = ToolCall::new(
        "modern.delete_file",
        IndexMap::from([("path".to_string(), "notes.txt".to_string())]),
    );
    let call_id = c.id.clone();
    let outcome = start_approved(engine.clone(), "conv-versions", c, CancellationToken::new());
    let event = tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("the form arrived within 30 s")
        .unwrap();
    let EngineEvent::ElicitationRequest {
        request_id,
        server,
        message,
        origin,
        ..
    } = event
    else {
        unreachable!()
    };
    assert_eq!(server, "modern");
    assert_eq!(message, "Delete notes.txt?");
    assert_eq!(origin.map(|o| o.call_id), Some(call_id));
    engine
        .elicitations()
        .answer(
            &request_id,
            ElicitationReply::Accept {
                content: args(json!({"confirm": false})),
            },
        )
        .unwrap();
    let outcome = outcome.await.unwrap();
    assert_eq!(
        outcome.status,
        CallStatus::Succeeded,
        "{:?}",
        outcome.result
    );
    assert_eq!(outcome.result.data, "kept notes.txt");
    let lines = log_lines(&log);
    let last = lines
        .iter()
        .rev()
        .find(|l| l["tool"] == "delete_file")
        .unwrap();
    assert_eq!(last["answer"], json!({"confirm": false}));
}

/// A server slow to start (as `npx -y` fetching its package the first time) answers nothing
/// within rmcp's 10 s wait for `server/discover`: the handshake follows on the same
/// connection, the server's late answer to `server/discover` is dropped, and the session
/// works.
#[tokio::test]
async fn a_server_slow_to_start_still_gets_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("late.log");
    let late = old_server("late", &log, true);
    let client = connect(&late, &ConnectOptions::default()).await.unwrap();
    assert_eq!(client.protocol_version().as_deref(), Some("2025-06-18"));
    let echoed = client
        .call_tool(
            "echo",
            args(json!({"text": "late but here"})),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(text(&echoed), "echo: late but here");
    client.shutdown().await;
    let methods = std::fs::read_to_string(&log).unwrap();
    assert!(
        methods.starts_with("server/discover\ninitialize\n"),
        "{methods}"
    );
}
