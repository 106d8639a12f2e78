//! The engine's MCP hub with server-everything: status, the registry and the gate, crashes
//! and restarts, config reloads, and no process left behind.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::calls::CallStatus;
use engine::engine::EngineOptions;
use engine::events::EngineEvent;
use engine::gate::{self, Asker, Caller, Subject};
use engine::mcp::ServerStatus;
use engine::parser::ToolCall;
use engine::paths::AppPaths;
use engine::permissions::Answer;
use engine::Engine;
use indexmap::IndexMap;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

const WAIT: Duration = Duration::from_secs(30);

struct Opened {
    engine: Engine,
    events: Arc<Mutex<Vec<EngineEvent>>>,
    home: tempfile::TempDir,
}

impl Opened {
    fn mcp_json(&self) -> std::path::PathBuf {
        self.home.path().join("config/mcp.json")
    }

    fn statuses(&self, server: &str) -> Vec<ServerStatus> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                EngineEvent::McpServerStatus { server: s, status } if s == server => {
                    Some(status.clone())
                }
                _ => None,
            })
            .collect()
    }
}

fn servers_json(servers: serde_json::Value) -> String {
    serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap()
}

fn everything_entry() -> serde_json::Value {
    json!({"command": "node", "args": [everything_js(), "stdio"]})
}

/// An engine over a fresh home whose mcp.json is `mcp_json`.
fn open(mcp_json: &str) -> Opened {
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::resolve(Some(home.path())).unwrap();
    paths.prepare().unwrap();
    std::fs::write(paths.config_dir.join("mcp.json"), mcp_json).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |e: EngineEvent| events.lock().unwrap().push(e)
    };
    let engine = Engine::open_with(
        paths,
        Arc::new(sink),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap();
    Opened {
        engine,
        events,
        home,
    }
}

async fn ready(o: &Opened, name: &str) -> u32 {
    match o.engine.mcp().wait_settled(name, WAIT).await.unwrap() {
        ServerStatus::Ready { tool_count } => tool_count,
        other => panic!("{name} is not ready: {other:?}"),
    }
}

fn call(name: &str, params: &[(&str, &str)]) -> ToolCall {
    ToolCall::new(
        name,
        params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<IndexMap<_, _>>(),
    )
}

/// Run `c` through the gate as a direct call, answering the permission prompt with `answer`
/// and recording what it was asked.
async fn through_gate(
    o: &Opened,
    c: &ToolCall,
    answer: Answer,
    cancel: &CancellationToken,
) -> (
    gate::CallOutcome,
    Vec<engine::permissions::PermissionRequest>,
) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let sink = engine::events::discard();
    let caller = Caller::direct(&o.engine.ctx, &sink, "conv-mcp", cancel, false, None);
    let outcome = gate::run(
        &caller,
        Asker::Now(Box::new(move |r| {
            seen.lock().unwrap().push(r.clone());
            answer
        })),
        c.id.clone(),
        Subject::Parsed(c),
    )
    .await;
    let asked = asked.lock().unwrap().clone();
    (outcome, asked)
}

