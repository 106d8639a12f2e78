//! Artifacts as stored: the documents agents and users work on, kept with every version in the
//! app's SQLite database, and the text work their tools do on them. The tools themselves (and
//! storing an oversized tool result as an artifact) sit above, in the engine's `artifacts`.
//!
//! - [`store`]: [`ArtifactStore`], a cloneable handle over the shared connection. Artifacts are
//!   named by (conversation, id); every change is a new immutable version (stored as ~64 KB
//!   chunks of whole lines) written in one transaction; an FTS5 index covers titles and latest
//!   content for the library's search. Binary artifacts (a tool's images and audio,
//!   [`ArtifactStore::create_binary`]) hold one version of bytes, read with
//!   [`ArtifactStore::bytes`]; only their title is indexed, and the text tools refuse them.
//! - [`matching`] finds `update_artifact`'s `old_str` (exact → normalised → fuzzy), with
//!   [`normalize`] mapping normalised positions back to the original text.
//! - [`grep`] is `grep_artifact`'s search on ripgrep's crates (on worker threads with their own
//!   read-only connections for large searches); [`slice`](mod@slice) renders the `<artifact_slice>`
//!   envelope; [`lines`] counts lines and cuts content into the stored chunks of whole lines
//!   that keep page reads cheap.

pub mod grep;
pub mod lines;
pub mod matching;
pub mod normalize;
pub mod slice;
pub mod store;

pub use store::{
    Artifact, ArtifactPage, ArtifactSource, ArtifactStore, ArtifactSummary, ListFilter, ListSort,
    NewArtifact, StoreError, VersionInfo, MAX_BINARY_BYTES,
};
