//! Finding and starting server-everything.

use std::path::{Path, PathBuf};
use std::time::Duration;

use engine::mcp::config::{McpServerConfig, McpTransport, DEFAULT_TIMEOUT_SECS};
use engine::tools::Permission;
use indexmap::IndexMap;

/// `tests/mcp` at the repository root.
pub fn test_servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp")
}

/// server-everything's entry point; fails (never skips) when it is not installed.
pub fn everything_js() -> PathBuf {
    let path = test_servers_dir()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "server-everything is not installed at {}: run `scripts/setup.sh --test` (or `npm ci --prefix tests/mcp`)",
        path.display()
    );
    path
}

/// This test directory (the tee script).
pub fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

/// A stdio server config.
pub fn stdio(name: &str, command: &str, args: Vec<String>) -> McpServerConfig {
    McpServerConfig {
        name: name.into(),
        transport: McpTransport::Stdio {
            command: command.into(),
            args,
            env: IndexMap::new(),
            cwd: None,
        },
        disabled: false,
        permission: Permission::Confirm,
        permissions: Default::default(),
        timeout_secs: DEFAULT_TIMEOUT_SECS,
        oauth: None,
    }
}

/// server-everything over stdio.
pub fn everything(name: &str) -> McpServerConfig {
    stdio(
        name,
        "node",
        vec![everything_js().display().to_string(), "stdio".into()],
    )
}

/// server-everything over stdio behind the tee script logging what it receives to `log`.
pub fn everything_teed(name: &str, log: &Path) -> McpServerConfig {
    stdio(
        name,
        "node",
        vec![
            here().join("tee.mjs").display().to_string(),
            log.display().to_string(),
            "node".into(),
            everything_js().display().to_string(),
            "stdio".into(),
        ],
    )
}

/// A remote server config.
pub fn http(name: &str, url: &str) -> McpServerConfig {
    McpServerConfig {
        transport: McpTransport::Http {
            url: url.into(),
            headers: IndexMap::new(),
        },
        ..stdio(name, "unused", vec![])
    }
}

/// server-everything in one of its HTTP modes (`streamableHttp`, `sse`) on a free port; killed
/// when dropped.
pub struct HttpServer {
    child: std::process::Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl HttpServer {
    pub async fn start(mode: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("node")
            .arg(everything_js())
            .arg(mode)
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node starts");
        let server = HttpServer { child, port };
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("server-everything ({mode}) did not listen on port {port}");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Poll `f` until it is true (checked every 50 ms, at most `secs` seconds); false if never.
pub async fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..secs * 20 {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    f()
}

/// Processes alive in the process group `pgid` (Linux: from /proc).
pub fn processes_in_group(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold spaces, so split after the last ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

/// Run `call` through the gate as a direct call in `conversation`, its permission approved;
/// the outcome arrives on the returned task.
pub fn start_approved(
    engine: std::sync::Arc<engine::Engine>,
    conversation: &'static str,
    call: engine::parser::ToolCall,
    cancel: tokio_util::sync::CancellationToken,
) -> tokio::task::JoinHandle<engine::gate::CallOutcome> {
    use engine::gate::{self, Asker, Caller, Subject};
    tokio::spawn(async move {
        let caller = Caller::direct(
            &engine.ctx,
            &*engine.events,
            conversation,
            &cancel,
            false,
            None,
        );
        gate::run(
            &caller,
            Asker::Now(Box::new(|_| engine::permissions::Answer::Approve)),
            call.id.clone(),
            Subject::Parsed(&call),
        )
        .await
    })
}
