//! Tauri commands: each a few lines over the engine, grouped by screen.

use tauri::State;

use crate::error::AppError;
use crate::events::{Outbox, Pushed};
use crate::state::AppState;

pub mod artifacts;
pub mod chat;
pub mod editor;
pub mod export;
pub mod library;
pub mod mcp;
pub mod model_check;
pub mod models;
pub mod settings;
pub mod skills;
pub mod tools;
pub mod views;

pub mod app_info;

/// Open `dir` in the system's file manager, creating it first when `create` (a folder the
/// app fills on demand, like models/ or skills/).
pub(crate) fn open_folder(dir: &std::path::Path, create: bool) -> Result<(), AppError> {
    if create {
        std::fs::create_dir_all(dir).map_err(|e| {
            AppError::new(
                crate::error::ErrorCode::Io,
                format!("cannot create {}: {e}", dir.display()),
            )
        })?;
    }
    open_in_file_manager(dir)
}

/// Open the folder `dir` in the system's file manager, through the opener plugin (on Linux it
/// tries `xdg-open`, then `gio` and the desktops' own launchers). When none opens it (none is
/// installed, or none has a file manager to hand it to), the error is a sentence that names the
/// folder and what to do ([`AppError::folder_not_opened`]), not the launcher's exit status; the
/// launcher's own words go to the log.
pub fn open_in_file_manager(dir: &std::path::Path) -> Result<(), AppError> {
    tauri_plugin_opener::open_path(dir, None::<&str>).map_err(|e| {
        tracing::warn!("no file manager opened {}: {e}", dir.display());
        AppError::folder_not_opened(dir)
    })
}

/// The events pushed since the last call (see [`crate::events`]), waiting up to 25 s for one.
/// Empty when none came, or when a newer call took over (a reloaded page).
#[tauri::command]
#[specta::specta]
pub async fn next_events(outbox: State<'_, Outbox>) -> Result<Vec<Pushed>, AppError> {
    Ok(outbox.next(std::time::Duration::from_secs(25)).await)
}

/// Hold closing the window (`true`) while the web view has something to save: a close request
/// then arrives as a [`Pushed::CloseRequested`] event and the window stays open.
#[tauri::command]
#[specta::specta]
pub fn hold_window_close(outbox: State<'_, Outbox>, held: bool) {
    outbox.hold_close(held);
}

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
        // Startup's work is done: what it freed can go back to the system.
        crate::memory::release_when_idle();
    });
    Ok(state.engine()?.ctx.status())
}

/// Re-read the config folder. A change is announced once, as a
/// [`StatusChanged`](crate::events::StatusChanged) event from the window's event sink (the
/// same way as the watcher's reloads), so a save is not announced twice.
#[tauri::command]
#[specta::specta]
pub fn reload_config(state: State<'_, AppState>) -> Result<engine::status::Status, AppError> {
    Ok(state.engine()?.reload_config())
}
