//! The one execution pipeline every tool call goes through. See the [module docs](super).

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use indexmap::IndexMap;
use serde_json::Value;

use super::{ParamSpec, ParamType, Params, Tool, ToolContext, ToolResult};

/// Run `tool` with the parser's string parameters. Never panics, never errors: every problem is
/// a failed [`ToolResult`].
pub async fn run(tool: &dyn Tool, raw: &IndexMap<String, String>, ctx: &ToolContext) -> ToolResult {
    let params = match prepare(tool.spec().params.as_slice(), raw) {
        Ok(params) => params,
        Err(message) => return ToolResult::fail(message),
    };
    execute_guarded(tool, params, ctx).await
}

/// Coerce, fill defaults and validate. `Err` carries the message for the model.
pub fn prepare(specs: &[ParamSpec], raw: &IndexMap<String, String>) -> Result<Params, String> {
    let mut params = coerce(specs, raw);
    apply_defaults(specs, &mut params);
    validate(specs, &params)?;
    Ok(params)
}

/// Execute with panics caught and turned into failed results.
pub async fn execute_guarded(tool: &dyn Tool, params: Params, ctx: &ToolContext) -> ToolResult {
    let name = tool.spec().name.clone();
    match AssertUnwindSafe(tool.execute(params, ctx))
        .catch_unwind()
        .await
    {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!(tool = %name, "tool panicked: {what}");
            ToolResult::fail(format!(
                "the tool `{name}` crashed while running ({what}); this is a bug in the tool, not in your call — try another approach"
            ))
        }
    }
}

/// Step 1: convert each string to its declared type. A value that does not convert stays a
/// string, and so do parameters the tool does not declare; [`validate`] reports both.
pub fn coerce(specs: &[ParamSpec], raw: &IndexMap<String, String>) -> Params {
    raw.iter()
        .map(|(name, value)| {
            let coerced = match specs.iter().find(|s| &s.name == name) {
                Some(spec) => coerce_value(spec.kind, value),
                None => Value::String(value.clone()),
            };
            (name.clone(), coerced)
        })
        .collect()
}

/// Convert one string to `kind`, or keep it as a string when it does not convert.
pub fn coerce_value(kind: ParamType, value: &str) -> Value {
    let trimmed = value.trim();
    let converted = match kind {
        ParamType::String => None,
        ParamType::Integer => trimmed.parse::<i64>().ok().map(Value::from),
        ParamType::Number => trimmed
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        ParamType::Boolean => match trimmed.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Some(Value::Bool(true)),
            "false" | "0" | "no" => Some(Value::Bool(false)),
            _ => None,
        },
    };
    converted.unwrap_or_else(|| Value::String(value.to_string()))
}

/// Step 2: fill missing parameters that have a default.
pub fn apply_defaults(specs: &[ParamSpec], params: &mut Params) {
    for spec in specs {
        if params.contains_key(&spec.name) {
            continue;
        }
        if let Some(default) = &spec.default {
            if !default.is_null() {
                let value = match default {
                    Value::String(s) => coerce_value(spec.kind, s),
                    other => other.clone(),
                };
                params.insert(spec.name.clone(), value);
            }
        }
    }
}

