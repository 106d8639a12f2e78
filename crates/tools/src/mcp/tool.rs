//! [`McpTool`]: one tool of an MCP server as a [`Tool`] of the registry, named `SERVER.TOOL`.
//!
//! It goes through the one gate like every tool: its parameters come from the input schema
//! ([`super::schema`]), its permission is `confirm` unless `mcp.json` says otherwise (the
//! server's annotations are shown, never trusted to skip the dialog), and its result is turned
//! into ours by [`convert_result`]: text as text, `structuredContent` as JSON, embedded text
//! resources, images and audio as [`Attachment`]s (stored by the gate as artifacts, one line
//! each for the model), `isError` as a failed call.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::apps::VIEW_MIME;
use super::client::{McpClient, McpError};
use super::config::McpServerConfig;
use super::schema::{params_from_schema, to_arguments, SchemaParams};
use crate::tools::{
    Attachment, Params, Permission, Tool, ToolContext, ToolResult, ToolSource, ToolSpec, ToolView,
};

/// Longest tool description kept, in characters: the descriptions of every tool an agent
/// uses go into its prompt, so a server cannot fill the window with one.
pub const MAX_DESCRIPTION_CHARS: usize = 4_000;

/// Longest parameter description kept, in characters.
pub const MAX_PARAM_DESCRIPTION_CHARS: usize = 1_000;

/// Largest `inputSchema` (as JSON) sent whole to the model with native tool calling; a larger
/// one is replaced by the schema built from the (capped) parameters.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// `text` cut to `max` characters, saying so at its end and, with a warning naming the server
/// and the tool, in the log.
fn capped(text: String, max: usize, server: &str, tool: &str, what: &str) -> String {
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    tracing::warn!(
        server = %server,
        tool = %tool,
        "the {what} has {total} characters: only the first {max} are used"
    );
    let kept: String = text.chars().take(max).collect();
    format!("{kept}… (cut to {max} of {total} characters)")
}

/// What the UI shows of one server tool: its spec for the model, its annotations, and the
/// block of instructions the model sees.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpToolInfo {
    /// The registry name, `SERVER.TOOL` (sanitized).
    pub name: String,
    /// The server's own name for it.
    pub remote_name: String,
    /// Its title (annotations or tool title), if any.
    pub title: Option<String>,
    /// Its description.
    pub description: String,
    /// Parameters as the model sees them.
    pub params: Vec<crate::tools::ParamSpec>,
    /// The server's hint: the tool only reads.
    pub read_only_hint: Option<bool>,
    /// The server's hint: the tool may destroy data.
    pub destructive_hint: Option<bool>,
    /// The effective default permission (from mcp.json).
    pub permission: Permission,
    /// The `<tool>` block of the model's instructions.
    pub instructions: String,
    /// Its interactive view's `ui://` URI (MCP Apps), if it has one.
    pub view: Option<String>,
    /// Only the server's views may call it: the model does not get it.
    pub app_only: bool,
}

/// Registry names for a server's tools: `SERVER.TOOL`, with characters outside the name rules
/// replaced by `_` and clashes numbered. Returns `(registry name, real name)` pairs in order.
pub fn tool_names<'a>(
    server: &str,
    remote: impl IntoIterator<Item = &'a str>,
) -> Vec<(String, String)> {
    let mut used = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for real in remote {
        let clean: String = real
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let clean = if clean.is_empty() {
            "tool".to_string()
        } else {
            clean
        };
        let mut name = format!("{server}.{clean}");
        let mut n = 2;
        while !used.insert(name.clone()) {
            name = format!("{server}.{clean}_{n}");
            n += 1;
        }
        out.push((name, real.to_string()));
    }
    out
}

/// One MCP tool in the registry.
pub struct McpTool {
    spec: ToolSpec,
    remote_name: String,
    server: String,
    permission: Permission,
    schema: SchemaParams,
    info: McpToolInfo,
    client: Arc<McpClient>,
    /// A remote server's URL (templates unfilled): where every call is POSTed.
    endpoint: Option<String>,
    /// See [`launch_digest`].
    launch_digest: String,
    /// Its interactive view (MCP Apps): the `ui://` resource read after each call the model
    /// makes (see [`view_of_tool`]).
    view_uri: Option<String>,
    /// Only the server's views may call it (`_meta.ui.visibility: ["app"]`): the model does not
    /// get it.
    app_only: bool,
    /// Its server's views may call it (no `visibility`, or one that has `"app"`).
    app_visible: bool,
}

