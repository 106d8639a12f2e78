//! Built-in tools: `web_search` (Bocha AI web search), `web_fetch` (Jina Reader) and
//! `call_subagent` (route validation; the engine performs the hand-over).
//!
//! Endpoints and API-key templates come from [`Settings`], so tests point them at local
//! servers that answer like the real services.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

use super::http::{read_capped, trim_chars, ERROR_BODY_CHARS};
use super::{Params, Permission, Tool, ToolContext, ToolRef, ToolResult, ToolSpec};
use crate::net::describe_request_error;
use crate::secrets::{Redactor, SecretResolver};
use crate::settings::{ServiceSettings, Settings};
use crate::tool_spec::{ParamSpec, ParamType};

/// Names of the built-in tools.
pub const BUILTIN_NAMES: [&str; 3] = ["web_search", "web_fetch", "call_subagent"];

/// An agent `call_subagent` may route to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRoute {
    /// Agent name.
    pub name: String,
    /// Internal agents cannot be targets.
    pub internal: bool,
}

/// The agents known to `call_subagent`; the engine swaps the list on hot reload.
pub type AgentRoutes = Arc<RwLock<Vec<AgentRoute>>>;

/// Every built-in tool, configured from `settings`.
pub fn builtin_tools(settings: &Settings, agents: AgentRoutes) -> Vec<ToolRef> {
    vec![
        Arc::new(WebSearch::new(settings.web_search.clone())),
        Arc::new(WebFetch::new(settings.web_fetch.clone())),
        Arc::new(CallSubagent::new(agents)),
    ]
}

const SEARCH_TIMEOUT: Duration = Duration::from_secs(30);
const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// Resolve an optional API-key template. `None` when absent or unresolved.
async fn api_key(template: Option<&String>, ctx: &ToolContext) -> Option<String> {
    let template = template?.clone();
    let resolver = ctx
        .secrets
        .clone()
        .unwrap_or_else(|| Arc::new(SecretResolver::new(None, None)));
    let filled = resolver.fill_async(vec![template]).await.pop()?;
    (filled.unresolved.is_empty() && !filled.text.trim().is_empty()).then_some(filled.text)
}

fn first_template_name(template: Option<&String>) -> String {
    template
        .and_then(|t| crate::secrets::template_names(t).into_iter().next())
        .unwrap_or_else(|| "the API key".into())
}

// ------------------------------------------------------------------------------------------

/// `web_search`: the Bocha AI web-search API.
pub struct WebSearch {
    spec: ToolSpec,
    service: ServiceSettings,
}

impl WebSearch {
    /// A web_search tool sending requests to `service`.
    pub fn new(service: ServiceSettings) -> Self {
        WebSearch {
            spec: ToolSpec {
                name: "web_search".into(),
                description: "Search the web (Bocha AI) and return the most relevant pages with title, URL, date and a snippet.".into(),
                input_schema: None,
                params: vec![
                    ParamSpec::new("query", ParamType::String, "Search query"),
                    ParamSpec::new("freshness", ParamType::String, "Time range filter")
                        .with_values(["noLimit", "oneDay", "oneWeek", "oneMonth", "oneYear"])
                        .with_default(json!("noLimit")),
                    ParamSpec::new("count", ParamType::Integer, "Number of results to return (1-50)")
                        .with_default(json!(10)),
                ],
            },
            service,
        }
    }
}

#[derive(Deserialize)]
struct BochaEnvelope {
    code: Option<i64>,
    msg: Option<String>,
    message: Option<String>,
    data: Option<BochaData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BochaData {
    web_pages: Option<BochaPages>,
}

#[derive(Deserialize)]
struct BochaPages {
    #[serde(default)]
    value: Vec<BochaPage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BochaPage {
    #[serde(default)]
    name: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    snippet: String,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    site_name: Option<String>,
    #[serde(default)]
    date_published: Option<String>,
    #[serde(default)]
    date_last_crawled: Option<String>,
}

#[async_trait::async_trait]
impl Tool for WebSearch {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        Permission::Auto
    }

    fn sends_requests(&self) -> bool {
        true
    }

    /// The configured search service: every query is a POST to it.
    async fn call_destination(
        &self,
        _params: &Params,
        ctx: &ToolContext,
    ) -> Option<crate::permissions::rules::Destination> {
        let url = super::http::fill_secrets(&self.service.endpoint, ctx).await?;
        super::http::destination("POST", url)
    }

