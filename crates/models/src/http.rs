//! The HTTP transport both dialects share: key resolution, timeouts, retries, cancellation,
//! server-sent events, and redaction of every error.
//!
//! How one call goes:
//! 1. The profile's `api_key` template is resolved (keyring → the listed environment variables
//!    → `.env`); an unresolved one is a [`ModelError::Config`] naming the secret and every way
//!    to set it ([`crate::secrets::how_to_set`]).
//! 2. The request is sent. Waiting for the answer's headers, and then for each chunk of the
//!    body, is bounded by the profile's idle timeout; the cancellation token is watched the
//!    whole time (also while waiting between retries).
//! 3. A 429, a 5xx or a connection failure is retried with exponential backoff and jitter (or
//!    after the server's `Retry-After`), up to [`RetryPolicy::max_attempts`] attempts — but never
//!    once text (or a tool call) has reached the caller, since the caller has already shown it.
//! 4. A JSON answer (a server ignoring `stream: true`) is accepted whole; otherwise the body is
//!    read as server-sent events and each dialect turns events into [`Delta`]s.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::profiles::ModelProfile;
use super::sse::{SseDecoder, SseEvent};
use super::{
    ChatModel, ChatRequest, ChatResponse, FinishReason, ModelError, NativeCall, Streamed, Usage,
};
use crate::limits::{human_bytes, Limit, LimitExceeded, StreamLimits};
use crate::secrets::{Redactor, SecretResolver};

/// Largest whole-JSON answer read.
const MAX_JSON_BYTES: usize = 32 * 1024 * 1024;
/// Largest error body read.
const MAX_ERROR_BYTES: usize = 64 * 1024;
/// Characters of a server's error message kept.
const ERROR_CHARS: usize = 500;
/// Bytes of a non-SSE body kept in case it turns out to be a JSON answer.
const MAX_SNIFF_BYTES: usize = 1024 * 1024;
/// Connect timeout (or the idle timeout when shorter).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How failed calls are retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// Delay before the first retry; doubles each time (with jitter: 50–100 % of it).
    pub base_delay: Duration,
    /// Upper bound of the backoff delay.
    pub max_delay: Duration,
    /// A `Retry-After` longer than this is not waited for: the call fails at once.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The backoff before retry number `retry` (1-based), jittered.
    fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << (retry - 1).min(16))
            .min(self.max_delay);
        let unit = getrandom::u32().unwrap_or(u32::MAX / 2) as f64 / u32::MAX as f64;
        exp.mul_f64(0.5 + unit / 2.0)
    }
}

/// What a dialect reads out of one stream event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Delta {
    /// Text of the answer.
    Text(String),
    /// A piece of native tool call number `index` (the dialect's own numbering: OpenAI's
    /// `tool_calls[].index`, Anthropic's content block index): its id and name when first
    /// seen, then pieces of its arguments' JSON text.
    CallPart {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: Option<String>,
    },
    /// Why the model stopped.
    Finish(FinishReason),
    /// Token counts (either may be reported separately).
    Usage {
        prompt: Option<u32>,
        completion: Option<u32>,
    },
    /// The answer's end was written under the request's grammar (see [`ChatResponse::guided`]).
    Guided,
    /// The stream is complete.
    Done,
    /// The server reported an error inside the stream.
    Error {
        status: Option<u16>,
        message: String,
    },
}

/// The parts that differ between OpenAI-compatible and Anthropic servers.
pub(crate) trait Dialect: Send + Sync + 'static {
    /// The endpoint for `base_url`.
    fn url(&self, base_url: &str) -> String;
    /// Headers to send, with the resolved key when there is one.
    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)>;
    /// The JSON body.
    fn body(&self, profile: &ModelProfile, request: &ChatRequest) -> Value;
    /// Read one event; `Err` is a protocol error message.
    fn decode_event(&self, event: &SseEvent) -> Result<Vec<Delta>, String>;
    /// Read a whole (non-streamed) JSON answer; `Err` is a protocol error message.
    fn decode_complete(&self, body: &Value) -> Result<ChatResponse, String>;
}

