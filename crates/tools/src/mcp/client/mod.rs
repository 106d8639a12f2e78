//! One connection to one MCP server, over the official SDK (`rmcp`, pinned exactly).
//!
//! [`connect`] starts a stdio child or opens a Streamable HTTP session, runs the `initialize`
//! handshake and returns an [`McpClient`]. What rmcp does for us: JSON-RPC, the handshake,
//! Streamable HTTP session ids (`Mcp-Session-Id`), resuming an SSE stream with `Last-Event-ID`
//! and honouring the server's `retry` field, re-initialising an expired session, and message
//! size caps. What we add:
//!
//! - stdio children start with a clean environment ([`child_env`]): only the basics (PATH,
//!   HOME, USER, LANG, temp dirs, …) plus the configured `env`, whose `{{VAR}}` secrets are
//!   resolved here and never written anywhere;
//! - the command is looked up in our PATH and, when missing (a macOS app started from the
//!   Finder has a bare PATH), in the user's login shell PATH ([`resolve_command`]);
//! - each child runs in its own process group (job object on Windows), killed with the client;
//!   its stderr is kept (last lines, cleaned as log text is) for the status and logged;
//! - server requests: elicitation asked during a call of the server goes to an
//!   [`ElicitationHandler`] (asked with no call in flight, it is declined), sampling is declined with
//!   a clear message, progress and log notifications go to the [`McpNotice`] sink;
//! - what a server says is untrusted: tool results, error messages, progress and log messages
//!   have the server's secrets (its `env` and `headers` values) masked like an HTTP tool's
//!   output (in a result every string and object key, and text-like blobs; an image or other
//!   blob holding a secret is withheld, see `handler::redact_result`); log and progress text
//!   is escaped (a newline cannot forge a log line) and cut ([`clean_server_text`]), and each
//!   server's log messages are rate limited ([`LOG_BURST`], [`LOG_PER_SECOND`]);
//! - a tool call ([`McpClient::call_tool`]) has a timeout and a cancel token, and either of
//!   them sends `notifications/cancelled` to the server.
//!
//! Sampling and logging are deprecated in the newest protocol draft (SEP-2577) but still sent
//! by today's servers, so we keep handling them (hence `allow(deprecated)`).
//!
//! An authorized HTTP client (OAuth, see `mcp::auth` when present) plugs in through
//! [`connect_http_with`], which takes any rmcp `StreamableHttpClient` (e.g. rmcp's
//! `AuthClient<reqwest::Client>`); [`ConnectOptions::http_client`] and
//! [`ConnectOptions::auth_header`] cover a plain reqwest client and a bearer token.
//!
//! Every request to a remote server goes through [`remote_http_client`], built by
//! [`crate::net::client_builder`]: handing rmcp a client of our own replaces rmcp's redirect
//! policy with the client's, and a configured header (`x-api-key: {{KEY}}`) or a bearer token
//! may carry a secret, so no hop leaves the server's origin.

#![allow(deprecated)]

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ProgressToken,
    ServerResult,
};
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::config::{McpServerConfig, McpTransport};
use crate::secrets::{Redactor, SecretResolver};
use crate::tools::CallOrigin;
use handler::{redact_result, Handler, LogBudget};
use launch::{connect_stdio, Child, StderrTail};

mod handler;
mod http;
mod launch;
pub mod lifecycle;
pub mod skills;

pub use handler::{
    clean_server_text, schema_defaults, AcceptDefaults, DeclineElicitation, ElicitationAnswer,
    ElicitationHandler, ElicitationRequest, McpNotice, NoticeSink, ProgressFn,
    ELICITATION_COMPLETE, LOG_BURST, LOG_PER_SECOND, MAX_LOG_CHARS, MAX_PROGRESS_CHARS, WITHHELD,
};
pub use http::{connect_http_with, remote_http_client};
pub use launch::{
    child_env, in_own_group, resolve_command, ResolvedCommand, INHERITED_ENV, STDERR_LINES,
};

