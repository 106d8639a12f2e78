//! Import an OpenAPI description as HTTP tool files (`config/tools/*.md`).
//!
//! [`import`] reads a description (JSON or YAML text; OpenAPI 3.0, 3.1, or Swagger 2.0, which
//! is read as its 3.0 equivalent), picks operations ([`Selection`]) and writes one tool file
//! text per chosen operation ([`GeneratedTool`]), in the format of [`crate::tools::http`]:
//!
//! - **name**: the `operationId` with every character outside `A-Z a-z 0-9 _ - .` made `_`
//!   (`repos/get` → `repos_get`), else `method_path` (`get_pets_petId`); made unique in
//!   document order with `_2`, `_3`… Names are given over the whole document before the
//!   selection, so an operation's tool name does not depend on what else is imported.
//! - **endpoint**: the first server URL (operation, then path item, then document; variables
//!   filled with their defaults; Swagger 2.0: `schemes` (https first) + `host` + `basePath`)
//!   followed by the path, its `{param}` placeholders kept for `in: path` parameters. A
//!   relative server URL is resolved against the description's URL when it came from one; with
//!   no absolute server at all, the endpoint starts with a `{{<API>_BASE_URL}}` secret. The
//!   description's text is data: `{{`, `}}`, `<<` and `>>` in a server URL or a path are
//!   percent-encoded (never filled as secrets); a path must start with `/`, a server URL has no
//!   query or fragment, and the endpoint's host is the server's (else the operation is
//!   skipped). [`GeneratedTool::secrets`] lists every template the tool fills, read back from
//!   the generated file.
//! - **parameters**: path, query and header parameters (cookie ones cannot be sent: an
//!   optional one is left out with a note, a required one skips the operation); the properties
//!   of a JSON object request body as `in: body` parameters. Scalars keep their type, enum,
//!   default and description; objects and arrays become `type: string` with `json: true`,
//!   their shape summarised in the description (nested schemas down to [`schema::MAX_DEPTH`]
//!   levels; recursive `$ref`s are cut there, with a note). 3.1 `type: [string, "null"]` is a
//!   string. An optional array query/header parameter is left out with a note; a required one
//!   skips the operation. A path parameter marked `x-multi-segment: true` (GitHub's
//!   `contents/{path}`) is written `multi_segment: true`.
//! - **headers / endpoint query** from the security requirement (the first alternative that
//!   can be expressed): HTTP bearer, OAuth2 and OpenID Connect → `Authorization: Bearer
//!   {{<API>_TOKEN}}`, HTTP basic → `Authorization: Basic {{<API>_BASIC_AUTH}}`, an API key →
//!   the header or query parameter it names set to `{{<API>_API_KEY}}`. `<API>` is the first
//!   significant word of `info.title` (`GitHub v3 REST API` → `GITHUB`).
//! - **response_extract** only when the success response is an object whose only property is
//!   `data`, `result`, `results` or `items`; otherwise none.
//!
//! Every generated text is loaded by the real HTTP tool loader before it is returned; an
//! operation that cannot be expressed is returned in [`Import::skipped`] with the reason and no
//! text. A malformed description is an [`OpenApiError`] naming the source and the JSON pointer.

pub mod schema;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::tool_spec::ParamType;
use crate::tools::http::ParamIn;
use crate::yaml;
use schema::{escape, Doc, Kind, RefError};

/// A malformed description: where (source and JSON pointer, or line for a syntax error) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}{}: {message}", location(.pointer, .line))]
pub struct OpenApiError {
    /// The file or URL it came from.
    pub source_name: String,
    /// JSON pointer of the offending value (`""` for the whole document).
    pub pointer: String,
    /// 1-based line, for a JSON/YAML syntax error.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

fn location(pointer: &str, line: &Option<usize>) -> String {
    match line {
        Some(l) => format!(":{l}"),
        None => format!(" at {}", if pointer.is_empty() { "/" } else { pointer }),
    }
}

impl OpenApiError {
    fn new(source: &str, pointer: &str, message: String) -> Self {
        OpenApiError {
            source_name: source.to_string(),
            pointer: pointer.to_string(),
            line: None,
            message,
        }
    }
}

/// Which operations to import. Empty: all of them. Conditions combine (all must hold).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `operationId`s (or generated tool names).
    pub operations: Vec<String>,
    /// A tag the operation has.
    pub tag: Option<String>,
    /// Text found (case-insensitively) in the id, the path or the summary.
    pub search: Option<String>,
}

/// One tool file to write.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedTool {
    /// The tool name.
    pub name: String,
    /// File name to write it under (`<name>.md`).
    pub file_name: String,
    /// The whole file text.
    pub text: String,
    /// `GET /pets/{petId}`.
    pub operation: String,
    /// Names of the secrets it uses.
    pub secrets: Vec<String>,
    /// The operation's tags (for picking by tag).
    pub tags: Vec<String>,
    /// The operation's one-line summary (may be empty).
    pub summary: String,
}

