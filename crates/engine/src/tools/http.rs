//! Declarative HTTP tools: `config/tools/*.md` files with YAML frontmatter (seed 001, path A).
//!
//! ```yaml
//! name: query_stock_price          # required; a valid tool name
//! description: "…"                 # default ""; the Markdown body is appended to it
//! type: http                       # default http; the only type
//! permission: confirm              # auto | confirm, default confirm
//! endpoint: "https://…/{{HOST}}/repos/{owner}"  # required; {{VAR}} / <<VAR>> filled from
//!                                  # keyring → env → .env; {name} filled by a path parameter
//! method: POST                     # default GET; POST/PUT/PATCH send params as a JSON body,
//!                                  # the others as a query string
//! headers: {Authorization: "Bearer {{KEY}}"}   # default {}
//! timeout: 30                      # seconds, default 30
//! response_extract: "$.data.price" # optional RFC 9535 JSONPath
//! parameters: [{name, type, description, required (default true), default, enum, in, json,
//!              multi_segment}]
//! ```
//!
//! A parameter's `in` says where it travels: `path` fills the `{name}` placeholder of the
//! endpoint (single braces, percent-encoded as one path segment; `{{NAME}}` stays a secret),
//! `query` goes in the query string (even for POST), `header` becomes a request header, `body`
//! a property of the JSON body. Without `in`, a parameter goes in the body for POST/PUT/PATCH
//! and in the query string otherwise, as before `in` existed. A body parameter with
//! `json: true` is declared as a `string` whose value is JSON text (an object, an array…),
//! parsed before sending and put in the body as that JSON value. Every `{name}` of the
//! endpoint needs a path parameter and every path parameter a `{name}`.
//!
//! A path parameter's value stays one segment: `/` is percent-encoded, and a value `.` or `..`
//! is refused (URL parsing would resolve it and reach another endpoint). A path parameter with
//! `multi_segment: true` may hold `/` (`contents/{path}`); each of its segments is encoded and
//! a `.` or `..` segment is refused. `$url` and `$host` in permission rules are taken from the
//! URL as parsed, which is exactly what is sent.
//!
//! Loading never fails as a whole: a broken file becomes a [`ConfigError`] naming the file, the
//! line and the field, and the other files still load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use serde_json_path::JsonPath;

use super::pipeline::value_text;
use super::{Params, Permission, Tool, ToolContext, ToolResult, ToolSource, ToolSpec};
use crate::config_error::{yaml_error, ConfigError};
use crate::net::describe_request_error;
use crate::secrets::{Redactor, SecretResolver};
use crate::tool_spec::ParamSpec;
use crate::util::fs::markdown_files;
use crate::util::url::encode_component;
use crate::{frontmatter, yaml};

/// Largest response body read from an HTTP tool's endpoint.
pub const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;
/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = crate::net::MAX_REDIRECTS;
/// Characters of an error response body shown to the model.
pub const ERROR_BODY_CHARS: usize = 500;

const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// The frontmatter of an HTTP tool file, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDef {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "default_type", rename = "type")]
    kind: String,
    #[serde(default = "default_permission")]
    permission: Permission,
    endpoint: String,
    #[serde(default = "default_method")]
    method: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default = "default_timeout")]
    timeout: u64,
    #[serde(default)]
    response_extract: Option<String>,
    #[serde(default)]
    parameters: Vec<RawParam>,
}

/// One parameter as written: a [`ParamSpec`] plus where it travels.
#[derive(Debug, Clone, Deserialize)]
struct RawParam {
    name: String,
    #[serde(rename = "type")]
    kind: crate::tool_spec::ParamType,
    #[serde(default)]
    description: String,
    #[serde(default = "yes")]
    required: bool,
    #[serde(default)]
    default: Option<Value>,
    #[serde(default, rename = "enum")]
    enum_values: Option<Vec<String>>,
    #[serde(default, rename = "in")]
    location: Option<ParamIn>,
    #[serde(default)]
    json: bool,
    #[serde(default)]
    multi_segment: bool,
}

fn yes() -> bool {
    true
}

/// Where a parameter of an HTTP tool travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamIn {
    /// Fills `{name}` in the endpoint.
    Path,
    /// In the query string.
    Query,
    /// A request header.
    Header,
    /// A property of the JSON body.
    Body,
}

impl ParamIn {
    /// The name written in a tool file.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamIn::Path => "path",
            ParamIn::Query => "query",
            ParamIn::Header => "header",
            ParamIn::Body => "body",
        }
    }
}

