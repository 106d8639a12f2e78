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