/// An operation that was chosen but cannot be expressed as an HTTP tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `operationId (GET /path)` or `GET /path`.
    pub operation: String,
    /// Why.
    pub reason: String,
}

/// What an import produced.
#[derive(Debug, Clone, Default)]
pub struct Import {
    /// `info.title`.
    pub title: String,
    /// One per imported operation, in document order.
    pub tools: Vec<GeneratedTool>,
    /// Chosen operations that were not imported, with the reason (also ids that matched none).
    pub skipped: Vec<Skipped>,
    /// Operations in the document.
    pub total: usize,
    /// Schema nodes expanded to write the tools (at most [`schema::MAX_EXPANDED`]).
    pub expanded: usize,
}

/// Largest total text of the tool files one import generates.
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024 * 1024;

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Parse JSON or YAML text into a value; syntax errors carry the line.
pub fn parse_text(source: &str, text: &str) -> Result<Value, OpenApiError> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        return serde_json::from_str(trimmed).map_err(|e| OpenApiError {
            source_name: source.to_string(),
            pointer: String::new(),
            line: Some(e.line()),
            message: format!("not valid JSON: {e}"),
        });
    }
    yaml::from_str::<Value>(trimmed).map_err(|e| OpenApiError {
        source_name: source.to_string(),
        pointer: String::new(),
        line: e.line,
        message: format!("not valid JSON or YAML: {}", e.message),
    })
}

/// Fetch a description from a URL (timeout 60 s, at most 64 MB).
pub async fn fetch(url: &str) -> Result<String, String> {
    let client = crate::tools::http::shared_open_client();
    let response = client
        .get(url)
        .timeout(std::time::Duration::from_secs(60))
        .send()
        .await
        .map_err(|e| {
            format!(
                "could not fetch {url}: {}",
                crate::net::describe_request_error(&e)
            )
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("could not fetch {url}: HTTP {status}"));
    }
    let bytes = crate::tools::http::read_capped(response, 64 * 1024 * 1024).await?;
    String::from_utf8(bytes).map_err(|_| format!("{url} is not UTF-8 text"))
}

/// One operation found in the document.
struct Op<'a> {
    method: &'a str,
    path: &'a str,
    pointer: String,
    item: &'a Value,
    item_pointer: String,
    op: &'a Value,
    id: Option<String>,
    name: String,
}

impl Op<'_> {
    fn label(&self) -> String {
        let m = self.method.to_ascii_uppercase();
        match &self.id {
            Some(id) => format!("{id} ({m} {})", self.path),
            None => format!("{m} {}", self.path),
        }
    }
}

/// Which description format.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Version {
    Swagger2,
    OpenApi3,
}

/// Import the operations of a description chosen by `selection`. `source` names the file or
/// URL (for errors; a URL also resolves relative server URLs).
pub fn import(source: &str, text: &str, selection: &Selection) -> Result<Import, OpenApiError> {
    let root = parse_text(source, text)?;
    import_value(source, &root, selection)
}

