//! An MCP tool's JSON Schema (`inputSchema`) as our tool parameters, and the arguments the
//! server gets back.
//!
//! Strings, numbers, integers and booleans become typed [`ParamSpec`]s with their enum, default
//! and required flag; their constraints (min/max, lengths, pattern) are named in the
//! description and checked before the call. Objects, arrays and anything else (`anyOf`, …) are
//! given by the model as JSON text: [`to_arguments`] parses it and checks it against the
//! property's schema (types, required members, enums, items, bounds) so a mistake comes back
//! to the model before the server sees it. The check is our own small subset of JSON Schema:
//! the `jsonschema` crate would pull in a regex engine, an HTTP client and a referencing
//! resolver for a few keywords. A local `$ref` (`#/$defs/…`, JSON Schema 2020-12) is followed
//! within the tool's own schema, `additionalProperties: false` refuses unknown members (and
//! unknown parameters at the top); remote `$ref`s and composition keywords are left to the
//! server.
//!
//! The schema itself is kept whole ([`SchemaParams::root`]): native tool calling sends it to
//! the model as the server wrote it (see [`crate::tool_spec::ToolSpec::input_schema`]).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::tool_spec::Params;
use crate::tools::{ParamSpec, ParamType};

/// The parameters of one MCP tool, and which of them travel as JSON text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchemaParams {
    /// Parameters in the schema's property order.
    pub params: Vec<ParamSpec>,
    /// Names of the parameters given as JSON text (objects, arrays, compositions).
    pub json_params: BTreeSet<String>,
    /// The schema of every property, for the check before the call.
    pub properties: Map<String, Value>,
    /// The whole `inputSchema`, as the server sent it (`$ref`s resolve against it).
    pub root: Value,
}

/// Deepest chain of `$ref`s followed (a cycle ends there).
const MAX_REF_DEPTH: usize = 32;

/// Read an `inputSchema` into parameters.
pub fn params_from_schema(schema: &Map<String, Value>) -> SchemaParams {
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = SchemaParams {
        properties: properties.clone(),
        root: Value::Object(schema.clone()),
        ..Default::default()
    };
    for (name, prop) in &properties {
        let (spec, json) = param_from_property(name, prop, required.contains(name.as_str()));
        if json {
            out.json_params.insert(name.clone());
        }
        out.params.push(spec);
    }
    out
}

/// The simple type of a property (`["string","null"]` counts as `string`).
fn simple_type(prop: &Value) -> Option<&str> {
    match prop.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => {
            let non_null: Vec<_> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            (non_null.len() == 1).then(|| non_null[0])
        }
        None if prop.get("enum").is_some() => Some("string"),
        _ => None,
    }
}

