//! The OpenAI-compatible routes the engine's client speaks: `GET /v1/models` and
//! `POST /v1/chat/completions` (server-sent events when `stream` is true, usage in the last
//! event). A job that fails before its first text is an HTTP error with an OpenAI-style body; one
//! that fails later ends its stream with an `error` event. An answer stopped in a loop ends with
//! `finish_reason` `length` and `repeated` (the span in tokens and how many times) in its last
//! event.
//!
//! Every route is behind `access::guard` (the per-launch key and the runtime's own `Host`).
//! A request is bounded whatever it asks: `max_tokens` by the context, its time on the model
//! thread by [`request_time_limit`] (requests are served one at a time, so one request's
//! length is every other request's wait), its grammar and triggers by `guide`.

use std::convert::Infallible;
use std::sync::mpsc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc as tmpsc;

use crate::access::{self, Access};
use crate::chat::{Message, ToolCallIn};
use crate::guide;
use crate::template::{Call, Calls};
use crate::worker::{Event, Finish, Grammar, Info, Job, JobError};

/// Events a job may queue before the HTTP side reads them.
const EVENT_QUEUE: usize = 64;

#[derive(Clone)]
struct Shared {
    jobs: mpsc::Sender<Job>,
    info: Info,
}

/// The longest a request may keep the model thread: `ARTIFACTFLOW_RUNTIME_REQUEST_SECS`, else
/// 20 minutes (a long answer on a slow processor; the app's own runs stop far sooner).
pub fn request_time_limit() -> std::time::Duration {
    let secs = std::env::var("ARTIFACTFLOW_RUNTIME_REQUEST_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(1200.0);
    std::time::Duration::from_secs_f64(secs)
}

/// The routes, over the worker's job queue, each behind the access guard.
pub fn router(jobs: mpsc::Sender<Job>, info: Info, access: Access) -> Router {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(chat))
        .with_state(Shared { jobs, info })
        .layer(axum::middleware::from_fn_with_state(access, access::guard))
}

async fn models(State(shared): State<Shared>) -> Json<Value> {
    let info = &shared.info;
    Json(json!({
        "object": "list",
        "data": [{
            "id": info.name,
            "object": "model",
            "owned_by": "artifactflow",
            "n_ctx": info.n_ctx,
            "meta": {"n_ctx_train": info.n_ctx_train},
        }],
    }))
}

/// A failed job as an HTTP answer: the request's fault is a 400, the runtime's a 500.
fn job_error(failed: &JobError) -> Response {
    let status = if failed.by_request {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    error(status, &failed.message)
}

fn error_type(failed: &JobError) -> &'static str {
    if failed.by_request {
        "invalid_request_error"
    } else {
        "server_error"
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    let kind = if status.is_client_error() {
        "invalid_request_error"
    } else {
        "server_error"
    };
    (
        status,
        Json(json!({"error": {"message": message, "type": kind}})),
    )
        .into_response()
}

/// The request's messages: their text (content parts of type `text` joined), an assistant
/// message's native calls and a `tool` message's call id.
fn messages(body: &Value) -> Result<Vec<Message>, String> {
    let list = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("`messages` must be a list")?;
    list.iter()
        .map(|m| {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .ok_or("each message needs a `role`")?;
            let content = match m.get("content") {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            };
            let text =
                |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
            let tool_calls = m
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    let function = c
                        .get("function")
                        .ok_or("each of `tool_calls` needs a `function`")?;
                    Ok(ToolCallIn {
                        id: text(c, "id").unwrap_or_default(),
                        name: text(function, "name")
                            .ok_or("each call's `function` needs a `name`")?,
                        arguments: match function.get("arguments") {
                            Some(Value::String(a)) => a.clone(),
                            None | Some(Value::Null) => "{}".into(),
                            Some(other) => other.to_string(),
                        },
                    })
                })
                .collect::<Result<Vec<_>, &str>>()?;
            Ok(Message {
                role: role.to_string(),
                content,
                tool_calls,
                tool_call_id: text(m, "tool_call_id"),
            })
        })
        .collect()
}

