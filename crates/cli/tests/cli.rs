//! The `artifactflow-cli` binary, run as a user would run it.

use std::path::Path;
use std::process::{Command, Output};

fn cli() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME");
    cmd
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn status_json(cmd: &mut Command) -> serde_json::Value {
    serde_json::from_str(&ok(cmd.output().unwrap())).unwrap()
}

#[test]
fn help_and_version() {
    let help = ok(cli().arg("--help").output().unwrap());
    for word in ["status", "parse", "--home"] {
        assert!(help.contains(word), "--help lists {word}: {help}");
    }
    let version = ok(cli().arg("--version").output().unwrap());
    assert_eq!(
        version.trim(),
        format!("artifactflow-cli {}", engine::VERSION)
    );
}

#[test]
fn status_json_with_home_flag_seeds_and_reports_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let s = status_json(cli().args(["status", "--json", "--home"]).arg(home));
    assert_eq!(s["config_dir"], home.join("config").to_str().unwrap());
    assert_eq!(
        s["database"],
        home.join("data/artifactflow.db").to_str().unwrap()
    );
    assert_eq!(s["log_dir"], home.join("logs").to_str().unwrap());
    assert_eq!(s["agents_loaded"], 3);
    assert_eq!(s["tools_loaded"], 9, "3 built-in + 6 artifact tools");
    assert_eq!(s["app_version"], engine::VERSION);
    for seeded in ["tools/_example.md", "agents/lead_agent.md", "models.yaml"] {
        assert!(
            home.join("config").join(seeded).is_file(),
            "{seeded} seeded"
        );
    }
    assert!(home.join("data/artifactflow.db").is_file());
}

#[test]
fn status_honours_artifactflow_home_and_reports_problems() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let s = status_json(
        cli()
            .args(["status", "--json"])
            .env("ARTIFACTFLOW_HOME", home),
    );
    assert_eq!(s["config_dir"], home.join("config").to_str().unwrap());

    let bad = home.join("config/tools/bad.md");
    std::fs::write(&bad, "---\nname: [unclosed\n---\n").unwrap();
    let text = ok(cli()
        .arg("status")
        .env("ARTIFACTFLOW_HOME", home)
        .output()
        .unwrap());
    assert!(text.contains("config problems (1)"), "{text}");
    assert!(text.contains(&format!("{}:", bad.display())), "{text}");
}

#[test]
fn a_database_from_a_newer_version_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("data/artifactflow.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    rusqlite_set_version(&db, 999);
    let out = cli()
        .args(["status", "--home"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("newer than this build") && err.contains("update ArtifactFlow"),
        "{err}"
    );
}

fn rusqlite_set_version(path: &Path, version: u32) {
    // Use the engine's own open path for the file, then bump the version directly.
    let conn = engine::db::open(path).unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
}

#[test]
fn parse_output_is_one_line_even_with_unicode_line_separators() {
    use std::io::Write;
    let mut child = cli()
        .args(["parse", "--jsonl"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::json!({"input": "<tool_call><name>t</name><params><a>x\u{2028}y\u{2029}z</a></params></tool_call>"});
    writeln!(child.stdin.take().unwrap(), "{input}").unwrap();
    let out = ok(child.wait_with_output().unwrap());
    assert_eq!(out.lines().count(), 1);
    assert!(
        !out.contains('\u{2028}') && out.contains("\\u2028"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["tool_calls"][0]["params"]["a"], "x\u{2028}y\u{2029}z");
}

#[test]
fn parse_prints_calls_as_json() {
    use std::io::Write;
    let mut child = cli()
        .arg("parse")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"<tool_call><name>web_search</name><params><query><![CDATA[a\r\nb]]></query></params></tool_call>")
        .unwrap();
    let out = ok(child.wait_with_output().unwrap());
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"tool_calls": [{"name": "web_search", "params": {"query": "a\r\nb"}}]})
    );
}

/// An HTTP server on 127.0.0.1 answering each request with `reply(request target)`.
fn tiny_server(reply: impl Fn(&str) -> String + Send + 'static) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut buf = [0u8; 8192];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
            let _ = stream.write_all(reply(&target).as_bytes());
        }
    });
    format!("http://{addr}")
}