/// Largest view document kept, in bytes: a view is one HTML file with its scripts inlined
/// (the extension's own library is 540 KB), and one is stored per document, not per call.
pub const MAX_VIEW_BYTES: usize = 8 * 1024 * 1024;

/// Who may call a tool and what it shows (MCP Apps), from its `_meta`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUi {
    /// Its view: the `ui://` URI in `_meta.ui.resourceUri` (or the older
    /// `_meta["ui/resourceUri"]`).
    pub view: Option<String>,
    /// Only views may call it (`_meta.ui.visibility` without `"model"`).
    pub app_only: bool,
    /// Views may call it (no `visibility`, or one with `"app"`).
    pub app_visible: bool,
}

/// What `tool`'s `_meta.ui` says (see [`ToolUi`]).
pub fn view_of_tool(tool: &rmcp::model::Tool) -> ToolUi {
    let Some(meta) = tool.meta.as_ref().map(|m| &m.0) else {
        return ToolUi {
            view: None,
            app_only: false,
            app_visible: true,
        };
    };
    let ui = meta.get("ui");
    let uri = ui
        .and_then(|u| u.get("resourceUri"))
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(Value::as_str)
        .filter(|u| u.starts_with("ui://"))
        .map(str::to_string);
    let visibility = ui
        .and_then(|u| u.get("visibility"))
        .and_then(Value::as_array);
    let has = |who: &str| visibility.is_none_or(|v| v.iter().any(|x| x.as_str() == Some(who)));
    ToolUi {
        view: uri,
        app_only: !has("model"),
        app_visible: has("app"),
    }
}

/// SHA-256 (hex) of how a server is launched: its name and command and arguments (stdio) or
/// its URL (HTTP). Environment and headers are left out: their values are secrets' templates,
/// and a grant is about which program or endpoint runs the tool.
pub fn launch_digest(cfg: &McpServerConfig) -> String {
    use sha2::{Digest, Sha256};
    let launch = match &cfg.transport {
        super::config::McpTransport::Stdio { command, args, .. } => {
            serde_json::json!({"server": cfg.name, "command": command, "args": args})
        }
        super::config::McpTransport::Http { url, .. } => {
            serde_json::json!({"server": cfg.name, "url": url})
        }
    };
    format!("{:x}", Sha256::digest(launch.to_string().as_bytes()))
}

impl McpTool {
    /// The tool `tool` of `client`'s server, registered as `name`.
    pub fn new(
        name: String,
        tool: &rmcp::model::Tool,
        cfg: &McpServerConfig,
        client: Arc<McpClient>,
    ) -> Self {
        let mut schema = params_from_schema(&tool.input_schema);
        for param in &mut schema.params {
            let what = format!("description of parameter `{}`", param.name);
            param.description = capped(
                std::mem::take(&mut param.description),
                MAX_PARAM_DESCRIPTION_CHARS,
                &cfg.name,
                &tool.name,
                &what,
            );
        }
        let annotations = tool.annotations.as_ref();
        let title = tool
            .title
            .clone()
            .or_else(|| annotations.and_then(|a| a.title.clone()));
        let mut description = tool.description.as_deref().unwrap_or("").trim().to_string();
        if description.is_empty() {
            description = title.clone().unwrap_or_default();
        }
        let description = capped(
            description,
            MAX_DESCRIPTION_CHARS,
            &cfg.name,
            &tool.name,
            "description",
        );
        let input_schema = Value::Object(tool.input_schema.as_ref().clone());
        let schema_bytes = input_schema.to_string().len();
        let input_schema = if schema_bytes <= MAX_SCHEMA_BYTES {
            Some(input_schema)
        } else {
            tracing::warn!(
                server = %cfg.name,
                tool = %tool.name,
                "the inputSchema has {schema_bytes} bytes (more than {MAX_SCHEMA_BYTES}): the model gets one built from its parameters"
            );
            None
        };
        let spec = ToolSpec {
            name: name.clone(),
            description: description.clone(),
            params: schema.params.clone(),
            // Native tool calling sends the server's schema whole (SEP-1613: JSON Schema
            // 2020-12, `$defs` and all), not one rebuilt from the parameters.
            input_schema,
        };
        let permission = cfg.permission_of(&tool.name);
        let ToolUi {
            view: view_uri,
            app_only,
            app_visible,
        } = view_of_tool(tool);
        let info = McpToolInfo {
            view: view_uri.clone(),
            app_only,
            name,
            remote_name: tool.name.to_string(),
            title,
            description,
            params: schema.params.clone(),
            read_only_hint: annotations.and_then(|a| a.read_only_hint),
            destructive_hint: annotations.and_then(|a| a.destructive_hint),
            permission,
            instructions: crate::parser::tool_instructions(std::slice::from_ref(&spec))
                .lines()
                .skip_while(|l| !l.starts_with("<tool "))
                .take_while(|l| *l != "</tool_instructions>")
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_string(),
        };
        McpTool {
            spec,
            remote_name: tool.name.to_string(),
            server: cfg.name.clone(),
            permission,
            schema,
            info,
            client,
            endpoint: match &cfg.transport {
                super::config::McpTransport::Http { url, .. } => Some(url.clone()),
                super::config::McpTransport::Stdio { .. } => None,
            },
            launch_digest: launch_digest(cfg),
            view_uri,
            app_only,
            app_visible,
        }
    }