/// Opening the engine never waits for a server; it becomes ready in the background, its tools
/// join the registry as SERVER.TOOL and run through the gate, with the dialog by default.
#[tokio::test]
async fn servers_start_in_the_background_and_their_tools_go_through_the_gate() {
    let o = open(&servers_json(json!({
        "everything": everything_entry(),
        "off": {"command": "node", "disabled": true},
    })));
    let first = o.engine.mcp().servers();
    assert_eq!(first[0].status, ServerStatus::Starting, "open did not wait");
    assert_eq!(first[1].status, ServerStatus::Disabled);

    let count = ready(&o, "everything").await;
    assert!(count >= 10, "{count}");
    assert!(
        eventually(5, || matches!(
            o.statuses("everything").last(),
            Some(ServerStatus::Ready { .. })
        ))
        .await,
        "every change is an event"
    );
    assert_eq!(
        o.statuses("everything").first(),
        Some(&ServerStatus::Starting)
    );
    let view = o.engine.mcp().server("everything").unwrap();
    assert_eq!(view.command_path, Some(which::which("node").unwrap()));
    assert!(view.pid.is_some());

    let tools = o.engine.mcp().tools("everything").unwrap();
    let image = tools
        .iter()
        .find(|t| t.name == "everything.get-tiny-image")
        .unwrap();
    assert_eq!(image.read_only_hint, Some(true));
    assert!(image
        .instructions
        .starts_with("<tool name=\"everything.get-tiny-image\">"));
    let registry = o.engine.ctx.tool_registry();
    assert!(registry.get("everything.echo").is_some());

    // Confirm by default, even for a read-only tool: the dialog shows the arguments.
    let c = call("everything.echo", &[("message", "hello")]);
    let (outcome, asked) = through_gate(&o, &c, Answer::Approve, &CancellationToken::new()).await;
    assert_eq!(
        outcome.status,
        CallStatus::Succeeded,
        "{:?}",
        outcome.result
    );
    assert_eq!(outcome.result.data, "Echo: hello");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].params["message"], "hello");
    assert_eq!(asked[0].request.as_ref().unwrap()["tool"], "echo");

    let c = call("everything.get-tiny-image", &[]);
    let (outcome, _) = through_gate(&o, &c, Answer::Approve, &CancellationToken::new()).await;
    assert_eq!(outcome.status, CallStatus::Succeeded);
    // The image is stored as an artifact of the conversation; the model gets one line.
    assert_eq!(outcome.attachments.len(), 1, "{:?}", outcome.result);
    let image = &outcome.attachments[0];
    assert_eq!(image.mime, "image/png");
    assert!(
        outcome.result.attachments.is_empty(),
        "no bytes for the model"
    );
    assert!(
        outcome.result.data.contains(&image.artifact_id),
        "{}",
        outcome.result.data
    );
    let (stored, bytes) = o
        .engine
        .ctx
        .artifact_store()
        .bytes("conv-mcp", &image.artifact_id)
        .unwrap();
    assert_eq!(stored.content_type, "image/png");
    assert!(
        bytes.starts_with(b"\x89PNG"),
        "the server's PNG bytes are kept"
    );

    // An embedded text resource is a text artifact of its own, titled by its URI; the model
    // gets its line (URI, MIME type, size, artifact id) and, as it is short, its text.
    let c = call(
        "everything.get-resource-reference",
        &[("resourceType", "Text"), ("resourceId", "3")],
    );
    let (outcome, _) = through_gate(&o, &c, Answer::Approve, &CancellationToken::new()).await;
    assert_eq!(
        outcome.status,
        CallStatus::Succeeded,
        "{:?}",
        outcome.result
    );
    assert_eq!(outcome.attachments.len(), 1, "{:?}", outcome.result);
    let resource = &outcome.attachments[0];
    assert!(resource.text && resource.artifact_id.starts_with("resource_"));
    assert_eq!(resource.title, "demo://resource/dynamic/text/3");
    let (stored, text) = o
        .engine
        .ctx
        .artifact_store()
        .content("conv-mcp", &resource.artifact_id, None)
        .unwrap();
    assert_eq!(stored.content_type, resource.mime);
    let line = format!(
        "[resource demo://resource/dynamic/text/3, {}, {} B, stored as artifact {}]\n{text}",
        resource.mime, resource.size_bytes, resource.artifact_id
    );
    assert!(
        outcome.result.data.contains(&line),
        "{}",
        outcome.result.data
    );

    // A denial never reaches the server.
    let c = call("everything.echo", &[("message", "no")]);
    let (outcome, _) = through_gate(&o, &c, Answer::Deny, &CancellationToken::new()).await;
    assert_eq!(outcome.status, CallStatus::Denied);

    // Parameters the schema rejects come back before the call.
    let c = call("everything.get-sum", &[("a", "x"), ("b", "1")]);
    let (outcome, asked) = through_gate(&o, &c, Answer::Approve, &CancellationToken::new()).await;
    assert_eq!(outcome.status, CallStatus::Failed);
    assert!(asked.is_empty());
}

