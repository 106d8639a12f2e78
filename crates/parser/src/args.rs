//! The arguments of a native tool call: JSON text from the model, read with the repairs that
//! have one possible meaning.
//!
//! Models, small ones most, send argument JSON that a strict reader refuses. [`read_arguments`]
//! first reads it strictly; when that fails it reads it as a careful person would, repairing
//! what can only mean one thing:
//! - single-quoted strings (`{'q': 'rust'}`) and unquoted keys (`{q: "rust"}`) are strings;
//! - Python's `True`, `False` and `None` are `true`, `false` and `null`;
//! - raw line breaks, tabs and other control characters inside strings are kept as written;
//! - a comma before a closing `}` or `]` is dropped, and so are `//` and `/* */` comments and
//!   a byte-order mark;
//! - a document cut off after a complete value is closed (`{"q": "rust"` → `{"q": "rust"}`);
//! - one object inside prose or a Markdown code fence is that object, when nothing outside it
//!   is a bracket of any kind;
//! - one stray `}` after an object of plain values is dropped;
//! - a JSON object sent as a string (`"{\"q\": \"rust\"}"`) is read as that object, and a
//!   plain string for a tool with exactly one parameter is that parameter's value.
//!
//! Anything else is refused with the reason (and where, when it is a place), for the model to
//! send the call again: a document cut off inside a string, a number or after a key (the value
//! could be anything), mismatched brackets, a stray `}` after nested values (it may close one
//! of them), two objects or brackets in the prose around one, bare words as values, or a value
//! that is not an object. The run loop reports a refusal as a malformed call with the tool's
//! schema. `tests/fixtures/native_arguments.jsonl` is the case table (the README gives
//! how it compares with other readers).

use serde_json::Value;

use super::Params;
use artifactflow_ground::tool_spec::ToolSpec;

/// A native call's arguments as [`Params`] (every value as text, as the XML format gives
/// them: the gate coerces types), and the repairs that were needed, in words (empty when the
/// JSON was valid).
pub fn read_arguments(
    raw: &str,
    spec: Option<&ToolSpec>,
) -> Result<(Params, Vec<&'static str>), String> {
    let mut repairs = Vec::new();
    let mut text = raw.trim();
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        repairs.push("a byte-order mark was left out");
        text = rest.trim();
    }
    let value = if text.is_empty() {
        Value::Object(Default::default())
    } else {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => value,
            Err(_) => read_tolerant(text, &mut repairs)?,
        }
    };
    let object = match value {
        Value::Object(map) => map,
        Value::String(s) => match serde_json::from_str::<Value>(s.trim()) {
            Ok(Value::Object(map)) => {
                repairs.push("an object sent as a string was read as the object");
                map
            }
            _ => match spec.map(|s| s.params.as_slice()) {
                Some([only]) => {
                    repairs.push("a plain string was read as the tool's only parameter");
                    let mut map = serde_json::Map::new();
                    map.insert(only.name.clone(), Value::String(s));
                    map
                }
                _ => {
                    return Err(
                        "the arguments must be a JSON object of parameters; found a string".into(),
                    )
                }
            },
        },
        other => {
            return Err(format!(
                "the arguments must be a JSON object of parameters; found {}",
                kind(&other)
            ))
        }
    };
    let params = object
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s,
                other => other.to_string(),
            };
            (k, text)
        })
        .collect();
    Ok((params, repairs))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Deepest nesting the tolerant reader follows.
const MAX_DEPTH: usize = 128;

/// Why the tolerant reader stopped: a reason for the model, or text after the value (when
/// the value may be an object inside prose).
enum Stop {
    Refused(String),
    TextAfter(String),
}

impl From<String> for Stop {
    fn from(why: String) -> Stop {
        Stop::Refused(why)
    }
}

