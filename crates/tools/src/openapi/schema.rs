//! `$ref` resolution and JSON Schema → tool parameter types, within one description.
//!
//! Expansion is bounded, whatever the description: an `allOf` part already merged into an
//! object is not merged again (a self-referencing `allOf` is linear, not exponential), a
//! nested shape's summary stops at [`MAX_SUMMARY_CHARS`] characters (fan-out `$ref`s cannot
//! multiply into megabytes), and past [`MAX_EXPANDED`] schema nodes in one import the import
//! fails with an error naming where.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;

use serde_json::Value;

use super::OpenApiError;
use crate::tool_spec::ParamType;

/// How deep a nested schema is described before it is cut (and how many `$ref` hops are
/// followed in a row).
pub const MAX_DEPTH: usize = 3;

/// Schema nodes (`$ref` hops, objects flattened, shapes summarised) one import may expand.
pub const MAX_EXPANDED: usize = 1_000_000;

/// Longest summary of a JSON parameter's shape, in characters; longer ones end with `…`.
pub const MAX_SUMMARY_CHARS: usize = 2_000;

/// The message of an import stopped by its caller.
pub const CANCELLED: &str = "the import was cancelled";

/// Why an import stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Budget,
    Cancelled,
}

/// A description being imported: the whole document, for `$ref`s.
pub struct Doc<'a> {
    /// The parsed description.
    pub root: &'a Value,
    /// Its file or URL, for errors.
    pub source: &'a str,
    /// Schema nodes expanded so far.
    expanded: Cell<usize>,
    /// Schema nodes it may expand.
    max_expanded: usize,
    /// Where the expansion budget ran out, or the import was cancelled, once it has.
    exhausted: RefCell<Option<(String, Stop)>>,
    /// Asked between nodes: has the import been cancelled?
    cancelled: &'a (dyn Fn() -> bool + Sync),
    /// Characters the summary being written may still use.
    summary_left: Cell<usize>,
}

impl<'a> Doc<'a> {
    /// A description to import, expanding at most `max_expanded` schema nodes and stopping
    /// once `cancelled` says so.
    pub fn new(
        root: &'a Value,
        source: &'a str,
        max_expanded: usize,
        cancelled: &'a (dyn Fn() -> bool + Sync),
    ) -> Self {
        Doc {
            root,
            source,
            expanded: Cell::new(0),
            max_expanded,
            cancelled,
            exhausted: RefCell::new(None),
            summary_left: Cell::new(MAX_SUMMARY_CHARS),
        }
    }

    /// Count one expanded node at `at`; `false` once past [`MAX_EXPANDED`].
    fn spend(&self, at: &str) -> bool {
        let n = self.expanded.get() + 1;
        self.expanded.set(n);
        let stop = if n > self.max_expanded {
            Stop::Budget
        } else if (self.cancelled)() {
            Stop::Cancelled
        } else {
            return true;
        };
        self.exhausted
            .borrow_mut()
            .get_or_insert_with(|| (at.to_string(), stop));
        false
    }

    /// Stop now if the import has been cancelled (between operations).
    pub fn check_cancelled(&self, at: &str) {
        if (self.cancelled)() {
            self.exhausted
                .borrow_mut()
                .get_or_insert_with(|| (at.to_string(), Stop::Cancelled));
        }
    }

    /// Schema nodes expanded so far.
    pub fn expanded(&self) -> usize {
        self.expanded.get()
    }

    /// The located error once the expansion budget has run out.
    pub fn exhausted(&self) -> Option<OpenApiError> {
        self.exhausted.borrow().as_ref().map(|(at, stop)| {
            let message = match stop {
                Stop::Budget => format!(
                    "the schemas expand past {} nodes here (fan-out `$ref`s or repeated `allOf`); the description is too repetitive to import",
                    self.max_expanded
                ),
                Stop::Cancelled => CANCELLED.to_string(),
            };
            OpenApiError::new(self.source, at, message)
        })
    }

    fn budget_error(&self, at: &str) -> RefError {
        RefError::Broken(self.exhausted().unwrap_or_else(|| {
            OpenApiError::new(self.source, at, "the expansion budget ran out".into())
        }))
    }
}

/// A reference that cannot be followed inside the document.
#[derive(Debug)]
pub enum RefError {
    /// `other.yaml#/…` or a URL: not followed; the operation is skipped with this reason.
    External(String),
    /// A located error in the document itself.
    Broken(OpenApiError),
}

