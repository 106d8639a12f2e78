//! Adding users' files to the library through real `artifactflow-extract` worker processes, a
//! real SQLite file and real files: a mixed batch where files fail in every way a worker can
//! (unknown format, a hang, a crash) and the batch still ends with each failure located, and
//! cancellation.
//!
//! The worker binary is the one `cargo build -p artifactflow-extract` (or the workspace's
//! `cargo test`) puts in `target/debug/`. Hangs and crashes come from a shell wrapper around
//! it that, for files named so, sleeps or kills itself with SIGSEGV: real processes dying for
//! real.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use artifactflow_store::sources::{ItemStatus, JobStatus, SourceStore};
use engine::owner::ProcessOwner;
use engine::sources::ingest::{add, AddOptions, AddSummary, Progress};
use engine::sources::workers::{Watchdog, EXTRACT_BIN};
use tokio_util::sync::CancellationToken;

/// The worker built beside this test program's folder (`target/debug/`).
fn real_worker() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join(EXTRACT_BIN);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build -p artifactflow-extract` first (the workspace's \
         `cargo test` builds it)",
        path.display()
    );
    path
}

/// A worker that hangs on files whose path has "hang", dies by SIGSEGV on "crash", reports
/// page 1 of 9 for ever on "slow", and hands every other request to the real worker.
fn wrapper(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("worker.sh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nwhile IFS= read -r line; do\n  case \"$line\" in\n    *hang*) exec sleep 600 ;;\n    *crash*) kill -SEGV $$ ;;\n    *slow*) while :; do echo '{{\"progress\":{{\"page\":1,\"pages\":9}}}}'; sleep 0.2; done ;;\n    *) printf '%s\\n' \"$line\" | '{}' ;;\n  esac\ndone\n",
            real_worker().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

struct Library {
    dir: tempfile::TempDir,
    owner: ProcessOwner,
}

impl Library {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let owner = ProcessOwner::acquire(dir.path()).unwrap();
        let lib = Library { dir, owner };
        SourceStore::open(&lib.db(), &lib.blobs(), &lib.owner).unwrap();
        lib
    }
    fn db(&self) -> PathBuf {
        self.dir.path().join("artifactflow.db")
    }
    fn blobs(&self) -> PathBuf {
        self.dir.path().join("sources")
    }
    fn folder(&self, files: &[(&str, &[u8])]) -> PathBuf {
        let root = self.dir.path().join("in");
        for (name, bytes) in files {
            std::fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
            std::fs::write(root.join(name), bytes).unwrap();
        }
        root
    }
    fn add(
        &self,
        paths: &[PathBuf],
        options: &AddOptions,
        cancel: &CancellationToken,
        report: &(dyn Fn(&Progress) + Sync),
    ) -> AddSummary {
        add(
            &self.db(),
            &self.blobs(),
            &self.owner,
            paths,
            options,
            cancel,
            report,
        )
        .unwrap()
    }
    fn store(&self) -> SourceStore {
        SourceStore::connect(&self.db(), &self.blobs()).unwrap()
    }
}

fn options(worker: PathBuf) -> AddOptions {
    AddOptions {
        workers: Some(2),
        watchdog: Watchdog {
            silence: Duration::from_secs(1),
            ..Watchdog::default()
        },
        worker_program: Some(worker),
        ..AddOptions::default()
    }
}

#[test]
fn every_failure_is_located_and_the_batch_goes_on() {
    let lib = Library::new();
    let root = lib.folder(&[
        ("a-notes.md", b"# Notes\n\nThe quokka lives on Rottnest.\n"),
        ("b-plain.txt", b"plain words about a wombat\n"),
        ("c-hang.md", b"# never read\n"),
        ("d-crash.md", b"# never read\n"),
        ("e-unknown.bin", &[0u8, 159, 146, 150, 0, 1, 2, 3, 255, 0]),
        ("skip/ignored.md", b"left out by the glob\n"),
    ]);
    let wrapper = wrapper(lib.dir.path());
    let reports = Mutex::new(Vec::new());
    let mut opts = options(wrapper);
    opts.exclude = vec!["skip/**".into()];
    let summary = lib.add(&[root], &opts, &CancellationToken::new(), &|p| {
        reports.lock().unwrap().push(p.clone())
    });
    let by_name = |name: &str| {
        summary
            .files
            .iter()
            .find(|f| f.path.ends_with(name))
            .unwrap_or_else(|| panic!("{name} in {:#?}", summary.files))
    };
    assert_eq!(summary.status, JobStatus::Done);
    assert_eq!(
        (summary.files_total, summary.added, summary.failed),
        (5, 2, 3)
    );
    assert_eq!(by_name("a-notes.md").status, ItemStatus::Added);
    assert_eq!(by_name("b-plain.txt").status, ItemStatus::Added);
    let hang = by_name("c-hang.md");
    assert_eq!(hang.error_kind.as_deref(), Some("timeout"));
    assert_eq!(
        hang.message.as_deref(),
        Some("stopped before reading any page: no progress for 1 s")
    );
    let crash = by_name("d-crash.md");
    assert_eq!(crash.error_kind.as_deref(), Some("crashed"));
    assert_eq!(
        crash.message.as_deref(),
        Some("the extractor crashed on this file (signal 11)")
    );
    let unknown = by_name("e-unknown.bin");
    assert_eq!(
        unknown.error_kind.as_deref(),
        Some("unsupported"),
        "{unknown:?}"
    );
    // Progress came for each file, and the last report has them all.
    let reports = reports.into_inner().unwrap();
    let last = reports.last().unwrap();
    assert_eq!((last.files_done, last.files_total), (5, 5));
    assert_eq!(reports.iter().filter(|p| p.finished.is_some()).count(), 5);
    // What was added is complete and searchable; what failed left nothing behind.
    let store = lib.store();
    assert_eq!(store.list().unwrap().len(), 2);
    let hits = store.search("quokka", 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].id, by_name("a-notes.md").id.clone().unwrap());
    let jobs = store.jobs(5).unwrap();
    assert_eq!(jobs[0].status, "done");
    assert_eq!(jobs[0].counts["failed"], 3);
}

#[test]
fn a_file_that_keeps_going_past_its_allowance_is_stopped() {
    let lib = Library::new();
    let root = lib.folder(&[("slow.md", b"# slow\n"), ("fine.md", b"# fine\n")]);
    let mut opts = options(wrapper(lib.dir.path()));
    opts.watchdog = Watchdog {
        silence: Duration::from_secs(600),
        base: Duration::from_secs(1),
        per_mb: Duration::ZERO,
    };
    let summary = lib.add(&[root], &opts, &CancellationToken::new(), &|_| {});
    let slow = summary
        .files
        .iter()
        .find(|f| f.path.ends_with("slow.md"))
        .unwrap();
    assert_eq!(slow.error_kind.as_deref(), Some("timeout"));
    assert_eq!(
        slow.message.as_deref(),
        Some("stopped after page 1 of 9: it took longer than the 1 s allowed for a file of this size")
    );
    assert_eq!(summary.added, 1);
}

#[test]
fn the_same_bytes_twice_in_one_add_are_read_once() {
    let lib = Library::new();
    let body: &[u8] = b"# Twins\n\nThe same words in two files.\n";
    let root = lib.folder(&[
        ("a.md", body),
        ("b.md", body),
        ("c.md", body),
        ("d.md", body),
    ]);
    let opts = options(real_worker());
    let summary = lib.add(&[root], &opts, &CancellationToken::new(), &|_| {});
    assert_eq!(
        (summary.added, summary.duplicates),
        (1, 3),
        "{:#?}",
        summary.files
    );
    let store = lib.store();
    assert_eq!(store.list().unwrap().len(), 1);
}

#[test]
fn cancelling_kills_the_workers_and_rolls_back_what_was_being_read() {
    let lib = Library::new();
    let root = lib.folder(&[
        ("1-hang.md", b"# one\n"),
        ("2-hang.md", b"# two\n"),
        ("3.md", b"# three\n"),
        ("4.md", b"# four\n"),
    ]);
    let mut opts = options(wrapper(lib.dir.path()));
    // Hangs are ended by the cancel here, never by the watchdog.
    opts.watchdog.silence = Duration::from_secs(600);
    let cancel = CancellationToken::new();
    let started = Mutex::new(0);
    let summary = lib.add(&[root], &opts, &cancel, &|p| {
        if p.current.is_some() {
            let mut started = started.lock().unwrap();
            *started += 1;
            if *started == 2 {
                cancel.cancel();
            }
        }
    });
    assert_eq!(summary.status, JobStatus::Cancelled);
    assert_eq!(summary.cancelled, 4, "{:#?}", summary.files);
    let store = lib.store();
    assert!(store.list().unwrap().is_empty());
    let jobs = store.jobs(5).unwrap();
    assert_eq!(jobs[0].status, "cancelled");
    assert_eq!(jobs[0].counts["cancelled"], 4);
    let pending: i64 = rusqlite::Connection::open(lib.db())
        .unwrap()
        .query_row("SELECT count(*) FROM artifacts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pending, 0);
}
