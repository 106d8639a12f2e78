//! MCP Apps: a call's interactive view, shown in its tool card. The view's HTML never enters
//! the app's page: [`mcp_view_open`] gives the card a one-time address of the `mcp-view`
//! scheme (128 random bits, good for a minute), which [`serve_view`] answers once, to a frame
//! only, with the view's document read from the database and the content security policy its
//! resource declares ([`engine::mcp::apps::view_csp`]) as a header and as the document's first
//! element. The policy does not govern resource hints, so the document is served without those
//! to origins it did not declare ([`engine::mcp::apps::without_undeclared_hints`]) and with DNS
//! prefetching off (header and element). No header of the MCP server's reaches the frame (an
//! HTTP `Link` hint included): the document is all that is kept of it. A view whose server was removed from `mcp.json`, or is now launched differently
//! (another program under the same name), is not served. The card's frame is sandboxed
//! without `allow-same-origin`, so the view has an origin of its own (not the app's: no IPC,
//! no storage, no parent to read), no forms, no popups and no top navigation. What the view asks of the host arrives over `postMessage` at the card's
//! bridge (`@modelcontextprotocol/ext-apps`), and its tool calls come back here through
//! [`mcp_view_call`], into the engine's gate.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use engine::api::direct::Asker;
use engine::api::mcp::{
    call_from_view, latest_view_result, unmute_view, view_muted, LatestViewResult, ViewCallAnswer,
    ViewCallError,
};
use serde::Serialize;
use tauri::http::{header, Response, StatusCode};
use tauri::State;
use tokio_util::sync::CancellationToken;

use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// The scheme views are served from.
pub const VIEW_SCHEME: &str = "mcp-view";

/// The element that turns DNS prefetching off for the document (the `X-DNS-Prefetch-Control`
/// header says the same).
const DNS_PREFETCH_OFF: &str = "<meta http-equiv=\"x-dns-prefetch-control\" content=\"off\">";

/// How long a frame has to load the address [`mcp_view_open`] gave it.
const TOKEN_LIFETIME: Duration = Duration::from_secs(60);

/// Views waiting for their frame to load them: one-time token → the call whose view it is.
/// The document itself is read from the database when the frame asks for it.
#[derive(Default)]
pub struct ViewDocuments(Mutex<HashMap<String, Pending>>);

struct Pending {
    call_id: String,
    issued: Instant,
}

impl ViewDocuments {
    /// A new one-time token for the view of `call_id`: 128 random bits from the system (no
    /// token at all when it has none to give).
    fn issue(&self, call_id: &str) -> Result<String, AppError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| {
            AppError::new(
                ErrorCode::Io,
                format!("the system gave no random numbers for a view's address: {e}"),
            )
        })?;
        let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut pending = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // Addresses whose frame never loaded (a card scrolled away at once) expire.
        pending.retain(|_, p| p.issued.elapsed() < TOKEN_LIFETIME);
        pending.insert(
            token.clone(),
            Pending {
                call_id: call_id.to_string(),
                issued: Instant::now(),
            },
        );
        Ok(token)
    }

    /// The call whose view `token` names, once (a second load, or a late one, gets nothing).
    fn redeem(&self, token: &str) -> Option<String> {
        let pending = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token)?;
        (pending.issued.elapsed() < TOKEN_LIFETIME).then_some(pending.call_id)
    }
}

/// The tool calls views have under way, by the card's request id: a card that goes (its
/// conversation closed, scrolled out of the list) cancels its own, so no permission dialog
/// is left for a call whose answer has nowhere to go. A cancel may come before its call is
/// registered (the commands run on different threads): it leaves a cancelled token the call
/// then finds, expired after [`TOKEN_LIFETIME`] if no call comes.
#[derive(Default)]
pub struct ViewCalls(Mutex<HashMap<String, (CancellationToken, Instant)>>);

impl ViewCalls {
    /// The token of `request`, made if new (expired leftovers dropped).
    fn token(&self, request: &str) -> CancellationToken {
        let mut calls = self.0.lock().unwrap_or_else(|p| p.into_inner());
        calls.retain(|_, (_, at)| at.elapsed() < TOKEN_LIFETIME);
        calls
            .entry(request.to_string())
            .or_insert_with(|| (CancellationToken::new(), Instant::now()))
            .0
            .clone()
    }

    fn done(&self, request: &str) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(request);
    }
}