    /// Only the server's views may call it: the model's registry leaves it out.
    pub fn app_only(&self) -> bool {
        self.app_only
    }

    /// Its server's views may call it.
    pub fn app_visible(&self) -> bool {
        self.app_visible
    }

    /// The server's own name for it.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    /// Its view's `ui://` URI, if it has one.
    pub fn view_uri(&self) -> Option<&str> {
        self.view_uri.as_deref()
    }

    /// Read its view: the resource must be one HTML document of type [`VIEW_MIME`] of at
    /// most [`MAX_VIEW_BYTES`]. The error says what was wrong, for the log and the card.
    async fn read_view(&self, uri: &str, input: Value) -> Result<ToolView, String> {
        let read = self
            .client
            .read_resource(uri)
            .await
            .map_err(|e| format!("cannot read its view {uri}: {e}"))?;
        let content = read
            .contents
            .into_iter()
            .find_map(|c| match c {
                ResourceContents::TextResourceContents {
                    mime_type,
                    text,
                    meta,
                    ..
                } => Some((mime_type, Ok(text), meta)),
                // The extension allows the document as base64 too.
                ResourceContents::BlobResourceContents {
                    mime_type,
                    blob,
                    meta,
                    ..
                } => {
                    let text = base64::engine::general_purpose::STANDARD
                        .decode(blob.trim())
                        .ok()
                        .and_then(|b| String::from_utf8(b).ok())
                        .ok_or_else(|| format!("its view {uri} is not base64 UTF-8 text"));
                    Some((mime_type, text, meta))
                }
                _ => None,
            })
            .ok_or_else(|| format!("its view {uri} has no content"))?;
        let (mime, html, meta) = content;
        let html = html?;
        let mime = mime.unwrap_or_default();
        if !mime.replace(' ', "").eq_ignore_ascii_case(VIEW_MIME) {
            return Err(format!(
                "its view {uri} is of type `{mime}`, not `{VIEW_MIME}`"
            ));
        }
        if html.len() > MAX_VIEW_BYTES {
            return Err(format!(
                "its view {uri} has {} bytes, more than the {MAX_VIEW_BYTES} kept",
                html.len()
            ));
        }
        // The secrets the server's configuration uses stay masked here too: the document is
        // stored, and a view is untrusted.
        let html = self.client.redact(&html);
        let meta = meta
            .and_then(|m| m.0.get("ui").cloned())
            .filter(Value::is_object)
            .unwrap_or_else(|| Value::Object(Default::default()));
        Ok(ToolView {
            server: self.server.clone(),
            resource_uri: uri.to_string(),
            html,
            meta,
            tool_input: input,
            launch_digest: self.launch_digest.clone(),
            local_server: self.endpoint.as_deref().is_none_or(|url| {
                reqwest::Url::parse(url).is_ok_and(|u| {
                    matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
                })
            }),
        })
    }

    /// What the UI shows of it.
    pub fn info(&self) -> &McpToolInfo {
        &self.info
    }

    /// Call it with typed parameters, stopping on `cancel` (the gate cancels the future
    /// instead; both end the call on the server).
    pub async fn call(&self, params: Params, cancel: &CancellationToken) -> ToolResult {
        self.call_from(params, cancel, None, None).await
    }

