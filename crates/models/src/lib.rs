//! # ArtifactFlow model clients
//!
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

#![warn(missing_docs)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

mod anthropic;
pub mod discover;
mod http;
pub mod library;
pub mod local;
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
pub use profiles::{
    load_profiles, parse_profiles, Api, ModelProfile, Switch, ToolCallMode, ToolFamily,
};

use crate::secrets::SecretResolver;

// The floors below, under the paths this crate's modules name them by.
use artifactflow_ground::{ids, limits, util};
use artifactflow_platform::{config_error, net, secrets, yaml};

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
        Api::Local => Arc::new(local::LocalModel::new(profile.clone(), secrets)),
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions (the agent's system prompt).
    System,
    /// The user, or the engine speaking for the tools (`<tool_result>` blocks, notes).
    User,
    /// The model.
    Assistant,
    /// The result of one native tool call ([`ChatMessage::tool_call_id`] names the call):
    /// a `tool` message (OpenAI) or a `tool_result` block (Anthropic).
    Tool,
}

/// A tool call made through the API's native tool calling: the provider's id, the tool's
/// name and its arguments as the JSON text the model wrote (possibly broken: the parser's
/// `args` module reads it as a careful person would).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NativeCall {
    /// The provider's id (`call_…`, `toolu_…`); the engine makes one when a server sends none.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments' JSON text.
    pub arguments: String,
}

/// One message of a conversation as sent to a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Author.
    pub role: Role,
    /// Text.
    pub content: String,
    /// An assistant message's native tool calls (after its text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<NativeCall>,
    /// For [`Role::Tool`]: the id of the call this is the result of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    /// A message with `role` and `content`.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// The result of native call `id`.
    pub fn tool_result(id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage {
            tool_call_id: Some(id.into()),
            ..ChatMessage::new(Role::Tool, content)
        }
    }
}

/// The name a tool goes by in native tool calling. Both APIs accept only `[A-Za-z0-9_-]`, at
/// most 64 characters, while tool names may hold `.` and `:` (an MCP server's tools are
/// `server.tool`) and be longer: such a name is sanitised and given a short digest of the
/// real name, so it stays unique and the same in every request and in the history. Names
/// already acceptable are sent as they are.
pub fn wire_tool_name(name: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 64;
    let safe = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !name.is_empty() && name.len() <= MAX && name.chars().all(safe) {
        return name.into();
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(name.as_bytes());
    let tag: String = digest[..3].iter().map(|b| format!("{b:02x}")).collect();
    let clean: String = name
        .chars()
        .map(|c| if safe(c) { c } else { '_' })
        .take(MAX - tag.len() - 1)
        .collect();
    format!("{clean}_{tag}").into()
}

/// A tool offered to the model through native tool calling: name, description and the JSON
/// Schema of its arguments (see [`artifactflow_ground::tool_spec::ToolSpec::json_schema`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of an object holding its parameters.
    pub parameters: serde_json::Value,
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
    /// Tools offered through native tool calling (none: the API's `tools` field is left out).
    pub tools: Vec<ToolDefinition>,
    /// A grammar the answer's tool calls follow (guided calls), when the profile asks for one.
    pub guide: Option<Guide>,
}

/// A grammar for the model's sampler: GBNF text (rule `root`) and the regular expressions that
/// turn it on (empty: from the first token). Sent in llama.cpp's fields (`grammar`,
/// `grammar_lazy`, `grammar_triggers`), which the app's runtime and llama.cpp's server read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Guide {
    /// The grammar.
    pub grammar: String,
    /// Trigger patterns of a lazy grammar.
    pub triggers: Vec<String>,
}

/// What arrives while an answer streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streamed<'a> {
    /// Text of the answer.
    Text(&'a str),
    /// A native tool call began: its position among the answer's native calls (0-based) and
    /// its name, known from its first delta.
    CallStarted {
        /// Position among the answer's native calls.
        index: usize,
        /// The tool's name.
        name: &'a str,
    },
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
    /// Its native tool calls, in order.
    pub tool_calls: Vec<NativeCall>,
    /// Why it stopped.
    pub finish_reason: FinishReason,
    /// Token usage, when the server reports it.
    pub usage: Option<Usage>,
    /// The answer ends with a call written under the request's grammar (guided calls; the
    /// app's runtime reports it): the last call in its text is that call.
    pub guided: bool,
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
/// `on_event` receives each chunk of text, and the start of each native tool call, as they
/// arrive; the returned [`ChatResponse`] holds the whole text and the calls. Implementations retry 429/5xx/connection errors with backoff (honouring
/// `Retry-After`) before giving up, stop promptly when `cancel` fires (returning
/// [`ModelError::Cancelled`]), and never put a secret in an error.
///
/// `on_text` is spelled `for<'a> FnMut(&'a str)` on purpose: `#[async_trait]` would otherwise
/// give the elided `&str` a named lifetime, so an implementation could only pass it strings
/// living as long as the call. Implementations spell it the same way.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// Send `request` and stream the answer: its text and its native calls' starts.
    async fn stream_events(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_event: &mut (dyn for<'a> FnMut(Streamed<'a>) + Send),
    ) -> Result<ChatResponse, ModelError>;

    /// Send `request` and stream the answer's text.
    async fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_text: &mut (dyn for<'a> FnMut(&'a str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        let mut on_event = |event: Streamed<'_>| {
            if let Streamed::Text(text) = event {
                on_text(text);
            }
        };
        self.stream_events(request, cancel, &mut on_event).await
    }
}

#[cfg(test)]
mod tests {
    use super::wire_tool_name;

    #[test]
    fn wire_tool_names_are_safe_unique_and_stable() {
        assert_eq!(wire_tool_name("web_search"), "web_search");
        let dotted = wire_tool_name("github.create_issue");
        assert!(dotted.starts_with("github_create_issue_"), "{dotted}");
        assert_eq!(dotted, wire_tool_name("github.create_issue"));
        assert_ne!(dotted, wire_tool_name("github:create_issue"));
        assert_ne!(wire_tool_name("github_create_issue"), dotted);
        let long_name = format!("server.{}", "x".repeat(100));
        let long = wire_tool_name(&long_name);
        assert!(long.len() <= 64, "{long}");
        for name in [dotted.as_ref(), long.as_ref()] {
            assert!(name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        }
    }
}
