//! MCP Apps: a call's interactive view, shown in its tool card. The view's HTML never enters
//! the app's page: [`mcp_view_open`] puts the document behind a one-time address of the
//! `mcp-view` scheme, which [`serve_view`] answers once, with the content security policy its
//! resource declares ([`engine::mcp::apps::view_csp`]) as a header and as the document's first
//! element. The card's frame is sandboxed without `allow-same-origin`, so the view has an
//! origin of its own (not the app's: no IPC, no storage, no parent to read), no popups and no
//! top navigation. What the view asks of the host arrives over `postMessage` at the card's
//! bridge (`@modelcontextprotocol/ext-apps`), and its tool calls come back here through
//! [`mcp_view_call`], into the engine's gate.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use engine::api::direct::Asker;
use engine::api::mcp::{call_from_view, ViewCallError};
use serde::Serialize;
use tauri::http::{header, Response, StatusCode};
use tauri::State;
use tokio_util::sync::CancellationToken;

use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// The scheme views are served from.
pub const VIEW_SCHEME: &str = "mcp-view";

/// Documents waiting for their frame to load them, by one-time token.
#[derive(Default)]
pub struct ViewDocuments(Mutex<HashMap<String, Served>>);

struct Served {
    html: String,
    csp: String,
}

impl ViewDocuments {
    fn put(&self, html: String, csp: String) -> String {
        let token = format!(
            "{}{}",
            engine::ids::random_hex12(),
            engine::ids::random_hex12()
        );
        let mut docs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // Frames that never loaded (a card scrolled away at once) leave theirs: keep a few.
        if docs.len() >= 64 {
            docs.clear();
        }
        docs.insert(token.clone(), Served { html, csp });
        token
    }

    fn take(&self, token: &str) -> Option<Served> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token)
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
    /// Why the view cannot be shown, for the card (its server was removed from `mcp.json`).
    pub unavailable: Option<String>,
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
    let Some((_, view, html)) = found else {
        return Err(AppError::new(
            ErrorCode::NotFound,
            format!("the call {call_id} has no view kept"),
        ));
    };
    let unavailable = engine.mcp().server(&view.server).is_none().then(|| {
        format!(
            "View no longer available: the MCP server `{}` is not in mcp.json any more.",
            view.server
        )
    });
    let url = unavailable.is_none().then(|| {
        let csp = engine::mcp::apps::view_csp(&view.meta);
        view_url(&documents.put(html, csp))
    });
    Ok(OpenedView {
        url,
        prefers_border: view.meta.get("prefersBorder") == Some(&serde_json::Value::Bool(true)),
        server: view.server,
        resource_uri: view.resource_uri,
        tool_input: view.tool_input,
        tool_result: view.tool_result,
        unavailable,
    })
}

/// The view of the call `call_id` calls its server's tool `name` with `args`: through
/// the gate, asked in the permission dialog as the view of its server. Returns the server's
/// `CallToolResult`, or one with `isError` saying why the call did not run.
#[tauri::command]
#[specta::specta]
pub async fn mcp_view_call(
    state: State<'_, AppState>,
    call_id: String,
    name: String,
    args: serde_json::Map<String, serde_json::Value>,
) -> Result<serde_json::Value, AppError> {
    let engine = state.engine()?;
    let timeout = Duration::from_secs(engine.ctx.config().settings.permission_timeout_secs.max(1));
    let ask = Asker::Broker {
        broker: engine.runs.runner().broker(),
        timeout,
        cancel: CancellationToken::new(),
    };
    call_from_view(engine, &call_id, &name, args, ask, engine.events.as_ref())
        .await
        .map_err(|e| match e {
            ViewCallError::NoView(_) => AppError::new(ErrorCode::NotFound, e.to_string()),
            ViewCallError::Store(_) => AppError::new(ErrorCode::Database, e.to_string()),
        })
}

/// Answer a frame's request for a view document: the one the token names, once, under its
/// policy; nothing else (a second load, another path, a view's own requests to the scheme).
pub fn serve_view(documents: &ViewDocuments, path: &str) -> Response<Vec<u8>> {
    let token = path.trim_start_matches('/');
    let Some(doc) = documents.take(token) else {
        return Response::builder()
            .status(StatusCode::NOT_FOUND)
            .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(b"no such view".to_vec())
            .unwrap_or_default();
    };
    // The policy also as the document's first element, for engines that do not apply a
    // custom scheme's headers; a policy the view adds itself can only narrow it.
    let body = format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">{}",
        doc.csp, doc.html
    );
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header("Content-Security-Policy", doc.csp)
        .header("X-Content-Type-Options", "nosniff")
        .header(header::CACHE_CONTROL, "no-store")
        .header("Referrer-Policy", "no-referrer")
        .body(body.into_bytes())
        .unwrap_or_default()
}