    /// [`McpTool::call`] made by `origin`, which a form the server asks for names.
    pub async fn call_from(
        &self,
        params: Params,
        cancel: &CancellationToken,
        origin: Option<crate::tools::CallOrigin>,
        progress: Option<crate::tools::ProgressSink>,
    ) -> ToolResult {
        let args = match to_arguments(&self.schema, &params) {
            Ok(a) => a,
            Err(message) => return ToolResult::fail(message),
        };
        // A call a view makes answers the view; it does not open another.
        let view_uri = match &origin {
            Some(o) if o.view_of.is_some() => None,
            _ => self.view_uri.clone(),
        };
        let input = Value::Object(args.clone());
        match self
            .client
            .call_tool_from(&self.remote_name, args, cancel, progress.map(report_to), origin)
            .await
        {
            Ok(result) => {
                let raw = serde_json::to_value(&result).ok();
                let mut out = convert_result(&self.spec.name, result);
                out.raw = raw;
                if let Some(uri) = view_uri {
                    // For whoever shows the result without the view (the CLI says it has one).
                    out.metadata
                        .insert("mcp_view".into(), Value::String(uri.clone()));
                    match self.read_view(&uri, input).await {
                        Ok(view) => out.view = Some(Box::new(view)),
                        Err(e) => {
                            tracing::warn!(server = %self.server, tool = %self.remote_name, "{e}");
                            out.metadata.insert("view_error".into(), Value::String(e));
                        }
                    }
                }
                out
            }
            Err(McpError::Closed) => ToolResult::fail(format!(
                "the MCP server `{}` stopped while the call was running (it is being restarted); the call may have partly happened",
                self.server
            )),
            Err(e) => ToolResult::fail(format!("MCP server `{}`: {e}", self.server)),
        }
        .with_meta("mcp_server", self.server.clone())
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        self.permission
    }

    fn source(&self) -> ToolSource {
        ToolSource::Mcp {
            server: self.server.clone(),
        }
    }

    fn sends_requests(&self) -> bool {
        self.endpoint.is_some()
    }

    /// A remote server's URL, method POST (MCP's Streamable HTTP); none for a local process.
    async fn call_destination(
        &self,
        _params: &Params,
        ctx: &ToolContext,
    ) -> Option<crate::permissions::rules::Destination> {
        let url = crate::tools::http::fill_secrets(self.endpoint.as_deref()?, ctx).await?;
        crate::tools::http::destination("POST", url)
    }

    fn server_launch_digest(&self) -> Option<String> {
        Some(self.launch_digest.clone())
    }

    async fn request_preview(&self, params: &Params, _ctx: &ToolContext) -> Option<Value> {
        let args = to_arguments(&self.schema, params).ok()?;
        Some(serde_json::json!({
            "mcp_server": self.server,
            "tool": self.remote_name,
            "arguments": args,
            "read_only_hint": self.info.read_only_hint,
            "destructive_hint": self.info.destructive_hint,
        }))
    }

    async fn execute(&self, params: Params, ctx: &ToolContext) -> ToolResult {
        // The gate's stop drops this future; the client then tells the server with
        // notifications/cancelled (see `McpClient::call_tool`), and a form open for the call
        // is cancelled.
        self.call_from(
            params,
            &CancellationToken::new(),
            ctx.origin.clone(),
            ctx.progress.clone(),
        )
        .await
    }
}

/// The server's progress notifications for one call, passed on to the gate's sink (a report
/// after the call ended has nowhere to go and is dropped).
fn report_to(sink: crate::tools::ProgressSink) -> super::client::ProgressFn {
    std::sync::Arc::new(move |progress, total, message| {
        let _ = sink.send(crate::tools::ToolProgress {
            progress,
            total,
            message,
        });
    })
}

/// One line for the model about a binary attachment.
fn attachment_line(mime: &str, bytes: usize) -> String {
    let size = if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else if bytes >= 1024 {
        format!("{} KB", bytes.div_ceil(1024))
    } else {
        format!("{bytes} bytes")
    };
    format!("[{mime}, {size}: stored as an artifact]")
}

