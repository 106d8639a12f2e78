//! A server's secret where a text walk does not look: as an object key of its structured
//! content and its `_meta`, inside a text blob, inside a binary blob and inside an image's
//! bytes. Through a whole run (the scripted model, native tool calls, the noisy server of
//! `tests/mcp/noisy.mjs` over stdio with `API_KEY` from a `config/.env` secret), the secret
//! reaches neither the model, the events, the artifacts nor the database file: keys are masked
//! (two keys that become the same are both kept), the text blob is masked, the binary blob and
//! the image are withheld with a note, and a clean image is still stored.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use engine::artifacts::ListFilter;
use engine::conversations::RunStatus;
use engine::engine::EngineOptions;
use engine::events::EngineEvent;
use engine::mcp::client::WITHHELD;
use engine::mcp::ServerStatus;
use engine::paths::AppPaths;
use engine::run::RunRequest;
use engine::secrets::MASK;
use serde_json::json;
use test_support::{ScriptedModel, Turn};
use tokio_util::sync::CancellationToken;

use crate::support::*;

const KEY: &str = "sk-blob-Zq7Yw3Xv9Tn2Lm5Rk8";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The key and the spellings of it a leak would take here: base64 alone (the blobs travel as
/// base64), and the part of its base64 that stays the same inside a longer blob, at each of
/// the three byte alignments.
fn spellings(key: &str) -> Vec<String> {
    let mut forms = vec![
        key.to_string(),
        STANDARD.encode(key),
        STANDARD_NO_PAD.encode(key),
        URL_SAFE_NO_PAD.encode(key),
    ];
    for offset in 0..3usize {
        let mut shifted = vec![b'x'; offset];
        shifted.extend_from_slice(key.as_bytes());
        let encoded = STANDARD_NO_PAD.encode(&shifted);
        let start = offset.div_ceil(3) * 4;
        let end = shifted.len() / 3 * 4;
        forms.push(encoded[start..end].to_string());
    }
    forms
}

/// Every file under `dir` (the database, its WAL) holding any of `needles`, with the needle.
fn files_holding(dir: &Path, needles: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needles));
            continue;
        }
        let bytes = std::fs::read(&path).unwrap_or_default();
        for needle in needles {
            if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                found.push(format!("{} holds `{needle}`", path.display()));
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_as_a_key_in_a_blob_or_in_an_image_reaches_neither_model_events_artifacts_nor_database(
) {
    everything_js(); // the same install provides the SDK the script uses
    let wire = engine::models::wire_tool_name("noisy.keys-and-blobs").into_owned();
    let model = ScriptedModel::start(vec![
        Turn::text("Fetching.").with_call(&wire, "{}"),
        Turn::text("Done."),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config");
    engine::paths::seed_config(&config).unwrap();
    write(
        &config.join("models.yaml"),
        &format!(
            "profiles:\n  - name: default\n    api: openai\n    base_url: \"{}\"\n    model: scripted\n    tool_calls: native\n",
            model.openai_base_url()
        ),
    );
    write(&config.join(".env"), &format!("MCP_BLOB_KEY={KEY}\n"));
    let script = test_servers_dir().join("noisy.mjs");
    write(
        &config.join("mcp.json"),
        &json!({"mcpServers": {"noisy": {
            "command": "node",
            "args": [script.display().to_string()],
            "env": {"API_KEY": "{{MCP_BLOB_KEY}}"},
            "permission": "auto",
        }}})
        .to_string(),
    );
    write(
        &config.join("agents/tester.md"),
        "---\nname: tester\ndescription: Test agent\nmodel: default\ntools:\n  noisy.keys-and-blobs: auto\nmax_tool_rounds: 2\n---\nYou are the tester.\n",
    );
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = {
        let events = events.clone();
        move |e: EngineEvent| {
            events
                .lock()
                .unwrap()
                .push(serde_json::to_string(&e).unwrap())
        }
    };
    let paths = AppPaths::resolve(Some(home.path())).unwrap();
    let engine = engine::Engine::open_with(
        paths.clone(),
        Arc::new(sink),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap();
    match engine
        .mcp()
        .wait_settled("noisy", Duration::from_secs(30))
        .await
        .unwrap()
    {
        ServerStatus::Ready { .. } => {}
        other => panic!("noisy is not ready: {other:?}"),
    }
    let request = RunRequest {
        conversation_id: "conv".into(),
        agent: "tester".into(),
        task: "Fetch everything".into(),
    };
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        engine.runner().run(request, CancellationToken::new()),
    )
    .await
    .expect("the run ends");
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let results = requests[1].tool_results();
    let (_, result) = results.last().expect("the call's result went to the model");
    // The structured content with its keys masked, both colliding keys kept.
    assert!(result.contains(&format!("\"{MASK}\": \"top\"")), "{result}");
    assert!(
        result.contains(&format!("\"{MASK}\": \"second\"")),
        "{result}"
    );
    assert!(
        result.contains(&format!("\"{MASK} (2)\": \"first\"")),
        "{result}"
    );
    // The binary blob and the image with the key are withheld, saying why.
    assert!(
        result.contains(&format!("[image (image/png): {WITHHELD}]")),
        "{result}"
    );
    assert!(
        result.contains(&format!(
            "[resource file:///data.bin (application/octet-stream): {WITHHELD}]"
        )),
        "{result}"
    );
    assert!(WITHHELD.contains("it contained a secret of the server's configuration"));

    // The artifacts: the text blob masked, the clean image; nothing else.
    let store = engine.ctx.artifact_store();
    let listed = store
        .list(
            &ListFilter {
                conversation_id: Some("conv".into()),
                ..Default::default()
            },
            50,
            0,
        )
        .unwrap();
    let mut kinds: Vec<String> = listed
        .items
        .iter()
        .map(|a| a.artifact.content_type.clone())
        .collect();
    kinds.sort();
    assert_eq!(kinds, ["image/png", "text/plain"], "{listed:?}");
    for summary in &listed.items {
        let (artifact, bytes) = store.bytes("conv", &summary.artifact.id).unwrap();
        if artifact.content_type == "text/plain" {
            assert_eq!(
                String::from_utf8(bytes.clone()).unwrap(),
                format!("notes: the key is {MASK}\n")
            );
        } else {
            assert!(
                bytes.windows(9).any(|w| w == b"a red dot"),
                "the clean image is stored whole"
            );
        }
    }

    let forms = spellings(KEY);
    let sent: Vec<String> = requests.iter().map(|r| r.body.to_string()).collect();
    let events = events.lock().unwrap().join("\n");
    assert!(
        events.contains("here is everything"),
        "the events carry the result"
    );
    for form in &forms {
        for (i, body) in sent.iter().enumerate() {
            assert!(!body.contains(form), "request {i} holds `{form}`: {body}");
        }
        assert!(!events.contains(form), "the events hold `{form}`: {events}");
    }
    engine.mcp().stop_all();
    drop(engine);
    let stored = files_holding(&paths.data_dir, &forms);
    assert!(stored.is_empty(), "{stored:?}");
}
