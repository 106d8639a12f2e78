//! Users' own sources: adding files to the library through extraction workers.
//!
//! - [`workers`]: the `artifactflow-extract` child processes, found like the model runtime
//!   (beside the program), each given one file at a time under a watchdog (no output for 30 s,
//!   or longer than 60 s + 1 s per MB, kills it), so a hostile file can only fail itself.
//! - [`ingest`]: one add as a job: walk, hash and dedup, extract in parallel (one worker per
//!   core), store page batches in short transactions, and a located error per failed file.
//!
//! The rows and files themselves are the store's (`artifactflow_store::sources`); the front ends call
//! `crate::api::library`.

pub mod ingest;
pub mod workers;