/// Where one parameter travels and how its value is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamRoute {
    /// Path, query, header or body (the default already applied).
    pub location: ParamIn,
    /// The value is JSON text sent as the JSON value it holds (body parameters only).
    pub json: bool,
    /// The value may span several path segments (`/` kept between them; path parameters
    /// only, like GitHub's `contents/{path}`). A `.` or `..` segment is still refused.
    pub multi_segment: bool,
}

/// The `{name}` placeholders of an endpoint (single braces; `{{NAME}}` secrets are skipped),
/// with their byte ranges, in order.
pub fn path_placeholders(endpoint: &str) -> Vec<(std::ops::Range<usize>, String)> {
    // Byte-wise: `{` and `}` are ASCII, so every cut below is on a character boundary (the
    // endpoint may hold any text, a secret's template or an IRI).
    let bytes = endpoint.as_bytes();
    let find = |from: usize, needle: &[u8]| {
        bytes[from..]
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|p| from + p)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"{{") {
            i = find(i, b"}}").map_or(bytes.len(), |e| e + 2);
            continue;
        }
        if bytes[i] == b'{' {
            if let Some(end) = find(i + 1, b"}") {
                let name = &endpoint[i + 1..end];
                if !name.is_empty() && !name.contains('{') {
                    out.push((i..end + 1, name.to_string()));
                    i = end + 1;
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

fn default_type() -> String {
    "http".into()
}
fn default_permission() -> Permission {
    Permission::Confirm
}
fn default_method() -> String {
    "GET".into()
}
fn default_timeout() -> u64 {
    30
}

/// A loaded, validated HTTP tool definition.
#[derive(Debug, Clone)]
pub struct HttpToolDef {
    /// What the model sees (description includes the Markdown body).
    pub spec: ToolSpec,
    /// Default permission.
    pub permission: Permission,
    /// URL template.
    pub endpoint: String,
    /// Upper-case HTTP method.
    pub method: String,
    /// Header templates.
    pub headers: BTreeMap<String, String>,
    /// Request timeout.
    pub timeout: Duration,
    /// The JSONPath expression as written, if any.
    pub response_extract: Option<String>,
    /// Where each parameter of `spec.params` travels, in the same order.
    pub routes: Vec<ParamRoute>,
    /// The file it came from.
    pub source: PathBuf,
}

impl HttpToolDef {
    /// Do the params travel in a JSON body (POST/PUT/PATCH) rather than the query string?
    pub fn sends_body(&self) -> bool {
        method_sends_body(&self.method)
    }

    /// Where the parameter `name` travels (`None` for a name not declared).
    pub fn route(&self, name: &str) -> Option<ParamRoute> {
        self.spec
            .params
            .iter()
            .position(|p| p.name == name)
            .and_then(|i| self.routes.get(i).copied())
    }
}

fn method_sends_body(method: &str) -> bool {
    matches!(method, "POST" | "PUT" | "PATCH")
}

/// Parse and validate one HTTP tool file's text. `path` is used for error locations only.
pub fn parse_definition(path: &Path, text: &str) -> Result<HttpToolDef, ConfigError> {
    let doc = frontmatter::split(text).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: Some(1),
        field: None,
        message: e.to_string(),
    })?;
    let first = doc.yaml_first_line;
    let raw: RawDef = yaml::from_str(doc.yaml).map_err(|e| yaml_error(path, first, e))?;
    let at = |field: &str, message: String| ConfigError {
        file: path.to_path_buf(),
        line: line_of(doc.yaml, field).map(|l| (l + first - 1) as u32),
        field: Some(field.to_string()),
        message,
    };
    if !crate::util::names::is_valid_tool_name(&raw.name) {
        return Err(at(
            "name",
            format!(
                "`{}` is not a valid tool name: use letters, digits, `_`, `-`, `.`, `:`",
                raw.name
            ),
        ));
    }
    if raw.kind != "http" {
        return Err(at(
            "type",
            format!(
                "unsupported tool type `{}`; only `http` is supported",
                raw.kind
            ),
        ));
    }
    let method = raw.method.to_ascii_uppercase();
    if !METHODS.contains(&method.as_str()) {
        return Err(at(
            "method",
            format!(
                "unknown HTTP method `{}`; use one of {}",
                raw.method,
                METHODS.join(", ")
            ),
        ));
    }
    let endpoint = raw.endpoint.trim().to_string();
    let scheme_ok = endpoint.starts_with("http://")
        || endpoint.starts_with("https://")
        || endpoint.starts_with("{{")
        || endpoint.starts_with("<<");
    if !scheme_ok {
        return Err(at(
            "endpoint",
            format!("`{endpoint}` is not a full URL: it must start with http:// or https://"),
        ));
    }
    if raw.timeout == 0 {
        return Err(at("timeout", "timeout must be at least 1 second".into()));
    }
    if let Some(expr) = &raw.response_extract {
        if let Err(e) = JsonPath::parse(expr) {
            return Err(at(
                "response_extract",
                format!("`{expr}` is not a valid JSONPath (RFC 9535): {e}"),
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut routes = Vec::with_capacity(raw.parameters.len());
    let placeholders = path_placeholders(&endpoint);
    let mut params = Vec::with_capacity(raw.parameters.len());
    for raw_param in &raw.parameters {
        let route = ParamRoute {
            location: raw_param.location.unwrap_or(if method_sends_body(&method) {
                ParamIn::Body
            } else {
                ParamIn::Query
            }),
            json: raw_param.json,
            multi_segment: raw_param.multi_segment,
        };
        routes.push(route);
        params.push(ParamSpec {
            name: raw_param.name.clone(),
            kind: raw_param.kind,
            description: raw_param.description.clone(),
            required: raw_param.required,
            default: raw_param.default.clone(),
            enum_values: raw_param.enum_values.clone(),
        });
    }
    for (_, name) in &placeholders {
        let declared = params
            .iter()
            .zip(&routes)
            .any(|(p, r)| &p.name == name && r.location == ParamIn::Path);
        if !declared {
            return Err(at(
                "endpoint",
                format!(
                    "the endpoint has `{{{name}}}` but no parameter `{name}` with `in: path` \
                     (a secret is written `{{{{{name}}}}}`)"
                ),
            ));
        }
    }
    for (i, (p, route)) in params.iter().zip(&routes).enumerate() {
        let field = format!("parameters[{i}]");
        let locate = |sub: &str, message: String| ConfigError {
            file: path.to_path_buf(),
            line: param_line(doc.yaml, i, sub).map(|l| (l + first - 1) as u32),
            field: Some(format!("{field}.{sub}")),
            message,
        };
        if p.name.trim().is_empty()
            || p.name
                .contains(|c: char| c.is_whitespace() || c == '<' || c == '>')
        {
            return Err(locate(
                "name",
                format!("`{}` is not a usable parameter name", p.name),
            ));
        }
        if !seen.insert(p.name.clone()) {
            return Err(locate(
                "name",
                format!("parameter `{}` is declared twice", p.name),
            ));
        }
        if route.location == ParamIn::Path && !placeholders.iter().any(|(_, n)| n == &p.name) {
            return Err(locate(
                "in",
                format!(
                    "path parameter `{0}` has no `{{{0}}}` placeholder in the endpoint",
                    p.name
                ),
            ));
        }
        if route.location == ParamIn::Body && matches!(method.as_str(), "GET" | "HEAD") {
            return Err(locate(
                "in",
                format!("a {method} request has no body for parameter `{}`", p.name),
            ));
        }
        if route.location == ParamIn::Header
            && reqwest::header::HeaderName::from_bytes(p.name.as_bytes()).is_err()
        {
            return Err(locate(
                "name",
                format!("`{}` is not a valid HTTP header name", p.name),
            ));
        }
        if route.json
            && (route.location != ParamIn::Body || p.kind != crate::tool_spec::ParamType::String)
        {
            return Err(locate(
                "json",
                "`json: true` is for `type: string` parameters sent in the body".into(),
            ));
        }
        if route.multi_segment && route.location != ParamIn::Path {
            return Err(locate(
                "multi_segment",
                "`multi_segment: true` is for `in: path` parameters".into(),
            ));
        }
        if let Some(values) = &p.enum_values {
            if values.is_empty() {
                return Err(locate("enum", "enum must list at least one value".into()));
            }
        }
        if let Some(default) = p.default.as_ref().filter(|d| !d.is_null()) {
            let text = value_text(default);
            let coerced = super::pipeline::coerce_value(p.kind, &text);
            let mut probe = Params::new();
            probe.insert(p.name.clone(), coerced);
            if let Err(e) = super::pipeline::validate(std::slice::from_ref(p), &probe) {
                return Err(locate(
                    "default",
                    format!(
                        "default `{text}` does not fit the parameter: {}",
                        e.trim_start_matches("invalid parameters: ")
                    ),
                ));
            }
        }
    }
    let description = match (raw.description.trim(), doc.body.trim()) {
        (d, "") => d.to_string(),
        ("", b) => b.to_string(),
        (d, b) => format!("{d}\n{b}"),
    };
    Ok(HttpToolDef {
        spec: ToolSpec {
            name: raw.name,
            description,
            input_schema: None,
            params,
        },
        permission: raw.permission,
        endpoint,
        method,
        headers: raw.headers,
        timeout: Duration::from_secs(raw.timeout),
        response_extract: raw.response_extract,
        routes,
        source: path.to_path_buf(),
    })
}

/// The 1-based line (within `yaml`) of a top-level key.
fn line_of(yaml: &str, key: &str) -> Option<usize> {
    yaml.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i + 1)
}

/// The 1-based line of field `sub` of the `index`-th item under `parameters:`.
fn param_line(yaml: &str, index: usize, sub: &str) -> Option<usize> {
    let lines: Vec<&str> = yaml.lines().collect();
    let start = line_of(yaml, "parameters")?;
    let mut item = None;
    let mut count = 0;
    for (i, line) in lines.iter().enumerate().skip(start) {
        let t = line.trim_start();
        if !line.starts_with(' ') && !line.starts_with('-') && !t.is_empty() {
            break;
        }
        if t.starts_with("- ") || t == "-" {
            if count == index {
                item = Some(i);
                break;
            }
            count += 1;
        }
    }
    let item = item?;
    for (i, line) in lines.iter().enumerate().skip(item) {
        if i > item && line.trim_start().starts_with("- ") {
            break;
        }
        let t = line.trim_start().trim_start_matches("- ").trim_start();
        if t.strip_prefix(sub)
            .is_some_and(|r| r.trim_start().starts_with(':'))
        {
            return Some(i + 1);
        }
    }
    Some(item + 1)
}

/// Load every `*.md` not starting with `_` in `dir`. Returns the tools and the located errors.
pub fn load_dir(dir: &Path) -> (Vec<HttpToolDef>, Vec<ConfigError>) {
    let mut errors = Vec::new();
    let mut defs = Vec::new();
    let files = markdown_files(dir).unwrap_or_else(|e| {
        errors.push(ConfigError::unreadable_folder(dir, e));
        Vec::new()
    });
    for path in files {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                errors.push(ConfigError {
                    file: path.clone(),
                    line: None,
                    field: None,
                    message: format!("cannot read file: {e}"),
                });
                continue;
            }
        };
        match parse_definition(&path, &text) {
            Ok(def) => defs.push(def),
            Err(e) => errors.push(e),
        }
    }
    (defs, errors)
}

/// The HTTP client tools share for requests that carry secrets (connection pool, TLS roots
/// loaded once); timeouts are set per request. Building a client costs milliseconds, so tools
/// never build their own, and it is built by the first request that needs it: loading the
/// config (at startup) sends nothing, and leaves TLS set-up for later. Its redirects never leave the request's origin (see [`crate::net`]).
pub(crate) fn shared_client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            crate::net::client_builder(crate::net::Secrets::Carried)
                .build()
                .unwrap_or_default()
        })
        .clone()
}

