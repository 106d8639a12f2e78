//! Anthropic Messages: `POST {base_url}/v1/messages`.
//!
//! The system messages go in the top-level `system` field; the others become `messages`, with
//! consecutive messages of one role merged (the API wants them to alternate). `max_tokens` is
//! required by the API: the request's, else the profile's, else [`DEFAULT_MAX_TOKENS`]. The key
//! goes in `x-api-key`, with `anthropic-version: 2023-06-01`.
//!
//! Stream events: `message_start` (input tokens), `content_block_delta` (`text_delta` text),
//! `message_delta` (stop reason, output tokens), `message_stop` (done), `error`; `ping` and
//! block start/stop carry nothing the engine needs.

use serde_json::{json, Map, Value};

use super::http::{excerpt, Delta, Dialect};
use super::profiles::ModelProfile;
use super::sse::SseEvent;
use super::{ChatRequest, ChatResponse, FinishReason, Role, Usage};

/// `max_tokens` when neither the request nor the profile sets it.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// The Anthropic dialect.
pub(crate) struct Anthropic;

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
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
        let mut messages: Vec<(Role, String)> = Vec::new();
        for m in request.messages.iter().filter(|m| m.role != Role::System) {
            match messages.last_mut() {
                Some((role, content)) if *role == m.role => {
                    content.push_str("\n\n");
                    content.push_str(&m.content);
                }
                _ => messages.push((m.role, m.content.clone())),
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
                .map(|(role, content)| {
                    let role = if role == Role::Assistant {
                        "assistant"
                    } else {
                        "user"
                    };
                    json!({"role": role, "content": content})
                })
                .collect(),
        );
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
            "content_block_delta" => value
                .pointer("/delta/text")
                .and_then(Value::as_str)
                .map(|t| vec![Delta::Text(t.to_string())])
                .unwrap_or_default(),
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
            finish_reason: finish,
            usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::profiles::Api;
    use crate::models::ChatMessage;

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
        assert_eq!(
            finish_reason("tool_use"),
            FinishReason::Other("tool_use".into())
        );
    }
}
