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
//!   output; log and progress text is escaped (a newline cannot forge a log line) and cut
//!   ([`clean_server_text`]), and each server's log messages are rate limited ([`LOG_BURST`],
//!   [`LOG_PER_SECOND`]);
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

use std::collections::{HashMap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientRequest,
    CreateMessageRequestParams, CreateMessageResult, CustomNotification, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, ErrorData, FormElicitationCapability,
    Implementation, InitializeRequestParams, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, ServerResult, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
    StreamableHttpError,
};
use rmcp::ClientHandler;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::config::{McpServerConfig, McpTransport};
use crate::secrets::{Redactor, SecretResolver};
use crate::tools::CallOrigin;

/// Largest message accepted from a server (one stdio line, one SSE event, one JSON body):
/// the model streams' event limit ([`crate::limits::StreamLimits`]) times four, since a tool
/// result may carry an image.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Lines of a server's stderr kept for its status.
pub const STDERR_LINES: usize = 40;

/// Longest text kept of one server log message, in characters after escaping.
pub const MAX_LOG_CHARS: usize = 2000;

/// Longest progress message kept, in characters after escaping.
pub const MAX_PROGRESS_CHARS: usize = 500;

/// Log messages one server may send at once before [`LOG_PER_SECOND`] applies.
pub const LOG_BURST: f64 = 50.0;

/// Log messages per second one server may send after its burst; the others are dropped (and
/// counted in a warning), so a flood cannot fill the disk or the window's event queue.
pub const LOG_PER_SECOND: f64 = 5.0;

/// How much of a server's text is looked at for secrets before it is cut: far more than is
/// kept, so a secret at the cut is masked whole rather than half shown.
const SCANNED_BYTES: usize = 64 * 1024;

/// A server's words as we keep them (a log message, a progress message): its secrets masked,
/// control characters escaped (`\n`, `\r`, `\t`, `\u{1b}`, also U+2028 and U+2029), so the
/// text stays on one line and cannot forge a log line or drive a terminal, and cut to
/// `max_chars` with a note of the full size.
pub fn clean_server_text(redactor: &Redactor, text: &str, max_chars: usize) -> String {
    let mut end = text.len().min(SCANNED_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let masked = redactor.redact(&text[..end]);
    let mut out = String::new();
    let mut kept = 0;
    let mut cut = end < text.len();
    for c in masked.chars() {
        let escaped = match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\\t".to_string(),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                format!("\\u{{{:x}}}", c as u32)
            }
            c => c.to_string(),
        };
        let n = escaped.chars().count();
        if kept + n > max_chars {
            cut = true;
            break;
        }
        kept += n;
        out.push_str(&escaped);
    }
    if cut {
        out.push_str(&format!(" … (cut: {} bytes in all)", text.len()));
    }
    out
}

/// One server's allowance of log messages: a token bucket of [`LOG_BURST`] refilled at
/// [`LOG_PER_SECOND`].
struct LogBudget {
    tokens: f64,
    refilled: std::time::Instant,
    /// Messages dropped since the last one let through.
    dropped: u64,
}

/// What [`LogBudget::admit`] decided.
#[derive(Debug, PartialEq)]
enum Admit {
    /// Log it; `dropped` messages were dropped just before.
    Yes { dropped: u64 },
    /// Drop it: the first of a run of dropped messages.
    FirstDrop,
    /// Drop it.
    Drop,
}

impl LogBudget {
    fn new(now: std::time::Instant) -> Self {
        LogBudget {
            tokens: LOG_BURST,
            refilled: now,
            dropped: 0,
        }
    }

    fn admit(&mut self, now: std::time::Instant) -> Admit {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * LOG_PER_SECOND).min(LOG_BURST);
        self.refilled = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Admit::Yes {
                dropped: std::mem::take(&mut self.dropped),
            }
        } else {
            self.dropped += 1;
            if self.dropped == 1 {
                Admit::FirstDrop
            } else {
                Admit::Drop
            }
        }
    }
}