    async fn execute(&self, params: Params, ctx: &ToolContext) -> ToolResult {
        let query = params["query"].as_str().unwrap_or_default().to_string();
        let count = params["count"].as_i64().unwrap_or(10);
        if !(1..=50).contains(&count) {
            return ToolResult::fail(format!(
                "parameter `count` must be between 1 and 50; you sent {count}"
            ));
        }
        if query.trim().is_empty() {
            return ToolResult::fail("parameter `query` is empty; say what to search for");
        }
        let Some(key) = api_key(self.service.api_key.as_ref(), ctx).await else {
            return ToolResult::fail(format!(
                "web_search is not configured: set the secret {} (Settings → Secrets, or `artifactflow-cli secrets set {}`)",
                first_template_name(self.service.api_key.as_ref()),
                first_template_name(self.service.api_key.as_ref()),
            ));
        };
        let redactor = Redactor::new([key.clone()]);
        let started = Instant::now();
        let body = json!({"query": query, "freshness": params["freshness"], "summary": true, "count": count});
        // The shared client is built by the first request, not when the config loads.
        let response = super::http::shared_client()
            .post(&self.service.endpoint)
            .timeout(SEARCH_TIMEOUT)
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await;
        let response = match response {
            Ok(r) => r,
            Err(e) => {
                return ToolResult::fail(redactor.redact(&format!(
                    "web search failed: {}",
                    describe_request_error(&e)
                )))
            }
        };
        let status = response.status();
        let text = match read_capped(response, super::http::MAX_RESPONSE_BYTES).await {
            Ok(bytes) => redactor.redact(&String::from_utf8_lossy(&bytes)),
            Err(e) => return ToolResult::fail(redactor.redact(&e)),
        };
        let envelope: Option<BochaEnvelope> = serde_json::from_str(&text).ok();
        let api_message = envelope
            .as_ref()
            .and_then(|e| e.msg.clone().or_else(|| e.message.clone()));
        if !status.is_success()
            || envelope
                .as_ref()
                .and_then(|e| e.code)
                .is_some_and(|c| c != 200)
        {
            let hint = match status.as_u16() {
                401 | 403 => " (check the Bocha API key)",
                429 => " (rate limited: wait before searching again)",
                _ => "",
            };
            return ToolResult::fail(format!(
                "web search failed with HTTP {status}{hint}: {}",
                api_message.unwrap_or_else(|| trim_chars(&text, ERROR_BODY_CHARS))
            ));
        }
        let Some(envelope) = envelope else {
            return ToolResult::fail(format!(
                "web search returned something that is not the expected JSON: {}",
                trim_chars(&text, 200)
            ));
        };
        let pages = envelope
            .data
            .and_then(|d| d.web_pages)
            .map(|p| p.value)
            .unwrap_or_default();
        ToolResult::ok(format_results(&query, &pages))
            .with_meta("results", pages.len())
            .with_meta("elapsed_ms", started.elapsed().as_millis() as u64)
    }
}

fn format_results(query: &str, pages: &[BochaPage]) -> String {
    if pages.is_empty() {
        return format!("No results for \"{query}\". Try other words or a wider freshness.");
    }
    let mut out = format!("Search results for \"{query}\" ({}):\n", pages.len());
    for (i, p) in pages.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {}\n   URL: {}\n",
            i + 1,
            p.name.trim(),
            p.url
        ));
        if let Some(site) = p.site_name.as_deref().filter(|s| !s.is_empty()) {
            out.push_str(&format!("   Site: {site}\n"));
        }
        if let Some(date) = p
            .date_published
            .as_deref()
            .or(p.date_last_crawled.as_deref())
            .filter(|d| !d.is_empty())
        {
            out.push_str(&format!("   Date: {date}\n"));
        }
        let text = p
            .summary
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or(&p.snippet);
        if !text.trim().is_empty() {
            out.push_str(&format!("   {}\n", text.trim().replace('\n', "\n   ")));
        }
    }
    out
}

// ------------------------------------------------------------------------------------------

/// The page `web_fetch` reads for a `url` argument: the canonical form of an http(s) URL (the
/// one permission rules compare), which is what the reader is sent. The error is for the model.
fn page_url(written: &str) -> Result<String, String> {
    let bad = |why: &str| {
        format!(
            "parameter `url` must be a full http:// or https:// URL; you sent `{written}` ({why})"
        )
    };
    let url = crate::util::url::canonical_url(written).map_err(|e| bad(&e))?;
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url)
    } else {
        Err(bad("not http or https"))
    }
}

/// `web_fetch`: reads a page as Markdown-like text through Jina Reader.
pub struct WebFetch {
    spec: ToolSpec,
    service: ServiceSettings,
}

impl WebFetch {
    /// A web_fetch tool sending requests to `service`.
    pub fn new(service: ServiceSettings) -> Self {
        WebFetch {
            spec: ToolSpec {
                name: "web_fetch".into(),
                description: "Fetch a web page and return its main content as text (Jina Reader). Use it to read pages found with web_search.".into(),
                input_schema: None,
                params: vec![
                    ParamSpec::new("url", ParamType::String, "Full URL of the page (http:// or https://)"),
                    ParamSpec::new("max_content_length", ParamType::Integer, "Maximum characters of content to return")
                        .with_default(json!(20_000)),
                ],
            },
            service,
        }
    }
}

