//! Native tool calls on the wire: real HTTP to the scripted model server on 127.0.0.1, each
//! dialect streamed and not, every event checked in order.

use serde_json::{json, Value};
use test_support::{Dialect, ScriptedModel, Turn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.1 request (connection closed after it); returns the status code and the body,
/// chunked transfer encoding undone.
async fn post(server: &ScriptedModel, path: &str, body: &Value) -> (u16, String) {
    let addr = server.base_url.strip_prefix("http://").unwrap();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8(response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let chunked = head
        .lines()
        .any(|l| l.eq_ignore_ascii_case("transfer-encoding: chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, body)
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
}

/// The events of an SSE body as `(event name, data)`, the data parsed as JSON when it is.
fn sse_events(body: &str) -> Vec<(Option<String>, Value)> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut name = None;
            let mut data = String::new();
            for line in e.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = Some(n.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push_str(d);
                } else {
                    panic!("unexpected SSE line {line:?} in {body}");
                }
            }
            let data = serde_json::from_str(&data).unwrap_or(Value::String(data));
            (name, data)
        })
        .collect()
}

fn openai_request(stream: bool) -> Value {
    json!({
        "model": "m",
        "stream": stream,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "find rust"}],
        "tools": [{"type": "function", "function": {"name": "web_search", "parameters": {}}}],
    })
}

fn anthropic_request(stream: bool) -> Value {
    json!({
        "model": "m",
        "stream": stream,
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "find rust"}],
        "tools": [{"name": "web_search", "input_schema": {"type": "object"}}],
    })
}

/// Text and two calls: the first with a server-made id and its arguments in 5-character
/// deltas, the second with a scripted id, in one delta.
fn text_and_two_calls(second_id: &str) -> Turn {
    Turn::text("Let me look.")
        .chunk_chars(0)
        .usage(7, 9)
        .with_call("web_search", r#"{"query": "rust"}"#)
        .with_call_chunk_chars(5)
        .with_call("web_fetch", r#"{"url": "https://x.test"}"#)
        .with_call_id(second_id)
}

const SEARCH_PIECES: [&str; 4] = [r#"{"que"#, r#"ry": "#, r#""rust"#, r#""}"#];

fn openai_chunk(delta: Value, finish: Value) -> Value {
    json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

fn openai_call_head(index: usize, id: &str, name: &str) -> Value {
    openai_chunk(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                               "function": {"name": name, "arguments": ""}}]}),
        Value::Null,
    )
}

fn openai_call_piece(index: usize, piece: &str) -> Value {
    openai_chunk(
        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
        Value::Null,
    )
}

/// The data of OpenAI events (no event names), `[DONE]` as a JSON string.
fn openai_events(body: &str) -> Vec<Value> {
    sse_events(body)
        .into_iter()
        .map(|(name, data)| {
            assert_eq!(name, None, "OpenAI events have no names");
            data
        })
        .collect()
}

#[tokio::test]
async fn openai_streams_text_then_two_calls() {
    let server = ScriptedModel::start(vec![text_and_two_calls("call_fetch")]).await;
    let (status, body) = post(&server, "/v1/chat/completions", &openai_request(true)).await;
    assert_eq!(status, 200, "{body}");
    let mut expected = vec![
        openai_chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        openai_chunk(json!({"content": "Let me look."}), Value::Null),
        openai_call_head(0, "call_1", "web_search"),
    ];
    expected.extend(SEARCH_PIECES.iter().map(|p| openai_call_piece(0, p)));
    expected.push(openai_call_head(1, "call_fetch", "web_fetch"));
    expected.push(openai_call_piece(1, r#"{"url": "https://x.test"}"#));
    expected.push(openai_chunk(json!({}), json!("tool_calls")));
    expected.push(json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [],
        "usage": {"prompt_tokens": 7, "completion_tokens": 9, "total_tokens": 16},
    }));
    expected.push(json!("[DONE]"));
    let events = openai_events(&body);
    assert_eq!(events.len(), expected.len(), "{body}");
    for (i, (got, want)) in events.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "event {i}");
    }
    // The pieces add up to the scripted arguments.
    let joined: String = events[3..7]
        .iter()
        .map(|e| {
            e.pointer("/choices/0/delta/tool_calls/0/function/arguments")
                .and_then(Value::as_str)
                .unwrap()
        })
        .collect();
    assert_eq!(joined, r#"{"query": "rust"}"#);
    let sent = server.requests();
    assert_eq!(sent[0].dialect, Dialect::OpenAi);
    assert_eq!(sent[0].tools(), ["web_search"]);
}