/// A [`ChatModel`] speaking `D` over HTTP.
pub(crate) struct HttpChatModel<D> {
    profile: ModelProfile,
    secrets: Arc<SecretResolver>,
    client: reqwest::Client,
    policy: RetryPolicy,
    dialect: D,
    /// A key given by the caller rather than named by the profile (the local runtime's
    /// per-launch key); masked like any other.
    given_key: Option<String>,
}

enum Failure {
    /// Worth another attempt (unless text was already streamed).
    Retry {
        error: ModelError,
        retry_after: Option<Duration>,
    },
    /// Final.
    Fatal(ModelError),
}

impl<D: Dialect> HttpChatModel<D> {
    pub(crate) fn new(
        profile: ModelProfile,
        secrets: Arc<SecretResolver>,
        policy: RetryPolicy,
        dialect: D,
    ) -> Self {
        // A model call may carry a key in any header: its redirects never leave the origin.
        let client = crate::net::client_builder(crate::net::Secrets::Carried)
            .connect_timeout(CONNECT_TIMEOUT.min(profile.idle_timeout()))
            .build()
            .unwrap_or_default();
        HttpChatModel {
            profile,
            secrets,
            client,
            policy,
            dialect,
            given_key: None,
        }
    }

    /// Send `key` with every request (a profile without `api_key` only).
    pub(crate) fn with_key(mut self, key: String) -> Self {
        self.given_key = Some(key);
        self
    }

    async fn resolve_key(&self) -> Result<(Option<String>, Redactor), ModelError> {
        let Some(template) = &self.profile.api_key else {
            return Ok(match &self.given_key {
                Some(key) => (Some(key.clone()), Redactor::new([key.clone()])),
                None => (None, Redactor::default()),
            });
        };
        let filled = self
            .secrets
            .fill_async(vec![template.clone()])
            .await
            .pop()
            .unwrap_or_default();
        if !filled.unresolved.is_empty() || filled.text.trim().is_empty() {
            let name = self
                .profile
                .api_key_name()
                .unwrap_or_else(|| filled.unresolved.join(", "));
            return Err(ModelError::Config(format!(
                "model profile `{}` needs the secret {name}: {}",
                self.profile.name,
                crate::secrets::how_to_set(&name)
            )));
        }
        Ok((Some(filled.text), Redactor::new(filled.values)))
    }

