//! Integration tests of the artifact store, the five artifact tools (called through the real
//! pipeline) and the persistence of oversized tool results.
//!
//! Modules:
mod create; // create_artifact: defaults, enum, duplicate ids, bad ids, snapshots
mod durability; // a writer killed with SIGKILL mid-stream loses no acknowledged write
mod grep; // grep_artifact: regex/literal, case, context merging, max_count, caps, errors
mod persist; // oversized results become tool_<name>_<hex> artifacts with a preview
mod read; // read_artifact: envelope, paging, the 50,000-char cap, versions, errors
mod rewrite; // rewrite_artifact: new versions, history
mod store; // listing, filters, full-text search, paging, delete, migrations with data
mod update; // update_artifact: exact, normalised, fuzzy, ambiguous, missing, empty

pub mod support;
