//! Overhead of a tool call through our MCP client over stdio, beyond the server's own time:
//! the same `echo` call to server-everything (a) through `McpClient::call_tool` and (b) as raw
//! JSON-RPC lines written to and read from a second copy of the server's pipes. (a) − (b) is
//! what the client adds (goal: under 1 ms). Prints numbers; not a pass/fail test.
//!
//! It also measures opening the engine (what the app's start waits for) with no MCP server
//! configured and with five: servers start in the background, so five should cost nothing
//! at start (goal: no slower than none); the time until all five are ready is printed too.
//!
//! Run: `cargo bench -p artifactflow-engine --bench mcp` (needs `scripts/setup.sh --test`).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use engine::mcp::client::{connect, ConnectOptions};
use engine::mcp::config::{McpServerConfig, McpTransport};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const WARMUP: usize = 200;
const CALLS: usize = 2000;

fn everything_js() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "run scripts/setup.sh --test first ({})",
        path.display()
    );
    path.display().to_string()
}

fn stats(name: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    let median = times[times.len() / 2];
    let p95 = times[times.len() * 95 / 100];
    println!(
        "{name:<28} mean {mean:>10.1?}  median {median:>10.1?}  p95 {p95:>10.1?}  ({} calls)",
        times.len()
    );
    median
}

fn through_client() -> Duration {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let cfg = McpServerConfig {
            name: "bench".into(),
            transport: McpTransport::Stdio {
                command: "node".into(),
                args: vec![everything_js(), "stdio".into()],
                env: Default::default(),
                cwd: None,
            },
            disabled: false,
            permission: engine::tools::Permission::Auto,
            permissions: Default::default(),
            timeout_secs: 60,
            oauth: None,
        };
        let client = connect(&cfg, &ConnectOptions::default()).await.unwrap();
        let never = CancellationToken::new();
        let args = json!({"message": "x"}).as_object().unwrap().clone();
        let mut times = Vec::with_capacity(CALLS);
        for i in 0..WARMUP + CALLS {
            let start = Instant::now();
            let r = client
                .call_tool("echo", args.clone(), &never, None)
                .await
                .unwrap();
            let r = engine::mcp::tool::convert_result("bench.echo", r);
            if i >= WARMUP {
                times.push(start.elapsed());
            }
            assert_eq!(r.data, "Echo: x");
        }
        stats("through McpClient", times)
    })
}

fn raw_pipe() -> Duration {
    let mut child = Command::new("node")
        .args([everything_js(), "stdio".into()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        let mut line = v.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let mut read_response = |id: u64| loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "server exited");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == id {
            return v;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}}),
    );
    read_response(0);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..WARMUP + CALLS {
        let id = i as u64 + 1;
        let start = Instant::now();
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "x"}}}));
        let r = read_response(id);
        if i >= WARMUP {
            times.push(start.elapsed());
        }
        assert_eq!(r["result"]["content"][0]["text"], "Echo: x");
    }
    let _ = child.kill();
    let _ = child.wait();
    stats("raw JSON-RPC over the pipe", times)
}

/// Median time to open the engine over a fresh home with `servers` copies of server-everything
/// configured, and (with servers) the median time until all of them are ready.
fn engine_open(servers: usize) -> (Duration, Option<Duration>) {
    const OPENS: usize = 7;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut opens = Vec::with_capacity(OPENS);
    let mut readies = Vec::with_capacity(OPENS);
    for _ in 0..OPENS {
        let home = tempfile::tempdir().unwrap();
        let paths = engine::paths::AppPaths::resolve(Some(home.path())).unwrap();
        paths.prepare().unwrap();
        let entries: serde_json::Map<String, Value> = (0..servers)
            .map(|i| {
                (
                    format!("s{i}"),
                    json!({"command": "node", "args": [everything_js(), "stdio"]}),
                )
            })
            .collect();
        std::fs::write(
            paths.config_dir.join("mcp.json"),
            json!({ "mcpServers": entries }).to_string(),
        )
        .unwrap();
        let _guard = rt.enter();
        let start = Instant::now();
        let engine = engine::Engine::open_with(
            paths,
            std::sync::Arc::new(engine::events::discard()),
            engine::engine::EngineOptions {
                watch: false,
                ..Default::default()
            },
        )
        .unwrap();
        opens.push(start.elapsed());
        if servers > 0 {
            rt.block_on(async {
                for i in 0..servers {
                    let status = engine
                        .mcp()
                        .wait_settled(&format!("s{i}"), Duration::from_secs(60))
                        .await
                        .unwrap();
                    assert!(
                        matches!(status, engine::mcp::ServerStatus::Ready { .. }),
                        "{status:?}"
                    );
                }
            });
            readies.push(start.elapsed());
        }
        drop(engine);
    }
    let label = format!("open, {servers} servers");
    let open = stats(&label, opens);
    let ready = (!readies.is_empty()).then(|| stats(&format!("all {servers} ready"), readies));
    (open, ready)
}

fn main() {
    // `cargo test --benches` runs bench targets with --bench absent; keep that quick.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let raw = raw_pipe();
    let ours = through_client();
    let overhead = ours.saturating_sub(raw);
    println!("client overhead (median difference): {overhead:.1?} (goal < 1 ms)");
    let (none, _) = engine_open(0);
    let (five, ready) = engine_open(5);
    println!(
        "engine open with 5 servers vs none: {five:.1?} vs {none:.1?} (goal: no slower); all 5 ready after {:.1?}",
        ready.unwrap_or_default()
    );
}