/// The request's `tools` (OpenAI's form: `{"type": "function", "function": {"name", …}}`).
fn tools(body: &Value) -> Result<Vec<Value>, String> {
    let Some(list) = body.get("tools").filter(|t| !t.is_null()) else {
        return Ok(Vec::new());
    };
    let list = list.as_array().ok_or("`tools` must be a list")?;
    for tool in list {
        tool.pointer("/function/name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or("each of `tools` needs a `function` with a `name`")?;
    }
    Ok(list.clone())
}

/// The request's grammar, in llama.cpp server's fields: `grammar` (GBNF), and with
/// `grammar_lazy: true` the `grammar_triggers` that turn it on (`{"type": "pattern", "value":
/// regex}` or `{"type": "word", "value": text}`; llama.cpp's numbers 1–3 for the types too).
/// Sizes are bounded and every pattern compiled here: a request the runtime cannot follow is
/// a 400 before any work (see `guide`).
fn grammar(body: &Value) -> Result<Option<Grammar>, String> {
    let Some(text) = body.get("grammar").filter(|g| !g.is_null()) else {
        return Ok(None);
    };
    let text = text
        .as_str()
        .filter(|t| !t.trim().is_empty())
        .ok_or("`grammar` must be the text of a GBNF grammar")?;
    if text.contains('\0') {
        return Err("`grammar` must not contain a NUL character".into());
    }
    if text.len() > guide::MAX_GRAMMAR_BYTES {
        return Err(format!(
            "`grammar` is {} bytes; this runtime takes grammars of at most {} bytes",
            text.len(),
            guide::MAX_GRAMMAR_BYTES
        ));
    }
    guide::check_grammar(text)?;
    let lazy = body
        .get("grammar_lazy")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut triggers = Vec::new();
    if lazy {
        let list = body
            .get("grammar_triggers")
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty())
            .ok_or("a lazy grammar needs `grammar_triggers`")?;
        if list.len() > guide::MAX_TRIGGERS {
            return Err(format!(
                "{} `grammar_triggers`; at most {}",
                list.len(),
                guide::MAX_TRIGGERS
            ));
        }
        for t in list {
            let value = t
                .get("value")
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty() && !v.contains('\0'))
                .ok_or("each of `grammar_triggers` needs a `value`")?;
            let kind = t.get("type");
            let pattern =
                match (kind.and_then(Value::as_str), kind.and_then(Value::as_u64)) {
                    (Some("word"), _) | (_, Some(1)) => guide::escape(value),
                    (Some("pattern" | "pattern_full"), _) | (_, Some(2 | 3)) => value.to_string(),
                    _ => return Err(
                        "a trigger's `type` must be `word` or `pattern` (tokens are not supported)"
                            .into(),
                    ),
                };
            guide::compile_trigger(&pattern)?;
            triggers.push(pattern);
        }
    }
    Ok(Some(Grammar {
        text: text.to_string(),
        triggers,
    }))
}

/// OpenAI's `finish_reason`: an answer stopped in a loop was cut short, as one at its limit.
fn finish_name(finish: Finish) -> &'static str {
    match finish {
        Finish::Stop => "stop",
        Finish::Length | Finish::Repeated(_) => "length",
    }
}

/// `{"span": tokens, "times": n}` when the answer was stopped in a loop (see `ending`): the
/// last chunk, or the whole answer, carries it as `repeated`.
fn repeated(finish: Finish) -> Option<Value> {
    match finish {
        Finish::Repeated(r) => Some(json!({"span": r.span, "times": r.times})),
        _ => None,
    }
}

fn usage(prompt: u32, cached: u32, completion: u32) -> Value {
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    })
}