/// `text` (trimmed, not valid JSON) read as the one value it can only mean, or why not.
fn read_tolerant(text: &str, repairs: &mut Vec<&'static str>) -> Result<Value, String> {
    let mut whole = Reader::new(text);
    let (why, text_after) = match whole.document() {
        Ok(value) => {
            whole.merge_into(repairs);
            return Ok(value);
        }
        Err(Stop::Refused(why)) => (why, false),
        Err(Stop::TextAfter(why)) => (why, true),
    };
    // Prose or a Markdown fence around one object: only when nothing outside it could be
    // part of it (no bracket of any kind) and it does not start the text with its own error.
    let Some(open) = text.find('{') else {
        return Err(why);
    };
    let before = &text[..open];
    if (open == 0 && !text_after) || before.contains(['}', '[', ']']) {
        return Err(why);
    }
    let mut reader = Reader::new(text);
    reader.at = open;
    let value = reader.object(0)?;
    reader.skip()?;
    let after = &text[reader.at..];
    if after == "}" {
        reader.stray_brace(&value)?;
    } else if after.contains(['{', '}', '[', ']']) {
        return Err(
            "the arguments hold more than one object, or brackets around one: which \
                    one is meant cannot be known"
                .into(),
        );
    }
    reader.note(if before.trim_start().starts_with("```") {
        "a Markdown code fence around the object was left out"
    } else {
        "text around the object was left out"
    });
    reader.merge_into(repairs);
    Ok(value)
}