#[tokio::test]
async fn openai_answers_text_and_two_calls_in_one_body() {
    let server = ScriptedModel::start(vec![text_and_two_calls("call_fetch")]).await;
    let (status, body) = post(&server, "/v1/chat/completions", &openai_request(false)).await;
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        json["choices"],
        json!([{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "web_search", "arguments": "{\"query\": \"rust\"}"}},
                    {"id": "call_fetch", "type": "function",
                     "function": {"name": "web_fetch",
                                  "arguments": "{\"url\": \"https://x.test\"}"}},
                ],
            },
            "finish_reason": "tool_calls",
        }])
    );
    assert_eq!(json["usage"]["total_tokens"], 16);
}

#[tokio::test]
async fn openai_calls_without_text_have_null_content_and_broken_arguments_verbatim() {
    let broken = "{\"query\": 'rust', \"limit\": 3,";
    let turn = || {
        Turn::default()
            .with_call("web_search", broken)
            .with_call("web_search", "{}")
    };
    let server = ScriptedModel::start(vec![turn(), turn()]).await;

    let (_, body) = post(&server, "/v1/chat/completions", &openai_request(true)).await;
    let events = openai_events(&body);
    let expected = [
        openai_chunk(json!({"role": "assistant", "content": null}), Value::Null),
        openai_call_head(0, "call_1", "web_search"),
        openai_call_piece(0, broken),
        openai_call_head(1, "call_2", "web_search"),
        openai_call_piece(1, "{}"),
        openai_chunk(json!({}), json!("tool_calls")),
    ];
    assert_eq!(events[..expected.len()], expected[..], "{body}");
    assert_eq!(events.last(), Some(&json!("[DONE]")));

    let (_, body) = post(&server, "/v1/chat/completions", &openai_request(false)).await;
    let json: Value = serde_json::from_str(&body).unwrap();
    let message = &json["choices"][0]["message"];
    assert_eq!(message["content"], Value::Null);
    assert_eq!(message["tool_calls"][0]["function"]["arguments"], broken);
    assert_eq!(message["tool_calls"][1]["id"], "call_2");
    assert_eq!(json["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn openai_length_with_a_call_stays_length() {
    let turn = || {
        Turn::default()
            .with_call("web_search", r#"{"query": "ru"#)
            .finish_length()
    };
    let server = ScriptedModel::start(vec![turn(), turn()]).await;
    let (_, body) = post(&server, "/v1/chat/completions", &openai_request(true)).await;
    let events = openai_events(&body);
    let finish: Vec<&Value> = events
        .iter()
        .filter_map(|e| e.pointer("/choices/0/finish_reason"))
        .filter(|f| !f.is_null())
        .collect();
    assert_eq!(finish, [&json!("length")], "{body}");
    let (_, body) = post(&server, "/v1/chat/completions", &openai_request(false)).await;
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["choices"][0]["finish_reason"], "length");
}

fn anthropic_event(name: &str, data: Value) -> (Option<String>, Value) {
    (Some(name.to_string()), data)
}

fn block_start(index: usize, block: Value) -> (Option<String>, Value) {
    anthropic_event(
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn input_delta(index: usize, piece: &str) -> (Option<String>, Value) {
    anthropic_event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index,
               "delta": {"type": "input_json_delta", "partial_json": piece}}),
    )
}

fn block_stop(index: usize) -> (Option<String>, Value) {
    anthropic_event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

fn message_start(input_tokens: u32) -> (Option<String>, Value) {
    anthropic_event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_scripted", "type": "message", "role": "assistant", "content": [],
            "model": "m", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        }}),
    )
}

fn message_end(stop_reason: &str, output_tokens: u32) -> [(Option<String>, Value); 2] {
    [
        anthropic_event(
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                   "usage": {"output_tokens": output_tokens}}),
        ),
        anthropic_event("message_stop", json!({"type": "message_stop"})),
    ]
}

fn ping() -> (Option<String>, Value) {
    anthropic_event("ping", json!({"type": "ping"}))
}

