//! # ArtifactFlow tools
//!
//! The tools agents call and where they come from, with the permission rules that decide each
//! call. It uses the store, the platform and ground floors and the parser, and nothing above:
//! loading the config folder, the gate that runs a call, events and the run loop are the
//! engine's.
//!
//! - [`tools`]: the [`tools::Tool`] trait, the one execution pipeline, the registry, HTTP tools
//!   and the built-in tools; [`artifacts`]: the five artifact tools over the store's library,
//!   and oversized results kept as artifacts.
//! - [`mcp`]: MCP servers (configuration, the client and its transports, sign-in, the hub that
//!   keeps them running) and their tools; [`openapi`]: HTTP tools imported from an OpenAPI
//!   document.
//! - [`permissions`]: permission rules compiled once per config, and the pure decision a call
//!   gets from them (allow, confirm with reasons, or deny with the rule), with conversation
//!   grants; asking the user stays in the engine's gate.
//! - [`skills`]: Agent Skills (`SKILL.md` folders), loaded and validated, and the tools that
//!   load one, read its files and run its scripts.
//! - [`settings`]: `settings.yaml`'s types (the web tools' services, the permission timeout),
//!   read below the tools that use them.
#![warn(missing_docs)]

pub mod artifacts;
pub mod mcp;
pub mod openapi;
pub mod permissions;
pub mod settings;
pub mod skills;
pub mod tools;

// The floors below, under the paths this crate's modules name them by.
use artifactflow_ground::{ids, rule_spec, tool_spec, util};
use artifactflow_parser as parser;
use artifactflow_platform::{config_error, frontmatter, net, secrets, yaml};

/// The version MCP servers are told (the one workspace version, so the app's).
const VERSION: &str = env!("CARGO_PKG_VERSION");
