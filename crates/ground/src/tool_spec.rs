//! Tool definitions as plain data: what the model is told about a tool.
//!
//! A [`ToolSpec`] is what the instruction generator
//! ([`parser::tool_instructions`](crate::parser::tool_instructions)) needs: name, description and
//! parameters with their type, whether they are required, a default and allowed values. Built-in,
//! artifact, HTTP and custom tools all describe themselves with one.

use serde::{Deserialize, Serialize};

/// One tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool name the model writes in `<name>`.
    pub name: String,
    /// What the tool does, for the model (may span several lines).
    pub description: String,
    /// Parameters, in the order they are documented.
    #[serde(default)]
    pub params: Vec<ParamSpec>,
    /// The tool's own JSON Schema for its arguments (an MCP server's `inputSchema`), sent to
    /// the model as it is, with every keyword (`$schema`, `$defs`, `$ref`,
    /// `additionalProperties`, …): `None` builds one from `params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<serde_json::Value>,
}

/// The type a parameter's string value is coerced to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    /// Any text.
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// `true` / `false`.
    Boolean,
}

impl ParamType {
    /// The name used in tool instructions and definitions.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
        }
    }
}

/// One parameter of a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ParamSpec {
    /// Parameter name (the tag the model writes).
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: ParamType,
    /// What it means, for the model.
    #[serde(default)]
    pub description: String,
    /// Must the model give it? Defaults to true.
    #[serde(default = "yes")]
    pub required: bool,
    /// Value used when the model leaves it out.
    #[serde(default)]
    pub default: Option<serde_json::Value>,
    /// The only values allowed, if restricted.
    #[serde(default, rename = "enum")]
    pub enum_values: Option<Vec<String>>,
}

fn yes() -> bool {
    true
}

impl ParamSpec {
    /// A required parameter with no default or allowed values.
    pub fn new(name: impl Into<String>, kind: ParamType, description: impl Into<String>) -> Self {
        ParamSpec {
            name: name.into(),
            kind,
            description: description.into(),
            required: true,
            default: None,
            enum_values: None,
        }
    }

    /// Make it optional with this default.
    pub fn with_default(mut self, default: serde_json::Value) -> Self {
        self.required = false;
        self.default = Some(default);
        self
    }

    /// Make it optional (no default).
    pub fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    /// Restrict it to these values.
    pub fn with_values<I: IntoIterator<Item = S>, S: Into<String>>(mut self, values: I) -> Self {
        self.enum_values = Some(values.into_iter().map(Into::into).collect());
        self
    }
}

impl ToolSpec {
    /// The JSON Schema of the tool's arguments, for native tool calling: the tool's own
    /// ([`ToolSpec::input_schema`]) when it has one, else an object with one property per
    /// parameter (its type, description, allowed values and default), the required ones
    /// listed, no others allowed.
    pub fn json_schema(&self) -> serde_json::Value {
        if let Some(schema) = &self.input_schema {
            return schema.clone();
        }
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for p in &self.params {
            let mut schema = serde_json::Map::new();
            schema.insert("type".into(), p.kind.as_str().into());
            if !p.description.is_empty() {
                schema.insert("description".into(), p.description.clone().into());
            }
            if let Some(values) = &p.enum_values {
                let values: Vec<serde_json::Value> =
                    values.iter().map(|v| typed_value(p.kind, v)).collect();
                schema.insert("enum".into(), values.into());
            }
            if let Some(default) = &p.default {
                schema.insert("default".into(), default.clone());
            }
            if p.required {
                required.push(serde_json::Value::from(p.name.clone()));
            }
            properties.insert(p.name.clone(), schema.into());
        }
        serde_json::json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }
}

/// An allowed value written as text, as a JSON value of `kind` when it reads as one.
fn typed_value(kind: ParamType, value: &str) -> serde_json::Value {
    let parsed = match kind {
        ParamType::String => None,
        ParamType::Integer => value.trim().parse::<i64>().ok().map(Into::into),
        ParamType::Number => value
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(serde_json::Value::Number),
        ParamType::Boolean => value.trim().parse::<bool>().ok().map(Into::into),
    };
    parsed.unwrap_or_else(|| value.into())
}

/// A tool's permission level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Permission {
    /// Runs without asking.
    Auto,
    /// Asks the user before every run (unless always allowed in the conversation).
    Confirm,
}

/// A call's parameters after coercion and defaults: name → typed JSON value, in the order given.
pub type Params = serde_json::Map<String, serde_json::Value>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_schema_lists_types_required_enums_and_defaults() {
        let spec = ToolSpec {
            name: "web_search".into(),
            description: "Search the web".into(),
            input_schema: None,
            params: vec![
                ParamSpec::new("query", ParamType::String, "What to search for"),
                ParamSpec::new("count", ParamType::Integer, "").with_default(json!(5)),
                ParamSpec::new("level", ParamType::Integer, "Depth")
                    .optional()
                    .with_values(["1", "2"]),
                ParamSpec::new("fresh", ParamType::Boolean, "Recent only").optional(),
            ],
        };
        assert_eq!(
            spec.json_schema(),
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search for"},
                    "count": {"type": "integer", "default": 5},
                    "level": {"type": "integer", "description": "Depth", "enum": [1, 2]},
                    "fresh": {"type": "boolean", "description": "Recent only"},
                },
                "required": ["query"],
                "additionalProperties": false,
            })
        );
    }
}
