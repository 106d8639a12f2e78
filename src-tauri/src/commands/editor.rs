//! The HTTP tool editor and the agents page: config files read, checked, test-run, saved
//! (then reloaded, so they are live at once), enabled/disabled and deleted.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use engine::api::direct::Asker;
use engine::api::editor::{self, AgentCheck, ToolCheck, ToolTest};
use engine::api::openapi::{self, OpenApiImport};
use engine::config_files::{self, ConfigFile, FileEntry, FileKind};
use tauri::State;
use tokio_util::sync::CancellationToken;

use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// Every tool or agent file, enabled or disabled.
#[tauri::command]
#[specta::specta]
pub fn list_config_files(
    state: State<'_, AppState>,
    kind: FileKind,
) -> Result<Vec<FileEntry>, AppError> {
    Ok(editor::files(&state.engine()?.ctx, kind))
}

/// One file's text.
#[tauri::command]
#[specta::specta]
pub fn read_config_file(
    state: State<'_, AppState>,
    kind: FileKind,
    path: String,
) -> Result<ConfigFile, AppError> {
    Ok(editor::read_file(&state.engine()?.ctx, kind, &path)?)
}

/// Save `text` to `path` (or a new `<name>.md`), provided the disk still holds `base`; then
/// reload the configuration so the change is live.
#[tauri::command]
#[specta::specta]
pub fn save_config_file(
    state: State<'_, AppState>,
    kind: FileKind,
    path: Option<String>,
    text: String,
    base: Option<String>,
) -> Result<ConfigFile, AppError> {
    let (path, base) = (path.as_deref(), base.as_deref());
    Ok(editor::save_file(state.engine()?, kind, path, &text, base)?)
}

/// Enable or disable a file (the leading `_`), then reload.
#[tauri::command]
#[specta::specta]
pub fn set_config_file_enabled(
    state: State<'_, AppState>,
    kind: FileKind,
    path: String,
    enabled: bool,
) -> Result<ConfigFile, AppError> {
    Ok(editor::set_file_enabled(
        state.engine()?,
        kind,
        &path,
        enabled,
    )?)
}

/// Delete a file, then reload.
#[tauri::command]
#[specta::specta]
pub fn delete_config_file(
    state: State<'_, AppState>,
    kind: FileKind,
    path: String,
) -> Result<(), AppError> {
    Ok(editor::delete_file(state.engine()?, kind, &path)?)
}

/// The text a new HTTP tool starts from: placeholders only (not the commented example, whose
/// body text the model would read).
#[tauri::command]
#[specta::specta]
pub fn tool_template() -> Result<String, AppError> {
    Ok(config_files::tool_template().to_string())
}

/// Check a tool draft like the loader does, plus its secrets' presence (never their values).
/// Async: the keyring lookups block.
#[tauri::command]
#[specta::specta]
pub async fn check_tool_draft(
    state: State<'_, AppState>,
    path: Option<String>,
    text: String,
) -> Result<ToolCheck, AppError> {
    let ctx = state.engine()?.ctx.clone();
    tokio::task::spawn_blocking(move || {
        editor::check_tool(&ctx, path.map(PathBuf::from).as_deref(), &text)
    })
    .await
    .map_err(|e| AppError::new(ErrorCode::Io, format!("the check stopped: {e}")))
}

/// Check an agent draft: loader errors, unknown tools, unknown model profile.
#[tauri::command]
#[specta::specta]
pub fn check_agent_draft(
    state: State<'_, AppState>,
    path: Option<String>,
    text: String,
) -> Result<AgentCheck, AppError> {
    Ok(editor::check_agent(
        &state.engine()?.ctx,
        path.map(PathBuf::from).as_deref(),
        &text,
    ))
}

/// Test-run a tool draft with `params` through the real pipeline. A `confirm` tool asks in the
/// permission dialog like in a run.
#[tauri::command]
#[specta::specta]
pub async fn test_tool_draft(
    state: State<'_, AppState>,
    path: Option<String>,
    text: String,
    params: BTreeMap<String, String>,
) -> Result<ToolTest, AppError> {
    let engine = state.engine()?;
    let timeout = Duration::from_secs(engine.ctx.config().settings.permission_timeout_secs.max(1));
    let params: indexmap::IndexMap<String, String> = params.into_iter().collect();
    Ok(editor::test_tool(
        &engine.ctx,
        path.map(PathBuf::from).as_deref(),
        &text,
        &params,
        Asker::Broker {
            broker: engine.runs.runner().broker(),
            timeout,
            cancel: CancellationToken::new(),
        },
        engine.events.as_ref(),
    )
    .await?)
}

/// Stop waiting for the permission of a test run (the editor was closed): denied.
#[tauri::command]
#[specta::specta]
pub fn cancel_tool_test(state: State<'_, AppState>) -> Result<(), AppError> {
    state
        .engine()?
        .runs
        .runner()
        .broker()
        .deny_all(Some(editor::TEST_CONVERSATION));
    Ok(())
}

/// Stop the OpenAPI import being read (fetching or generating): it fails with
/// "the import was cancelled". Nothing is being read: nothing happens.
#[tauri::command]
#[specta::specta]
pub fn cancel_openapi_import(reading: State<'_, OpenApiReading>) -> Result<(), AppError> {
    if let Some(token) = reading.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
        token.cancel();
    }
    Ok(())
}

/// The OpenAPI import being read, so that [`cancel_openapi_import`] can stop it.
#[derive(Default)]
pub struct OpenApiReading(std::sync::Mutex<Option<tokio_util::sync::CancellationToken>>);

/// Read an OpenAPI 3.0/3.1 or Swagger 2.0 description (JSON or YAML) and generate a tool for
/// every operation that can be one; nothing is saved. `text` is the file's content when the
/// user chose a file (`source` is then its name); without it `source` is an http(s) URL,
/// fetched here. Errors name the source and the JSON pointer or line. A new import, or
/// [`cancel_openapi_import`], stops the one being read.
#[tauri::command]
#[specta::specta]
pub async fn import_openapi(
    state: State<'_, AppState>,
    reading: State<'_, OpenApiReading>,
    source: String,
    text: Option<String>,
) -> Result<OpenApiImport, AppError> {
    let token = tokio_util::sync::CancellationToken::new();
    if let Some(previous) = reading
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .replace(token.clone())
    {
        previous.cancel();
    }
    let ctx = state.engine()?.ctx.clone();
    Ok(openapi::read(&ctx, &source, text, &Default::default(), &token).await?)
}
