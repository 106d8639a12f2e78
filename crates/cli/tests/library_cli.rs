//! `artifactflow-cli library …` run as a user would run it, on real files: PDFs made by code
//! (read by the real pdfium in the real `artifactflow-extract` worker), Markdown, text, an
//! encrypted PDF and a file of an unknown format; and a `library add` killed with SIGKILL
//! midway, after which the library has nothing half-added.
//!
//! The worker is found beside the CLI binary (`target/debug/artifactflow-extract`), built by
//! the workspace's `cargo test` (with `cargo test -p artifactflow-cli` alone, build it first:
//! `cargo build -p artifactflow-extract`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[allow(dead_code)]
#[path = "../../extract/tests/extract/fixtures.rs"]
mod fixtures;

use fixtures::Doc;

fn cli(home: &Path) -> Command {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_artifactflow-cli"));
    let worker = exe.with_file_name("artifactflow-extract");
    assert!(
        worker.is_file(),
        "{} is missing: build it with `cargo build -p artifactflow-extract` (the workspace's \
         `cargo test` does)",
        worker.display()
    );
    let mut cmd = Command::new(exe);
    cmd.env_remove("ARTIFACTFLOW_HOME")
        .env_remove("ARTIFACTFLOW_EXTRACT")
        .arg("--home")
        .arg(home);
    cmd
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(home: &Path, args: &[&str]) -> Out {
    let out = cli(home).args(args).output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn json(home: &Path, args: &[&str]) -> serde_json::Value {
    let out = run(home, args);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

/// A 10-page report whose page 7 alone has the word "quokka".
fn report() -> Doc {
    let mut doc = Doc::new().info("Field report", "A. Author");
    for page in 1..=10 {
        let special = if page == 7 {
            "The quokka was seen near the lake."
        } else {
            "Nothing unusual was seen today."
        };
        let first = format!("Day {page} of the survey began at dawn.");
        let last = format!("Notes for day {page} end here.");
        doc = doc.page(&[&first, special, &last]);
    }
    doc
}

fn folder(root: &Path) -> PathBuf {
    let dir = root.join("papers");
    std::fs::create_dir_all(&dir).unwrap();
    report().write(&dir, "report.pdf");
    std::fs::write(dir.join("notes.md"), "# Notes\n\nA wombat dug a burrow.\n").unwrap();
    std::fs::write(dir.join("plain.txt"), "Plain text about a numbat.\n").unwrap();
    fixtures::write(&dir, "locked.pdf", &fixtures::encrypted());
    std::fs::write(
        dir.join("mystery.bin"),
        [0u8, 159, 146, 150, 0, 1, 2, 3, 255, 0],
    )
    .unwrap();
    dir
}

fn by_path<'a>(summary: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    summary["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("{name} in {summary:#}"))
}

#[test]
fn add_list_show_search_export_and_remove() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = folder(tmp.path());
    let dir_arg = dir.to_str().unwrap();

    // Added and failed, each failure with its path and reason; exit 1.
    let out = run(&home, &["library", "add", dir_arg]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("5 files")
            && out.stdout.contains("3 added")
            && out.stdout.contains("2 failed"),
        "{}",
        out.stdout
    );
    let locked = dir.join("locked.pdf");
    let mystery = dir.join("mystery.bin");
    assert!(
        out.stdout
            .contains(&format!("{}: encrypted: ", locked.display())),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("{}: unsupported: ", mystery.display())),
        "{}",
        out.stdout
    );
    // Not a terminal: one progress line per file on stderr.
    assert_eq!(
        out.stderr.lines().filter(|l| l.starts_with('[')).count(),
        5,
        "{}",
        out.stderr
    );

    let list = json(&home, &["library", "list", "--json"]);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 3);
    let pdf = list.iter().find(|s| s["kind"] == "pdf").unwrap();
    assert_eq!(pdf["title"], "Field report");
    assert_eq!(pdf["page_count"], 10);
    let id = pdf["id"].as_str().unwrap().to_string();

    let text = run(&home, &["library", "show", &id, "--text"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains("The quokka was seen near the lake."));
    assert!(!text.stdout.contains("<!--"), "{}", text.stdout);
    let markdown = run(&home, &["library", "show", &id, "--markdown"]).stdout;
    assert!(markdown.contains("<!-- page 7 -->"), "{markdown}");

    // The word only on page 7: its passage first, located on page 7 by the lines that hold it.
    let hits = json(&home, &["library", "search", "quokka", "--json"]);
    let first = &hits[0];
    assert_eq!(first["id"], id.as_str());
    assert_eq!(first["page"], 7);
    let lines: Vec<&str> = markdown.lines().collect();
    let (from, to) = (
        first["line_first"].as_u64().unwrap() as usize,
        first["line_last"].as_u64().unwrap() as usize,
    );
    let cited = lines[from - 1..to].join("\n");
    assert!(cited.contains("quokka"), "lines {from}–{to}: {cited}");
    let page7 = lines.iter().position(|l| *l == "<!-- page 7 -->").unwrap() + 1;
    let page8 = lines.iter().position(|l| *l == "<!-- page 8 -->").unwrap() + 1;
    assert!(
        page7 < from && to < page8,
        "{from}–{to} not within page 7 ({page7}–{page8})"
    );

    // Export gives the original bytes back exactly.
    let exported = tmp.path().join("out.pdf");
    let out = run(
        &home,
        &["library", "export", &id, exported.to_str().unwrap()],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read(&exported).unwrap(),
        std::fs::read(dir.join("report.pdf")).unwrap()
    );

    // The same folder again: everything readable is a duplicate, nothing is added.
    let again = run(&home, &["library", "add", dir_arg, "--json"]);
    assert_eq!(again.code, 1, "the two bad files still fail");
    let again: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(
        (again["added"].as_u64(), again["duplicates"].as_u64()),
        (Some(0), Some(3))
    );
    assert!(by_path(&again, "report.pdf")["message"]
        .as_str()
        .unwrap()
        .contains(&format!("already in the library as {id}")));
    assert_eq!(
        json(&home, &["library", "list", "--json"])
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // A changed file at the same path: a new version of the same source.
    std::fs::write(
        dir.join("notes.md"),
        "# Notes\n\nThe wombat left; a bilby came.\n",
    )
    .unwrap();
    let changed = run(
        &home,
        &[
            "library",
            "add",
            dir.join("notes.md").to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(changed.code, 0, "{}", changed.stderr);
    let changed: serde_json::Value = serde_json::from_str(&changed.stdout).unwrap();
    assert_eq!(changed["new_versions"], 1, "{changed:#}");
    let notes_id = by_path(&changed, "notes.md")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let shown = json(&home, &["library", "show", &notes_id, "--json"]);
    assert_eq!(shown["source"]["version"], 2);
    assert_eq!(
        json(&home, &["library", "search", "bilby", "--json"])[0]["id"],
        notes_id.as_str()
    );
    assert_eq!(
        run(&home, &["library", "search", "burrow"]).code,
        1,
        "version 1 is not searched"
    );

    // A limit set for the add, and globs.
    let notes = dir.join("notes.md");
    let limited = run(
        &home,
        &[
            "library",
            "add",
            notes.to_str().unwrap(),
            "--max-file-mb",
            "0",
            "--json",
        ],
    );
    assert_eq!(limited.code, 1);
    let limited: serde_json::Value = serde_json::from_str(&limited.stdout).unwrap();
    assert_eq!(by_path(&limited, "notes.md")["error_kind"], "too_large");
    let globbed = json(
        &home,
        &["library", "add", dir_arg, "--include", "*.txt", "--json"],
    );
    assert_eq!(
        (
            globbed["files_total"].as_u64(),
            globbed["duplicates"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let globbed = run(
        &home,
        &[
            "library",
            "add",
            dir_arg,
            "--exclude",
            "*.pdf",
            "--exclude",
            "*.bin",
            "--json",
        ],
    );
    assert_eq!(globbed.code, 0, "{}", globbed.stdout);

    let bad = run(&home, &["library", "add", dir_arg, "--include", "a[b"]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("the include glob 'a[b' is not valid"),
        "{}",
        bad.stderr
    );

    // Removed: gone from the list and from search.
    let out = run(&home, &["library", "rm", &id]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let list = json(&home, &["library", "list", "--json"]);
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["id"] != id.as_str()));
    assert_eq!(run(&home, &["library", "search", "quokka"]).code, 1);
    let out = run(&home, &["library", "show", &id]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("no source"), "{}", out.stderr);
}

/// A folder of `n` small Markdown notes.
fn many_notes(root: &Path, n: usize) -> PathBuf {
    let dir = root.join("many");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..n {
        let body = format!("# Note {i}\n\nNote number {i} mentions the word marsupial.\n");
        std::fs::write(dir.join(format!("note-{i:03}.md")), body).unwrap();
    }
    dir
}

/// Waits until the add running in `child` has reported `files` finished files on stderr;
/// returns the rest of its stderr.
fn after_files(
    child: &mut std::process::Child,
    files: usize,
) -> std::io::Lines<BufReader<std::process::ChildStderr>> {
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut done = 0;
    while done < files {
        let line = lines.next().expect("the add reports files").unwrap();
        if line.starts_with('[') {
            done += 1;
        }
    }
    lines
}

#[test]
fn ctrl_c_cancels_the_add_and_prints_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = many_notes(tmp.path(), 200);
    let mut child = cli(&home)
        .args(["library", "add", dir.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rest = after_files(&mut child, 10);
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let stderr: Vec<String> = rest.map_while(Result::ok).collect();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    assert!(
        stderr.iter().any(|l| l.contains("[cancelling…]")),
        "{stderr:?}"
    );
    assert!(
        stdout.starts_with("Cancelled after 200 files") && stdout.contains("not added (cancelled)"),
        "{stdout}"
    );
    let jobs = json(&home, &["library", "jobs", "--json"]);
    assert_eq!(jobs["jobs"][0]["status"], "cancelled", "{jobs:#}");
    assert_eq!(
        jobs["notices"].as_array().map(Vec::len),
        Some(0),
        "nothing to roll back"
    );
    let added = jobs["jobs"][0]["counts"]["added"].as_u64().unwrap();
    assert!((10..200).contains(&added), "{added} added");
    let list = json(&home, &["library", "list", "--json"]);
    assert_eq!(list.as_array().unwrap().len() as u64, added);
}

#[test]
fn a_kill_mid_add_leaves_nothing_half_added() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = many_notes(tmp.path(), 200);
    let mut child = cli(&home)
        .args(["library", "add", dir.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed once some files are in: a line per finished file comes on stderr.
    let _rest = after_files(&mut child, 20);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let jobs = json(&home, &["library", "jobs", "--json"]);
    let job = &jobs["jobs"][0];
    assert_eq!(job["status"], "interrupted", "{jobs:#}");
    let notice = job["notice"].as_str().unwrap();
    assert!(
        notice.contains("stopped when its process ended"),
        "{notice}"
    );
    assert_eq!(
        jobs["notices"][0].as_str(),
        Some(notice),
        "the opening that rolled back says so"
    );

    let db = engine::db::open(&home.join("data/artifactflow.db")).unwrap();
    let count = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        count("SELECT count(*) FROM source_versions WHERE state = 'pending'"),
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM sources WHERE state = 'pending'"),
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM source_passages_fts"),
        count("SELECT count(*) FROM source_passages")
    );
    let list = json(&home, &["library", "list", "--json"]);
    let list = list.as_array().unwrap();
    assert!(
        list.len() >= 20 && list.len() < 200,
        "{} sources",
        list.len()
    );
    for source in list {
        let id = source["id"].as_str().unwrap();
        let path = PathBuf::from(source["path"].as_str().unwrap());
        let markdown = run(&home, &["library", "show", id, "--markdown"]).stdout;
        assert_eq!(
            markdown.lines().count() as u64,
            source["line_count"].as_u64().unwrap()
        );
        let number = path
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap()
            .trim_start_matches("note-");
        assert!(markdown.contains(&format!("Note number {}", number.parse::<u32>().unwrap())));
        let exported = tmp.path().join("export.md");
        assert_eq!(
            run(
                &home,
                &["library", "export", id, exported.to_str().unwrap()]
            )
            .code,
            0
        );
        assert_eq!(
            std::fs::read(&exported).unwrap(),
            std::fs::read(&path).unwrap()
        );
    }
    let files = walk_count(&home.join("data/sources"));
    assert_eq!(
        files,
        list.len(),
        "one original per source, nothing left over"
    );
}

fn walk_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| {
                    let e = e.unwrap();
                    if e.path().is_dir() {
                        walk_count(&e.path())
                    } else {
                        1
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}
