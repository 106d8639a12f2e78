//! OpenAI-compatible chat completions: `POST {base_url}/chat/completions`.
//!
//! Asks for a stream with usage (`stream: true`, `stream_options.include_usage`) and reads
//! `data: {…}` events until `data: [DONE]`: text from `choices[0].delta.content`, native tool
//! calls from `choices[0].delta.tool_calls[]` (by `index`: `id` and `function.name` first,
//! then pieces of `function.arguments`), the finish reason from `choices[0].finish_reason`,
//! token counts from `usage` (usually a last event with no choices).
//!
//! Native tool calling: the request's tools go in `tools` (`{"type": "function", "function":
//! {name, description, parameters}}`); an assistant message's calls in its `tool_calls`
//! (`{id, type: "function", function: {name, arguments}}`, `content` null when it has no
//! text); each result in a `tool` message with its `tool_call_id`. A server that ignores `stream` and answers with one JSON body works too. The key,
//! when the profile has one, goes in `Authorization: Bearer …`; local servers (Ollama,
//! llama.cpp) need none.

use serde_json::{json, Map, Value};

use super::http::{Delta, Dialect};
use super::profiles::ModelProfile;
use super::sse::SseEvent;
use super::{ChatMessage, ChatRequest, ChatResponse, FinishReason, NativeCall, Role, Usage};

/// The OpenAI-compatible dialect.
pub(crate) struct OpenAi;

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        // A model that stops to call tools has finished its answer.
        "stop" | "tool_calls" | "function_call" => FinishReason::Stop,
        "length" => FinishReason::Length,
        other => FinishReason::Other(other.to_string()),
    }
}

fn role(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// One message in the API's form.
fn message(m: &ChatMessage) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), json!(role(m.role)));
    if m.tool_calls.is_empty() || !m.content.is_empty() {
        out.insert("content".into(), json!(m.content));
    } else {
        out.insert("content".into(), Value::Null);
    }
    if !m.tool_calls.is_empty() {
        out.insert(
            "tool_calls".into(),
            m.tool_calls
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    })
                })
                .collect(),
        );
    }
    if let Some(id) = &m.tool_call_id {
        out.insert("tool_call_id".into(), json!(id));
    }
    Value::Object(out)
}