/// The shared client for requests with nothing secret in them: a 301/302/303 may lead to
/// another origin (still no downgrade, no `Referer`, no body replayed elsewhere).
pub(crate) fn shared_open_client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            crate::net::client_builder(crate::net::Secrets::None)
                .build()
                .unwrap_or_default()
        })
        .clone()
}

/// An HTTP tool ready to run.
pub struct HttpTool {
    def: HttpToolDef,
    extract: Option<JsonPath>,
    /// Whether its endpoint or headers name a secret (then it never follows a redirect away).
    uses_secrets: bool,
}

/// What the permission dialog shows: the request that will be sent, secrets masked.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RequestPreview {
    /// HTTP method.
    pub method: String,
    /// URL with the query string; secret templates left as `{{NAME}}`.
    pub url: String,
    /// Headers; secret templates left as `{{NAME}}`.
    pub headers: BTreeMap<String, String>,
    /// JSON body, if the method sends one.
    pub body: Option<Value>,
}

/// Characters of a response body kept in an [`HttpExchange`].
pub const TRACE_BODY_CHARS: usize = 200_000;

/// One HTTP tool call in full, for the tool editor's test panel. Secrets are masked everywhere.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HttpExchange {
    /// The request as sent, with secret templates shown by name.
    pub method: String,
    /// URL with the query string.
    pub url: String,
    /// Request headers.
    pub request_headers: BTreeMap<String, String>,
    /// JSON body, if the method sends one.
    pub request_body: Option<String>,
    /// HTTP status, when a response came back.
    pub status: Option<u16>,
    /// Response headers, in order.
    pub response_headers: Vec<(String, String)>,
    /// The raw response body (the first [`TRACE_BODY_CHARS`] characters).
    pub response_body: String,
    /// The body was longer than what is kept.
    pub response_truncated: bool,
    /// Milliseconds from sending to the whole body.
    pub elapsed_ms: u32,
    /// The `response_extract` expression, if any.
    pub response_extract: Option<String>,
}

