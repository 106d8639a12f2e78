//! `artifactflow-cli models …` as a user runs it, against a stand-in Hugging Face Hub on
//! 127.0.0.1 named by `HF_ENDPOINT`: a pull killed (`kill -9`) in the middle and run again
//! resumes with a `Range` request and ends with the Hub's sha256; the JSON of each command; the
//! exit codes of errors.

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
    assert!(!removed.as_array().unwrap().is_empty());
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
