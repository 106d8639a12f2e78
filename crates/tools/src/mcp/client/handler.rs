//! What the client does with a server's requests and notifications (rmcp's `ClientHandler`):
//! elicitation asked during a call goes to the app's [`ElicitationHandler`], sampling is
//! declined, progress and log messages are masked, escaped, cut and rate limited before they
//! reach the [`McpNotice`] sink, and tool results are masked: every string and key, text-like
//! blobs decoded and masked, other blobs holding a secret withheld ([`redact_result`]).

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

/// Why a blob was left out of a result: the text block that takes its place reads
/// `[image (image/png): WITHHELD]` (`[resource URI (MIME type): WITHHELD]` for a resource).
pub const WITHHELD: &str = "withheld because it contained a secret of the server's configuration";

/// `result` with `redactor`'s secrets out of everything it holds, before anything else sees
/// it (the model, events, logs, the database, artifacts):
///
/// - every string and every object key, at any depth, is masked (see
///   [`Redactor::redact_json`]): texts, text resources, links, `structuredContent`, `_meta`;
///   two keys that masking makes equal are both kept, the later one numbered (`•••••• (2)`);
/// - blobs (image and audio `data`, a resource's `blob`) are base64 of bytes: text-like ones
///   (a text, JSON, XML or YAML MIME type, or bytes that are UTF-8 text) are decoded, masked
///   and encoded again; any other blob that holds a secret in any form the redactor knows
///   ([`Redactor::holds_secret`]) would be corrupted by masking, so it is withheld: its block
///   becomes a text block saying so ([`WITHHELD`]), and it is never stored as an artifact.
///
/// `server` names the server in the warning a withheld blob logs. A result that cannot be read
/// back after masking is withheld whole (as an error saying so).
pub(super) fn redact_result(
    redactor: &Redactor,
    server: &str,
    result: CallToolResult,
) -> CallToolResult {
    if redactor.is_empty() {
        return result;
    }
    let unreadable = || {
        CallToolResult::error(vec![rmcp::model::ContentBlock::text(
            "the server's result could not be checked for secrets and was withheld",
        )])
    };
    let Ok(mut value) = serde_json::to_value(&result) else {
        tracing::warn!(server = %server, "an MCP result could not be read for masking");
        return unreadable();
    };
    // The blobs leave the tree while the rest is masked as text (masking their base64 would
    // corrupt them), and come back as the verdict on their bytes says.
    let mut blobs = Vec::new();
    if let Some(blocks) = value.get_mut("content").and_then(Value::as_array_mut) {
        for (index, block) in blocks.iter_mut().enumerate() {
            if let Some(blob) = take_blob(block) {
                let verdict = judge_blob(redactor, &blob);
                blobs.push((index, blob.field, verdict));
            }
        }
    }
    redactor.redact_json(&mut value);
    if let Some(blocks) = value.get_mut("content").and_then(Value::as_array_mut) {
        for (index, field, verdict) in blobs {
            let Some(block) = blocks.get_mut(index) else {
                continue;
            };
            match verdict {
                BlobVerdict::Keep(data) => {
                    if let Some(slot) = blob_slot(block, field) {
                        *slot = Value::String(data);
                    }
                }
                BlobVerdict::Withhold => {
                    let note = withheld_note(block, field);
                    tracing::warn!(server = %server, "{note}");
                    *block = serde_json::json!({"type": "text", "text": note});
                }
            }
        }
    }
    serde_json::from_value(value).unwrap_or_else(|e| {
        tracing::warn!(server = %server, "an MCP result could not be read back after masking: {e}");
        unreadable()
    })
}

/// Where a content block keeps its blob.
#[derive(Debug, Clone, Copy, PartialEq)]
enum BlobField {
    /// An image's or an audio clip's `data`.
    Data,
    /// An embedded resource's `resource.blob`.
    ResourceBlob,
}

/// A blob taken out of its content block (its place left `null`).
struct Blob {
    field: BlobField,
    /// Its base64 text.
    data: String,
    /// Its MIME type, as the server gave it.
    mime: Option<String>,
}

/// The slot of `block`'s blob, if it has one of that kind.
fn blob_slot(block: &mut Value, field: BlobField) -> Option<&mut Value> {
    match field {
        BlobField::Data => block.get_mut("data"),
        BlobField::ResourceBlob => block.get_mut("resource")?.get_mut("blob"),
    }
}

