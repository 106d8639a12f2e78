//! `artifactflow-cli mcp list|tools|call` against the real server-everything (installed in
//! `tests/mcp` by `scripts/setup.sh --test`), started with a minimal PATH as a macOS app is.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn everything_js() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "server-everything is not installed at {}: run `scripts/setup.sh --test` (or `npm ci --prefix tests/mcp`)",
        path.display()
    );
    path
}

fn cli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME").arg("--home").arg(home);
    cmd
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out: Output = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn home_with_everything() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(
        home.path().join("config/mcp.json"),
        serde_json::json!({"mcpServers": {
            "everything": {"command": "node", "args": [everything_js(), "stdio"]},
            "off": {"command": "node", "disabled": true}
        }})
        .to_string(),
    )
    .unwrap();
    home
}

#[test]
fn list_tools_and_call() {
    let home = home_with_everything();
    let (ok, out, err) = run(cli(home.path()).args(["mcp", "list"]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("everything"), "{out}");
    assert!(out.contains("ready ("), "{out}");
    assert!(out.contains("disabled"), "{out}");

    let (ok, out, err) = run(cli(home.path()).args(["mcp", "tools", "everything"]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("everything.echo  [confirm"), "{out}");
    assert!(out.contains("<tool name=\"everything.get-sum\">"), "{out}");

    let (ok, out, err) = run(cli(home.path()).args([
        "mcp",
        "call",
        "everything.echo",
        "message=hello from the cli",
        "--yes",
    ]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("Echo: hello from the cli"), "{out}");

    // An image is stored in the library; the output says where, as the model would see it.
    let (ok, out, err) =
        run(cli(home.path()).args(["mcp", "call", "everything.get-tiny-image", "--yes"]));
    assert!(ok, "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.contains("stored as artifact image_"))
        .unwrap_or_else(|| panic!("no stored-image line in {out}"));
    assert!(line.starts_with("[image/png, "), "{line}");

    // The server asks a question: --accept-defaults answers with the form's defaults; without
    // it and without a terminal, the question is declined.
    let (ok, out, err) = run(cli(home.path()).args([
        "mcp",
        "call",
        "everything.trigger-elicitation-request",
        "--yes",
        "--accept-defaults",
    ]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("Favorite Integer: 42"), "{out}");
    let (ok, out, err) = run(cli(home.path()).args([
        "mcp",
        "call",
        "everything.trigger-elicitation-request",
        "--yes",
    ]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("declined"), "{out}");
    assert!(err.contains("declined: no terminal"), "{err}");

    // Without --yes and without a terminal: not allowed, exit 1.
    let (ok, out, _) = run(cli(home.path()).args(["mcp", "call", "everything.echo", "message=x"]));
    assert!(!ok);
    assert!(out.contains("did not allow"), "{out}");
}

/// Started with a PATH that has no node (a macOS app's), the command is found through the
/// login shell's PATH and the status says so.
#[test]
fn a_minimal_path_is_completed_by_the_login_shell() {
    let home = home_with_everything();
    let node = which_node();
    let shell = home.path().join("login-shell");
    std::fs::write(
        &shell,
        format!(
            "#!/bin/sh\nprintf %s \"{}:/bin\"\n",
            node.parent().unwrap().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let empty = home.path().join("empty-bin");
    std::fs::create_dir(&empty).unwrap();
    let (ok, out, err) = run(cli(home.path())
        .args(["mcp", "list"])
        .env("PATH", &empty)
        .env("SHELL", &shell));
    assert!(ok, "{out}{err}");
    assert!(out.contains("ready ("), "{out}");
    assert!(
        out.contains(&format!(
            "command: {} (found through the login shell's PATH)",
            node.display()
        )),
        "{out}"
    );
}

fn which_node() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("node"))
        .find(|p| p.is_file())
        .expect("node is installed")
}

/// An agent that lists `everything.*` sees the server's tools in its instructions and calls
/// one through the gate in a real run (the scripted model plays the model).
#[tokio::test(flavor = "multi_thread")]
async fn an_agent_uses_a_server_tool_in_a_run() {
    use test_support::{ScriptedModel, Turn};
    const CALL: &str = "<tool_call><name>everything.echo</name><params><message><![CDATA[from the agent]]></message></params></tool_call>";
    let model = ScriptedModel::start(vec![Turn::text(CALL), Turn::text("Done.")]).await;
    let home = home_with_everything();
    std::fs::write(home.path().join("config/models.yaml"), model.models_yaml()).unwrap();
    std::fs::create_dir_all(home.path().join("config/agents")).unwrap();
    std::fs::write(
        home.path().join("config/agents/mcp_agent.md"),
        "---\nname: mcp_agent\nmodel: default\ntools:\n  everything.*: confirm\n---\nUse the server's tools.\n",
    )
    .unwrap();
    let out = tokio::task::spawn_blocking({
        let home = home.path().to_path_buf();
        move || {
            cli(&home)
                .args(["run", "--agent", "mcp_agent", "--yes", "Echo something."])
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("Done."), "{stdout}");
    assert!(stderr.contains("[✓ everything.echo"), "{stderr}");
    let system = model.requests()[0]
        .messages()
        .into_iter()
        .find(|(role, _)| role == "system")
        .map(|(_, text)| text)
        .expect("a system prompt");
    assert!(
        system.contains("<tool name=\"everything.echo\">"),
        "{system}"
    );
    assert!(system.contains("<tool name=\"everything.get-tiny-image\">"));
    // The tool's result went back to the model.
    let second = model.requests()[1].messages();
    assert!(
        second
            .iter()
            .any(|(_, text)| text.contains("Echo: from the agent")),
        "{second:?}"
    );
}

/// The `tee.mjs` script of the engine's MCP tests: runs a stdio server and appends what the
/// client sends it to a log.
fn tee_mjs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/mcp/tee.mjs")
}

/// (process id, parent, process group) of every live (not zombie) process (Linux: /proc).
fn processes() -> Vec<(u32, u32, u32)> {
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
        let number = |i: usize| fields.get(i).and_then(|f| f.parse::<u32>().ok());
        if let (Some(ppid), Some(pgrp)) = (number(1), number(2)) {
            out.push((pid, ppid, pgrp));
        }
    }
    out
}

fn processes_in_group(pgid: u32) -> usize {
    processes().iter().filter(|(_, _, g)| *g == pgid).count()
}

/// Poll `f` every 50 ms for at most `secs` seconds; whether it became true.
fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..secs * 20 {
        if f() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    f()
}

/// A home whose one server, `busy`, is server-everything behind `tee.mjs` (what it receives goes
/// to the returned log) in a wrapper whose extra process (`sleep`) never reads its input, like a
/// helper a server starts.
fn home_with_busy_server() -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let sent = home.path().join("to-server.jsonl");
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    let wrapped = format!(
        "sleep 300 & exec node '{}' '{}' node '{}' stdio",
        tee_mjs().display(),
        sent.display(),
        everything_js().display()
    );
    std::fs::write(
        home.path().join("config/mcp.json"),
        serde_json::json!({"mcpServers": {
            "busy": {"command": "sh", "args": ["-c", wrapped]}
        }})
        .to_string(),
    )
    .unwrap();
    (home, sent)
}

/// Once `child` (the CLI) has a call in flight on the busy server (`sent` logs it), send it
/// `signal`: it exits with `code` and no process of the server's group is left.
fn a_signal_ends_the_busy_server(
    mut child: std::process::Child,
    sent: &Path,
    signal: &str,
    code: i32,
) {
    let cli_pid = child.id();
    assert!(
        eventually(60, || std::fs::read_to_string(sent)
            .unwrap_or_default()
            .contains("tools/call")),
        "the call never reached the server"
    );
    let group = processes()
        .iter()
        .find(|(_, ppid, _)| *ppid == cli_pid)
        .map(|(_, _, pgrp)| *pgrp)
        .expect("the server runs as the CLI's child");
    assert_ne!(group, cli_pid, "the server has a process group of its own");
    assert_eq!(
        processes_in_group(group),
        3,
        "tee, the server and the sleep"
    );

    let killed = std::process::Command::new("kill")
        .args([format!("-{signal}"), cli_pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(
        eventually(30, || child.try_wait().unwrap().is_some()),
        "the CLI did not exit on SIG{signal}"
    );
    let status = child.wait().unwrap();
    let left = eventually(10, || processes_in_group(group) == 0);
    if !left {
        // Not left running by the test either.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{group}")])
            .status();
    }
    assert!(left, "SIG{signal}: processes of the server were left");
    assert_eq!(status.code(), Some(code), "SIG{signal}: {status:?}");
}

/// Ctrl+C (SIGINT) or SIGTERM during `mcp call` ends the CLI with 130 or 143 and every server
/// it started: a busy one (in a long call, not reading its input) and the extra process it
/// started, all in a process group of their own that the terminal's signal does not reach.
#[test]
#[cfg(target_os = "linux")]
fn a_signal_to_the_cli_ends_every_server_it_started() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let (home, sent) = home_with_busy_server();
        let child = cli(home.path())
            .args([
                "mcp",
                "call",
                "busy.trigger-long-running-operation",
                "duration=60",
                "steps=6",
                "--yes",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        a_signal_ends_the_busy_server(child, &sent, signal, code);
    }
}

/// Ctrl+C during a `run` whose agent waits on a busy server stops the run (exit 130), and
/// SIGTERM ends it at once (exit 143); either way the server's whole process group ends.
#[tokio::test(flavor = "multi_thread")]
#[cfg(target_os = "linux")]
async fn a_signal_during_a_run_ends_its_servers() {
    use test_support::{ScriptedModel, Turn};
    const CALL: &str = "<tool_call><name>busy.trigger-long-running-operation</name><params><duration>60</duration><steps>6</steps></params></tool_call>";
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let model = ScriptedModel::start(vec![Turn::text(CALL), Turn::text("Done.")]).await;
        let (home, sent) = home_with_busy_server();
        std::fs::write(home.path().join("config/models.yaml"), model.models_yaml()).unwrap();
        std::fs::create_dir_all(home.path().join("config/agents")).unwrap();
        std::fs::write(
            home.path().join("config/agents/busy_agent.md"),
            "---\nname: busy_agent\nmodel: default\ntools:\n  busy.*: confirm\n---\nUse the server's tools.\n",
        )
        .unwrap();
        let child = cli(home.path())
            .args([
                "run",
                "--agent",
                "busy_agent",
                "--yes",
                "Run the long operation.",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        tokio::task::spawn_blocking(move || {
            a_signal_ends_the_busy_server(child, &sent, signal, code)
        })
        .await
        .unwrap();
    }
}

/// `mcp list` says which protocol version each running server speaks: 2026-07-28 for a server
/// of the SDK v2 (tests/mcp/modern-server.mjs), an older one for server-everything (SDK v1).
#[test]
fn list_shows_each_servers_protocol_version() {
    let home = home_with_everything();
    let modern = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/modern-server.mjs");
    std::fs::write(
        home.path().join("config/mcp.json"),
        serde_json::json!({"mcpServers": {
            "everything": {"command": "node", "args": [everything_js(), "stdio"]},
            "modern": {"command": "node", "args": [modern, "stdio"]}
        }})
        .to_string(),
    )
    .unwrap();
    let (ok, out, err) = run(cli(home.path()).args(["mcp", "list"]));
    assert!(ok, "{out}{err}");
    let block = |name: &str| -> String {
        let start = out
            .find(&format!("{name} "))
            .unwrap_or_else(|| panic!("{out}"));
        out[start..]
            .lines()
            .take_while(|l| l.starts_with(name) || l.starts_with("    "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        block("modern")
            .lines()
            .any(|l| l.trim() == "protocol: MCP 2026-07-28"),
        "{out}"
    );
    assert!(
        block("everything").contains(
            "protocol: MCP 2025-11-25 (an older version: the server does not know 2026-07-28)"
        ),
        "{out}"
    );
    let (ok, out, err) = run(cli(home.path()).args(["mcp", "list", "--json"]));
    assert!(ok, "{out}{err}");
    let servers: serde_json::Value = serde_json::from_str(&out).unwrap();
    let versions: Vec<(&str, &str)> = servers
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["protocol_version"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        versions,
        [("everything", "2025-11-25"), ("modern", "2026-07-28")]
    );
}

/// A call whose tool has an interactive view (MCP Apps; tests/mcp/apps-server.mjs): the run's
/// line says it has one and where to see it, and `conversations show` prints it with the call
/// (`--json`: its server and URI).
#[tokio::test(flavor = "multi_thread")]
async fn a_call_with_a_view_says_so() {
    use test_support::{ScriptedModel, Turn};
    const CALL: &str = "<tool_call><name>apps.show_counter</name><params></params></tool_call>";
    let model = ScriptedModel::start(vec![Turn::text(CALL), Turn::text("Done.")]).await;
    let home = home_with_everything();
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/apps-server.mjs");
    std::fs::write(
        home.path().join("config/mcp.json"),
        serde_json::json!({"mcpServers": {"apps": {"command": "node", "args": [apps]}}})
            .to_string(),
    )
    .unwrap();
    std::fs::write(home.path().join("config/models.yaml"), model.models_yaml()).unwrap();
    std::fs::create_dir_all(home.path().join("config/agents")).unwrap();
    std::fs::write(
        home.path().join("config/agents/apps_agent.md"),
        "---\nname: apps_agent\nmodel: default\ntools:\n  apps.*: auto\n---\nShow things.\n",
    )
    .unwrap();
    let out = tokio::task::spawn_blocking({
        let home = home.path().to_path_buf();
        move || {
            cli(&home)
                .args(["run", "--agent", "apps_agent", "--yes", "Show the counter."])
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("has a view (ui://counter/view): open the conversation in the app"),
        "{stderr}"
    );
    // `mcp tools` says which tools have a view and which only views may call; a direct call
    // says its tool has one.
    let (ok, out, err) = run(cli(home.path()).args(["mcp", "tools", "apps"]));
    assert!(ok, "{out}{err}");
    let block = |name: &str| -> String {
        let start = out
            .find(&format!("{name}  ["))
            .unwrap_or_else(|| panic!("{out}"));
        out[start..].lines().take(3).collect::<Vec<_>>().join("\n")
    };
    assert!(
        block("apps.show_counter")
            .contains("view: ui://counter/view (shown in the app's tool card)"),
        "{out}"
    );
    assert!(
        block("apps.increment")
            .contains("only for the server's views: agents do not get this tool"),
        "{out}"
    );
    assert!(
        !block("apps.show_counter").contains("only for the server's views"),
        "{out}"
    );
    let (ok, out, err) = run(cli(home.path()).args(["mcp", "call", "apps.show_counter", "--yes"]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("The counter is at"), "{out}");
    assert!(
        err.contains("(this tool has a view, ui://counter/view: the app shows it when an agent calls the tool)"),
        "{err}"
    );
    let (ok, out, err) = run(cli(home.path()).args(["conversations", "list", "--json"]));
    assert!(ok, "{out}{err}");
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    let id = list[0]["id"]
        .as_str()
        .expect("the run's conversation")
        .to_string();
    let (ok, out, err) = run(cli(home.path()).args(["conversations", "show", &id]));
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("view: ui://counter/view of MCP server apps (shown in the app)"),
        "{out}"
    );
    let (ok, out, err) = run(cli(home.path()).args(["conversations", "show", &id, "--json"]));
    assert!(ok, "{out}{err}");
    let shown: serde_json::Value = serde_json::from_str(&out).unwrap();
    let views: Vec<&serde_json::Value> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["calls"].as_array().unwrap())
        .filter_map(|c| c.get("view").filter(|v| !v.is_null()))
        .collect();
    assert_eq!(views.len(), 1, "{out}");
    assert_eq!(views[0]["resource_uri"], "ui://counter/view");
    assert_eq!(views[0]["server"], "apps");
}