/// Largest message accepted from a server (one stdio line, one SSE event, one JSON body):
/// the model streams' event limit ([`artifactflow_ground::limits::StreamLimits`]) times four, since a tool
/// result may carry an image.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Most tools kept from one server ([`McpClient::list_tools`]).
pub const MAX_TOOLS: usize = 256;

/// Most `tools/list` pages asked of one server ([`McpClient::list_tools`]).
pub const MAX_TOOL_PAGES: usize = 32;

/// Most bytes of tool definitions (as JSON) kept from one server ([`McpClient::list_tools`]).
pub const MAX_TOOL_LIST_BYTES: usize = 8 * 1024 * 1024;

/// Why talking to a server failed. Messages say what to do; they never hold secret values.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The command was found nowhere.
    #[error("command `{command}` was not found in PATH ({searched}); install it or give its full path in mcp.json")]
    CommandNotFound {
        /// The configured command.
        command: String,
        /// Where it was looked for.
        searched: String,
    },
    /// The child could not be started.
    #[error("cannot start `{command}`: {message}")]
    Spawn {
        /// The resolved command.
        command: String,
        /// The OS error.
        message: String,
    },
    /// The server did not complete the handshake.
    #[error("the server did not start the MCP session: {message}")]
    Handshake {
        /// What went wrong (secrets masked).
        message: String,
        /// The last lines of its stderr (stdio servers).
        stderr_tail: Vec<String>,
    },
    /// The URL serves the legacy HTTP+SSE transport only.
    #[error("{url} speaks the legacy HTTP+SSE transport, which ArtifactFlow does not support; use the server's Streamable HTTP endpoint (often `/mcp`) or a newer version of the server")]
    LegacySse {
        /// The configured URL.
        url: String,
    },
    /// The server wants authorization (OAuth).
    #[error("the server needs you to sign in (HTTP 401/403)")]
    NeedsSignIn {
        /// The `WWW-Authenticate` challenge, if any.
        challenge: Option<String>,
    },
    /// The server answered with an error.
    #[error("the server answered with an error: {0}")]
    Server(String),
    /// The connection is gone (the server exited or the session closed).
    #[error(
        "the connection to the server closed (it may have crashed; see its status and stderr)"
    )]
    Closed,
    /// No answer in time.
    #[error("no answer within {0:?}; the call was cancelled (raise `timeout` in mcp.json if the tool is slow)")]
    Timeout(Duration),
    /// The caller stopped the call.
    #[error("stopped by the user; the server was told to cancel")]
    Cancelled,
    /// The server's answer was over [`MAX_MESSAGE_BYTES`] and was dropped unread.
    #[error("the server's answer was larger than {} MB, the limit for one message, and was dropped; ask the tool for less (a smaller page, range or file)", .0 / (1024 * 1024))]
    TooLarge(usize),
    /// Anything else from the SDK.
    #[error("{0}")]
    Other(String),
}

impl From<rmcp::ServiceError> for McpError {
    fn from(e: rmcp::ServiceError) -> Self {
        use rmcp::ServiceError as E;
        if let Some(challenge) = e.auth_challenge() {
            return McpError::NeedsSignIn {
                challenge: Some(challenge.to_string()),
            };
        }
        match e {
            E::McpError(data) => McpError::Server(data.message.to_string()),
            E::TransportClosed => McpError::Closed,
            E::Timeout { timeout } => McpError::Timeout(timeout),
            E::Cancelled { .. } => McpError::Cancelled,
            other => McpError::Other(other.to_string()),
        }
    }
}