#[tokio::test]
async fn anthropic_streams_a_text_block_then_two_tool_use_blocks() {
    let server = ScriptedModel::start(vec![text_and_two_calls("toolu_fetch")]).await;
    let (status, body) = post(&server, "/v1/messages", &anthropic_request(true)).await;
    assert_eq!(status, 200, "{body}");
    let mut expected = vec![
        message_start(7),
        block_start(0, json!({"type": "text", "text": ""})),
        ping(),
        anthropic_event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "Let me look."}}),
        ),
        block_stop(0),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_1", "name": "web_search", "input": {}}),
        ),
        input_delta(1, ""),
    ];
    expected.extend(SEARCH_PIECES.iter().map(|p| input_delta(1, p)));
    expected.extend([
        block_stop(1),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_fetch", "name": "web_fetch", "input": {}}),
        ),
        input_delta(2, ""),
        input_delta(2, r#"{"url": "https://x.test"}"#),
        block_stop(2),
    ]);
    expected.extend(message_end("tool_use", 9));
    let events = sse_events(&body);
    assert_eq!(events.len(), expected.len(), "{body}");
    for (i, (got, want)) in events.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "event {i}");
    }
    let sent = server.requests();
    assert_eq!(sent[0].dialect, Dialect::Anthropic);
    assert_eq!(sent[0].tools(), ["web_search"]);
}

#[tokio::test]
async fn anthropic_answers_text_and_two_tool_use_blocks_in_one_body() {
    let server = ScriptedModel::start(vec![text_and_two_calls("toolu_fetch")]).await;
    let (status, body) = post(&server, "/v1/messages", &anthropic_request(false)).await;
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        json["content"],
        json!([
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "web_search",
             "input": {"query": "rust"}},
            {"type": "tool_use", "id": "toolu_fetch", "name": "web_fetch",
             "input": {"url": "https://x.test"}},
        ])
    );
    assert_eq!(json["stop_reason"], "tool_use");
    assert_eq!(
        json["usage"],
        json!({"input_tokens": 7, "output_tokens": 9})
    );
}

#[tokio::test]
async fn anthropic_calls_without_text_start_at_block_0_and_send_broken_input_verbatim() {
    let broken = r#"{"query": "rust",}"#;
    let turn = || {
        Turn::default()
            .usage(1, 2)
            .with_call("web_search", broken)
            .with_call_chunk_chars(10)
    };
    let server = ScriptedModel::start(vec![turn(), turn()]).await;

    let (_, body) = post(&server, "/v1/messages", &anthropic_request(true)).await;
    let mut expected = vec![
        message_start(1),
        ping(),
        block_start(
            0,
            json!({"type": "tool_use", "id": "toolu_1", "name": "web_search", "input": {}}),
        ),
        input_delta(0, ""),
        input_delta(0, r#"{"query": "#),
        input_delta(0, r#""rust",}"#),
        block_stop(0),
    ];
    expected.extend(message_end("tool_use", 2));
    assert_eq!(sse_events(&body), expected, "{body}");

    // Not JSON: the one-body answer's input is empty.
    let (_, body) = post(&server, "/v1/messages", &anthropic_request(false)).await;
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        json["content"],
        json!([{"type": "tool_use", "id": "toolu_1", "name": "web_search", "input": {}}])
    );
    assert_eq!(json["stop_reason"], "tool_use");
}

#[tokio::test]
async fn anthropic_length_with_a_call_is_max_tokens() {
    let turn = || {
        Turn::text("Searching")
            .with_call("web_search", r#"{"query": "ru"#)
            .finish_length()
    };
    let server = ScriptedModel::start(vec![turn(), turn()]).await;
    let (_, body) = post(&server, "/v1/messages", &anthropic_request(true)).await;
    let events = sse_events(&body);
    let stops: Vec<&Value> = events
        .iter()
        .filter_map(|(_, d)| d.pointer("/delta/stop_reason"))
        .collect();
    assert_eq!(stops, [&json!("max_tokens")], "{body}");
    assert_eq!(
        events.last().unwrap().0.as_deref(),
        Some("message_stop"),
        "{body}"
    );
    let (_, body) = post(&server, "/v1/messages", &anthropic_request(false)).await;
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["stop_reason"], "max_tokens");
    assert_eq!(json["content"][1]["input"], json!({}));
}

#[tokio::test]
async fn turns_without_calls_are_answered_as_before() {
    let turns = || vec![Turn::text("Hi").usage(1, 1), Turn::text("").usage(1, 1)];
    let server = ScriptedModel::start([turns(), turns()].concat()).await;
    let (_, body) = post(&server, "/v1/chat/completions", &openai_request(true)).await;
    let events = openai_events(&body);
    assert_eq!(
        events[0],
        openai_chunk(json!({"role": "assistant", "content": ""}), Value::Null)
    );
    assert!(!body.contains("tool_calls"), "{body}");
    assert!(body.contains(r#""finish_reason":"stop""#), "{body}");
    // An empty answer still has its (empty) text block.
    let (_, body) = post(&server, "/v1/messages", &anthropic_request(true)).await;
    let mut expected = vec![
        message_start(1),
        block_start(0, json!({"type": "text", "text": ""})),
        ping(),
        block_stop(0),
    ];
    expected.extend(message_end("end_turn", 1));
    assert_eq!(sse_events(&body), expected, "{body}");
    let (_, body) = post(&server, "/v1/chat/completions", &openai_request(false)).await;
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        json["choices"][0]["message"],
        json!({"role": "assistant", "content": "Hi"})
    );
    let (_, body) = post(&server, "/v1/messages", &anthropic_request(false)).await;
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["content"], json!([{"type": "text", "text": ""}]));
    assert_eq!(json["stop_reason"], "end_turn");
}

#[tokio::test]
async fn recorded_openai_requests_show_tools_calls_and_results() {
    let server = ScriptedModel::start(vec![Turn::text("done")]).await;
    let request = json!({
        "model": "m",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "find rust"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "web_search", "arguments": "{\"query\":\"rust\"}"}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "web_fetch", "arguments": "{\"url\":\"u\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "3 results"},
            {"role": "tool", "tool_call_id": "call_2", "content": "page text"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "web_search", "parameters": {}}},
            {"type": "function", "function": {"name": "web_fetch", "parameters": {}}},
        ],
    });
    let (status, _) = post(&server, "/v1/chat/completions", &request).await;
    assert_eq!(status, 200);
    let sent = &server.requests()[0];
    assert_eq!(sent.tools(), ["web_search", "web_fetch"]);
    assert_eq!(
        sent.assistant_tool_calls(),
        [
            (
                "call_1".to_string(),
                "web_search".to_string(),
                r#"{"query":"rust"}"#.to_string()
            ),
            (
                "call_2".to_string(),
                "web_fetch".to_string(),
                r#"{"url":"u"}"#.to_string()
            ),
        ]
    );
    assert_eq!(
        sent.tool_results(),
        [
            ("call_1".to_string(), "3 results".to_string()),
            ("call_2".to_string(), "page text".to_string()),
        ]
    );
    assert_eq!(sent.messages()[2], ("assistant".to_string(), String::new()));
    // sys + find rust + (web_search + args) + (web_fetch + args) + both results
    let expected = 3 + 9 + (10 + 16) + (9 + 11) + 9 + 9;
    assert_eq!(sent.prompt_chars(), expected);
}

