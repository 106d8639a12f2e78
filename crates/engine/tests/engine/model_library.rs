//! The model library (`engine::api::models`) against a stand-in Hugging Face Hub on 127.0.0.1
//! (`test_support::hub`): pulls with their progress, resumed with `Range` after a cut, a pause
//! or a server that ignores ranges; the errors a Hub or a mirror can cause (404, an HTML page,
//! a wrong hash, 5xx, no tree API, answers of 128 MB); the token kept from other origins; file
//! names that would not work on every system; import of good, truncated and foreign files;
//! removal. Every test works on a real models folder of a test home.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::api::models;
use engine::context::AppContext;
use engine::models::library::{
    gguf, Hub, HubFailure, InstalledModel, LibraryError, ProgressSink, PullOptions, PullPhase,
    PullProgress, PullRequest,
};
use test_support::hub::{Behaviour, HubFile, StubHub};
use tokio_util::sync::CancellationToken;

const REPO: &str = "tester/Tiny-GGUF";
const FILE: &str = "tiny-q4_k_m.gguf";

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

struct Setup {
    _home: tempfile::TempDir,
    ctx: AppContext,
    stub: StubHub,
    hub: Hub,
    bytes: Vec<u8>,
}

async fn setup(extra: usize) -> Setup {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let bytes = test_support::gguf::sized("llama", extra);
    let stub = StubHub::start(vec![
        HubFile::new(REPO, FILE, bytes.clone()),
        HubFile::new("other/Nested-GGUF", "q8/nested-Q8_0.gguf", bytes.clone()),
    ])
    .await;
    let hub = Hub::new(&stub.url, None);
    Setup {
        _home: home,
        ctx,
        stub,
        hub,
        bytes,
    }
}

fn request() -> PullRequest {
    models::pull_request(&format!("{REPO}/{FILE}"), "main").unwrap()
}

fn quick() -> PullOptions {
    PullOptions {
        attempts: 4,
        backoff: Duration::from_millis(20),
        report_every: Duration::from_millis(10),
    }
}

type Seen = Arc<Mutex<Vec<PullProgress>>>;

fn recorder() -> (Seen, ProgressSink) {
    let seen: Seen = Arc::default();
    let sink = Arc::clone(&seen);
    (
        seen,
        Arc::new(move |p: &PullProgress| sink.lock().unwrap().push(p.clone())),
    )
}