    async fn attempt<'f>(
        &self,
        body: &Value,
        key: Option<&str>,
        redactor: &Redactor,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(Streamed<'_>) + Send + 'f),
        streamed: &mut bool,
    ) -> Result<ChatResponse, Failure> {
        let idle = self.profile.idle_timeout();
        let mut builder = self
            .client
            .post(self.dialect.url(&self.profile.base_url))
            .json(body);
        for (name, value) in self.dialect.headers(key) {
            builder = builder.header(name, value);
        }
        let mut response = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(Failure::Fatal(ModelError::Cancelled)),
            sent = tokio::time::timeout(idle, builder.send()) => match sent {
                Err(_) => {
                    return Err(Failure::Fatal(ModelError::Timeout(format!(
                        "no answer within {}",
                        seconds(idle)
                    ))))
                }
                Ok(Err(e)) if crate::net::refused_redirect(&e).is_some() => {
                    // Not worth retrying: the server will redirect again.
                    return Err(Failure::Fatal(ModelError::Config(
                        redactor.redact(&crate::net::describe_request_error(&e)),
                    )))
                }
                Ok(Err(e)) => {
                    return Err(Failure::Retry {
                        error: ModelError::Connection(
                            redactor.redact(&crate::net::describe_request_error(&e)),
                        ),
                        retry_after: None,
                    })
                }
                Ok(Ok(response)) => response,
            },
        };

        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                // Too long for a Duration is still "longer than we wait".
                .map(|s| Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX));
            let bytes = read_body(&mut response, MAX_ERROR_BYTES, idle, cancel)
                .await
                .unwrap_or_default();
            let message = redactor.redact(&error_message(&bytes, status));
            if is_context_length(&bytes, &message) {
                return Err(Failure::Fatal(ModelError::ContextLength(message)));
            }
            let error = ModelError::Http {
                status: status.as_u16(),
                message,
            };
            return Err(if retryable(status.as_u16()) {
                Failure::Retry { error, retry_after }
            } else {
                Failure::Fatal(error)
            });
        }

        let protocol =
            |message: String| Failure::Fatal(ModelError::Protocol(redactor.redact(&message)));
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("json"));
        if is_json {
            let bytes = read_body(&mut response, MAX_JSON_BYTES, idle, cancel)
                .await
                .map_err(|e| e.into_failure(redactor))?;
            return self.complete(&bytes, on_event, streamed).map_err(protocol);
        }

        let limits = self.profile.limits();
        let limit = |e: LimitExceeded| Failure::Fatal(self.limit_error(e));
        let mut decoder = SseDecoder::new(limits);
        let mut stream = StreamState {
            limits,
            ..StreamState::default()
        };
        let mut sniff: Vec<u8> = Vec::new();
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(Failure::Fatal(ModelError::Cancelled)),
                next = tokio::time::timeout(idle, response.chunk()) => next,
            };
            let at_end = matches!(&next, Ok(Ok(None)));
            let events = match next {
                Err(_) => {
                    return Err(Failure::Fatal(ModelError::Timeout(format!(
                        "the answer stalled: no data for {}",
                        seconds(idle)
                    ))))
                }
                Ok(Err(e)) => {
                    return Err(Failure::Retry {
                        error: ModelError::Connection(format!(
                            "the answer broke off: {}",
                            redactor.redact(&crate::net::describe_request_error(&e))
                        )),
                        retry_after: None,
                    })
                }
                Ok(Ok(None)) => decoder.finish().map_err(limit)?,
                Ok(Ok(Some(bytes))) => {
                    if !stream.saw_event && sniff.len() < MAX_SNIFF_BYTES {
                        sniff.extend_from_slice(&bytes);
                    }
                    decoder.feed(&bytes).map_err(limit)?
                }
            };
            for event in &events {
                stream.saw_event = true;
                let deltas = self.dialect.decode_event(event).map_err(protocol)?;
                for delta in deltas {
                    stream
                        .apply(delta, on_event, streamed, redactor)
                        .map_err(|e| e.into_failure(&limit))?;
                }
            }
            if stream.done || at_end {
                break;
            }
        }
        if !stream.saw_event {
            // Some servers ignore `stream: true` and send JSON without saying so.
            return match serde_json::from_slice::<Value>(&sniff) {
                Ok(_) => self.complete(&sniff, on_event, streamed).map_err(protocol),
                Err(_) => Err(protocol(format!(
                    "the answer is neither an event stream nor JSON: {}",
                    excerpt(&String::from_utf8_lossy(&sniff))
                ))),
            };
        }
        let finish = match (stream.finish, stream.done) {
            (Some(f), _) => f,
            (None, true) => FinishReason::Stop,
            (None, false) => {
                return Err(Failure::Retry {
                    error: ModelError::Connection(
                        "the answer broke off before it was complete".into(),
                    ),
                    retry_after: None,
                })
            }
        };
        Ok(ChatResponse {
            text: stream.text,
            tool_calls: stream.calls.into_iter().map(|(_, call)| call).collect(),
            finish_reason: finish,
            usage: stream.usage,
            guided: stream.guided,
        })
    }

    /// The error for a stream that went past one of the profile's limits.
    fn limit_error(&self, e: LimitExceeded) -> ModelError {
        let what = match e.limit {
            Limit::Line => "an SSE line longer than",
            Limit::Event => "an SSE event larger than",
            Limit::Answer => "an answer longer than",
        };
        ModelError::Limit(format!(
            "the model server sent {what} {} (limit `{}` of profile `{}`); raise it under \
             `limits:` in models.yaml if this server is right",
            human_bytes(e.max),
            e.limit.field(),
            self.profile.name
        ))
    }

    fn complete<'f>(
        &self,
        bytes: &[u8],
        on_event: &mut (dyn FnMut(Streamed<'_>) + Send + 'f),
        streamed: &mut bool,
    ) -> Result<ChatResponse, String> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            format!(
                "the answer is not valid JSON ({e}): {}",
                excerpt(&String::from_utf8_lossy(bytes))
            )
        })?;
        let mut response = self.dialect.decode_complete(&value)?;
        if !response.text.is_empty() {
            *streamed = true;
            on_event(Streamed::Text(&response.text));
        }
        for (index, call) in response.tool_calls.iter_mut().enumerate() {
            if call.id.is_empty() {
                call.id = crate::ids::new_id("call");
            }
            *streamed = true;
            on_event(Streamed::CallStarted {
                index,
                name: &call.name,
            });
        }
        Ok(response)
    }
}