/// [`import`] that stops with the error [`schema::CANCELLED`] soon after `cancelled` returns
/// true (it is asked between schema nodes and operations).
pub fn import_cancellable(
    source: &str,
    text: &str,
    selection: &Selection,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Import, OpenApiError> {
    let root = parse_text(source, text)?;
    import_within(source, &root, selection, schema::MAX_EXPANDED, cancelled)
}

/// [`import`] of an already parsed description.
pub fn import_value(
    source: &str,
    root: &Value,
    selection: &Selection,
) -> Result<Import, OpenApiError> {
    import_within(source, root, selection, schema::MAX_EXPANDED, &|| false)
}

/// [`import_value`] expanding at most `max_expanded` schema nodes (past it: a located error)
/// and stopping once `cancelled` returns true.
pub fn import_within(
    source: &str,
    root: &Value,
    selection: &Selection,
    max_expanded: usize,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Import, OpenApiError> {
    let err = |pointer: &str, message: String| OpenApiError::new(source, pointer, message);
    if !root.is_object() {
        return Err(err("", "the description is not an object".into()));
    }
    let version = match (root.get("openapi"), root.get("swagger")) {
        (Some(Value::String(v)), _) if v.starts_with("3.") => Version::OpenApi3,
        (_, Some(Value::String(v))) if v == "2.0" => Version::Swagger2,
        (Some(v), _) => {
            return Err(err(
                "/openapi",
                format!("unsupported OpenAPI version {v}: 3.0 and 3.1 are supported"),
            ))
        }
        (_, Some(v)) => {
            return Err(err(
                "/swagger",
                format!("unsupported Swagger version {v}: only 2.0 is supported"),
            ))
        }
        _ => {
            return Err(err(
                "",
                "neither `openapi` nor `swagger` says which version this is; is it an OpenAPI description?".into(),
            ))
        }
    };
    let doc = Doc::new(root, source, max_expanded, cancelled);
    let title = root
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let prefix = secret_prefix(&title);
    let paths = match root.get("paths") {
        Some(Value::Object(p)) => p,
        None => &serde_json::Map::new(),
        Some(_) => return Err(err("/paths", "`paths` must be an object".into())),
    };
    // Every operation, named in document order.
    let mut ops = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    for (path, item) in paths {
        let item_pointer = format!("/paths/{}", escape(path));
        let (item, item_pointer) = match doc.resolve(item, &item_pointer) {
            Ok(r) => r,
            Err(RefError::Broken(e)) => return Err(e),
            Err(RefError::External(_)) => continue,
        };
        let Some(map) = item.as_object() else {
            return Err(err(&item_pointer, "a path item must be an object".into()));
        };
        for method in METHODS {
            let Some(op) = map.get(method) else { continue };
            let pointer = format!("{item_pointer}/{method}");
            if !op.is_object() {
                return Err(err(&pointer, "an operation must be an object".into()));
            }
            let id = op
                .get("operationId")
                .and_then(Value::as_str)
                .map(String::from);
            let base = match &id {
                Some(id) => sanitize(id),
                None => String::new(),
            };
            let base = if base.is_empty() {
                sanitize(&format!("{method}_{path}"))
            } else {
                base
            };
            let mut name = base.clone();
            let mut k = 1;
            while !used.insert(name.clone()) {
                k += 1;
                name = format!("{base}_{k}");
            }
            ops.push(Op {
                method,
                path,
                pointer,
                item,
                item_pointer: item_pointer.clone(),
                op,
                id,
                name,
            });
        }
    }
    let mut out = Import {
        title: title.clone(),
        total: ops.len(),
        ..Import::default()
    };
    for wanted in &selection.operations {
        if !ops
            .iter()
            .any(|o| o.id.as_deref() == Some(wanted.as_str()) || &o.name == wanted)
        {
            out.skipped.push(Skipped {
                operation: wanted.clone(),
                reason: "no operation with this id in the description".into(),
            });
        }
    }
    let ctx = Ctx {
        doc: &doc,
        version,
        prefix: &prefix,
    };
    let mut written = 0usize;
    for op in ops.iter().filter(|o| chosen(o, selection)) {
        let generated = ctx.generate(op);
        doc.check_cancelled(&op.pointer);
        if let Some(e) = doc.exhausted() {
            return Err(e);
        }
        match generated {
            Ok(tool) => {
                written += tool.text.len();
                if written > MAX_OUTPUT_BYTES {
                    return Err(err(
                        &op.pointer,
                        format!(
                            "the generated tools pass {} MB here; import fewer operations (by tag or id)",
                            MAX_OUTPUT_BYTES / (1024 * 1024)
                        ),
                    ));
                }
                out.tools.push(tool)
            }
            Err(Fail::Skip(reason)) => out.skipped.push(Skipped {
                operation: op.label(),
                reason,
            }),
            Err(Fail::Broken(e)) => return Err(e),
        }
    }
    out.expanded = doc.expanded();
    Ok(out)
}

fn chosen(op: &Op, selection: &Selection) -> bool {
    let by_id = selection.operations.is_empty()
        || selection
            .operations
            .iter()
            .any(|w| op.id.as_deref() == Some(w.as_str()) || &op.name == w);
    let by_tag = selection.tag.as_ref().is_none_or(|t| {
        op.op
            .get("tags")
            .and_then(Value::as_array)
            .is_some_and(|tags| tags.iter().any(|x| x.as_str() == Some(t.as_str())))
    });
    let by_search = selection.search.as_ref().is_none_or(|s| {
        let s = s.to_lowercase();
        let summary = op.op.get("summary").and_then(Value::as_str).unwrap_or("");
        [op.id.as_deref().unwrap_or(""), op.path, summary, &op.name]
            .iter()
            .any(|x| x.to_lowercase().contains(&s))
    });
    by_id && by_tag && by_search
}

/// An operationId or `method_path` as a tool name: letters, digits, `_`, `-`, `.`; other runs
/// become one `_`; no leading `_`/`.`/`-` (a leading `_` would disable the file).
pub fn sanitize(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '.') {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches(|c| matches!(c, '_' | '.' | '-'))
        .to_string()
}

/// The secret-name prefix for an API: the first significant word of its title, upper case.
pub fn secret_prefix(title: &str) -> String {
    const NOISE: [&str; 10] = [
        "the", "api", "apis", "rest", "openapi", "swagger", "http", "service", "v1", "v2",
    ];
    let word = title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .find(|w| {
            let l = w.to_ascii_lowercase();
            let version = l.starts_with('v') && l[1..].chars().all(|c| c.is_ascii_digit());
            let number = l.starts_with(|c: char| c.is_ascii_digit());
            !(NOISE.contains(&l.as_str()) || version || number)
        })
        .unwrap_or("API");
    let prefix = word.to_ascii_uppercase();
    if crate::util::names::is_valid_secret_name(&prefix) {
        prefix
    } else {
        "API".into()
    }
}

enum Fail {
    Skip(String),
    Broken(OpenApiError),
}

impl From<RefError> for Fail {
    fn from(e: RefError) -> Self {
        match e {
            RefError::External(why) => Fail::Skip(why),
            RefError::Broken(e) => Fail::Broken(e),
        }
    }
}

struct Ctx<'a> {
    doc: &'a Doc<'a>,
    version: Version,
    prefix: &'a str,
}

/// One parameter of a tool file, as written.
#[derive(Serialize)]
struct OutParam {
    name: String,
    #[serde(rename = "type")]
    kind: ParamType,
    #[serde(rename = "in")]
    location: ParamIn,
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    default: Option<Value>,
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    enum_values: Option<Vec<String>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    json: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    multi_segment: bool,
}

/// The frontmatter of a tool file, as written.
#[derive(Serialize)]
struct OutTool {
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    method: String,
    endpoint: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_extract: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parameters: Vec<OutParam>,
}

fn text_of(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or("").trim().to_string()
}

impl<'a> Ctx<'a> {
    fn generate(&self, op: &Op<'a>) -> Result<GeneratedTool, Fail> {
        let method = op.method.to_ascii_uppercase();
        if method == "TRACE" {
            return Err(Fail::Skip("HTTP tools cannot send TRACE requests".into()));
        }
        let mut notes = Vec::new();
        let mut params: Vec<OutParam> = Vec::new();
        // Path-item parameters, overridden by the operation's (same name and `in`).
        let mut declared: Vec<(&Value, String)> = Vec::new();
        for (owner, ptr) in [(op.item, &op.item_pointer), (op.op, &op.pointer)] {
            if let Some(list) = owner.get("parameters") {
                let Some(list) = list.as_array() else {
                    return Err(Fail::Broken(OpenApiError::new(
                        self.doc.source,
                        &format!("{ptr}/parameters"),
                        "`parameters` must be a list".into(),
                    )));
                };
                for (i, p) in list.iter().enumerate() {
                    let (p, at) = self.doc.resolve(p, &format!("{ptr}/parameters/{i}"))?;
                    let key = |v: &Value| (text_of(v.get("name")), text_of(v.get("in")));
                    declared.retain(|(q, _)| key(q) != key(p));
                    declared.push((p, at));
                }
            }
        }
        let mut body_schema: Option<(&Value, String, bool)> = None;
        for (p, at) in &declared {
            let name = text_of(p.get("name"));
            let location = text_of(p.get("in"));
            if name.is_empty() || location.is_empty() {
                return Err(Fail::Broken(OpenApiError::new(
                    self.doc.source,
                    at,
                    "a parameter needs a `name` and an `in`".into(),
                )));
            }
            let required =
                p.get("required").and_then(Value::as_bool).unwrap_or(false) || location == "path";
            let location = match location.as_str() {
                "path" => ParamIn::Path,
                "query" => ParamIn::Query,
                "header" => ParamIn::Header,
                "body" if self.version == Version::Swagger2 => {
                    let schema = p.get("schema").ok_or_else(|| {
                        Fail::Broken(OpenApiError::new(
                            self.doc.source,
                            at,
                            "a body parameter needs a `schema`".into(),
                        ))
                    })?;
                    body_schema = Some((schema, format!("{at}/schema"), required));
                    continue;
                }
                "formData" => {
                    return Err(Fail::Skip(format!(
                        "parameter `{name}` is form data; HTTP tools send JSON bodies only"
                    )))
                }
                "cookie" if !required => {
                    notes.push(format!("The optional cookie `{name}` is not sent."));
                    continue;
                }
                "cookie" => {
                    return Err(Fail::Skip(format!(
                        "it needs the cookie `{name}`; HTTP tools cannot send cookies"
                    )))
                }
                other => {
                    return Err(Fail::Broken(OpenApiError::new(
                        self.doc.source,
                        &format!("{at}/in"),
                        format!("unknown parameter location `{other}`"),
                    )))
                }
            };
            // 3.x: `schema`; 2.0: the type is on the parameter itself.
            let (schema, _) = match p.get("schema") {
                Some(s) => self.doc.resolve(s, &format!("{at}/schema"))?,
                None if p.get("content").is_some() => {
                    if required {
                        return Err(Fail::Skip(format!(
                            "parameter `{name}` is serialised as content, which HTTP tools cannot do"
                        )));
                    }
                    notes.push(format!("The optional parameter `{name}` is not offered."));
                    continue;
                }
                None => (*p, at.clone()),
            };
            let kind = match self.doc.kind(schema) {
                Kind::Scalar(k) => k,
                Kind::Json | Kind::Binary if !required => {
                    notes.push(format!(
                        "The optional {} parameter `{name}` (an array or object) is not offered.",
                        location.as_str()
                    ));
                    continue;
                }
                Kind::Json | Kind::Binary => {
                    return Err(Fail::Skip(format!(
                        "the required {} parameter `{name}` is an array or object, which HTTP tools send only in a JSON body",
                        location.as_str()
                    )))
                }
            };
            let description = first_text(&[p.get("description"), schema.get("description")]);
            let mut param = self.param(name, kind, location, description, required, schema, p);
            param.multi_segment = location == ParamIn::Path
                && p.get("x-multi-segment").and_then(Value::as_bool) == Some(true);
            params.push(param);
        }
        // 3.x request body.
        if self.version == Version::OpenApi3 {
            if let Some(rb) = op.op.get("requestBody") {
                let (rb, rb_at) = self
                    .doc
                    .resolve(rb, &format!("{}/requestBody", op.pointer))?;
                let required = rb.get("required").and_then(Value::as_bool).unwrap_or(false);
                let content = rb.get("content").and_then(Value::as_object);
                let json = content.and_then(|c| {
                    c.iter().find(|(k, _)| {
                        let k = k.split(';').next().unwrap_or("").trim();
                        k == "application/json" || k.ends_with("+json") || k.ends_with("/json")
                    })
                });
                match json {
                    Some((media, m)) => match m.get("schema") {
                        Some(s) => {
                            body_schema = Some((
                                s,
                                format!("{rb_at}/content/{}/schema", escape(media)),
                                required,
                            ))
                        }
                        None if required => {
                            return Err(Fail::Skip("the request body has no schema".into()))
                        }
                        None => {}
                    },
                    None if required => {
                        let types: Vec<&str> = content
                            .map(|c| c.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        return Err(Fail::Skip(format!(
                            "the request body is {}, not JSON",
                            if types.is_empty() {
                                "not described".to_string()
                            } else {
                                types.join(" or ")
                            }
                        )));
                    }
                    None => notes.push("The optional request body is not sent.".into()),
                }
            }
        }
        if let Some((schema, at, body_required)) = body_schema {
            if matches!(method.as_str(), "GET" | "HEAD") {
                return Err(Fail::Skip(format!(
                    "a {method} request with a body cannot be sent"
                )));
            }
            let Some(shape) = self.doc.object_shape(schema, &at, 0)? else {
                if body_required {
                    return Err(Fail::Skip(
                        "the request body is not a JSON object with declared properties".into(),
                    ));
                }
                notes.push("The optional request body is not sent.".into());
                return self.finish(op, method, params, notes);
            };
            let outer: Vec<String> = schema
                .get("$ref")
                .and_then(Value::as_str)
                .map(String::from)
                .into_iter()
                .collect();
            for (name, prop, prop_at) in &shape.properties {
                let (resolved, _) = self.doc.resolve(prop, prop_at)?;
                if resolved.get("readOnly").and_then(Value::as_bool) == Some(true) {
                    continue;
                }
                let required = body_required && shape.required.contains(name);
                let description = text_of(resolved.get("description"));
                match self.doc.kind(resolved) {
                    Kind::Scalar(k) => params.push(self.param(
                        name.clone(),
                        k,
                        ParamIn::Body,
                        description,
                        required,
                        resolved,
                        resolved,
                    )),
                    Kind::Binary if required => {
                        return Err(Fail::Skip(format!(
                            "the body property `{name}` is binary data"
                        )))
                    }
                    Kind::Binary => {
                        notes.push(format!("The optional binary `{name}` is not sent."));
                    }
                    Kind::Json => {
                        let shape = self.doc.summary(prop, prop_at, &outer, &mut notes);
                        let description = if description.is_empty() {
                            format!("JSON: {shape}")
                        } else {
                            format!("{description} (JSON: {shape})")
                        };
                        let mut param = self.param(
                            name.clone(),
                            ParamType::String,
                            ParamIn::Body,
                            description,
                            required,
                            resolved,
                            resolved,
                        );
                        param.json = true;
                        param.enum_values = None;
                        param.default = resolved.get("default").map(|d| d.to_string().into());
                        params.push(param);
                    }
                }
            }
        }
        self.finish(op, method, params, notes)
    }

    #[allow(clippy::too_many_arguments)]
    fn param(
        &self,
        name: String,
        kind: ParamType,
        location: ParamIn,
        description: String,
        required: bool,
        schema: &Value,
        param: &Value,
    ) -> OutParam {
        let enum_of = |v: &Value| -> Option<Vec<String>> {
            let values: Vec<String> = v
                .get("enum")?
                .as_array()?
                .iter()
                .filter(|x| !x.is_null())
                .map(crate::tools::pipeline::value_text)
                .collect();
            (!values.is_empty()).then_some(values)
        };
        let enum_values = enum_of(schema).or_else(|| enum_of(param));
        let default = schema
            .get("default")
            .or_else(|| param.get("default"))
            .filter(|d| !d.is_null())
            .filter(|d| {
                let text = crate::tools::pipeline::value_text(d);
                let ok_type = match kind {
                    ParamType::String => d.is_string(),
                    ParamType::Integer => d.is_i64() || d.is_u64(),
                    ParamType::Number => d.is_number(),
                    ParamType::Boolean => d.is_boolean(),
                };
                ok_type && enum_values.as_ref().is_none_or(|e| e.contains(&text))
            })
            .cloned();
        OutParam {
            name,
            kind,
            location,
            description: one_line(&description),
            required: required && default.is_none(),
            default,
            enum_values,
            json: false,
            multi_segment: false,
        }
    }

    fn finish(
        &self,
        op: &Op<'a>,
        method: String,
        params: Vec<OutParam>,
        mut notes: Vec<String>,
    ) -> Result<GeneratedTool, Fail> {
        let mut seen: HashMap<&str, ParamIn> = HashMap::new();
        for p in &params {
            if let Some(first) = seen.insert(p.name.as_str(), p.location) {
                return Err(Fail::Skip(format!(
                    "two parameters are called `{}` ({} and {}), and a tool's parameter names are unique",
                    p.name,
                    first.as_str(),
                    p.location.as_str()
                )));
            }
            if p.name
                .contains(|c: char| c.is_whitespace() || c == '<' || c == '>')
            {
                return Err(Fail::Skip(format!(
                    "the parameter name `{}` cannot be written as a tool parameter",
                    p.name
                )));
            }
        }
        if !op.path.starts_with('/') {
            return Err(Fail::Skip(format!(
                "the path `{}` does not start with `/`",
                op.path
            )));
        }
        let (base, base_note) = self.server(op)?;
        if let Some(n) = base_note {
            notes.push(n);
        }
        let path = escape_templates(op.path);
        let mut endpoint = format!("{}{path}", base.trim_end_matches('/'));
        // The host comes from the chosen server alone, never from the path.
        if let Ok(server) = reqwest::Url::parse(&base) {
            let same = reqwest::Url::parse(&endpoint).is_ok_and(|e| {
                (e.scheme(), e.host_str(), e.port())
                    == (server.scheme(), server.host_str(), server.port())
            });
            if !same {
                return Err(Fail::Skip(format!(
                    "the path `{}` would change the server's host",
                    op.path
                )));
            }
        }
        let mut headers = BTreeMap::new();
        if let Some(auth) = self.security(op)? {
            for (place, key, value, _secret, note) in auth {
                match place {
                    ParamIn::Header => {
                        headers.insert(key, value);
                    }
                    _ => {
                        let sep = if endpoint.contains('?') { '&' } else { '?' };
                        endpoint = format!(
                            "{endpoint}{sep}{}={value}",
                            crate::util::url::encode_component(&key)
                        );
                    }
                }
                notes.push(note);
            }
        }
        let summary = one_line(&text_of(op.op.get("summary")));
        let long = text_of(op.op.get("description"));
        let mut body = String::new();
        if !long.is_empty() && long != summary {
            body.push_str(&long);
            body.push('\n');
        }
        if op.op.get("deprecated").and_then(Value::as_bool) == Some(true) {
            notes.insert(0, "This operation is deprecated.".into());
        }
        if !notes.is_empty() {
            if !body.is_empty() {
                body.push('\n');
            }
            for n in &notes {
                body.push_str(&format!("Note: {n}\n"));
            }
        }
        let (description, body) = if summary.is_empty() && body.is_empty() {
            (format!("{} {}", method, path), body)
        } else {
            (summary, body)
        };
        let out = OutTool {
            name: op.name.clone(),
            description,
            method: method.clone(),
            endpoint,
            headers,
            response_extract: self.response_extract(op),
            parameters: params,
        };
        let yaml_text = yaml::to_string(&out)
            .map_err(|e| Fail::Skip(format!("cannot write the tool file: {}", e.message)))?;
        let text = format!(
            "---\n# Imported from {}: {} {} (JSON pointer {})\n{yaml_text}---\n{}{body}",
            escape_templates(&self.doc.source.replace('\n', " ")),
            method,
            path,
            escape_templates(&op.pointer),
            if body.is_empty() { "" } else { "\n" },
        );
        let file_name = format!("{}.md", op.name);
        let def = crate::tools::http::parse_definition(Path::new(&file_name), &text)
            .map_err(|e| Fail::Skip(format!("the generated tool does not load: {}", e.message)))?;
        // Every template the tool will fill, read back from what loads (endpoint and headers).
        let mut secrets: Vec<String> = std::iter::once(&def.endpoint)
            .chain(def.headers.values())
            .flat_map(|t| crate::secrets::template_names(t))
            .collect();
        secrets.sort();
        secrets.dedup();
        Ok(GeneratedTool {
            name: op.name.clone(),
            file_name,
            text,
            operation: format!("{method} {}", path),
            secrets,
            tags: op
                .op
                .get("tags")
                .and_then(Value::as_array)
                .map(|tags| {
                    tags.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            summary: one_line(&text_of(op.op.get("summary"))),
        })
    }

    /// The base URL of an operation, and a note when it is a secret placeholder.
    fn server(&self, op: &Op<'a>) -> Result<(String, Option<String>), Fail> {
        let found = match self.version {
            Version::OpenApi3 => [op.op, op.item, self.doc.root]
                .iter()
                .find_map(|v| v.get("servers")?.as_array()?.first())
                .map(|s| {
                    let mut url = text_of(s.get("url"));
                    if let Some(Value::Object(vars)) = s.get("variables") {
                        for (k, v) in vars {
                            let value = v
                                .get("default")
                                .map(crate::tools::pipeline::value_text)
                                .unwrap_or_default();
                            url = url.replace(&format!("{{{k}}}"), &value);
                        }
                    }
                    url
                }),
            Version::Swagger2 => {
                let root = self.doc.root;
                let base_path = text_of(root.get("basePath"));
                root.get("host")
                    .and_then(Value::as_str)
                    .map(|host| {
                        let schemes: Vec<&str> = root
                            .get("schemes")
                            .and_then(Value::as_array)
                            .map(|s| s.iter().filter_map(Value::as_str).collect())
                            .unwrap_or_default();
                        let scheme = if schemes.is_empty() || schemes.contains(&"https") {
                            "https"
                        } else {
                            schemes[0]
                        };
                        format!("{scheme}://{host}{base_path}")
                    })
                    .or_else(|| (!base_path.is_empty()).then_some(base_path))
            }
        };
        // The description's text is data: a `{{NAME}}` in it must never be filled.
        let url = escape_templates(&found.unwrap_or_default());
        if url.contains(['?', '#']) {
            return Err(Fail::Skip(format!(
                "the server URL `{url}` has a query or fragment, so the path would not follow it"
            )));
        }
        if url.starts_with("http://") || url.starts_with("https://") {
            return Ok((url, None));
        }
        if self.doc.source.starts_with("http://") || self.doc.source.starts_with("https://") {
            if let Ok(joined) = reqwest::Url::parse(self.doc.source).and_then(|b| b.join(&url)) {
                return Ok((joined.to_string(), None));
            }
        }
        let secret = format!("{}_BASE_URL", self.prefix);
        Ok((
            format!("{{{{{secret}}}}}{}", url.trim_end_matches('/')),
            Some(format!(
                "The description gives no absolute server URL: set the secret {secret} to it (e.g. https://api.example.com)."
            )),
        ))
    }

    /// Headers or query parameters for the security requirement, from the first alternative
    /// that can be expressed; `None` when the operation needs none.
    #[allow(clippy::type_complexity)]
    fn security(
        &self,
        op: &Op<'a>,
    ) -> Result<Option<Vec<(ParamIn, String, String, String, String)>>, Fail> {
        let Some(Value::Array(alternatives)) = op
            .op
            .get("security")
            .or_else(|| self.doc.root.get("security"))
        else {
            return Ok(None);
        };
        if alternatives.is_empty()
            || alternatives
                .iter()
                .any(|a| a.as_object().is_some_and(|m| m.is_empty()))
        {
            return Ok(None);
        }
        let schemes_at = match self.version {
            Version::OpenApi3 => "/components/securitySchemes",
            Version::Swagger2 => "/securityDefinitions",
        };
        let mut reasons = Vec::new();
        let api_keys = self
            .doc
            .root
            .pointer(schemes_at)
            .and_then(Value::as_object)
            .map_or(0, |m| {
                m.values()
                    .filter(|s| s.get("type").and_then(Value::as_str) == Some("apiKey"))
                    .count()
            });
        'alt: for alt in alternatives {
            let Some(alt) = alt.as_object() else { continue };
            let mut out = Vec::new();
            for scheme_name in alt.keys() {
                let at = format!("{schemes_at}/{}", escape(scheme_name));
                let Some(scheme) = self.doc.root.pointer(&at) else {
                    return Err(Fail::Broken(OpenApiError::new(
                        self.doc.source,
                        &op.pointer,
                        format!("the security scheme `{scheme_name}` is not defined at {at}"),
                    )));
                };
                let (scheme, _) = self.doc.resolve(scheme, &at)?;
                let kind = text_of(scheme.get("type"));
                let http_scheme = text_of(scheme.get("scheme")).to_ascii_lowercase();
                let p = self.prefix;
                match (kind.as_str(), http_scheme.as_str()) {
                    ("http", "bearer") | ("oauth2", _) | ("openIdConnect", _) => {
                        let secret = format!("{p}_TOKEN");
                        out.push((
                            ParamIn::Header,
                            "Authorization".into(),
                            format!("Bearer {{{{{secret}}}}}"),
                            secret.clone(),
                            format!("Authentication ({scheme_name}): set the secret {secret} to the access token."),
                        ));
                    }
                    ("http", "basic") | ("basic", _) => {
                        let secret = format!("{p}_BASIC_AUTH");
                        out.push((
                            ParamIn::Header,
                            "Authorization".into(),
                            format!("Basic {{{{{secret}}}}}"),
                            secret.clone(),
                            format!("Authentication ({scheme_name}): set the secret {secret} to base64 of user:password."),
                        ));
                    }
                    ("apiKey", _) => {
                        let place = text_of(scheme.get("in"));
                        let key = text_of(scheme.get("name"));
                        let secret = if api_keys > 1 {
                            let s = sanitize(scheme_name)
                                .replace(['-', '.'], "_")
                                .to_ascii_uppercase();
                            format!("{p}_{s}")
                        } else {
                            format!("{p}_API_KEY")
                        };
                        let place = match place.as_str() {
                            "header" => ParamIn::Header,
                            "query" => ParamIn::Query,
                            other => {
                                reasons
                                    .push(format!("the API key `{scheme_name}` goes in a {other}"));
                                continue 'alt;
                            }
                        };
                        if key.is_empty() || !crate::util::names::is_valid_secret_name(&secret) {
                            reasons.push(format!("the API key `{scheme_name}` has no usable name"));
                            continue 'alt;
                        }
                        out.push((
                            place,
                            key,
                            format!("{{{{{secret}}}}}"),
                            secret.clone(),
                            format!("Authentication ({scheme_name}): set the secret {secret} to the API key."),
                        ));
                    }
                    _ => {
                        reasons.push(format!(
                            "the security scheme `{scheme_name}` ({kind} {http_scheme}) is not supported"
                        ));
                        continue 'alt;
                    }
                }
            }
            return Ok(Some(out));
        }
        Err(Fail::Skip(reasons.join("; ")))
    }

    /// `$.data` and the like when the success response is an object with that one property.
    fn response_extract(&self, op: &Op<'a>) -> Option<String> {
        let responses = op.op.get("responses")?.as_object()?;
        let (code, response) = responses
            .iter()
            .find(|(k, _)| k.as_str() == "200" || k.as_str() == "201")?;
        let at = format!("{}/responses/{code}", op.pointer);
        let (response, at) = self.doc.resolve(response, &at).ok()?;
        let schema = match self.version {
            Version::Swagger2 => response.get("schema")?,
            Version::OpenApi3 => response
                .get("content")?
                .as_object()?
                .iter()
                .find(|(k, _)| k.contains("json"))?
                .1
                .get("schema")?,
        };
        let shape = self.doc.object_shape(schema, &at, 0).ok()??;
        match shape.properties.as_slice() {
            [(name, _, _)] if ["data", "result", "results", "items"].contains(&name.as_str()) => {
                Some(format!("$.{name}"))
            }
            _ => None,
        }
    }
}

fn first_text(values: &[Option<&Value>]) -> String {
    values
        .iter()
        .map(|v| text_of(*v))
        .find(|t| !t.is_empty())
        .unwrap_or_default()
}

/// `text` from a description with its `{{`, `}}`, `<<` and `>>` percent-encoded, so that it
/// holds no secret template (it goes in an endpoint, where templates are filled).
pub fn escape_templates(text: &str) -> String {
    text.replace("{{", "%7B%7B")
        .replace("}}", "%7D%7D")
        .replace("<<", "%3C%3C")
        .replace(">>", "%3E%3E")
}

/// Whitespace runs made single spaces (parameter descriptions are one line).
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
