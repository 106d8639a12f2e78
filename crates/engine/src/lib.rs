//! # ArtifactFlow engine
//!
//! The product's core, with no dependency on any UI toolkit: the desktop shell (Tauri) and the
//! command-line binary are thin adapters over this crate.
//!
//! How it fits together:
//! - [`paths`] decides where configuration, the database and logs live (platform folders, or
//!   `ARTIFACTFLOW_HOME` for tests and portable use) and seeds the config folder from the
//!   bundled defaults on first run.
//! - [`db`] opens the one SQLite database (WAL, versioned migrations).
//! - [`config`] reads `config/agents/*.md` and `config/tools/*.md` into a snapshot, collecting
//!   located errors instead of failing; it also holds the file editors, the settings and
//!   profile writers, the one YAML module and the watcher.
//! - [`context`] opens all of that at once as an [`context::AppContext`].
//! - [`engine`] wires a context, runner, permission broker and config watcher into the one
//!   [`Engine`] the app, the CLI and the tests open.
//! - [`status`] gathers the facts the app's status area and `artifactflow-cli status` show.
//! - [`util`] holds the small helpers below every concern (atomic write, name rules, URL
//!   encoding).
//! - [`logging`] sets up `tracing` with a rotating file in the log folder.
#![warn(missing_docs)]

pub mod artifacts;
pub mod calls;
pub mod calls_backfill;
pub mod config;
pub mod context;
pub mod conversations;
pub mod db;
pub mod engine;
pub mod events;
pub mod history;
pub mod interrupts;
pub mod mcp;
pub mod openapi;
pub mod permissions;
pub mod run;
pub mod status;
pub mod tools;

// The floors below the engine, under the paths the engine's modules and its users name them
// by (`engine::parser`, `engine::tool_spec`, …).
pub use artifactflow_ground::{ids, limits, tool_spec, util};
pub use artifactflow_models as models;
pub use artifactflow_parser as parser;
pub use artifactflow_platform::{logging, net, owner, paths, secrets};

// The config modules' old paths, kept so code written against them still builds.
pub use artifactflow_platform::{config_error, frontmatter, yaml};
pub use config::edit as config_edit;
pub use config::files as config_files;
pub use config::watcher;

pub use engine::Engine;

/// The engine's version, which is also the app's version (one workspace version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