/// `result` with `redactor`'s secrets masked in every text it holds (text blocks, text
/// resources, links, structured content, metadata); base64 data (images, audio, blobs) is left
/// as is.
fn redact_result(redactor: &Redactor, result: CallToolResult) -> CallToolResult {
    fn walk(redactor: &Redactor, value: &mut Value) {
        match value {
            Value::String(s) => {
                let masked = redactor.redact(s);
                if masked != *s {
                    *s = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(redactor, v)),
            Value::Object(map) => {
                let binary = matches!(
                    map.get("type").and_then(Value::as_str),
                    Some("image" | "audio")
                );
                let resource = map.contains_key("uri");
                for (key, v) in map.iter_mut() {
                    if (binary && key == "data") || (resource && key == "blob") {
                        continue;
                    }
                    walk(redactor, v);
                }
            }
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::to_value(&result) else {
        return result;
    };
    walk(redactor, &mut value);
    serde_json::from_value(value).unwrap_or_else(|e| {
        tracing::warn!("an MCP result could not be read back after masking: {e}");
        CallToolResult::error(vec![rmcp::model::ContentBlock::text(
            "the server's result could not be checked for secrets and was withheld",
        )])
    })
}

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

/// A form (or URL) a server asks the user to fill in during a call.
#[derive(Debug, Clone)]
pub struct ElicitationRequest {
    /// The server asking.
    pub server: String,
    /// What it says.
    pub message: String,
    /// The requested JSON Schema (flat object of primitive properties); `None` for a URL request.
    pub schema: Option<Value>,
    /// For a URL request: the page to open.
    pub url: Option<String>,
    /// For a URL request: the server's id for it, which its
    /// `notifications/elicitation/complete` names when the interaction finished out of band.
    pub elicitation_id: Option<String>,
    /// The call it came from, when known: the server's one call in flight (the protocol does
    /// not say which call a request belongs to, so with several in flight it stays unknown).
    pub origin: Option<CallOrigin>,
    /// Cancelled when the question no longer matters: the server withdrew it, or the call it
    /// came from ended (finished, timed out, or stopped by the user).
    pub cancel: CancellationToken,
}

/// The calls in flight on one session, each with who made it and a token cancelled when it
/// ends, so a server's question can be tied to its call.
#[derive(Default)]
struct InFlight {
    next: std::sync::atomic::AtomicU64,
    calls: Mutex<Vec<(u64, Option<CallOrigin>, CancellationToken)>>,
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Option<CallOrigin>, CancellationToken)>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Register a call until the returned guard drops.
    fn enter(self: &Arc<Self>, origin: Option<CallOrigin>) -> InFlightGuard {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token = CancellationToken::new();
        self.lock().push((id, origin, token.clone()));
        InFlightGuard {
            calls: self.clone(),
            id,
            token,
        }
    }

    /// The calls in flight, `None` when there is none: the origin of the one call when there
    /// is exactly one (with several, which one asks is unknown), and every call's end token.
    fn current(&self) -> Option<(Option<CallOrigin>, Vec<CancellationToken>)> {
        let calls = self.lock();
        let origin = match calls.as_slice() {
            [] => return None,
            [(_, origin, _)] => origin.clone(),
            _ => None,
        };
        Some((origin, calls.iter().map(|(_, _, t)| t.clone()).collect()))
    }
}

struct InFlightGuard {
    calls: Arc<InFlight>,
    id: u64,
    token: CancellationToken,
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.token.cancel();
        self.calls.lock().retain(|(id, _, _)| *id != self.id);
    }
}

/// The user's answer to an [`ElicitationRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Sent with these values.
    Accept(Map<String, Value>),
    /// Refused.
    Decline,
    /// Dismissed.
    Cancel,
}

/// Answers servers' elicitation requests: the CLI prompts (or accepts defaults), the app shows
/// a form. [`DeclineElicitation`] is the default.
#[async_trait::async_trait]
pub trait ElicitationHandler: Send + Sync {
    /// Answer one request.
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer;

