//! Tauri commands: each a few lines over the engine, grouped by screen.

use tauri::State;
use tauri_specta::Event;

use crate::error::AppError;
use crate::events::StatusChanged;
use crate::state::AppState;

pub mod artifacts;
pub mod chat;
pub mod editor;
pub mod export;
pub mod settings;
pub mod tools;

pub mod app_info;

/// Version, folders, database and how many tools and agents are loaded.
#[tauri::command]
#[specta::specta]
pub fn get_status(state: State<'_, AppState>) -> Result<engine::status::Status, AppError> {
    static FIRST: std::sync::Once = std::sync::Once::new();
    FIRST.call_once(|| {
        if let Some(started) = crate::STARTED.get() {
            // The UI asks for the status as soon as it has rendered: this is the startup time.
            tracing::info!(
                startup_ms = started.elapsed().as_millis() as u64,
                "UI ready"
            );
        }
    });
    Ok(state.engine()?.ctx.status())
}

/// Re-read the config folder and broadcast the new status as a [`StatusChanged`] event.
#[tauri::command]
#[specta::specta]
pub fn reload_config(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
) -> Result<engine::status::Status, AppError> {
    let engine = state.engine()?;
    engine.ctx.reload_config();
    let status = engine.ctx.status();
    if let Err(e) = (StatusChanged {
        status: status.clone(),
    })
    .emit(&app)
    {
        tracing::warn!("cannot emit status-changed: {e}");
    }
    Ok(status)
}
