//! The located error every config reader returns, and the mapping of YAML errors onto it.
//!
//! It sits below the readers (agents, HTTP tools, model profiles, settings) so they can all
//! name it without importing the snapshot loader that calls them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::yaml::YamlError;

/// A problem in one config file, located as precisely as known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line in the file, if known.
    pub line: Option<u32>,
    /// The field at fault, if known.
    pub field: Option<String>,
    /// What is wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl ConfigError {
    /// A folder of config files that exists but cannot be listed.
    pub fn unreadable_folder(dir: &Path, e: std::io::Error) -> Self {
        ConfigError {
            file: dir.to_path_buf(),
            line: None,
            field: None,
            message: format!("cannot read folder: {e}"),
        }
    }
}

/// `e` located in `path`, whose YAML starts at `first_line` (1 for a whole YAML file, the
/// frontmatter's first line for a Markdown file).
pub fn yaml_error(path: &Path, first_line: usize, e: YamlError) -> ConfigError {
    // The YAML library names the field in messages like "name: invalid type ..." or "missing field `x`".
    let field = e
        .message
        .split_once("missing field `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(f, _)| f.to_string())
        .or_else(|| {
            e.message
                .split_once(": ")
                .map(|(f, _)| f)
                .filter(|f| {
                    !f.is_empty()
                        && f.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_.[]".contains(c))
                })
                .map(|f| f.to_string())
        });
    ConfigError {
        file: path.to_path_buf(),
        line: e.line.map(|l| (l + first_line - 1) as u32),
        field,
        message: e.message,
    }
}
