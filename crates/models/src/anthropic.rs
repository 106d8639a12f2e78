//! Anthropic Messages: `POST {base_url}/v1/messages`.
//!
//! The system messages go in the top-level `system` field; the others become `messages`, with
//! consecutive messages of one role merged (the API wants them to alternate). `max_tokens` is
//! required by the API: the request's, else the profile's, else [`DEFAULT_MAX_TOKENS`]. The key
//! goes in `x-api-key`, with `anthropic-version: 2023-06-01`.
//!
//! Stream events: `message_start` (input tokens), `content_block_start` (a `tool_use` block
//! starts a native call: id and name), `content_block_delta` (`text_delta` text,
//! `input_json_delta` pieces of a call's input JSON), `message_delta` (stop reason, output
//! tokens), `message_stop` (done), `error`; `ping` and block stops carry nothing the engine
//! needs.
//!
//! Native tool calling: the request's tools go in `tools` (`{name, description,
//! input_schema}`); an assistant message's calls become `tool_use` blocks after its text, and
//! results `tool_result` blocks (with `tool_use_id`) at the start of the next user message.

use serde_json::{json, Map, Value};

use super::http::{excerpt, Delta, Dialect};
use super::profiles::ModelProfile;
use super::sse::SseEvent;
use super::{ChatRequest, ChatResponse, FinishReason, NativeCall, Role, Usage};

/// `max_tokens` when neither the request nor the profile sets it.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// The Anthropic dialect.
pub(crate) struct Anthropic;

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        // A model that stops to call tools has finished its answer.
        "end_turn" | "stop_sequence" | "tool_use" => FinishReason::Stop,
        "max_tokens" => FinishReason::Length,
        other => FinishReason::Other(other.to_string()),
    }
}

/// The HTTP status an error event's type stands for.
fn error_status(kind: &str) -> Option<u16> {
    match kind {
        "overloaded_error" => Some(529),
        "rate_limit_error" => Some(429),
        "api_error" => Some(500),
        "timeout_error" => Some(504),
        "invalid_request_error" => Some(400),
        "authentication_error" => Some(401),
        "permission_error" => Some(403),
        "not_found_error" => Some(404),
        "request_too_large" => Some(413),
        _ => None,
    }
}

