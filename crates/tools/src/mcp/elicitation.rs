//! A server's question as data: the requested schema read into a typed form
//! ([`ElicitationForm::parse`]), an answer checked against it ([`ElicitationForm::validate`]),
//! and the replies and outcomes the app and the events carry. No waiting and no events here:
//! the app's broker (`ElicitationBroker`, in the engine above) does that.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// A requested schema as a form: its fields in the schema's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ElicitationForm {
    /// The fields, in the schema's property order.
    pub fields: Vec<ElicitationField>,
}

/// One field of an [`ElicitationForm`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ElicitationField {
    /// The property name (the key of the answer).
    pub name: String,
    /// Its label (`title`, else the name).
    pub title: String,
    /// Its help text, if any.
    pub description: Option<String>,
    /// The answer must hold it.
    pub required: bool,
    /// Its type, constraints and default.
    pub kind: FieldKind,
}

/// What a field holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum FieldKind {
    /// Free text.
    Text {
        /// Fewest characters.
        min_length: Option<u32>,
        /// Most characters.
        max_length: Option<u32>,
        /// `email`, `uri`, `date` or `date-time`.
        format: Option<TextFormat>,
        /// Pre-filled value.
        default: Option<String>,
    },
    /// A number (`integer`: whole numbers only).
    Number {
        /// Only whole numbers.
        integer: bool,
        /// Smallest allowed.
        minimum: Option<f64>,
        /// Largest allowed.
        maximum: Option<f64>,
        /// Pre-filled value.
        default: Option<f64>,
    },
    /// Yes or no.
    Boolean {
        /// Pre-filled value.
        default: Option<bool>,
    },
    /// One of the options.
    Choice {
        /// The options, in order.
        options: Vec<ChoiceOption>,
        /// Pre-selected value.
        default: Option<String>,
    },
    /// Any number of the options.
    MultiChoice {
        /// The options, in order.
        options: Vec<ChoiceOption>,
        /// Fewest selected.
        min_items: Option<u32>,
        /// Most selected.
        max_items: Option<u32>,
        /// Pre-selected values.
        default: Vec<String>,
    },
}

/// A string format the spec allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum TextFormat {
    /// An email address.
    Email,
    /// An absolute URI.
    Uri,
    /// `YYYY-MM-DD`.
    Date,
    /// RFC 3339.
    DateTime,
}

/// One option of a choice: the value sent and its label.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ChoiceOption {
    /// Sent to the server.
    pub value: String,
    /// Shown to the user.
    pub title: String,
}

/// Why a value does not fit its field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FieldError {
    /// The field (property name).
    pub field: String,
    /// What is wrong, for a person.
    pub message: String,
}

impl ElicitationForm {
    /// Read a requested schema. `Err` says which property cannot be shown as a field.
    pub fn parse(schema: &Value) -> Result<Self, String> {
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return Ok(ElicitationForm { fields: Vec::new() });
        };
        let fields = props
            .iter()
            .map(|(name, prop)| {
                let kind =
                    field_kind(prop).map_err(|why| format!("the form's field `{name}` {why}"))?;
                Ok(ElicitationField {
                    name: name.clone(),
                    title: text(prop, "title").unwrap_or_else(|| name.clone()),
                    description: text(prop, "description"),
                    required: required.contains(name.as_str()),
                    kind,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(ElicitationForm { fields })
    }

    /// The answer the form starts with: every field's default (fields without one are
    /// left out).
    pub fn defaults(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.kind.default_value()?)))
            .collect()
    }

    /// Check `content` against the form: no unknown keys, every required field present,
    /// each value of its field's type and within its constraints. Returns the content to send
    /// (whole-number floats of integer fields sent as integers) or every problem found.
    pub fn validate(
        &self,
        content: &Map<String, Value>,
    ) -> Result<Map<String, Value>, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut out = Map::new();
        for key in content.keys() {
            if !self.fields.iter().any(|f| &f.name == key) {
                errors.push(FieldError {
                    field: key.clone(),
                    message: "the form has no such field".into(),
                });
            }
        }
        for field in &self.fields {
            match content.get(&field.name) {
                None | Some(Value::Null) if field.required => errors.push(FieldError {
                    field: field.name.clone(),
                    message: "required".into(),
                }),
                None | Some(Value::Null) => {}
                Some(value) => match field.kind.check(value) {
                    Ok(v) => {
                        out.insert(field.name.clone(), v);
                    }
                    Err(message) => errors.push(FieldError {
                        field: field.name.clone(),
                        message,
                    }),
                },
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }
}

fn text(prop: &Value, key: &str) -> Option<String> {
    prop.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn count(prop: &Value, key: &str) -> Option<u32> {
    prop.get(key)
        .and_then(Value::as_u64)
        .map(|n| n.min(u32::MAX as u64) as u32)
}

/// `[{const, title}]` as options.
fn titled_options(list: &[Value]) -> Vec<ChoiceOption> {
    list.iter()
        .filter_map(|o| {
            let value = o.get("const")?.as_str()?.to_string();
            let title = text(o, "title").unwrap_or_else(|| value.clone());
            Some(ChoiceOption { value, title })
        })
        .collect()
}

/// `enum` values, labelled by `enumNames` when given (the legacy titled enum).
fn enum_options(values: &[Value], names: Option<&Vec<Value>>) -> Vec<ChoiceOption> {
    values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let value = v.as_str()?.to_string();
            let title = names
                .and_then(|n| n.get(i))
                .and_then(Value::as_str)
                .map_or_else(|| value.clone(), str::to_string);
            Some(ChoiceOption { value, title })
        })
        .collect()
}