/// `permission` in mcp.json and an agent's `SERVER.*` entry.
#[tokio::test]
async fn config_and_agent_permissions_apply_to_server_tools() {
    let mut entry = everything_entry();
    entry["permission"] = json!("auto");
    entry["permissions"] = json!({"get-env": "confirm"});
    let o = open(&servers_json(json!({ "everything": entry })));
    ready(&o, "everything").await;
    let c = call("everything.echo", &[("message", "auto")]);
    let (outcome, asked) = through_gate(&o, &c, Answer::Deny, &CancellationToken::new()).await;
    assert_eq!(outcome.status, CallStatus::Succeeded);
    assert!(asked.is_empty(), "auto: not asked");
    let c = call("everything.get-env", &[]);
    let (outcome, asked) = through_gate(&o, &c, Answer::Deny, &CancellationToken::new()).await;
    assert_eq!(outcome.status, CallStatus::Denied);
    assert_eq!(asked.len(), 1);

    // An agent listing `everything.*` may call every tool of the server (its setting wins);
    // the config check accepts tools of a configured server even when it is not loaded.
    std::fs::write(
        o.home.path().join("config/agents/mcp_user.md"),
        "---\nname: mcp_user\ntools:\n  everything.*: confirm\n  later.some_tool: auto\n---\nUse the tools.\n",
    )
    .unwrap();
    let mut later =
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(o.mcp_json()).unwrap())
            .unwrap();
    later["mcpServers"]["later"] = json!({"command": "node", "disabled": true});
    std::fs::write(o.mcp_json(), later.to_string()).unwrap();
    o.engine.reload_config();
    let problems = o.engine.ctx.config_problems();
    assert!(problems.is_empty(), "{problems:?}");
    let agent = o
        .engine
        .ctx
        .config()
        .agents
        .iter()
        .find(|a| a.name == "mcp_user")
        .unwrap()
        .clone();
    let cancel = CancellationToken::new();
    let sink = engine::events::discard();
    let chain = vec!["mcp_user".to_string()];
    let caller = Caller {
        agent: Some(&agent),
        agent_chain: &chain,
        ..Caller::direct(&o.engine.ctx, &sink, "conv-agent", &cancel, false, None)
    };
    let asked = Arc::new(Mutex::new(0));
    let run = |name: &'static str, params: &'static [(&'static str, &'static str)]| {
        let asked = asked.clone();
        let c = call(name, params);
        let caller = &caller;
        async move {
            gate::run(
                caller,
                Asker::Now(Box::new(move |_| {
                    *asked.lock().unwrap() += 1;
                    Answer::Approve
                })),
                c.id.clone(),
                Subject::Parsed(&c),
            )
            .await
        }
    };
    let echo = run("everything.echo", &[("message", "x")]).await;
    assert_eq!(echo.status, CallStatus::Succeeded, "{:?}", echo.result);
    assert_eq!(
        *asked.lock().unwrap(),
        1,
        "the agent's confirm wins over the server's auto"
    );
    let other = run("web_search", &[("query", "x")]).await;
    assert_eq!(
        other.status,
        CallStatus::Denied,
        "not listed: {:?}",
        other.result
    );
}