async fn chat(State(shared): State<Shared>, Json(body): Json<Value>) -> Response {
    let messages = match messages(&body) {
        Ok(messages) => messages,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let number = |key: &str| body.get(key).and_then(Value::as_f64);
    // Never more than the context holds (the worker also stops where the context is full).
    let max_tokens = number("max_completion_tokens")
        .or_else(|| number("max_tokens"))
        .map(|n| n.clamp(1.0, f64::from(shared.info.n_ctx.max(1))) as u32);
    let temperature = number("temperature").unwrap_or(0.7) as f32;
    let seed = number("seed").map_or(0x5eed, |s| s as u32);
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let grammar = match grammar(&body) {
        Ok(grammar) => grammar,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let tools = match tools(&body) {
        Ok(tools) => tools,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    // With tools offered, the answer's calls are taken out of its text.
    let calls = (!tools.is_empty()).then(Calls::default);
    let (tx, mut rx) = tmpsc::channel(EVENT_QUEUE);
    let job = Job {
        messages,
        tools,
        max_tokens,
        temperature,
        seed,
        grammar,
        time_limit: request_time_limit(),
        events: tx,
    };
    if shared.jobs.send(job).is_err() {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the model thread has stopped",
        );
    }
    // The first event decides between an HTTP error and an answer.
    let first = match rx.recv().await {
        Some(Event::Error(failed)) => return job_error(&failed),
        Some(event) => event,
        None => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the model thread stopped",
            )
        }
    };
    let model = shared.info.name.clone();
    if !stream {
        return whole(model, first, rx, calls).await;
    }
    // The last chunk carries the usage, `"guided": true` when the answer's end was written
    // under its grammar (the engine marks that call as guided) and `repeated` when it was
    // stopped in a loop.
    let chunk = move |delta: Value, finish: Option<&str>, last: Option<Map<String, Value>>| {
        let mut event = json!({
            "id": "chatcmpl-local",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if let (Some(fields), Some(event)) = (last, event.as_object_mut()) {
            event.extend(fields);
        }
        format!("data: {event}\n\n")
    };
    let text_chunk = {
        let chunk = chunk.clone();
        move |text: String| chunk(json!({"role": "assistant", "content": text}), None, None)
    };
    let frames = futures::stream::unfold(
        (Some(first), rx, false, calls),
        move |(mut pending, mut rx, ended, mut calls)| {
            let chunk = chunk.clone();
            let text_chunk = text_chunk.clone();
            async move {
                if ended {
                    return None;
                }
                loop {
                    let event = match pending.take() {
                        Some(event) => Some(event),
                        None => rx.recv().await,
                    };
                    let (out, ended) = match event {
                        Some(Event::Text(text)) => {
                            let shown = match calls.as_mut() {
                                Some(calls) => calls.push(&text),
                                None => text,
                            };
                            if shown.is_empty() {
                                continue;
                            }
                            (text_chunk(shown), false)
                        }
                        Some(Event::Done {
                            finish: reason,
                            prompt_tokens,
                            cached_tokens,
                            completion_tokens,
                            guided,
                        }) => {
                            let mut out = String::new();
                            let mut finish = finish_name(reason);
                            if let Some((rest, read)) = calls.take().map(Calls::finish) {
                                if !rest.is_empty() {
                                    out.push_str(&text_chunk(rest));
                                }
                                if !read.is_empty() {
                                    let list = wire_calls(&read, true);
                                    out.push_str(&chunk(json!({"tool_calls": list}), None, None));
                                    finish = "tool_calls";
                                }
                            }
                            let mut last = Map::new();
                            last.insert(
                                "usage".into(),
                                usage(prompt_tokens, cached_tokens, completion_tokens),
                            );
                            if guided {
                                last.insert("guided".into(), json!(true));
                            }
                            if let Some(repeated) = repeated(reason) {
                                last.insert("repeated".into(), repeated);
                            }
                            out.push_str(&chunk(json!({}), Some(finish), Some(last)));
                            out.push_str("data: [DONE]\n\n");
                            (out, true)
                        }
                        Some(Event::Error(failed)) => (
                            format!(
                                "data: {}\n\n",
                                json!({"error": {"message": failed.message, "type": error_type(&failed)}})
                            ),
                            true,
                        ),
                        None => return None,
                    };
                    return Some((
                        Ok::<_, Infallible>(Bytes::from(out)),
                        (None, rx, ended, calls),
                    ));
                }
            }
        },
    );
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(frames))
        .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "cannot answer"))
}

/// Calls in OpenAI's form, with ids new to this runtime; `indexed` (a stream's delta) numbers
/// them.
fn wire_calls(calls: &[Call], indexed: bool) -> Vec<Value> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut call = json!({
                "id": format!("call_{started:x}_{n}"),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            });
            if indexed {
                call["index"] = json!(i);
            }
            call
        })
        .collect()
}