#[async_trait::async_trait]
impl Tool for WebFetch {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        Permission::Confirm
    }

    fn sends_requests(&self) -> bool {
        true
    }

    /// The configured reader service (the page's URL is a parameter, `url`, which rules can
    /// match too): a GET of the service's endpoint followed by the page's URL.
    async fn call_destination(
        &self,
        params: &Params,
        ctx: &ToolContext,
    ) -> Option<crate::permissions::rules::Destination> {
        let endpoint = super::http::fill_secrets(&self.service.endpoint, ctx).await?;
        let written = params.get("url").and_then(|u| u.as_str()).unwrap_or("");
        let page = page_url(written).unwrap_or_else(|_| written.trim().to_string());
        let dest = super::http::destination("GET", endpoint)?;
        let sep = if dest.url.ends_with('/') { "" } else { "/" };
        Some(crate::permissions::rules::Destination {
            url: format!("{}{sep}{page}", dest.url),
            ..dest
        })
    }

    async fn execute(&self, params: Params, ctx: &ToolContext) -> ToolResult {
        let written = params["url"].as_str().unwrap_or_default().trim();
        let url = match page_url(written) {
            Ok(url) => url,
            Err(e) => return ToolResult::fail(e),
        };
        let max = params["max_content_length"].as_i64().unwrap_or(20_000);
        if max < 1 {
            return ToolResult::fail("parameter `max_content_length` must be at least 1");
        }
        let key = api_key(self.service.api_key.as_ref(), ctx).await;
        let redactor = Redactor::new(key.clone());
        let endpoint = if self.service.endpoint.ends_with('/') {
            format!("{}{url}", self.service.endpoint)
        } else {
            format!("{}/{url}", self.service.endpoint)
        };
        let mut request = super::http::shared_client()
            .get(&endpoint)
            .timeout(FETCH_TIMEOUT)
            .header("Accept", "text/plain");
        if let Some(key) = &key {
            request = request.bearer_auth(key);
        }
        let started = Instant::now();
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                return ToolResult::fail(redactor.redact(&format!(
                    "could not fetch {url}: {}",
                    describe_request_error(&e)
                )))
            }
        };
        let status = response.status();
        let text = match read_capped(response, super::http::MAX_RESPONSE_BYTES).await {
            Ok(bytes) => redactor.redact(&String::from_utf8_lossy(&bytes)),
            Err(e) => return ToolResult::fail(redactor.redact(&e)),
        };
        if !status.is_success() {
            return ToolResult::fail(format!(
                "could not fetch {url}: the reader answered HTTP {status}: {}",
                trim_chars(&text, ERROR_BODY_CHARS)
            ));
        }
        let total = text.chars().count();
        let max = max as usize;
        let content = if total > max {
            let cut: String = text.chars().take(max).collect();
            format!(
                "{cut}\n\n[Content truncated: showing the first {max} of {total} characters. Call web_fetch again with a larger max_content_length to read more.]"
            )
        } else {
            text
        };
        ToolResult::ok(content)
            .with_meta("url", url)
            .with_meta("content_chars", total)
            .with_meta("truncated", total > max)
            .with_meta("elapsed_ms", started.elapsed().as_millis() as u64)
    }
}

// ------------------------------------------------------------------------------------------

/// `call_subagent`: validates the route. The engine performs the hand-over after a success.
pub struct CallSubagent {
    spec: ToolSpec,
    agents: AgentRoutes,
}

impl CallSubagent {
    /// A call_subagent tool routing among `agents`.
    pub fn new(agents: AgentRoutes) -> Self {
        CallSubagent {
            spec: ToolSpec {
                name: "call_subagent".into(),
                description: "Hand a task to another agent. It works on the instruction alone and its final answer comes back to you as this tool's result.".into(),
                input_schema: None,
                params: vec![
                    ParamSpec::new("agent_name", ParamType::String, "Name of the agent to call"),
                    ParamSpec::new("instruction", ParamType::String, "A complete, self-contained instruction for that agent"),
                ],
            },
            agents,
        }
    }
}

#[async_trait::async_trait]
impl Tool for CallSubagent {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        Permission::Auto
    }

    async fn execute(&self, params: Params, _ctx: &ToolContext) -> ToolResult {
        let target = params["agent_name"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_string();
        let instruction = params["instruction"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_string();
        if instruction.is_empty() {
            return ToolResult::fail("parameter `instruction` is empty; tell the agent what to do");
        }
        let agents = self
            .agents
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let callable: Vec<_> = agents
            .iter()
            .filter(|a| !a.internal)
            .map(|a| format!("`{}`", a.name))
            .collect();
        match agents.iter().find(|a| a.name == target) {
            // The gate turns the success into a typed hand-over (see `gate`).
            Some(a) if !a.internal => ToolResult::ok(format!("Routing to agent `{target}`.")),
            Some(_) => ToolResult::fail(format!(
                "agent `{target}` is internal and cannot be called; callable agents: {}",
                callable.join(", ")
            )),
            None => ToolResult::fail(format!(
                "there is no agent `{target}`; callable agents: {}",
                if callable.is_empty() {
                    "none".to_string()
                } else {
                    callable.join(", ")
                }
            )),
        }
    }
}
