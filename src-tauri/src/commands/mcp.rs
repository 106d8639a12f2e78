//! The MCP servers section of the Tools page: the servers of `mcp.json` with their status, each
//! server's tools, adding and editing servers by pasted JSON, delete, enable/disable, restart,
//! and a test call of one tool through the same gate as a run's calls.

use std::collections::BTreeMap;
use std::time::Duration;

use engine::api::direct::Asker;
use engine::api::editor::ToolTest;
use engine::api::mcp::{self, NoSuchMcpTool};
use engine::mcp::config::EditError;
use engine::mcp::hub::UnknownServer;
use engine::mcp::{McpServerView, McpToolInfo};
use tauri::{AppHandle, State};
use tokio_util::sync::CancellationToken;

use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

impl From<EditError> for AppError {
    fn from(e: EditError) -> Self {
        let code = match &e {
            EditError::Pasted(_) | EditError::Broken(_) => ErrorCode::InvalidConfig,
            EditError::Unknown(_) => ErrorCode::NotFound,
            EditError::Io { .. } | _ => ErrorCode::Io,
        };
        Self::new(code, e.to_string())
    }
}

impl From<UnknownServer> for AppError {
    fn from(e: UnknownServer) -> Self {
        Self::new(ErrorCode::NotFound, e.to_string())
    }
}

impl From<NoSuchMcpTool> for AppError {
    fn from(e: NoSuchMcpTool) -> Self {
        Self::new(ErrorCode::NotFound, e.to_string())
    }
}

/// Every server of `mcp.json`, in file order, with its status, command and stderr tail.
#[tauri::command]
#[specta::specta]
pub fn mcp_servers(state: State<'_, AppState>) -> Result<Vec<McpServerView>, AppError> {
    Ok(state.engine()?.mcp().servers())
}

/// The tools of the server `name` (empty until it is ready).
#[tauri::command]
#[specta::specta]
pub fn mcp_server_tools(
    state: State<'_, AppState>,
    name: String,
) -> Result<Vec<McpToolInfo>, AppError> {
    Ok(state.engine()?.mcp().tools(&name)?)
}

/// The server `name` as it is written in `mcp.json`, as a `{"mcpServers": {...}}` block to edit
/// (secrets stay `{{VAR}}` references: the file never holds their values).
#[tauri::command]
#[specta::specta]
pub fn mcp_server_config(state: State<'_, AppState>, name: String) -> Result<String, AppError> {
    Ok(mcp::server_config(state.engine()?, &name)?)
}

/// Add or replace the servers of pasted JSON (one server by name, or a whole `mcpServers`
/// block), then reload so they start. `replacing`: the server being edited; when the paste no
/// longer names it, it was renamed and the old entry goes. Returns the names written.
#[tauri::command]
#[specta::specta]
pub fn mcp_save_servers(
    state: State<'_, AppState>,
    json: String,
    replacing: Option<String>,
) -> Result<Vec<String>, AppError> {
    Ok(mcp::save_servers(
        state.engine()?,
        &json,
        replacing.as_deref(),
    )?)
}

/// Remove the server `name` from `mcp.json` (its process ends), then reload.
#[tauri::command]
#[specta::specta]
pub fn mcp_remove_server(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    Ok(mcp::remove_server(state.engine()?, &name)?)
}

/// Disable (stop, and do not start again) or enable the server `name`, then reload.
#[tauri::command]
#[specta::specta]
pub fn mcp_set_disabled(
    state: State<'_, AppState>,
    name: String,
    disabled: bool,
) -> Result<(), AppError> {
    Ok(mcp::set_disabled(state.engine()?, &name, disabled)?)
}

/// Stop and start the server `name` again (a failed one too).
#[tauri::command]
#[specta::specta]
pub fn mcp_restart(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    Ok(state.engine()?.mcp().restart(&name)?)
}

impl From<engine::mcp::auth::SignInError> for AppError {
    fn from(e: engine::mcp::auth::SignInError) -> Self {
        use engine::mcp::auth::SignInError;
        let code = match &e {
            SignInError::UnknownServer(_) => ErrorCode::NotFound,
            SignInError::NotRemote(_) => ErrorCode::InvalidConfig,
            SignInError::Keyring(_) | SignInError::NoKeyring => ErrorCode::Keyring,
            SignInError::Browser(_) => ErrorCode::OpenFailed,
            _ => ErrorCode::SignIn,
        };
        Self::new(code, e.to_string())
    }
}

/// Sign in to the remote server `name`: its authorization page opens in the system browser,
/// the tokens go to the keyring, and the server restarts with them. Returns the scopes granted.
#[tauri::command]
#[specta::specta]
pub async fn mcp_sign_in(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
) -> Result<Vec<String>, AppError> {
    let hub = state.engine()?.mcp().clone();
    let open: engine::mcp::auth::BrowserOpener = Box::new(move |url: String| {
        let url = crate::links::external_url(&url).map_err(|e| e.message)?;
        crate::links::open_url(&app, &url).map_err(|e| e.message)
    });
    Ok(hub.sign_in(&name, open).await?.scopes)
}

/// Sign out of the remote server `name`: its tokens (and client registration) are deleted
/// from the keyring and it restarts, so its status says it needs sign-in again. The keyring is
/// reached off the async runtime's threads (D-Bus calls block).
#[tauri::command]
#[specta::specta]
pub async fn mcp_sign_out(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    let hub = state.engine()?.mcp().clone();
    tokio::task::spawn_blocking(move || hub.sign_out(&name))
        .await
        .map_err(|e| AppError::new(ErrorCode::Keyring, format!("signing out stopped: {e}")))??;
    Ok(())
}

/// Call the MCP tool `name` (`SERVER.TOOL`) with `params` as the model would write them,
/// through the gate: typed and checked against its schema, and asked in the permission dialog
/// like in a run (annotations never skip it). Uses the tool editor's test conversation, so
/// closing the panel withdraws the request (`cancel_tool_test`).
#[tauri::command]
#[specta::specta]
pub async fn mcp_test_tool(
    state: State<'_, AppState>,
    name: String,
    params: BTreeMap<String, String>,
) -> Result<ToolTest, AppError> {
    let engine = state.engine()?;
    let timeout = Duration::from_secs(engine.ctx.config().settings.permission_timeout_secs.max(1));
    let ask = Asker::Broker {
        broker: engine.runs.runner().broker(),
        timeout,
        cancel: CancellationToken::new(),
    };
    let params = params.into_iter().collect();
    Ok(mcp::test_tool(engine, &name, &params, ask, engine.events.as_ref()).await?)
}