/// A call's view, ready for its frame.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct OpenedView {
    /// The frame's address (one load only); none when the view is no longer available.
    pub url: Option<String>,
    /// The MCP server the view belongs to.
    pub server: String,
    /// The view resource's `ui://` URI.
    pub resource_uri: String,
    /// The view asks for a border around it.
    pub prefers_border: bool,
    /// The call's arguments (sent to the view once it is ready).
    pub tool_input: serde_json::Value,
    /// The call's result as the server sent it (sent to the view once it is ready).
    pub tool_result: Option<serde_json::Value>,
    /// The latest result the view drew from its own calls since the app started (sent after
    /// the call's result, so a view drawn again shows what it showed); none when it made none.
    pub latest: Option<LatestViewResult>,
    /// Why the view cannot be shown, for the card (its server was removed from `mcp.json`).
    pub unavailable: Option<String>,
    /// The view's tool calls are refused without asking (the person refused three in a row);
    /// [`mcp_view_unmute`] lets it ask again.
    pub calls_muted: bool,
}

/// The address of a served document: `mcp-view://localhost/TOKEN`, or
/// `http://mcp-view.localhost/TOKEN` on Windows (where custom schemes are served so).
fn view_url(token: &str) -> String {
    if cfg!(windows) {
        format!("http://{VIEW_SCHEME}.localhost/{token}")
    } else {
        format!("{VIEW_SCHEME}://localhost/{token}")
    }
}

/// Get the view kept with the call `call_id` ready for its frame.
#[tauri::command]
#[specta::specta]
pub async fn mcp_view_open(
    state: State<'_, AppState>,
    documents: State<'_, ViewDocuments>,
    call_id: String,
) -> Result<OpenedView, AppError> {
    let engine = state.engine()?;
    let found = engine
        .ctx
        .with_db(|c| engine::calls::store::view_of_call(c, &call_id))
        .map_err(AppError::database)?;
    let Some((_, view, _)) = found else {
        return Err(AppError::new(
            ErrorCode::NotFound,
            format!("the call {call_id} has no view kept"),
        ));
    };
    let unavailable = match engine.mcp().launch_digest(&view.server) {
        _ if view.launch_digest.is_empty() => Some(
            "View no longer available: it was kept by an earlier version of the app.".to_string(),
        ),
        None => Some(format!(
            "View no longer available: the MCP server `{}` is not in mcp.json any more.",
            view.server
        )),
        // The same name, another program: its view must not drive it.
        Some(now) if now != view.launch_digest => Some(format!(
            "View no longer available: the MCP server `{}` is now started differently (mcp.json changed).",
            view.server
        )),
        Some(_) => None,
    };
    let url = match unavailable {
        None => Some(view_url(&documents.issue(&call_id)?)),
        Some(_) => None,
    };
    Ok(OpenedView {
        url,
        calls_muted: view_muted(engine, &call_id),
        latest: latest_view_result(engine, &call_id),
        prefers_border: view.meta.get("prefersBorder") == Some(&serde_json::Value::Bool(true)),
        server: view.server,
        resource_uri: view.resource_uri,
        tool_input: view.tool_input,
        tool_result: view.tool_result,
        unavailable,
    })
}

/// The view of the call `call_id` calls its server's tool `name` with `args`: through
/// the gate, asked in the permission dialog as the view of its server (every call, one at a
/// time; none once the view is muted). `request_id` (the card's) lets [`mcp_view_cancel`]
/// withdraw it. Returns the server's `CallToolResult`, or one with `isError` saying why the
/// call did not run, and whether the view is muted now.
#[tauri::command]
#[specta::specta]
pub async fn mcp_view_call(
    state: State<'_, AppState>,
    calls: State<'_, ViewCalls>,
    call_id: String,
    name: String,
    args: serde_json::Map<String, serde_json::Value>,
    request_id: String,
) -> Result<ViewCallAnswer, AppError> {
    let engine = state.engine()?;
    let timeout = Duration::from_secs(engine.ctx.config().settings.permission_timeout_secs.max(1));
    let cancel = calls.token(&request_id);
    let ask = Asker::Broker {
        broker: engine.runs.runner().broker(),
        timeout,
        cancel,
    };
    let outcome = call_from_view(engine, &call_id, &name, args, ask, engine.events.as_ref()).await;
    calls.done(&request_id);
    outcome.map_err(|e| match e {
        ViewCallError::NoView(_) => AppError::new(ErrorCode::NotFound, e.to_string()),
        ViewCallError::Store(_) => AppError::new(ErrorCode::Database, e.to_string()),
    })
}

/// Let the view of the call `call_id` ask for its tool calls again after the person refused
/// three in a row (the card's button). Returns whether it was muted.
#[tauri::command]
#[specta::specta]
pub fn mcp_view_unmute(state: State<'_, AppState>, call_id: String) -> Result<bool, AppError> {
    Ok(unmute_view(state.engine()?, &call_id))
}

/// Withdraw the view's tool call `request_id`: a permission request still open is withdrawn
/// (the call does not run), a running call is stopped, a call not yet under way will not run.
#[tauri::command]
#[specta::specta]
pub fn mcp_view_cancel(calls: State<'_, ViewCalls>, request_id: String) -> bool {
    let token = calls.token(&request_id);
    let was_running = !token.is_cancelled();
    token.cancel();
    was_running
}