impl HttpTool {
    /// Build a runnable tool from a definition.
    pub fn new(def: HttpToolDef) -> Self {
        let extract = def
            .response_extract
            .as_deref()
            .and_then(|e| JsonPath::parse(e).ok());
        // A tool whose endpoint or headers name a secret must never follow a redirect away.
        let uses_secrets = std::iter::once(&def.endpoint)
            .chain(def.headers.values())
            .any(|t| !crate::secrets::template_names(t).is_empty());
        HttpTool {
            def,
            extract,
            uses_secrets,
        }
    }

    /// The definition.
    pub fn definition(&self) -> &HttpToolDef {
        &self.def
    }

    /// The request that `params` would send, with secrets masked (templates shown by name).
    pub fn preview(&self, params: &Params) -> RequestPreview {
        let built = self.build(&self.def.endpoint, params);
        let mut headers = self.def.headers.clone();
        headers.extend(built.headers);
        RequestPreview {
            method: self.def.method.clone(),
            url: built.url,
            headers,
            body: built.body,
        }
    }

    /// The URL (path parameters filled, query parameters appended), the JSON body and the
    /// header parameters that `params` make with `endpoint`.
    fn build(&self, endpoint: &str, params: &Params) -> Built {
        let default = if self.def.sends_body() {
            ParamIn::Body
        } else {
            ParamIn::Query
        };
        let route = |name: &str| {
            self.def.route(name).unwrap_or(ParamRoute {
                location: default,
                json: false,
                multi_segment: false,
            })
        };
        let mut errors = Vec::new();
        let mut url = endpoint.to_string();
        for (range, name) in path_placeholders(endpoint).into_iter().rev() {
            let route = route(&name);
            if route.location != ParamIn::Path {
                continue;
            }
            let value = params.get(&name).map(value_text).unwrap_or_default();
            match path_value(&value, route.multi_segment) {
                Ok(encoded) => url.replace_range(range, &encoded),
                Err(why) => errors.push(format!("path parameter `{name}` {why}")),
            }
        }
        let mut query = Vec::new();
        let mut body = serde_json::Map::new();
        let mut headers = BTreeMap::new();
        for (name, value) in params {
            let route = route(name);
            match route.location {
                ParamIn::Path => {}
                ParamIn::Query => query.push(format!(
                    "{}={}",
                    encode_component(name),
                    encode_component(&value_text(value))
                )),
                ParamIn::Header => {
                    headers.insert(name.clone(), value_text(value));
                }
                ParamIn::Body if route.json => {
                    let text = value_text(value);
                    match serde_json::from_str::<Value>(&text) {
                        Ok(parsed) => {
                            body.insert(name.clone(), parsed);
                        }
                        Err(e) => {
                            errors.push(format!("parameter `{name}` must be JSON text: {e}"));
                            body.insert(name.clone(), value.clone());
                        }
                    }
                }
                ParamIn::Body => {
                    body.insert(name.clone(), value.clone());
                }
            }
        }
        if !query.is_empty() {
            let sep = if url.contains('?') { '&' } else { '?' };
            url = format!("{url}{sep}{}", query.join("&"));
        }
        let has_body =
            self.def.sends_body() || self.def.routes.iter().any(|r| r.location == ParamIn::Body);
        Built {
            url,
            body: has_body.then_some(Value::Object(body)),
            headers,
            errors,
        }
    }