/// A 200 answer with a JSON body.
fn json_reply(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A server on 127.0.0.1 answering every request with `body` as JSON.
fn json_server(body: &'static str) -> String {
    tiny_server(move |_| json_reply(body))
}

fn home_cli(home: &Path) -> Command {
    let mut c = cli();
    c.arg("--home").arg(home);
    c.env(
        "ARTIFACTFLOW_KEYRING_SERVICE",
        format!("artifactflow-cli-test-{}", std::process::id()),
    );
    c
}

#[test]
fn tools_list_show_and_call() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let base = json_server(r#"{"data":{"price":42.5}}"#);
    ok(home_cli(home).arg("status").output().unwrap());
    std::fs::write(
        home.join("config/tools/price.md"),
        format!("---\nname: price\nendpoint: {base}/p\nresponse_extract: $.data.price\nparameters:\n  - name: symbol\n    type: string\n---\nGet a price.\n"),
    )
    .unwrap();

    let list = ok(home_cli(home).args(["tools", "list"]).output().unwrap());
    for expected in [
        "web_search",
        "web_fetch",
        "call_subagent",
        "price",
        "price.md",
        "symbol: string",
    ] {
        assert!(list.contains(expected), "{expected} in {list}");
    }
    let json: serde_json::Value = serde_json::from_str(&ok(home_cli(home)
        .args(["tools", "list", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    let price = json
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "price")
        .unwrap();
    assert_eq!(price["permission"], "confirm");

    let show = ok(home_cli(home)
        .args(["tools", "show", "price"])
        .output()
        .unwrap());
    assert!(
        show.contains("<tool name=\"price\">") && show.contains("Get a price."),
        "{show}"
    );

    // A confirm tool with no terminal and no --yes does not run.
    let denied = home_cli(home)
        .args(["tools", "call", "price", "symbol=AAPL"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(denied.status.code(), Some(1));
    let out = String::from_utf8_lossy(&denied.stdout);
    assert!(
        out.contains("<tool_result name=\"price\" success=\"false\">")
            && out.contains("did not allow"),
        "{out}"
    );

    let approved = ok(home_cli(home)
        .args(["tools", "call", "price", "symbol=AAPL", "--yes"])
        .output()
        .unwrap());
    assert_eq!(
        approved.trim(),
        "<tool_result name=\"price\" success=\"true\">\n<data>\n42.5\n</data>\n</tool_result>"
    );

    // An auto tool runs without asking; a failed result exits 1.
    let routed = ok(home_cli(home)
        .args([
            "tools",
            "call",
            "call_subagent",
            "agent_name=search_agent",
            "instruction=find it",
        ])
        .output()
        .unwrap());
    assert!(routed.contains("success=\"true\""), "{routed}");
    let bad = home_cli(home)
        .args([
            "tools",
            "call",
            "call_subagent",
            "agent_name=nobody",
            "instruction=x",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let unknown = home_cli(home)
        .args(["tools", "call", "no_such_tool"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stdout).contains("there is no tool `no_such_tool`"));
}

/// `tools grammar` prints the grammar of a tool of 2,000 parameters (small: it grows with the
/// schema), and for a tool past the limit says which tool, how many parameters, and what to do,
/// in either format.
#[test]
fn tools_grammar_of_a_wide_tool_and_of_one_too_large_to_guide() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    ok(home_cli(home).arg("status").output().unwrap());
    let tool = |name: &str, count: usize| {
        let params: String = (0..count)
            .map(|j| format!("  - name: option_{j}\n    type: string\n    required: false\n"))
            .collect();
        std::fs::write(
            home.join(format!("config/tools/{name}.md")),
            format!("---\nname: {name}\nmethod: POST\nendpoint: http://127.0.0.1:9/{name}\nparameters:\n{params}---\n"),
        )
        .unwrap();
    };
    tool("wide", 2000);
    tool("too_wide", engine::parser::grammar::MAX_TOOL_PARAMS + 1);
    for native in [false, true] {
        let args = |name: &str| {
            let mut args = vec!["tools", "grammar", name];
            if native {
                args.push("--native");
            }
            args.into_iter().map(String::from).collect::<Vec<_>>()
        };
        let grammar = ok(home_cli(home).args(args("wide")).output().unwrap());
        assert!(grammar.contains("option_1999"), "native {native}");
        assert!(
            grammar.len() < 512 * 1024,
            "native {native}: {} bytes",
            grammar.len()
        );

        let refused = home_cli(home).args(args("too_wide")).output().unwrap();
        assert_eq!(refused.status.code(), Some(1), "native {native}");
        let says = String::from_utf8_lossy(&refused.stderr);
        for part in [
            "no grammar: the tool `too_wide` has 4097 parameters",
            "more than the 4096",
            "leave the tool out of the agent's tools",
        ] {
            assert!(says.contains(part), "native {native}: {part} in {says}");
        }
        assert!(refused.stdout.is_empty(), "native {native}");
    }

    // In a family's forms: a trigger line per opening the family uses, and the grammar from
    // each; an unknown family is named with the known ones.
    let mistral = ok(home_cli(home)
        .args([
            "tools",
            "grammar",
            "create_artifact",
            "--native",
            "--family",
            "mistral",
        ])
        .output()
        .unwrap());
    let triggers: Vec<&str> = mistral
        .lines()
        .take_while(|l| l.starts_with('#'))
        .skip(1)
        .collect();
    assert_eq!(
        triggers.len(),
        engine::models::ToolFamily::Mistral.openings().len(),
        "{mistral}"
    );
    assert!(triggers[0].contains("TOOL_CALLS"), "{mistral}");
    assert!(mistral.contains("\"[TOOL_CALLS]\""), "{mistral}");
    let hermes = ok(home_cli(home)
        .args(["tools", "grammar", "create_artifact"])
        .output()
        .unwrap());
    assert!(
        hermes.starts_with("# XML calls in the forms of the hermes family"),
        "{hermes}"
    );
    assert!(!hermes.contains("TOOL_CALLS"), "{hermes}");
    let refused = home_cli(home)
        .args(["tools", "grammar", "create_artifact", "--family", "gpt"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let says = String::from_utf8_lossy(&refused.stderr);
    assert!(
        says.contains("`gpt` is not a call family") && says.contains("phi4-mini"),
        "{says}"
    );
}

#[test]
fn check_lists_every_problem_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let clean = ok(home_cli(home).arg("check").output().unwrap());
    assert!(clean.contains("OK (9 tools, 3 agents)"), "{clean}");
    let tools = home.join("config/tools");
    std::fs::write(
        tools.join("clash.md"),
        "---\nname: web_fetch\nendpoint: http://x\n---\n",
    )
    .unwrap();
    std::fs::write(
        tools.join("broken.md"),
        "---\nname: b\nendpoint: http://x\nmethod: FETCH\n---\n",
    )
    .unwrap();
    let err = check_fails(home);
    assert!(
        err.contains(&format!(
            "{}:2: field `name`: `web_fetch` is a built-in tool",
            tools.join("clash.md").display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{}:4: field `method`",
            tools.join("broken.md").display()
        )),
        "{err}"
    );
    assert!(err.contains("2 problems"), "{err}");
}

/// `check` on `home`, which must fail with exit 1: its standard error.
fn check_fails(home: &Path) -> String {
    let out = home_cli(home).arg("check").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn check_locates_a_broken_settings_file() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    ok(home_cli(home).arg("check").output().unwrap());
    let settings = home.join("config/settings.yaml");
    std::fs::write(&settings, "# mine\npermission_timeout_secs: soon\n").unwrap();
    let err = check_fails(home);
    assert!(
        err.contains(&format!(
            "{}:2: field `permission_timeout_secs`",
            settings.display()
        )),
        "{err}"
    );
}

#[test]
fn secrets_set_list_delete_never_print_values() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let mut child = home_cli(home)
        .args(["secrets", "set", "AF_CLI_TEST_KEY"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"cli-secret-value-77\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!printed.contains("cli-secret-value-77"));
    assert_eq!(
        ok(home_cli(home).args(["secrets", "list"]).output().unwrap()).trim(),
        "AF_CLI_TEST_KEY"
    );
    ok(home_cli(home)
        .args(["secrets", "delete", "AF_CLI_TEST_KEY"])
        .output()
        .unwrap());
    assert_eq!(
        ok(home_cli(home).args(["secrets", "list"]).output().unwrap()).trim(),
        ""
    );
}

/// A server on 127.0.0.1 that redirects `/start?…` to `/final?…` on itself (same origin, so the
/// request is followed with its query) and answers `/final` with JSON.
fn redirecting_server() -> String {
    tiny_server(|target| {
        match target.strip_prefix("/start") {
        Some(query) => format!(
            "HTTP/1.1 302 Found\r\nLocation: /final{query}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
        None => json_reply(r#"{"ok":true}"#),
    }
    })
}

/// With the most detailed log level, a call whose URL holds a secret (and is redirected, which
/// the HTTP stack logs) leaves no trace of the secret in the log folder.
#[test]
fn a_trace_level_run_logs_no_secret_from_a_request_url() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let base = redirecting_server();
    ok(home_cli(home).arg("status").output().unwrap());
    std::fs::write(
        home.join("config/tools/keyed.md"),
        format!("---\nname: keyed\npermission: auto\nendpoint: \"{base}/start?key={{{{AF_LOG_TEST_KEY}}}}\"\nparameters:\n  - name: q\n    type: string\n---\nKeyed lookup.\n"),
    )
    .unwrap();
    let out = home_cli(home)
        .args(["tools", "call", "keyed", "q=x", "--yes"])
        .env("ARTIFACTFLOW_LOG", "trace")
        .env("AF_LOG_TEST_KEY", "log-secret-4711")
        .env("ARTIFACTFLOW_SECRETS_FROM_ENV", "AF_LOG_TEST_KEY")
        .output()
        .unwrap();
    let stdout = ok(out);
    assert!(stdout.contains("ok"), "the call went through: {stdout}");
    let mut logged = String::new();
    for entry in std::fs::read_dir(home.join("logs")).unwrap() {
        logged.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    assert!(
        logged.contains("TRACE") || logged.contains("DEBUG"),
        "the run logged at a detailed level: {logged}"
    );
    assert!(
        !logged.contains("log-secret-4711"),
        "the secret reached the log: {logged}"
    );
}

/// `artifactflow-cli … | head -1`: the reader is gone before the CLI prints. The command ends
/// quietly with 141 (128 + SIGPIPE, as a shell reports a Unix tool ended by it), not with a
/// panic message; the pipe's read end is closed before the CLI starts, so every write fails.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = cli()
        .args(["tools", "list", "--home"])
        .arg(tmp.path())
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "no panic message: {stderr}");
    assert!(stderr.trim().is_empty(), "nothing on stderr: {stderr}");
    assert_eq!(out.status.code(), Some(141), "stderr: {stderr}");
}
