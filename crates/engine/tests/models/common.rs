//! Shared set-up: a profile pointing at a scripted server, secrets from a `.env` file, and a
//! runner collecting the streamed chunks.

use std::sync::Arc;
use std::time::Duration;

use engine::models::{
    client_with_retries, Api, ChatMessage, ChatModel, ChatRequest, ChatResponse, ModelError,
    ModelProfile, RetryPolicy, Role,
};
use engine::secrets::SecretResolver;
use tokio_util::sync::CancellationToken;

/// A generous bound on any single test step (never a timing assertion).
pub const STEP: Duration = Duration::from_secs(30);

/// Secrets from a fresh `.env` holding `pairs` (names unique to these tests, so the process
/// environment cannot interfere); the keyring is not used.
pub fn secrets(pairs: &[(&str, &str)]) -> (tempfile::TempDir, Arc<SecretResolver>) {
    let dir = tempfile::tempdir().unwrap();
    let dotenv = dir.path().join(".env");
    let text: String = pairs.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    std::fs::write(&dotenv, text).unwrap();
    (dir, Arc::new(SecretResolver::new(None, Some(dotenv))))
}

/// A profile for `api` at `base_url` using the secret `key_name`, if any.
pub fn profile(api: Api, base_url: &str, key_name: Option<&str>) -> ModelProfile {
    let mut p = ModelProfile::new("test", api, base_url, "scripted-model");
    p.api_key = key_name.map(|k| format!("{{{{{k}}}}}"));
    p
}

/// Retries without long waits.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(40),
        max_retry_after: Duration::from_secs(5),
    }
}

/// A client for `profile` with fast retries.
pub fn client(profile: &ModelProfile, secrets: Arc<SecretResolver>) -> Arc<dyn ChatModel> {
    client_with_retries(profile, secrets, fast_retries())
}

/// A system prompt and one user message.
pub fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::new(Role::System, "You are terse."),
            ChatMessage::new(Role::User, "Say hello."),
        ],
        ..ChatRequest::default()
    }
}

/// Run one call; returns the result and the chunks `on_text` received.
pub async fn run(
    model: &dyn ChatModel,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> (Result<ChatResponse, ModelError>, Vec<String>) {
    let mut chunks = Vec::new();
    let mut on_text = |t: &str| chunks.push(t.to_string());
    let result = tokio::time::timeout(STEP, model.stream(request, cancel, &mut on_text))
        .await
        .expect("the call ends within the test's bound");
    (result, chunks)
}

/// [`run`] with a fresh token.
pub async fn call(model: &dyn ChatModel) -> (Result<ChatResponse, ModelError>, Vec<String>) {
    run(model, &request(), &CancellationToken::new()).await
}
