//! # ArtifactFlow ground floor
//!
//! What every other crate of the workspace may use and that uses none of them: plain data and
//! small helpers, no database, no network, no configuration loading.
//!
//! - [`ids`]: the ids of calls, requests and rows, and random suffixes for artifact ids.
//! - [`tool_spec`]: a tool as the model is told about it (name, description, typed parameters).
//! - [`rule_spec`]: a permission rule as written (tool, parameter patterns, action).
//! - [`limits`]: the bounds on what a peer's stream can make a reader hold in memory.
//! - [`util`]: atomic file writes, the Markdown files of a folder, name rules, URL encoding.
#![warn(missing_docs)]

pub mod ids;
pub mod limits;
pub mod rule_spec;
pub mod tool_spec;
pub mod util;
