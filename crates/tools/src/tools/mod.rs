//! Tools: the [`Tool`] trait, the one execution [`pipeline`], the [`registry`], declarative
//! [`http`] tools and the built-in tools.
//!
//! # How a call runs
//! Every call, whatever the tool, goes through [`pipeline::run`]:
//! string params from the parser → coerced to the declared types (`true/1/yes`, `false/0/no`;
//! a failed coercion keeps the string) → defaults filled → validated (required, unknown, enum,
//! type) → [`Tool::execute`] → any error or panic wrapped as a failed [`ToolResult`].
//! Nothing in the pipeline returns an error or panics at its caller: the model always gets a
//! result it can act on.
//!
//! # Adding a tool in Rust
//! Implement [`Tool`] (a [`ToolSpec`] describing the parameters, a default [`Permission`] and an
//! async `execute` that only does the work — coercion, defaults and validation are already
//! done), then register an instance in [`builtin::builtin_tools`]. Agents only see it once
//! their `tools:` list names it. See `crates/engine/tests/tools/custom_tool.rs` for a complete
//! example with a test.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

pub use crate::tool_spec::Permission;
pub use crate::tool_spec::{ParamSpec, ParamType, ToolSpec};

pub mod builtin;
pub mod http;
pub mod pipeline;
pub mod registry;

pub use crate::tool_spec::Params;

/// Default cap on a successful result's size before it is stored as an artifact.
pub const DEFAULT_MAX_RESULT_SIZE_CHARS: usize = 50_000;

/// The outcome of one tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ToolResult {
    /// Did the tool do what was asked?
    pub success: bool,
    /// The output for the model (text; structured data serialised in a model-friendly way).
    pub data: String,
    /// Why it failed, written for the model: what was wrong and what to do next.
    pub error: Option<String>,
    /// Extra facts for the UI and the engine (never shown to the model).
    pub metadata: Map<String, Value>,
    /// Binary content the tool produced (an MCP server's images and audio): the gate stores
    /// each as an artifact of the conversation and tells the model about it in one line.
    #[serde(skip)]
    pub attachments: Vec<Attachment>,
    /// An MCP server's interactive view of the call (MCP Apps), read when the call ended: the
    /// gate keeps it with the call's record, the app renders it in a sandboxed frame.
    #[serde(skip)]
    pub view: Option<Box<ToolView>>,
    /// The server's own result, as it sent it (an MCP `CallToolResult`): what a view that
    /// made the call gets back.
    #[serde(skip)]
    pub raw: Option<Value>,
}

/// An MCP server's interactive view of a call (the MCP Apps extension): a `ui://` resource of
/// type `text/html;profile=mcp-app`, as read after the call. Untrusted: the app shows it only in
/// a sandboxed frame whose content security policy allows what [`ToolView::meta`] declares
/// and nothing else.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolView {
    /// The server (its name in `mcp.json`).
    pub server: String,
    /// The resource's URI (`ui://…`).
    pub resource_uri: String,
    /// The HTML document.
    pub html: String,
    /// The resource's `_meta.ui`: `csp` (`connectDomains`, `resourceDomains`, `frameDomains`,
    /// `baseUriDomains`), `permissions`, `prefersBorder`. An empty object when it has none.
    pub meta: Value,
    /// The call's arguments, as sent to the server (the view gets them).
    pub tool_input: Value,
    /// How its server was launched (see `mcp::tool::launch_digest`).
    pub launch_digest: String,
    /// Its server runs on this computer (stdio, or HTTP on `localhost`/`127.0.0.1`): only such
    /// a view may declare this computer's addresses in its policy.
    pub local_server: bool,
}

/// One piece of content a tool produced apart from its text (an image, a sound, an embedded
/// resource), before it is stored as an artifact.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attachment {
    /// Its MIME type, e.g. `image/png`.
    pub mime: String,
    /// A short title for the library (e.g. "everything.get-image: image 1").
    pub title: String,
    /// The content.
    pub bytes: Vec<u8>,
    /// Set for an MCP server's embedded text resource: its URI. The bytes are then its UTF-8
    /// text, stored as a *text* artifact (so the artifact tools can read and search it) and
    /// titled by the URI; see the engine's `gate::store_attachments` for what the model sees.
    pub resource_uri: Option<String>,
}

impl ToolResult {
    /// A successful result.
    pub fn ok(data: impl Into<String>) -> Self {
        ToolResult {
            success: true,
            data: data.into(),
            ..Default::default()
        }
    }

    /// A failed result.
    pub fn fail(error: impl Into<String>) -> Self {
        ToolResult {
            success: false,
            error: Some(error.into()),
            ..Default::default()
        }
    }

    /// Add a metadata entry.
    pub fn with_meta(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_string(), value.into());
        self
    }
}

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolSource {
    /// Built into ArtifactFlow.
    Builtin,
    /// One of the per-conversation artifact tools.
    Artifact,
    /// A declarative HTTP tool from a Markdown file.
    Http {
        /// The file it was loaded from.
        file: std::path::PathBuf,
    },
    /// A tool of an MCP server configured in `mcp.json`.
    Mcp {
        /// The server's name (the part before the dot in `SERVER.TOOL`).
        server: String,
    },
}