async fn pull(s: &Setup, options: &PullOptions) -> Result<InstalledModel, LibraryError> {
    let (_, sink) = recorder();
    models::pull_with(
        &s.ctx,
        &s.hub,
        &request(),
        options,
        sink,
        &CancellationToken::new(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pull_installs_a_verified_model_with_what_its_header_says() {
    let s = setup(300_000).await;
    let (seen, sink) = recorder();
    let model = models::pull_with(
        &s.ctx,
        &s.hub,
        &request(),
        &quick(),
        sink,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(model.name, "tiny-q4_k_m");
    assert_eq!(model.size, s.bytes.len() as u64);
    assert_eq!(model.sha256.as_deref(), Some(sha256(&s.bytes).as_str()));
    let info = model.info.as_ref().expect("the header reads");
    assert_eq!(info.architecture.as_deref(), Some("llama"));
    assert_eq!(info.context_length, Some(4096));
    assert_eq!(info.quantization.as_deref(), Some("Q4_K_M"));
    assert!(info.has_chat_template);
    assert_eq!(model.catalog_mismatch, None, "a file of no catalogue entry");
    let source = model.source.as_ref().unwrap();
    assert_eq!((source.repo.as_str(), source.file.as_str()), (REPO, FILE));
    // The file is the Hub's, byte for byte, and the folder holds no leftovers.
    let on_disk = std::fs::read(s.ctx.paths().models_dir().join(FILE)).unwrap();
    assert_eq!(on_disk, s.bytes);
    let view = models::list(&s.ctx).unwrap();
    assert_eq!(view.installed.len(), 1);
    assert!(view.downloads.is_empty(), "{:?}", view.downloads);

    let phases: Vec<PullPhase> = seen.lock().unwrap().iter().map(|p| p.phase).collect();
    assert_eq!(phases.first(), Some(&PullPhase::Resolving));
    assert!(phases.contains(&PullPhase::Downloading), "{phases:?}");
    assert_eq!(
        &phases[phases.len() - 2..],
        &[PullPhase::Verifying, PullPhase::Done]
    );
    // One whole download, asked without a range; no token was sent (none set).
    let downloads = s.stub.downloads();
    assert_eq!(downloads.len(), 1, "{downloads:?}");
    assert_eq!(downloads[0].range, None);
    assert!(s.stub.requests().iter().all(|r| !r.authorized));

    // A second pull of the same file finds it installed and downloads nothing.
    let again = models::pull_with(
        &s.ctx,
        &s.hub,
        &request(),
        &quick(),
        recorder().1,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(again.sha256, model.sha256);
    assert_eq!(s.stub.downloads().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_cut_short_is_resumed_with_a_range_and_the_hash_still_matches() {
    let s = setup(400_000).await;
    s.stub.set(Behaviour {
        cut_after: Some(150_000),
        cut_times: 2,
        ..Behaviour::default()
    });
    let (seen, sink) = recorder();
    let model = models::pull_with(
        &s.ctx,
        &s.hub,
        &request(),
        &quick(),
        sink,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(model.sha256.as_deref(), Some(sha256(&s.bytes).as_str()));
    let ranges: Vec<Option<String>> = s.stub.downloads().into_iter().map(|r| r.range).collect();
    assert_eq!(
        ranges,
        vec![
            None,
            Some("bytes=150000-".to_string()),
            Some("bytes=300000-".to_string())
        ]
    );
    assert!(seen
        .lock()
        .unwrap()
        .iter()
        .any(|p| p.phase == PullPhase::Retrying && p.note.is_some()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_keeps_cutting_leaves_a_part_that_the_next_pull_resumes() {
    let s = setup(400_000).await;
    s.stub.set(Behaviour {
        cut_after: Some(100_000),
        cut_times: 0,
        ..Behaviour::default()
    });
    let err = pull(&s, &quick()).await.unwrap_err();
    let LibraryError::Interrupted {
        downloaded, total, ..
    } = &err
    else {
        panic!("expected an interrupted download, got {err:?}");
    };
    assert_eq!(*downloaded, 400_000, "four tries of 100,000 bytes each");
    assert_eq!(*total, s.bytes.len() as u64);
    assert!(err.to_string().contains("pull it again to resume"), "{err}");
    // Not a model; listed as a download on its way.
    let view = models::list(&s.ctx).unwrap();
    assert!(view.installed.is_empty());
    assert_eq!(view.downloads.len(), 1);
    assert_eq!(view.downloads[0].downloaded, 400_000);
    assert_eq!(view.downloads[0].source.repo, REPO);

    s.stub.set(Behaviour::default());
    let before = s.stub.downloads().len();
    let model = pull(&s, &quick()).await.unwrap();
    assert_eq!(model.sha256.as_deref(), Some(sha256(&s.bytes).as_str()));
    let resumed = &s.stub.downloads()[before];
    assert_eq!(resumed.range.as_deref(), Some("bytes=400000-"));
    assert!(models::list(&s.ctx).unwrap().downloads.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pause_keeps_the_part_and_a_server_ignoring_ranges_starts_it_over() {
    let s = setup(600_000).await;
    // About 3 s for the whole file: a pause lands in the middle.
    s.stub.set(Behaviour {
        rate: Some(200_000),
        ..Behaviour::default()
    });
    let cancel = CancellationToken::new();
    let (seen, sink) = recorder();
    let pausing = {
        let cancel = cancel.clone();
        let seen = Arc::clone(&seen);
        tokio::spawn(async move {
            // Pause once some bytes are on disk (what a user sees before clicking Pause).
            loop {
                let done = seen
                    .lock()
                    .unwrap()
                    .iter()
                    .any(|p| p.phase == PullPhase::Downloading && p.downloaded >= 100_000);
                if done {
                    cancel.cancel();
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let err = models::pull_with(&s.ctx, &s.hub, &request(), &quick(), sink, &cancel)
        .await
        .unwrap_err();
    pausing.await.unwrap();
    let LibraryError::Paused { downloaded, .. } = err else {
        panic!("expected a pause, got {err:?}");
    };
    assert!(downloaded >= 100_000 && downloaded < s.bytes.len() as u64);
    let view = models::list(&s.ctx).unwrap();
    assert!(view.installed.is_empty());
    assert_eq!(view.downloads[0].downloaded, downloaded);
    let progress = seen.lock().unwrap().clone();
    let last = progress
        .iter()
        .rev()
        .find(|p| p.phase == PullPhase::Downloading)
        .unwrap();
    assert!(
        last.bytes_per_sec > 0.0 && last.eta_secs.is_some(),
        "{last:?}"
    );

    // This mirror ignores Range: the resumed pull gets the whole file and starts over.
    s.stub.set(Behaviour {
        ignore_range: true,
        ..Behaviour::default()
    });
    let model = pull(&s, &quick()).await.unwrap();
    assert_eq!(model.sha256.as_deref(), Some(sha256(&s.bytes).as_str()));
    assert_eq!(
        std::fs::read(&model.path).unwrap(),
        s.bytes,
        "no byte of the old part is left in front"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hub_errors_are_clear_and_never_list_a_model() {
    let s = setup(50_000).await;

    s.stub.set(Behaviour {
        not_found: true,
        ..Behaviour::default()
    });
    let err = pull(&s, &quick()).await.unwrap_err().to_string();
    assert!(err.contains("404") && err.contains("not found"), "{err}");

    s.stub.set(Behaviour {
        html: true,
        ..Behaviour::default()
    });
    let err = pull(&s, &quick()).await.unwrap_err().to_string();
    assert!(err.contains("web page"), "{err}");

    let wrong = "f".repeat(64);
    s.stub.set(Behaviour {
        wrong_sha256: Some(wrong.clone()),
        ..Behaviour::default()
    });
    let err = pull(&s, &quick()).await.unwrap_err();
    assert!(
        matches!(&err, LibraryError::HashMismatch { expected, got, .. } if *expected == wrong && *got == sha256(&s.bytes)),
        "{err:?}"
    );
    assert!(err.to_string().contains("removed"), "{err}");
    // A wrong hash leaves no part to resume.
    let view = models::list(&s.ctx).unwrap();
    assert!(
        view.installed.is_empty() && view.downloads.is_empty(),
        "{view:?}"
    );

    // A file the repository does not have: the error lists the files it has.
    let missing = PullRequest {
        file: "nope-Q2_K.gguf".into(),
        ..request()
    };
    let err = models::pull_with(
        &s.ctx,
        &s.hub,
        &missing,
        &quick(),
        recorder().1,
        &CancellationToken::new(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("has no file nope-Q2_K.gguf") && err.contains(FILE),
        "{err}"
    );

    // 5xx twice, then fine: retried.
    s.stub.set(Behaviour {
        fail_times: 2,
        ..Behaviour::default()
    });
    let model = pull(&s, &quick()).await.unwrap();
    assert_eq!(model.sha256.as_deref(), Some(sha256(&s.bytes).as_str()));
    assert!(
        std::fs::read_dir(s.ctx.paths().models_dir().join(".downloads"))
            .unwrap()
            .next()
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_tree_api_the_file_headers_give_size_and_hash() {
    let s = setup(20_000).await;
    s.stub.set(Behaviour {
        no_tree: true,
        ..Behaviour::default()
    });
    let req = models::pull_request("other/Nested-GGUF/q8/nested-Q8_0.gguf", "").unwrap();
    assert_eq!(req.file, "q8/nested-Q8_0.gguf");
    let model = models::pull_with(
        &s.ctx,
        &s.hub,
        &req,
        &quick(),
        recorder().1,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(
        model.file, "nested-Q8_0.gguf",
        "a nested file lands at the folder's top"
    );
    assert_eq!(model.sha256.as_deref(), Some(sha256(&s.bytes).as_str()));
    assert!(s
        .stub
        .requests()
        .iter()
        .any(|r| r.method == "HEAD" && r.path.ends_with("/resolve/main/q8/nested-Q8_0.gguf")));
}

#[tokio::test(flavor = "multi_thread")]
async fn search_and_files_read_the_hub() {
    let s = setup(10_000).await;
    let repos = models::search(&s.hub, "tiny").await.unwrap();
    assert_eq!(repos.len(), 1);
    assert_eq!(repos[0].id, REPO);
    let files = models::files(&s.ctx, &s.hub, REPO, "main").await.unwrap();
    assert_eq!(files.len(), 1, "README.md is not a model: {files:?}");
    assert_eq!(files[0].file.path, FILE);
    assert_eq!(files[0].file.quantization.as_deref(), Some("Q4_K_M"));
    assert_eq!(
        files[0].file.sha256.as_deref(),
        Some(sha256(&s.bytes).as_str())
    );
    assert!(models::search(&s.hub, "  ").await.is_err());
    let err = models::files(&s.ctx, &s.hub, "not a repo", "main")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("owner/name"), "{err}");
    let err = models::files(&s.ctx, &s.hub, "nobody/nothing", "main")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("404"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_goes_to_the_hub_only_as_a_header() {
    let s = setup(5_000).await;
    let hub = Hub::new(&s.stub.url, Some("hf_secret_token".into()));
    assert!(!format!("{hub:?}").contains("hf_secret_token"));
    models::pull_with(
        &s.ctx,
        &hub,
        &request(),
        &quick(),
        recorder().1,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(s.stub.requests().iter().all(|r| r.authorized));
}

/// What a hostile or broken mirror sends: 128 MB answers, made as they are sent.
const HUGE_ANSWER: u64 = 128 << 20;
/// What may be in flight when the client stops reading: the cap (8 MB), the sockets' buffers
/// on both sides and a chunk or two. Far below the 128 MB on offer.
const MOST_READ: u64 = 40 << 20;

fn says_too_large(err: &str, endpoint: &str) {
    assert!(
        err.contains(endpoint) && err.contains("8 MB") && err.contains("HF_ENDPOINT"),
        "the error names the endpoint and the cap: {err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hub_answers_are_read_up_to_8_mb_and_refused_past_it() {
    let s = setup(5_000).await;
    for sized in [false, true] {
        // Chunked (the size shows only while reading), then with a Content-Length saying so.
        s.stub.set(Behaviour {
            huge_json: Some(HUGE_ANSWER),
            huge_json_sized: sized,
            ..Behaviour::default()
        });

        let before = s.stub.huge_json_sent();
        let err = match models::search(&s.hub, "tiny").await {
            Ok(found) => panic!("a 128 MB answer was read whole: {} results", found.len()),
            Err(e) => e,
        };
        says_too_large(&err.to_string(), &s.stub.url);
        let sent = s.stub.huge_json_sent() - before;
        assert!(
            sent < MOST_READ,
            "search: {sent} bytes went out (sized: {sized})"
        );

        let before = s.stub.huge_json_sent();
        let err = match models::files(&s.ctx, &s.hub, REPO, "main").await {
            Ok(found) => panic!("a 128 MB answer was read whole: {} files", found.len()),
            Err(e) => e,
        };
        says_too_large(&err.to_string(), &s.stub.url);
        let sent = s.stub.huge_json_sent() - before;
        assert!(
            sent < MOST_READ,
            "files: {sent} bytes went out (sized: {sized})"
        );

        // A pull asks the tree first: refused there, nothing is downloaded or written.
        let before = s.stub.huge_json_sent();
        let err = pull(&s, &quick()).await.unwrap_err();
        says_too_large(&err.to_string(), &s.stub.url);
        let sent = s.stub.huge_json_sent() - before;
        assert!(
            sent < MOST_READ,
            "pull: {sent} bytes went out (sized: {sized})"
        );
        assert!(s.stub.downloads().is_empty(), "{:?}", s.stub.downloads());
        let view = models::list(&s.ctx).unwrap();
        assert!(
            view.installed.is_empty() && view.downloads.is_empty(),
            "{view:?}"
        );
    }

    // The same Hub answering normally again: everything works.
    s.stub.set(Behaviour::default());
    assert_eq!(models::search(&s.hub, "tiny").await.unwrap()[0].id, REPO);
    pull(&s, &quick()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_is_not_carried_to_another_origin_by_a_redirect() {
    // The Hub sends every address to its CDN (here: another server, another port).
    let s = setup(5_000).await;
    let front = StubHub::start(Vec::new()).await;
    front.set(Behaviour {
        redirect_to: Some(s.stub.url.clone()),
        ..Behaviour::default()
    });
    let hub = Hub::new(&front.url, Some("hf_secret_token".into()));
    models::search(&hub, "tiny").await.unwrap();
    let model = models::pull_with(
        &s.ctx,
        &hub,
        &request(),
        &quick(),
        recorder().1,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(model.sha256.as_deref(), Some(sha256(&s.bytes).as_str()));
    let to_front = front.requests();
    assert!(to_front.len() >= 3, "{to_front:?}");
    assert!(to_front
        .iter()
        .all(|r| r.authorization.as_deref() == Some("Bearer hf_secret_token")));
    let elsewhere = s.stub.requests();
    assert!(!s.stub.downloads().is_empty(), "{elsewhere:?}");
    assert!(
        elsewhere.iter().all(|r| r.authorization.is_none()),
        "{elsewhere:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_file_name_must_work_on_every_system() {
    // Names a Hub repository may hold that Windows cannot (the folder may be synced there).
    let bad = [
        ("CON.gguf", "CON"),
        ("q/nul.tar.gguf", "NUL"),
        ("COM\u{b9}.gguf", "COM\u{b9}"),
        ("lpt0.gguf", "LPT0"),
        ("odd/a:b-Q4_K_M.gguf", "':'"),
        ("ask?.gguf", "'?'"),
    ];
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let bytes = test_support::gguf::sized("llama", 1_000);
    let stub = StubHub::start(
        bad.iter()
            .map(|(path, _)| HubFile::new(REPO, path, bytes.clone()))
            .collect(),
    )
    .await;
    let hub = Hub::new(&stub.url, None);
    for (path, what) in bad {
        let req = models::pull_request(&format!("{REPO}/{path}"), "main").unwrap();
        let err = models::pull_with(
            &ctx,
            &hub,
            &req,
            &quick(),
            recorder().1,
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, LibraryError::Invalid(_)), "{path}: {err:?}");
        assert!(
            text.contains(what) && text.contains("every system") && text.contains("such as"),
            "{path}: {text}"
        );
    }
    assert!(stub.requests().is_empty(), "{:?}", stub.requests());
    let models_dir = ctx.paths().models_dir();
    assert!(
        !models_dir.exists() || std::fs::read_dir(&models_dir).unwrap().next().is_none(),
        "nothing is written"
    );

    // Import: the file's own name is refused the same way (one made on any system).
    let outside = tempfile::tempdir().unwrap();
    let long = outside.path().join(format!("{}.gguf", "a".repeat(210)));
    std::fs::write(&long, test_support::gguf::tiny("qwen3", 4096, 7)).unwrap();
    let err = models::import(&ctx, &long).unwrap_err().to_string();
    assert!(err.contains("200 bytes") && err.contains("rename"), "{err}");
    #[cfg(unix)]
    for name in ["aux.gguf", "what:now.gguf", "tab\there.gguf"] {
        let file = outside.path().join(name);
        std::fs::write(&file, test_support::gguf::tiny("qwen3", 4096, 7)).unwrap();
        let err = models::import(&ctx, &file).unwrap_err().to_string();
        assert!(err.contains("every system"), "{name}: {err}");
    }
    assert!(
        !models_dir.exists()
            || std::fs::read_dir(&models_dir).unwrap().all(|e| e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')),
        "no model was written"
    );
    assert!(models::list(&ctx).unwrap().installed.is_empty());

    // Files already in the folder are looked up and removed by their name as it is: one dropped
    // in by hand with a name a pull would refuse, and one with two dots in a row (a portable
    // name, which an older check refused).
    std::fs::create_dir_all(&models_dir).unwrap();
    let mut dropped = vec!["odd..name.gguf"];
    if cfg!(unix) {
        dropped.push("by:hand.gguf");
    }
    for file in dropped {
        std::fs::write(models_dir.join(file), b"x").unwrap();
        let name = file.trim_end_matches(".gguf");
        assert!(models::list(&ctx)
            .unwrap()
            .installed
            .iter()
            .any(|m| m.name == name));
        let removed = models::remove(&ctx, name).unwrap();
        assert!(
            removed.removed.iter().any(|p| p.ends_with(file)),
            "{removed:?}"
        );
        assert!(!models_dir.join(file).exists());
    }
}

#[test]
fn import_reads_the_header_first_and_refuses_damaged_files_without_writing() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let good = test_support::gguf::tiny("qwen3", 40960, 7);

    // Cut inside the tokenizer's array: located.
    let cut = outside.path().join("cut.gguf");
    std::fs::write(&cut, &good[..150]).unwrap();
    let err = models::import(&ctx, &cut).unwrap_err();
    let LibraryError::Gguf(gguf::GgufError::Damaged { offset, size, .. }) = &err else {
        panic!("expected a damaged file, got {err:?}");
    };
    assert_eq!(*size, 150);
    assert!(*offset <= 150);
    assert!(err.to_string().contains("cut.gguf"), "{err}");

    // The header whole, the tensor data cut: still refused.
    let short = outside.path().join("short.gguf");
    std::fs::write(&short, &good[..good.len() - 40]).unwrap();
    let err = models::import(&ctx, &short).unwrap_err().to_string();
    assert!(err.contains("tensors need"), "{err}");

    // An HTML page saved as .gguf.
    let page = outside.path().join("page.gguf");
    std::fs::write(&page, "<!doctype html><html>Not found</html>").unwrap();
    let err = models::import(&ctx, &page).unwrap_err().to_string();
    assert!(
        err.contains("not a GGUF model file") && err.contains("web page"),
        "{err}"
    );

    // Absurd counts do not allocate or hang.
    let mut huge = good.clone();
    huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    let absurd = outside.path().join("absurd.gguf");
    std::fs::write(&absurd, &huge).unwrap();
    let err = models::import(&ctx, &absurd).unwrap_err().to_string();
    assert!(err.contains("more than the file can hold"), "{err}");

    assert!(models::list(&ctx).unwrap().installed.is_empty());

    // A whole file imports, with its sha256.
    let fine = outside.path().join("Qwen3-Tiny-Q8_0.gguf");
    std::fs::write(&fine, &good).unwrap();
    let model = models::import(&ctx, &fine).unwrap();
    assert_eq!(model.name, "Qwen3-Tiny-Q8_0");
    assert_eq!(model.sha256.as_deref(), Some(sha256(&good).as_str()));
    let info = model.info.unwrap();
    assert_eq!(info.architecture.as_deref(), Some("qwen3"));
    assert_eq!(info.context_length, Some(40960));
    assert_eq!(info.quantization.as_deref(), Some("Q8_0"));
    // Twice: refused, the first kept.
    assert!(models::import(&ctx, &fine)
        .unwrap_err()
        .to_string()
        .contains("already installed"));

    // A damaged file dropped into the folder by hand is listed with the reason.
    std::fs::write(ctx.paths().models_dir().join("broken.gguf"), &good[..100]).unwrap();
    let view = models::list(&ctx).unwrap();
    let broken = view.installed.iter().find(|m| m.name == "broken").unwrap();
    assert!(broken.info.is_none());
    assert!(broken.error.as_deref().unwrap().contains("damaged"));

    // Removal takes the file and what the library kept of it.
    let removed = models::remove(&ctx, "Qwen3-Tiny-Q8_0").unwrap();
    assert!(removed
        .removed
        .iter()
        .any(|p| p.ends_with("Qwen3-Tiny-Q8_0.gguf")));
    assert!(models::remove(&ctx, "Qwen3-Tiny-Q8_0").is_err());
    assert!(models::remove(&ctx, "../etc/passwd").is_err());
    assert_eq!(models::list(&ctx).unwrap().installed.len(), 1);
}

#[test]
fn the_catalogue_marks_what_fits_and_what_is_installed() {
    use engine::models::library::{catalog, Fit, Machine};
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let folder = ctx.paths().models_dir();
    std::fs::create_dir_all(&folder).unwrap();
    let first = &catalog()[0];
    std::fs::write(folder.join(&first.file), b"x").unwrap();
    let big = Machine {
        total_memory: 32 << 30,
        available_memory: 16 << 30,
        free_disk: 500 << 30,
        cores: 8,
    };
    let view = models::catalog_for(&ctx, big);
    assert!(view.items.iter().all(|i| i.fit.fit == Fit::Good));
    assert_eq!(view.items.iter().filter(|i| i.recommended).count(), 1);
    assert!(view.items[0].installed && !view.items[1].installed);
    let small = Machine {
        total_memory: 3 << 30,
        ..big
    };
    let view = models::catalog_for(&ctx, small);
    let recommended: Vec<_> = view.items.iter().filter(|i| i.recommended).collect();
    assert_eq!(recommended.len(), 1);
    assert_eq!(recommended[0].fit.fit, Fit::Good);
    assert!(view.items.iter().any(|i| i.fit.fit == Fit::TooBig));
    // Catalogue ids pull their repository's file.
    let req = models::pull_request(&first.id.to_uppercase(), "").unwrap();
    assert_eq!(
        (req.repo.as_str(), req.file.as_str()),
        (first.repo.as_str(), first.file.as_str())
    );
    assert!(models::pull_request("nonsense", "")
        .unwrap_err()
        .to_string()
        .contains(&first.id));
}

/// A port of 127.0.0.1 that nothing listens on: bound, then closed.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// `text`, an error for a person, holds none of the transport's own words, nor `secret`.
fn says_no_raw_chain(text: &str, secret: &str) {
    for raw in [
        "os error",
        "tcp connect error",
        "error sending request",
        "client error",
        "Connection refused",
        secret,
    ] {
        assert!(!text.contains(raw), "{raw:?} in: {text}");
    }
    assert!(!text.contains('\n'), "one line: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hub_nothing_answers_at_is_one_sentence_saying_what_to_check() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let endpoint = format!("http://127.0.0.1:{}", closed_port());
    let secret = "hf_never_in_an_error";
    let hub = Hub::new(&endpoint, Some(secret.into()));

    let search = models::search(&hub, "qwen").await.unwrap_err();
    let files = models::files(&ctx, &hub, REPO, "main").await.unwrap_err();
    let pulled = models::pull_with(
        &ctx,
        &hub,
        &request(),
        &quick(),
        recorder().1,
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    for err in [&search, &files, &pulled] {
        assert_eq!(err.hub_failure(), Some(HubFailure::Refused), "{err:?}");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "cannot reach the Hub that HF_ENDPOINT names ({endpoint}): the connection was \
                 refused"
            )),
            "{text}"
        );
        assert!(
            text.contains("check that HF_ENDPOINT is right")
                && text.contains("internet connection")
                && text.contains("proxy settings"),
            "{text}"
        );
        says_no_raw_chain(&text, secret);
    }
    // Nothing was listed or kept.
    let view = models::list(&ctx).unwrap();
    assert!(view.installed.is_empty() && view.downloads.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn hub_failures_are_told_apart_a_name_not_found_tls_and_a_hub_that_never_answers() {
    // A name that never resolves (RFC 2606 keeps .invalid out of the DNS).
    let hub = Hub::new("https://hub.invalid", None);
    let err = models::search(&hub, "qwen").await.unwrap_err();
    assert_eq!(err.hub_failure(), Some(HubFailure::NameNotFound), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("the name hub.invalid could not be looked up")
            && text.contains("HF_ENDPOINT"),
        "{text}"
    );
    says_no_raw_chain(&text, "-");

    // https to a server that speaks plain http: the secure connection fails.
    let s = setup(1_000).await;
    let https = s.stub.url.replace("http://", "https://");
    let err = models::search(&Hub::new(&https, None), "tiny")
        .await
        .unwrap_err();
    assert_eq!(err.hub_failure(), Some(HubFailure::Tls), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains(&https)
            && text.contains("the secure connection failed")
            && text.contains("https or http"),
        "{text}"
    );
    says_no_raw_chain(&text, "-");

    // A server that takes the connection and never answers: no answer in time.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", silent.local_addr().unwrap());
    let holding = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let hub = Hub::new(&address, None).with_answer_timeout(Duration::from_millis(300));
    let err = models::search(&hub, "qwen").await.unwrap_err();
    holding.abort();
    assert_eq!(err.hub_failure(), Some(HubFailure::Timeout), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "the Hub that HF_ENDPOINT names ({address}) did not answer in time"
        )),
        "{text}"
    );
    says_no_raw_chain(&text, "-");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_other_than_its_catalogue_entry_is_installed_saying_what_it_really_is() {
    use engine::models::library::catalog;
    let gemma = catalog::find("gemma-3-1b").unwrap();
    assert_eq!(gemma.architecture, "gemma3");
    // A mirror serves a small llama file under the Gemma entry's name.
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let bytes = test_support::gguf::sized("llama", 30_000);
    let stub = StubHub::start(vec![HubFile::new(&gemma.repo, &gemma.file, bytes.clone())]).await;
    let hub = Hub::new(&stub.url, None);

    let req = models::pull_request("gemma-3-1b", "").unwrap();
    assert_eq!(req.catalog_id.as_deref(), Some("gemma-3-1b"));
    let model = models::pull_with(
        &ctx,
        &hub,
        &req,
        &quick(),
        recorder().1,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let mismatch = model
        .catalog_mismatch
        .as_ref()
        .expect("the model says it is not the entry's file");
    assert_eq!(mismatch.entry, "gemma-3-1b");
    assert_eq!(mismatch.architecture.as_deref(), Some("llama"));
    assert_eq!(mismatch.expected_architecture, "gemma3");
    assert_eq!(mismatch.size, bytes.len() as u64);
    assert_eq!(mismatch.expected_size, gemma.size);
    assert!(
        mismatch.message.starts_with(&format!(
            "This file is a llama model of {:.1} KB, not the {} (gemma3, 806.1 MB) the catalogue \
             lists",
            bytes.len() as f64 / 1000.0,
            gemma.name
        )),
        "{}",
        mismatch.message
    );
    // The listing keeps saying so, and the file is what its header says.
    let listed = models::list(&ctx).unwrap().installed;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].catalog_mismatch.as_ref(), Some(mismatch));
    assert_eq!(
        listed[0].info.as_ref().unwrap().architecture.as_deref(),
        Some("llama")
    );

    // The entry's repository and file named by path are the entry's file too.
    let by_path = models::pull_request(&format!("{}/{}", gemma.repo, gemma.file), "").unwrap();
    assert_eq!(by_path.catalog_id.as_deref(), Some("gemma-3-1b"));
    // A file of no entry is compared with nothing.
    assert_eq!(request().catalog_id, None);
}