#[derive(Default)]
struct StreamState {
    limits: StreamLimits,
    text: String,
    /// Native calls by the dialect's index, in the order they began.
    calls: Vec<(usize, NativeCall)>,
    /// Bytes of the calls' arguments so far (counted with the text against the answer limit).
    call_bytes: usize,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    guided: bool,
    done: bool,
    saw_event: bool,
}

impl StreamState {
    fn apply<'f>(
        &mut self,
        delta: Delta,
        on_event: &mut (dyn FnMut(Streamed<'_>) + Send + 'f),
        streamed: &mut bool,
        redactor: &Redactor,
    ) -> Result<(), Stopped> {
        match delta {
            Delta::Text(text) if text.is_empty() => {}
            Delta::Text(text) => {
                // Checked before the text is passed on: what the caller got stays within it.
                self.limits
                    .answer(self.text.len() + text.len())
                    .map_err(Stopped::Limit)?;
                *streamed = true;
                on_event(Streamed::Text(&text));
                self.text.push_str(&text);
            }
            Delta::CallPart {
                index,
                id,
                name,
                arguments,
            } => {
                let added = arguments.as_deref().map_or(0, str::len);
                self.limits
                    .answer(self.text.len() + self.call_bytes + added)
                    .map_err(Stopped::Limit)?;
                self.call_bytes += added;
                let position = match self.calls.iter().position(|(i, _)| *i == index) {
                    Some(p) => p,
                    None => {
                        self.calls.push((index, NativeCall::default()));
                        self.calls.len() - 1
                    }
                };
                let call = &mut self.calls[position].1;
                let was_named = !call.name.is_empty();
                if let Some(id) = id.filter(|id| !id.is_empty()) {
                    call.id = id;
                }
                if let Some(name) = name {
                    call.name.push_str(&name);
                }
                if let Some(arguments) = arguments {
                    call.arguments.push_str(&arguments);
                }
                if !was_named && !call.name.is_empty() {
                    if call.id.is_empty() {
                        // Some OpenAI-compatible servers send no id: the engine makes one.
                        call.id = crate::ids::new_id("call");
                    }
                    *streamed = true;
                    on_event(Streamed::CallStarted {
                        index: position,
                        name: &call.name,
                    });
                }
            }
            Delta::Finish(f) => self.finish = Some(f),
            Delta::Usage { prompt, completion } => {
                let usage = self.usage.get_or_insert_with(Usage::default);
                if let Some(p) = prompt {
                    usage.prompt_tokens = p;
                }
                if let Some(c) = completion {
                    usage.completion_tokens = c;
                }
            }
            Delta::Guided => self.guided = true,
            Delta::Done => self.done = true,
            Delta::Error { status, message } => {
                let message = redactor.redact(&excerpt(&message));
                if is_context_length(&[], &message) {
                    return Err(Stopped::Failure(Failure::Fatal(ModelError::ContextLength(
                        message,
                    ))));
                }
                return Err(Stopped::Failure(match status {
                    Some(status) => {
                        let error = ModelError::Http { status, message };
                        if retryable(status) {
                            Failure::Retry {
                                error,
                                retry_after: None,
                            }
                        } else {
                            Failure::Fatal(error)
                        }
                    }
                    None => Failure::Fatal(ModelError::Protocol(format!(
                        "the server reported an error in the middle of the answer: {message}"
                    ))),
                }));
            }
        }
        Ok(())
    }
}

