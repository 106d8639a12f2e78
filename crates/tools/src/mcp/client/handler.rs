//! What the client does with a server's requests and notifications (rmcp's `ClientHandler`):
//! elicitation asked during a call goes to the app's [`ElicitationHandler`], sampling is
//! declined, progress and log messages are masked, escaped, cut and rate limited before they
//! reach the [`McpNotice`] sink, and tool results are masked.

#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolResult, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    CustomNotification, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
    InitializeRequestParams, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::ClientHandler;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::CancelOnDropToken;
use crate::secrets::Redactor;
use crate::tools::CallOrigin;

/// The MCP Apps extension's identifier, as the client declares it under
/// `capabilities.extensions` (with the view types it renders).
pub const VIEWS_EXTENSION: &str = "io.modelcontextprotocol/ui";

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
pub(super) const SCANNED_BYTES: usize = 64 * 1024;

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
pub(super) struct LogBudget {
    tokens: f64,
    refilled: std::time::Instant,
    /// Messages dropped since the last one let through.
    dropped: u64,
}

/// What [`LogBudget::admit`] decided.
#[derive(Debug, PartialEq)]
pub(super) enum Admit {
    /// Log it; `dropped` messages were dropped just before.
    Yes { dropped: u64 },
    /// Drop it: the first of a run of dropped messages.
    FirstDrop,
    /// Drop it.
    Drop,
}

impl LogBudget {
    pub(super) fn new(now: std::time::Instant) -> Self {
        LogBudget {
            tokens: LOG_BURST,
            refilled: now,
            dropped: 0,
        }
    }

    pub(super) fn admit(&mut self, now: std::time::Instant) -> Admit {
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
pub(super) fn redact_result(redactor: &Redactor, result: CallToolResult) -> CallToolResult {
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
pub(super) struct InFlight {
    next: std::sync::atomic::AtomicU64,
    calls: Mutex<Vec<(u64, Option<CallOrigin>, CancellationToken)>>,
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Option<CallOrigin>, CancellationToken)>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Register a call until the returned guard drops.
    pub(super) fn enter(self: &Arc<Self>, origin: Option<CallOrigin>) -> InFlightGuard {
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

pub(super) struct InFlightGuard {
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

/// The notification a server sends when a URL request's interaction finished.
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";

/// Our side of the session: answers the server's requests and routes its notifications.
/// Cloned into the [`super::McpClient`], which answers the questions of a multi round-trip
/// call (`input_required`, 2026-07-28) with it too.
#[derive(Clone)]
pub(super) struct Handler {
    pub(super) server: String,
    pub(super) elicitation: Arc<dyn ElicitationHandler>,
    pub(super) notices: NoticeSink,
    /// Progress of calls in flight, by progress token.
    pub(super) progress: Arc<Mutex<HashMap<ProgressToken, ProgressFn>>>,
    /// The calls in flight, for the origin of an elicitation.
    pub(super) calls: Arc<InFlight>,
    /// Masks the server's secrets in its progress and log messages.
    pub(super) redactor: Redactor,
    /// Its log messages' rate limit.
    pub(super) log_budget: Arc<Mutex<LogBudget>>,
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
        // Skills served by the server (SEP-2640): listed with the local ones, read when used.
        // and interactive views of tool results (MCP Apps), shown in a sandboxed frame.
        let mut ui = serde_json::Map::new();
        ui.insert(
            "mimeTypes".into(),
            serde_json::json!([crate::mcp::apps::VIEW_MIME]),
        );
        capabilities.extensions = Some(std::collections::BTreeMap::from([
            (
                super::skills::SKILLS_EXTENSION.to_string(),
                serde_json::Map::new(),
            ),
            (VIEWS_EXTENSION.to_string(), ui),
        ]));
        // rmcp's default version (its LATEST, 2026-07-28) has no `initialize` handshake any
        // more; the handshake names the newest version that has one (2025-11-25).
        InitializeRequestParams::new(
            capabilities,
            Implementation::new("artifactflow", crate::VERSION),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}
