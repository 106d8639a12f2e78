//! # ArtifactFlow platform floor
//!
//! What touches the machine, below every concern of the product: it uses the ground floor and
//! nothing else of the workspace.
//!
//! - [`paths`]: where configuration, the database and logs live (platform folders, or
//!   `ARTIFACTFLOW_HOME`), and the bundled config seeded on first run.
//! - [`secrets`]: secret names, the OS keyring, `{{secret:…}}` templates and the redactor that
//!   keeps their values out of everything shown or stored.
//! - [`net`]: the one HTTP client builder and its redirect rule.
//! - [`owner`]: the lock that makes one process the owner of a home folder.
//! - [`logging`]: `tracing` with a rotating file in the log folder.
//! - [`yaml`], [`frontmatter`] and [`config_error`]: the one YAML module, Markdown frontmatter,
//!   and the located error every config reader returns.
#![warn(missing_docs)]

pub mod config_error;
pub mod frontmatter;
pub mod logging;
pub mod net;
pub mod owner;
pub mod paths;
pub mod secrets;
pub mod yaml;

// The ground floor, under the paths this crate's modules name it by.
pub use artifactflow_ground::util;