impl<'a> Doc<'a> {
    /// `value` with its `$ref` chain followed (`at` is the pointer of `value`, for errors).
    /// Returns the target and its pointer.
    pub fn resolve(&self, value: &'a Value, at: &str) -> Result<(&'a Value, String), RefError> {
        let mut current = value;
        let mut pointer = at.to_string();
        if !self.spend(at) {
            return Err(self.budget_error(at));
        }
        for _ in 0..16 {
            let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
                return Ok((current, pointer));
            };
            let Some(fragment) = reference.strip_prefix('#') else {
                return Err(RefError::External(format!(
                    "it uses the external reference `{reference}` (at {pointer}/$ref), which is not followed"
                )));
            };
            let decoded = percent_encoding::percent_decode_str(fragment)
                .decode_utf8_lossy()
                .into_owned();
            match self.root.pointer(&decoded) {
                Some(target) => {
                    current = target;
                    pointer = decoded;
                }
                None => {
                    return Err(RefError::Broken(OpenApiError::new(
                        self.source,
                        &format!("{pointer}/$ref"),
                        format!("`{reference}` points to nothing in the document"),
                    )))
                }
            }
        }
        Err(RefError::Broken(OpenApiError::new(
            self.source,
            &pointer,
            "a `$ref` chain loops on itself".into(),
        )))
    }
}

/// What a schema means for a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string, integer, number or boolean.
    Scalar(ParamType),
    /// An object or an array (or a schema without one type): sent as JSON.
    Json,
    /// A file upload: cannot be expressed.
    Binary,
}

/// The non-null types a schema allows: `type: x`, 3.1 `type: [x, "null"]`.
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => Vec::new(),
    }
}

/// The kind of a (resolved) schema.
pub fn kind_of(schema: &Value) -> Kind {
    let ts = types(schema);
    let scalar = |t: &str| match t {
        "string" => Some(ParamType::String),
        "integer" => Some(ParamType::Integer),
        "number" => Some(ParamType::Number),
        "boolean" => Some(ParamType::Boolean),
        _ => None,
    };
    if ts.contains(&"file") || schema.get("format").and_then(Value::as_str) == Some("binary") {
        return Kind::Binary;
    }
    match ts.as_slice() {
        [one] => scalar(one).map_or(Kind::Json, Kind::Scalar),
        [] => {
            if schema.get("properties").is_some() || schema.get("items").is_some() {
                Kind::Json
            } else if let Some(Value::Array(values)) = schema.get("enum") {
                let all = |f: fn(&Value) -> bool| values.iter().filter(|v| !v.is_null()).all(f);
                if all(Value::is_boolean) {
                    Kind::Scalar(ParamType::Boolean)
                } else if all(Value::is_i64) {
                    Kind::Scalar(ParamType::Integer)
                } else if all(Value::is_number) {
                    Kind::Scalar(ParamType::Number)
                } else {
                    Kind::Scalar(ParamType::String)
                }
            } else if schema.get("allOf").is_some()
                || schema.get("oneOf").is_some()
                || schema.get("anyOf").is_some()
            {
                Kind::Json
            } else {
                Kind::Scalar(ParamType::String)
            }
        }
        // Several types (`[string, integer]`): the text is sent as written.
        many if many.iter().all(|t| scalar(t).is_some()) => Kind::Scalar(ParamType::String),
        _ => Kind::Json,
    }
}

impl Doc<'_> {
    /// [`kind_of`], and a `oneOf`/`anyOf` whose alternatives are all scalars (`workflow_id`:
    /// an integer or a file name) is their common type, else a string.
    pub fn kind(&self, schema: &Value) -> Kind {
        let own = kind_of(schema);
        if own != Kind::Json || !types(schema).is_empty() {
            return own;
        }
        let Some(Value::Array(alternatives)) = schema.get("oneOf").or_else(|| schema.get("anyOf"))
        else {
            return own;
        };
        let mut common: Option<ParamType> = None;
        for alt in alternatives {
            let Ok((alt, _)) = self.resolve(alt, "") else {
                return own;
            };
            if alt.get("type").and_then(Value::as_str) == Some("null") {
                continue;
            }
            match kind_of(alt) {
                Kind::Scalar(t) if common.is_none_or(|c| c == t) => common = Some(t),
                Kind::Scalar(_) => common = Some(ParamType::String),
                _ => return own,
            }
        }
        common.map_or(own, Kind::Scalar)
    }
}

/// An object schema flattened: its properties (with pointers) and required names, `allOf`
/// parts merged. `None` when it is not an object with declared properties.
pub struct ObjectShape<'a> {
    /// Name, schema and JSON pointer of each property.
    pub properties: Vec<(String, &'a Value, String)>,
    /// The required property names.
    pub required: Vec<String>,
}