/// A crashed server: its call in flight fails clearly, the status says failed with the end of
/// its stderr, and a restart brings it back.
#[tokio::test]
async fn a_crashed_server_fails_clearly_and_restart_brings_it_back() {
    let o = open(&servers_json(json!({ "everything": everything_entry() })));
    ready(&o, "everything").await;
    let pid = o.engine.mcp().server("everything").unwrap().pid.unwrap();

    let c = call(
        "everything.trigger-long-running-operation",
        &[("duration", "600"), ("steps", "600")],
    );
    let never = CancellationToken::new();
    let in_flight = through_gate(&o, &c, Answer::Approve, &never);
    let killer = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
    };
    let ((outcome, _), ()) = tokio::join!(in_flight, killer);
    assert_eq!(outcome.status, CallStatus::Failed);
    let error = outcome.result.error.unwrap();
    assert!(
        error.contains("stopped while the call was running"),
        "{error}"
    );

    assert!(
        eventually(20, || o
            .statuses("everything")
            .iter()
            .any(|s| matches!(s, ServerStatus::Failed { .. })))
        .await
    );
    let failed = o
        .statuses("everything")
        .into_iter()
        .find(|s| matches!(s, ServerStatus::Failed { .. }))
        .unwrap();
    let ServerStatus::Failed {
        reason,
        stderr_tail,
    } = failed
    else {
        unreachable!()
    };
    assert!(reason.contains("the server stopped"), "{reason}");
    assert!(
        stderr_tail
            .iter()
            .any(|l| l.contains("Starting default (STDIO) server")),
        "{stderr_tail:?}"
    );

    o.engine.mcp().restart("everything").unwrap();
    ready(&o, "everything").await;
    let new_pid = o.engine.mcp().server("everything").unwrap().pid.unwrap();
    assert_ne!(new_pid, pid);
    let c = call("everything.echo", &[("message", "back")]);
    let (outcome, _) = through_gate(&o, &c, Answer::Approve, &CancellationToken::new()).await;
    assert_eq!(outcome.result.data, "Echo: back");
}

/// Stopping a run while an MCP tool runs: the call ends as stopped at once and the server
/// receives notifications/cancelled.
#[tokio::test]
async fn stopping_a_running_call_cancels_it_on_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("to-server.jsonl");
    let teed = everything_teed("everything", &log);
    let engine::mcp::McpTransport::Stdio { command, args, .. } = &teed.transport else {
        unreachable!()
    };
    let o = open(&servers_json(json!({
        "everything": {"command": command, "args": args, "permission": "auto"}
    })));
    ready(&o, "everything").await;
    let cancel = CancellationToken::new();
    let c = call(
        "everything.trigger-long-running-operation",
        &[("duration", "600"), ("steps", "600")],
    );
    let running = through_gate(&o, &c, Answer::Approve, &cancel);
    let stopper = async {
        assert!(
            eventually(10, || std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("\"tools/call\""))
            .await
        );
        cancel.cancel();
    };
    let ((outcome, _), ()) = tokio::join!(running, stopper);
    assert_eq!(outcome.status, CallStatus::Stopped);
    assert!(
        eventually(10, || std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("notifications/cancelled"))
        .await,
        "the server never heard of the stop"
    );
}

/// A server's progress notifications reach the app as `ToolProgress` events of the running
/// call (same call id as its `ToolStart`), in order, before its `ToolComplete`.
#[tokio::test]
async fn a_calls_progress_reaches_its_card_as_events() {
    let o = open(&servers_json(json!({
        "everything": {"command": "node", "args": [everything_js(), "stdio"], "permission": "auto"}
    })));
    ready(&o, "everything").await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        move |e: EngineEvent| seen.lock().unwrap().push(e)
    };
    let cancel = CancellationToken::new();
    let caller = Caller::direct(&o.engine.ctx, &sink, "conv-mcp", &cancel, false, None);
    let c = call(
        "everything.trigger-long-running-operation",
        &[("duration", "1"), ("steps", "4")],
    );
    let outcome = gate::run(
        &caller,
        Asker::Now(Box::new(|_| Answer::Deny)),
        c.id.clone(),
        Subject::Parsed(&c),
    )
    .await;
    assert_eq!(
        outcome.status,
        CallStatus::Succeeded,
        "{:?}",
        outcome.result
    );
    let events = seen.lock().unwrap().clone();
    let started = events
        .iter()
        .find_map(|e| match e {
            EngineEvent::ToolStart { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .expect("the call started");
    let progress: Vec<(f64, Option<f64>)> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::ToolProgress {
                call_id,
                progress,
                total,
                ..
            } => {
                assert_eq!(call_id, &started, "progress names the running call");
                Some((*progress, *total))
            }
            _ => None,
        })
        .collect();
    // Steps come every 250 ms. rmcp handles each notification on its own task, so the last
    // one, sent right before the result, can lose the race with it (the card then shows the
    // result, which is the end anyway): the earlier ones all arrive, in order.
    let all = [1.0, 2.0, 3.0, 4.0].map(|p| (p, Some(4.0)));
    assert!(
        progress.len() >= 3 && progress[..] == all[..progress.len()],
        "every step reported, in order: {progress:?}"
    );
    let last_progress = events
        .iter()
        .rposition(|e| matches!(e, EngineEvent::ToolProgress { .. }))
        .unwrap();
    let completed = events
        .iter()
        .position(|e| matches!(e, EngineEvent::ToolComplete { .. }))
        .unwrap();
    assert!(last_progress < completed, "progress comes before the end");
}

