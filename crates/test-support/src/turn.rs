//! One scripted answer of the model server, and its JSON form.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Why the scripted model stops: `"stop"` (the default) or `"length"` (cut off at its token
/// limit). Rendered as `stop`/`length` (OpenAI) or `end_turn`/`max_tokens` (Anthropic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Finish {
    /// The answer is complete.
    #[default]
    Stop,
    /// The answer hit the token limit.
    Length,
}

/// Token usage a turn reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnUsage {
    /// Tokens in the request (`prompt_tokens` / `input_tokens`).
    pub prompt_tokens: u32,
    /// Tokens in the answer (`completion_tokens` / `output_tokens`).
    pub completion_tokens: u32,
}

/// An error answer instead of a normal one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnError {
    /// HTTP status, e.g. 429, 500, 401.
    pub status: u16,
    /// Sent as the `Retry-After` header (seconds), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// The error message, wrapped in the dialect's error JSON
    /// (`{"error":{"message":…}}` or `{"type":"error","error":{"message":…}}`).
    #[serde(default = "default_error_message")]
    pub message: String,
}

fn default_error_message() -> String {
    "scripted error".into()
}

/// One scripted answer. Turns are served in order, one per request, whichever dialect asks.
///
/// JSON form (every field optional; `{"text": "Hello"}` is a complete turn):
///
/// ```json
/// {
///   "text": "Hello there",             // the answer
///   "finish": "stop",                  // "stop" | "length"
///   "usage": {"prompt_tokens": 12, "completion_tokens": 3},  // default: estimated (chars / 4)
///   "chunk_chars": 8,                  // characters per SSE chunk (0 = all in one chunk)
///   "chunk_delay_ms": 0,               // pause before each chunk (slow streams)
///   "stall": false,                    // after the text, keep the stream open, silent, forever
///   "non_streaming": false,            // answer with one JSON body even if `stream` was asked
///   "stream_error": null,              // after the text, an error inside the stream
///   "raw_sse": null,                   // send this text verbatim as the event stream
///   "flood": {"shape": "line", "bytes": 400000000},  // after the text, a runaway stream
///   "error": {"status": 429, "retry_after": 1, "message": "slow down"},  // an error answer
///   "tool_calls": [                    // native tool calls, after the text (default: none)
///     {"id": "call_1",                 // optional: default `call_{n}` (OpenAI) / `toolu_{n}`
///                                      // (Anthropic), n = the call's position from 1
///      "name": "web_search",
///      "arguments": "{\"query\": \"rust\"}",  // the raw argument text, sent verbatim
///                                      // (may be broken JSON on purpose)
///      "chunk_chars": 5}               // characters of `arguments` per streamed delta
///                                      // (0, the default: all in one delta)
///   ]
/// }
/// ```
///
/// With tool calls, a finish of `"stop"` is reported as `tool_calls` (OpenAI) / `tool_use`
/// (Anthropic); `"length"` stays `length` / `max_tokens`. `stall` and `stream_error` apply
/// after the calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Turn {
    /// The answer text.
    pub text: String,
    /// Why the model stops.
    pub finish: Finish,
    /// Reported usage; `None` reports an estimate (characters / 4, rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<TurnUsage>,
    /// Characters per streamed chunk; 0 sends the text in one chunk.
    pub chunk_chars: usize,
    /// Pause before each chunk, in milliseconds.
    pub chunk_delay_ms: u64,
    /// After the text chunks, keep the connection open without sending anything more.
    pub stall: bool,
    /// Answer with a single JSON body (as a server ignoring `stream: true` does).
    pub non_streaming: bool,
    /// After the text, send an error event in the stream with this message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_error: Option<String>,
    /// Send this body verbatim as `text/event-stream` (for malformed streams).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_sse: Option<String>,
    /// After the text (sent as one event), a runaway stream instead of the end of the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flood: Option<Flood>,
    /// Answer with this HTTP error instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TurnError>,
    /// Native tool calls the model makes, in order, after the text.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<TurnCall>,
}