    async fn fill(&self, ctx: &ToolContext) -> (String, BTreeMap<String, String>, Redactor) {
        let mut templates = vec![self.def.endpoint.clone()];
        templates.extend(self.def.headers.values().cloned());
        let filled = match &ctx.secrets {
            Some(resolver) => resolver.fill_async(templates).await,
            None => {
                Arc::new(SecretResolver::new(None, None))
                    .fill_async(templates)
                    .await
            }
        };
        let redactor = Redactor::new(filled.iter().flat_map(|f| f.values.clone()));
        let mut iter = filled.into_iter().map(|f| f.text);
        let endpoint = iter.next().unwrap_or_default();
        let headers = self.def.headers.keys().cloned().zip(iter).collect();
        (endpoint, headers, redactor)
    }
}

/// A path parameter's value as it goes in the URL: percent-encoded so that it stays one
/// segment (`/` encoded too), or, for a multi-segment parameter, each `/`-separated segment
/// encoded. A `.` or `..` segment is refused: URL parsing resolves it (`%2E%2E` too), so it
/// would send the request to another endpoint.
fn path_value(value: &str, multi_segment: bool) -> Result<String, String> {
    let dots = |segment: &str| matches!(segment, "." | "..");
    if multi_segment {
        if value.split('/').any(dots) {
            return Err(format!(
                "`{value}` has a `.` or `..` segment, which would lead to another path"
            ));
        }
        Ok(value
            .split('/')
            .map(encode_component)
            .collect::<Vec<_>>()
            .join("/"))
    } else if dots(value) {
        Err(format!(
            "cannot be `{value}`: it would lead to another path, not one segment"
        ))
    } else {
        Ok(encode_component(value))
    }
}

