//! `artifactflow-cli artifacts list|show|grep|export`, run as a user would run it.

use std::process::Command;

use engine::artifacts::{ArtifactSource, ArtifactStore, NewArtifact};

fn cli(home: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME").arg("--home").arg(home);
    cmd
}

fn seed(home: &std::path::Path) {
    // Let the CLI create and migrate the database first.
    assert!(cli(home).arg("status").output().unwrap().status.success());
    let store = ArtifactStore::open(&home.join("data/artifactflow.db")).unwrap();
    for (conv, id, content) in [
        ("c1", "notes", "alpha\nbeta needle\ngamma\n"),
        ("c2", "notes", "other needle\n"),
        ("c2", "plan", "step one\n"),
    ] {
        store
            .create(&NewArtifact {
                conversation_id: conv,
                id,
                title: "Title",
                content_type: "text/plain",
                source: ArtifactSource::User,
                content,
            })
            .unwrap();
    }
    store.rewrite("c2", "plan", "step two\n").unwrap();
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn list_show_grep_export() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    seed(home);

    let (ok, out, _) = run(cli(home).args(["artifacts", "list"]));
    assert!(ok);
    assert_eq!(out.lines().count(), 3, "{out}");
    let (_, out, _) = run(cli(home).args(["artifacts", "list", "--conversation", "c1"]));
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("c1\tnotes\ttext/plain\tuser\tv1"), "{out}");

    let (ok, out, _) = run(cli(home).args(["artifacts", "show", "plan"]));
    assert!(ok);
    assert_eq!(out, "step two\n");
    let (_, out, _) = run(cli(home).args(["artifacts", "show", "plan", "--version", "1"]));
    assert_eq!(out, "step one\n");
    let (ok, _, err) = run(cli(home).args(["artifacts", "show", "notes"]));
    assert!(!ok);
    assert!(
        err.contains("several conversations (") && err.contains("--conversation"),
        "{err}"
    );
    let (_, out, _) = run(cli(home).args(["artifacts", "show", "notes", "--conversation", "c2"]));
    assert_eq!(out, "other needle\n");

    let (ok, out, _) = run(cli(home).args(["artifacts", "grep", "needle"]));
    assert!(ok);
    assert!(
        out.starts_with("c1/notes\n2:beta needle\n\nc2/notes\n1:other needle\n"),
        "{out}"
    );
    let (ok, out, _) = run(cli(home).args([
        "artifacts",
        "grep",
        "NEEDLE",
        "-i",
        "-C",
        "1",
        "--conversation",
        "c1",
    ]));
    assert!(ok);
    assert!(
        out.starts_with("notes\n1-alpha\n2:beta needle\n3-gamma\n"),
        "{out}"
    );
    let (ok, out, _) = run(cli(home).args(["artifacts", "grep", "zebra"]));
    assert!(!ok, "no match exits 1");
    assert!(out.contains("No matches for 'zebra'"));

    let file = home.join("plan.txt");
    let (ok, _, _) = run(cli(home).args(["artifacts", "export", "plan"]).arg(&file));
    assert!(ok);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "step two\n");
}

/// Binary content (a tool's image): `show` prints its type and size, never the bytes to the
/// terminal; `show --out` and `export` write the exact bytes; `list` gives its size.
#[test]
fn binary_artifacts_show_their_type_and_size_and_write_their_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    assert!(cli(home).arg("status").output().unwrap().status.success());
    let store = ArtifactStore::open(&home.join("data/artifactflow.db")).unwrap();
    let bytes: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    let image = store
        .create_binary("c1", "Chart", "image/png", &bytes)
        .unwrap();
    let id = image.id.as_str();

    let (ok, out, err) = run(cli(home).args(["artifacts", "show", id]));
    assert!(ok, "{err}");
    assert_eq!(
        out,
        format!("{id}: image/png, 3 KB (binary content; write it to a file with --out FILE)\n")
    );
    let file = home.join("chart.png");
    let (ok, _, err) = run(cli(home)
        .args(["artifacts", "show", id, "--out"])
        .arg(&file));
    assert!(ok, "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    let again = home.join("again.png");
    let (ok, _, _) = run(cli(home).args(["artifacts", "export", id]).arg(&again));
    assert!(ok);
    assert_eq!(std::fs::read(&again).unwrap(), bytes);
    let (ok, out, _) = run(cli(home).args(["artifacts", "list"]));
    assert!(ok);
    assert!(
        out.starts_with(&format!("c1\t{id}\timage/png\ttool\tv1\t3 KB\t")),
        "{out}"
    );
}
