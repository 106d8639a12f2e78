//! Several ArtifactFlow processes on one database, as when the desktop app runs while the user
//! types CLI commands: a live run belongs to its process, a dead process's run is interrupted,
//! a conversation runs in one process at a time, and a new database opens in all of them.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use test_support::{ScriptedModel, Turn};

fn cli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME").arg("--home").arg(home);
    cmd
}

fn status(home: &Path) {
    let out = cli(home).arg("status").output().unwrap();
    assert!(
        out.status.success(),
        "status failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Statuses of conversation `c1`'s runs, oldest first.
fn runs(home: &Path) -> Vec<String> {
    let conn = engine::db::open(&home.join("data/artifactflow.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT status FROM runs WHERE conversation_id = 'c1' ORDER BY rowid")
        .unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ok() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_live_run_of_another_process_is_kept_and_a_killed_one_is_interrupted() {
    // An answer that streams for minutes: the run is in progress until the test kills it.
    let model = ScriptedModel::start(vec![Turn::text("word ".repeat(20_000))
        .chunk_chars(5)
        .chunk_delay(Duration::from_millis(20))])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        status(&home);
        std::fs::write(
            home.join("config/models.yaml"),
            model.models_yaml(),
        )
        .unwrap();
        let mut owner = cli(&home)
            .args(["run", "--agent", "lead_agent", "--no", "--conversation", "c1"])
            .arg("Weekly report\nwith details")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_until("the run is recorded", || runs(&home) == ["running"]);

        // Another command (it opens the database and runs startup recovery) leaves it alone.
        status(&home);
        assert_eq!(runs(&home), ["running"], "a live run is not interrupted");

        // A second runner on the same conversation is refused, naming it and its owner.
        let second = cli(&home)
            .args(["run", "--agent", "lead_agent", "--no", "--conversation", "c1"])
            .arg("again")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&second.stderr);
        assert!(!second.status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "conversation 'Weekly report' is already running in another ArtifactFlow process (the CLI, pid {}); wait for it to finish or stop it there",
                owner.id()
            )),
            "{stderr}"
        );
        assert_eq!(runs(&home), ["running"], "the refused run left no row");

        // Killed (SIGKILL on Unix): the next command marks its run interrupted.
        owner.kill().unwrap();
        owner.wait().unwrap();
        status(&home);
        assert_eq!(runs(&home), ["interrupted"]);
        drop(model);
    })
    .await
    .unwrap();
}

/// Two processes opening the same brand-new database at once both work (before, the second
/// one's migration failed on the tables the first had just created).
#[test]
fn two_processes_opening_a_new_database_at_once_both_work() {
    for round in 0..20 {
        let tmp = tempfile::tempdir().unwrap();
        // Seed the config folder first, so the processes race on the database alone.
        engine::paths::seed_config(&tmp.path().join("config")).unwrap();
        let children: Vec<_> = (0..2)
            .map(|_| {
                cli(tmp.path())
                    .arg("status")
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let conn = engine::db::open(&tmp.path().join("data/artifactflow.db")).unwrap();
        assert_eq!(
            engine::db::schema_version(&conn).unwrap(),
            engine::db::latest_version()
        );
    }
}