/// A request built from a call's parameters.
struct Built {
    url: String,
    body: Option<Value>,
    /// Header parameters.
    headers: BTreeMap<String, String>,
    /// Parameters that could not be sent as declared (JSON text that does not parse).
    errors: Vec<String>,
}

/// Where a call will go, beside the templated URL of the permission dialog: a template such as
/// `{{API_BASE}}/x` hides the host, so the dialog also shows the filled endpoint's origin.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Destination {
    /// `scheme://host:port` of the endpoint with its secrets filled in; never its path, query
    /// or user info (a secret may carry them). None when it cannot be known.
    pub destination: Option<String>,
    /// Why the destination is unknown (e.g. a secret is not set).
    pub destination_error: Option<String>,
    /// Names of the secrets the call uses (endpoint and headers), sorted.
    pub secrets: Vec<String>,
}

impl HttpTool {
    /// Resolve where this tool's requests go, for the permission dialog.
    pub async fn destination(&self, ctx: &ToolContext) -> Destination {
        let mut secrets: Vec<String> = std::iter::once(&self.def.endpoint)
            .chain(self.def.headers.values())
            .flat_map(|t| crate::secrets::template_names(t))
            .collect();
        secrets.sort();
        secrets.dedup();
        let resolver = ctx
            .secrets
            .clone()
            .unwrap_or_else(|| Arc::new(SecretResolver::new(None, None)));
        let filled = resolver
            .fill_async(vec![self.def.endpoint.clone()])
            .await
            .pop()
            .unwrap_or_default();
        let (destination, destination_error) = match origin_of(&filled) {
            Ok(origin) => (Some(origin), None),
            Err(why) => (None, Some(format!("destination unknown: {why}"))),
        };
        Destination {
            destination,
            destination_error,
            secrets,
        }
    }
}

/// `scheme://host:port` of a filled endpoint, or why it cannot be told.
fn origin_of(filled: &crate::secrets::Filled) -> Result<String, String> {
    match filled.unresolved.as_slice() {
        [] => {}
        [one] => {
            return Err(format!(
                "secret {one} is not set (add it in Settings → Secrets)"
            ))
        }
        many => {
            return Err(format!(
                "secrets {} are not set (add them in Settings → Secrets)",
                many.join(", ")
            ))
        }
    }
    let url = reqwest::Url::parse(&filled.text).map_err(|_| {
        "the endpoint is not a complete URL once its secrets are filled in".to_string()
    })?;
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| "the endpoint names no host".to_string())?;
    let port = url
        .port_or_known_default()
        .map(|p| format!(":{p}"))
        .unwrap_or_default();
    Ok(format!("{}://{host}{port}", url.scheme()))
}

/// The secret a templated endpoint's host comes from: the first `{{NAME}}` in its scheme and
/// authority (`{{API_BASE}}/x`, `https://{{HOST}}/x`), none when the host is written out.
pub fn endpoint_host_secret(endpoint: &str) -> Option<String> {
    let rest = match (
        endpoint.find("://"),
        endpoint.find("{{"),
        endpoint.find("<<"),
    ) {
        (Some(scheme), first, second)
            if first.is_none_or(|f| scheme < f) && second.is_none_or(|f| scheme < f) =>
        {
            &endpoint[scheme + 3..]
        }
        _ => endpoint,
    };
    // A placeholder's own text may hold `/` only after it closes; cut the authority after it.
    let mut authority = String::new();
    let mut inside = false;
    let chars: Vec<char> = rest.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let pair: String = chars[i..chars.len().min(i + 2)].iter().collect();
        if pair == "{{" || pair == "<<" {
            inside = true;
        } else if pair == "}}" || pair == ">>" {
            inside = false;
        } else if !inside && matches!(chars[i], '/' | '?' | '#') {
            break;
        }
        authority.push(chars[i]);
        i += 1;
    }
    crate::secrets::template_names(&authority)
        .into_iter()
        .next()
}

#[async_trait::async_trait]
impl Tool for HttpTool {
    fn spec(&self) -> &ToolSpec {
        &self.def.spec
    }

