//! Typed events pushed from the backend to the web view.

use serde::{Deserialize, Serialize};

/// The Tauri event carrying every [`engine::events::EngineEvent`] (its TypeScript type is
/// generated into the bindings as `EngineEvent`).
pub const ENGINE_EVENT: &str = "engine-event";

/// The status changed (e.g. the config folder was reloaded); carries the new status.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct StatusChanged {
    /// The new status.
    pub status: engine::status::Status,
}
