//! Artifacts: the documents agents and users work on, stored with every version in the app's
//! SQLite database, and the per-conversation tools that create, change, read and search them
//! (and search the user's own sources, which are artifacts of the library).
//!
//! # How it fits together
//! - [`store`]: [`ArtifactStore`], a cloneable handle over the shared connection. Artifacts are
//!   named by (conversation, id); every change is a new immutable version (stored as ~64 KB
//!   chunks of whole lines) written in one transaction; an FTS5 index covers titles and
//!   latest content for the library's search. Binary artifacts (a tool's images and audio,
//!   [`ArtifactStore::create_binary`]) hold one version of bytes, read with
//!   [`ArtifactStore::bytes`]; only their title is indexed, and the text tools refuse them.
//! - [`tools`]: [`artifact_tools`] builds `create_artifact`, `update_artifact`,
//!   `rewrite_artifact`, `read_artifact`, `grep_artifact` and `search_library` bound to one
//!   conversation; add them with
//!   [`Registry::with_tools`](crate::tools::registry::Registry::with_tools). Every
//!   conversation reads the user's sources (`src_…`, see [`sources`]) but cannot change them.
//! - [`matching`] finds `update_artifact`'s `old_str` (exact → normalised → fuzzy), with
//!   [`normalize`] mapping normalised positions back to the original text.
//! - [`grep`] is `grep_artifact`'s search on ripgrep's crates (on worker threads with their
//!   own read-only connections for large searches); [`slice`](mod@slice) renders the `<artifact_slice>`
//!   envelope; [`lines`] counts lines and cuts content into the stored chunks of whole lines
//!   that keep page reads cheap.
//! - [`persist`]: [`persist_oversized`] stores a too-long successful tool result as an artifact
//!   and hands the model a preview instead.
//!
//! ```
//! use artifactflow_tools::artifacts::{artifact_tools, ArtifactStore};
//! let dir = tempfile::tempdir().unwrap();
//! let store = ArtifactStore::open(&dir.path().join("app.db")).unwrap();
//! let tools = artifact_tools(store, "conversation-1");
//! assert_eq!(tools.len(), 6);
//! ```

pub mod persist;
pub mod sources;
pub mod tools;

pub use artifactflow_store::artifacts::{grep, lines, matching, normalize, slice, store};

pub use persist::persist_oversized;
pub use store::{
    Artifact, ArtifactPage, ArtifactSource, ArtifactStore, ArtifactSummary, ListFilter, ListSort,
    NewArtifact, StoreError, VersionInfo, MAX_BINARY_BYTES,
};
pub use tools::{artifact_tools, snapshot};
