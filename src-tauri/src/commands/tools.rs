//! Tools page: every tool, where it comes from, who uses it, what the model sees.

use engine::api::catalog::{self, ToolInfo};
use tauri::State;

use crate::error::AppError;
use crate::state::AppState;

/// Every tool: built-in, artifact and custom, in registration order.
#[tauri::command]
#[specta::specta]
pub fn list_tools(state: State<'_, AppState>) -> Result<Vec<ToolInfo>, AppError> {
    Ok(catalog::tools(&state.engine()?.ctx))
}
