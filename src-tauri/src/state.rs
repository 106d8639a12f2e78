//! The state the shell manages: the opened engine, or why it could not be opened.

use engine::context::AppContext;
use engine::paths::{AppPaths, PathsError};

use crate::error::AppError;

/// Managed Tauri state. If the engine failed to open (e.g. a database from a newer version),
/// the window still starts and every command reports the reason.
pub struct AppState {
    engine: Result<AppContext, AppError>,
}

impl AppState {
    /// Open the engine at the resolved folders.
    pub fn open(paths: Result<AppPaths, PathsError>) -> Self {
        let engine = paths
            .map_err(engine::context::OpenError::from)
            .and_then(AppContext::open_at)
            .map_err(|e| {
                tracing::error!("engine unavailable: {e}");
                AppError::engine_unavailable(e)
            });
        AppState { engine }
    }

    /// The engine, or the error that explains why it is unavailable.
    pub fn engine(&self) -> Result<&AppContext, AppError> {
        self.engine.as_ref().map_err(Clone::clone)
    }
}
