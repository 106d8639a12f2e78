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
//! Reading a file is the `definition` module's job, `response_extract` the `extract` module's;
//! running a tool is here. Loading never fails as a whole: a broken file becomes a
//! [`ConfigError`](crate::config_error::ConfigError) naming the file, the line and the field, and the other files still load.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use serde_json_path::JsonPath;

use super::pipeline::value_text;
use super::{Params, Permission, Tool, ToolContext, ToolResult, ToolSource, ToolSpec};
use crate::net::describe_request_error;
use crate::secrets::{Redactor, SecretResolver};
use crate::util::url::encode_component;

mod definition;
mod extract;

pub use definition::{
    load_dir, parse_definition, path_placeholders, HttpToolDef, ParamIn, ParamRoute,
};
pub use extract::{describe_shape, explain_no_match, extract};

/// Largest response body read from an HTTP tool's endpoint.
pub const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;
/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = crate::net::MAX_REDIRECTS;
/// Characters of an error response body shown to the model.
pub const ERROR_BODY_CHARS: usize = 500;

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
    use super::extract::segment_ends;
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
