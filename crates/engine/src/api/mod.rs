//! The engine's API for the front ends: what the desktop's commands and `artifactflow-cli` call,
//! each over an opened [`AppContext`](crate::context::AppContext), so the two front ends do the
//! same thing the same way.
//!
//! - [`catalog`]: the agents and the tools as the front ends list them.
//! - [`conversations`]: the conversation list and pages, one conversation opened, rename,
//!   the transcript, the permission grants.
//! - [`settings`]: what the Settings screen shows, with the secrets the config needs.
//! - [`direct`]: call one tool outside an agent run, through the same gate as a run's calls.
//! - [`editor`]: the HTTP tool and agent editors' checks and test runs.
//! - [`check`]: "what would happen to this call?", the permission decision without running it.

pub mod catalog;
pub mod check;
pub mod conversations;
pub mod direct;
pub mod editor;
pub mod settings;
