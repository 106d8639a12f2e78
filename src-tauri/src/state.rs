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

/// Forward engine events to the window (through its [`Outbox`](crate::events::Outbox), which
/// must be managed before the engine starts).
pub fn window_sink(app: tauri::AppHandle) -> impl EventSink {
    use crate::events::{Outbox, Pushed, StatusChanged};
    move |event: EngineEvent| {
        let Some(outbox) = tauri::Manager::try_state::<Outbox>(&app) else {
            tracing::warn!("no outbox: an engine event is not forwarded");
            return;
        };
        if let EngineEvent::ConfigReloaded { .. } = &event {
            if let Some(state) = tauri::Manager::try_state::<AppState>(&app) {
                if let Ok(engine) = state.engine() {
                    let status = engine.ctx.status();
                    outbox.push(Pushed::StatusChanged(StatusChanged { status }));
                }
            }
        }
        let ended = matches!(event, EngineEvent::RunEnded { .. });
        outbox.push(Pushed::Engine(event));
        if ended {
            // A streamed answer's buffers are freed: give them back once things settle.
            crate::memory::release_when_idle();
        }
    }
}