#[tokio::test]
async fn recorded_anthropic_requests_show_tools_calls_and_results() {
    let server = ScriptedModel::start(vec![Turn::text("done")]).await;
    let request = json!({
        "model": "m",
        "max_tokens": 100,
        "system": "sys",
        "messages": [
            {"role": "user", "content": "find rust"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "toolu_1", "name": "web_search",
                 "input": {"query": "rust"}},
                {"type": "tool_use", "id": "toolu_2", "name": "web_fetch", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 results"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
                 "content": [{"type": "text", "text": "page "}, {"type": "text", "text": "gone"}]},
                {"type": "text", "text": "go on"},
            ]},
        ],
        "tools": [
            {"name": "web_search", "input_schema": {"type": "object"}},
            {"name": "web_fetch", "input_schema": {"type": "object"}},
        ],
    });
    let (status, _) = post(&server, "/v1/messages", &request).await;
    assert_eq!(status, 200);
    let sent = &server.requests()[0];
    assert_eq!(sent.tools(), ["web_search", "web_fetch"]);
    assert_eq!(
        sent.assistant_tool_calls(),
        [
            (
                "toolu_1".to_string(),
                "web_search".to_string(),
                r#"{"query":"rust"}"#.to_string()
            ),
            (
                "toolu_2".to_string(),
                "web_fetch".to_string(),
                "{}".to_string()
            ),
        ]
    );
    assert_eq!(
        sent.tool_results(),
        [
            ("toolu_1".to_string(), "3 results".to_string()),
            ("toolu_2".to_string(), "page gone".to_string()),
        ]
    );
    assert_eq!(
        sent.messages()[2],
        ("user".to_string(), "3 resultspage gonego on".to_string())
    );
    // sys + find rust + Looking. + (web_search + input) + (web_fetch + {}) + the results
    let expected = 3 + 9 + 8 + (10 + 16) + (9 + 2) + (9 + 9 + 5);
    assert_eq!(sent.prompt_chars(), expected);
}

#[tokio::test]
async fn the_char_limit_sees_tool_results() {
    let server = ScriptedModel::start(vec![Turn::text("ok")]).await;
    server.set_char_limit(Some(20));
    let request = json!({
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1",
                 "content": "a result longer than twenty characters"},
            ]},
        ],
    });
    let (status, body) = post(&server, "/v1/messages", &request).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("prompt is too long"), "{body}");
    assert_eq!(server.refused_count(), 1);
}