/// Take the blob out of `block` (an image or audio block's `data`, an embedded resource's
/// `blob`), leaving `null` in its place; `None` for a block without one.
fn take_blob(block: &mut Value) -> Option<Blob> {
    let field = match block.get("type").and_then(Value::as_str) {
        Some("image" | "audio") => BlobField::Data,
        Some("resource") => BlobField::ResourceBlob,
        _ => return None,
    };
    let mime = match field {
        BlobField::Data => block.get("mimeType"),
        BlobField::ResourceBlob => block.get("resource")?.get("mimeType"),
    }
    .and_then(Value::as_str)
    .map(str::to_string);
    let slot = blob_slot(block, field)?;
    let Value::String(data) = std::mem::take(slot) else {
        return None;
    };
    Some(Blob { field, data, mime })
}

/// What becomes of a blob.
#[derive(Debug, PartialEq)]
enum BlobVerdict {
    /// Keep this base64 (the blob as sent, or its text masked and encoded again).
    Keep(String),
    /// It holds a secret and is not text: leave it out.
    Withhold,
}

/// The verdict on one blob (see [`redact_result`]). Data that is not base64 is masked as the
/// text it is (the result's conversion then reports it as not base64 and keeps nothing).
fn judge_blob(redactor: &Redactor, blob: &Blob) -> BlobVerdict {
    use base64::Engine as _;
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(blob.data.trim()) else {
        return BlobVerdict::Keep(redactor.redact(&blob.data));
    };
    if let Ok(text) = std::str::from_utf8(&bytes) {
        if blob.mime.as_deref().is_some_and(is_text_mime) || !text.contains('\0') {
            let masked = redactor.redact(text);
            return BlobVerdict::Keep(if masked == text {
                blob.data.clone()
            } else {
                base64::engine::general_purpose::STANDARD.encode(masked)
            });
        }
    }
    if redactor.holds_secret(&bytes) || redactor.holds_secret(blob.data.as_bytes()) {
        BlobVerdict::Withhold
    } else {
        BlobVerdict::Keep(blob.data.clone())
    }
}

/// Is `mime` a text type: `text/*`, JSON, XML or YAML (`+json`, `+xml`, `+yaml` suffixes
/// too)? Parameters (`; charset=…`) and case do not matter.
fn is_text_mime(mime: &str) -> bool {
    let essence = mime
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let Some((kind, subtype)) = essence.split_once('/') else {
        return false;
    };
    kind == "text"
        || matches!(subtype, "json" | "xml" | "yaml" | "x-yaml")
        || ["+json", "+xml", "+yaml"]
            .iter()
            .any(|suffix| subtype.ends_with(suffix))
}

