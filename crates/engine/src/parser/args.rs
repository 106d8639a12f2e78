//! The arguments of a native tool call: JSON text from the model, read with the repairs that
//! have one possible meaning.
//!
//! Models, small ones most, send argument JSON that a strict reader refuses. [`read_arguments`]
//! first reads it strictly; when that fails it repairs, in one pass, what can only mean one
//! thing:
//! - single-quoted strings (`{'q': 'rust'}`) become double-quoted;
//! - raw line breaks, tabs and other control characters inside strings are escaped;
//! - a comma before a closing `}` or `]` is dropped;
//! - a document cut off after a complete value is closed (`{"q": "rust"` → `{"q": "rust"}`);
//! - a JSON object sent as a string (`"{\"q\": \"rust\"}"`) is read as that object, and a
//!   plain string for a tool with exactly one parameter is that parameter's value.
//!
//! Anything else is refused with the reason, for the model to send the call again: a document
//! cut off inside a string or after a key (the value could be anything), mismatched
//! brackets, or a value that is not an object. The run loop reports a refusal as a malformed
//! call with the tool's schema.

use serde_json::Value;

use super::Params;
use crate::tool_spec::ToolSpec;

/// A native call's arguments as [`Params`] (every value as text, as the XML format gives
/// them: the gate coerces types), and the repairs that were needed, in words (empty when the
/// JSON was valid).
pub fn read_arguments(
    raw: &str,
    spec: Option<&ToolSpec>,
) -> Result<(Params, Vec<&'static str>), String> {
    let mut repairs = Vec::new();
    let text = raw.trim();
    let value = if text.is_empty() {
        Value::Object(Default::default())
    } else {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => value,
            Err(_) => {
                let fixed = repair(text, &mut repairs)?;
                serde_json::from_str::<Value>(&fixed).map_err(|e| {
                    format!("the arguments are not valid JSON ({e}), even after repairs")
                })?
            }
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

/// `text` with the repairs of the module's list applied, or why it cannot be repaired.
fn repair(text: &str, repairs: &mut Vec<&'static str>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len() + 8);
    let mut open: Vec<char> = Vec::new();
    // The quote of the string being read, if any.
    let mut quote: Option<char> = None;
    let note = |repairs: &mut Vec<&'static str>, what: &'static str| {
        if !repairs.contains(&what) {
            repairs.push(what);
        }
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            match c {
                '\\' => match chars.next() {
                    Some('\'') => out.push('\''),
                    Some(next) => {
                        out.push('\\');
                        out.push(next);
                    }
                    None => return Err("the arguments end in the middle of a string".into()),
                },
                c if c == q => {
                    out.push('"');
                    quote = None;
                }
                '"' => out.push_str("\\\""),
                '\n' => {
                    out.push_str("\\n");
                    note(repairs, "line breaks inside strings were escaped");
                }
                '\r' => {
                    out.push_str("\\r");
                    note(repairs, "line breaks inside strings were escaped");
                }
                '\t' => {
                    out.push_str("\\t");
                    note(repairs, "tabs inside strings were escaped");
                }
                c if (c as u32) < 0x20 => {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                    note(repairs, "control characters inside strings were escaped");
                }
                c => out.push(c),
            }
            continue;
        }
        match c {
            '"' => {
                quote = Some('"');
                out.push('"');
            }
            '\'' => {
                quote = Some('\'');
                out.push('"');
                note(repairs, "single-quoted strings were read as JSON strings");
            }
            '{' | '[' => {
                open.push(c);
                out.push(c);
            }
            '}' | ']' => {
                let expected = if c == '}' { '{' } else { '[' };
                if open.pop() != Some(expected) {
                    return Err(format!(
                        "the arguments have a `{c}` that closes nothing open"
                    ));
                }
                if drop_trailing_comma(&mut out) {
                    note(repairs, "a comma before a closing bracket was dropped");
                }
                out.push(c);
            }
            c => out.push(c),
        }
    }
    if quote.is_some() {
        return Err(
            "the arguments end in the middle of a string (cut off?): the value cannot be known"
                .into(),
        );
    }
    if !open.is_empty() {
        if drop_trailing_comma(&mut out) {
            note(repairs, "a comma before a closing bracket was dropped");
        }
        if out.trim_end().ends_with(':') {
            return Err("the arguments end after a key, before its value (cut off?)".into());
        }
        while let Some(o) = open.pop() {
            out.push(if o == '{' { '}' } else { ']' });
        }
        note(repairs, "the cut-off arguments were closed");
    }
    Ok(out)
}

/// Remove a `,` ending `out` (before trailing whitespace); true if there was one.
fn drop_trailing_comma(out: &mut String) -> bool {
    let trimmed = out.trim_end().len();
    if out[..trimmed].ends_with(',') {
        out.truncate(trimmed - 1);
        true
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_spec::{ParamSpec, ParamType};

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