/// One native tool call of a [`Turn`]: OpenAI `tool_calls[]` / Anthropic `tool_use` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnCall {
    /// The call's id; `None`: the server makes one, `call_{n}` (OpenAI) or `toolu_{n}`
    /// (Anthropic), n being the call's position in the turn counting from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The raw argument text the model sends, verbatim — it may be broken JSON on purpose
    /// (a truncated object, trailing commas, single quotes). Anthropic's non-streamed `input`
    /// is this text parsed, or `{}` when it is not JSON.
    #[serde(default)]
    pub arguments: String,
    /// Characters of `arguments` per streamed delta; 0 sends them in one delta.
    #[serde(default)]
    pub chunk_chars: usize,
}

impl TurnCall {
    /// A call of `name` with `arguments`, its id made by the server, unchunked.
    pub fn new(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        TurnCall {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
            chunk_chars: 0,
        }
    }

    /// The argument text split into the pieces the server streams (none when it is empty).
    pub fn argument_chunks(&self) -> Vec<String> {
        if self.arguments.is_empty() {
            return Vec::new();
        }
        if self.chunk_chars == 0 {
            return vec![self.arguments.clone()];
        }
        let chars: Vec<char> = self.arguments.chars().collect();
        chars
            .chunks(self.chunk_chars)
            .map(|c| c.iter().collect())
            .collect()
    }
}

/// A runaway stream, to test a client's limits: `bytes` bytes, sent in 64 KiB chunks as fast as
/// the client reads them, then the connection ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flood {
    /// What the bytes look like.
    pub shape: FloodShape,
    /// How many.
    pub bytes: u64,
}

/// The shape of a [`Flood`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FloodShape {
    /// `data: xxxx…` with no line end: one line that never ends.
    Line,
    /// `data: xxxx…` lines of 1 KiB with no blank line: one event that is never dispatched.
    Event,
}

impl Default for Turn {
    fn default() -> Self {
        Turn {
            text: String::new(),
            finish: Finish::Stop,
            usage: None,
            chunk_chars: 8,
            chunk_delay_ms: 0,
            stall: false,
            non_streaming: false,
            stream_error: None,
            raw_sse: None,
            flood: None,
            error: None,
            tool_calls: Vec::new(),
        }
    }
}

impl Turn {
    /// A normal answer with `text`, finishing with "stop".
    pub fn text(text: impl Into<String>) -> Self {
        Turn {
            text: text.into(),
            ..Turn::default()
        }
    }