/// A non-streamed answer: all of it, once done.
async fn whole(
    model: String,
    first: Event,
    mut rx: tmpsc::Receiver<Event>,
    calls: Option<Calls>,
) -> Response {
    let mut text = String::new();
    let mut next = Some(first);
    loop {
        let event = match next.take() {
            Some(event) => Some(event),
            None => rx.recv().await,
        };
        match event {
            Some(Event::Text(piece)) => text.push_str(&piece),
            Some(Event::Done {
                finish: reason,
                prompt_tokens,
                cached_tokens,
                completion_tokens,
                guided,
            }) => {
                let mut message = json!({"role": "assistant", "content": text});
                let mut finish = finish_name(reason);
                if let Some(mut calls) = calls {
                    let mut shown = calls.push(&text);
                    let (rest, read) = calls.finish();
                    shown.push_str(&rest);
                    message["content"] = json!(shown);
                    if !read.is_empty() {
                        message["tool_calls"] = json!(wire_calls(&read, false));
                        finish = "tool_calls";
                    }
                }
                let mut answer = json!({
                    "guided": guided,
                    "id": "chatcmpl-local",
                    "object": "chat.completion",
                    "model": model,
                    "choices": [{
                        "index": 0,
                        "message": message,
                        "finish_reason": finish,
                    }],
                    "usage": usage(prompt_tokens, cached_tokens, completion_tokens),
                });
                if let Some(repeated) = repeated(reason) {
                    answer["repeated"] = repeated;
                }
                return Json(answer).into_response();
            }
            Some(Event::Error(failed)) => return job_error(&failed),
            None => {
                return error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the model thread stopped",
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grammar_is_read_in_llama_cpp_servers_fields() {
        assert_eq!(grammar(&json!({})).unwrap(), None);
        let eager = grammar(&json!({"grammar": "root ::= \"a\""}))
            .unwrap()
            .unwrap();
        assert!(eager.triggers.is_empty());
        let lazy = grammar(&json!({
            "grammar": "root ::= \"<tool_call>\"",
            "grammar_lazy": true,
            "grammar_triggers": [
                {"type": "pattern", "value": "<tool_call>[ \\n]{0,16}$"},
                {"type": 1, "value": "a.b"},
            ],
        }))
        .unwrap()
        .unwrap();
        assert_eq!(lazy.triggers, ["<tool_call>[ \\n]{0,16}$", "a\\.b"]);
        // Patterns that ended the process inside llama.cpp, and sizes past the bounds.
        for pattern in ["a{2,1}", "*x", "\\1"] {
            let e = grammar(&json!({"grammar": "root ::= x", "grammar_lazy": true,
                                    "grammar_triggers": [{"type": "pattern", "value": pattern}]}))
            .unwrap_err();
            assert!(e.contains("not a regular expression"), "{pattern}: {e}");
        }
        let huge = format!("root ::= \"{}\"", "x".repeat(guide::MAX_GRAMMAR_BYTES));
        assert!(grammar(&json!({"grammar": huge}))
            .unwrap_err()
            .contains("at most"));
        let many: Vec<Value> = (0..40)
            .map(|i| json!({"type": "word", "value": format!("w{i}")}))
            .collect();
        assert!(grammar(
            &json!({"grammar": "root ::= x", "grammar_lazy": true, "grammar_triggers": many})
        )
        .unwrap_err()
        .contains("at most 32"));
        for (body, says) in [
            (json!({"grammar": 3}), "GBNF"),
            (
                json!({"grammar": "root ::= x", "grammar_lazy": true}),
                "grammar_triggers",
            ),
            (
                json!({"grammar": "root ::= x", "grammar_lazy": true,
                       "grammar_triggers": [{"type": "token", "value": "7"}]}),
                "tokens are not supported",
            ),
            (
                json!({"grammar": "root ::= x", "grammar_lazy": true,
                       "grammar_triggers": [{"type": "pattern", "value": "(<a"}]}),
                "not a regular expression",
            ),
            (
                json!({"grammar": "root ::= x", "grammar_lazy": true,
                       "grammar_triggers": [{"type": "pattern", "value": "[a"}]}),
                "not a regular expression",
            ),
        ] {
            let e = grammar(&body).unwrap_err();
            assert!(e.contains(says), "{body}: {e}");
        }
    }

    #[test]
    fn messages_are_read_as_text_with_clear_errors() {
        let body = json!({"messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]},
        ]});
        let read = messages(&body).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(
            (read[1].role.as_str(), read[1].content.as_str()),
            ("user", "Hi there")
        );
        assert_eq!(
            messages(&json!({})).unwrap_err(),
            "`messages` must be a list"
        );
        assert_eq!(
            messages(&json!({"messages": [{"content": "x"}]})).unwrap_err(),
            "each message needs a `role`"
        );
    }

    #[test]
    fn native_calls_and_results_are_read_with_their_ids() {
        let body = json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "web_search", "arguments": "{\"query\": \"cats\"}"}}]},
            {"role": "tool", "content": "3 results", "tool_call_id": "call_1"},
        ]});
        let read = messages(&body).unwrap();
        assert_eq!(read[0].tool_calls.len(), 1);
        assert_eq!(read[0].tool_calls[0].name, "web_search");
        assert_eq!(read[0].tool_calls[0].arguments, "{\"query\": \"cats\"}");
        assert_eq!(read[1].tool_call_id.as_deref(), Some("call_1"));
        let bad = json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "x"}]}]});
        assert!(messages(&bad).unwrap_err().contains("`function`"));
        assert_eq!(tools(&json!({})).unwrap(), Vec::<Value>::new());
        assert!(tools(&json!({"tools": [{"type": "function"}]}))
            .unwrap_err()
            .contains("`name`"));
        assert!(tools(&json!({"tools": {}})).unwrap_err().contains("a list"));
    }
}