/// The calls of a whole (non-streamed) message.
fn message_calls(message: &Value) -> Vec<NativeCall> {
    message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| NativeCall {
                    id: c
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    name: c
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    arguments: match c.pointer("/function/arguments") {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Null) | None => String::new(),
                        Some(other) => other.to_string(),
                    },
                })
                .collect()
        })
        .unwrap_or_default()
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
            request.messages.iter().map(message).collect(),
        );
        if !request.tools.is_empty() {
            body.insert(
                "tools".into(),
                request
                    .tools
                    .iter()
                    .map(|t| {
                        json!({"type": "function", "function": {
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.parameters,
                        }})
                    })
                    .collect(),
            );
        }
        if let Some(guide) = &request.guide {
            body.insert("grammar".into(), json!(guide.grammar));
            if !guide.triggers.is_empty() {
                body.insert("grammar_lazy".into(), json!(true));
                body.insert(
                    "grammar_triggers".into(),
                    guide
                        .triggers
                        .iter()
                        .map(|t| json!({"type": "pattern", "value": t}))
                        .collect(),
                );
            }
        }
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
            let calls = choice
                .pointer("/delta/tool_calls")
                .and_then(Value::as_array);
            for (n, call) in calls.into_iter().flatten().enumerate() {
                let text = |pointer: &str| {
                    call.pointer(pointer)
                        .and_then(Value::as_str)
                        .map(str::to_string)
                };
                deltas.push(Delta::CallPart {
                    index: call
                        .get("index")
                        .and_then(Value::as_u64)
                        .map_or(n, |i| i as usize),
                    id: text("/id"),
                    name: text("/function/name"),
                    arguments: text("/function/arguments"),
                });
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
        // The app's runtime says so when the answer's end was written under its grammar.
        if value.get("guided") == Some(&Value::Bool(true)) {
            deltas.push(Delta::Guided);
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
        let tool_calls = choice.get("message").map(message_calls).unwrap_or_default();
        let finish = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map_or(FinishReason::Stop, finish_reason);
        Ok(ChatResponse {
            text,
            tool_calls,
            finish_reason: finish,
            usage: usage_of(body),
            guided: body.get("guided") == Some(&Value::Bool(true)),
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
        let mut p = ModelProfile::new("p", crate::profiles::Api::Openai, "http://h/v1", "m");
        p.temperature = Some(0.5);
        p.max_tokens = Some(10);
        let req = ChatRequest {
            messages: vec![crate::ChatMessage::new(Role::System, "s")],
            temperature: None,
            max_tokens: Some(20),
            tools: Vec::new(),
            guide: None,
        };
        let body = OpenAi.body(&p, &req);
        assert!(body.get("grammar").is_none());
        assert_eq!(body["stream_options"]["include_usage"], json!(true));
        assert_eq!(body["temperature"], json!(0.5));
        assert_eq!(body["max_tokens"], json!(20));
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "s"})
        );
        assert_eq!(OpenAi.url("http://h/v1/"), "http://h/v1/chat/completions");
    }

    #[test]
    fn a_guide_goes_in_llama_cpp_grammar_fields() {
        let p = ModelProfile::new("p", crate::profiles::Api::Local, "", "m.gguf");
        let lazy = ChatRequest {
            guide: Some(crate::Guide {
                grammar: "root ::= \"<tool_call>\"".into(),
                triggers: vec!["<tool_call>$".into()],
            }),
            ..Default::default()
        };
        let body = OpenAi.body(&p, &lazy);
        assert_eq!(body["grammar"], json!("root ::= \"<tool_call>\""));
        assert_eq!(body["grammar_lazy"], json!(true));
        assert_eq!(
            body["grammar_triggers"],
            json!([{"type": "pattern", "value": "<tool_call>$"}])
        );
        let eager = ChatRequest {
            guide: Some(crate::Guide {
                grammar: "root ::= \"x\"".into(),
                triggers: Vec::new(),
            }),
            ..Default::default()
        };
        let body = OpenAi.body(&p, &eager);
        assert_eq!(body["grammar"], json!("root ::= \"x\""));
        assert!(body.get("grammar_lazy").is_none() && body.get("grammar_triggers").is_none());
    }

    fn native_request() -> ChatRequest {
        let mut answer = ChatMessage::new(Role::Assistant, "");
        answer.tool_calls = vec![NativeCall {
            id: "call_1".into(),
            name: "web_search".into(),
            arguments: r#"{"query":"rust"}"#.into(),
        }];
        ChatRequest {
            messages: vec![
                ChatMessage::new(Role::System, "s"),
                ChatMessage::new(Role::User, "find rust"),
                answer,
                ChatMessage::tool_result("call_1", "3 results"),
                ChatMessage::new(Role::User, "a note"),
            ],
            tools: vec![crate::ToolDefinition {
                name: "web_search".into(),
                description: "Search".into(),
                parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
            }],
            ..ChatRequest::default()
        }
    }

    #[test]
    fn native_request_body_snapshot() {
        let p = ModelProfile::new("p", crate::profiles::Api::Openai, "http://h/v1", "m");
        assert_eq!(
            OpenAi.body(&p, &native_request()),
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "s"},
                    {"role": "user", "content": "find rust"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "web_search", "arguments": "{\"query\":\"rust\"}"}}
                    ]},
                    {"role": "tool", "content": "3 results", "tool_call_id": "call_1"},
                    {"role": "user", "content": "a note"},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
                "tools": [{"type": "function", "function": {
                    "name": "web_search",
                    "description": "Search",
                    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
                }}],
            })
        );
    }

    #[test]
    fn reads_tool_call_deltas_and_whole_answers() {
        let d = OpenAi;
        assert_eq!(
            d.decode_event(&event(
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"web_search","arguments":""}}]},"finish_reason":null}]}"#
            )),
            Ok(vec![Delta::CallPart {
                index: 0,
                id: Some("call_1".into()),
                name: Some("web_search".into()),
                arguments: Some(String::new()),
            }])
        );
        assert_eq!(
            d.decode_event(&event(
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"q"}}]},"finish_reason":null}]}"#
            )),
            Ok(vec![Delta::CallPart {
                index: 1,
                id: None,
                name: None,
                arguments: Some("{\"q".into()),
            }])
        );
        assert_eq!(
            d.decode_event(&event(
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#
            )),
            Ok(vec![Delta::Finish(FinishReason::Stop)])
        );
        let whole = d
            .decode_complete(
                &json!({"choices": [{"message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_9", "type": "function",
                                "function": {"name": "w", "arguments": "{}"}}]},
                "finish_reason": "tool_calls"}]}),
            )
            .unwrap();
        assert_eq!(
            whole.tool_calls,
            [NativeCall {
                id: "call_9".into(),
                name: "w".into(),
                arguments: "{}".into()
            }]
        );
    }
}
