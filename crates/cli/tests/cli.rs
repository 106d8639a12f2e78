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
    assert_eq!(s["tools_loaded"], 0);
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