    fn permission(&self) -> Permission {
        self.def.permission
    }

    fn source(&self) -> ToolSource {
        ToolSource::Http {
            file: self.def.source.clone(),
        }
    }

    async fn request_preview(&self, params: &Params, ctx: &ToolContext) -> Option<Value> {
        let mut preview = serde_json::to_value(self.preview(params)).ok()?;
        if let (Value::Object(map), Ok(Value::Object(dest))) = (
            &mut preview,
            serde_json::to_value(self.destination(ctx).await),
        ) {
            map.extend(dest);
        }
        Some(preview)
    }

    fn sends_requests(&self) -> bool {
        true
    }

    fn host_secret(&self) -> Option<String> {
        endpoint_host_secret(&self.def.endpoint)
    }

    async fn call_destination(
        &self,
        params: &Params,
        ctx: &ToolContext,
    ) -> Option<crate::permissions::rules::Destination> {
        let endpoint = fill_secrets(&self.def.endpoint, ctx).await?;
        let built = self.build(&endpoint, params);
        if !built.errors.is_empty() {
            return None;
        }
        destination(&self.def.method, built.url)
    }

    async fn execute(&self, params: Params, ctx: &ToolContext) -> ToolResult {
        let started = Instant::now();
        let preview = self.preview(&params);
        let (endpoint, mut headers, redactor) = self.fill(ctx).await;
        let Built {
            url,
            body,
            headers: param_headers,
            errors,
        } = self.build(&endpoint, &params);
        if !errors.is_empty() {
            return ToolResult::fail(errors.join("; "));
        }
        // Parsed once: what is sent is what `$url` and `$host` were matched against.
        let url = match reqwest::Url::parse(&url) {
            Ok(u) => u,
            Err(e) => {
                let message = format!("`{}` is not a valid URL: {e}", preview.url);
                return ToolResult::fail(redactor.redact(&message));
            }
        };
        headers.extend(param_headers);
        let method =
            reqwest::Method::from_bytes(self.def.method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let client = if self.uses_secrets {
            shared_client()
        } else {
            shared_open_client()
        };
        let mut request = client.request(method, url).timeout(self.def.timeout);
        for (k, v) in &headers {
            request = request.header(k, v);
        }
        if let Some(body) = &body {
            request = request.json(body);
        }
        let meta = |r: ToolResult, status: Option<u16>| {
            r.with_meta(
                "request",
                serde_json::to_value(&preview).unwrap_or_default(),
            )
            .with_meta("status", status.map_or(Value::Null, Value::from))
            .with_meta("elapsed_ms", started.elapsed().as_millis() as u64)
        };
        let trace = |status: Option<u16>, headers: Vec<(String, String)>, body: &str| {
            if let Some(slot) = &ctx.http_trace {
                let kept: String = body.chars().take(TRACE_BODY_CHARS).collect();
                let exchange = HttpExchange {
                    method: preview.method.clone(),
                    url: preview.url.clone(),
                    request_headers: preview.headers.clone(),
                    request_body: preview
                        .body
                        .as_ref()
                        .map(|b| serde_json::to_string_pretty(b).unwrap_or_else(|_| b.to_string())),
                    status,
                    response_headers: headers,
                    response_truncated: kept.len() < body.len(),
                    response_body: kept,
                    elapsed_ms: started.elapsed().as_millis().min(u32::MAX as u128) as u32,
                    response_extract: self.def.response_extract.clone(),
                };
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(exchange);
            }
        };
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                let reason = describe_request_error(&e);
                let message = format!(
                    "could not reach {} {}: {reason}",
                    self.def.method, preview.url
                );
                let message = redactor.redact(&message);
                trace(None, Vec::new(), "");
                return meta(ToolResult::fail(message), None);
            }
        };
        let status = response.status();
        let response_headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    redactor.redact(&String::from_utf8_lossy(v.as_bytes())),
                )
            })
            .collect();
        let body = match read_capped(response, MAX_RESPONSE_BYTES).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(message) => {
                trace(Some(status.as_u16()), response_headers, "");
                return meta(
                    ToolResult::fail(redactor.redact(&message)),
                    Some(status.as_u16()),
                );
            }
        };
        let body = redactor.redact(&body);
        trace(Some(status.as_u16()), response_headers, &body);
        if !status.is_success() {
            let message = format!(
                "HTTP {status} from {} {}: {}",
                self.def.method,
                preview.url,
                trim_chars(&body, ERROR_BODY_CHARS)
            );
            return meta(ToolResult::fail(message), Some(status.as_u16()));
        }
        let result = match (&self.extract, &self.def.response_extract) {
            (Some(path), Some(expr)) => extract(path, expr, &body),
            _ => ToolResult::ok(body),
        };
        meta(result, Some(status.as_u16()))
    }
}

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
fn segment_ends(expr: &str) -> Vec<usize> {
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

pub(crate) async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
) -> Result<Vec<u8>, String> {
    if let Some(len) = response.content_length() {
        if len as usize > cap {
            return Err(format!(
                "the response is {len} bytes, more than the {cap}-byte limit for HTTP tools"
            ));
        }
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > cap {
                    return Err(format!(
                        "the response is larger than the {cap}-byte limit for HTTP tools"
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => {
                return Err(format!(
                    "reading the response failed: {}",
                    describe_request_error(&e)
                ))
            }
        }
    }
}

/// At most `max` characters of `s`, with a note when cut.
pub fn trim_chars(s: &str, max: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}… [{} more characters]", &s[..i], s[i..].chars().count()),
        None => s.to_string(),
    }
}

