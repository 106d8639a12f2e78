//! The scripted model server: real HTTP + SSE on 127.0.0.1, one scripted [`Turn`] per request.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::turn::{Finish, Flood, FloodShape, Turn};

/// Which API a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// `POST /v1/chat/completions` (OpenAI-compatible).
    OpenAi,
    /// `POST /v1/messages` (Anthropic Messages).
    Anthropic,
}

/// A request as the server received it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// The API it used.
    pub dialect: Dialect,
    /// The request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers, names in lower case.
    pub headers: BTreeMap<String, String>,
    /// The JSON body (a JSON string holding the raw text when it was not JSON).
    pub body: Value,
    /// Refused as longer than the server's character limit (see
    /// [`ScriptedModel::set_char_limit`]).
    #[serde(default)]
    pub refused: bool,
}

impl RecordedRequest {
    /// A header's value (`name` is case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The `model` field.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }

    /// Was a stream asked for (`"stream": true`)?
    pub fn stream(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool) == Some(true)
    }

    /// The messages as `(role, text)` pairs; content given as blocks is joined (the text of
    /// Anthropic `tool_result` blocks included), `null` or missing content is empty.
    pub fn messages(&self) -> Vec<(String, String)> {
        self.message_values()
            .map(|m| {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("");
                (role.to_string(), content_text(m.get("content")))
            })
            .collect()
    }

    /// The names of the tools offered (`tools[].function.name` for OpenAI, `tools[].name` for
    /// Anthropic), in order.
    pub fn tools(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| {
                        t.pointer("/function/name")
                            .or_else(|| t.get("name"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The tool results sent back, in order, as `(call id, result text)`: every OpenAI
    /// `role: "tool"` message (`tool_call_id`, `content`) and every Anthropic `tool_result`
    /// block (`tool_use_id`, `content` as a string or text blocks).
    pub fn tool_results(&self) -> Vec<(String, String)> {
        let mut results = Vec::new();
        for m in self.message_values() {
            if m.get("role").and_then(Value::as_str) == Some("tool") {
                results.push((str_field(m, "tool_call_id"), content_text(m.get("content"))));
            }
            for block in content_blocks(m) {
                if block.get("type").and_then(Value::as_str) == Some("tool_result") {
                    results.push((
                        str_field(block, "tool_use_id"),
                        content_text(block.get("content")),
                    ));
                }
            }
        }
        results
    }

    /// The tool calls of the assistant messages sent back, in order, as
    /// `(id, name, arguments as JSON text)`: OpenAI `tool_calls[]` (`function.arguments` as
    /// sent) and Anthropic `tool_use` blocks (`input` serialised).
    pub fn assistant_tool_calls(&self) -> Vec<(String, String, String)> {
        let mut calls = Vec::new();
        for m in self.message_values() {
            if m.get("role").and_then(Value::as_str) != Some("assistant") {
                continue;
            }
            for call in m
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let arguments = match call.pointer("/function/arguments") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                let name = call
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                calls.push((str_field(call, "id"), name.to_string(), arguments));
            }
            for block in content_blocks(m) {
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    let input = block
                        .get("input")
                        .map_or_else(String::new, Value::to_string);
                    calls.push((str_field(block, "id"), str_field(block, "name"), input));
                }
            }
        }
        calls
    }

    fn message_values(&self) -> impl Iterator<Item = &Value> {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    }

    /// Anthropic's top-level `system` prompt, if any.
    pub fn system(&self) -> Option<String> {
        self.body.get("system").map(|s| content_text(Some(s)))
    }

    /// Is this the engine's request for a "conversation so far" note (its condensation
    /// prompt first)?
    pub fn is_condensation(&self) -> bool {
        let head = engine::run::budget::CONDENSE_PROMPT_HEAD;
        self.system().is_some_and(|s| s.starts_with(head))
            || self
                .messages()
                .first()
                .is_some_and(|(role, text)| role == "system" && text.starts_with(head))
    }

    /// Characters in all the prompt text (messages — tool results included — and system, plus
    /// the names and arguments of the assistant tool calls sent back): what the character
    /// limit counts, and the base of usage estimates. The `tools` definitions are not counted.
    pub fn prompt_chars(&self) -> usize {
        let system = self.system().map_or(0, |s| s.chars().count());
        let messages: usize = self.messages().iter().map(|(_, t)| t.chars().count()).sum();
        let calls: usize = self
            .assistant_tool_calls()
            .iter()
            .map(|(_, name, arguments)| name.chars().count() + arguments.chars().count())
            .sum();
        system + messages + calls
    }
}

/// The text of a message's (or a tool result's) content: a string, or the joined text of its
/// blocks — `text` blocks and the content of `tool_result` blocks; `null` is empty.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("tool_result") => content_text(b.get("content")),
                _ => b
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            })
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// A message's content blocks (none when its content is a string or null).
fn content_blocks(message: &Value) -> impl Iterator<Item = &Value> {
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn str_field(value: &Value, name: &str) -> String {
    value
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

struct Shared {
    turns: Mutex<VecDeque<Turn>>,
    /// Requests with more prompt characters than this are refused as too long.
    char_limit: Mutex<Option<usize>>,
    /// The answer to every condensation request (no turn used), when set.
    condensation_note: Mutex<Option<String>>,
    requests: Mutex<Vec<RecordedRequest>>,
    count: watch::Sender<usize>,
    /// The context window `/props` reports (llama.cpp's shape); `None`: no `/props`.
    context_window: Mutex<Option<u32>>,
}

/// A running scripted model server. Stops when dropped.
///
/// ```no_run
/// # async fn demo() {
/// use test_support::{ScriptedModel, Turn};
/// let server = ScriptedModel::start(vec![Turn::text("Hello"), Turn::rate_limited(1)]).await;
/// let openai_base = server.openai_base_url(); // "http://127.0.0.1:PORT/v1"
/// // … run the client against it, then:
/// let sent = server.wait_for_requests(1).await;
/// assert!(sent[0].stream());
/// # }
/// ```
pub struct ScriptedModel {
    /// `http://127.0.0.1:PORT` — the Anthropic base URL; OpenAI profiles use `{base_url}/v1`.
    pub base_url: String,
    shared: Arc<Shared>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl ScriptedModel {
    /// Serve `turns` on 127.0.0.1 on a free port.
    pub async fn start(turns: Vec<Turn>) -> ScriptedModel {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), turns)
            .await
            .expect("bind 127.0.0.1:0")
    }

    /// Serve `turns` on `addr` (port 0 picks a free one).
    pub async fn start_on(addr: SocketAddr, turns: Vec<Turn>) -> std::io::Result<ScriptedModel> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let shared = Arc::new(Shared {
            turns: Mutex::new(turns.into()),
            char_limit: Mutex::default(),
            condensation_note: Mutex::default(),
            requests: Mutex::default(),
            count: watch::Sender::new(0),
            context_window: Mutex::default(),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .route("/v1/models", get(list_models))
            .route("/props", get(props))
            .route("/requests", get(list_requests))
            .route("/turns", post(add_turns))
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(ScriptedModel {
            base_url: format!("http://{local}"),
            shared,
            task: Some(task),
        })
    }

    /// The base URL for an `openai` profile: `{base_url}/v1`.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.base_url)
    }

    /// A `models.yaml` whose `default` profile talks to this server (OpenAI dialect).
    pub fn models_yaml(&self) -> String {
        format!(
            "profiles:\n  - name: default\n    api: openai\n    base_url: \"{}\"\n    model: scripted\n",
            self.openai_base_url()
        )
    }

    /// Report `tokens` as the context window the way llama.cpp's server does
    /// (`GET /props` → `default_generation_settings.n_ctx`), so context-window discovery
    /// finds it; `None` (the default) answers `/props` with 404 like most servers.
    pub fn set_context_window(&self, tokens: Option<u32>) {
        *self.shared.context_window.lock().unwrap() = tokens;
    }

    /// Append turns to the script.
    pub fn push_turns(&self, turns: impl IntoIterator<Item = Turn>) {
        self.shared.turns.lock().unwrap().extend(turns);
    }

    /// Refuse every request whose prompt (all message contents and the system prompt) has more
    /// than `limit` characters, as a model with a small context window does: HTTP 400 with an
    /// OpenAI-style `context_length_exceeded` error (Anthropic: "prompt is too long"). A
    /// refused request is recorded (with `refused` set) and uses no turn. `None` lifts it.
    pub fn set_char_limit(&self, limit: Option<usize>) {
        *self.shared.char_limit.lock().unwrap() = limit;
    }

    /// Answer every condensation request (see [`RecordedRequest::is_condensation`]) with
    /// `note`, without using a turn, so a test need not know when the engine condenses.
    /// `None`: condensation requests take the next turn like any other.
    pub fn set_condensation_note(&self, note: Option<String>) {
        *self.shared.condensation_note.lock().unwrap() = note;
    }

    /// How many requests were refused as too long.
    pub fn refused_count(&self) -> usize {
        self.requests().iter().filter(|r| r.refused).count()
    }

    /// Turns not served yet.
    pub fn remaining_turns(&self) -> usize {
        self.shared.turns.lock().unwrap().len()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Wait until at least `n` requests arrived, then return all of them. Wrap it in a
    /// timeout in tests: it waits for as long as it takes.
    pub async fn wait_for_requests(&self, n: usize) -> Vec<RecordedRequest> {
        let mut rx = self.shared.count.subscribe();
        let _ = rx.wait_for(|count| *count >= n).await;
        self.requests()
    }

    /// Serve until the process ends (for the command-line server).
    pub async fn run_forever(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn list_requests(State(shared): State<Arc<Shared>>) -> Json<Vec<RecordedRequest>> {
    Json(shared.requests.lock().unwrap().clone())
}

async fn add_turns(State(shared): State<Arc<Shared>>, Json(turns): Json<Vec<Turn>>) -> StatusCode {
    shared.turns.lock().unwrap().extend(turns);
    StatusCode::NO_CONTENT
}

/// The model list (`GET /v1/models`, the shape OpenAI-compatible servers and Anthropic share):
/// the names the model picker offers. Not recorded among the chat requests.
async fn list_models() -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [
            {"id": "scripted", "object": "model"},
            {"id": "scripted-large", "object": "model"},
        ],
    }))
}

