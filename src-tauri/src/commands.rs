//! Tauri commands: each a few lines over the engine.

use tauri::State;
use tauri_specta::Event;

use crate::error::AppError;
use crate::events::StatusChanged;
use crate::state::AppState;

/// Version, folders, database and how many tools and agents are loaded.
#[tauri::command]
#[specta::specta]
pub fn get_status(state: State<'_, AppState>) -> Result<engine::status::Status, AppError> {
    Ok(state.engine()?.status())
}

/// Re-read the config folder and broadcast the new status as a [`StatusChanged`] event.
#[tauri::command]
#[specta::specta]
pub fn reload_config(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
) -> Result<engine::status::Status, AppError> {
    let engine = state.engine()?;
    engine.reload_config();
    let status = engine.status();
    if let Err(e) = (StatusChanged {
        status: status.clone(),
    })
    .emit(&app)
    {
        tracing::warn!("cannot emit status-changed: {e}");
    }
    Ok(status)
}
