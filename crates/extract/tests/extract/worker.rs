//! The `artifactflow-extract` worker as a child process: its protocol, and the hostile files
//! that are only ever given to it.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use artifactflow_extract::pdf::library::PDFIUM_ENV;
use artifactflow_extract::protocol::{Reply, Request};
use artifactflow_extract::{ErrorKind, ExtractError, Limits, Summary};

use crate::fixtures::{self, Doc};
use crate::ooxml;

/// How long a worker may take before the test gives up on it as hung (a safety net that fails
/// the test, not a measurement).
const HUNG_AFTER: Duration = Duration::from_secs(120);

/// What the worker answered to one request.
#[derive(Debug)]
struct Answer {
    replies: Vec<Reply>,
}

impl Answer {
    fn error(&self) -> Option<&ExtractError> {
        self.replies.iter().find_map(|r| match r {
            Reply::Error { error } => Some(error),
            _ => None,
        })
    }

    fn done(&self) -> Option<&Summary> {
        self.replies.iter().find_map(|r| match r {
            Reply::Done { done } => Some(done),
            _ => None,
        })
    }

    fn markdown(&self) -> String {
        self.replies
            .iter()
            .filter_map(|r| match r {
                Reply::Page(page) => Some(page.markdown.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// Runs one worker on these request lines (closing its input after them) and returns its
/// answers, one per request (split after each `done` or `error`), and how it exited.
fn run_worker(lines: &[String], pdfium_env: Option<&str>) -> (Vec<Answer>, ExitStatus) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_artifactflow-extract"));
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    match pdfium_env {
        Some(value) => command.env(PDFIUM_ENV, value),
        None => command.env_remove(PDFIUM_ENV),
    };
    let mut child = command.spawn().expect("the worker starts");
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let stdout = child.stdout.take().unwrap();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let lines: Vec<String> = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect();
        let _ = sender.send(lines);
    });
    let Ok(out) = receiver.recv_timeout(HUNG_AFTER) else {
        child.kill().ok();
        panic!("the worker hung on {lines:?}");
    };
    let status = child.wait().unwrap();
    let mut answers = vec![Answer {
        replies: Vec::new(),
    }];
    for line in out {
        let reply: Reply = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let ends = matches!(reply, Reply::Done { .. } | Reply::Error { .. });
        answers.last_mut().unwrap().replies.push(reply);
        if ends {
            answers.push(Answer {
                replies: Vec::new(),
            });
        }
    }
    answers.pop();
    (answers, status)
}

fn request(path: &Path) -> String {
    serde_json::to_string(&Request {
        path: path.display().to_string(),
        limits: Limits::default(),
    })
    .unwrap()
}

#[test]
fn the_worker_streams_meta_progress_pages_then_done_for_each_request() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = Doc::new()
        .pages_of_words(5, 3)
        .write(dir.path(), "five.pdf");
    let md = fixtures::write(dir.path(), "note.md", b"# Note\n\nSome words.\n");
    let (answers, status) = run_worker(&[request(&pdf), request(&md)], None);
    assert!(status.success(), "{status}");
    assert_eq!(answers.len(), 2);
    let replies = &answers[0].replies;
    assert!(
        matches!(&replies[0], Reply::Meta { meta } if meta.pages == Some(5)),
        "{replies:?}"
    );
    assert!(matches!(replies.last(), Some(Reply::Done { done }) if done.pages == 5));
    let pages: Vec<u32> = replies
        .iter()
        .filter_map(|r| match r {
            Reply::Page(page) => page.page,
            _ => None,
        })
        .collect();
    assert_eq!(pages, vec![1, 2, 3, 4, 5], "pages in order");
    let first_page = replies
        .iter()
        .position(|r| matches!(r, Reply::Page(_)))
        .unwrap();
    assert!(
        replies[1..first_page]
            .iter()
            .all(|r| matches!(r, Reply::Progress { .. })),
        "progress comes while reading, before the pages"
    );
    assert!(
        matches!(replies[first_page - 1], Reply::Progress { progress } if progress.page == 5),
        "the last page's progress is always sent"
    );
    assert_eq!(answers[1].markdown(), "# Note\n\nSome words.\n");
    assert_eq!(answers[1].done().unwrap().passages, 1);
}

#[test]
fn an_encrypted_pdf_needs_a_password() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixtures::write(dir.path(), "secret.pdf", &fixtures::encrypted());
    let (answers, status) = run_worker(&[request(&path)], None);
    assert!(status.success());
    let error = answers[0].error().expect("an error");
    assert_eq!(error.kind, ErrorKind::Encrypted);
    assert!(
        error.message.starts_with("encrypted: needs a password"),
        "{}",
        error.message
    );
}