/// What a tool may use while it runs.
#[derive(Clone, Default)]
pub struct ToolContext {
    /// The conversation the call belongs to, if any.
    pub conversation_id: Option<String>,
    /// Secret lookup for `{{VAR}}` templates.
    pub secrets: Option<Arc<crate::secrets::SecretResolver>>,
    /// When set, an HTTP tool records its whole exchange here (the tool editor's test panel).
    pub http_trace: Option<Arc<std::sync::Mutex<Option<http::HttpExchange>>>>,
    /// The call this is (set by the gate), so a server's question during it says who asks.
    pub origin: Option<CallOrigin>,
    /// Where the tool reports its progress while it runs (set by the gate, which announces
    /// each report as a `ToolProgress` event for the call's card). `None` outside the gate.
    pub progress: Option<ProgressSink>,
}

/// One progress report of a running call (an MCP server's `notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolProgress {
    /// How far it is (grows with each report).
    pub progress: f64,
    /// The end of the scale, when the tool knows it.
    pub total: Option<f64>,
    /// What it is doing, in the tool's words (untrusted text).
    pub message: Option<String>,
}

/// Where a running tool sends its [`ToolProgress`].
pub type ProgressSink = tokio::sync::mpsc::UnboundedSender<ToolProgress>;

/// Who makes a call and where: what a form an MCP server asks for during the call shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CallOrigin {
    /// The conversation.
    pub conversation_id: String,
    /// Its title (empty while untitled).
    pub conversation_title: String,
    /// The call (the id its `ToolStart`/`ToolComplete` carry).
    pub call_id: String,
    /// The calling agent (empty for a direct call).
    pub agent: String,
    /// The conversation's agent first, then each sub-agent down to the caller (empty for a
    /// direct call).
    pub agent_chain: Vec<String>,
    /// 0 for the conversation's agent, 1+ for sub-agents.
    pub depth: u32,
    /// Set when the view of an MCP server (MCP Apps) makes the call: that server's name.
    pub view_of: Option<String>,
}

/// One tool, as the engine and the model see it.
///
/// Required: [`Tool::spec`] (name, description, parameters), [`Tool::permission`] and
/// [`Tool::execute`]. The others have defaults. `execute` receives parameters that are already
/// coerced, defaulted and validated against the spec; it should return failures as
/// [`ToolResult::fail`] with a message the model can act on (a panic is caught and wrapped too,
/// but loses context).
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// Name, description and parameters.
    fn spec(&self) -> &ToolSpec;

    /// The default permission; an agent's own setting for the tool overrides it.
    fn permission(&self) -> Permission;

    /// Results longer than this are stored as an artifact and replaced by a preview.
    /// `None` means never (read_artifact, to avoid a read → store → read loop).
    fn max_result_size_chars(&self) -> Option<usize> {
        Some(DEFAULT_MAX_RESULT_SIZE_CHARS)
    }

    /// Where the tool comes from.
    fn source(&self) -> ToolSource {
        ToolSource::Builtin
    }

    /// For the permission dialog: exactly what will be sent (HTTP tools: method, URL, headers
    /// and body, with secrets masked, plus where it goes and which secrets it uses). `None`
    /// when the parameters say it all. `ctx` gives the secrets to resolve the destination.
    async fn request_preview(
        &self,
        _params: &Params,
        _ctx: &ToolContext,
    ) -> Option<serde_json::Value> {
        None
    }

    /// Where a call with these parameters goes, secrets filled in: what permission rules'
    /// `$host`, `$url` and `$method` match and what a conversation grant is bound to. `None`
    /// for tools that send no request, or when it cannot be resolved (a secret is not set).
    /// Never shown or stored as it is: it may contain secrets.
    async fn call_destination(
        &self,
        _params: &Params,
        _ctx: &ToolContext,
    ) -> Option<crate::permissions::rules::Destination> {
        None
    }

    /// Does the tool send requests somewhere ([`Tool::call_destination`] can be `Some`)? A
    /// permission rule on `$host`, `$url` or `$method` needs such a tool.
    fn sends_requests(&self) -> bool {
        false
    }

    /// The secret the endpoint's host comes from (`API_BASE` for `{{API_BASE}}/quote`), when
    /// it does: a grant bound to that host is then labelled by the secret's name, never by the
    /// host, and "calls like this" proposes no `$host`.
    fn host_secret(&self) -> Option<String> {
        None
    }

    /// For an MCP tool, a digest of how its server is launched (command and arguments, or the
    /// URL): a conversation grant records it and stops applying when it changes.
    fn server_launch_digest(&self) -> Option<String> {
        None
    }

    /// Do the work.
    async fn execute(&self, params: Params, ctx: &ToolContext) -> ToolResult;
}

/// A shared handle to a tool.
pub type ToolRef = Arc<dyn Tool>;