impl Dialect for Anthropic {
    fn url(&self, base_url: &str) -> String {
        let base = base_url.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        }
    }

    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        let mut headers = vec![("anthropic-version", API_VERSION.to_string())];
        if let Some(key) = key {
            headers.push(("x-api-key", key.to_string()));
        }
        headers
    }

    fn body(&self, profile: &ModelProfile, request: &ChatRequest) -> Value {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        // Messages as (role, blocks); a tool result is a user message's block, and consecutive
        // messages of one role are merged (the API wants them to alternate).
        let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
        for m in request.messages.iter().filter(|m| m.role != Role::System) {
            let (role, blocks) = blocks(m);
            if blocks.is_empty() {
                // The API refuses empty content (an answer that was only calls, not shown).
                continue;
            }
            match messages.last_mut() {
                Some((last, content)) if *last == role => content.extend(blocks),
                _ => messages.push((role, blocks)),
            }
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(profile.model));
        body.insert(
            "max_tokens".into(),
            json!(request
                .max_tokens
                .or(profile.max_tokens)
                .unwrap_or(DEFAULT_MAX_TOKENS)),
        );
        if !system.is_empty() {
            body.insert("system".into(), json!(system.join("\n\n")));
        }
        body.insert(
            "messages".into(),
            messages
                .into_iter()
                .map(|(role, blocks)| json!({"role": role, "content": content(blocks)}))
                .collect(),
        );
        if !request.tools.is_empty() {
            body.insert(
                "tools".into(),
                request
                    .tools
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name,
                            "description": t.description,
                            "input_schema": t.parameters,
                        })
                    })
                    .collect(),
            );
        }
        body.insert("stream".into(), json!(true));
        if let Some(t) = request.temperature.or(profile.temperature) {
            body.insert("temperature".into(), json!(t));
        }
        Value::Object(body)
    }

    fn decode_event(&self, event: &SseEvent) -> Result<Vec<Delta>, String> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data)
            .map_err(|e| format!("a stream event is not JSON ({e}): {}", excerpt(data)))?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("");
        let tokens = |pointer: &str| {
            value
                .pointer(pointer)
                .and_then(Value::as_u64)
                .map(|n| n as u32)
        };
        Ok(match kind {
            "message_start" => vec![Delta::Usage {
                prompt: tokens("/message/usage/input_tokens"),
                completion: None,
            }],
            "content_block_start" => {
                match value.pointer("/content_block/type").and_then(Value::as_str) {
                    Some("tool_use") => vec![Delta::CallPart {
                        index: block_index(&value),
                        id: text_at(&value, "/content_block/id"),
                        name: text_at(&value, "/content_block/name"),
                        arguments: None,
                    }],
                    _ => Vec::new(),
                }
            }
            "content_block_delta" => match value.pointer("/delta/type").and_then(Value::as_str) {
                Some("input_json_delta") => vec![Delta::CallPart {
                    index: block_index(&value),
                    id: None,
                    name: None,
                    arguments: text_at(&value, "/delta/partial_json"),
                }],
                _ => value
                    .pointer("/delta/text")
                    .and_then(Value::as_str)
                    .map(|t| vec![Delta::Text(t.to_string())])
                    .unwrap_or_default(),
            },
            "message_delta" => {
                let mut deltas = Vec::new();
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    deltas.push(Delta::Finish(finish_reason(reason)));
                }
                let completion = tokens("/usage/output_tokens");
                let prompt = tokens("/usage/input_tokens");
                if completion.is_some() || prompt.is_some() {
                    deltas.push(Delta::Usage { prompt, completion });
                }
                deltas
            }
            "message_stop" => vec![Delta::Done],
            "error" => {
                let message = value
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_string();
                let status = value
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .and_then(error_status);
                vec![Delta::Error { status, message }]
            }
            _ => Vec::new(),
        })
    }

    fn decode_complete(&self, body: &Value) -> Result<ChatResponse, String> {
        let blocks = body
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("the answer has no content: {}", excerpt(&body.to_string())))?;
        let text: String = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let tool_calls = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .map(|b| NativeCall {
                id: text_at(b, "/id").unwrap_or_default(),
                name: text_at(b, "/name").unwrap_or_default(),
                arguments: b.get("input").map_or_else(|| "{}".into(), Value::to_string),
            })
            .collect();
        let finish = body
            .get("stop_reason")
            .and_then(Value::as_str)
            .map_or(FinishReason::Stop, finish_reason);
        let usage = body.get("usage").map(|u| Usage {
            prompt_tokens: u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0) as u32,
            completion_tokens: u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0) as u32,
        });
        Ok(ChatResponse {
            text,
            tool_calls,
            finish_reason: finish,
            usage,
            guided: false,
        })
    }
}

fn text_at(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn block_index(value: &Value) -> usize {
    value.get("index").and_then(Value::as_u64).unwrap_or(0) as usize
}

/// A message's role in the API and its content blocks: text (left out when empty), then its
/// calls as `tool_use` blocks; a tool result is a user message's `tool_result` block.
fn blocks(m: &super::ChatMessage) -> (&'static str, Vec<Value>) {
    let text = (!m.content.is_empty()).then(|| json!({"type": "text", "text": m.content}));
    match m.role {
        Role::Tool => (
            "user",
            vec![json!({
                "type": "tool_result",
                "tool_use_id": m.tool_call_id.as_deref().unwrap_or(""),
                "content": m.content,
            })],
        ),
        Role::Assistant => {
            let calls = m.tool_calls.iter().map(|c| {
                let input = match serde_json::from_str::<Value>(&c.arguments) {
                    Ok(Value::Object(map)) => Value::Object(map),
                    _ => json!({}),
                };
                json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input})
            });
            ("assistant", text.into_iter().chain(calls).collect())
        }
        _ => ("user", text.into_iter().collect()),
    }
}

