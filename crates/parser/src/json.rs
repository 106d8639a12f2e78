//! Strict JSON (RFC 8259) for rules 14 and 15, with numbers kept exactly as written.
//!
//! A small recursive-descent reader: values nested deeper than [`MAX_DEPTH`] are rejected rather
//! than risking the stack. Parameter maps are flat: strings give their decoded text, numbers their
//! literal characters, booleans `"true"`/`"false"`, `null` removes the member. An object or array
//! member is refused by rule 14; the forms of `FORMS.md` take it as its JSON text instead
//! ([`Nested::AsJsonText`], written by `serde_json` as a native call's arguments are).

use super::Params;

/// Deepest nesting accepted (deeper input is reported as invalid).
const MAX_DEPTH: usize = 128;

/// A parsed JSON value.
#[derive(Debug)]
pub(crate) enum Value<'a> {
    Str(String),
    /// The number exactly as written.
    Num(&'a str),
    Bool(bool),
    Null,
    Obj(Vec<(String, Value<'a>)>),
    Arr(Vec<Value<'a>>),
}

impl Value<'_> {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Num(_) => "a number",
            Value::Bool(_) => "a boolean",
            Value::Null => "null",
            Value::Obj(_) => "an object",
            Value::Arr(_) => "an array",
        }
    }
}

/// Parse one complete JSON text (surrounding whitespace allowed, nothing else).
pub(crate) fn parse(text: &str) -> Result<Value<'_>, String> {
    let mut p = P {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!(
            "unexpected text after the JSON value at byte {}",
            p.i
        ));
    }
    Ok(v)
}

