//! The HTTP tool editor and the agents page: config files read, checked, test-run, saved
//! (then reloaded, so they are live at once), enabled/disabled and deleted.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use engine::api::direct::Asker;
use engine::api::editor::{AgentCheck, ToolCheck, ToolTest};
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
    Ok(config_files::list(
        &state.engine()?.ctx.paths().config_dir,
        kind,
    ))
}

/// One file's text.
#[tauri::command]
#[specta::specta]
pub fn read_config_file(
    state: State<'_, AppState>,
    kind: FileKind,
    path: String,
) -> Result<ConfigFile, AppError> {
    Ok(config_files::read(
        &state.engine()?.ctx.paths().config_dir,
        kind,
        &path,
    )?)
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
    let engine = state.engine()?;
    if kind == FileKind::Tool {
        // The registry's rule too (unique names), which the file loader alone cannot see.
        engine::api::editor::check_before_save(
            &engine.ctx,
            path.as_deref().map(std::path::Path::new),
            &text,
        )?;
    }
    let saved = config_files::save(
        &engine.ctx.paths().config_dir,
        kind,
        path.as_deref(),
        &text,
        base.as_deref(),
    )?;
    state.engine()?.reload_config();
    Ok(saved)
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
    let file = config_files::set_enabled(
        &state.engine()?.ctx.paths().config_dir,
        kind,
        &path,
        enabled,
    )?;
    state.engine()?.reload_config();
    Ok(file)
}

/// Delete a file, then reload.
#[tauri::command]
#[specta::specta]
pub fn delete_config_file(
    state: State<'_, AppState>,
    kind: FileKind,
    path: String,
) -> Result<(), AppError> {
    config_files::delete(&state.engine()?.ctx.paths().config_dir, kind, &path)?;
    state.engine()?.reload_config();
    Ok(())
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
        engine::api::editor::check_tool(&ctx, path.map(PathBuf::from).as_deref(), &text)
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
    Ok(engine::api::editor::check_agent(
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
    Ok(engine::api::editor::test_tool(
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
        .deny_all(Some(engine::api::editor::TEST_CONVERSATION));
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

/// One tool an OpenAPI import generated, to pick and review before saving.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct ImportedTool {
    /// The tool name.
    pub name: String,
    /// The file it would be saved as.
    pub file_name: String,
    /// The whole tool file (Markdown with frontmatter), as the editor opens it.
    pub text: String,
    /// `GET /pets/{petId}`.
    pub operation: String,
    /// The operation's one-line summary.
    pub summary: String,
    /// The operation's tags.
    pub tags: Vec<String>,
    /// The secrets it uses (their names).
    pub secrets: Vec<String>,
    /// A tool file of that name is already in the config folder (saving it would not replace
    /// it: the editor's save refuses).
    pub exists: bool,
}

/// An operation that could not be imported, and why.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct ImportSkipped {
    /// `operationId (GET /path)`.
    pub operation: String,
    /// Why.
    pub reason: String,
}

/// Everything an OpenAPI description offers as HTTP tools.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct OpenApiImport {
    /// The API's title.
    pub title: String,
    /// Operations in the description.
    pub total: u32,
    /// The operations that can be tools, in document order.
    pub tools: Vec<ImportedTool>,
    /// Those that cannot, with the reason.
    pub skipped: Vec<ImportSkipped>,
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
    let config_dir = state.engine()?.ctx.paths().config_dir.clone();
    let token = tokio_util::sync::CancellationToken::new();
    if let Some(previous) = reading
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .replace(token.clone())
    {
        previous.cancel();
    }
    let cancelled = || AppError::new(ErrorCode::Io, engine::openapi::schema::CANCELLED);
    let source = source.trim().to_string();
    let text = match text {
        Some(text) => text,
        None if source.starts_with("http://") || source.starts_with("https://") => {
            tokio::select! {
                fetched = engine::openapi::fetch(&source) => {
                    fetched.map_err(|e| AppError::new(ErrorCode::Io, e))?
                }
                _ = token.cancelled() => return Err(cancelled()),
            }
        }
        None => {
            return Err(AppError::new(
                ErrorCode::InvalidConfig,
                format!("`{source}` is not an http:// or https:// URL; choose a file instead"),
            ))
        }
    };
    let stop = token.clone();
    let imported = tokio::task::spawn_blocking(move || {
        engine::openapi::import_cancellable(
            &source,
            &text,
            &engine::openapi::Selection::default(),
            &|| stop.is_cancelled(),
        )
    })
    .await
    .map_err(|e| AppError::new(ErrorCode::Io, format!("the import stopped: {e}")))?
    .map_err(|e| {
        if token.is_cancelled() {
            cancelled()
        } else {
            AppError::new(ErrorCode::InvalidConfig, e.to_string())
        }
    })?;
    // A tool of that name, or a file of that name (enabled or not), is already there.
    let existing: std::collections::HashSet<String> =
        config_files::list(&config_dir, FileKind::Tool)
            .into_iter()
            .flat_map(|f| {
                let stem = f.file_name.trim_start_matches('_').to_string();
                [f.name, Some(stem)]
            })
            .flatten()
            .collect();
    Ok(OpenApiImport {
        title: imported.title,
        total: imported.total as u32,
        tools: imported
            .tools
            .into_iter()
            .map(|t| ImportedTool {
                exists: existing.contains(&t.name) || existing.contains(&t.file_name),
                name: t.name,
                file_name: t.file_name,
                text: t.text,
                operation: t.operation,
                summary: t.summary,
                tags: t.tags,
                secrets: t.secrets,
            })
            .collect(),
        skipped: imported
            .skipped
            .into_iter()
            .map(|s| ImportSkipped {
                operation: s.operation,
                reason: s.reason,
            })
            .collect(),
    })
}