#[test]
fn a_truncated_pdf_is_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let whole = Doc::new().pages_of_words(10, 5).bytes();
    let path = fixtures::write(dir.path(), "cut.pdf", &fixtures::truncate(&whole, 0.6));
    let (answers, status) = run_worker(&[request(&path)], None);
    assert!(status.success());
    let error = answers[0].error().expect("an error");
    assert_eq!(error.kind, ErrorKind::Damaged);
    assert!(
        error.message.starts_with("damaged or truncated"),
        "{}",
        error.message
    );
}

/// A hostile page tree gives an error or a result, and the same worker then reads the next
/// file: the process survived it.
fn survives(name: &str, bytes: &[u8]) -> Answer {
    let dir = tempfile::tempdir().unwrap();
    let hostile = fixtures::write(dir.path(), name, bytes);
    let good = Doc::new()
        .page(&["After the hostile file."])
        .write(dir.path(), "good.pdf");
    let (mut answers, status) = run_worker(&[request(&hostile), request(&good)], None);
    assert!(status.success(), "the worker exits normally: {status}");
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert!(answers[1].markdown().contains("After the hostile file."));
    answers.remove(0)
}

#[test]
fn a_cyclic_page_tree_gives_a_result_or_an_error_and_never_a_crash() {
    let answer = survives("cyclic.pdf", &fixtures::cyclic_page_tree());
    match (answer.done(), answer.error()) {
        (Some(done), None) => assert!(done.pages >= 1 && done.pages <= 3, "{done:?}"),
        (None, Some(error)) => assert_eq!(error.kind, ErrorKind::Damaged, "{error:?}"),
        other => panic!("neither a result nor an error: {other:?}"),
    }
}

#[test]
fn a_page_tree_ten_thousand_deep_is_damaged_at_its_page() {
    let answer = survives("deep.pdf", &fixtures::deep_page_tree(10_000));
    let error = answer.error().expect("an error");
    assert_eq!(error.kind, ErrorKind::Damaged);
    assert_eq!(error.page, Some(1));
    assert_eq!(
        error.message,
        "damaged or truncated: none of its 1 pages could be read"
    );
}

#[test]
fn bad_requests_missing_files_and_a_missing_pdf_engine_are_reported_and_the_worker_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = Doc::new().page(&["Text."]).write(dir.path(), "a.pdf");
    let txt = fixtures::write(dir.path(), "a.txt", b"plain words\n");
    let missing = dir.path().join("gone.pdf");
    let nowhere = dir.path().join("no-such-libpdfium.so");
    let lines = [
        "this is not JSON".to_string(),
        request(&missing),
        request(&pdf),
        request(&txt),
    ];
    let (answers, status) = run_worker(&lines, Some(nowhere.to_str().unwrap()));
    assert!(status.success());
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert_eq!(answers[0].error().unwrap().kind, ErrorKind::BadRequest);
    let gone = answers[1].error().unwrap();
    assert_eq!(gone.kind, ErrorKind::Unreadable);
    assert_eq!(
        gone.message,
        "cannot read the file: the file does not exist (moved or deleted?)"
    );
    let engine = answers[2].error().unwrap();
    assert_eq!(engine.kind, ErrorKind::Engine);
    assert!(
        engine.message.contains(nowhere.to_str().unwrap()) && engine.message.contains(PDFIUM_ENV),
        "{}",
        engine.message
    );
    assert_eq!(
        answers[3].markdown(),
        "plain words\n",
        "text needs no PDF engine"
    );
}

