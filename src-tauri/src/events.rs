//! Typed events pushed from the backend to the web view.

use serde::{Deserialize, Serialize};

/// The status changed (e.g. the config folder was reloaded); carries the new status.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct StatusChanged {
    /// The new status.
    pub status: engine::status::Status,
}