/// The text that replaces a withheld blob's block: its kind, its MIME type and (for a
/// resource) its URI, all already masked.
fn withheld_note(block: &Value, field: BlobField) -> String {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    match field {
        BlobField::Data => {
            let kind = text(block.get("type"));
            let mime = text(block.get("mimeType"));
            format!("[{kind} ({mime}): {WITHHELD}]")
        }
        BlobField::ResourceBlob => {
            let resource = block.get("resource");
            let uri = text(resource.and_then(|r| r.get("uri")));
            let mime = text(resource.and_then(|r| r.get("mimeType")));
            let mime = if mime.is_empty() {
                "application/octet-stream".to_string()
            } else {
                mime
            };
            format!("[resource {uri} ({mime}): {WITHHELD}]")
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

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;
    use serde_json::json;

    use super::*;
    use crate::secrets::MASK;

    const KEY: &str = "sk-handler-0123456789";

    fn redacted(result: Value) -> Value {
        let result: CallToolResult = serde_json::from_value(result).unwrap();
        let redactor = Redactor::new([KEY.to_string()]);
        serde_json::to_value(redact_result(&redactor, "srv", result)).unwrap()
    }

    fn png_with(text: &str) -> String {
        let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0x00];
        bytes.extend_from_slice(text.as_bytes());
        bytes.extend_from_slice(&[0x00, 0xff]);
        STANDARD.encode(bytes)
    }

    #[test]
    fn keys_are_masked_at_any_depth_in_structured_content_meta_and_blocks() {
        let out = redacted(json!({
            "content": [{"type": "text", "text": format!("a {KEY}"), "_meta": {KEY: {KEY: KEY}}}],
            "structuredContent": {"list": [{"deep": {KEY: 1, MASK: 2}}], KEY: [KEY]},
            "_meta": {format!("x-{KEY}"): {"y": [{KEY: true}]}},
        }));
        assert_eq!(
            out,
            json!({
                "content": [{"type": "text", "text": format!("a {MASK}"), "_meta": {MASK: {MASK: MASK}}}],
                "structuredContent": {"list": [{"deep": {format!("{MASK} (2)"): 1, MASK: 2}}], MASK: [MASK]},
                "_meta": {format!("x-{MASK}"): {"y": [{MASK: true}]}},
            })
        );
    }

    #[test]
    fn text_like_blobs_are_decoded_masked_and_encoded_again() {
        let blob = |mime: &str, text: &str| {
            json!({"type": "resource", "resource": {
                "uri": format!("file:///{KEY}.txt"), "mimeType": mime, "blob": STANDARD.encode(text),
            }})
        };
        let out = redacted(json!({"content": [
            blob("text/plain; charset=utf-8", &format!("the key is {KEY}\n")),
            blob("application/vnd.api+json", &format!("{{\"{KEY}\": 1}}")),
            // No MIME type saying so, but UTF-8 text: masked as text too.
            blob("application/octet-stream", &format!("key={KEY}")),
        ]}));
        let decoded: Vec<String> = out["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                assert_eq!(b["resource"]["uri"], json!(format!("file:///{MASK}.txt")));
                let blob = b["resource"]["blob"].as_str().unwrap();
                String::from_utf8(STANDARD.decode(blob).unwrap()).unwrap()
            })
            .collect();
        assert_eq!(
            decoded,
            [
                format!("the key is {MASK}\n"),
                format!("{{\"{MASK}\": 1}}"),
                format!("key={MASK}"),
            ]
        );
    }

    #[test]
    fn images_and_binary_blobs_holding_a_secret_are_withheld_and_clean_ones_kept() {
        let clean = png_with("a red dot");
        let latin1_text = {
            // Declared text, but not UTF-8: it cannot be masked as text.
            let mut bytes = b"caf\xe9 ".to_vec();
            bytes.extend_from_slice(KEY.as_bytes());
            STANDARD.encode(bytes)
        };
        let out = redacted(json!({"content": [
            {"type": "image", "mimeType": "image/png", "data": png_with(&format!("made with {KEY}"))},
            {"type": "audio", "mimeType": "audio/wav", "data": png_with(&STANDARD.encode(KEY))},
            {"type": "resource", "resource": {"uri": format!("file:///{KEY}.bin"), "blob": png_with(&KEY.replace('-', "%2D"))}},
            {"type": "resource", "resource": {"uri": "file:///l.txt", "mimeType": "text/plain", "blob": latin1_text}},
            {"type": "image", "mimeType": "image/png", "data": clean},
        ]}));
        let blocks = out["content"].as_array().unwrap();
        assert_eq!(
            blocks[..4],
            [
                json!({"type": "text", "text": format!("[image (image/png): {WITHHELD}]")}),
                json!({"type": "text", "text": format!("[audio (audio/wav): {WITHHELD}]")}),
                json!({"type": "text", "text": format!("[resource file:///{MASK}.bin (application/octet-stream): {WITHHELD}]")}),
                json!({"type": "text", "text": format!("[resource file:///l.txt (text/plain): {WITHHELD}]")}),
            ]
        );
        assert_eq!(
            blocks[4],
            json!({"type": "image", "mimeType": "image/png", "data": clean}),
            "a clean image is kept as it came"
        );
        assert!(!out.to_string().contains(KEY), "{out}");
    }

    #[test]
    fn data_that_is_not_base64_is_masked_as_text() {
        let out = redacted(json!({"content": [
            {"type": "image", "mimeType": "image/png", "data": format!("not base64: {KEY}")},
        ]}));
        assert_eq!(
            out["content"][0]["data"],
            json!(format!("not base64: {MASK}"))
        );
    }
}