/// llama.cpp's server properties (`GET /props`) with the configured context window, or 404
/// when none is configured. Not recorded among the chat requests.
async fn props(State(shared): State<Arc<Shared>>) -> Response {
    match *shared.context_window.lock().unwrap() {
        Some(n_ctx) => Json(json!({
            "default_generation_settings": {"n_ctx": n_ctx},
            "n_ctx": n_ctx,
            "total_slots": 1,
        }))
        .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn openai(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(&shared, Dialect::OpenAi, uri, headers, body)
}

async fn anthropic(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(&shared, Dialect::Anthropic, uri, headers, body)
}

fn answer(
    shared: &Shared,
    dialect: Dialect,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let parsed = serde_json::from_slice::<Value>(&body).ok();
    let mut request = RecordedRequest {
        dialect,
        path: uri.path().to_string(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: parsed
            .clone()
            .unwrap_or_else(|| Value::String(String::from_utf8_lossy(&body).into_owned())),
        refused: false,
    };
    let limit = *shared.char_limit.lock().unwrap();
    let chars = request.prompt_chars();
    request.refused = limit.is_some_and(|limit| chars > limit);
    let note = request
        .is_condensation()
        .then(|| shared.condensation_note.lock().unwrap().clone())
        .flatten();
    let served = {
        let mut requests = shared.requests.lock().unwrap();
        requests.push(request.clone());
        requests.len()
    };
    let turn = if request.refused {
        None
    } else if let Some(note) = note {
        Some(Turn::text(note))
    } else {
        shared.turns.lock().unwrap().pop_front()
    };
    shared.count.send_replace(served);
    if request.refused {
        return too_long_response(dialect, chars, limit.unwrap_or_default());
    }

    if parsed.is_none() {
        return error_response(
            dialect,
            StatusCode::BAD_REQUEST,
            None,
            "the request body is not JSON",
        );
    }
    let Some(turn) = turn else {
        return error_response(
            dialect,
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            &format!(
                "the scripted model server has no turns left: request {served} arrived after \
                 the script ran out; add turns to the script"
            ),
        );
    };
    if let Some(error) = &turn.error {
        let status =
            StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return error_response(dialect, status, error.retry_after, &error.message);
    }
    if let Some(raw) = &turn.raw_sse {
        return sse_response(vec![(Duration::ZERO, raw.clone())], turn.stall);
    }
    if let Some(flood) = turn.flood {
        return flood_response(dialect, &turn.text, flood);
    }
    let usage = turn.reported_usage(request.prompt_chars());
    let model = request.model().unwrap_or("scripted").to_string();
    let has_calls = !turn.tool_calls.is_empty();
    if turn.non_streaming || !request.stream() {
        let body = match dialect {
            Dialect::OpenAi => {
                let mut message = json!({"role": "assistant", "content": turn.text});
                if has_calls {
                    if turn.text.is_empty() {
                        message["content"] = Value::Null;
                    }
                    let calls: Vec<Value> = turn
                        .tool_calls
                        .iter()
                        .zip(turn.call_ids(OPENAI_CALL_PREFIX))
                        .map(|(call, id)| {
                            json!({"id": id, "type": "function",
                                   "function": {"name": call.name, "arguments": call.arguments}})
                        })
                        .collect();
                    message["tool_calls"] = Value::Array(calls);
                }
                json!({
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [{
                        "index": 0,
                        "message": message,
                        "finish_reason": openai_finish(turn.finish, has_calls),
                    }],
                    "usage": {
                        "prompt_tokens": usage.prompt_tokens,
                        "completion_tokens": usage.completion_tokens,
                        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                    },
                })
            }
            Dialect::Anthropic => {
                let mut content = Vec::new();
                if !turn.text.is_empty() || !has_calls {
                    content.push(json!({"type": "text", "text": turn.text}));
                }
                for (call, id) in turn
                    .tool_calls
                    .iter()
                    .zip(turn.call_ids(ANTHROPIC_CALL_PREFIX))
                {
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .unwrap_or_else(|_| json!({}));
                    content.push(json!({"type": "tool_use", "id": id, "name": call.name,
                                        "input": input}));
                }
                json!({
                    "id": "msg_scripted",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": anthropic_finish(turn.finish, has_calls),
                    "stop_sequence": null,
                    "usage": {
                        "input_tokens": usage.prompt_tokens,
                        "output_tokens": usage.completion_tokens,
                    },
                })
            }
        };
        return Json(body).into_response();
    }
    let delay = Duration::from_millis(turn.chunk_delay_ms);
    let include_usage = request
        .body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true);
    let mut events: Vec<(Duration, String)> = Vec::new();
    match dialect {
        Dialect::OpenAi => {
            let chunk = |delta: Value, finish: Value| {
                let data = json!({
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                });
                format!("data: {data}\n\n")
            };
            // OpenAI opens with the role; its content is null when the answer is only calls.
            let content = if has_calls && turn.text.is_empty() {
                Value::Null
            } else {
                json!("")
            };
            events.push((
                Duration::ZERO,
                chunk(
                    json!({"role": "assistant", "content": content}),
                    Value::Null,
                ),
            ));
            for text in turn.chunks() {
                events.push((delay, chunk(json!({"content": text}), Value::Null)));
            }
            for (index, (call, id)) in turn
                .tool_calls
                .iter()
                .zip(turn.call_ids(OPENAI_CALL_PREFIX))
                .enumerate()
            {
                let head = json!({"tool_calls": [{
                    "index": index, "id": id, "type": "function",
                    "function": {"name": call.name, "arguments": ""},
                }]});
                events.push((delay, chunk(head, Value::Null)));
                for piece in call.argument_chunks() {
                    let delta = json!({"tool_calls": [{
                        "index": index, "function": {"arguments": piece},
                    }]});
                    events.push((delay, chunk(delta, Value::Null)));
                }
            }
            if let Some(message) = &turn.stream_error {
                let data = json!({"error": {"message": message, "type": "server_error"}});
                events.push((Duration::ZERO, format!("data: {data}\n\n")));
            } else if !turn.stall {
                events.push((
                    Duration::ZERO,
                    chunk(json!({}), json!(openai_finish(turn.finish, has_calls))),
                ));
                if include_usage {
                    let data = json!({
                        "id": "chatcmpl-scripted",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": model,
                        "choices": [],
                        "usage": {
                            "prompt_tokens": usage.prompt_tokens,
                            "completion_tokens": usage.completion_tokens,
                            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                        },
                    });
                    events.push((Duration::ZERO, format!("data: {data}\n\n")));
                }
                events.push((Duration::ZERO, "data: [DONE]\n\n".into()));
            }
        }
        Dialect::Anthropic => {
            let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
            events.push((
                Duration::ZERO,
                event(
                    "message_start",
                    json!({"type": "message_start", "message": {
                        "id": "msg_scripted", "type": "message", "role": "assistant",
                        "content": [], "model": model, "stop_reason": null, "stop_sequence": null,
                        "usage": {"input_tokens": usage.prompt_tokens, "output_tokens": 1},
                    }}),
                ),
            ));
            // The text block (index 0) when there is text, or nothing else to send.
            let text_block = !turn.text.is_empty() || !has_calls;
            if text_block {
                events.push((
                    Duration::ZERO,
                    event(
                        "content_block_start",
                        json!({"type": "content_block_start", "index": 0,
                               "content_block": {"type": "text", "text": ""}}),
                    ),
                ));
            }
            events.push((Duration::ZERO, event("ping", json!({"type": "ping"}))));
            for text in turn.chunks() {
                events.push((
                    delay,
                    event(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "text_delta", "text": text}}),
                    ),
                ));
            }
            if has_calls {
                if text_block {
                    events.push((
                        Duration::ZERO,
                        event(
                            "content_block_stop",
                            json!({"type": "content_block_stop", "index": 0}),
                        ),
                    ));
                }
                let first = usize::from(text_block);
                for (i, (call, id)) in turn
                    .tool_calls
                    .iter()
                    .zip(turn.call_ids(ANTHROPIC_CALL_PREFIX))
                    .enumerate()
                {
                    let index = first + i;
                    events.push((
                        delay,
                        event(
                            "content_block_start",
                            json!({"type": "content_block_start", "index": index,
                                   "content_block": {"type": "tool_use", "id": id,
                                                     "name": call.name, "input": {}}}),
                        ),
                    ));
                    // Anthropic's first input delta is empty.
                    let pieces = std::iter::once(String::new()).chain(call.argument_chunks());
                    for piece in pieces {
                        events.push((
                            delay,
                            event(
                                "content_block_delta",
                                json!({"type": "content_block_delta", "index": index,
                                       "delta": {"type": "input_json_delta",
                                                 "partial_json": piece}}),
                            ),
                        ));
                    }
                    events.push((
                        Duration::ZERO,
                        event(
                            "content_block_stop",
                            json!({"type": "content_block_stop", "index": index}),
                        ),
                    ));
                }
            }
            if let Some(message) = &turn.stream_error {
                events.push((
                    Duration::ZERO,
                    event(
                        "error",
                        json!({"type": "error",
                               "error": {"type": "overloaded_error", "message": message}}),
                    ),
                ));
            } else if !turn.stall {
                if !has_calls {
                    events.push((
                        Duration::ZERO,
                        event(
                            "content_block_stop",
                            json!({"type": "content_block_stop", "index": 0}),
                        ),
                    ));
                }
                events.push((
                    Duration::ZERO,
                    event(
                        "message_delta",
                        json!({"type": "message_delta",
                               "delta": {"stop_reason": anthropic_finish(turn.finish, has_calls),
                                         "stop_sequence": null},
                               "usage": {"output_tokens": usage.completion_tokens}}),
                    ),
                ));
                events.push((
                    Duration::ZERO,
                    event("message_stop", json!({"type": "message_stop"})),
                ));
            }
        }
    }
    sse_response(events, turn.stall)
}