impl<'a> Doc<'a> {
    /// Flatten `schema` (at `at`) as an object.
    pub fn object_shape(
        &self,
        schema: &'a Value,
        at: &str,
        depth: usize,
    ) -> Result<Option<ObjectShape<'a>>, RefError> {
        self.object_shape_in(schema, at, depth, &mut HashSet::new())
    }

    /// [`Doc::object_shape`], skipping the schemas in `merged` (already part of the object).
    fn object_shape_in(
        &self,
        schema: &'a Value,
        at: &str,
        depth: usize,
        merged: &mut HashSet<String>,
    ) -> Result<Option<ObjectShape<'a>>, RefError> {
        let (schema, at) = self.resolve(schema, at)?;
        if !merged.insert(at.clone()) {
            return Ok(None);
        }
        let mut shape = ObjectShape {
            properties: Vec::new(),
            required: Vec::new(),
        };
        let mut found = false;
        if let Some(Value::Object(props)) = schema.get("properties") {
            found = true;
            for (name, prop) in props {
                shape.properties.push((
                    name.clone(),
                    prop,
                    format!("{at}/properties/{}", escape(name)),
                ));
            }
        }
        if let Some(Value::Array(req)) = schema.get("required") {
            shape
                .required
                .extend(req.iter().filter_map(Value::as_str).map(String::from));
        }
        if let (Some(Value::Array(parts)), true) = (schema.get("allOf"), depth < MAX_DEPTH * 2) {
            for (i, part) in parts.iter().enumerate() {
                if let Some(inner) =
                    self.object_shape_in(part, &format!("{at}/allOf/{i}"), depth + 1, merged)?
                {
                    found = true;
                    for p in inner.properties {
                        if !shape.properties.iter().any(|(n, _, _)| n == &p.0) {
                            shape.properties.push(p);
                        }
                    }
                    shape.required.extend(inner.required);
                }
            }
        }
        Ok(found.then_some(shape))
    }

    /// A compact description of a JSON value's expected shape, nested schemas described down
    /// to [`MAX_DEPTH`] levels; recursive ones are cut with a note (pushed to `notes`).
    /// `outer` names the `$ref`s the value is already inside (the request body's schema).
    pub fn summary(
        &self,
        schema: &'a Value,
        at: &str,
        outer: &[String],
        notes: &mut Vec<String>,
    ) -> String {
        let mut stack = outer.to_vec();
        self.summary_left.set(MAX_SUMMARY_CHARS);
        let mut text = self.summary_at(schema, at, 0, &mut stack, notes);
        // The budget counts names and types; brackets and cuts may pass it a little.
        if let Some((cut, _)) = text.char_indices().nth(MAX_SUMMARY_CHARS - 1) {
            text.truncate(cut);
            text.push('…');
        }
        if self.summary_left.get() == 0 {
            let note =
                format!("long shapes are summarised in {MAX_SUMMARY_CHARS} characters, then cut");
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        // The model never sees the schema names: say what a repeat of the body itself is.
        outer.iter().fold(text, |text, r| {
            let name = r.rsplit('/').next().unwrap_or(r);
            text.replace(
                &format!("{name} (recursive, cut)"),
                "{…same fields as the whole body (recursive, cut)}",
            )
        })
    }

    fn summary_at(
        &self,
        schema: &'a Value,
        at: &str,
        depth: usize,
        stack: &mut Vec<String>,
        notes: &mut Vec<String>,
    ) -> String {
        if self.summary_left.get() == 0 || !self.spend(at) {
            return "…".into();
        }
        let reference = schema.get("$ref").and_then(Value::as_str).map(String::from);
        if let Some(r) = &reference {
            let name = r.rsplit('/').next().unwrap_or(r).to_string();
            if stack.contains(r) {
                let note = format!(
                    "schema `{name}` is recursive; it is described once and cut where it repeats"
                );
                if !notes.contains(&note) {
                    notes.push(note);
                }
                return format!("{name} (recursive, cut)");
            }
        }
        let Ok((resolved, at)) = self.resolve(schema, at) else {
            return "any JSON".into();
        };
        if depth >= MAX_DEPTH {
            let note = format!("nested schemas are described down to {MAX_DEPTH} levels, then cut");
            if !notes.contains(&note) {
                notes.push(note);
            }
            return "…".into();
        }
        if let Some(r) = &reference {
            stack.push(r.clone());
        }
        let text = match kind_of(resolved) {
            Kind::Scalar(t) => self.take(t.as_str()),
            Kind::Binary => self.take("binary"),
            Kind::Json if types(resolved).contains(&"array") || resolved.get("items").is_some() => {
                match resolved.get("items") {
                    Some(items) => format!(
                        "[{}]",
                        self.summary_at(items, &format!("{at}/items"), depth + 1, stack, notes)
                    ),
                    None => self.take("[…]"),
                }
            }
            Kind::Json => match self.object_shape(resolved, &at, 0) {
                Ok(Some(shape)) if !shape.properties.is_empty() => {
                    let mut fields: Vec<String> = Vec::new();
                    for (name, prop, ptr) in &shape.properties {
                        if self.summary_left.get() == 0 {
                            fields.push("…".into());
                            break;
                        }
                        let mark = if shape.required.contains(name) {
                            ""
                        } else {
                            "?"
                        };
                        let label = self.take(&format!("{name}{mark}: "));
                        fields.push(format!(
                            "{label}{}",
                            self.summary_at(prop, ptr, depth + 1, stack, notes)
                        ));
                    }
                    format!("{{{}}}", fields.join(", "))
                }
                _ => self.take("any JSON"),
            },
        };
        if reference.is_some() {
            stack.pop();
        }
        text
    }
}

impl Doc<'_> {
    /// `text`, its length taken from what the summary being written may still use.
    fn take(&self, text: &str) -> String {
        let n = text.chars().count();
        self.summary_left
            .set(self.summary_left.get().saturating_sub(n));
        text.to_string()
    }
}

/// `name` escaped as one JSON pointer token.
pub fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