/// How to connect.
#[derive(Clone)]
pub struct ConnectOptions {
    /// Resolves `{{VAR}}` in `env` and `headers`; `None` leaves them literal.
    pub secrets: Option<Arc<SecretResolver>>,
    /// Answers elicitation requests.
    pub elicitation: Arc<dyn ElicitationHandler>,
    /// Progress, logs and list changes.
    pub notices: NoticeSink,
    /// The HTTP client for remote servers (default: [`remote_http_client`]). One given here
    /// must come from [`crate::net::client_builder`] with [`crate::net::Secrets::Carried`].
    pub http_client: Option<reqwest::Client>,
    /// A bearer token for remote servers (sent as `Authorization: Bearer …`).
    pub auth_header: Option<String>,
    /// The PATH to look commands up in (default: ours).
    pub path_env: Option<OsString>,
    /// The login shell asked for its PATH when a command is not in ours (default: `$SHELL`,
    /// else `/bin/sh`; unused on Windows).
    pub login_shell: Option<PathBuf>,
    /// Longest wait for the `initialize` handshake (default [`CONNECT_TIMEOUT`]): a server
    /// that never answers fails instead of staying "starting" forever.
    pub connect_timeout: Duration,
}

/// Default [`ConnectOptions::connect_timeout`]: generous, since `npx -y` may download the
/// server first.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(120);

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            secrets: None,
            elicitation: Arc::new(DeclineElicitation),
            notices: Arc::new(|_| {}),
            http_client: None,
            auth_header: None,
            path_env: None,
            login_shell: None,
            connect_timeout: CONNECT_TIMEOUT,
        }
    }
}

/// Cancels its token when dropped (ends the watcher tying a question to its call).
struct CancelOnDropToken(CancellationToken);

impl Drop for CancelOnDropToken {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Sends `notifications/cancelled` for a request when dropped while armed (`peer` set).
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: rmcp::model::RequestId,
    reason: &'static str,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else { return };
        let notification =
            rmcp::model::CancelledNotification::new(rmcp::model::CancelledNotificationParam::new(
                Some(self.id.clone()),
                Some(self.reason.to_string()),
            ));
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                let _ = peer.send_notification(notification.into()).await;
            });
        }
    }
}

/// A live session with one server.
pub struct McpClient {
    name: String,
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    peer: Peer<RoleClient>,
    closed: CancellationToken,
    /// Our side of the session (a clone of the one rmcp runs): its progress map, its calls in
    /// flight, and the answers to a multi round-trip call's questions.
    handler: Handler,
    stderr: Arc<StderrTail>,
    child: Option<Arc<Child>>,
    resolved: Option<ResolvedCommand>,
    timeout: Duration,
    redactor: Redactor,
    /// Told when a stdio server writes a message over the limit (rmcp drops it unread).
    oversized: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Most rounds of questions (`input_required`) one call may ask before it fails (as rmcp's
/// own helpers allow): a server cannot keep a call asking forever. The server's timeout
/// applies to each round's answer; the time the user takes to answer a form is not counted.
pub const MAX_INPUT_ROUNDS: usize = 10;

/// Connect to the server `cfg` describes.
pub async fn connect(cfg: &McpServerConfig, opts: &ConnectOptions) -> Result<McpClient, McpError> {
    match &cfg.transport {
        McpTransport::Stdio { .. } => connect_stdio(cfg, opts).await,
        McpTransport::Http { .. } => {
            // Signed in (tokens in the keyring for this URL): send them, refreshed as needed.
            if let Some(resolver) = &opts.secrets {
                if let Some(client) = super::auth::authorized_client(cfg, resolver).await {
                    return connect_http_with(cfg, opts, client).await;
                }
            }
            let client = match &opts.http_client {
                Some(client) => client.clone(),
                None => remote_http_client()?,
            };
            connect_http_with(cfg, opts, client).await
        }
    }
}

fn handler(cfg: &McpServerConfig, opts: &ConnectOptions, redactor: &Redactor) -> Handler {
    Handler {
        server: cfg.name.clone(),
        elicitation: opts.elicitation.clone(),
        notices: opts.notices.clone(),
        progress: Default::default(),
        calls: Default::default(),
        redactor: redactor.clone(),
        log_budget: Arc::new(Mutex::new(LogBudget::new(std::time::Instant::now()))),
    }
}

async fn fill(
    opts: &ConnectOptions,
    map: &indexmap::IndexMap<String, String>,
) -> (Vec<(String, String)>, Vec<String>) {
    let templates: Vec<String> = map.values().cloned().collect();
    let filled = match &opts.secrets {
        Some(resolver) => resolver.fill_async(templates.clone()).await,
        None => Vec::new(),
    };
    let mut values = Vec::new();
    let pairs = map
        .keys()
        .zip(templates)
        .enumerate()
        .map(|(i, (k, t))| match filled.get(i) {
            Some(f) => {
                values.extend(f.values.iter().cloned());
                (k.clone(), f.text.clone())
            }
            None => (k.clone(), t),
        })
        .collect();
    (pairs, values)
}

/// Why the `initialize` handshake failed.
#[derive(Debug, thiserror::Error)]
enum HandshakeError {
    #[error("the server did not answer `initialize` within {0:?} (a first `npx`/`uvx` run may need longer: see `connect_timeout`)")]
    TimedOut(Duration),
    /// Boxed: with rmcp's `auth` feature the error is large (clippy's large_enum_variant).
    #[error("{}", describe(.0))]
    Rmcp(Box<rmcp::service::ClientInitializeError>),
}

/// rmcp's error, with what each attempt said when both `server/discover` and the handshake
/// failed (rmcp's own text then only says that both failed).
fn describe(e: &rmcp::service::ClientInitializeError) -> String {
    match e {
        rmcp::service::ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
            format!("{fallback} (asked first with server/discover: {discover})")
        }
        e => e.to_string(),
    }
}

/// Start the session on `transport` with `lifecycle` ([`lifecycle::lifecycle`]: 2026-07-28 when
/// the server speaks it, else the `initialize` handshake), at most `limit`
/// ([`ConnectOptions::connect_timeout`], or what is left of it for a second attempt).
async fn handshake<T, E, A>(
    limit: Duration,
    handler: Handler,
    transport: T,
    lifecycle: rmcp::service::ClientLifecycleMode,
) -> Result<RunningService<RoleClient, Handler>, HandshakeError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let transport = lifecycle::DiscoverFallback::new(transport.into_transport());
    let serve = rmcp::service::serve_client_with_lifecycle(handler, transport, lifecycle);
    match tokio::time::timeout(limit, serve).await {
        Ok(r) => r.map_err(|e| HandshakeError::Rmcp(Box::new(e))),
        Err(_) => Err(HandshakeError::TimedOut(limit)),
    }
}

