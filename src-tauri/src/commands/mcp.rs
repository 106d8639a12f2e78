//! The MCP servers section of the Tools page: the servers of `mcp.json` with their status, each
//! server's tools, adding and editing servers by pasted JSON, delete, enable/disable, restart,
//! and a test call of one tool through the same gate as a run's calls.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use engine::api::direct::{call_tool, Asker};
use engine::api::editor::{ToolTest, TEST_CONVERSATION};
use engine::mcp::config::{self as mcp_config, EditError};
use engine::mcp::hub::UnknownServer;
use engine::mcp::{McpServerView, McpToolInfo};
use engine::Engine;
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

fn mcp_file(engine: &Engine) -> PathBuf {
    engine.ctx.paths().config_dir.join(mcp_config::FILE)
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
    let path = mcp_file(state.engine()?);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        AppError::new(
            ErrorCode::Io,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    server_block(&text, &name).ok_or_else(|| {
        AppError::new(
            ErrorCode::NotFound,
            format!("there is no server `{name}` in {}", path.display()),
        )
    })
}

/// `{"mcpServers": {name: entry}}` of the entry `name` in the text of an `mcp.json`.
fn server_block(text: &str, name: &str) -> Option<String> {
    let file: serde_json::Value = serde_json::from_str(text).ok()?;
    let entry = file.get("mcpServers")?.get(name)?.clone();
    let block = serde_json::json!({ "mcpServers": { name: entry } });
    serde_json::to_string_pretty(&block).ok()
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
    let engine = state.engine()?;
    let path = mcp_file(engine);
    let names = mcp_config::upsert_servers(&path, &json)?;
    if let Some(old) = replacing.filter(|old| !names.contains(old)) {
        mcp_config::remove_server(&path, &old)?;
    }
    engine.reload_config();
    Ok(names)
}

/// Remove the server `name` from `mcp.json` (its process ends), then reload.
#[tauri::command]
#[specta::specta]
pub fn mcp_remove_server(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    let engine = state.engine()?;
    mcp_config::remove_server(&mcp_file(engine), &name)?;
    engine.reload_config();
    Ok(())
}

/// Disable (stop, and do not start again) or enable the server `name`, then reload.
#[tauri::command]
#[specta::specta]
pub fn mcp_set_disabled(
    state: State<'_, AppState>,
    name: String,
    disabled: bool,
) -> Result<(), AppError> {
    let engine = state.engine()?;
    mcp_config::set_disabled(&mcp_file(engine), &name, disabled)?;
    engine.reload_config();
    Ok(())
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
    let registry = engine.ctx.conversation_registry(TEST_CONVERSATION);
    let tool = registry
        .get(&name)
        .filter(|t| matches!(t.source(), engine::tools::ToolSource::Mcp { .. }))
        .ok_or_else(|| {
            AppError::new(
                ErrorCode::NotFound,
                format!("there is no MCP tool `{name}`: its server is not ready (see its status)"),
            )
        })?;
    let timeout = Duration::from_secs(engine.ctx.config().settings.permission_timeout_secs.max(1));
    let params: indexmap::IndexMap<String, String> = params.into_iter().collect();
    let typed = engine::tools::pipeline::prepare(&tool.spec().params, &params).unwrap_or_default();
    let tool_ctx = engine.ctx.tool_context(Some(TEST_CONVERSATION));
    let started = std::time::Instant::now();
    let call = call_tool(
        &engine.ctx,
        tool.as_ref(),
        &params,
        TEST_CONVERSATION,
        Asker::Broker {
            broker: engine.runs.runner().broker(),
            timeout,
            cancel: CancellationToken::new(),
        },
        // A test's "always allow" must not outlive the test.
        false,
        &tool_ctx,
        engine.events.as_ref(),
    )
    .await;
    Ok(ToolTest::from_call(call, typed, None, started))
}

#[cfg(test)]
mod tests {
    use super::server_block;

    #[test]
    fn a_server_is_edited_as_its_own_block() {
        let file = r#"{"mcpServers": {"a": {"command": "x"}, "b": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer {{TOKEN}}"}}}}"#;
        let block: serde_json::Value =
            serde_json::from_str(&server_block(file, "b").unwrap()).unwrap();
        assert_eq!(
            block,
            serde_json::json!({"mcpServers": {"b": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer {{TOKEN}}"}}}})
        );
        assert_eq!(server_block(file, "c"), None);
        assert_eq!(server_block("not json", "a"), None);
    }
}