/// Answer a frame's request for a view document: the view of the call the token names, once,
/// under its policy; nothing else (a second or late load, another path, a request that is not
/// a frame's, a view's own requests to the scheme).
pub fn serve_view(
    documents: &ViewDocuments,
    engine: Option<&engine::Engine>,
    path: &str,
    fetch_dest: Option<&str>,
) -> Response<Vec<u8>> {
    let refuse = |status: StatusCode, why: &str| {
        Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(why.as_bytes().to_vec())
            .unwrap_or_default()
    };
    // A browser that says what a request is for: only a frame loads a view.
    if fetch_dest.is_some_and(|d| d != "iframe") {
        return refuse(StatusCode::FORBIDDEN, "views load in frames only");
    }
    let token = path.trim_start_matches('/');
    let Some(call_id) = documents.redeem(token) else {
        return refuse(StatusCode::NOT_FOUND, "no such view");
    };
    let found = engine.and_then(|e| {
        e.ctx
            .with_db(|c| engine::calls::store::view_of_call(c, &call_id))
            .ok()
            .flatten()
    });
    let Some((_, view, html)) = found else {
        return refuse(StatusCode::NOT_FOUND, "no such view");
    };
    let html = match engine::mcp::apps::without_undeclared_hints(
        &html,
        &view.meta,
        view.local_server,
    ) {
        Ok(html) => html,
        Err(e) => {
            tracing::warn!(server = %view.server, resource = %view.resource_uri, "view not served: {e}");
            return refuse(StatusCode::UNPROCESSABLE_ENTITY, &e.to_string());
        }
    };
    let csp = engine::mcp::apps::view_csp(&view.meta, view.local_server);
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header("Content-Security-Policy", &csp)
        .header("X-DNS-Prefetch-Control", "off")
        .header("X-Content-Type-Options", "nosniff")
        .header(header::CACHE_CONTROL, "no-store")
        .header("Referrer-Policy", "no-referrer")
        .body(with_policy(&html, &csp).into_bytes())
        .unwrap_or_default()
}

/// `html` with `csp` and DNS prefetching off as its first elements too, for engines that do not
/// apply a custom scheme's headers (a policy the view adds itself can only narrow it; a setting
/// of its own for DNS prefetching was removed with its hints). After a leading doctype, so the
/// document keeps its standards mode.
fn with_policy(html: &str, csp: &str) -> String {
    let meta = format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">{DNS_PREFETCH_OFF}"
    );
    let start = html.len() - html.trim_start().len();
    let rest = &html[start..];
    let doctype = rest
        .get(..9)
        .is_some_and(|p| p.eq_ignore_ascii_case("<!doctype"));
    match rest.find('>').filter(|_| doctype) {
        Some(end) => {
            let cut = start + end + 1;
            format!("{}{meta}{}", &html[..cut], &html[cut..])
        }
        None => format!("{meta}{html}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_comes_first_after_a_doctype() {
        let csp = "default-src 'none'";
        let meta = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">\
            <meta http-equiv=\"x-dns-prefetch-control\" content=\"off\">";
        assert_eq!(
            with_policy("<!DOCTYPE html><html><p>x</p>", csp),
            format!("<!DOCTYPE html>{meta}<html><p>x</p>")
        );
        assert_eq!(
            with_policy("\n <!doctype html>\n<p>x</p>", csp),
            format!("\n <!doctype html>{meta}\n<p>x</p>")
        );
        assert_eq!(with_policy("<p>x</p>", csp), format!("{meta}<p>x</p>"));
    }

    #[test]
    fn a_token_is_good_once_and_for_its_call() {
        let documents = ViewDocuments::default();
        let a = documents.issue("call_a").unwrap();
        let b = documents.issue("call_b").unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert_eq!(documents.redeem(&b).as_deref(), Some("call_b"));
        assert_eq!(documents.redeem(&b), None, "once");
        assert_eq!(documents.redeem("0123"), None);
        assert_eq!(documents.redeem(&a).as_deref(), Some("call_a"));
    }

    #[test]
    fn only_a_frame_gets_a_view() {
        let documents = ViewDocuments::default();
        let token = documents.issue("call_a").unwrap();
        let refused = serve_view(&documents, None, &format!("/{token}"), Some("document"));
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        // Refused before the token was spent; without an engine there is no document.
        let missing = serve_view(&documents, None, &format!("/{token}"), Some("iframe"));
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        let again = serve_view(&documents, None, &format!("/{token}"), None);
        assert_eq!(again.status(), StatusCode::NOT_FOUND);
    }
}
