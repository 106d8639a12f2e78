//! Loading the config folder into a [`ConfigSnapshot`].
//!
//! Loading never fails as a whole: every file that cannot be read becomes a located
//! [`ConfigError`] (file, line, field) and the other files still load.
//!
//! This module reads agents (`agents/*.md`) and the headers of HTTP tool files
//! (`tools/*.md`, files starting with `_` ignored). The full HTTP tool definition is the tools
//! module's job; here a tool file counts as loaded when its frontmatter parses and names it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::tools::http::HttpToolDef;
use crate::util::fs::markdown_files;

pub mod edit;
pub mod files;
pub mod fingerprint;

// The readers' shared pieces live on the platform floor; these are their old paths.
pub use artifactflow_platform::config_error as error;
pub use artifactflow_platform::{frontmatter, yaml};
use error::yaml_error;
pub use error::ConfigError;
// Kept at their old paths for the code that names them there.
pub use crate::util::fs::write_atomically;
pub use crate::util::names::is_valid_tool_name;

pub use crate::settings::{ServiceSettings, Settings};
pub use crate::skills::SkillChoice;
pub use crate::tool_spec::Permission;

/// An agent definition from `config/agents/*.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentDef {
    /// Unique agent name: the id other agents and conversations use.
    pub name: String,
    /// The name people see (`Lead researcher`); the `name` stays the id. Optional: without it
    /// the UI shows `name`.
    #[serde(default)]
    pub display_name: Option<String>,
    /// One-line description (shown to agents that may hand over to this one).
    #[serde(default)]
    pub description: String,
    /// Name of the model profile in `models.yaml`.
    #[serde(default)]
    pub model: Option<String>,
    /// Tools this agent may call, with the agent's permission for each.
    #[serde(default)]
    pub tools: BTreeMap<String, Permission>,
    /// Internal agents cannot be the target of `call_subagent`.
    #[serde(default)]
    pub internal: bool,
    /// The Agent Skills it may load: `all` (every enabled skill), or a list of names. None
    /// when absent.
    #[serde(default, skip_serializing_if = "SkillChoice::is_none")]
    pub skills: SkillChoice,
    /// Upper bound of tool rounds in one run.
    #[serde(default = "default_max_tool_rounds")]
    pub max_tool_rounds: u32,
    /// Permission rules for this agent's calls only, as written (read as plain data so one bad
    /// rule never breaks the agent; see [`crate::permissions::load`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_rules: Option<serde_json::Value>,
    /// Where `permission_rules` and its items are in the file.
    #[serde(skip)]
    pub permission_rule_lines: crate::permissions::load::RuleLines,
    /// The role prompt (the Markdown body).
    #[serde(skip)]
    pub role_prompt: String,
    /// The file it came from.
    #[serde(skip)]
    pub source: PathBuf,
}

fn default_max_tool_rounds() -> u32 {
    20
}

/// Everything loaded from one config folder.
#[derive(Debug, Clone, Default)]
pub struct ConfigSnapshot {
    /// Agents that loaded, sorted by name.
    pub agents: Vec<AgentDef>,
    /// HTTP tools that loaded, sorted by name.
    pub tools: Vec<HttpToolDef>,
    /// Settings from `settings.yaml` (defaults when absent or broken).
    pub settings: Settings,
    /// Model profiles from `models.yaml`.
    pub models: Vec<crate::models::ModelProfile>,
    /// MCP servers from `mcp.json` (its problems are also in `errors`).
    pub mcp: crate::mcp::McpConfig,
    /// Problems found, in file order.
    pub errors: Vec<ConfigError>,
    /// `settings.yaml`'s permission rules, checked for their patterns (not yet against the
    /// tools: see [`crate::context::AppContext::permission_rules`]).
    pub global_rules: Vec<crate::permissions::load::RuleEntry>,
    /// Agent Skills from the config folder's `skills/` (and the user folders when Settings
    /// turn them on), each problem also in `errors`.
    pub skills: crate::skills::SkillSet,
    /// The files this snapshot was read from, as they were just before reading them.
    pub loaded_from: fingerprint::Fingerprint,
}

