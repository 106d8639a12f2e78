//! `artifactflow-cli permissions list|check`, and `--yes` against permission rules, run as a
//! user would run them (real processes, a real HTTP server, the scripted model server).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use test_support::{ScriptedModel, Turn};

fn cli(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    c.env_remove("ARTIFACTFLOW_HOME")
        .arg("--home")
        .arg(home)
        .env(
            "ARTIFACTFLOW_KEYRING_SERVICE",
            format!("artifactflow-cli-test-{}", std::process::id()),
        )
        .stdin(Stdio::null());
    c
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A server on 127.0.0.1 answering `{"ok":1}` and counting the requests it got.
fn counting_server() -> (String, Arc<AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            counter.fetch_add(1, Ordering::SeqCst);
            let body = "{\"ok\":1}";
            let _ = stream.write_all(format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).as_bytes());
        }
    });
    (format!("http://{addr}"), hits)
}

fn prepared_home() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    assert!(cli(tmp.path())
        .arg("status")
        .output()
        .unwrap()
        .status
        .success());
    tmp
}

fn rules(home: &Path, yaml: &str) {
    std::fs::write(home.join("config/settings.yaml"), yaml).unwrap();
}

#[test]
fn yes_answers_confirm_but_never_overrides_a_deny() {
    let tmp = prepared_home();
    let home = tmp.path();
    let (base, hits) = counting_server();
    for action in [None, Some("allow"), Some("confirm"), Some("deny")] {
        for default in ["auto", "confirm"] {
            std::fs::write(
                home.join("config/tools/price.md"),
                format!("---\nname: price\npermission: {default}\nendpoint: {base}/p\nparameters:\n  - name: symbol\n    type: string\n---\n"),
            )
            .unwrap();
            rules(
                home,
                &action
                    .map(|a| format!("permission_rules:\n  - tool: price\n    when: {{symbol: \"A*\"}}\n    action: {a}\n"))
                    .unwrap_or_default(),
            );
            for yes in [false, true] {
                let mut cmd = cli(home);
                cmd.args(["tools", "call", "price", "symbol=AAPL"]);
                if yes {
                    cmd.arg("--yes");
                }
                let before = hits.load(Ordering::SeqCst);
                let out = cmd.output().unwrap();
                let ran = hits.load(Ordering::SeqCst) > before;
                let case = format!(
                    "rule {action:?}, default {default}, --yes {yes}: {}",
                    text(&out)
                );
                let should_run = match action {
                    Some("deny") => false,
                    Some("confirm") => yes,
                    Some("allow") => true,
                    _ => default == "auto" || yes,
                };
                assert_eq!(ran, should_run, "{case}");
                assert_eq!(out.status.success(), should_run, "{case}");
                if action == Some("deny") {
                    assert!(
                        text(&out).contains(
                            "denied by rule `deny price when {symbol: A*}` (settings.yaml:2)"
                        ),
                        "{case}"
                    );
                }
            }
        }
    }
}