impl McpClient {
    fn new(
        cfg: &McpServerConfig,
        service: RunningService<RoleClient, Handler>,
        handler: Handler,
        stderr: Arc<StderrTail>,
        child: Option<Arc<Child>>,
        resolved: Option<ResolvedCommand>,
        redactor: Redactor,
    ) -> Self {
        let peer = service.peer().clone();
        let closed = CancellationToken::new();
        // Watch the session: when it ends (the child exited, the session closed), say so.
        let watch_peer = peer.clone();
        let watch_closed = closed.clone();
        tokio::spawn(async move {
            while !watch_peer.is_transport_closed() {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = watch_closed.cancelled() => return,
                }
            }
            watch_closed.cancel();
        });
        let client = McpClient {
            name: cfg.name.clone(),
            service: Mutex::new(Some(service)),
            peer,
            closed,
            handler,
            stderr,
            child,
            resolved,
            timeout: Duration::from_secs(cfg.timeout_secs),
            redactor,
            oversized: Arc::new(tokio::sync::Notify::new()),
        };
        client.listen_for_tool_changes();
        client
    }

    /// A 2026-07-28 server tells of changes to its tool list only on a subscription
    /// (`subscriptions/listen`): open one when it says its list may change, and pass each
    /// change on as the handler passes on an older server's notification. The subscription
    /// ends with the session.
    fn listen_for_tool_changes(&self) {
        let Some(info) = self.peer.peer_info() else {
            return;
        };
        let may_change = info
            .capabilities
            .tools
            .as_ref()
            .and_then(|t| t.list_changed)
            .unwrap_or(false);
        if lifecycle::is_legacy(info.protocol_version.as_str()) || !may_change {
            return;
        }
        let (peer, closed) = (self.peer.clone(), self.closed.clone());
        let (notices, server) = (self.handler.notices.clone(), self.name.clone());
        let redactor = self.redactor.clone();
        tokio::spawn(async move {
            // A stream that ends (the server ended it, a proxy cut it) is opened again, after
            // a pause that grows while it keeps failing; each one starts with a refresh, for a
            // change made while none was open (the first listing runs beside the first one).
            let mut pause = Duration::from_secs(1);
            while !closed.is_cancelled() {
                let filter = rmcp::model::SubscriptionFilter::builder()
                    .tools_list_changed()
                    .build();
                let opened = tokio::select! {
                    opened = tokio::time::timeout(Duration::from_secs(30), peer.listen(filter)) => opened,
                    _ = closed.cancelled() => return,
                };
                match opened {
                    Ok(Ok(mut subscription)) => {
                        notices(McpNotice::ToolsChanged {
                            server: server.clone(),
                        });
                        pause = Duration::from_secs(1);
                        let ended = loop {
                            tokio::select! {
                                next = subscription.next() => match next {
                                    Ok(Some(rmcp::model::ServerNotification::ToolListChangedNotification(_))) => {
                                        notices(McpNotice::ToolsChanged { server: server.clone() })
                                    }
                                    Ok(Some(_)) => {}
                                    Ok(None) => break "the server ended it".to_string(),
                                    Err(e) => break e.to_string(),
                                },
                                _ = closed.cancelled() => return,
                            }
                        };
                        tracing::info!(server = %server, "the subscription to tool list changes ended ({}): opening it again", redactor.redact(&ended));
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(server = %server, "could not subscribe to the server's tool list changes: {}", redactor.redact(&e.to_string()))
                    }
                    Err(_) => {
                        tracing::warn!(server = %server, "the server did not acknowledge the subscription to its tool list changes within 30 s")
                    }
                }
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = closed.cancelled() => return,
                }
                pause = (pause * 2).min(Duration::from_secs(60));
            }
        });
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the command was found (stdio servers).
    pub fn resolved_command(&self) -> Option<&ResolvedCommand> {
        self.resolved.as_ref()
    }

    /// The child's process id (stdio servers).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.pid)
    }

    /// The last lines of the server's stderr (stdio servers), secrets masked.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.get()
    }

    /// `text` from the server with the values of the secrets its configuration uses masked
    /// (as in its results and errors).
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    /// The server's name and version as it introduced itself.
    pub fn server_info(&self) -> Option<(String, String)> {
        self.peer.peer_info().and_then(|i| {
            i.server_info
                .as_ref()
                .map(|s| (s.name.clone(), s.version.clone()))
        })
    }

    /// The protocol version the session speaks: 2026-07-28 when the server answered
    /// `server/discover`, else the one it answered `initialize` with.
    /// A server's answer that is not a version (a date, `YYYY-MM-DD`) is not shown.
    pub fn protocol_version(&self) -> Option<String> {
        let info = self.peer.peer_info()?;
        let version = info.protocol_version.as_str();
        let is_date = version.len() == 10
            && version.char_indices().all(|(i, c)| {
                if i == 4 || i == 7 {
                    c == '-'
                } else {
                    c.is_ascii_digit()
                }
            });
        is_date.then(|| version.to_string())
    }

    /// The instructions the server gave at initialisation, if any.
    pub fn instructions(&self) -> Option<String> {
        self.peer.peer_info().and_then(|i| i.instructions.clone())
    }

    /// Has the session ended?
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled() || self.peer.is_transport_closed()
    }

    /// Resolves when the session ends (the server exited, crashed or closed it).
    pub async fn closed(&self) {
        self.closed.cancelled().await
    }

    /// The tools the server offers, page after page, at most [`MAX_TOOLS`] of them and
    /// [`MAX_TOOL_LIST_BYTES`] of definitions from at most [`MAX_TOOL_PAGES`] pages (a server
    /// that pages on forever, or lists thousands of tools, can fill neither the memory nor the
    /// model's window): past a limit, or at a cursor given twice, the listing stops with a
    /// warning naming the server, and the tools listed so far are kept.
    pub async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        let listing = async {
            let mut tools = Vec::new();
            let mut bytes = 0usize;
            let mut cursors = std::collections::HashSet::new();
            let mut cursor: Option<String> = None;
            for page in 1..=MAX_TOOL_PAGES {
                let params =
                    rmcp::model::PaginatedRequestParams::default().with_cursor(cursor.take());
                let result = self.peer.list_tools(Some(params)).await?;
                let mut over = None;
                for tool in result.tools {
                    bytes += serde_json::to_vec(&tool).map(|v| v.len()).unwrap_or(0);
                    if tools.len() == MAX_TOOLS {
                        over = Some(format!("it lists more than {MAX_TOOLS} tools"));
                    } else if bytes > MAX_TOOL_LIST_BYTES {
                        over = Some(format!(
                            "its tools take more than {} MB",
                            MAX_TOOL_LIST_BYTES / (1024 * 1024)
                        ));
                    }
                    if over.is_some() {
                        break;
                    }
                    tools.push(tool);
                }
                let stop = if over.is_some() {
                    over
                } else {
                    match result.next_cursor {
                        None => return Ok(tools),
                        Some(next) if !cursors.insert(next.clone()) => {
                            Some(format!("page {page} gave a cursor it had given before"))
                        }
                        Some(_) if page == MAX_TOOL_PAGES => {
                            Some(format!("it has more than {MAX_TOOL_PAGES} pages of tools"))
                        }
                        Some(next) => {
                            cursor = Some(next);
                            None
                        }
                    }
                };
                if let Some(why) = stop {
                    tracing::warn!(
                        server = %self.name,
                        "tools/list stopped after {page} pages: {why}; the first {} tools are used",
                        tools.len()
                    );
                    return Ok(tools);
                }
            }
            Ok::<_, rmcp::ServiceError>(tools)
        };
        let tools = tokio::time::timeout(self.timeout, listing)
            .await
            .map_err(|_| McpError::Timeout(self.timeout))??;
        Ok(tools)
    }

    /// Read a resource by URI.
    pub async fn read_resource(
        &self,
        uri: &str,
    ) -> Result<rmcp::model::ReadResourceResult, McpError> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        Ok(
            tokio::time::timeout(self.timeout, self.peer.read_resource(params))
                .await
                .map_err(|_| McpError::Timeout(self.timeout))??,
        )
    }

    /// Call the tool `name` (its real name on the server). The server's timeout applies;
    /// `cancel` stops it; both send `notifications/cancelled`. `progress` receives the call's
    /// progress notifications.
    pub async fn call_tool(
        &self,
        name: &str,
        args: Map<String, Value>,
        cancel: &CancellationToken,
        progress: Option<ProgressFn>,
    ) -> Result<CallToolResult, McpError> {
        self.call_tool_from(name, args, cancel, progress, None)
            .await
    }

    /// [`McpClient::call_tool`] made by `origin` (the gate's call), which a form the server
    /// asks for during the call names; the form is cancelled when the call ends.
    pub async fn call_tool_from(
        &self,
        name: &str,
        args: Map<String, Value>,
        cancel: &CancellationToken,
        progress: Option<ProgressFn>,
        origin: Option<CallOrigin>,
    ) -> Result<CallToolResult, McpError> {
        let _in_flight = self.handler.calls.enter(origin);
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = Some(args);
        // A 2026-07-28 server may answer `input_required`: its questions are answered here
        // (a form goes to the user as a server's question during a call does), and the call
        // is sent again, a new request, with the answers and the server's state as it gave
        // it. Nothing of one call's rounds reaches another call.
        let mut waits = 0u32;
        for _ in 0..MAX_INPUT_ROUNDS {
            match self
                .call_round(params.clone(), cancel, progress.clone())
                .await?
            {
                ServerResult::CallToolResult(result) => {
                    return Ok(redact_result(&self.redactor, &self.name, result))
                }
                ServerResult::InputRequiredResult(asked) => {
                    let requests = asked.input_requests.unwrap_or_default();
                    if requests.is_empty() && asked.request_state.is_none() {
                        return Err(McpError::Other(
                            "the server asked for input without saying what it needs".into(),
                        ));
                    }
                    if requests.is_empty() {
                        // Only its state: the server is not ready yet. Wait a little longer
                        // each time (50 ms, doubling, at most 250 ms) before asking again.
                        let wait = Duration::from_millis(50 << waits.min(3))
                            .min(Duration::from_millis(250));
                        waits += 1;
                        tokio::select! {
                            _ = tokio::time::sleep(wait) => {}
                            _ = cancel.cancelled() => return Err(McpError::Cancelled),
                            _ = self.closed.cancelled() => return Err(McpError::Closed),
                        }
                    }
                    let answers = tokio::select! {
                        answers = self.answer_input_requests(requests) => answers?,
                        _ = cancel.cancelled() => return Err(McpError::Cancelled),
                        _ = self.closed.cancelled() => return Err(McpError::Closed),
                    };
                    params.input_responses = (!answers.is_empty()).then_some(answers);
                    params.request_state = asked.request_state;
                }
                other => {
                    return Err(McpError::Other(format!(
                        "the server answered tools/call with an unexpected result: {}",
                        self.redactor
                            .redact(&serde_json::to_string(&other).unwrap_or_default())
                            .chars()
                            .take(200)
                            .collect::<String>()
                    )))
                }
            }
        }
        Err(McpError::Other(format!(
            "the server asked for more input {MAX_INPUT_ROUNDS} times without answering the call"
        )))
    }

    /// Answer a multi round-trip call's questions, each by its key: a form through the
    /// elicitation handler (as a question asked during a call), roots as the session answers
    /// them; sampling is refused (the user's model is not lent to servers).
    async fn answer_input_requests(
        &self,
        requests: rmcp::model::InputRequests,
    ) -> Result<rmcp::model::InputResponses, McpError> {
        use rmcp::handler::client::ClientHandler as _;
        use rmcp::model::InputRequest;
        let mut answers = rmcp::model::InputResponses::new();
        for (key, request) in requests {
            let context = rmcp::service::RequestContext::new(
                rmcp::model::NumberOrString::String(key.clone().into()),
                self.peer.clone(),
            );
            let answer = match request {
                InputRequest::Elicitation(asked) => self
                    .handler
                    .create_elicitation(asked.params, context)
                    .await
                    .map(|a| serde_json::to_value(a).unwrap_or_default()),
                InputRequest::ListRoots(_) => self
                    .handler
                    .list_roots(context)
                    .await
                    .map(|a| serde_json::to_value(a).unwrap_or_default()),
                InputRequest::CreateMessage(asked) => self
                    .handler
                    .create_message(asked.params, context)
                    .await
                    .map(|a| serde_json::to_value(a).unwrap_or_default()),
                #[allow(unreachable_patterns)]
                _ => Err(rmcp::ErrorData::invalid_request(
                    "ArtifactFlow cannot answer this kind of request",
                    None,
                )),
            };
            // Our own refusal (sampling), not the server's error.
            let answer = answer.map_err(|e| {
                McpError::Other(format!(
                    "the server's question was not answered: {}",
                    e.message
                ))
            })?;
            answers.insert(key, answer);
        }
        Ok(answers)
    }

    /// One `tools/call` request of a call, with its timeout, cancellation and progress.
    async fn call_round(
        &self,
        params: CallToolRequestParams,
        cancel: &CancellationToken,
        progress: Option<ProgressFn>,
    ) -> Result<ServerResult, McpError> {
        if self.is_closed() {
            return Err(McpError::Closed);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer
            .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
            .await?;
        let token = handle.progress_token.clone();
        if let Some(p) = progress {
            self.progress_map().insert(token.clone(), p);
        }
        // Armed until the answer arrives: a cancel, a timeout or the caller dropping this
        // future (the gate's stop) all tell the server with notifications/cancelled.
        let mut guard = CancelOnDrop {
            peer: Some(handle.peer.clone()),
            id: handle.id.clone(),
            reason: "stopped by the user",
        };
        let outcome = {
            let response = handle.await_response();
            tokio::pin!(response);
            tokio::select! {
                r = &mut response => r.map_err(McpError::from),
                _ = cancel.cancelled() => Err(McpError::Cancelled),
                _ = tokio::time::sleep(self.timeout) => Err(McpError::Timeout(self.timeout)),
                _ = self.closed.cancelled() => Err(McpError::Closed),
                _ = self.oversized.notified() => Err(McpError::TooLarge(MAX_MESSAGE_BYTES)),
            }
        };
        if outcome.is_ok() {
            // rmcp runs each notification handler on its own task: let a progress report
            // that arrived just before the answer reach its watcher first.
            tokio::task::yield_now().await;
        }
        self.progress_map().remove(&token);
        if let Err(McpError::NeedsSignIn {
            challenge: Some(challenge),
        }) = &outcome
        {
            // Refused for lack of access: the next sign-in asks for it (step-up).
            super::auth::remember_challenge(&self.name, challenge);
        }
        match &outcome {
            Err(McpError::Timeout(_)) => guard.reason = "timed out",
            Err(McpError::TooLarge(_)) => guard.reason = "its answer was over the size limit",
            Err(McpError::Cancelled) => {}
            _ => guard.peer = None,
        }
        drop(guard);
        outcome.map_err(|e| match e {
            McpError::Server(message) => McpError::Server(self.redactor.redact(&message)),
            McpError::Other(message) => McpError::Other(self.redactor.redact(&message)),
            e => e,
        })
    }

    fn progress_map(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, ProgressFn>> {
        self.handler
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// End the session: close it, give a stdio child a moment to exit, then kill its group.
    pub async fn shutdown(&self) {
        self.closed.cancel();
        let service = self
            .service
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(mut service) = service {
            let _ = service.close_with_timeout(Duration::from_secs(2)).await;
        }
        if let Some(child) = &self.child {
            child.kill();
        }
    }

    /// Kill a stdio child now, synchronously (its whole process group).
    pub fn kill(&self) {
        self.closed.cancel();
        if let Some(child) = &self.child {
            child.kill();
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::handler::Admit;
    use super::*;

    #[test]
    fn server_text_is_masked_escaped_and_cut() {
        let redactor = Redactor::new(["sk-abcdef123456".to_string()]);
        let text = clean_server_text(
            &redactor,
            "key sk-abcdef123456\n2026-01-01 INFO forged\r\t\u{1b}[31m\u{2028}end",
            MAX_LOG_CHARS,
        );
        assert_eq!(
            text,
            "key ••••••\\n2026-01-01 INFO forged\\r\\t\\u{1b}[31m\\u{2028}end"
        );
        let long = "é".repeat(3000);
        let cut = clean_server_text(&redactor, &long, 100);
        assert!(cut.starts_with(&"é".repeat(100)), "{cut}");
        assert!(cut.ends_with(" … (cut: 6000 bytes in all)"), "{cut}");
        // A secret straddling the cut is masked whole, not shown in part.
        let straddling = format!("{}sk-abcdef123456", "x".repeat(95));
        let cut = clean_server_text(&redactor, &straddling, 100);
        assert!(!cut.contains("sk-ab"), "{cut}");
    }

    #[test]
    fn log_messages_beyond_the_burst_are_dropped_until_the_budget_refills() {
        let start = std::time::Instant::now();
        let mut budget = LogBudget::new(start);
        for _ in 0..LOG_BURST as usize {
            assert_eq!(budget.admit(start), Admit::Yes { dropped: 0 });
        }
        assert_eq!(budget.admit(start), Admit::FirstDrop);
        assert_eq!(budget.admit(start), Admit::Drop);
        // One message's worth of time later, one more goes through and tells of the two.
        let later = start + Duration::from_secs_f64(1.0 / LOG_PER_SECOND);
        assert_eq!(budget.admit(later), Admit::Yes { dropped: 2 });
        assert_eq!(budget.admit(later), Admit::FirstDrop);
    }
}