/// Load agents, HTTP tools and settings from `config_dir`.
pub fn load(config_dir: &Path) -> ConfigSnapshot {
    let mut snap = ConfigSnapshot {
        loaded_from: fingerprint::fingerprint(config_dir),
        ..ConfigSnapshot::default()
    };
    let agents_dir = config_dir.join("agents");
    let agent_files = markdown_files(&agents_dir).unwrap_or_else(|e| {
        snap.errors
            .push(ConfigError::unreadable_folder(&agents_dir, e));
        Vec::new()
    });
    for path in agent_files {
        match load_agent(&path) {
            Ok(agent) => snap.agents.push(agent),
            Err(e) => snap.errors.push(e),
        }
    }
    let (tools, errors) = crate::tools::http::load_dir(&config_dir.join("tools"));
    snap.tools = tools;
    snap.errors.extend(errors);
    let (models, model_errors) = crate::models::load_profiles(config_dir);
    snap.models = models;
    snap.errors.extend(model_errors);
    match Settings::load(config_dir) {
        Ok(settings) => snap.settings = settings,
        Err(e) => snap.errors.push(e),
    }
    snap.global_rules = global_rules(config_dir, &snap.settings);
    snap.mcp = crate::mcp::config::load(config_dir);
    snap.errors.extend(snap.mcp.errors.iter().cloned());
    snap.skills = load_skills(config_dir, &snap.settings.skills);
    snap.errors.extend(snap.skills.errors.iter().cloned());
    dedupe(
        &mut snap.agents,
        |a| &a.name,
        |a| &a.source,
        &mut snap.errors,
    );
    dedupe(
        &mut snap.tools,
        |t| &t.spec.name,
        |t| &t.source,
        &mut snap.errors,
    );
    give_skill_tools(&mut snap);
    snap
}

/// The skills of the config folder's `skills/`, then (when `settings` turn them on) of the
/// user-level folders other apps use; a name found twice keeps the first.
pub fn load_skills(
    config_dir: &Path,
    settings: &crate::settings::SkillSettings,
) -> crate::skills::SkillSet {
    use crate::skills::{load_dir, SkillOrigin, SkillSet};
    let mut set = SkillSet::default();
    set.add(load_dir(&config_dir.join("skills"), &SkillOrigin::Config));
    if settings.user_folders {
        for folder in user_skill_folders() {
            let origin = SkillOrigin::UserFolder {
                folder: folder.clone(),
            };
            set.add(load_dir(&folder, &origin));
        }
    }
    set
}

/// The user-level skill folders (`~/.agents/skills`, `~/.claude/skills`).
pub fn user_skill_folders() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from);
    home.map(|h| {
        crate::settings::SkillSettings::USER_FOLDERS
            .iter()
            .map(|f| h.join(f))
            .collect()
    })
    .unwrap_or_default()
}

impl ConfigSnapshot {
    /// The enabled skills `agent` may load, sorted by name.
    pub fn agent_skills(&self, agent: &AgentDef) -> Vec<&crate::skills::Skill> {
        let enabled = |s: &&crate::skills::Skill| !self.settings.skills.disabled.contains(&s.name);
        self.skills
            .skills
            .iter()
            .filter(|s| agent.skills.takes(&s.name))
            .filter(enabled)
            .collect()
    }
}

/// An agent with at least one skill gets the skill tools (unless it lists them itself, with
/// its own permission): loading and reading run without asking, a script asks.
pub(crate) fn give_skill_tools(snap: &mut ConfigSnapshot) {
    let with_skills: Vec<String> = snap
        .agents
        .iter()
        .filter(|a| !snap.agent_skills(a).is_empty())
        .map(|a| a.name.clone())
        .collect();
    for agent in snap.agents.iter_mut() {
        if with_skills.contains(&agent.name) {
            add_skill_tools(agent);
        }
    }
}

/// Give `agent` the skill tools it does not list itself: loading and reading run without
/// asking, a script asks.
pub fn add_skill_tools(agent: &mut AgentDef) {
    for (tool, permission) in [
        ("load_skill", Permission::Auto),
        ("read_skill_file", Permission::Auto),
        ("run_skill_script", Permission::Confirm),
    ] {
        agent.tools.entry(tool.into()).or_insert(permission);
    }
}

/// `settings.yaml`'s rules, located in the file.
pub fn global_rules(
    config_dir: &Path,
    settings: &Settings,
) -> Vec<crate::permissions::load::RuleEntry> {
    use crate::permissions::load::{self, RuleLines};
    let path = config_dir.join(Settings::FILE);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    load::parse(
        settings.permission_rules.as_ref(),
        &RuleLines::find(&text, 1),
        |line| crate::permissions::rules::RuleOrigin::Global {
            file: Settings::FILE.into(),
            line,
        },
    )
}

impl AgentDef {
    /// This agent's rules, located in its file.
    pub fn rule_entries(&self, config_dir: &Path) -> Vec<crate::permissions::load::RuleEntry> {
        let file = crate::permissions::load::shown_path(config_dir, &self.source);
        crate::permissions::load::parse(
            self.permission_rules.as_ref(),
            &self.permission_rule_lines,
            |line| crate::permissions::rules::RuleOrigin::Agent {
                agent: self.name.clone(),
                file: file.clone(),
                line,
            },
        )
    }
}