    /// An HTTP error answer with `status` and `message`.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Turn {
            error: Some(TurnError {
                status,
                retry_after: None,
                message: message.into(),
            }),
            ..Turn::default()
        }
    }

    /// A 429 answer with `Retry-After: secs`.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let mut turn = Turn::error(429, "rate limited: slow down");
        if let Some(e) = turn.error.as_mut() {
            e.retry_after = Some(retry_after_secs);
        }
        turn
    }

    /// After the text, `bytes` bytes of a runaway stream shaped as `shape`.
    pub fn flood(mut self, shape: FloodShape, bytes: u64) -> Self {
        self.flood = Some(Flood { shape, bytes });
        self
    }

    /// An event stream sent verbatim (e.g. malformed SSE).
    pub fn raw_sse(body: impl Into<String>) -> Self {
        Turn {
            raw_sse: Some(body.into()),
            ..Turn::default()
        }
    }

    /// Finish with "length" (cut off by the token limit).
    pub fn finish_length(mut self) -> Self {
        self.finish = Finish::Length;
        self
    }

    /// Report this usage.
    pub fn usage(mut self, prompt_tokens: u32, completion_tokens: u32) -> Self {
        self.usage = Some(TurnUsage {
            prompt_tokens,
            completion_tokens,
        });
        self
    }

    /// Send `chars` characters per chunk (0: one chunk).
    pub fn chunk_chars(mut self, chars: usize) -> Self {
        self.chunk_chars = chars;
        self
    }

    /// Pause `delay` before each chunk.
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay_ms = delay.as_millis() as u64;
        self
    }

    /// Keep the stream open and silent after the text.
    pub fn stall(mut self) -> Self {
        self.stall = true;
        self
    }

    /// Answer with one JSON body even when streaming was asked for.
    pub fn non_streaming(mut self) -> Self {
        self.non_streaming = true;
        self
    }

    /// After the text, an error inside the stream.
    pub fn stream_error(mut self, message: impl Into<String>) -> Self {
        self.stream_error = Some(message.into());
        self
    }

    /// Add a native tool call of `name` with the raw `arguments` text (sent verbatim, even when
    /// not valid JSON); its id is made by the server unless [`Turn::with_call_id`] sets one.
    pub fn with_call(mut self, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        self.tool_calls.push(TurnCall::new(name, arguments));
        self
    }

    /// Give the last added tool call this id (no effect without a call).
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        if let Some(call) = self.tool_calls.last_mut() {
            call.id = Some(id.into());
        }
        self
    }

    /// Stream the last added tool call's arguments `chars` characters per delta (0: one delta;
    /// no effect without a call).
    pub fn with_call_chunk_chars(mut self, chars: usize) -> Self {
        if let Some(call) = self.tool_calls.last_mut() {
            call.chunk_chars = chars;
        }
        self
    }

    /// The tool calls with their ids: the scripted one, or `{prefix}_{n}` (n = position from
    /// 1), kept distinct from every other id of the turn.
    pub fn call_ids(&self, prefix: &str) -> Vec<String> {
        let explicit: Vec<&str> = self
            .tool_calls
            .iter()
            .filter_map(|c| c.id.as_deref())
            .collect();
        let mut ids: Vec<String> = Vec::with_capacity(self.tool_calls.len());
        for (i, call) in self.tool_calls.iter().enumerate() {
            let id = match &call.id {
                Some(id) => id.clone(),
                None => {
                    let base = format!("{prefix}_{}", i + 1);
                    let mut id = base.clone();
                    let mut k = 1;
                    while explicit.contains(&id.as_str()) || ids.contains(&id) {
                        k += 1;
                        id = format!("{base}_{k}");
                    }
                    id
                }
            };
            ids.push(id);
        }
        ids
    }

    /// The text split into the chunks the server sends.
    pub fn chunks(&self) -> Vec<String> {
        if self.text.is_empty() {
            return Vec::new();
        }
        if self.chunk_chars == 0 {
            return vec![self.text.clone()];
        }
        let chars: Vec<char> = self.text.chars().collect();
        chars
            .chunks(self.chunk_chars)
            .map(|c| c.iter().collect())
            .collect()
    }

    /// The usage reported for a request whose messages total `prompt_chars` characters.
    pub fn reported_usage(&self, prompt_chars: usize) -> TurnUsage {
        self.usage.unwrap_or(TurnUsage {
            prompt_tokens: prompt_chars.div_ceil(4) as u32,
            completion_tokens: (self.text.chars().count()
                + self
                    .tool_calls
                    .iter()
                    .map(|c| c.name.chars().count() + c.arguments.chars().count())
                    .sum::<usize>())
            .div_ceil(4) as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_form_uses_defaults() {
        let turns: Vec<Turn> = serde_json::from_str(
            r#"[{"text": "hi"}, {"error": {"status": 429, "retry_after": 2}},
                {"text": "abcdef", "finish": "length", "chunk_chars": 4,
                 "usage": {"prompt_tokens": 1, "completion_tokens": 2}}]"#,
        )
        .unwrap();
        assert_eq!(turns[0], Turn::text("hi"));
        assert_eq!(
            turns[1],
            Turn::rate_limited(2).with_message("scripted error")
        );
        assert_eq!(turns[2].finish, Finish::Length);
        assert_eq!(turns[2].chunks(), ["abcd", "ef"]);
        assert!(serde_json::from_str::<Turn>(r#"{"txt": "typo"}"#).is_err());
    }

    #[test]
    fn round_trips_through_json() {
        let turn = Turn::text("x")
            .usage(3, 4)
            .chunk_delay(Duration::from_millis(5));
        let json = serde_json::to_string(&turn).unwrap();
        assert_eq!(serde_json::from_str::<Turn>(&json).unwrap(), turn);
    }

    #[test]
    fn chunks_split_on_characters() {
        assert_eq!(
            Turn::text("héllo").chunk_chars(2).chunks(),
            ["hé", "ll", "o"]
        );
        assert_eq!(Turn::text("abc").chunk_chars(0).chunks(), ["abc"]);
        assert!(Turn::text("").chunks().is_empty());
    }

    #[test]
    fn tool_calls_json_form_round_trips() {
        let json = r#"{"text": "Looking.", "tool_calls": [
            {"id": "call_1", "name": "web_search", "arguments": "{\"query\": \"rust\"}",
             "chunk_chars": 5},
            {"name": "web_fetch", "arguments": "{'url': 'x',"}]}"#;
        let turn: Turn = serde_json::from_str(json).unwrap();
        let expected = Turn::text("Looking.")
            .with_call("web_search", r#"{"query": "rust"}"#)
            .with_call_id("call_1")
            .with_call_chunk_chars(5)
            .with_call("web_fetch", "{'url': 'x',");
        assert_eq!(turn, expected);
        assert_eq!(turn.tool_calls[1].id, None);
        assert_eq!(turn.tool_calls[1].chunk_chars, 0);
        let back = serde_json::to_value(&turn).unwrap();
        assert_eq!(
            back["tool_calls"],
            serde_json::json!([
                {"id": "call_1", "name": "web_search", "arguments": "{\"query\": \"rust\"}",
                 "chunk_chars": 5},
                {"name": "web_fetch", "arguments": "{'url': 'x',", "chunk_chars": 0},
            ])
        );
        assert_eq!(serde_json::from_value::<Turn>(back).unwrap(), turn);
    }

    #[test]
    fn no_tool_calls_are_left_out_of_the_json_form() {
        let json = serde_json::to_value(Turn::text("x")).unwrap();
        assert!(json.get("tool_calls").is_none(), "{json}");
        let turn: Turn = serde_json::from_str(r#"{"text": "x"}"#).unwrap();
        assert!(turn.tool_calls.is_empty());
    }

    #[test]
    fn unknown_tool_call_fields_are_refused() {
        let err = serde_json::from_str::<Turn>(r#"{"tool_calls": [{"name": "a", "args": "{}"}]}"#)
            .unwrap_err();
        assert!(err.to_string().contains("args"), "{err}");
        assert!(serde_json::from_str::<Turn>(r#"{"tool_calls": [{"arguments": "{}"}]}"#).is_err());
    }

    #[test]
    fn call_ids_follow_positions_and_stay_distinct() {
        let turn = Turn::default()
            .with_call("a", "")
            .with_call("b", "")
            .with_call_id("mine")
            .with_call("c", "");
        assert_eq!(turn.call_ids("call"), ["call_1", "mine", "call_3"]);
        assert_eq!(turn.call_ids("toolu"), ["toolu_1", "mine", "toolu_3"]);
        let clash = Turn::default()
            .with_call("a", "")
            .with_call("b", "")
            .with_call_id("call_1");
        assert_eq!(clash.call_ids("call"), ["call_1_2", "call_1"]);
    }

    #[test]
    fn call_arguments_split_on_characters() {
        let turn = Turn::default()
            .with_call("a", r#"{"q": "é"}"#)
            .with_call_chunk_chars(4)
            .with_call("b", "{}")
            .with_call("c", "");
        assert_eq!(
            turn.tool_calls[0].argument_chunks(),
            [r#"{"q""#, r#": "é"#, r#""}"#]
        );
        assert_eq!(turn.tool_calls[1].argument_chunks(), ["{}"]);
        assert!(turn.tool_calls[2].argument_chunks().is_empty());
    }

    #[test]
    fn usage_estimate_counts_the_calls() {
        let turn = Turn::text("abcd").with_call("ab", "cdef");
        assert_eq!(turn.reported_usage(8).completion_tokens, 3);
        assert_eq!(turn.reported_usage(8).prompt_tokens, 2);
    }

    impl Turn {
        fn with_message(mut self, message: &str) -> Self {
            self.error.as_mut().unwrap().message = message.into();
            self
        }
    }
}
