//! The engine's API for the front ends: what the desktop's commands and `artifactflow-cli` call,
//! each over an opened [`AppContext`](crate::context::AppContext) (or the [`Engine`](crate::Engine),
//! for a write that reloads the config), so the two front ends do the same thing the same way.
//!
//! - [`artifacts`]: the artifact library: pages, versions, text and bytes, delete, export.
//! - [`catalog`]: the agents and the tools as the front ends list them.
//! - [`conversations`]: the conversation list and pages, one conversation opened, rename,
//!   the transcript, the permission grants.
//! - [`settings`]: what the Settings screen shows and saves (profiles, the permission timeout,
//!   the global rules, the update feed), the compiled permission rules, secrets.
//! - [`direct`]: call one tool outside an agent run, through the same gate as a run's calls.
//! - [`editor`]: the config files the HTTP tool and agent editors read and save, their checks
//!   and test runs.
//! - [`library`]: users' own sources: add files and folders (a job, progress, cancel), list,
//!   show (metadata, Markdown, plain text), search by passage, export the original, remove.
//! - [`mcp`]: the MCP servers of `mcp.json` edited, and a test call of one of their tools.
//! - [`models`]: the model library: installed models, the catalogue, Hub search, downloads,
//!   import and removal.
//! - [`openapi`]: HTTP tools generated from an OpenAPI description, to review before saving.
//! - [`skills`]: the Agent Skills: listed with their problems, one opened, imported, turned
//!   on or off.
//! - [`check`]: "what would happen to this call?", the permission decision without running it.

pub mod artifacts;
pub mod catalog;
pub mod check;
pub mod conversations;
pub mod direct;
pub mod editor;
pub mod library;
pub mod mcp;
pub mod models;
pub mod openapi;
pub mod settings;
pub mod skills;