/// A server's result as ours (see the module docs). `tool` names the attachments.
///
/// `result` is one [`McpClient`] returned, so its secrets are already out of it: every string
/// and key masked, text-like blobs masked, and images and blobs that held a secret replaced by
/// a note (see the client's `redact_result`); what becomes an attachment here, and then an
/// artifact, is only what passed that.
pub fn convert_result(tool: &str, result: CallToolResult) -> ToolResult {
    let mut parts: Vec<String> = Vec::new();
    let mut attachments = Vec::new();
    let mut kinds: BTreeMap<&str, u32> = BTreeMap::new();
    let binary = |mime: &str,
                  data: &str,
                  kind: &str,
                  parts: &mut Vec<String>,
                  attachments: &mut Vec<Attachment>| {
        match base64::engine::general_purpose::STANDARD.decode(data.trim()) {
            Ok(bytes) => {
                parts.push(attachment_line(mime, bytes.len()));
                attachments.push(Attachment {
                    mime: mime.to_string(),
                    title: format!("{tool}: {kind} {}", attachments.len() + 1),
                    bytes,
                    resource_uri: None,
                });
            }
            Err(_) => parts.push(format!("[{mime}: the server sent data that is not base64]")),
        }
    };
    for block in result.content {
        match block {
            ContentBlock::Text(t) => {
                *kinds.entry("text").or_default() += 1;
                parts.push(t.text);
            }
            ContentBlock::Image(i) => {
                *kinds.entry("image").or_default() += 1;
                binary(&i.mime_type, &i.data, "image", &mut parts, &mut attachments);
            }
            ContentBlock::Audio(a) => {
                *kinds.entry("audio").or_default() += 1;
                binary(&a.mime_type, &a.data, "audio", &mut parts, &mut attachments);
            }
            ContentBlock::Resource(r) => {
                *kinds.entry("resource").or_default() += 1;
                match r.resource {
                    ResourceContents::TextResourceContents {
                        uri,
                        mime_type,
                        text,
                        ..
                    } => attachments.push(Attachment {
                        // Stored by the gate as a text artifact, with its own line (and its
                        // text when short) for the model.
                        mime: mime_type.unwrap_or_else(|| "text/plain".into()),
                        title: uri.clone(),
                        bytes: text.into_bytes(),
                        resource_uri: Some(uri),
                    }),
                    ResourceContents::BlobResourceContents {
                        mime_type, blob, ..
                    } => {
                        let mime = mime_type.unwrap_or_else(|| "application/octet-stream".into());
                        binary(&mime, &blob, "resource", &mut parts, &mut attachments);
                    }
                    _ => parts.push("[a resource of a kind this version cannot read]".into()),
                }
            }
            ContentBlock::ResourceLink(link) => {
                *kinds.entry("resource_link").or_default() += 1;
                parts.push(format!("[resource link: {} ({})]", link.uri, link.name));
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }
    if let Some(structured) = &result.structured_content {
        // Structured output is the exact answer; text blocks often repeat it, keep both only
        // when the text adds something.
        let json = serde_json::to_string_pretty(structured).unwrap_or_default();
        if !parts.iter().any(|p| p.trim() == json.trim()) {
            parts.push(json);
        }
    }
    let text = parts.join("\n");
    let mut out = if result.is_error == Some(true) {
        ToolResult::fail(if text.trim().is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            text
        })
    } else {
        ToolResult::ok(text)
    };
    out.attachments = attachments;
    if let Some(structured) = result.structured_content {
        out.metadata.insert("structured_content".into(), structured);
    }
    out.metadata.insert(
        "mcp_content".into(),
        serde_json::to_value(kinds).unwrap_or_default(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_sanitized_and_unique() {
        let names = tool_names(
            "srv",
            ["echo", "get image", "get_image", "a/b", "get image"],
        );
        let got: Vec<_> = names.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            got,
            [
                "srv.echo",
                "srv.get_image",
                "srv.get_image_2",
                "srv.a_b",
                "srv.get_image_3"
            ]
        );
        assert_eq!(names[1].1, "get image");
        assert!(names
            .iter()
            .all(|(n, _)| crate::util::names::is_valid_tool_name(n)));
    }

    #[test]
    fn attachment_lines_say_mime_and_size() {
        assert_eq!(
            attachment_line("image/png", 12 * 1024),
            "[image/png, 12 KB: stored as an artifact]"
        );
        assert_eq!(
            attachment_line("audio/wav", 10),
            "[audio/wav, 10 bytes: stored as an artifact]"
        );
    }
}