fn dedupe<T>(
    items: &mut Vec<T>,
    name: impl Fn(&T) -> &String,
    source: impl Fn(&T) -> &PathBuf,
    errors: &mut Vec<ConfigError>,
) {
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    items.retain(|item| match seen.get(name(item)) {
        Some(first) => {
            errors.push(ConfigError {
                file: source(item).clone(),
                line: None,
                field: Some("name".into()),
                message: format!(
                    "name `{}` is already used by {}; names must be unique",
                    name(item),
                    first.display()
                ),
            });
            false
        }
        None => {
            seen.insert(name(item).clone(), source(item).clone());
            true
        }
    });
    items.sort_by(|a, b| name(a).cmp(name(b)));
}

fn read_document(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: None,
        field: None,
        message: format!("cannot read file: {e}"),
    })
}

fn split_document<'a>(
    path: &Path,
    text: &'a str,
) -> Result<frontmatter::Document<'a>, ConfigError> {
    frontmatter::split(text).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: Some(1),
        field: None,
        message: e.to_string(),
    })
}

/// Load one agent file.
pub fn load_agent(path: &Path) -> Result<AgentDef, ConfigError> {
    parse_agent(path, &read_document(path)?)
}

/// Parse and validate one agent file's text. `path` is used for error locations only.
pub fn parse_agent(path: &Path, text: &str) -> Result<AgentDef, ConfigError> {
    let doc = split_document(path, text)?;
    let mut agent: AgentDef =
        yaml::from_str(doc.yaml).map_err(|e| yaml_error(path, doc.yaml_first_line, e))?;
    if agent.name.trim().is_empty() {
        return Err(ConfigError {
            file: path.to_path_buf(),
            line: Some(doc.yaml_first_line as u32),
            field: Some("name".into()),
            message: "an agent needs a non-empty `name`".into(),
        });
    }
    // A blank display name is no display name (the UI falls back to `name`).
    agent.display_name = agent
        .display_name
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty());
    agent.permission_rule_lines =
        crate::permissions::load::RuleLines::find(doc.yaml, doc.yaml_first_line);
    agent.role_prompt = doc.body.to_string();
    agent.source = path.to_path_buf();
    Ok(agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn bundled_config_loads_without_errors() {
        let tmp = tempfile::tempdir().unwrap();
        crate::paths::seed_config(tmp.path()).unwrap();
        let snap = load(tmp.path());
        assert!(snap.errors.is_empty(), "{:?}", snap.errors);
        let names: Vec<_> = snap.agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["crawl_agent", "lead_agent", "search_agent"]);
        let lead = &snap.agents[1];
        assert_eq!(lead.tools.get("call_subagent"), Some(&Permission::Auto));
        assert!(!lead.role_prompt.is_empty());
        assert!(
            snap.tools.is_empty(),
            "only _example.md ships, and it is ignored"
        );
    }

    #[test]
    fn a_broken_file_is_located_and_the_others_still_load() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "agents/good.md", "---\nname: good\n---\nHi\n");
        let bad = write(
            tmp.path(),
            "agents/bad.md",
            "---\nname: bad\nmax_tool_rounds: many\n---\n",
        );
        write(
            tmp.path(),
            "tools/ok.md",
            "---\nname: ok_tool\nendpoint: http://127.0.0.1:9/\n---\n",
        );
        write(tmp.path(), "tools/_off.md", "---\nname: off\n---\n");
        let nameless = write(
            tmp.path(),
            "tools/nameless.md",
            "---\nendpoint: http://x\n---\n",
        );
        let snap = load(tmp.path());
        assert_eq!(snap.agents.len(), 1);
        assert_eq!(snap.tools.len(), 1);
        assert_eq!(snap.errors.len(), 2, "{:?}", snap.errors);
        let e = snap.errors.iter().find(|e| e.file == bad).unwrap();
        assert_eq!(e.line, Some(3));
        assert_eq!(e.field.as_deref(), Some("max_tool_rounds"));
        let e = snap.errors.iter().find(|e| e.file == nameless).unwrap();
        assert_eq!(e.field.as_deref(), Some("name"));
    }

    #[test]
    fn duplicate_names_are_reported() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "agents/a.md", "---\nname: same\n---\n");
        let b = write(tmp.path(), "agents/b.md", "---\nname: same\n---\n");
        let snap = load(tmp.path());
        assert_eq!(snap.agents.len(), 1);
        assert_eq!(snap.errors[0].file, b);
        assert!(snap.errors[0].message.contains("already used"));
    }

    #[test]
    fn atomic_write_replaces_content() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f.md");
        write_atomically(&p, b"one").unwrap();
        write_atomically(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            1,
            "no temp files left"
        );
    }
}
