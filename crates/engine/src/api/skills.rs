//! The skills as the Skills page and `artifactflow-cli skills` show them: each skill with
//! where it comes from, whether it is on and which agents use it, the load problems (an MCP
//! server's skill its listing cannot verify among them), one skill's instructions and files,
//! and the writes (turn on or off, the user-level folders), each followed by a reload.
//! Importing is [`crate::skills::import`], then a reload.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::config_edit::{self, SaveError};
use crate::config_error::ConfigError;
use crate::context::AppContext;
use crate::engine::Engine;
use crate::skills::{Skill, SkillOrigin};

/// One skill in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkillView {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Where it was found, in words: `config folder` or the user-level folder's path.
    pub source: String,
    /// Where it was found.
    pub origin: SkillOrigin,
    /// Turned on (not in Settings' `skills.disabled`)?
    pub enabled: bool,
    /// The agents that get it (`skills: all` or naming it), sorted.
    pub agents: Vec<String>,
    /// Its folder.
    pub dir: String,
    /// Its licence.
    pub license: Option<String>,
    /// What it needs to run.
    pub compatibility: Option<String>,
    /// The tools it expects (informational).
    pub allowed_tools: Vec<String>,
    /// Its metadata.
    pub metadata: BTreeMap<String, String>,
    /// Frontmatter fields other clients use that this app does not.
    pub ignored_fields: Vec<String>,
}

/// Every skill and every skill problem.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkillsView {
    /// The skills that loaded, by name.
    pub skills: Vec<SkillView>,
    /// What did not load, and agents naming skills that do not exist.
    pub problems: Vec<ConfigError>,
    /// The config folder's `skills/`.
    pub skills_dir: String,
    /// Are the user-level folders read?
    pub user_folders: bool,
    /// The user-level folders.
    pub user_folder_paths: Vec<String>,
}

/// One skill opened: its listing, instructions and files.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkillDetail {
    /// The skill as listed.
    pub skill: SkillView,
    /// The Markdown after the frontmatter.
    pub instructions: String,
    /// Its files (not SKILL.md), relative to its folder.
    pub files: Vec<String>,
}

fn view(config: &crate::config::ConfigSnapshot, skill: &Skill) -> SkillView {
    let enabled = !config.settings.skills.disabled.contains(&skill.name);
    let mut agents: Vec<String> = config
        .agents
        .iter()
        .filter(|a| a.skills.takes(&skill.name))
        .map(|a| a.name.clone())
        .collect();
    agents.sort();
    SkillView {
        name: skill.name.clone(),
        description: skill.description.clone(),
        source: match &skill.origin {
            SkillOrigin::Config => "config folder".into(),
            SkillOrigin::UserFolder { folder } => folder.display().to_string(),
            SkillOrigin::Mcp { server } => format!("MCP server {server}"),
        },
        origin: skill.origin.clone(),
        enabled,
        agents,
        dir: skill.dir.display().to_string(),
        license: skill.license.clone(),
        compatibility: skill.compatibility.clone(),
        allowed_tools: skill.allowed_tools.clone(),
        metadata: skill.metadata.clone(),
        ignored_fields: skill.ignored_fields.clone(),
    }
}

/// Every skill and every skill problem.
pub fn list(ctx: &AppContext) -> SkillsView {
    let problems = ctx.config_problems();
    let config = ctx.config();
    let mut problems: Vec<ConfigError> = problems
        .into_iter()
        .filter(|p| {
            p.field.as_deref() == Some("skills") || config.skills.errors.iter().any(|e| e == p)
        })
        .collect();
    let mut skills: Vec<SkillView> = config
        .skills
        .skills
        .iter()
        .map(|s| view(&config, s))
        .collect();
    let mcp_file = ctx.paths().config_dir.join(crate::mcp::config::FILE);
    for remote in ctx.skills().mcp() {
        skills.push(view(&config, &as_skill(&remote)));
        // A server's skill its listing cannot verify is offered to no agent: say why, at
        // the server's entry in mcp.json.
        if let Some(why) = &remote.unverifiable {
            problems.push(ConfigError {
                file: mcp_file.clone(),
                line: None,
                field: Some(format!("mcpServers.{}", remote.server)),
                message: format!(
                    "the skill `{}` is not used: {why}; ask the server's maintainers for a \
                     listing with a sha256 digest and a size for each file",
                    remote.name
                ),
            });
        }
    }
    SkillsView {
        skills,
        problems,
        skills_dir: skills_dir(ctx).display().to_string(),
        user_folders: config.settings.skills.user_folders,
        user_folder_paths: crate::config::user_skill_folders()
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
    }
}

