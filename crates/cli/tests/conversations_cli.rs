//! `artifactflow-cli conversations list|show|export`, run as a user would run it, on a copy of
//! a database written by the version before call records (migrated and backfilled on open).

use std::path::Path;
use std::process::Command;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../engine/tests/fixtures/history_v3/artifactflow.db"
);

fn cli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME").arg("--home").arg(home);
    cmd
}

fn home_with_fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("data")).unwrap();
    std::fs::copy(FIXTURE, tmp.path().join("data/artifactflow.db")).unwrap();
    tmp
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The exact shape of `conversations show --json`: messages with their calls (call id, tool,
/// params, status, reason, result preview, artifact ids, hand-over).
#[test]
fn show_json_has_the_calls_of_each_message() {
    let home = home_with_fixture();
    let (code, out, err) = run(cli(home.path()).args(["conversations", "show", "conv", "--json"]));
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("show_conv_json", out);
    let (code, out, _) = run(cli(home.path()).args(["conversations", "show", "conv2", "--json"]));
    assert_eq!(code, 0);
    insta::assert_snapshot!("show_conv2_json", out);
}

#[test]
fn list_and_show_for_people() {
    let home = home_with_fixture();
    let (code, out, _) = run(cli(home.path()).args(["conversations", "list"]));
    assert_eq!(code, 0);
    let ids: Vec<_> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(ids, ["conv2", "conv"], "{out}");
    let (_, json, _) = run(cli(home.path()).args(["conversations", "list", "--json"]));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json[1]["id"], "conv");
    assert_eq!(json[1]["last_status"], "cancelled");

    let (code, out, _) = run(cli(home.path()).args(["conversations", "show", "conv"]));
    assert_eq!(code, 0);
    assert!(
        out.contains("→ m6-0 echo denied (denied)")
            && out.contains("→ m13-0 slow stopped")
            && out.contains(
                "→ m10-0 echo not_run (the run was stopped while waiting for permission)"
            ),
        "{out}"
    );
}

#[test]
fn export_writes_markdown_or_json_and_unknown_ids_fail_clearly() {
    let home = home_with_fixture();
    let file = home.path().join("conv2.md");
    let (code, out, err) = run(cli(home.path())
        .args([
            "conversations",
            "export",
            "conv2",
            "--format",
            "md",
            "--out",
        ])
        .arg(&file));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "");
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.starts_with("# When was Rust 1.0 released?\n"), "{md}");
    assert!(
        md.contains("### `call_subagent` — succeeded")
            && md.contains("handed over to `search_agent`"),
        "{md}"
    );
    assert!(md.contains("## search_agent (sub-agent, depth 1)"), "{md}");

    let (code, out, _) =
        run(cli(home.path()).args(["conversations", "export", "conv", "--format", "json"]));
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let calls: Vec<_> = json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["calls"].as_array().unwrap().iter())
        .map(|c| c["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        calls,
        [
            "succeeded",
            "succeeded",
            "failed",
            "succeeded",
            "denied",
            "not_run",
            "not_run",
            "stopped"
        ]
    );

    for args in [
        &["conversations", "show", "nope"][..],
        &["conversations", "export", "nope", "--format", "json"][..],
    ] {
        let (code, out, err) = run(cli(home.path()).args(args));
        assert_eq!(code, 1, "{args:?}");
        assert_eq!(out, "");
        assert!(
            err.contains("no conversation with id 'nope'")
                && err.contains("artifactflow-cli conversations list"),
            "{err}"
        );
    }
}