/// Why [`StreamState::apply`] stopped the stream.
enum Stopped {
    /// The answer went past its limit.
    Limit(LimitExceeded),
    /// The server reported an error.
    Failure(Failure),
}

impl Stopped {
    fn into_failure(self, limit: &impl Fn(LimitExceeded) -> Failure) -> Failure {
        match self {
            Stopped::Limit(e) => limit(e),
            Stopped::Failure(f) => f,
        }
    }
}

#[async_trait::async_trait]
impl<D: Dialect> ChatModel for HttpChatModel<D> {
    async fn stream_events(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_event: &mut (dyn for<'a> FnMut(Streamed<'a>) + Send),
    ) -> Result<ChatResponse, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        // A profile that did not come through the loader (the Settings form) is checked here.
        if let Err((field, message)) = self.profile.check() {
            return Err(ModelError::Config(format!(
                "model profile `{}`: {message} (field `{field}`); fix it in Settings → Models or \
                 models.yaml",
                self.profile.name
            )));
        }
        let (key, redactor) = self.resolve_key().await?;
        let body = self.dialect.body(&self.profile, request);
        let mut attempt = 1;
        loop {
            let mut streamed = false;
            let failure = match self
                .attempt(
                    &body,
                    key.as_deref(),
                    &redactor,
                    cancel,
                    on_event,
                    &mut streamed,
                )
                .await
            {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            let (error, retry_after) = match failure {
                Failure::Fatal(error) => return Err(error),
                Failure::Retry { error, retry_after } => (error, retry_after),
            };
            if streamed || attempt >= self.policy.max_attempts {
                return Err(error);
            }
            let delay = match retry_after {
                Some(wait) if wait > self.policy.max_retry_after => return Err(error),
                Some(wait) => wait,
                None => self.policy.backoff(attempt),
            };
            tracing::warn!(
                profile = %self.profile.name,
                attempt,
                delay_ms = delay.as_millis() as u64,
                "model call failed, retrying: {error}"
            );
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ModelError::Cancelled),
                _ = tokio::time::sleep(delay) => {}
            }
            attempt += 1;
        }
    }
}

/// 429 and 5xx (and 408) are worth retrying.
fn retryable(status: u16) -> bool {
    status == 429 || status == 408 || (500..=599).contains(&status)
}

enum ReadError {
    Cancelled,
    Timeout(Duration),
    Broken(String),
    TooLarge(usize),
}

impl ReadError {
    fn into_failure(self, redactor: &Redactor) -> Failure {
        Failure::Fatal(match self {
            ReadError::Cancelled => ModelError::Cancelled,
            ReadError::Timeout(idle) => {
                ModelError::Timeout(format!("the answer stalled: no data for {}", seconds(idle)))
            }
            ReadError::Broken(e) => {
                ModelError::Connection(format!("the answer broke off: {}", redactor.redact(&e)))
            }
            ReadError::TooLarge(cap) => {
                ModelError::Protocol(format!("the answer is larger than {cap} bytes"))
            }
        })
    }
}

