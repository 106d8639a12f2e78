//! OpenAI-compatible chat completions: `POST {base_url}/chat/completions`.
//!
//! Asks for a stream with usage (`stream: true`, `stream_options.include_usage`) and reads
//! `data: {…}` events until `data: [DONE]`: text from `choices[0].delta.content`, the finish
//! reason from `choices[0].finish_reason`, token counts from `usage` (usually a last event with
//! no choices). A server that ignores `stream` and answers with one JSON body works too. The key,
//! when the profile has one, goes in `Authorization: Bearer …`; local servers (Ollama,
//! llama.cpp) need none.

use serde_json::{json, Map, Value};

use super::http::{Delta, Dialect};
use super::profiles::ModelProfile;
use super::sse::SseEvent;
use super::{ChatRequest, ChatResponse, FinishReason, Role, Usage};

/// The OpenAI-compatible dialect.
pub(crate) struct OpenAi;

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        other => FinishReason::Other(other.to_string()),
    }
}

fn role(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn usage_of(value: &Value) -> Option<Usage> {
    let usage = value.get("usage").filter(|u| u.is_object())?;
    let count = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0) as u32;
    Some(Usage {
        prompt_tokens: count("prompt_tokens"),
        completion_tokens: count("completion_tokens"),
    })
}

impl Dialect for OpenAi {
    fn url(&self, base_url: &str) -> String {
        format!("{}/chat/completions", base_url.trim_end_matches('/'))
    }

    fn headers(&self, key: Option<&str>) -> Vec<(&'static str, String)> {
        key.map(|k| vec![("authorization", format!("Bearer {k}"))])
            .unwrap_or_default()
    }

    fn body(&self, profile: &ModelProfile, request: &ChatRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(profile.model));
        body.insert(
            "messages".into(),
            request
                .messages
                .iter()
                .map(|m| json!({"role": role(m.role), "content": m.content}))
                .collect(),
        );
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
        if let Some(t) = request.temperature.or(profile.temperature) {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(m) = request.max_tokens.or(profile.max_tokens) {
            body.insert("max_tokens".into(), json!(m));
        }
        Value::Object(body)
    }

    fn decode_event(&self, event: &SseEvent) -> Result<Vec<Delta>, String> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(vec![Delta::Done]);
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "a stream event is not JSON ({e}): {}",
                super::http::excerpt(data)
            )
        })?;
        let mut deltas = Vec::new();
        if let Some(error) = value.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_string);
            let status = error
                .get("code")
                .and_then(Value::as_u64)
                .filter(|c| (400..600).contains(c))
                .map(|c| c as u16);
            deltas.push(Delta::Error { status, message });
            return Ok(deltas);
        }
        if let Some(choice) = value.pointer("/choices/0") {
            if let Some(text) = choice.pointer("/delta/content").and_then(Value::as_str) {
                deltas.push(Delta::Text(text.to_string()));
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                deltas.push(Delta::Finish(finish_reason(reason)));
            }
        }
        if let Some(usage) = usage_of(&value) {
            deltas.push(Delta::Usage {
                prompt: Some(usage.prompt_tokens),
                completion: Some(usage.completion_tokens),
            });
        }
        Ok(deltas)
    }

    fn decode_complete(&self, body: &Value) -> Result<ChatResponse, String> {
        let choice = body.pointer("/choices/0").ok_or_else(|| {
            format!(
                "the answer has no choices: {}",
                super::http::excerpt(&body.to_string())
            )
        })?;
        let text = choice
            .pointer("/message/content")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let finish = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map_or(FinishReason::Stop, finish_reason);
        Ok(ChatResponse {
            text,
            finish_reason: finish,
            usage: usage_of(body),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(data: &str) -> SseEvent {
        SseEvent {
            event: None,
            data: data.into(),
        }
    }

    #[test]
    fn reads_text_finish_usage_and_done() {
        let d = OpenAi;
        assert_eq!(
            d.decode_event(&event(
                r#"{"choices":[{"delta":{"content":"Hi"},"finish_reason":null}]}"#
            )),
            Ok(vec![Delta::Text("Hi".into())])
        );
        assert_eq!(
            d.decode_event(&event(
                r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#
            )),
            Ok(vec![Delta::Finish(FinishReason::Length)])
        );
        assert_eq!(
            d.decode_event(&event(
                r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#
            )),
            Ok(vec![Delta::Usage {
                prompt: Some(3),
                completion: Some(4)
            }])
        );
        assert_eq!(d.decode_event(&event("[DONE]")), Ok(vec![Delta::Done]));
        assert!(d.decode_event(&event("{oops")).is_err());
    }

    #[test]
    fn body_has_stream_options_and_overrides() {
        let mut p = ModelProfile::new("p", super::super::profiles::Api::Openai, "http://h/v1", "m");
        p.temperature = Some(0.5);
        p.max_tokens = Some(10);
        let req = ChatRequest {
            messages: vec![super::super::ChatMessage::new(Role::System, "s")],
            temperature: None,
            max_tokens: Some(20),
        };
        let body = OpenAi.body(&p, &req);
        assert_eq!(body["stream_options"]["include_usage"], json!(true));
        assert_eq!(body["temperature"], json!(0.5));
        assert_eq!(body["max_tokens"], json!(20));
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "s"})
        );
        assert_eq!(OpenAi.url("http://h/v1/"), "http://h/v1/chat/completions");
    }
}