    /// The server `server` says the URL request `elicitation_id` was completed out of band
    /// (`notifications/elicitation/complete`): a prompt still open for it has nothing left to
    /// ask. Nothing by default.
    fn completed(&self, _server: &str, _elicitation_id: &str) {}
}

/// Declines every request (until the app's form exists).
pub struct DeclineElicitation;

#[async_trait::async_trait]
impl ElicitationHandler for DeclineElicitation {
    async fn elicit(&self, _request: ElicitationRequest) -> ElicitationAnswer {
        ElicitationAnswer::Decline
    }
}

/// Accepts every form with the schema's defaults (`artifactflow-cli --accept-defaults`).
pub struct AcceptDefaults;

#[async_trait::async_trait]
impl ElicitationHandler for AcceptDefaults {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        match request.schema {
            Some(schema) => ElicitationAnswer::Accept(schema_defaults(&schema)),
            None => ElicitationAnswer::Decline,
        }
    }
}

/// The `default` of every property of an elicitation schema.
pub fn schema_defaults(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter_map(|(k, p)| Some((k.clone(), p.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// Something a server said outside a call's result.
#[derive(Debug, Clone, PartialEq)]
pub enum McpNotice {
    /// Progress of a running call.
    Progress {
        /// The server.
        server: String,
        /// The progress so far.
        progress: f64,
        /// Out of, if known.
        total: Option<f64>,
        /// Its message, if any.
        message: Option<String>,
    },
    /// A log message (also written to the app log through `tracing`).
    Log {
        /// The server.
        server: String,
        /// `debug` … `emergency`.
        level: String,
        /// Its text.
        text: String,
    },
    /// The server's tool list changed (the hub refreshes it).
    ToolsChanged {
        /// The server.
        server: String,
    },
}

/// Where [`McpNotice`]s go.
pub type NoticeSink = Arc<dyn Fn(McpNotice) + Send + Sync>;

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

/// Where a stdio server's command was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCommand {
    /// The program that runs.
    pub path: PathBuf,
    /// The PATH the child gets (ours, or the login shell's when that is where it was found).
    pub path_env: OsString,
    /// Found through the login shell's PATH rather than ours.
    pub from_login_shell: bool,
}

/// Find `command`: a path is used as is; a bare name is looked up in `path_env`, then in the
/// PATH printed by `login_shell -l -c` (macOS GUI apps do not inherit the shell's PATH).
pub fn resolve_command(
    command: &str,
    path_env: &OsStr,
    login_shell: Option<&Path>,
    cwd: &Path,
) -> Result<ResolvedCommand, McpError> {
    if Path::new(command).components().count() > 1 {
        return Ok(ResolvedCommand {
            path: cwd.join(command),
            path_env: path_env.to_os_string(),
            from_login_shell: false,
        });
    }
    if let Ok(path) = which::which_in(command, Some(path_env), cwd) {
        return Ok(ResolvedCommand {
            path,
            path_env: path_env.to_os_string(),
            from_login_shell: false,
        });
    }
    let shell_path = login_shell.and_then(login_shell_path);
    if let Some(shell_path) = &shell_path {
        if let Ok(path) = which::which_in(command, Some(shell_path), cwd) {
            return Ok(ResolvedCommand {
                path,
                path_env: shell_path.clone(),
                from_login_shell: true,
            });
        }
    }
    Err(McpError::CommandNotFound {
        command: command.to_string(),
        searched: match (&shell_path, login_shell) {
            (Some(_), Some(shell)) => format!("ours and {}'s login PATH", shell.display()),
            _ => "ours".to_string(),
        },
    })
}

/// The PATH a login shell sets up (`$SHELL -l -c 'printf %s "$PATH"'`), at most 5 s.
fn login_shell_path(shell: &Path) -> Option<OsString> {
    if cfg!(windows) {
        return None;
    }
    let mut child = std::process::Command::new(shell)
        .args(["-l", "-c", "printf %s \"$PATH\""])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::warn!(shell = %shell.display(), "the login shell did not print its PATH in time");
                return None;
            }
        }
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(child.stdout.as_mut()?, &mut out).ok()?;
    let text = String::from_utf8(out).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| OsString::from(text))
}