fn field_kind(prop: &Value) -> Result<FieldKind, String> {
    let ty = prop.get("type").and_then(Value::as_str).unwrap_or("");
    let default = prop.get("default");
    match ty {
        "string" => {
            let options = if let Some(list) = prop.get("oneOf").and_then(Value::as_array) {
                Some(titled_options(list))
            } else {
                prop.get("enum")
                    .and_then(Value::as_array)
                    .map(|e| enum_options(e, prop.get("enumNames").and_then(Value::as_array)))
            };
            let default = default.and_then(Value::as_str).map(str::to_string);
            if let Some(options) = options {
                let default = default.filter(|d| options.iter().any(|o| &o.value == d));
                return Ok(FieldKind::Choice { options, default });
            }
            let format = match prop.get("format").and_then(Value::as_str) {
                None => None,
                Some("email") => Some(TextFormat::Email),
                Some("uri") => Some(TextFormat::Uri),
                Some("date") => Some(TextFormat::Date),
                Some("date-time") => Some(TextFormat::DateTime),
                // An unknown format is only a hint: the field stays free text.
                Some(_) => None,
            };
            Ok(FieldKind::Text {
                min_length: count(prop, "minLength"),
                max_length: count(prop, "maxLength"),
                format,
                default,
            })
        }
        "number" | "integer" => Ok(FieldKind::Number {
            integer: ty == "integer",
            minimum: prop.get("minimum").and_then(Value::as_f64),
            maximum: prop.get("maximum").and_then(Value::as_f64),
            default: default.and_then(Value::as_f64),
        }),
        "boolean" => Ok(FieldKind::Boolean {
            default: default.and_then(Value::as_bool),
        }),
        "array" => {
            let items = prop.get("items").unwrap_or(&Value::Null);
            let options = if let Some(list) = items.get("anyOf").and_then(Value::as_array) {
                titled_options(list)
            } else if let Some(values) = items.get("enum").and_then(Value::as_array) {
                enum_options(values, None)
            } else {
                return Err("is a list whose items are not a set of options".into());
            };
            let default = default
                .and_then(Value::as_array)
                .map(|d| {
                    d.iter()
                        .filter_map(Value::as_str)
                        .filter(|v| options.iter().any(|o| o.value == *v))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            Ok(FieldKind::MultiChoice {
                options,
                min_items: count(prop, "minItems"),
                max_items: count(prop, "maxItems"),
                default,
            })
        }
        other => Err(format!(
            "has the type `{other}`, which a form cannot show (only string, number, integer, boolean and lists of options)"
        )),
    }
}

impl FieldKind {
    /// The default as the JSON value sent.
    fn default_value(&self) -> Option<Value> {
        match self {
            FieldKind::Text { default, .. } | FieldKind::Choice { default, .. } => {
                default.clone().map(Value::String)
            }
            FieldKind::Number {
                default, integer, ..
            } => default.and_then(|d| number(d, *integer)),
            FieldKind::Boolean { default } => default.map(Value::Bool),
            FieldKind::MultiChoice { default, .. } if default.is_empty() => None,
            FieldKind::MultiChoice { default, .. } => Some(Value::Array(
                default.iter().cloned().map(Value::String).collect(),
            )),
        }
    }

    /// Check one value; the value to send, or what is wrong.
    fn check(&self, value: &Value) -> Result<Value, String> {
        match self {
            FieldKind::Text {
                min_length,
                max_length,
                format,
                ..
            } => {
                let s = value.as_str().ok_or("must be text")?;
                let n = s.chars().count() as u64;
                if let Some(min) = min_length.filter(|m| n < u64::from(*m)) {
                    return Err(format!("must be at least {min} characters"));
                }
                if let Some(max) = max_length.filter(|m| n > u64::from(*m)) {
                    return Err(format!("must be at most {max} characters"));
                }
                if let Some(format) = format {
                    check_format(*format, s)?;
                }
                Ok(value.clone())
            }
            FieldKind::Number {
                integer,
                minimum,
                maximum,
                ..
            } => {
                let n = value.as_f64().ok_or("must be a number")?;
                if *integer && n.fract() != 0.0 {
                    return Err("must be a whole number".into());
                }
                if let Some(min) = minimum.filter(|m| n < *m) {
                    return Err(format!("must be at least {min}"));
                }
                if let Some(max) = maximum.filter(|m| n > *m) {
                    return Err(format!("must be at most {max}"));
                }
                number(n, *integer).ok_or_else(|| "must be a finite number".into())
            }
            FieldKind::Boolean { .. } => value
                .as_bool()
                .map(Value::Bool)
                .ok_or_else(|| "must be true or false".into()),
            FieldKind::Choice { options, .. } => {
                let s = value.as_str().ok_or("must be one of the options")?;
                if options.iter().any(|o| o.value == s) {
                    Ok(value.clone())
                } else {
                    Err(format!("`{s}` is not one of the options"))
                }
            }
            FieldKind::MultiChoice {
                options,
                min_items,
                max_items,
                ..
            } => {
                let list = value.as_array().ok_or("must be a list of options")?;
                let mut seen = BTreeSet::new();
                for item in list {
                    let s = item.as_str().ok_or("must be a list of options")?;
                    if !options.iter().any(|o| o.value == s) {
                        return Err(format!("`{s}` is not one of the options"));
                    }
                    if !seen.insert(s) {
                        return Err(format!("`{s}` is chosen twice"));
                    }
                }
                let n = list.len() as u64;
                if let Some(min) = min_items.filter(|m| n < u64::from(*m)) {
                    return Err(format!("choose at least {min}"));
                }
                if let Some(max) = max_items.filter(|m| n > u64::from(*m)) {
                    return Err(format!("choose at most {max}"));
                }
                Ok(value.clone())
            }
        }
    }
}

/// `n` as JSON: an integer field's value as an integer.
fn number(n: f64, integer: bool) -> Option<Value> {
    if integer && n.fract() == 0.0 && n.abs() < 9.0e15 {
        return Some(Value::Number(Number::from(n as i64)));
    }
    Number::from_f64(n).map(Value::Number)
}

fn check_format(format: TextFormat, s: &str) -> Result<(), String> {
    let ok = match format {
        TextFormat::Email => is_email(s),
        TextFormat::Uri => reqwest::Url::parse(s).is_ok(),
        TextFormat::Date => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok(),
        TextFormat::DateTime => chrono::DateTime::parse_from_rfc3339(s).is_ok(),
    };
    if ok {
        return Ok(());
    }
    Err(match format {
        TextFormat::Email => "must be an email address (name@example.com)",
        TextFormat::Uri => "must be a full address with its scheme (https://…)",
        TextFormat::Date => "must be a date (YYYY-MM-DD)",
        TextFormat::DateTime => "must be a date and time (YYYY-MM-DDThh:mm:ssZ)",
    }
    .into())
}

/// `local@domain.tld` with no spaces: what a form can check without sending mail.
fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && !s.chars().any(char::is_whitespace)
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
}

/// What the user answered (from the UI).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ElicitationReply {
    /// Send these values (a URL request: the user opened, or will open, the page).
    Accept {
        /// The form's values (empty for a URL request).
        content: Map<String, Value>,
    },
    /// Refuse.
    Decline,
    /// Dismiss without deciding.
    Cancel,
}

/// How an elicitation ended, as the engine's `ElicitationResolved` event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ElicitationOutcome {
    /// Values were sent.
    Accepted,
    /// Refused.
    Declined,
    /// Dismissed, timed out, stopped or withdrawn.
    Cancelled,
}

/// Why an answer was not delivered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ElicitationAnswerError {
    /// No such request is waiting.
    #[error("there is no pending request `{0}` from an MCP server (it was already answered, timed out or cancelled)")]
    Unknown(String),
    /// The values do not fit the form; nothing was sent and the request still waits.
    #[error("the answer does not fit the form, nothing was sent: {}", describe(.0))]
    Invalid(Vec<FieldError>),
}

fn describe(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("`{}` {}", e.field, e.message))
        .collect::<Vec<_>>()
        .join("; ")
}