/// A deny for a site holds for every spelling of its URLs: `permissions check` says deny and
/// `tools call --yes` never reaches the reader (here the counting server) for any of them.
#[test]
fn a_url_deny_holds_for_rewritten_urls_in_check_and_with_yes() {
    let tmp = prepared_home();
    let home = tmp.path();
    let (base, hits) = counting_server();
    rules(
        home,
        &format!("web_fetch:\n  endpoint: {base}/\n  api_key: null\npermission_rules:\n  - tool: web_fetch\n    when: {{url: \"https://intranet.example.com/**\"}}\n    action: deny\n"),
    );
    for url in [
        "https://INTRANET.example.com/x",
        "https://intranet.example.com./x",
        "https://user@intranet.example.com/x",
        "https://intranet.example.com:443/x",
        "https:\\\\intranet.example.com\\x",
        " https://intranet.example.com/x",
        "https://intra\tnet.example.com/x",
        "https://ｉｎｔｒａｎｅｔ.example.com/x",
    ] {
        let arg = format!("url={url}");
        let check = text(
            &cli(home)
                .args(["permissions", "check", "web_fetch", &arg])
                .output()
                .unwrap(),
        );
        assert!(
            check.starts_with(
                "deny: rule `deny web_fetch when {url: https://intranet.example.com/**}`"
            ),
            "{url:?}: {check}"
        );
        let out = cli(home)
            .args(["tools", "call", "web_fetch", &arg, "--yes"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{url:?}: {}", text(&out));
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "a rewritten URL was fetched"
    );
    // The reader stand-in answers a page the rule does not cover.
    let out = cli(home)
        .args([
            "tools",
            "call",
            "web_fetch",
            "url=https://docs.example.org/",
            "--yes",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn run_with_yes_never_overrides_an_agent_deny() {
    let call = "<tool_call><name>create_artifact</name><params><id><![CDATA[note]]></id><title><![CDATA[Note]]></title><content><![CDATA[x]]></content></params></tool_call>";
    let model = ScriptedModel::start(vec![Turn::text(call), Turn::text("Could not save.")]).await;
    let tmp = prepared_home();
    let home = tmp.path().to_path_buf();
    std::fs::write(home.join("config/models.yaml"), model.models_yaml()).unwrap();
    std::fs::write(
        home.join("config/agents/writer.md"),
        "---\nname: writer\nmodel: default\ntools:\n  create_artifact: auto\npermission_rules:\n  - tool: \"*_artifact\"\n    when: {id: \"note\"}\n    action: deny\n---\nYou write.\n",
    )
    .unwrap();
    let out = tokio::task::spawn_blocking(move || {
        cli(&home)
            .args([
                "run",
                "--agent",
                "writer",
                "--yes",
                "--conversation",
                "c1",
                "Save it.",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let all = text(&out);
    assert!(all.contains("Could not save."), "{all}");
    assert!(!all.contains("note (v1)"), "no artifact was made: {all}");
    let rows = cli(tmp.path())
        .args(["conversations", "show", "c1", "--json"])
        .output()
        .unwrap();
    let shown = text(&rows);
    assert!(
        shown.contains(
            "denied by rule `deny *_artifact when {id: note}` (agent writer, agents/writer.md:7)"
        ),
        "{shown}"
    );
}

#[test]
fn list_and_check_name_the_rule_and_its_place() {
    let tmp = prepared_home();
    let home = tmp.path();
    rules(
        home,
        "# mine\npermission_rules:\n  - tool: web_fetch\n    when: {url: \"https://docs.rs/**\"}\n    action: allow\n  - tool: web_fech\n    action: deny\n  - tool: \"*\"\n    when: {$host: \"*.internal\"}\n    action: deny\n",
    );
    std::fs::write(
        home.join("config/agents/reader.md"),
        "---\nname: reader\nmodel: default\ntools:\n  web_fetch: confirm\npermission_rules:\n  - {tool: web_fetch, when: {url: \"re:https://docs\\\\.rs/.*\"}, action: confirm}\n---\nReads.\n",
    )
    .unwrap();
    let list = cli(home).args(["permissions", "list"]).output().unwrap();
    let shown = text(&list);
    assert!(list.status.success(), "{shown}");
    assert!(
        shown.contains("settings.yaml:3  allow   web_fetch when url=https://docs.rs/**"),
        "{shown}"
    );
    assert!(
        shown.contains("settings.yaml:6  IGNORED deny    web_fech: there is no tool `web_fech`"),
        "{shown}"
    );
    assert!(
        shown.contains("agents/reader.md:7 (agent reader)  confirm web_fetch"),
        "{shown}"
    );
    let json: serde_json::Value = serde_json::from_slice(
        &cli(home)
            .args(["permissions", "list", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let star = &json[2];
    assert_eq!(
        star["origin"],
        serde_json::json!({"kind": "global", "file": "settings.yaml", "line": 8})
    );
    assert!(star["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "web_fetch"));
    assert!(json[1]["error"].as_str().unwrap().contains("ignored") || !json[1]["error"].is_null());

    let check = |args: &[&str]| {
        text(
            &cli(home)
                .args(["permissions", "check"])
                .args(args)
                .output()
                .unwrap(),
        )
    };
    assert_eq!(
        check(&["web_fetch", "url=https://docs.rs/serde"]).trim(),
        "allow: rule `allow web_fetch when {url: https://docs.rs/**}` (settings.yaml:3)"
    );
    assert!(check(&[
        "web_fetch",
        "url=https://docs.rs/serde",
        "--agent",
        "reader"
    ])
    .starts_with("confirm: rule `confirm web_fetch"));
    assert_eq!(
        check(&["web_fetch", "url=https://example.com/"]).trim(),
        "confirm: no rule matched: the tool's default permission `confirm`"
    );
    assert!(check(&["web_search", "query=x", "--agent", "reader"])
        .starts_with("deny: the agent does not list the tool"));
    let json: serde_json::Value =
        serde_json::from_str(&check(&["web_fetch", "url=https://docs.rs/x", "--json"])).unwrap();
    assert_eq!(json["action"], "allow");
    assert_eq!(json["because"]["origin"]["line"], 3);
    // The ignored rule is a config problem like a broken file: `check` lists it, located.
    let problems = cli(home).arg("check").output().unwrap();
    assert!(!problems.status.success());
    assert!(
        text(&problems)
            .contains("settings.yaml:6: field `permission_rules`: there is no tool `web_fech`"),
        "{}",
        text(&problems)
    );
    let unknown = cli(home)
        .args(["permissions", "check", "nope"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(text(&unknown).contains("there is no tool `nope`"));
}
