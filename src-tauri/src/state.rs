//! The state the shell manages: the opened [`Engine`] (context, runs, config watcher), or why
//! it could not be opened.

use std::sync::Arc;

use engine::events::{EngineEvent, EventSink};
use engine::paths::{AppPaths, PathsError};
pub use engine::Engine;

use crate::error::AppError;

/// Managed Tauri state. If the engine failed to open (e.g. a database from a newer version),
/// the window still starts and every command reports the reason.
pub struct AppState {
    engine: Result<Engine, AppError>,
}

impl AppState {
    /// Open the engine at the resolved folders; its events go to `events`.
    pub fn open(paths: Result<AppPaths, PathsError>, events: Arc<dyn EventSink>) -> Self {
        let engine = paths
            .map_err(engine::context::OpenError::from)
            .and_then(|paths| Engine::open(paths, events))
            .map_err(|e| {
                tracing::error!("engine unavailable: {e}");
                AppError::engine_unavailable(e)
            });
        AppState { engine }
    }

    /// The engine, or the error that explains why it is unavailable.
    pub fn engine(&self) -> Result<&Engine, AppError> {
        self.engine.as_ref().map_err(Clone::clone)
    }
}

/// Forward engine events to the window.
pub fn window_sink(app: tauri::AppHandle) -> impl EventSink {
    use tauri::Emitter;
    move |event: EngineEvent| {
        if let EngineEvent::ConfigReloaded { .. } = &event {
            if let Some(state) = tauri::Manager::try_state::<AppState>(&app) {
                if let Ok(engine) = state.engine() {
                    let status = engine.ctx.status();
                    let _ =
                        tauri_specta::Event::emit(&crate::events::StatusChanged { status }, &app);
                }
            }
        }
        if let Err(e) = app.emit(crate::events::ENGINE_EVENT, &event) {
            tracing::warn!("cannot forward an engine event: {e}");
        }
    }
}
