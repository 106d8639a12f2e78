//! `artifactflow-cli models check` against the scripted model server: a reduced item set
//! (`--items`), the JSON report on stdout, progress on stderr, the result kept in the
//! database file.

use std::path::{Path, PathBuf};
use std::process::Command;

use test_support::{ScriptedModel, Turn};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../engine/tests/fixtures/tool_check")
        .join(name)
}

fn cli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.arg("--home")
        .arg(home)
        .stdin(std::process::Stdio::null());
    cmd
}

async fn home_with(model: &ScriptedModel) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || cli(&path).arg("status").output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success());
    std::fs::write(home.path().join("config/models.yaml"), model.models_yaml()).unwrap();
    home
}

async fn check(home: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = cli(home);
    cmd.args(["models", "check"]).args(args);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn models_check_with_a_reduced_set_prints_the_score_as_json_and_keeps_it() {
    let answers: Vec<Turn> =
        serde_json::from_str(&std::fs::read_to_string(fixture("small_answers.json")).unwrap())
            .unwrap();
    let model = ScriptedModel::start(answers).await;
    let home = home_with(&model).await;
    let items = fixture("small.jsonl");
    let out = check(
        home.path(),
        &[
            "default",
            "--mode",
            "text",
            "--guided",
            "off",
            "--json",
            "--items",
            items.to_str().unwrap(),
        ],
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["mode"], "text");
    assert_eq!(report["guided"], false);
    let totals = &report["totals"];
    assert_eq!(
        (
            &totals["items"],
            &totals["as_asked"],
            &totals["right_tool"],
            &totals["valid_calls"],
            &totals["calls_expected"],
            &totals["failed"]
        ),
        (
            &9.into(),
            &4.into(),
            &5.into(),
            &5.into(),
            &7.into(),
            &0.into()
        )
    );
    let kinds: Vec<(String, u64)> = report["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["kind"].as_str().unwrap().to_string(),
                k["as_asked"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(kinds[0], ("one_call".to_string(), 2));
    assert_eq!(report["items"][3]["verdict"], "no_call");
    assert_eq!(report["items"][4]["verdict"], "unwanted_call");
    // Progress on stderr, item by item, with an estimate.
    assert!(
        stderr.contains("item 1/9 weather-paris as asked"),
        "{stderr}"
    );
    assert!(
        stderr.contains("item 9/9 email-fenced as asked"),
        "{stderr}"
    );
    assert!(stderr.contains("left"), "{stderr}");

    // Kept in the database file.
    let db = engine::db::open(&home.path().join("data/artifactflow.db")).unwrap();
    let key = engine::check::server_key(&model.openai_base_url(), "scripted");
    let rows = engine::check::rows::latest(&db, &key).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].mode.as_str(), rows[0].items, rows[0].as_asked),
        ("text", 9, 4)
    );
    assert!(
        rows[0].item_set.starts_with("small.jsonl ("),
        "{}",
        rows[0].item_set
    );

    // Listed without asking anything, the one `auto` goes by marked.
    let out = check(home.path(), &["default", "--kept"]).await;
    assert!(out.status.success());
    let listed = String::from_utf8_lossy(&out.stdout);
    let line = listed
        .lines()
        .find(|l| l.starts_with("text"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        line.contains("unguided") && line.contains("4/9 (44 %)"),
        "{line}"
    );
    assert!(line.contains("← tool_calls: auto"), "{line}");
    let out = check(home.path(), &["default", "--kept", "--json"]).await;
    let kept: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(kept.as_array().unwrap().len(), 1);
    assert_eq!(kept[0]["totals"]["as_asked"], 4);
    // --kept asks nothing: with --mode it is refused.
    let out = check(home.path(), &["default", "--kept", "--mode", "text"]).await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn models_check_prints_a_table_and_refuses_bad_input_saying_what_to_do() {
    let model = ScriptedModel::start(vec![Turn::text(
        "<tool_call><name>get_weather</name><params><city><![CDATA[Paris]]></city><units><![CDATA[celsius]]></units></params></tool_call>",
    )])
    .await;
    let home = home_with(&model).await;
    let items = fixture("small.jsonl");
    let out = check(
        home.path(),
        &[
            "default",
            "--mode",
            "text",
            "--limit",
            "1",
            "--items",
            items.to_str().unwrap(),
        ],
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("one_call"), "{stdout}");
    assert!(stdout.contains("1/1 (100 %)"), "{stdout}");

    let out = check(home.path(), &["nothing-here"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("`nothing-here` is neither a model profile (default)"),
        "{stderr}"
    );

    let broken = home.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"id\": \"a\"}\n").unwrap();
    let out = check(
        home.path(),
        &["default", "--items", broken.to_str().unwrap()],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("broken.jsonl:1: not a check item"),
        "{stderr}"
    );
}