/// One JSON value at the start of `text` (leading whitespace allowed), and the byte offset just
/// after it; what follows is not looked at. On failure, the reason and the offset where reading
/// stopped (for callers that resume after it).
pub(crate) fn parse_prefix(text: &str) -> Result<(Value<'_>, usize), (String, usize)> {
    let mut p = P {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    p.ws();
    match p.value(0) {
        Ok(v) => Ok((v, p.i)),
        Err(e) => Err((e, p.i)),
    }
}

/// The JSON string starting at `text[0]` (a `"`), decoded, and the offset after it.
pub(crate) fn string_prefix(text: &str) -> Option<(String, usize)> {
    let mut p = P {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    if p.s.first() != Some(&b'"') {
        return None;
    }
    p.string().ok().map(|s| (s, p.i))
}

/// How a parameter whose value is an object or an array is taken.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Nested {
    /// Refused: the call is malformed (rule 14, a JSON container in the XML form).
    Refused,
    /// Given as its JSON text, as a native call's arguments give it (the forms of FORMS.md).
    AsJsonText,
}

/// Rule 14: a flat object's members as parameters, merged into `out`.
///
/// The object is read on its own first (duplicate keys: last wins, then a `null` member is
/// omitted), so a `null` never removes a parameter that came from elsewhere in the block.
pub(crate) fn flat_params(v: Value<'_>, out: &mut Params) -> Result<(), String> {
    object_params(v, out, Nested::Refused)
}

/// An object's members as parameters, merged into `out`, an object or array member taken as
/// `nested` says (see [`flat_params`] for the rest).
pub(crate) fn object_params(v: Value<'_>, out: &mut Params, nested: Nested) -> Result<(), String> {
    let Value::Obj(members) = v else {
        return Err(format!("expected a JSON object, found {}", v.kind()));
    };
    let mut own = Params::new();
    for (k, v) in members {
        let s = match v {
            Value::Str(s) => s,
            Value::Num(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Null => {
                own.shift_remove(&k);
                continue;
            }
            other if nested == Nested::AsJsonText => to_serde(other)
                .map_err(|why| format!("parameter `{k}` cannot be read: {why}"))?
                .to_string(),
            other => {
                return Err(format!(
                    "parameter `{k}` is {}; parameter values must be strings, numbers or booleans",
                    other.kind()
                ))
            }
        };
        own.insert(k, s);
    }
    out.extend(own);
    Ok(())
}

/// `v` as a [`serde_json::Value`], so its JSON text is the one `serde_json` writes for a
/// native call's arguments ([`crate::read_arguments`]): compact, numbers in `serde_json`'s
/// spelling, a repeated member's last value in its first place. A number `serde_json` cannot
/// hold (`1e400`) is refused, as a native call's is.
pub(crate) fn to_serde(v: Value<'_>) -> Result<serde_json::Value, String> {
    Ok(match v {
        Value::Str(s) => serde_json::Value::String(s),
        Value::Num(n) => match serde_json::from_str::<serde_json::Number>(n) {
            Ok(number) => serde_json::Value::Number(number),
            Err(_) => return Err(format!("the number `{n}` is too large")),
        },
        Value::Bool(b) => serde_json::Value::Bool(b),
        Value::Null => serde_json::Value::Null,
        Value::Arr(items) => {
            serde_json::Value::Array(items.into_iter().map(to_serde).collect::<Result<_, _>>()?)
        }
        Value::Obj(members) => serde_json::Value::Object(
            members
                .into_iter()
                .map(|(k, v)| Ok((k, to_serde(v)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// Rule 14: the text of a JSON container.
pub(crate) fn container_params(text: &str, out: &mut Params) -> Result<(), String> {
    flat_params(parse(text)?, out)
}

/// Rule 15: a JSON call `{"name": .., "arguments": ..}` → (name, params). An object or a list
/// among the values makes the call malformed, as the behaviour contract says (its example 3);
/// native calls and the written forms (FORMS.md F2) take them as JSON text instead. In native
/// mode the runtime, not this rule, reads the `<tool_call>` JSON calls the guided grammar writes.
pub(crate) fn call(text: &str) -> Result<(String, Params), String> {
    call_value_with(parse(text)?, Nested::Refused)
}

/// Rule 15 on a value already read: the call object → (name, params), with object and array
/// parameters taken as `nested` says.
pub(crate) fn call_value_with(v: Value<'_>, nested: Nested) -> Result<(String, Params), String> {
    let Value::Obj(members) = v else {
        return Err("a JSON tool call must be one object".into());
    };
    let mut name = None;
    let mut arguments = None;
    let mut parameters = None;
    for (k, v) in members {
        match k.as_str() {
            "name" => name = Some(v),
            "arguments" => arguments = Some(v),
            "parameters" => parameters = Some(v),
            _ => {}
        }
    }
    let name = match name {
        Some(Value::Str(s)) if super::scan::is_valid_tool_name(&s) => s,
        Some(Value::Str(s)) => {
            return Err(format!(
                "`{s}` is not a valid tool name (use letters, digits, _ - . : only)"
            ))
        }
        Some(v) => return Err(format!("member \"name\" is {}, not a string", v.kind())),
        None => return Err("the JSON tool call has no \"name\" member".into()),
    };
    let mut params = Params::new();
    match arguments.or(parameters) {
        None | Some(Value::Null) => {}
        Some(v @ Value::Obj(_)) => object_params(v, &mut params, nested)?,
        Some(Value::Str(s)) => parse(&s)
            .and_then(|v| object_params(v, &mut params, nested))
            .map_err(|e| {
                let object = match nested {
                    Nested::Refused => "a flat JSON object",
                    Nested::AsJsonText => "a JSON object",
                };
                format!("the arguments string does not hold {object}: {e}")
            })?,
        Some(v) => return Err(format!("the arguments are {}, not an object", v.kind())),
    }
    Ok((name, params))
}

struct P<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl<'a> P<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("invalid JSON at byte {}: {what}", self.i))
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, String> {
        if depth > MAX_DEPTH {
            return self.err("nested too deeply");
        }
        match self.s.get(self.i) {
            None => self.err("unexpected end"),
            Some(b'{') => self.object(depth),
            Some(b'[') => {
                self.i += 1;
                self.ws();
                let mut items = Vec::new();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::Arr(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => {
                            self.i += 1;
                            self.ws();
                        }
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::Arr(items));
                        }
                        _ => return self.err("expected `,` or `]`"),
                    }
                }
            }
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => self.err("unexpected character"),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value<'a>, String> {
        self.i += 1;
        self.ws();
        let mut members = Vec::new();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Value::Obj(members));
        }
        loop {
            if self.s.get(self.i) != Some(&b'"') {
                return self.err("expected a member name in double quotes");
            }
            let k = self.string()?;
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return self.err("expected `:`");
            }
            self.i += 1;
            self.ws();
            let v = self.value(depth + 1)?;
            members.push((k, v));
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Obj(members));
                }
                _ => return self.err("expected `,` or `}`"),
            }
        }
    }

    fn literal(&mut self, word: &str, v: Value<'a>) -> Result<Value<'a>, String> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            self.err("unknown literal")
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Value<'a>, String> {
        let start = self.i;
        if self.s[self.i] == b'-' {
            self.i += 1;
        }
        match self.s.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.err("bad number"),
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return self.err("bad number: digits expected after `.`");
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.err("bad number: digits expected in the exponent");
            }
        }
        Ok(Value::Num(&self.text[start..self.i]))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let Some(h) = self.s.get(self.i..self.i + 4) else {
            return self.err("short \\u escape");
        };
        let h = std::str::from_utf8(h).map_err(|_| "bad \\u escape".to_string())?;
        let v =
            u32::from_str_radix(h, 16).map_err(|_| format!("bad \\u escape at byte {}", self.i))?;
        if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return self.err("bad \\u escape");
        }
        self.i += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while self.i < self.s.len() && !matches!(self.s[self.i], b'"' | b'\\' | 0..=0x1f) {
                self.i += 1;
            }
            out.push_str(&self.text[start..self.i]);
            match self.s.get(self.i) {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let Some(&e) = self.s.get(self.i) else {
                        return self.err("unterminated escape");
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi)
                                && self.s[self.i..].starts_with(b"\\u")
                            {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                                } else {
                                    self.i = save;
                                    None
                                }
                            } else {
                                char::from_u32(hi)
                            };
                            // A lone surrogate is legal JSON text but not a char.
                            out.push(c.unwrap_or('\u{FFFD}'));
                        }
                        _ => {
                            self.i -= 1;
                            return self.err("unknown escape");
                        }
                    }
                }
                Some(_) => return self.err("control character in a string"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_values() {
        let mut p = Params::new();
        container_params(
            r#"{"a": 1E3, "b": true, "c": null, "d": "x\u00e9\ud83d\ude00"}"#,
            &mut p,
        )
        .unwrap();
        assert_eq!(p["a"], "1E3");
        assert_eq!(p["b"], "true");
        assert!(!p.contains_key("c"));
        assert_eq!(p["d"], "xé😀");
    }

    #[test]
    fn rejects() {
        let mut p = Params::new();
        for bad in [
            r#"{"x": "1",}"#,
            r#"{"f": {"a": 1}}"#,
            "{} x",
            "[1]",
            "{\"a\": 01}",
            "{'a': 1}",
        ] {
            assert!(container_params(bad, &mut p).is_err(), "{bad}");
        }
        let deep = "[".repeat(10_000);
        assert!(parse(&deep).is_err());
    }
}
