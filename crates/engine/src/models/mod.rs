//! Language models: profiles from `config/models.yaml` and streaming chat clients.
//!
//! The run loop only sees [`ChatModel`]: send the conversation, receive the answer as text
//! chunks through a callback, get the whole answer with its finish reason and token usage.
//! Two dialects implement it: OpenAI-compatible chat completions (OpenAI, DeepSeek, Qwen,
//! Ollama, llama.cpp, vLLM, LM Studio, OpenRouter) and the Anthropic Messages API.
//!
//! [`client_for`] builds the client for a [`ModelProfile`] loaded by [`load_profiles`]; the
//! transport both dialects share (timeouts, retries, cancellation, redaction) is described in
//! the `http` module.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

mod anthropic;
pub mod discover;
mod http;
mod openai;
pub mod profiles;
mod sse;
pub mod window;
mod window_server;

pub use anthropic::{
    API_VERSION as ANTHROPIC_VERSION, DEFAULT_MAX_TOKENS as ANTHROPIC_DEFAULT_MAX_TOKENS,
};
pub use discover::{list_models, ModelList};
pub use http::RetryPolicy;
pub use profiles::{load_profiles, parse_profiles, Api, ModelProfile};

use crate::secrets::SecretResolver;

/// The client for `profile`, resolving its API key through `secrets` at each call (so a key
/// set while the app runs is used at once). A key that cannot be resolved fails the call with
/// [`ModelError::Config`] naming the secret to set.
pub fn client_for(profile: &ModelProfile, secrets: Arc<SecretResolver>) -> Arc<dyn ChatModel> {
    client_with_retries(profile, secrets, RetryPolicy::default())
}

/// [`client_for`] with a custom retry policy (tests use short delays).
pub fn client_with_retries(
    profile: &ModelProfile,
    secrets: Arc<SecretResolver>,
    policy: RetryPolicy,
) -> Arc<dyn ChatModel> {
    match profile.api {
        Api::Openai => Arc::new(http::HttpChatModel::new(
            profile.clone(),
            secrets,
            policy,
            openai::OpenAi,
        )),
        Api::Anthropic => Arc::new(http::HttpChatModel::new(
            profile.clone(),
            secrets,
            policy,
            anthropic::Anthropic,
        )),
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions (the agent's system prompt).
    System,
    /// The user, or the engine speaking for the tools (`<tool_result>` blocks).
    User,
    /// The model.
    Assistant,
}

/// One message of a conversation as sent to a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Author.
    pub role: Role,
    /// Text.
    pub content: String,
}

impl ChatMessage {
    /// A message with `role` and `content`.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: content.into(),
        }
    }
}

/// What to ask the model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The conversation, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// Overrides the profile's temperature.
    pub temperature: Option<f32>,
    /// Overrides the profile's max_tokens.
    pub max_tokens: Option<u32>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer (or hit a stop sequence).
    Stop,
    /// It hit its token limit: the answer is cut off.
    Length,
    /// Anything else the server said.
    Other(String),
}

/// Tokens used by one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the request.
    pub prompt_tokens: u32,
    /// Tokens in the answer.
    pub completion_tokens: u32,
}

/// The whole answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// Everything the model wrote.
    pub text: String,
    /// Why it stopped.
    pub finish_reason: FinishReason,
    /// Token usage, when the server reports it.
    pub usage: Option<Usage>,
}

/// Why a model call failed (after retries).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The cancellation token fired.
    #[error("cancelled")]
    Cancelled,
    /// The server answered with an error status.
    #[error("the model server answered HTTP {status}: {message}")]
    Http {
        /// HTTP status.
        status: u16,
        /// The server's message (secrets masked).
        message: String,
    },
    /// The server could not be reached.
    #[error("cannot reach the model server: {0}")]
    Connection(String),
    /// No data within the connect or idle timeout.
    #[error("the model server did not answer in time: {0}")]
    Timeout(String),
    /// The server sent something that is not the expected protocol.
    #[error("unexpected answer from the model server: {0}")]
    Protocol(String),
    /// The profile cannot be used (e.g. its API key is not set).
    #[error("{0}")]
    Config(String),
    /// The server sent more than one of the profile's [`crate::limits::StreamLimits`] allows;
    /// the text names the limit and the profile.
    #[error("{0}")]
    Limit(String),
    /// The server refused the request as longer than the model's context window (OpenAI's
    /// `context_length_exceeded`, llama.cpp's "exceeds the available context size",
    /// Anthropic's "prompt is too long", …). The run loop condenses the conversation and
    /// retries once (see `run::budget`).
    #[error("the request is too long for the model's context window: {0}")]
    ContextLength(String),
}

/// A chat model that streams its answer.
///
/// `on_text` receives each chunk of text as it arrives; the returned [`ChatResponse`] holds
/// the whole text. Implementations retry 429/5xx/connection errors with backoff (honouring
/// `Retry-After`) before giving up, stop promptly when `cancel` fires (returning
/// [`ModelError::Cancelled`]), and never put a secret in an error.
///
/// `on_text` is spelled `for<'a> FnMut(&'a str)` on purpose: `#[async_trait]` would otherwise
/// give the elided `&str` a named lifetime, so an implementation could only pass it strings
/// living as long as the call. Implementations spell it the same way.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// Send `request` and stream the answer.
    async fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_text: &mut (dyn for<'a> FnMut(&'a str) + Send),
    ) -> Result<ChatResponse, ModelError>;
}