/// Variables a stdio server gets from our environment; everything else (API keys in the
/// user's shell, our own settings) stays out. `LC_*` is added by prefix.
pub const INHERITED_ENV: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "XDG_RUNTIME_DIR",
    // Windows: programs fail without these.
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "HOMEDRIVE",
    "HOMEPATH",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
];

/// The environment of a stdio child: [`INHERITED_ENV`] and `LC_*` from ours, `PATH`, then the
/// configured `env` (already resolved).
pub fn child_env(path_env: &OsStr, configured: &[(String, String)]) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            k.starts_with("LC_") || INHERITED_ENV.iter().any(|n| n.eq_ignore_ascii_case(&k))
        })
        .collect();
    env.push(("PATH".into(), path_env.to_os_string()));
    for (k, v) in configured {
        env.retain(|(ek, _)| ek != k.as_str());
        env.push((k.into(), v.into()));
    }
    env
}

/// The last lines of a child's stderr, secrets masked.
#[derive(Default)]
struct StderrTail {
    lines: Mutex<VecDeque<String>>,
}

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    fn get(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

/// The notification a server sends when a URL request's interaction finished.
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";

/// Our side of the session: answers the server's requests and routes its notifications.
struct Handler {
    server: String,
    elicitation: Arc<dyn ElicitationHandler>,
    notices: NoticeSink,
    /// Progress of calls in flight, by progress token.
    progress: Arc<Mutex<HashMap<ProgressToken, ProgressFn>>>,
    /// The calls in flight, for the origin of an elicitation.
    calls: Arc<InFlight>,
    /// Masks the server's secrets in its progress and log messages.
    redactor: Redactor,
    /// Its log messages' rate limit.
    log_budget: Mutex<LogBudget>,
}

/// Receives one call's progress.
pub type ProgressFn = Arc<dyn Fn(f64, Option<f64>, Option<String>) + Send + Sync>;

impl ClientHandler for Handler {
    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        tracing::info!(server = %self.server, "declined a sampling request");
        Err(ErrorData::invalid_request(
            "ArtifactFlow does not support sampling requests yet: the user's model is not lent to MCP servers",
            None,
        ))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        // A question belongs to a call of this server: one asked with none in flight (before
        // the first call, between calls, after the last) is declined and never reaches the
        // user, so a server cannot put up a form whenever it likes.
        let Some((origin, calls)) = self.calls.current() else {
            tracing::info!(
                server = %self.server,
                "declined an elicitation asked with no call of the server in flight"
            );
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        // The server's withdrawal (notifications/cancelled) or the end of the call it came
        // from (of every call in flight, when it is not known which) cancels the question.
        let cancel = context.ct.child_token();
        {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                let calls_ended = async {
                    for call in &calls {
                        call.cancelled().await;
                    }
                };
                tokio::select! {
                    _ = calls_ended => cancel.cancel(),
                    _ = cancel.cancelled() => {}
                }
            });
        }
        let answered = CancelOnDropToken(cancel.clone());
        let request = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => ElicitationRequest {
                server: self.server.clone(),
                message,
                schema: serde_json::to_value(requested_schema).ok(),
                url: None,
                elicitation_id: None,
                origin,
                cancel,
            },
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } => ElicitationRequest {
                server: self.server.clone(),
                message,
                schema: None,
                url: Some(url),
                elicitation_id: Some(elicitation_id),
                origin,
                cancel,
            },
            #[allow(unreachable_patterns)]
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        let answer = self.elicitation.elicit(request).await;
        drop(answered);
        Ok(match answer {
            ElicitationAnswer::Accept(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
            }
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let watcher = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&params.progress_token)
            .cloned();
        let message = params
            .message
            .map(|m| clean_server_text(&self.redactor, &m, MAX_PROGRESS_CHARS));
        if let Some(watcher) = watcher {
            watcher(params.progress, params.total, message.clone());
        }
        (self.notices)(McpNotice::Progress {
            server: self.server.clone(),
            progress: params.progress,
            total: params.total,
            message,
        });
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let admitted = self
            .log_budget
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .admit(std::time::Instant::now());
        match admitted {
            Admit::Yes { dropped: 0 } => {}
            Admit::Yes { dropped } => {
                tracing::warn!(server = %self.server, dropped, "log messages from the server were dropped: it sent them too fast");
            }
            Admit::FirstDrop => {
                tracing::warn!(server = %self.server, "the server sends more than {LOG_PER_SECOND} log messages a second: they are dropped until it slows down");
                return;
            }
            Admit::Drop => return,
        }
        let text = match &params.data {
            Value::String(s) => clean_server_text(&self.redactor, s, MAX_LOG_CHARS),
            other => clean_server_text(&self.redactor, &other.to_string(), MAX_LOG_CHARS),
        };
        let level = format!("{:?}", params.level).to_ascii_lowercase();
        match params.level {
            LoggingLevel::Debug => tracing::debug!(server = %self.server, "{text}"),
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(server = %self.server, "{text}")
            }
            LoggingLevel::Warning => tracing::warn!(server = %self.server, "{text}"),
            _ => tracing::error!(server = %self.server, level, "{text}"),
        }
        (self.notices)(McpNotice::Log {
            server: self.server.clone(),
            level,
            text,
        });
    }

    /// `notifications/elicitation/complete` (spec 2025-11-25), which rmcp does not model: the
    /// URL request it names is done.
    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method != ELICITATION_COMPLETE {
            return;
        }
        let id = notification
            .params
            .as_ref()
            .and_then(|p| p.get("elicitationId"))
            .and_then(Value::as_str);
        match id {
            Some(id) => self.elicitation.completed(&self.server, id),
            None => {
                tracing::warn!(server = %self.server, "{ELICITATION_COMPLETE} without an elicitationId")
            }
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.notices)(McpNotice::ToolsChanged {
            server: self.server.clone(),
        });
    }

    fn get_info(&self) -> InitializeRequestParams {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new())
                .with_url(UrlElicitationCapability::new()),
        );
        // rmcp's default version (its LATEST, 2026-07-28) has no `initialize` handshake any
        // more; the handshake names the newest version that has one (2025-11-25).
        InitializeRequestParams::new(
            capabilities,
            Implementation::new("artifactflow", crate::VERSION),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// The child process of a stdio server: killed (its whole process group) when dropped.
struct Child {
    inner: Mutex<Option<Box<dyn process_wrap::tokio::ChildWrapper>>>,
    pid: Option<u32>,
}

impl Child {
    fn kill(&self) {
        if let Some(mut child) = self.inner.lock().unwrap_or_else(|p| p.into_inner()).take() {
            // Synchronous: SIGKILL to the group (Unix) / terminate the job (Windows).
            if let Err(e) = child.start_kill() {
                tracing::debug!("killing an MCP server: {e}");
            }
            // Reap it (and the group) without blocking the caller.
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = child.wait().await;
                });
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
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
    progress: Arc<Mutex<HashMap<ProgressToken, ProgressFn>>>,
    calls: Arc<InFlight>,
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
        log_budget: Mutex::new(LogBudget::new(std::time::Instant::now())),
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

async fn connect_stdio(
    cfg: &McpServerConfig,
    opts: &ConnectOptions,
) -> Result<McpClient, McpError> {
    let McpTransport::Stdio {
        command,
        args,
        env,
        cwd,
    } = &cfg.transport
    else {
        unreachable!("connect_stdio is only called for stdio servers")
    };
    let our_path = opts
        .path_env
        .clone()
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    let shell = opts.login_shell.clone().or_else(|| {
        Some(std::env::var_os("SHELL").map_or_else(|| PathBuf::from("/bin/sh"), PathBuf::from))
    });
    let dir = cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let (command_s, shell_c) = (command.clone(), shell.clone());
    let (our_path_c, dir_c) = (our_path.clone(), dir.clone());
    let resolved = tokio::task::spawn_blocking(move || {
        resolve_command(&command_s, &our_path_c, shell_c.as_deref(), &dir_c)
    })
    .await
    .map_err(|e| McpError::Other(e.to_string()))??;
    let (configured, secret_values) = fill(opts, env).await;
    let redactor = Redactor::new(secret_values);

    let mut cmd = tokio::process::Command::new(&resolved.path);
    cmd.args(args)
        .env_clear()
        .envs(child_env(&resolved.path_env, &configured))
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut wrap = process_wrap::tokio::CommandWrap::from(cmd);
    #[cfg(unix)]
    wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    wrap.wrap(process_wrap::tokio::JobObject);
    let mut child = wrap.spawn().map_err(|e| McpError::Spawn {
        command: resolved.path.display().to_string(),
        message: if resolved.path.is_dir() {
            "it is a folder, not a program; give the program's path in mcp.json".into()
        } else {
            e.to_string()
        },
    })?;
    let pid = child.id();
    let stdin = child.stdin().take();
    let stdout = child.stdout().take();
    let stderr = child.stderr().take();
    let child = Arc::new(Child {
        inner: Mutex::new(Some(child)),
        pid,
    });
    let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
        return Err(McpError::Spawn {
            command: resolved.path.display().to_string(),
            message: "its stdin/stdout could not be opened".into(),
        });
    };
    let tail = Arc::new(StderrTail::default());
    if let Some(stderr) = stderr {
        spawn_stderr_reader(cfg.name.clone(), stderr, tail.clone(), redactor.clone());
    }
    tracing::info!(server = %cfg.name, command = %resolved.path.display(), login_shell = resolved.from_login_shell, pid, "starting MCP server");
    let oversized = Arc::new(tokio::sync::Notify::new());
    let stdout = LineWatch {
        inner: stdout,
        since_newline: 0,
        oversized: oversized.clone(),
    };
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin)
        .with_max_line_length(MAX_MESSAGE_BYTES);
    let h = handler(cfg, opts, &redactor);
    let (progress, calls) = (h.progress.clone(), h.calls.clone());
    let service = match handshake(opts, rmcp::serve_client(h, transport)).await {
        Ok(s) => s,
        Err(e) => {
            // Give stderr a moment to arrive: it usually says why.
            tokio::time::sleep(Duration::from_millis(100)).await;
            child.kill();
            return Err(McpError::Handshake {
                message: redactor.redact(&e.to_string()),
                stderr_tail: tail.get(),
            });
        }
    };
    let mut client = McpClient::new(
        cfg,
        service,
        (progress, calls),
        tail,
        Some(child),
        Some(resolved),
        redactor,
    );
    client.oversized = oversized;
    Ok(client)
}