/// A broken mcp.json is a located error and the running servers keep running; a fixed file
/// starts new servers and stops removed ones.
#[tokio::test]
async fn a_broken_mcp_json_keeps_the_last_good_servers() {
    let o = open(&servers_json(json!({ "everything": everything_entry() })));
    ready(&o, "everything").await;
    let pid = o.engine.mcp().server("everything").unwrap().pid;

    std::fs::write(
        o.mcp_json(),
        "{\n  \"mcpServers\": {\n    \"everything\": {,}\n  }\n}\n",
    )
    .unwrap();
    let status = o.engine.reload_config();
    let problem = status
        .config_errors
        .iter()
        .find(|e| e.file == o.mcp_json())
        .expect("mcp.json's error is reported");
    assert_eq!(problem.line, Some(3), "{problem:?}");
    let view = o.engine.mcp().server("everything").unwrap();
    assert!(
        matches!(view.status, ServerStatus::Ready { .. }),
        "{view:?}"
    );
    assert_eq!(view.pid, pid, "not restarted");
    assert!(o
        .engine
        .ctx
        .tool_registry()
        .get("everything.echo")
        .is_some());

    // Fixed: a renamed server starts, the old one stops.
    std::fs::write(
        o.mcp_json(),
        servers_json(json!({ "second": everything_entry() })),
    )
    .unwrap();
    o.engine.reload_config();
    ready(&o, "second").await;
    assert!(o.engine.mcp().server("everything").is_none());
    let registry = o.engine.ctx.tool_registry();
    assert!(registry.get("second.echo").is_some());
    assert!(registry.get("everything.echo").is_none());
    let old = pid.unwrap();
    assert!(
        eventually(10, || processes_in_group(old).is_empty()).await,
        "the removed server's processes are gone"
    );
}

/// Every child (and what it started) is ended when the engine is dropped.
#[tokio::test]
async fn no_process_outlives_the_engine() {
    // One server is a wrapper whose extra process does not read stdin (like a helper a server
    // starts): only ending the whole process group ends it.
    let wrapped = format!(
        "sleep 300 & exec node '{}' stdio",
        everything_js().display()
    );
    let o = open(&servers_json(json!({
        "one": everything_entry(),
        "wrapped": {"command": "sh", "args": ["-c", wrapped]},
    })));
    ready(&o, "one").await;
    ready(&o, "wrapped").await;
    let groups: Vec<u32> = o
        .engine
        .mcp()
        .servers()
        .iter()
        .map(|s| s.pid.unwrap())
        .collect();
    assert_eq!(processes_in_group(groups[1]).len(), 2, "node and its sleep");
    drop(o);
    let left = || groups.iter().flat_map(|g| processes_in_group(*g)).count();
    assert!(
        eventually(10, || left() == 0).await,
        "{} processes left",
        left()
    );
}