/// Step 3: required present, nothing unknown, enum respected, types right.
pub fn validate(specs: &[ParamSpec], params: &Params) -> Result<(), String> {
    let mut problems = Vec::new();
    for spec in specs {
        if spec.required && !params.contains_key(&spec.name) {
            problems.push(format!(
                "missing required parameter `{}` ({}{})",
                spec.name,
                spec.kind.as_str(),
                if spec.description.is_empty() {
                    String::new()
                } else {
                    format!(": {}", spec.description)
                }
            ));
        }
    }
    for (name, value) in params {
        let Some(spec) = specs.iter().find(|s| &s.name == name) else {
            let known: Vec<_> = specs.iter().map(|s| format!("`{}`", s.name)).collect();
            problems.push(format!(
                "unknown parameter `{name}`; this tool takes {}",
                if known.is_empty() {
                    "no parameters".to_string()
                } else {
                    known.join(", ")
                }
            ));
            continue;
        };
        if let Some(allowed) = &spec.enum_values {
            let text = value_text(value);
            if !allowed.iter().any(|a| a == &text) {
                problems.push(format!(
                    "parameter `{name}` must be one of {}; you sent `{text}`",
                    allowed
                        .iter()
                        .map(|a| format!("`{a}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                continue;
            }
        }
        let type_ok = match spec.kind {
            ParamType::String => value.is_string(),
            ParamType::Integer => value.is_i64() || value.is_u64(),
            ParamType::Number => value.is_number(),
            ParamType::Boolean => value.is_boolean(),
        };
        if !type_ok {
            let expected = match spec.kind {
                ParamType::String => "a string",
                ParamType::Integer => "an integer (e.g. 10)",
                ParamType::Number => "a number (e.g. 2.5)",
                ParamType::Boolean => "a boolean (true or false)",
            };
            problems.push(format!(
                "parameter `{name}` must be {expected}; you sent `{}`",
                value_text(value)
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("invalid parameters: {}", problems.join("; ")))
    }
}

/// A parameter value as text (strings without quotes).
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Permission, ToolSpec};
    use serde_json::json;

    fn raw(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn coercion_table_of_the_seed() {
        use ParamType::*;
        // string keeps the value as is
        assert_eq!(coerce_value(String, " 10 "), json!(" 10 "));
        // integer: int(value)
        assert_eq!(coerce_value(Integer, "10"), json!(10));
        assert_eq!(coerce_value(Integer, "-3"), json!(-3));
        assert_eq!(coerce_value(Integer, "ten"), json!("ten"));
        assert_eq!(coerce_value(Integer, "1.5"), json!("1.5"));
        // boolean: true/1/yes → true, false/0/no → false, case-insensitive
        for t in ["true", "1", "yes", "TRUE", "Yes"] {
            assert_eq!(coerce_value(Boolean, t), json!(true), "{t}");
        }
        for f in ["false", "0", "no", "False", "NO"] {
            assert_eq!(coerce_value(Boolean, f), json!(false), "{f}");
        }
        assert_eq!(coerce_value(Boolean, "maybe"), json!("maybe"));
        // number: float(value)
        assert_eq!(coerce_value(Number, "2.5"), json!(2.5));
        assert_eq!(coerce_value(Number, "3"), json!(3.0));
        assert_eq!(coerce_value(Number, "NaN"), json!("NaN"));
        assert_eq!(coerce_value(Number, "abc"), json!("abc"));
    }

    fn specs() -> Vec<ParamSpec> {
        vec![
            ParamSpec::new("query", ParamType::String, "Search query"),
            ParamSpec {
                required: false,
                default: Some(json!("noLimit")),
                enum_values: Some(vec!["noLimit".into(), "oneDay".into()]),
                ..ParamSpec::new("freshness", ParamType::String, "")
            },
            ParamSpec {
                required: false,
                default: Some(json!(10)),
                ..ParamSpec::new("count", ParamType::Integer, "")
            },
            ParamSpec {
                required: false,
                ..ParamSpec::new("exact", ParamType::Boolean, "")
            },
        ]
    }

    #[test]
    fn defaults_are_filled_and_valid_calls_pass() {
        let p = prepare(&specs(), &raw(&[("query", "rust"), ("exact", "yes")])).unwrap();
        assert_eq!(
            Value::Object(p),
            json!({"query": "rust", "exact": true, "freshness": "noLimit", "count": 10})
        );
    }

    #[test]
    fn every_validation_failure_is_reported_for_the_model() {
        let err = prepare(&specs(), &raw(&[])).unwrap_err();
        assert!(err.contains("missing required parameter `query`"), "{err}");
        let err = prepare(&specs(), &raw(&[("query", "x"), ("colour", "red")])).unwrap_err();
        assert!(err.contains("unknown parameter `colour`"), "{err}");
        assert!(
            err.contains("`query`, `freshness`, `count`, `exact`"),
            "{err}"
        );
        let err = prepare(&specs(), &raw(&[("query", "x"), ("freshness", "1d")])).unwrap_err();
        assert!(
            err.contains("`freshness` must be one of `noLimit`, `oneDay`; you sent `1d`"),
            "{err}"
        );
        let err = prepare(&specs(), &raw(&[("query", "x"), ("count", "ten")])).unwrap_err();
        assert!(
            err.contains("`count` must be an integer (e.g. 10); you sent `ten`"),
            "{err}"
        );
        let err = prepare(&specs(), &raw(&[("query", "x"), ("exact", "maybe")])).unwrap_err();
        assert!(err.contains("`exact` must be a boolean"), "{err}");
        // Several problems at once are all listed.
        let err = prepare(&specs(), &raw(&[("count", "ten")])).unwrap_err();
        assert!(err.contains("missing required") && err.contains("`count` must be"));
    }

    struct Panics(ToolSpec);

    #[async_trait::async_trait]
    impl Tool for Panics {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn permission(&self) -> Permission {
            Permission::Auto
        }
        async fn execute(&self, _: Params, _: &ToolContext) -> ToolResult {
            panic!("boom")
        }
    }

    #[tokio::test]
    async fn a_panic_becomes_a_failed_result() {
        let tool = Panics(ToolSpec {
            name: "panics".into(),
            description: String::new(),
            input_schema: None,
            params: vec![],
        });
        let r = run(&tool, &raw(&[]), &ToolContext::default()).await;
        assert!(!r.success);
        assert!(r.error.unwrap().contains("crashed while running (boom)"));
        // Validation happens before execution: a bad call never reaches the tool.
        let r = run(&tool, &raw(&[("x", "1")]), &ToolContext::default()).await;
        assert_eq!(
            r.error.as_deref(),
            Some("invalid parameters: unknown parameter `x`; this tool takes no parameters")
        );
    }
}
