//! `artifactflow-cli models …` as a user runs it, against a stand-in Hugging Face Hub on
//! 127.0.0.1 named by `HF_ENDPOINT`: a pull killed (`kill -9`) in the middle and run again
//! resumes with a `Range` request and ends with the Hub's sha256; the JSON of each command; the
//! exit codes of errors; a huge Hub answer refused at the cap; the token kept from plain http to
//! another computer; file names that would not work on every system refused.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use test_support::hub::{Behaviour, HubFile, StubHub};

const REPO: &str = "tester/Tiny-GGUF";
const FILE: &str = "tiny-Q4_K_M.gguf";

fn cli(home: &Path, hub: &StubHub) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME")
        .env("HF_ENDPOINT", &hub.url)
        .env_remove("HF_TOKEN")
        .arg("--home")
        .arg(home);
    cmd
}

fn json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pull_killed_midway_resumes_with_a_range_and_verifies() {
    let bytes = test_support::gguf::sized("llama", 1_500_000);
    let hub = StubHub::start(vec![HubFile::new(REPO, FILE, bytes.clone())]).await;
    // About 7 s for the whole file, so the kill lands in the middle.
    hub.set(Behaviour {
        rate: Some(200_000),
        ..Behaviour::default()
    });
    let home = tempfile::tempdir().unwrap();
    let part = home
        .path()
        .join("data/models/.downloads")
        .join(format!("{FILE}.part"));

    let mut child = cli(home.path(), &hub)
        .args(["models", "pull", &format!("{REPO}/{FILE}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some of the file is on disk.
    let started = Instant::now();
    let killed_at = loop {
        let len = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        if len >= 300_000 {
            break len;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the pull ended before it was killed"
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no bytes arrived"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(killed_at < bytes.len() as u64);

    // Not a model yet: listed as a download that has not finished.
    let list = json(cli(home.path(), &hub).args(["models", "list", "--json"]));
    assert_eq!(list["installed"].as_array().unwrap().len(), 0, "{list}");
    let partial = &list["downloads"][0];
    assert_eq!(partial["file"], FILE);
    assert!(partial["downloaded"].as_u64().unwrap() >= killed_at);

    // Run again, at full speed: it resumes where the part ends.
    hub.set(Behaviour::default());
    let on_disk = std::fs::metadata(&part).unwrap().len();
    let model =
        json(cli(home.path(), &hub).args(["models", "pull", &format!("{REPO}/{FILE}"), "--json"]));
    assert_eq!(model["sha256"], sha256(&bytes));
    assert_eq!(model["name"], "tiny-Q4_K_M");
    assert_eq!(model["info"]["architecture"], "llama");
    let ranges: Vec<Option<String>> = hub.downloads().into_iter().map(|r| r.range).collect();
    assert_eq!(ranges.first(), Some(&None));
    assert_eq!(
        ranges.last(),
        Some(&Some(format!("bytes={on_disk}-"))),
        "{ranges:?}"
    );
    let installed = home.path().join("data/models").join(FILE);
    assert_eq!(std::fs::read(&installed).unwrap(), bytes);
    assert!(!part.exists());

    let list = json(cli(home.path(), &hub).args(["models", "list", "--json"]));
    assert_eq!(list["installed"][0]["name"], "tiny-Q4_K_M");
    assert_eq!(list["installed"][0]["info"]["quantization"], "Q4_K_M");
    assert_eq!(list["installed"][0]["source"]["repo"], REPO);
    assert_eq!(list["downloads"].as_array().unwrap().len(), 0);

    // Removed: gone from the list.
    let removed = json(cli(home.path(), &hub).args(["models", "rm", "tiny-Q4_K_M", "--json"]));
    assert!(!removed["removed"].as_array().unwrap().is_empty());
    assert!(!installed.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn search_files_catalog_import_and_errors() {
    let bytes = test_support::gguf::tiny("qwen3", 32768, 7);
    let hub = StubHub::start(vec![HubFile::new(REPO, FILE, bytes.clone())]).await;
    let home = tempfile::tempdir().unwrap();

    let found = json(cli(home.path(), &hub).args(["models", "search", "tiny", "--json"]));
    assert_eq!(found[0]["id"], REPO);
    let files = json(cli(home.path(), &hub).args(["models", "files", REPO, "--json"]));
    assert_eq!(files[0]["path"], FILE);
    assert_eq!(files[0]["sha256"], sha256(&bytes));
    assert!(files[0]["fit"]["fit"].is_string());

    let catalog = json(cli(home.path(), &hub).args(["models", "catalog", "--json"]));
    let items = catalog["items"].as_array().unwrap();
    assert!(items.len() >= 8);
    assert!(items
        .iter()
        .all(|i| i["repo"].is_string() && i["fit"]["fit"].is_string()));
    assert!(catalog["machine"]["total_memory"].as_u64().unwrap() > 0);
    // The published tool-use check is listed with its entry, and the recommendation says why.
    let published = items
        .iter()
        .find(|i| i["check"].is_object())
        .expect("an entry with a published check");
    assert_eq!(published["check"]["here"], false);
    let out = cli(home.path(), &hub)
        .args(["models", "catalog"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with(published["id"].as_str().unwrap()))
        .unwrap();
    let asked = published["check"]["as_asked"].as_u64().unwrap() * 100
        / published["check"]["items"].as_u64().unwrap();
    assert!(line.contains(&format!("check {asked} %")), "{line}");
    assert!(text.contains("not checked"), "{text}");
    if catalog["recommendation"].is_string() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("recommended: "), "{err}");
    }

    // A file the Hub lacks: exit 1 with the reason, nothing installed.
    let out = cli(home.path(), &hub)
        .args(["models", "pull", &format!("{REPO}/missing-Q8_0.gguf")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has no file missing-Q8_0.gguf"), "{err}");

    // Import: a truncated file is refused with where it ends; a whole one is installed.
    let outside = tempfile::tempdir().unwrap();
    let cut = outside.path().join("cut.gguf");
    std::fs::write(&cut, &bytes[..120]).unwrap();
    let out = cli(home.path(), &hub)
        .args(["models", "import"])
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cut.gguf is damaged") && err.contains("of 120"),
        "{err}"
    );

    let good = outside.path().join("Mine.gguf");
    std::fs::write(&good, &bytes).unwrap();
    let model = json(
        cli(home.path(), &hub)
            .args(["models", "import", "--json"])
            .arg(&good),
    );
    assert_eq!(model["name"], "Mine");
    assert_eq!(model["info"]["context_length"], 32768);
    let list = json(cli(home.path(), &hub).args(["models", "list", "--json"]));
    assert_eq!(list["installed"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_hub_answer_fails_at_the_cap_with_the_endpoint_named() {
    let bytes = test_support::gguf::tiny("qwen3", 4096, 7);
    let hub = StubHub::start(vec![HubFile::new(REPO, FILE, bytes)]).await;
    hub.set(Behaviour {
        huge_json: Some(128 << 20),
        ..Behaviour::default()
    });
    let home = tempfile::tempdir().unwrap();
    for args in [
        vec!["models", "search", "tiny", "--json"],
        vec!["models", "files", REPO, "--json"],
    ] {
        let before = hub.huge_json_sent();
        let out = cli(home.path(), &hub).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&hub.url) && err.contains("8 MB") && err.contains("HF_ENDPOINT"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        let sent = hub.huge_json_sent() - before;
        assert!(sent < 40 << 20, "{args:?}: {sent} of 128 MB went out");
    }
}

/// The CLI with `HF_TOKEN` set (from the environment, as `ARTIFACTFLOW_SECRETS_FROM_ENV`
/// allows) and every plain-http request sent through `proxy` (the stand-in, as an HTTP proxy).
fn cli_with_token(home: &Path, endpoint: &str, proxy: &StubHub) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME")
        .env(
            "ARTIFACTFLOW_KEYRING_SERVICE",
            "artifactflow-models-cli-test",
        )
        .env("HF_ENDPOINT", endpoint)
        .env("ARTIFACTFLOW_SECRETS_FROM_ENV", "HF_TOKEN")
        .env("HF_TOKEN", "hf_very_secret_token")
        .env("HTTP_PROXY", &proxy.url)
        .env_remove("http_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env_remove("REQUEST_METHOD")
        .arg("--home")
        .arg(home);
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_goes_over_https_or_to_this_computer_only() {
    let bytes = test_support::gguf::tiny("qwen3", 4096, 7);
    let hub = StubHub::start(vec![HubFile::new(REPO, FILE, bytes)]).await;
    let home = tempfile::tempdir().unwrap();

    // A mirror on another computer over plain http (reached here through the stand-in as a
    // proxy): the listing works, without the token, and a warning says why.
    let mirror = "http://hub-mirror.example.test";
    let out = cli_with_token(home.path(), mirror, &hub)
        .args(["models", "files", REPO, "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let seen = hub.requests();
    assert!(
        !seen.is_empty()
            && seen
                .iter()
                .all(|r| r.host.as_deref() == Some("hub-mirror.example.test")),
        "{seen:?}"
    );
    assert!(seen.iter().all(|r| r.authorization.is_none()), "{seen:?}");
    assert!(
        err.contains("warning") && err.contains("HF_TOKEN") && err.contains("plain http"),
        "{err}"
    );
    assert!(!err.contains("hf_very_secret_token"), "{err}");

    // A gated repository there: refused, and the error says the token was kept back and why.
    hub.set(Behaviour {
        require_token: true,
        ..Behaviour::default()
    });
    let out = cli_with_token(home.path(), mirror, &hub)
        .args(["models", "pull", &format!("{REPO}/{FILE}")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("401") && err.contains("not sent") && err.contains("https"),
        "{err}"
    );
    assert!(!err.contains("hf_very_secret_token"), "{err}");
    assert!(hub.requests().iter().all(|r| r.authorization.is_none()));
    assert!(!home.path().join("data/models").join(FILE).exists());

    // The same stand-in on 127.0.0.1 (this computer): the token goes, and the pull works.
    let before = hub.requests().len();
    let out = cli_with_token(home.path(), &hub.url, &hub)
        .args(["models", "pull", &format!("{REPO}/{FILE}"), "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let local = &hub.requests()[before..];
    assert!(!local.is_empty());
    assert!(
        local
            .iter()
            .all(|r| r.authorization.as_deref() == Some("Bearer hf_very_secret_token")),
        "{local:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn names_that_would_not_work_on_every_system_are_refused_and_nothing_is_written() {
    let bytes = test_support::gguf::tiny("qwen3", 4096, 7);
    let hub = StubHub::start(vec![
        HubFile::new(REPO, "CON.gguf", bytes.clone()),
        HubFile::new(REPO, "a:b-Q4_K_M.gguf", bytes.clone()),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let models_dir = home.path().join("data/models");
    let nothing_written = || {
        !models_dir.exists()
            || std::fs::read_dir(&models_dir)
                .unwrap()
                .all(|e| e.unwrap().file_name().to_string_lossy().starts_with('.'))
    };

    for (target, says) in [
        (format!("{REPO}/CON.gguf"), "device"),
        (format!("{REPO}:a:b-Q4_K_M.gguf"), "':'"),
    ] {
        let out = cli(home.path(), &hub)
            .args(["models", "pull", &target])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{target}: {err}");
        assert!(
            err.contains(says) && err.contains("every system") && err.contains("such as"),
            "{target}: {err}"
        );
        assert!(nothing_written(), "{target}");
    }
    assert!(hub.requests().is_empty(), "{:?}", hub.requests());

    let outside = tempfile::tempdir().unwrap();
    let long = outside.path().join(format!("{}.gguf", "m".repeat(220)));
    std::fs::write(&long, &bytes).unwrap();
    let out = cli(home.path(), &hub)
        .args(["models", "import"])
        .arg(&long)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("200 bytes") && err.contains("rename"), "{err}");
    assert!(nothing_written());
    let list = json(cli(home.path(), &hub).args(["models", "list", "--json"]));
    assert_eq!(list["installed"].as_array().unwrap().len(), 0, "{list}");
}

/// A port of 127.0.0.1 that nothing listens on: bound, then closed.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The CLI with the Hub at `endpoint` and no proxy but `proxy`, when given (as `HTTP_PROXY`).
fn cli_at(home: &Path, endpoint: &str, proxy: Option<&str>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME")
        .env("HF_ENDPOINT", endpoint)
        .env_remove("HF_TOKEN");
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
        "REQUEST_METHOD",
    ] {
        cmd.env_remove(var);
    }
    if let Some(proxy) = proxy {
        cmd.env("HTTP_PROXY", proxy);
    }
    cmd.arg("--home").arg(home);
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hub_or_proxy_that_cannot_be_reached_is_one_line_saying_what_to_check() {
    let home = tempfile::tempdir().unwrap();

    // Nothing listens at HF_ENDPOINT: the error is the one sentence (after a pull's first
    // progress line).
    let endpoint = format!("http://127.0.0.1:{}", closed_port());
    let sentence = format!(
        "error: cannot reach the Hub that HF_ENDPOINT names ({endpoint}): the connection was \
         refused, nothing answers at that address; check that HF_ENDPOINT is right and its server \
         is running, then the internet connection and the proxy settings"
    );
    for args in [
        vec!["models", "search", "qwen"],
        vec!["models", "files", REPO],
        vec!["models", "pull", "qwen3-0.6b"],
    ] {
        let out = cli_at(home.path(), &endpoint, None)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.last(), Some(&sentence.as_str()), "{args:?}: {err}");
        let progress = usize::from(args[1] == "pull");
        assert_eq!(lines.len(), progress + 1, "{args:?}: {err}");
    }

    // The Hub is up, but the proxy named for it is not: the proxy is named (without its user
    // and password), and its settings are what to check.
    let hub = StubHub::start(vec![HubFile::new(
        REPO,
        FILE,
        test_support::gguf::tiny("qwen3", 4096, 7),
    )])
    .await;
    let proxy_port = closed_port();
    let out = cli_at(
        home.path(),
        &hub.url,
        Some(&format!("http://me:pr0xy-pass@127.0.0.1:{proxy_port}")),
    )
    .args(["models", "search", "tiny"])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: cannot reach the Hub that HF_ENDPOINT names ({}) through the proxy \
             http://127.0.0.1:{proxy_port}: it refused the connection; check the proxy settings \
             (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY) and that the proxy is running\n",
            hub.url
        )
    );
    assert!(hub.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pulled_file_other_than_its_catalogue_entry_is_installed_with_a_warning() {
    // A mirror serves a small llama file under the name of the catalogue's Gemma 3 1B.
    let (repo, file) = ("ggml-org/gemma-3-1b-it-GGUF", "gemma-3-1b-it-Q4_K_M.gguf");
    let bytes = test_support::gguf::sized("llama", 30_000);
    let hub = StubHub::start(vec![HubFile::new(repo, file, bytes.clone())]).await;
    let home = tempfile::tempdir().unwrap();

    let out = cli_at(home.path(), &hub.url, None)
        .args(["models", "pull", "gemma-3-1b"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let warning = format!(
        "warning: This file is a llama model of {:.1} KB, not the Gemma 3 1B Instruct (gemma3, \
         806.1 MB) the catalogue lists",
        bytes.len() as f64 / 1000.0
    );
    assert!(err.contains(&warning), "{err}");

    // The listing keeps saying so, and its JSON carries what the file is.
    let out = cli_at(home.path(), &hub.url, None)
        .args(["models", "list"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&warning),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let list = json(cli_at(home.path(), &hub.url, None).args(["models", "list", "--json"]));
    let mismatch = &list["installed"][0]["catalog_mismatch"];
    assert_eq!(mismatch["entry"], "gemma-3-1b");
    assert_eq!(mismatch["architecture"], "llama");
    assert_eq!(mismatch["expected_architecture"], "gemma3");
}

/// Removing a model that profiles run says which ones, in words and in the JSON: they have no
/// model until another is picked. `remove` is `rm`.
#[tokio::test(flavor = "multi_thread")]
async fn removing_a_model_says_which_profiles_ran_it() {
    let hub = StubHub::start(Vec::new()).await;
    let home = tempfile::tempdir().unwrap();
    let models_dir = home.path().join("data/models");
    std::fs::create_dir_all(&models_dir).unwrap();
    let bytes = test_support::gguf::tiny("qwen2", 4096, 15);
    for file in ["qwen-tiny.gguf", "spare.gguf"] {
        std::fs::write(models_dir.join(file), &bytes).unwrap();
    }
    let config = home.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("models.yaml"),
        "profiles:\n  - name: Local\n    api: local\n    model: qwen-tiny\n  \
         - name: Coder\n    api: local\n    model: qwen-tiny.gguf\n  \
         - name: cloud\n    api: openai\n    base_url: https://api.openai.com/v1\n    model: qwen-tiny\n",
    )
    .unwrap();

    let out = cli(home.path(), &hub)
        .args(["models", "remove", "qwen-tiny"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "removed {}",
            models_dir.join("qwen-tiny.gguf").display()
        )),
        "{err}"
    );
    assert!(
        err.contains(
            "The profiles “Local”, “Coder” used it; they have no model until you pick another \
             (Settings, or `model:` in models.yaml)."
        ),
        "{err}"
    );
    assert!(!models_dir.join("qwen-tiny.gguf").exists());

    // A model no profile runs: nothing to say about profiles.
    let spare = json(cli(home.path(), &hub).args(["models", "rm", "spare", "--json"]));
    assert_eq!(spare["profiles"], serde_json::json!([]));
    assert_eq!(
        spare["removed"],
        serde_json::json!([models_dir.join("spare.gguf")])
    );

    // The JSON lists them.
    std::fs::write(models_dir.join("qwen-tiny.gguf"), &bytes).unwrap();
    let removal = json(cli(home.path(), &hub).args(["models", "rm", "qwen-tiny.gguf", "--json"]));
    assert_eq!(removal["profiles"], serde_json::json!(["Local", "Coder"]));
    assert_eq!(removal["stopped_runs"], serde_json::json!([]));
    assert_eq!(removal["runtime_stopped"], false);
}