/// The processes whose command line holds `token` (Linux: /proc).
fn processes_with_arg(token: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            cmdline
                .split(|b| *b == 0)
                .any(|arg| arg == token.as_bytes())
                .then_some(pid)
        })
        .collect()
}

/// [`engine::mcp::hub::McpHub::shutdown`], what the app's exit event and the CLI's signals
/// call while the engine is still referenced (no drop runs before the process exits), ends
/// every server's process group: a ready one with the extra process it started, and one still
/// starting (it never answers `initialize`).
#[tokio::test]
async fn shutdown_ends_every_server_while_the_engine_is_still_held() {
    let wrapped = format!(
        "sleep 300 & exec node '{}' stdio",
        everything_js().display()
    );
    // A unique argument tells this test's silent server from other tests' processes.
    let marker = "3001.25";
    let o = open(&servers_json(json!({
        "wrapped": {"command": "sh", "args": ["-c", wrapped]},
        "silent": {"command": "sh", "args": ["-c", format!("sleep 300 & exec sleep {marker}")]},
    })));
    ready(&o, "wrapped").await;
    let ready_group = o.engine.mcp().server("wrapped").unwrap().pid.unwrap();
    assert!(
        eventually(10, || !processes_with_arg(marker).is_empty()).await,
        "the silent server started"
    );
    assert_eq!(
        o.engine.mcp().server("silent").unwrap().status,
        ServerStatus::Starting
    );
    let silent_group = processes_with_arg(marker)[0];
    assert_eq!(
        processes_in_group(ready_group).len(),
        2,
        "node and its sleep"
    );
    assert_eq!(processes_in_group(silent_group).len(), 2, "two sleeps");

    o.engine.mcp().shutdown(Duration::from_secs(2));
    let left = || processes_in_group(ready_group).len() + processes_in_group(silent_group).len();
    assert!(
        eventually(10, || left() == 0).await,
        "{} processes left",
        left()
    );
    assert!(o.engine.mcp().servers().is_empty());
    drop(o);
}

/// `notifications/tools/list_changed` refreshes the server's tools in the registry.
#[tokio::test]
async fn a_tool_list_change_refreshes_the_registry() {
    let script = test_servers_dir().join("late-tool.mjs");
    everything_js(); // the same install provides the SDK the script uses
    let o = open(&servers_json(json!({
        "late": {"command": "node", "args": [script, "1500"]}
    })));
    assert_eq!(ready(&o, "late").await, 1);
    assert!(o.engine.ctx.tool_registry().get("late.first").is_some());
    assert!(
        eventually(20, || o
            .engine
            .ctx
            .tool_registry()
            .get("late.second")
            .is_some())
        .await,
        "the added tool never reached the registry"
    );
    assert_eq!(
        o.engine.mcp().server("late").unwrap().status,
        ServerStatus::Ready { tool_count: 2 }
    );
}

/// A 2026-07-28 server's tool list change comes on a `subscriptions/listen` stream (no
/// notification outside a request any more): it refreshes the registry too.
#[tokio::test]
async fn a_2026_07_28_servers_tool_list_change_refreshes_the_registry() {
    let script = test_servers_dir().join("modern-server.mjs");
    let o = open(&servers_json(json!({
        "modern": {"command": "node", "args": [script, "stdio"], "env": {"MODERN_LATE_TOOL_MS": "1500"}}
    })));
    assert_eq!(ready(&o, "modern").await, 2);
    assert_eq!(
        o.engine
            .mcp()
            .server("modern")
            .unwrap()
            .protocol_version
            .as_deref(),
        Some("2026-07-28")
    );
    assert!(
        eventually(20, || o
            .engine
            .ctx
            .tool_registry()
            .get("modern.later")
            .is_some())
        .await,
        "the added tool never reached the registry"
    );
    assert_eq!(
        o.engine.mcp().server("modern").unwrap().status,
        ServerStatus::Ready { tool_count: 3 }
    );
}