/// Runs one worker on `path` within `limits` and returns its answer and the worker's peak
/// resident memory in KiB (read from `/proc` while it still runs, after it answered).
fn answer_and_peak_memory(path: &Path, limits: Limits) -> (Answer, u64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_artifactflow-extract"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the worker starts");
    let mut stdin = child.stdin.take().unwrap();
    let line = serde_json::to_string(&Request {
        path: path.display().to_string(),
        limits,
    })
    .unwrap();
    writeln!(stdin, "{line}").unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answer = Answer {
        replies: Vec::new(),
    };
    loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the worker ended before answering"
        );
        let reply: Reply = serde_json::from_str(&line).unwrap();
        let ends = matches!(reply, Reply::Done { .. } | Reply::Error { .. });
        answer.replies.push(reply);
        if ends {
            break;
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    (answer, peak_kib)
}

/// Far below what unpacking the hostile entries would take (64 MiB).
const BOUNDED_KIB: u64 = 40 * 1024;

#[test]
fn a_zip_bomb_docx_is_refused_before_it_is_unpacked() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = ooxml::bomb(64 << 20);
    assert!(bomb.len() < 256 << 10, "tiny on disk: {} bytes", bomb.len());
    let path = fixtures::write(dir.path(), "bomb.docx", &bomb);
    let limits = Limits {
        min_unpacked_budget: 8 << 20,
        ..Limits::default()
    };
    let (answer, peak_kib) = answer_and_peak_memory(&path, limits);
    let error = answer.error().expect("an error");
    assert_eq!(error.kind, ErrorKind::Limit, "{error:?}");
    assert!(
        error
            .message
            .starts_with("the Word document would unpack to 67.1 MB, over the 8.4 MB allowed"),
        "{}",
        error.message
    );
    assert!(
        peak_kib < BOUNDED_KIB,
        "the worker's peak memory: {peak_kib} KiB"
    );
}

#[test]
fn a_zip_entry_larger_than_its_header_declares_is_stopped_at_the_declared_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixtures::write(dir.path(), "forged.docx", &ooxml::lying_header(64 << 20));
    let (answer, peak_kib) = answer_and_peak_memory(&path, Limits::default());
    let error = answer.error().expect("an error");
    assert_eq!(error.kind, ErrorKind::Limit, "{error:?}");
    assert_eq!(
        error.message,
        "the Word document's part word/document.xml unpacks to more than the 1 KB its \
         header declares (a forged zip); it is not read"
    );
    assert!(
        peak_kib < BOUNDED_KIB,
        "the worker's peak memory: {peak_kib} KiB"
    );
}

#[test]
fn a_zip_with_too_many_entries_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..20).map(|i| format!("word/part{i}.xml")).collect();
    let mut entries: Vec<(&str, &[u8])> = vec![("word/document.xml", b"<w:document/>")];
    entries.extend(names.iter().map(|n| (n.as_str(), &b"<x/>"[..])));
    let path = fixtures::write(dir.path(), "many.docx", &ooxml::zip_of(&entries));
    let limits = Limits {
        max_archive_entries: 10,
        ..Limits::default()
    };
    let (answer, _) = answer_and_peak_memory(&path, limits);
    let error = answer.error().expect("an error");
    assert_eq!(error.kind, ErrorKind::Limit);
    assert_eq!(
        error.message,
        "the Word document holds 21 parts, over the limit of 10 for one file"
    );
}