/// Ids the server gives OpenAI tool calls without a scripted id: `call_1`, `call_2`, …
const OPENAI_CALL_PREFIX: &str = "call";
/// Ids the server gives Anthropic tool calls without a scripted id: `toolu_1`, `toolu_2`, …
const ANTHROPIC_CALL_PREFIX: &str = "toolu";

fn openai_finish(finish: Finish, has_calls: bool) -> &'static str {
    match finish {
        Finish::Stop if has_calls => "tool_calls",
        Finish::Stop => "stop",
        Finish::Length => "length",
    }
}

fn anthropic_finish(finish: Finish, has_calls: bool) -> &'static str {
    match finish {
        Finish::Stop if has_calls => "tool_use",
        Finish::Stop => "end_turn",
        Finish::Length => "max_tokens",
    }
}

/// The refusal of a request of `chars` characters by a server taking at most `limit`, as
/// OpenAI (and most compatible servers) word it, or as Anthropic does.
fn too_long_response(dialect: Dialect, chars: usize, limit: usize) -> Response {
    let (tokens, max) = (chars.div_ceil(4), limit / 4);
    let body = match dialect {
        Dialect::OpenAi => json!({"error": {
            "message": format!("This model's maximum context length is {max} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }}),
        Dialect::Anthropic => json!({"type": "error", "error": {
            "type": "invalid_request_error",
            "message": format!("prompt is too long: {tokens} tokens > {max} maximum"),
        }}),
    };
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

fn error_response(
    dialect: Dialect,
    status: StatusCode,
    retry_after: Option<u64>,
    message: &str,
) -> Response {
    let body = match dialect {
        Dialect::OpenAi => json!({"error": {
            "message": message,
            "type": if status == StatusCode::TOO_MANY_REQUESTS { "rate_limit_error" } else { "server_error" },
            "code": status.as_u16(),
        }}),
        Dialect::Anthropic => json!({"type": "error", "error": {
            "type": if status == StatusCode::TOO_MANY_REQUESTS { "rate_limit_error" } else { "api_error" },
            "message": message,
        }}),
    };
    let mut response = (status, Json(body)).into_response();
    if let Some(secs) = retry_after {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            secs.to_string().parse().expect("digits are a valid header"),
        );
    }
    response
}

/// The turn's text as one event, then `flood.bytes` bytes of a runaway stream.
fn flood_response(dialect: Dialect, text: &str, flood: Flood) -> Response {
    const CHUNK: usize = 64 * 1024;
    let first = match dialect {
        Dialect::OpenAi => {
            let data = json!({"choices": [{"index": 0, "delta": {"content": text}}]});
            format!("data: {data}\n\n")
        }
        Dialect::Anthropic => {
            let data = json!({"type": "content_block_delta", "index": 0,
                              "delta": {"type": "text_delta", "text": text}});
            format!("event: content_block_delta\ndata: {data}\n\n")
        }
    };
    let block = match flood.shape {
        FloodShape::Line => Bytes::from(vec![b'x'; CHUNK]),
        FloodShape::Event => {
            let line = format!("data: {}\n", "x".repeat(1024 - 7));
            Bytes::from(line.repeat(CHUNK / 1024))
        }
    };
    let head = futures::stream::iter([Bytes::from(first), Bytes::from_static(b"data: ")]);
    let body = futures::stream::unfold(flood.bytes, move |left| {
        let block = block.clone();
        async move {
            (left > 0).then(|| {
                let n = (left as usize).min(block.len());
                (block.slice(..n), left - n as u64)
            })
        }
    });
    let stream = head.chain(body).map(Ok::<_, Infallible>);
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(stream))
        .expect("a valid response")
}

/// An event stream sending each `(delay, text)` after its delay; with `stall`, it then stays
/// open without sending anything until the client goes away.
fn sse_response(events: Vec<(Duration, String)>, stall: bool) -> Response {
    let stream = futures::stream::iter(events).then(|(delay, text)| async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Ok::<_, Infallible>(Bytes::from(text))
    });
    let body = if stall {
        Body::from_stream(stream.chain(futures::stream::pending()))
    } else {
        Body::from_stream(stream)
    };
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .expect("a valid response")
}
