//! An HTTP tool file read into an [`HttpToolDef`]: the frontmatter's fields checked one by one,
//! each problem a [`ConfigError`] with its file, line and field; [`load_dir`] reads a folder
//! of them, a broken file never stopping the others.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use serde_json_path::JsonPath;

use crate::config_error::{yaml_error, ConfigError};
use crate::tool_spec::ParamSpec;
use crate::tools::pipeline::value_text;
use crate::tools::{Params, Permission, ToolSpec};
use crate::util::fs::markdown_files;
use crate::{frontmatter, yaml};

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
            let coerced = crate::tools::pipeline::coerce_value(p.kind, &text);
            let mut probe = Params::new();
            probe.insert(p.name.clone(), coerced);
            if let Err(e) = crate::tools::pipeline::validate(std::slice::from_ref(p), &probe) {
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
