//! Agent Skills: folders with a `SKILL.md` (YAML frontmatter with `name` and `description`,
//! then instructions) and optional `scripts/`, `references/` and `assets/`, as Claude, goose,
//! Zed and other clients read them, loaded unchanged.
//!
//! - [`load`]: reading a folder of skills (one folder per skill), validated as the format
//!   specifies, each problem a located [`ConfigError`] that never stops the other skills.
//! - [`import`]: a skill from a folder or a `.zip`/`.skill` archive, checked whole first.
//! - [`files`]: a skill's files, confined to its folder (no `..`, no symlink out), read only
//!   when they are regular files, their size checked before reading.
//! - [`walk`]: the bounded walk of a skill's folder behind its listing and a folder import
//!   (each real folder once, capped in depth and entries, only regular files).
//! - [`tools`]: what the model gets. Only each skill's name and description are in the prompt
//!   ([`listing`]); `load_skill` loads one skill's instructions when the model decides to use
//!   it, `read_skill_file` reads one of its files, `run_skill_script` runs one of its scripts
//!   (confirm by default, a clean environment, a timeout, capped output).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::config_error::ConfigError;

pub mod files;
pub mod import;
pub mod load;
pub mod remote;
pub mod script;
pub mod tools;
pub mod walk;

/// What the skills modules' unit tests share.
#[cfg(test)]
pub(crate) mod testing {
    /// Run `work` on its own thread; fail if it has not returned within 10 s (a regression
    /// fails the test instead of hanging the suite).
    pub(crate) fn within_10s<T: Send + 'static>(
        what: &str,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(work());
        });
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{what} did not finish within 10 s"))
    }
}

pub use load::{load_dir, parse_skill};
pub use remote::McpSkill;
pub use tools::{skill_tools, Found, SkillShelf, SKILL_TOOL_NAMES};

/// An agent's `skills:`: none (absent), `all`, or a list of skill names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SkillChoice {
    /// No skills.
    #[default]
    None,
    /// Every enabled skill.
    All,
    /// These skills (the enabled ones of them).
    Named(Vec<String>),
}

impl SkillChoice {
    /// No skills at all (absent, or an empty list)?
    pub fn is_none(&self) -> bool {
        matches!(self, SkillChoice::None) || matches!(self, SkillChoice::Named(n) if n.is_empty())
    }
}

impl Serialize for SkillChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillChoice::None => s.serialize_none(),
            SkillChoice::All => s.serialize_str("all"),
            SkillChoice::Named(names) => names.serialize(s),
        }
    }
}

impl<'de> serde::Deserialize<'de> for SkillChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Written {
            Word(String),
            Names(Vec<String>),
            Nothing(()),
        }
        match Written::deserialize(d)? {
            Written::Word(w) if w.trim() == "all" => Ok(SkillChoice::All),
            Written::Word(w) if w.trim() == "none" || w.trim().is_empty() => Ok(SkillChoice::None),
            Written::Word(w) => Err(serde::de::Error::custom(format!(
                "skills: `{w}` is neither `all` nor a list of skill names (write `skills: [{w}]` for one skill)"
            ))),
            Written::Names(names) => Ok(SkillChoice::Named(names)),
            Written::Nothing(()) => Ok(SkillChoice::None),
        }
    }
}

impl SkillChoice {
    /// Does the choice take the skill `name` (`SERVER.NAME` for a server's skill; an entry
    /// `SERVER.*` takes every skill of that server)?
    pub fn takes(&self, name: &str) -> bool {
        match self {
            SkillChoice::None => false,
            SkillChoice::All => true,
            SkillChoice::Named(names) => names
                .iter()
                .any(|n| n == name || crate::permissions::pattern_matches(n, name)),
        }
    }
}

/// Where a skill was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum SkillOrigin {
    /// The config folder's `skills/`.
    Config,
    /// A user-level folder other apps use (`~/.agents/skills`, `~/.claude/skills`), read when
    /// Settings turn them on.
    UserFolder {
        /// The folder.
        folder: PathBuf,
    },
    /// An MCP server that serves skills (the skills extension); its files are read from the
    /// server when the skill is used.
    Mcp {
        /// The server's name in mcp.json.
        server: String,
    },
}

/// One skill that loaded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skill {
    /// Its name: lowercase letters, digits and hyphens, the name of its folder.
    pub name: String,
    /// What it does and when to use it: all the model sees before it loads the skill.
    pub description: String,
    /// Its licence, as written.
    pub license: Option<String>,
    /// What it needs to run (products, system packages, network), as written.
    pub compatibility: Option<String>,
    /// Tools it expects to use (`allowed-tools`), as written. Informational: the agent's own
    /// tools and the permission rules decide every call.
    pub allowed_tools: Vec<String>,
    /// Extra key-value facts (`metadata`).
    pub metadata: BTreeMap<String, String>,
    /// The instructions (the Markdown after the frontmatter).
    pub instructions: String,
    /// The skill's folder.
    pub dir: PathBuf,
    /// Its `SKILL.md`.
    pub source: PathBuf,
    /// Where it was found.
    pub origin: SkillOrigin,
    /// Frontmatter fields this app does not use (other clients' extensions), kept as notes:
    /// they never stop a skill from loading.
    pub ignored_fields: Vec<String>,
    /// What is wrong with it that does not stop it from loading (a description longer than
    /// the format allows), located; [`load::load_dir`] reports them with the problems.
    pub warnings: Vec<ConfigError>,
}

impl Skill {
    /// The skill's description as one line, whitespace collapsed.
    pub fn one_line_description(&self) -> String {
        self.description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Every skill found and every problem, sorted by name; a name used twice keeps the first
/// (config folder first, then the user folders in order) and reports the others. One folder
/// reached again through a link (skill installers keep one copy in `~/.agents/skills` and link
/// it from `~/.claude/skills`) is the same skill: it counts once, and so does each problem.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    /// The skills that loaded.
    pub skills: Vec<Skill>,
    /// What did not load, located.
    pub errors: Vec<ConfigError>,
}

impl SkillSet {
    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// Add the skills of one more folder; a name already taken is reported, not loaded, unless
    /// it is the same folder (see [`SkillSet`]). A problem already reported is not added again.
    pub fn add(&mut self, loaded: (Vec<Skill>, Vec<ConfigError>)) {
        let (skills, errors) = loaded;
        for error in errors {
            if !self.errors.iter().any(|known| same_problem(known, &error)) {
                self.errors.push(error);
            }
        }
        for skill in skills {
            if let Some(first) = self.get(&skill.name) {
                if same_path(&first.dir, &skill.dir) {
                    continue;
                }
                self.errors.push(ConfigError {
                    file: skill.source.clone(),
                    line: None,
                    field: Some("name".into()),
                    message: format!(
                        "a skill named `{}` is already loaded from {}; this one is not loaded",
                        skill.name,
                        first.source.display()
                    ),
                });
            } else {
                self.skills.push(skill);
            }
        }
        self.skills.sort_by(|a, b| a.name.cmp(&b.name));
    }
}

/// Is `b` the problem `a` is, perhaps found through another path to the same file?
fn same_problem(a: &ConfigError, b: &ConfigError) -> bool {
    a.line == b.line && a.field == b.field && a.message == b.message && same_path(&a.file, &b.file)
}

/// Do `a` and `b` name the same file or folder (the same path, or the same once links are
/// followed)?
fn same_path(a: &std::path::Path, b: &std::path::Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}
