//! # ArtifactFlow engine
//!
//! The product's core, with no dependency on any UI toolkit: the desktop shell (Tauri) and the
//! command-line binary are thin adapters over this crate.
//!
//! How it fits together, from the top down (a module names only those below it):
//! - [`api`]: what the front ends call, over an opened context: conversations, direct tool
//!   calls, the editors' checks, permission checks. [`engine`] wires a context, runner,
//!   permission and elicitation brokers, MCP hub and config [`watcher`] into the one
//!   [`Engine`] the app, the CLI and the tests open.
//! - [`run`]: the run loop; [`gate`]: the one gate every tool call goes through;
//!   [`elicitation`]: MCP servers' questions to the user.
//! - [`context`] opens the config, database and secrets as an [`context::AppContext`];
//!   [`events`] are what the engine tells its front end; [`config`] reads the config folder
//!   into a snapshot, collecting located errors instead of failing; [`status`] gathers what
//!   the status area shows.
//! - [`check`]: the built-in tool-use check (`models check`): items, the runner that asks them
//!   as the run loop would, scoring by rules, results kept per model file, mode and guidance.
//! - [`interrupts`]: a run that needs a yes waits here for the UI's (or the terminal's) answer.
//!
//! Below the engine, in their own crates and re-exported here under the paths the code names
//! them by:
//! - `artifactflow-tools`: [`tools`], the artifact tools in [`artifacts`], [`permissions`] (a
//!   pure decision over compiled rules, and grant matching), [`mcp`], [`openapi`] and
//!   [`settings`];
//! - `artifactflow-store`: [`db`] (the one SQLite database, WAL, the one list of migrations
//!   with their backfills), [`conversations`], [`history`], [`calls`] (call records), the grant
//!   rows and the artifact library;
//! - [`models`]; [`paths`], [`secrets`], [`net`], [`logging`] (the platform crate); [`parser`];
//!   [`tool_spec`], [`ids`], [`limits`], [`rule_spec`] and [`util`] (the ground crate).
#![warn(missing_docs)]

pub mod api;
pub mod check;
pub mod config;
pub mod context;
pub mod elicitation;
pub mod engine;
pub mod events;
pub mod gate;
pub mod interrupts;
pub mod run;
pub mod sources;
pub mod status;
pub mod watcher;

// The floors below the engine, under the paths the engine's modules and its users name them
// by (`engine::parser`, `engine::tool_spec`, …).
pub use artifactflow_ground::{ids, limits, rule_spec, tool_spec, util};
pub use artifactflow_models as models;
pub use artifactflow_parser as parser;
pub use artifactflow_platform::{logging, net, owner, paths, secrets};
/// Users' sources as stored (the `library` API is in [`api::library`]).
pub use artifactflow_store::sources as source_store;
pub use artifactflow_store::{calls, calls_backfill, citations, conversations, db, history};
pub use artifactflow_tools::{artifacts, mcp, openapi, permissions, settings, skills, tools};

// The config modules' old paths, kept so code written against them still builds.
pub use artifactflow_platform::{config_error, frontmatter, yaml};
pub use config::edit as config_edit;
pub use config::files as config_files;

pub use engine::Engine;

/// The engine's version, which is also the app's version (one workspace version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