fn param_from_property(name: &str, prop: &Value, required: bool) -> (ParamSpec, bool) {
    let kind = match simple_type(prop) {
        Some("string") => Some(ParamType::String),
        Some("integer") => Some(ParamType::Integer),
        Some("number") => Some(ParamType::Number),
        Some("boolean") => Some(ParamType::Boolean),
        _ => None,
    };
    let mut description = prop
        .get("description")
        .or_else(|| prop.get("title"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    let json = kind.is_none();
    let mut notes = constraint_notes(prop);
    if json {
        let shape = match simple_type(prop) {
            Some("array") => "a JSON array",
            Some("object") => "a JSON object",
            _ => "JSON",
        };
        notes.insert(0, format!("give {shape}"));
    }
    if !notes.is_empty() {
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str(&format!("({})", notes.join(", ")));
    }
    let mut spec = ParamSpec::new(name, kind.unwrap_or(ParamType::String), description);
    spec.required = required;
    if let Some(default) = prop.get("default") {
        spec.required = false;
        spec.default = Some(if json {
            Value::String(default.to_string())
        } else {
            default.clone()
        });
    }
    if !json {
        if let Some(values) = prop.get("enum").and_then(Value::as_array) {
            spec.enum_values = Some(
                values
                    .iter()
                    .map(crate::tools::pipeline::value_text)
                    .collect(),
            );
        }
    }
    (spec, json)
}

/// The constraints worth telling the model, compactly.
fn constraint_notes(prop: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    for (key, label) in [
        ("minimum", "min"),
        ("maximum", "max"),
        ("exclusiveMinimum", "more than"),
        ("exclusiveMaximum", "less than"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
        ("pattern", "pattern"),
        ("format", "format"),
    ] {
        if let Some(v) = prop.get(key) {
            if v.is_number() || v.is_string() {
                notes.push(format!("{label} {}", crate::tools::pipeline::value_text(v)));
            }
        }
    }
    notes
}

/// The arguments for the server: typed parameters as they are, JSON-text parameters parsed;
/// every value checked against its property's schema. `Err` is for the model.
pub fn to_arguments(schema: &SchemaParams, params: &Params) -> Result<Map<String, Value>, String> {
    let mut args = Map::new();
    let mut problems = Vec::new();
    let closed = schema.root.get("additionalProperties") == Some(&Value::Bool(false))
        && schema.root.get("patternProperties").is_none();
    for (name, value) in params {
        if closed && !schema.properties.contains_key(name) {
            problems.push(format!("the tool has no parameter `{name}`"));
            continue;
        }
        let value = if schema.json_params.contains(name) {
            match value {
                Value::String(text) => match serde_json::from_str::<Value>(text) {
                    Ok(v) => v,
                    // Plain text where the schema takes a string (a `$ref` to one, say,
                    // which native tool calling gives as a plain JSON string).
                    Err(_) if takes_text(schema, name, text) => value.clone(),
                    Err(e) => {
                        problems.push(format!("parameter `{name}` must be JSON text: {e}"));
                        continue;
                    }
                },
                other => other.clone(),
            }
        } else {
            value.clone()
        };
        if let Some(prop) = schema.properties.get(name) {
            check_within(&schema.root, prop, &value, name, &mut problems, 0);
        }
        args.insert(name.clone(), value);
    }
    if problems.is_empty() {
        Ok(args)
    } else {
        Err(format!("invalid parameters: {}", problems.join("; ")))
    }
}

/// Does parameter `name`'s schema take `text` as a plain string (as far as we check it)?
fn takes_text(schema: &SchemaParams, name: &str, text: &str) -> bool {
    let Some(prop) = schema.properties.get(name) else {
        return false;
    };
    let mut problems = Vec::new();
    let value = Value::String(text.to_string());
    check_within(&schema.root, prop, &value, name, &mut problems, 0);
    problems.is_empty()
}

/// Check `value` against the subset of JSON Schema we understand, pushing what is wrong
/// (a `$ref` resolves within `schema` itself).
pub fn check(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    check_within(schema, schema, value, at, problems, 0);
}

/// The schema a local `$ref` (`#`, `#/$defs/name`, any JSON pointer) names in `root`.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    let decoded = percent_encoding::percent_decode_str(pointer)
        .decode_utf8()
        .ok()?;
    root.pointer(&decoded)
}

/// [`check`] of `value` against `schema`, a part of `root`; `depth` counts the `$ref`s
/// followed to get here.
fn check_within(
    root: &Value,
    schema: &Value,
    value: &Value,
    at: &str,
    problems: &mut Vec<String>,
    depth: usize,
) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        // 2020-12: `$ref` applies alongside the other keywords of its schema.
        match resolve(root, reference) {
            Some(target) if depth < MAX_REF_DEPTH => {
                check_within(root, target, value, at, problems, depth + 1)
            }
            // Remote, unknown or too deep: the server checks it.
            _ => {}
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !types.is_empty() && !types.iter().any(|t| type_matches(t, value)) {
            problems.push(format!(
                "`{at}` must be {}; got `{}`",
                types.join(" or "),
                short(value)
            ));
            return;
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.contains(value) {
            problems.push(format!(
                "`{at}` must be one of {}; got `{}`",
                allowed.iter().map(short).collect::<Vec<_>>().join(", "),
                short(value)
            ));
        }
    }
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    if let Some(n) = value.as_f64() {
        let bad = num("minimum").is_some_and(|m| n < m)
            || num("maximum").is_some_and(|m| n > m)
            || num("exclusiveMinimum").is_some_and(|m| n <= m)
            || num("exclusiveMaximum").is_some_and(|m| n >= m);
        if bad {
            problems.push(format!("`{at}` = {n} is out of range"));
        }
    }
    let len = |k: &str| schema.get(k).and_then(Value::as_u64).map(|n| n as usize);
    if let Some(s) = value.as_str() {
        let n = s.chars().count();
        if len("minLength").is_some_and(|m| n < m) || len("maxLength").is_some_and(|m| n > m) {
            problems.push(format!("`{at}` has a length ({n}) out of range"));
        }
    }
    if let Some(items) = value.as_array() {
        if len("minItems").is_some_and(|m| items.len() < m)
            || len("maxItems").is_some_and(|m| items.len() > m)
        {
            problems.push(format!("`{at}` has {} items, out of range", items.len()));
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                let at = format!("{at}[{i}]");
                check_within(root, item_schema, item, &at, problems, depth);
            }
        }
    }
    if let Some(obj) = value.as_object() {
        if let Some(Value::Array(required)) = schema.get("required") {
            for r in required.iter().filter_map(Value::as_str) {
                if !obj.contains_key(r) {
                    problems.push(format!("`{at}` needs the member `{r}`"));
                }
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false))
            && !schema.contains_key("patternProperties");
        for (k, v) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(p) => check_within(root, p, v, &format!("{at}.{k}"), problems, depth),
                None if closed => problems.push(format!("`{at}` has no member `{k}`")),
                None => {}
            }
        }
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn short(v: &Value) -> String {
    let text = crate::tools::pipeline::value_text(v);
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "What to say", "maxLength": 5},
                "count": {"type": "integer", "minimum": 1, "default": 3},
                "ratio": {"type": ["number", "null"]},
                "loud": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
            },
            "required": ["message", "tags"]
        })
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn each_kind_of_property_becomes_a_parameter() {
        let s = params_from_schema(&schema());
        let p = |n: &str| s.params.iter().find(|p| p.name == n).unwrap().clone();
        assert_eq!(
            s.params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["message", "count", "ratio", "loud", "mode", "tags", "point"]
        );
        assert_eq!(p("message").kind, ParamType::String);
        assert!(p("message").required);
        assert_eq!(p("message").description, "What to say (max length 5)");
        assert_eq!(p("count").kind, ParamType::Integer);
        assert!(!p("count").required);
        assert_eq!(p("count").default, Some(json!(3)));
        assert_eq!(p("ratio").kind, ParamType::Number);
        assert_eq!(p("loud").kind, ParamType::Boolean);
        assert_eq!(
            p("mode").enum_values,
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(p("tags").kind, ParamType::String);
        assert!(p("tags").required);
        assert!(p("tags").description.contains("JSON array"));
        assert!(p("point").description.contains("JSON object"));
        assert_eq!(s.json_params.iter().collect::<Vec<_>>(), ["point", "tags"]);
    }

    #[test]
    fn json_text_parameters_are_parsed_and_checked_before_the_call() {
        let s = params_from_schema(&schema());
        let mut params = Params::new();
        params.insert("message".into(), json!("hi"));
        params.insert("tags".into(), json!("[\"a\", \"b\"]"));
        params.insert("point".into(), json!("{\"x\": 1.5}"));
        let args = to_arguments(&s, &params).unwrap();
        assert_eq!(args["tags"], json!(["a", "b"]));
        assert_eq!(args["point"], json!({"x": 1.5}));

        params.insert("tags".into(), json!("[1]"));
        params.insert("point".into(), json!("{\"y\": 1}"));
        params.insert("message".into(), json!("too long"));
        let err = to_arguments(&s, &params).unwrap_err();
        assert!(err.contains("`tags[0]` must be string"), "{err}");
        assert!(err.contains("`point` needs the member `x`"), "{err}");
        assert!(
            err.contains("`message` has a length (8) out of range"),
            "{err}"
        );

        params.insert("tags".into(), json!("[not json"));
        let err = to_arguments(&s, &params).unwrap_err();
        assert!(err.contains("`tags` must be JSON text"), "{err}");
    }

    #[test]
    fn refs_are_followed_and_closed_objects_refuse_unknown_members() {
        let root = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}},
                    "required": ["street"],
                    "additionalProperties": false
                },
                "a~b/c": {"$ref": "#/$defs/a~0b~1c"}
            },
            "properties": {
                "address": {"$ref": "#/$defs/address"},
                "homes": {"type": "array", "items": {"$ref": "#/$defs/address"}},
                "loop": {"$ref": "#/$defs/a~0b~1c"},
                "far": {"$ref": "https://example.com/schema.json"}
            },
            "additionalProperties": false
        });
        let s = params_from_schema(root.as_object().unwrap());
        assert_eq!(s.root, root, "kept whole");
        let mut params = Params::new();
        params.insert("address".into(), json!(r#"{"city": "Paris"}"#));
        params.insert("homes".into(), json!(r#"[{"street": 1}]"#));
        params.insert("loop".into(), json!(r#"{}"#));
        params.insert("far".into(), json!(r#"{"any": "thing"}"#));
        params.insert("extra".into(), json!("x"));
        let err = to_arguments(&s, &params).unwrap_err();
        assert!(err.contains("`address` needs the member `street`"), "{err}");
        assert!(err.contains("`address` has no member `city`"), "{err}");
        assert!(err.contains("`homes[0].street` must be string"), "{err}");
        assert!(err.contains("the tool has no parameter `extra`"), "{err}");
        assert!(!err.contains("loop") && !err.contains("far"), "{err}");
    }

    #[test]
    fn plain_text_passes_where_a_ref_names_a_string() {
        let root = json!({
            "type": "object",
            "$defs": {"mode": {"type": "string", "enum": ["fast", "slow"]}},
            "properties": {
                "mode": {"$ref": "#/$defs/mode"},
                "point": {"type": "object"}
            }
        });
        let s = params_from_schema(root.as_object().unwrap());
        assert!(s.json_params.contains("mode"), "a $ref is given as JSON");
        let mut params = Params::new();
        params.insert("mode".into(), json!("fast"));
        assert_eq!(to_arguments(&s, &params).unwrap()["mode"], json!("fast"));
        params.insert("mode".into(), json!("\"slow\""));
        assert_eq!(to_arguments(&s, &params).unwrap()["mode"], json!("slow"));
        params.insert("mode".into(), json!("medium"));
        let err = to_arguments(&s, &params).unwrap_err();
        assert!(err.contains("`mode` must be JSON text"), "{err}");
        params.remove("mode");
        params.insert("point".into(), json!("not json"));
        let err = to_arguments(&s, &params).unwrap_err();
        assert!(err.contains("`point` must be JSON text"), "{err}");
    }
}
