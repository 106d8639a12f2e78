//! A child process (this test binary, re-invoked with an environment variable) writes a stream
//! of artifacts and prints `ack N` after each write returns; the parent kills it with SIGKILL
//! mid-stream, then checks the database is intact and holds every acknowledged write.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use engine::artifacts::{ArtifactSource, ArtifactStore, NewArtifact};

const CHILD_ENV: &str = "ARTIFACTFLOW_DURABILITY_DB";
const KILL_AFTER: usize = 3_000;

fn content(i: usize) -> String {
    format!("artifact {i}\n{}\n", "payload line\n".repeat(20 + i % 50))
}

/// The writer. Does nothing unless started by the parent test below.
#[test]
fn durability_writer_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let store = ArtifactStore::open(std::path::Path::new(&path)).unwrap();
    let mut out = std::io::stdout().lock();
    for i in 0..1_000_000usize {
        let id = format!("a{i}");
        store
            .create(&NewArtifact {
                conversation_id: "dur",
                id: &id,
                title: "durability",
                content_type: "text/plain",
                source: ArtifactSource::Tool,
                content: &content(i),
            })
            .unwrap();
        if i % 5 == 0 {
            store
                .rewrite("dur", &id, &format!("{}rewritten\n", content(i)))
                .unwrap();
        }
        writeln!(out, "ack {i}").unwrap();
        out.flush().unwrap();
    }
}

/// The ack number in a line of the child's output. The child's test harness prints
/// `test … ... ` without a newline just before the writer starts, so the first ack shares its
/// line: look for it anywhere, not only at the start.
fn ack_of(line: &str) -> Option<usize> {
    let at = line.rfind("ack ")?;
    line[at + 4..].trim().parse().ok()
}

#[test]
fn the_first_ack_is_read_even_behind_the_harness_banner() {
    assert_eq!(
        ack_of("test durability::durability_writer_child ... ack 0\n"),
        Some(0)
    );
    assert_eq!(ack_of("ack 17\n"), Some(17));
    assert_eq!(ack_of("running 1 test\n"), None);
}

#[test]
fn a_killed_writer_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("dur.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "durability::durability_writer_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut acked: Vec<usize> = Vec::new();
    let mut line = String::new();
    while acked.len() < KILL_AFTER {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!(
                "writer ended before being killed after {} acks",
                acked.len()
            );
        }
        if let Some(n) = ack_of(&line) {
            acked.push(n);
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    // Acks already in the pipe were written before the kill: they count too.
    for line in reader.lines() {
        if let Some(n) = ack_of(&line.unwrap()) {
            acked.push(n);
        }
    }

    let conn = engine::db::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let fts: rusqlite::Result<usize> = conn.execute(
        "INSERT INTO artifacts_fts(artifacts_fts, rank) VALUES('integrity-check', 0)",
        [],
    );
    assert!(fts.is_ok(), "full-text index intact: {fts:?}");
    drop(conn);
    let store = ArtifactStore::open(&db).unwrap();
    assert_eq!(
        acked.first(),
        Some(&0),
        "every ack was read, the first included"
    );
    assert!(
        acked.windows(2).all(|w| w[1] == w[0] + 1),
        "acks are consecutive"
    );
    for &i in &acked {
        let (a, text) = store.content("dur", &format!("a{i}"), None).unwrap();
        if i % 5 == 0 {
            assert_eq!((a.version, text), (2, format!("{}rewritten\n", content(i))));
        } else {
            assert_eq!((a.version, text), (1, content(i)));
        }
    }
    let total = store.list(&Default::default(), 1, 0).unwrap().total as usize;
    assert!(
        total >= acked.len(),
        "{total} stored, {} acknowledged",
        acked.len()
    );
    assert!(
        total <= acked.len() + 1,
        "at most the unacknowledged write in flight is extra: {total} stored, {} acknowledged (max {:?})",
        acked.len(),
        acked.iter().max()
    );
}