/// An HTTP tool named like a server's tool (an imported `operationId` such as
/// `everything.echo`) never shadows it silently: neither is offered, and the clash is a
/// config problem at the tool file's `name:` line.
#[tokio::test]
async fn a_tool_named_like_a_server_tool_is_a_located_clash() {
    let o = open(&servers_json(json!({ "everything": everything_entry() })));
    let file = o.home.path().join("config/tools/everything.echo.md");
    std::fs::write(
        &file,
        "---\n# imported\nname: everything.echo\nendpoint: http://127.0.0.1:9/echo\n---\n",
    )
    .unwrap();
    o.engine.reload_config();
    ready(&o, "everything").await;
    let registry = o.engine.ctx.tool_registry();
    assert!(
        registry.get("everything.echo").is_none(),
        "neither is offered"
    );
    assert!(
        registry.get("everything.get-tiny-image").is_some(),
        "the others are"
    );
    let problems = o.engine.ctx.config_problems();
    let clash = problems
        .iter()
        .find(|p| p.file == file)
        .unwrap_or_else(|| panic!("no problem for the file: {problems:?}"));
    assert_eq!(
        (clash.line, clash.field.as_deref()),
        (Some(3), Some("name"))
    );
    assert!(
        clash
            .message
            .contains("also a tool of the MCP server `everything`"),
        "{}",
        clash.message
    );
    let c = call("everything.echo", &[("message", "x")]);
    let (outcome, _) = through_gate(&o, &c, Answer::Approve, &CancellationToken::new()).await;
    assert_ne!(
        outcome.status,
        CallStatus::Succeeded,
        "{:?}",
        outcome.result
    );
}

/// A command that does not exist, or is a folder, fails once with a reason that says what to
/// do and is not started again until its entry changes (it was retried forever, every 1, 2,
/// 4 … 60 s, showing "starting"); Restart tries again.
#[tokio::test]
async fn a_command_that_cannot_run_fails_once_and_is_not_retried() {
    let folder = tempfile::tempdir().unwrap();
    let o = open(&servers_json(json!({
        "misspelt": {"command": "artifactflow-no-such-server-xyz"},
        "folder": {"command": folder.path()},
    })));
    let failed = |server: &str| {
        o.statuses(server)
            .into_iter()
            .filter_map(|s| match s {
                ServerStatus::Failed { reason, .. } => Some(reason),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert!(
        eventually(20, || !failed("misspelt").is_empty()
            && !failed("folder").is_empty())
        .await
    );
    let misspelt = &failed("misspelt")[0];
    assert!(
        misspelt.contains("`artifactflow-no-such-server-xyz` was not found")
            && misspelt.contains("not retried until its entry in mcp.json changes"),
        "{misspelt}"
    );
    let folder_reason = &failed("folder")[0];
    assert!(
        folder_reason.contains("it is a folder, not a program")
            && folder_reason.contains("not retried"),
        "{folder_reason}"
    );
    // The old supervisor started again after 1 s, then 2 s: nothing more may happen in 3.5 s.
    let starts = |server: &str| {
        o.statuses(server)
            .iter()
            .filter(|s| matches!(s, ServerStatus::Starting))
            .count()
    };
    let (misspelt_starts, folder_starts) = (starts("misspelt"), starts("folder"));
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert_eq!(failed("misspelt").len(), 1, "{:?}", o.statuses("misspelt"));
    assert_eq!(failed("folder").len(), 1, "{:?}", o.statuses("folder"));
    assert_eq!(starts("misspelt"), misspelt_starts);
    assert_eq!(starts("folder"), folder_starts);
    assert!(matches!(
        o.engine.mcp().server("misspelt").unwrap().status,
        ServerStatus::Failed { .. }
    ));

    // Restart tries again (and fails again, once).
    o.engine.mcp().restart("misspelt").unwrap();
    assert!(eventually(20, || failed("misspelt").len() == 2).await);
}
