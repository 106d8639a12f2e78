//! The facts shown in the app's status area and by `artifactflow-cli status`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config_error::ConfigError;

/// What the engine reports about itself. The desktop app and the CLI show the same facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Status {
    /// ArtifactFlow's version.
    pub app_version: String,
    /// Folder holding `tools/`, `agents/` and `models.yaml`.
    pub config_dir: PathBuf,
    /// The SQLite database file.
    pub database: PathBuf,
    /// Schema version of the database.
    pub schema_version: u32,
    /// Folder holding the log files.
    pub log_dir: PathBuf,
    /// Number of tools loaded from `config/tools`.
    pub tools_loaded: u32,
    /// Number of agents loaded from `config/agents`.
    pub agents_loaded: u32,
    /// Problems found while loading the config folder.
    pub config_errors: Vec<ConfigError>,
}