/// The whole body, at most `cap` bytes, each chunk within `idle`, watching `cancel`.
async fn read_body(
    response: &mut reqwest::Response,
    cap: usize,
    idle: Duration,
    cancel: &CancellationToken,
) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    loop {
        let next = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ReadError::Cancelled),
            next = tokio::time::timeout(idle, response.chunk()) => next,
        };
        match next {
            Err(_) => return Err(ReadError::Timeout(idle)),
            Ok(Err(e)) => return Err(ReadError::Broken(crate::net::describe_request_error(&e))),
            Ok(Ok(None)) => return Ok(body),
            Ok(Ok(Some(chunk))) => {
                if body.len() + chunk.len() > cap {
                    return Err(ReadError::TooLarge(cap));
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
}

/// The message of an error body: `error.message`, `message`, `error` as text, or the text.
fn error_message(body: &[u8], status: reqwest::StatusCode) -> String {
    let text = String::from_utf8_lossy(body);
    let from_json = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let message = from_json.unwrap_or_else(|| text.trim().to_string());
    if message.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("no message")
            .to_string()
    } else {
        excerpt(&message)
    }
}

/// The wordings servers use when a request is longer than the model's window (lower case).
/// OpenAI: "This model's maximum context length is …"; vLLM and LM Studio: "context length";
/// Ollama and others: "context window"; "too many tokens"; llama.cpp: "the request exceeds
/// the available context size"; Anthropic: "prompt is too long".
const CONTEXT_LENGTH_WORDINGS: &[&str] = &[
    "maximum context length",
    "context length",
    "context window",
    "too many tokens",
    "exceeds the available context size",
    "prompt is too long",
];

/// Is this error (its raw `body` and extracted `message`) a refusal of a too-long request?
/// The OpenAI-compatible code `context_length_exceeded` (in `error.code` or `error.type`)
/// says so exactly; otherwise the message's wording does.
fn is_context_length(body: &[u8], message: &str) -> bool {
    let coded = serde_json::from_slice::<Value>(body).ok().is_some_and(|v| {
        ["/error/code", "/error/type", "/code", "/type"]
            .iter()
            .any(|p| v.pointer(p).and_then(Value::as_str) == Some("context_length_exceeded"))
    });
    let lower = message.to_lowercase();
    coded
        || lower.contains("context_length_exceeded")
        || CONTEXT_LENGTH_WORDINGS.iter().any(|w| lower.contains(w))
}

/// At most [`ERROR_CHARS`] characters of `s`.
pub(crate) fn excerpt(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(ERROR_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let p = RetryPolicy::default();
        for retry in 1..=3u32 {
            let full = p.base_delay * (1 << (retry - 1));
            let d = p.backoff(retry);
            assert!(d >= full / 2 && d <= full, "retry {retry}: {d:?}");
        }
        assert!(p.backoff(30) <= p.max_delay);
    }

    #[test]
    fn error_messages_from_either_dialect() {
        let s = reqwest::StatusCode::BAD_REQUEST;
        assert_eq!(error_message(br#"{"error":{"message":"bad"}}"#, s), "bad");
        assert_eq!(
            error_message(
                br#"{"type":"error","error":{"type":"x","message":"worse"}}"#,
                s
            ),
            "worse"
        );
        assert_eq!(error_message(b"plain text", s), "plain text");
        assert_eq!(error_message(b"", s), "Bad Request");
    }

    #[test]
    fn context_length_refusals_by_code_and_wording() {
        let openai = br#"{"error":{"message":"too big","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
        assert!(is_context_length(openai, "too big"));
        for message in [
            "This model's maximum context length is 6000 tokens",
            "the request exceeds the available context size, try increasing it",
            "prompt is too long: 210000 tokens > 200000 maximum",
            "Too many tokens in the request",
            "input exceeds the context window",
        ] {
            assert!(is_context_length(b"", message), "{message}");
        }
        assert!(!is_context_length(b"{}", "invalid api key"));
        assert!(!is_context_length(b"", "rate limited: slow down"));
    }

    #[test]
    fn retryable_statuses() {
        assert!(retryable(429) && retryable(500) && retryable(503) && retryable(529));
        assert!(!retryable(400) && !retryable(401) && !retryable(404));
    }
}