/// A server's stdout, watched for a line over [`MAX_MESSAGE_BYTES`]: rmcp drops such a line
/// with only a log entry, so the call it answered would wait for its timeout. The watch tells
/// the calls in flight at once.
struct LineWatch<R> {
    inner: R,
    since_newline: usize,
    oversized: Arc<tokio::sync::Notify>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for LineWatch<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = &buf.filled()[before..];
        if !read.is_empty() {
            let was = self.since_newline;
            self.since_newline = match read.iter().rposition(|&b| b == b'\n') {
                Some(at) => read.len() - at - 1,
                None => was.saturating_add(read.len()),
            };
            // Once per line: when this read takes the line that ended here, or the one still
            // open, over the limit.
            let crossed = match read.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    (was <= MAX_MESSAGE_BYTES && was + at > MAX_MESSAGE_BYTES)
                        || self.since_newline > MAX_MESSAGE_BYTES
                }
                None => was <= MAX_MESSAGE_BYTES && self.since_newline > MAX_MESSAGE_BYTES,
            };
            if crossed {
                self.oversized.notify_waiters();
            }
        }
        polled
    }
}

/// Why the `initialize` handshake failed.
#[derive(Debug, thiserror::Error)]
enum HandshakeError {
    #[error("the server did not answer `initialize` within {0:?} (a first `npx`/`uvx` run may need longer: see `connect_timeout`)")]
    TimedOut(Duration),
    /// Boxed: with rmcp's `auth` feature the error is large (clippy's large_enum_variant).
    #[error(transparent)]
    Rmcp(Box<rmcp::service::ClientInitializeError>),
}

