//! # ArtifactFlow store
//!
//! Everything the app keeps in its one SQLite database, below the tools and the engine: it uses
//! the ground and platform floors and the parser, and nothing above them.
//!
//! - [`db`]: opening the database (WAL, one connection shared behind a lock) and the one list of
//!   versioned migrations with their backfills, which every opener runs.
//! - [`conversations`]: conversations, their messages and runs; [`history`]: a conversation as
//!   the UI and exports read it back, call records attached.
//! - [`calls`]: a tool call as data ([`calls::CallRecord`], a typed [`calls::CallStatus`]) and
//!   its rows; [`calls_backfill`]: migration 5's one-time reading of older text into records.
//! - [`checks`]: the tool-use check's results, by model identity, mode and guidance.
//! - [`grants`]: conversation "always allow" grants as rows, with what each is bound to.
//! - [`artifacts`]: the artifact library (versions, chunks, search) and the text work of the
//!   artifact tools (matching, grep, slices).
//! - [`sources`]: users' own sources (their files' text by page, passages for search, the
//!   original bytes as content-addressed files) and the jobs that add them.
#![warn(missing_docs)]

pub mod artifacts;
pub mod calls;
pub mod calls_backfill;
pub mod checks;
pub mod citations;
pub mod conversations;
pub mod db;
pub mod fts;
pub mod grants;
pub mod history;
pub mod sources;

// The floors below, under the paths this crate's modules name them by.
use artifactflow_ground::{ids, rule_spec};
use artifactflow_parser as parser;
use artifactflow_platform::owner;