/// A reader of JSON as models write it when they get it wrong (see the module docs): it
/// returns the value, noting each repair, or refuses with the reason and where.
struct Reader<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    at: usize,
    repairs: Vec<&'static str>,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text,
            at: 0,
            repairs: Vec::new(),
        }
    }

    fn note(&mut self, what: &'static str) {
        if !self.repairs.contains(&what) {
            self.repairs.push(what);
        }
    }

    fn merge_into(self, repairs: &mut Vec<&'static str>) {
        for what in self.repairs {
            if !repairs.contains(&what) {
                repairs.push(what);
            }
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    /// Where the next character is, for the model: "character N" (counted from 1).
    fn here(&self) -> String {
        format!("character {}", self.text[..self.at].chars().count() + 1)
    }

    fn invalid(&self, what: &str) -> String {
        format!(
            "the arguments are not valid JSON: {what} at {}",
            self.here()
        )
    }

    /// Skip whitespace and `//` or `/* */` comments.
    fn skip(&mut self) -> Result<(), String> {
        loop {
            let rest = &self.text[self.at..];
            let trimmed = rest.trim_start();
            self.at += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.at += trimmed.find('\n').unwrap_or(trimmed.len());
                self.note("comments were left out");
            } else if let Some(comment) = trimmed.strip_prefix("/*") {
                let Some(end) = comment.find("*/") else {
                    return Err(self.invalid("a `/*` comment is never closed"));
                };
                self.at += end + 4;
                self.note("comments were left out");
            } else {
                return Ok(());
            }
        }
    }

    /// The whole text as one value (one stray `}` after a flat object is dropped).
    fn document(&mut self) -> Result<Value, Stop> {
        self.skip()?;
        let value = self.value(0)?;
        self.skip()?;
        match &self.text[self.at..] {
            "" => Ok(value),
            "}" => {
                self.stray_brace(&value)?;
                Ok(value)
            }
            rest if rest.starts_with(['}', ']']) => Err(Stop::Refused(format!(
                "the arguments have a `{}` that closes nothing open",
                &rest[..1]
            ))),
            _ => Err(Stop::TextAfter(
                self.invalid("unexpected text after the value"),
            )),
        }
    }

    /// One `}` after `value`: dropped when `value` is an object of plain values (with nested
    /// values, the brace may close one of them, so what was meant cannot be known).
    fn stray_brace(&mut self, value: &Value) -> Result<(), String> {
        let flat = value
            .as_object()
            .is_some_and(|o| o.values().all(|v| !v.is_object() && !v.is_array()));
        if !flat {
            return Err(
                "the arguments have a `}` that closes nothing open (with nested values, which \
                 one it was meant to close cannot be known)"
                    .into(),
            );
        }
        self.at = self.text.len();
        self.note("a stray closing brace at the end was dropped");
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("the arguments nest deeper than {MAX_DEPTH} levels"));
        }
        match self.peek() {
            None => Err("the arguments end before a value (cut off?)".into()),
            Some('{') => self.object(depth),
            Some('[') => self.array(depth),
            Some('"' | '\'') => self.string().map(Value::String),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number(depth),
            Some(c) if c.is_alphabetic() || c == '_' => {
                let at = self.here();
                let word = self.word();
                let value = match word {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "null" => Value::Null,
                    "True" | "False" | "None" => {
                        self.note("Python's True, False and None were read as JSON");
                        match word {
                            "True" => Value::Bool(true),
                            "False" => Value::Bool(false),
                            _ => Value::Null,
                        }
                    }
                    _ => {
                        return Err(format!(
                            "the arguments are not valid JSON: `{word}` at {at} is not a value \
                             (text needs quotes)"
                        ))
                    }
                };
                Ok(value)
            }
            Some(c) => Err(self.invalid(&format!("unexpected `{c}`"))),
        }
    }

    /// A bare word: letters, digits, `_`, `$` and `-`.
    fn word(&mut self) -> &'a str {
        let start = self.at;
        while let Some(c) = self.peek() {
            if c.is_alphanumeric() || matches!(c, '_' | '$' | '-') {
                self.at += c.len_utf8();
            } else {
                break;
            }
        }
        &self.text[start..self.at]
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.bump();
        let mut map = serde_json::Map::new();
        loop {
            self.skip()?;
            let key = match self.peek() {
                None => return Ok(self.cut_off(Value::Object(map))),
                Some('}') => {
                    self.bump();
                    return Ok(Value::Object(map));
                }
                Some(']') => return Err("the arguments have a `]` that closes nothing open".into()),
                Some('"' | '\'') => self.string()?,
                Some(c) if c.is_alphabetic() || c == '_' || c == '$' => {
                    self.note("unquoted keys were read as strings");
                    self.word().to_string()
                }
                Some(c) => return Err(self.invalid(&format!("expected a key, found `{c}`"))),
            };
            self.skip()?;
            match self.peek() {
                Some(':') => {
                    self.bump();
                }
                None => {
                    return Err("the arguments end after a key, before its value (cut off?)".into())
                }
                Some(c) => {
                    return Err(
                        self.invalid(&format!("expected `:` after key `{key}`, found `{c}`"))
                    )
                }
            }
            self.skip()?;
            if self.peek().is_none() {
                return Err("the arguments end after a key, before its value (cut off?)".into());
            }
            let value = self.value(depth + 1)?;
            map.insert(key.clone(), value);
            self.skip()?;
            match self.peek() {
                None => return Ok(self.cut_off(Value::Object(map))),
                Some(',') => {
                    self.bump();
                    self.skip()?;
                    if matches!(self.peek(), None | Some('}')) {
                        self.note("a comma before a closing bracket was dropped");
                    }
                }
                Some('}') => {
                    self.bump();
                    return Ok(Value::Object(map));
                }
                Some(']') => return Err("the arguments have a `]` that closes nothing open".into()),
                Some(c) => {
                    return Err(self.invalid(&format!(
                        "expected `,` or `}}` after the value of `{key}`, found `{c}`"
                    )))
                }
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip()?;
            match self.peek() {
                None => return Ok(self.cut_off(Value::Array(items))),
                Some(']') => {
                    self.bump();
                    return Ok(Value::Array(items));
                }
                Some('}') => return Err("the arguments have a `}` that closes nothing open".into()),
                Some(_) => items.push(self.value(depth + 1)?),
            }
            self.skip()?;
            match self.peek() {
                None => return Ok(self.cut_off(Value::Array(items))),
                Some(',') => {
                    self.bump();
                    self.skip()?;
                    if matches!(self.peek(), None | Some(']')) {
                        self.note("a comma before a closing bracket was dropped");
                    }
                }
                Some(']') => {
                    self.bump();
                    return Ok(Value::Array(items));
                }
                Some('}') => return Err("the arguments have a `}` that closes nothing open".into()),
                Some(c) => {
                    return Err(self.invalid(&format!("expected `,` or `]` in a list, found `{c}`")))
                }
            }
        }
    }

    /// A container the document ended in, after a complete value: closed.
    fn cut_off(&mut self, value: Value) -> Value {
        self.note("the cut-off arguments were closed");
        value
    }

    /// A string in double or single quotes, decoded; raw control characters are kept.
    fn string(&mut self) -> Result<String, String> {
        const CUT: &str =
            "the arguments end in the middle of a string (cut off?): the value cannot be known";
        let Some(quote) = self.bump() else {
            return Err(CUT.into());
        };
        if quote == '\'' {
            self.note("single-quoted strings were read as JSON strings");
        }
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(CUT.into());
            };
            match c {
                c if c == quote => return Ok(out),
                '\\' => {
                    let Some(e) = self.bump() else {
                        return Err(CUT.into());
                    };
                    match e {
                        '"' | '\\' | '/' | '\'' => out.push(e),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'u' => out.push(self.unicode_escape()?),
                        other => return Err(self.invalid(&format!("unknown escape `\\{other}`"))),
                    }
                }
                '\n' | '\r' => {
                    self.note("line breaks inside strings were escaped");
                    out.push(c);
                }
                '\t' => {
                    self.note("tabs inside strings were escaped");
                    out.push(c);
                }
                c if (c as u32) < 0x20 => {
                    self.note("control characters inside strings were escaped");
                    out.push(c);
                }
                c => out.push(c),
            }
        }
    }

    /// The character of a `\uXXXX` escape (the `\u` read), a surrogate pair as one.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let high = self.hex4()?;
        if (0xD800..0xDC00).contains(&high) && self.text[self.at..].starts_with("\\u") {
            self.at += 2;
            let low = self.hex4()?;
            if (0xDC00..0xE000).contains(&low) {
                let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                return char::from_u32(code).ok_or_else(|| self.invalid("bad `\\u` escape"));
            }
        }
        char::from_u32(high).ok_or_else(|| self.invalid("bad `\\u` escape"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.text[self.at..].get(..4).unwrap_or("");
        if digits.len() < 4 && self.at + digits.len() >= self.text.len() {
            return Err(
                "the arguments end in the middle of a string (cut off?): the value cannot be known"
                    .into(),
            );
        }
        let code = u32::from_str_radix(digits, 16)
            .ok()
            .filter(|_| digits.chars().all(|c| c.is_ascii_hexdigit()))
            .ok_or_else(|| self.invalid("bad `\\u` escape"))?;
        self.at += 4;
        Ok(code)
    }

    /// A number as JSON writes it; one the document ends in may have been cut off, so it is
    /// refused inside a container.
    fn number(&mut self, depth: usize) -> Result<Value, String> {
        let start = self.at;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E') {
                self.at += 1;
            } else {
                break;
            }
        }
        let literal = &self.text[start..self.at];
        if depth > 0 && self.at == self.text.len() {
            return Err(format!(
                "the arguments end in the middle of a number (`{literal}`, cut off?): the value \
                 cannot be known"
            ));
        }
        match serde_json::from_str::<Value>(literal) {
            Ok(number @ Value::Number(_)) => Ok(number),
            _ => {
                self.at = start;
                Err(self.invalid(&format!("`{literal}` is not a number")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use artifactflow_ground::tool_spec::{ParamSpec, ParamType};

    fn read(raw: &str) -> Result<Vec<(String, String)>, String> {
        read_arguments(raw, None).map(|(p, _)| p.into_iter().collect())
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn valid_json_needs_no_repair_and_values_become_text() {
        let (params, repairs) = read_arguments(
            r#"{"q": "rust", "n": 3, "fresh": true, "tags": ["a"], "x": null}"#,
            None,
        )
        .unwrap();
        assert!(repairs.is_empty());
        let params: Vec<_> = params.into_iter().collect();
        assert_eq!(
            params,
            pairs(&[
                ("q", "rust"),
                ("n", "3"),
                ("fresh", "true"),
                ("tags", "[\"a\"]")
            ])
        );
        assert_eq!(read("  ").unwrap(), pairs(&[]));
    }

    #[test]
    fn repairs_what_has_one_meaning() {
        assert_eq!(read(r#"{"q": "rust",}"#).unwrap(), pairs(&[("q", "rust")]));
        assert_eq!(
            read("{'q': 'it\\'s \"x\"'}").unwrap(),
            pairs(&[("q", "it's \"x\"")])
        );
        assert_eq!(
            read("{\"body\": \"line 1\nline 2\tend\"}").unwrap(),
            pairs(&[("body", "line 1\nline 2\tend")])
        );
        assert_eq!(
            read(r#"{"q": "rust", "n": [1, 2,"#).unwrap(),
            pairs(&[("q", "rust"), ("n", "[1,2]")])
        );
        assert_eq!(
            read(r#""{\"q\": \"rust\"}""#).unwrap(),
            pairs(&[("q", "rust")])
        );
        let (_, repairs) = read_arguments(r#"{'q': 'a',"#, None).unwrap();
        assert_eq!(
            repairs,
            [
                "single-quoted strings were read as JSON strings",
                "a comma before a closing bracket was dropped",
                "the cut-off arguments were closed"
            ]
        );
    }

    #[test]
    fn each_new_repair_is_named() {
        let (params, repairs) = read_arguments(
            "\u{feff}```json\n{q: True, /* why */ 'n': None,}\n```",
            None,
        )
        .unwrap();
        assert_eq!(
            params.into_iter().collect::<Vec<_>>(),
            pairs(&[("q", "true")])
        );
        assert_eq!(
            repairs,
            [
                "a byte-order mark was left out",
                "unquoted keys were read as strings",
                "Python's True, False and None were read as JSON",
                "comments were left out",
                "single-quoted strings were read as JSON strings",
                "a comma before a closing bracket was dropped",
                "a Markdown code fence around the object was left out"
            ]
        );
        let (_, repairs) = read_arguments(r#"{"q": "a"}}"#, None).unwrap();
        assert_eq!(repairs, ["a stray closing brace at the end was dropped"]);
        let (_, repairs) = read_arguments(r#"Sure: {"q": "a"}"#, None).unwrap();
        assert_eq!(repairs, ["text around the object was left out"]);
    }

    #[test]
    fn a_plain_string_is_the_only_parameter_of_a_one_parameter_tool() {
        let one = ToolSpec {
            name: "web_search".into(),
            description: String::new(),
            input_schema: None,
            params: vec![ParamSpec::new("query", ParamType::String, "")],
        };
        let (params, _) = read_arguments(r#""rust async""#, Some(&one)).unwrap();
        assert_eq!(params["query"], "rust async");
        let mut two = one.clone();
        two.params
            .push(ParamSpec::new("count", ParamType::Integer, ""));
        let err = read_arguments(r#""rust async""#, Some(&two)).unwrap_err();
        assert!(err.contains("must be a JSON object"), "{err}");
    }

    #[test]
    fn refuses_what_could_mean_several_things() {
        for (raw, why) in [
            (r#"{"q": "ru"#, "middle of a string"),
            (r#"{"q": "#, "after a key"),
            (r#"{"q": "a"]"#, "closes nothing"),
            ("[1, 2]", "found a list"),
            ("42", "found a number"),
            (r#"{"q" "a"}"#, "not valid JSON"),
        ] {
            let err = read(raw).unwrap_err();
            assert!(err.contains(why), "{raw}: {err}");
        }
    }
}