/// Run the handshake, at most [`ConnectOptions::connect_timeout`].
async fn handshake<T>(
    opts: &ConnectOptions,
    serve: impl std::future::Future<Output = Result<T, rmcp::service::ClientInitializeError>>,
) -> Result<T, HandshakeError> {
    match tokio::time::timeout(opts.connect_timeout, serve).await {
        Ok(r) => r.map_err(|e| HandshakeError::Rmcp(Box::new(e))),
        Err(_) => Err(HandshakeError::TimedOut(opts.connect_timeout)),
    }
}

fn spawn_stderr_reader(
    server: String,
    stderr: tokio::process::ChildStderr,
    tail: Arc<StderrTail>,
    redactor: Redactor,
) {
    use tokio::io::AsyncBufReadExt;
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let line = clean_server_text(&redactor, &line, MAX_LOG_CHARS);
            tracing::debug!(server = %server, "stderr: {line}");
            tail.push(line);
        }
    });
}

/// Connect to a remote server with any rmcp HTTP client (e.g. rmcp's `AuthClient` for OAuth).
pub async fn connect_http_with<C>(
    cfg: &McpServerConfig,
    opts: &ConnectOptions,
    client: C,
) -> Result<McpClient, McpError>
where
    C: StreamableHttpClient + Send + Sync + 'static,
{
    let McpTransport::Http { url, headers } = &cfg.transport else {
        return Err(McpError::Other(format!(
            "server `{}` is not a remote server",
            cfg.name
        )));
    };
    let (filled, secret_values) = fill(opts, headers).await;
    let redactor = Redactor::new(secret_values.into_iter().chain(opts.auth_header.clone()));
    let mut custom = HashMap::new();
    let mut auth = opts.auth_header.clone();
    for (k, v) in filled {
        if k.eq_ignore_ascii_case("authorization") {
            // rmcp sends the bearer token itself; a configured header is used as the token.
            auth = Some(v.strip_prefix("Bearer ").unwrap_or(&v).to_string());
            continue;
        }
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| McpError::Other(format!("header name `{k}` is not valid")))?;
        let value = reqwest::header::HeaderValue::from_str(&v)
            .map_err(|_| McpError::Other(format!("the value of header `{k}` is not valid")))?;
        custom.insert(name, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
        .custom_headers(custom)
        .max_sse_event_size(MAX_MESSAGE_BYTES)
        .max_json_response_size(MAX_MESSAGE_BYTES)
        .reinit_on_expired_session(true);
    if let Some(token) = auth {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let h = handler(cfg, opts, &redactor);
    let (progress, calls) = (h.progress.clone(), h.calls.clone());
    let service = match handshake(opts, rmcp::serve_client(h, transport)).await {
        Ok(s) => s,
        Err(HandshakeError::TimedOut(after)) => {
            return Err(McpError::Handshake {
                message: HandshakeError::TimedOut(after).to_string(),
                stderr_tail: Vec::new(),
            })
        }
        Err(HandshakeError::Rmcp(e)) => {
            if e.is_authorization_required() {
                return Err(McpError::NeedsSignIn {
                    challenge: e.auth_challenge().map(str::to_string),
                });
            }
            if is_legacy_sse(url).await {
                return Err(McpError::LegacySse { url: url.clone() });
            }
            // A refused redirect says why (rmcp's text only says "error following redirect").
            let message = match refused_redirect(&e) {
                Some(refused) => format!("the server did not start the MCP session: {refused}"),
                None => e.to_string(),
            };
            return Err(McpError::Handshake {
                message: redactor.redact(&message),
                stderr_tail: Vec::new(),
            });
        }
    };
    Ok(McpClient::new(
        cfg,
        service,
        (progress, calls),
        Arc::new(StderrTail::default()),
        None,
        None,
        redactor,
    ))
}

/// The reqwest client for remote servers: [`crate::net`]'s rules for requests carrying secrets
/// (every hop stays on the server's origin, no downgrade, no `Referer`).
pub fn remote_http_client() -> Result<reqwest::Client, McpError> {
    crate::net::client_builder(crate::net::Secrets::Carried)
        .build()
        .map_err(|e| McpError::Other(format!("the HTTP client could not start: {e}")))
}

/// The [`crate::net::RedirectRefused`] behind a failed handshake over [`remote_http_client`]
/// (rmcp's error text only says "error following redirect", and its errors do not chain their
/// sources, so the layers are unwrapped here).
fn refused_redirect(
    e: &rmcp::service::ClientInitializeError,
) -> Option<crate::net::RedirectRefused> {
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = e else {
        return None;
    };
    match error
        .error
        .downcast_ref::<StreamableHttpError<reqwest::Error>>()?
    {
        StreamableHttpError::Client(e) => crate::net::refused_redirect(e).cloned(),
        _ => None,
    }
}

/// Does `url` answer a GET with the legacy transport's `endpoint` event?
async fn is_legacy_sse(url: &str) -> bool {
    let probe = async {
        let response = remote_http_client()
            .ok()?
            .get(url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .ok()?;
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            return Some(false);
        }
        let mut response = response;
        let mut seen = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            seen.extend_from_slice(&chunk);
            if String::from_utf8_lossy(&seen).contains("event: endpoint") {
                return Some(true);
            }
            if seen.len() > 4096 {
                break;
            }
        }
        Some(false)
    };
    tokio::time::timeout(Duration::from_secs(3), probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}

impl McpClient {
    fn new(
        cfg: &McpServerConfig,
        service: RunningService<RoleClient, Handler>,
        (progress, calls): (
            Arc<Mutex<HashMap<ProgressToken, ProgressFn>>>,
            Arc<InFlight>,
        ),
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
        McpClient {
            name: cfg.name.clone(),
            service: Mutex::new(Some(service)),
            peer,
            closed,
            progress,
            calls,
            stderr,
            child,
            resolved,
            timeout: Duration::from_secs(cfg.timeout_secs),
            redactor,
            oversized: Arc::new(tokio::sync::Notify::new()),
        }
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

    /// The server's name and version as it introduced itself.
    pub fn server_info(&self) -> Option<(String, String)> {
        self.peer.peer_info().and_then(|i| {
            i.server_info
                .as_ref()
                .map(|s| (s.name.clone(), s.version.clone()))
        })
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
        let _in_flight = self.calls.enter(origin);
        if self.is_closed() {
            return Err(McpError::Closed);
        }
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = Some(args);
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
        let outcome = outcome.map_err(|e| match e {
            McpError::Server(message) => McpError::Server(self.redactor.redact(&message)),
            McpError::Other(message) => McpError::Other(self.redactor.redact(&message)),
            e => e,
        });
        match outcome? {
            ServerResult::CallToolResult(result) => Ok(redact_result(&self.redactor, result)),
            other => Err(McpError::Other(format!(
                "the server answered tools/call with an unexpected result: {}",
                self.redactor
                    .redact(&serde_json::to_string(&other).unwrap_or_default())
                    .chars()
                    .take(200)
                    .collect::<String>()
            ))),
        }
    }

    fn progress_map(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, ProgressFn>> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
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