/// A message's content: its text joined when it is only text (so plain conversations look as
/// they always did), else its blocks.
fn content(blocks: Vec<Value>) -> Value {
    let only_text = blocks
        .iter()
        .all(|b| b.get("type").and_then(Value::as_str) == Some("text"));
    if only_text {
        let texts: Vec<&str> = blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        json!(texts.join("\n\n"))
    } else {
        Value::Array(blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::Api;
    use crate::ChatMessage;

    #[test]
    fn system_goes_top_level_and_roles_alternate() {
        let p = ModelProfile::new("c", Api::Anthropic, "http://h", "claude");
        let req = ChatRequest {
            messages: vec![
                ChatMessage::new(Role::System, "be brief"),
                ChatMessage::new(Role::User, "a"),
                ChatMessage::new(Role::User, "b"),
                ChatMessage::new(Role::Assistant, "c"),
            ],
            ..ChatRequest::default()
        };
        let body = Anthropic.body(&p, &req);
        assert_eq!(body["system"], json!("be brief"));
        assert_eq!(body["max_tokens"], json!(DEFAULT_MAX_TOKENS));
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": "a\n\nb"}, {"role": "assistant", "content": "c"}])
        );
        assert_eq!(Anthropic.url("http://h/"), "http://h/v1/messages");
        assert_eq!(Anthropic.url("http://h/v1"), "http://h/v1/messages");
    }

    #[test]
    fn stop_reasons() {
        assert_eq!(finish_reason("end_turn"), FinishReason::Stop);
        assert_eq!(finish_reason("stop_sequence"), FinishReason::Stop);
        assert_eq!(finish_reason("max_tokens"), FinishReason::Length);
        assert_eq!(finish_reason("tool_use"), FinishReason::Stop);
        assert_eq!(
            finish_reason("refusal"),
            FinishReason::Other("refusal".into())
        );
    }

    #[test]
    fn native_request_body_snapshot() {
        let p = ModelProfile::new("c", Api::Anthropic, "http://h", "claude");
        let mut answer = ChatMessage::new(Role::Assistant, "Searching.");
        answer.tool_calls = vec![NativeCall {
            id: "toolu_1".into(),
            name: "web_search".into(),
            arguments: r#"{"query":"rust"}"#.into(),
        }];
        let req = ChatRequest {
            messages: vec![
                ChatMessage::new(Role::System, "be brief"),
                ChatMessage::new(Role::User, "find rust"),
                answer,
                ChatMessage::tool_result("toolu_1", "3 results"),
                ChatMessage::new(Role::User, "a note"),
            ],
            tools: vec![crate::ToolDefinition {
                name: "web_search".into(),
                description: "Search".into(),
                parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
            }],
            ..ChatRequest::default()
        };
        assert_eq!(
            Anthropic.body(&p, &req),
            json!({
                "model": "claude",
                "max_tokens": DEFAULT_MAX_TOKENS,
                "system": "be brief",
                "messages": [
                    {"role": "user", "content": "find rust"},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Searching."},
                        {"type": "tool_use", "id": "toolu_1", "name": "web_search",
                         "input": {"query": "rust"}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 results"},
                        {"type": "text", "text": "a note"},
                    ]},
                ],
                "stream": true,
                "tools": [{"name": "web_search", "description": "Search",
                           "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}],
            })
        );
    }

    #[test]
    fn reads_tool_use_blocks_streamed_and_whole() {
        let ev = |data: &str| SseEvent {
            event: None,
            data: data.into(),
        };
        assert_eq!(
            Anthropic.decode_event(&ev(
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"w","input":{}}}"#
            )),
            Ok(vec![Delta::CallPart {
                index: 1,
                id: Some("toolu_1".into()),
                name: Some("w".into()),
                arguments: None,
            }])
        );
        assert_eq!(
            Anthropic.decode_event(&ev(
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"q\": 1"}}"#
            )),
            Ok(vec![Delta::CallPart {
                index: 1,
                id: None,
                name: None,
                arguments: Some("{\"q\": 1".into()),
            }])
        );
        let whole = Anthropic
            .decode_complete(&json!({"content": [
                {"type": "text", "text": "Hi"},
                {"type": "tool_use", "id": "toolu_2", "name": "w", "input": {"q": 1}},
            ], "stop_reason": "tool_use"}))
            .unwrap();
        assert_eq!(whole.text, "Hi");
        assert_eq!(whole.finish_reason, FinishReason::Stop);
        assert_eq!(
            whole.tool_calls,
            [NativeCall {
                id: "toolu_2".into(),
                name: "w".into(),
                arguments: r#"{"q":1}"#.into()
            }]
        );
    }
}
