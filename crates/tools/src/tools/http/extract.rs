//! `response_extract`: an RFC 9535 JSONPath applied to a JSON response, and, when it matches
//! nothing, a message that says which step failed and what the response holds there.

use serde_json::Value;
use serde_json_path::JsonPath;

use super::trim_chars;
use crate::tools::pipeline::value_text;
use crate::tools::ToolResult;

/// Apply `response_extract`: one match → the value (strings unquoted), several → a JSON array.
pub fn extract(path: &JsonPath, expr: &str, body: &str) -> ToolResult {
    let json: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(_) => {
            return ToolResult::fail(format!(
                "the response is not JSON, so response_extract `{expr}` cannot apply; it starts with: {}",
                trim_chars(body, 200)
            ))
        }
    };
    let nodes = path.query(&json).all();
    match nodes.as_slice() {
        [] => ToolResult::fail(format!(
            "response_extract `{expr}` matched nothing in the response: {}",
            explain_no_match(expr, &json)
        )),
        [one] => ToolResult::ok(value_text(one)),
        many => {
            ToolResult::ok(Value::Array(many.iter().map(|v| (*v).clone()).collect()).to_string())
        }
    }
}

/// Why `expr` matched nothing in `json`: the longest leading part of the path that does match,
/// what it matches, and the step after it that finds nothing.
pub fn explain_no_match(expr: &str, json: &Value) -> String {
    let cuts = segment_ends(expr);
    for (i, &end) in cuts.iter().enumerate().rev() {
        let prefix = &expr[..end];
        let Ok(path) = JsonPath::parse(prefix) else {
            continue;
        };
        let nodes = path.query(json).all();
        if nodes.is_empty() {
            continue;
        }
        let next_end = cuts.get(i + 1).copied().unwrap_or(expr.len());
        let step = expr[end..next_end].trim_start_matches('.');
        let what = match nodes.as_slice() {
            [one] => shape(one),
            many => format!("{} values", many.len()),
        };
        return if prefix == "$" {
            format!("the response is {what}, and `{step}` is not in it")
        } else {
            format!("`{prefix}` matches {what}, and `{step}` finds nothing there")
        };
    }
    format!("the response is {}", shape(json))
}

/// Byte offsets where each top-level segment of a JSONPath ends: `$.a[0].b` → `$`, `$.a`,
/// `$.a[0]`. Brackets and quotes are respected; the whole expression is not included.
pub(super) fn segment_ends(expr: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut prev = '\0';
    for (i, c) in expr.char_indices() {
        match quote {
            Some(q) => {
                if c == q && prev != '\\' {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '[' | '(' => {
                    if depth == 0 && i > 0 && prev != '.' {
                        ends.push(i);
                    }
                    depth += 1;
                }
                ']' | ')' => depth = depth.saturating_sub(1),
                '.' if depth == 0 && i > 0 && prev != '.' => ends.push(i),
                _ => {}
            },
        }
        prev = c;
    }
    ends
}

/// A short description of a JSON value's shape.
fn shape(json: &Value) -> String {
    match json {
        Value::Object(map) if map.is_empty() => "an empty object".into(),
        Value::Object(map) => {
            let keys: Vec<_> = map.keys().take(20).map(|k| format!("`{k}`")).collect();
            let more = if map.len() > 20 { ", …" } else { "" };
            format!("an object with keys {}{more}", keys.join(", "))
        }
        Value::Array(items) => format!("an array of {} items", items.len()),
        other => format!("the value {}", trim_chars(&other.to_string(), 100)),
    }
}

/// A short description of a JSON value's top level, to explain a JSONPath that matched nothing.
pub fn describe_shape(json: &Value) -> String {
    format!("the response is {}", shape(json))
}