/// The destination of a request: `method` to `url`, the URL in the canonical form the request
/// uses and its host (lower case, IDNA, no trailing dot; see [`crate::util::url`]). Both come
/// from the URL as parsed, which is what is sent (dot segments resolved, the host normalised),
/// never from the text before parsing. `None` when `url` is not a URL with a host.
pub fn destination(method: &str, url: String) -> Option<crate::permissions::rules::Destination> {
    let url = crate::util::url::canonical_url(&url).ok()?;
    let parsed = reqwest::Url::parse(&url).ok()?;
    let host = parsed.host_str()?.to_string();
    Some(crate::permissions::rules::Destination {
        method: method.to_ascii_uppercase(),
        url: parsed.to_string(),
        host,
    })
}

/// `template` with its `{{VAR}}` secrets filled from `ctx`; `None` when one is not set.
pub async fn fill_secrets(template: &str, ctx: &ToolContext) -> Option<String> {
    let resolver = ctx
        .secrets
        .clone()
        .unwrap_or_else(|| Arc::new(SecretResolver::new(None, None)));
    let filled = resolver
        .fill_async(vec![template.to_string()])
        .await
        .pop()?;
    filled.unresolved.is_empty().then_some(filled.text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn segments_of_a_path() {
        let cuts = |e: &str| {
            segment_ends(e)
                .into_iter()
                .map(|i| e[..i].to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(cuts("$.a.b"), ["$", "$.a"]);
        assert_eq!(cuts("$.a[0].b"), ["$", "$.a", "$.a[0]"]);
        assert_eq!(cuts("$['x.y'].z"), ["$", "$['x.y']"]);
        assert_eq!(cuts("$..qty"), ["$"]);
        assert_eq!(
            cuts("$.items[?@.qty > 2].name"),
            ["$", "$.items", "$.items[?@.qty > 2]"]
        );
    }

    #[test]
    fn a_path_that_matches_nothing_is_explained_where_it_stops() {
        let json = json!({"code": 200, "data": {"price": 1.5, "items": [{"n": 1}, {"n": 2}]}});
        assert_eq!(
            explain_no_match("$.data.cost", &json),
            "`$.data` matches an object with keys `price`, `items`, and `cost` finds nothing there"
        );
        assert_eq!(
            explain_no_match("$.result.price", &json),
            "the response is an object with keys `code`, `data`, and `result` is not in it"
        );
        assert_eq!(
            explain_no_match("$.data.items[5].n", &json),
            "`$.data.items` matches an array of 2 items, and `[5]` finds nothing there"
        );
        assert_eq!(
            explain_no_match("$.data.items[*].x", &json),
            "`$.data.items[*]` matches 2 values, and `x` finds nothing there"
        );
        assert_eq!(
            explain_no_match("$.a", &json!([])),
            "the response is an array of 0 items, and `a` is not in it"
        );
    }
}

#[cfg(test)]
mod placeholder_tests {
    use super::path_placeholders;

    #[test]
    fn placeholders_skip_secrets_and_survive_any_text() {
        let found = path_placeholders("https://h/{{HOST}}/repos/{owner}/{repo}?q=É✓{x");
        let names: Vec<_> = found.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["owner", "repo"]);
        let endpoint = "http://127.0.0.1/forms?k=pX/9+k \"Ém✓ s3cret~?>!{id}";
        let [(range, name)] = &path_placeholders(endpoint)[..] else {
            panic!("one placeholder")
        };
        assert_eq!((&endpoint[range.clone()], name.as_str()), ("{id}", "id"));
        assert!(path_placeholders("{{UNCLOSED").is_empty());
    }
}