/// A server's skill as a listing shows it (nothing is read from the server: its
/// instructions arrive when an agent loads it).
fn as_skill(m: &crate::skills::McpSkill) -> Skill {
    Skill {
        name: m.name.clone(),
        description: m.description().to_string(),
        license: m
            .entry
            .frontmatter
            .get("license")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        compatibility: None,
        allowed_tools: Vec::new(),
        metadata: BTreeMap::new(),
        instructions: String::new(),
        dir: Default::default(),
        source: Default::default(),
        origin: SkillOrigin::Mcp {
            server: m.server.clone(),
        },
        ignored_fields: Vec::new(),
        warnings: Vec::new(),
    }
}

/// The skill `name`, opened; `None` when no skill has that name. A server's skill shows its
/// listing only: its files are read from the server when an agent uses it, never before.
pub fn show(ctx: &AppContext, name: &str) -> Option<SkillDetail> {
    let config = ctx.config();
    if let Some(skill) = config.skills.get(name) {
        return Some(SkillDetail {
            skill: view(&config, skill),
            instructions: skill.instructions.clone(),
            files: crate::skills::files::list(&skill.dir),
        });
    }
    let remote = ctx.skills().mcp().into_iter().find(|m| m.name == name)?;
    let instructions = match &remote.unverifiable {
        Some(why) => format!(
            "*Not used: {why}. No agent is offered it, and nothing of it is read from the \
             server.*"
        ),
        None => format!(
            "*Served by the MCP server `{}`: its instructions are read from the server, and \
             checked against its listing, when an agent loads it.*",
            remote.server
        ),
    };
    Some(SkillDetail {
        skill: view(&config, &as_skill(&remote)),
        instructions,
        files: remote.files(),
    })
}

/// The text of `path` in the skill `name` (for browsing its files), confined to its folder.
pub fn read_file(ctx: &AppContext, name: &str, path: &str) -> Result<String, String> {
    let dir = ctx
        .config()
        .skills
        .get(name)
        .map(|s| s.dir.clone())
        .ok_or_else(|| format!("there is no skill `{name}`"))?;
    let file = crate::skills::files::resolve(&dir, path)?;
    // A regular file only (never a named pipe), its size checked before it is read.
    let max = crate::skills::tools::MAX_TEXT_FILE_BYTES;
    let bytes =
        crate::skills::files::read_regular(&file, max).map_err(|refused| match refused {
            crate::skills::files::ReadRefusal::TooLarge(size) => {
                format!("{path} is {} KiB: too large to show", size / 1024)
            }
            other => other.describe(path, max),
        })?;
    match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => Ok(text),
        _ => Err(format!("{path} is a binary file")),
    }
}

/// The config folder's `skills/`.
pub fn skills_dir(ctx: &AppContext) -> std::path::PathBuf {
    ctx.paths().config_dir.join("skills")
}

/// Turn the skill `name` on or off (Settings' `skills.disabled`), then reload.
pub fn set_enabled(engine: &Engine, name: &str, enabled: bool) -> Result<(), SaveError> {
    let ctx = &engine.ctx;
    let mut settings = ctx.config().settings.clone();
    settings.skills.disabled.retain(|n| n != name);
    if !enabled {
        settings.skills.disabled.push(name.to_string());
        settings.skills.disabled.sort();
    }
    config_edit::save_settings(&ctx.paths().config_dir, &settings)?;
    engine.reload_config();
    Ok(())
}

/// Read (or stop reading) the user-level skill folders, then reload.
pub fn set_user_folders(engine: &Engine, on: bool) -> Result<(), SaveError> {
    let ctx = &engine.ctx;
    let mut settings = ctx.config().settings.clone();
    settings.skills.user_folders = on;
    config_edit::save_settings(&ctx.paths().config_dir, &settings)?;
    engine.reload_config();
    Ok(())
}
