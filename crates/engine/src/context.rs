//! [`AppContext`]: the opened engine state one process works with (paths, database, config).

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use rusqlite::Connection;

use crate::config::{self, ConfigSnapshot};
use crate::config_error::ConfigError;
use crate::db::{self, DbError};
use crate::owner::ProcessOwner;
use crate::paths::{AppPaths, PathsError};
pub use crate::permissions::set::PermissionRules;
use crate::secrets::{EnvAllowList, SecretResolver, SecretStore};
use crate::status::Status;
use crate::tools::builtin::{builtin_tools, AgentRoute};
use crate::tools::registry::{Registry, RESERVED_ARTIFACT_TOOLS};
use crate::tools::ToolContext;

/// Errors opening the engine state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Folders could not be resolved or prepared.
    #[error(transparent)]
    Paths(#[from] PathsError),
    /// The database could not be opened or migrated.
    #[error(transparent)]
    Db(#[from] DbError),
    /// This process's owner lock (see [`crate::owner`]) could not be created.
    #[error("cannot create the process lock in {path}: {source}")]
    Owner {
        /// The owners folder.
        path: std::path::PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// The engine state of one running app or CLI: resolved folders, the open database and the
/// loaded configuration.
pub struct AppContext {
    paths: AppPaths,
    /// This process, as the owner of the runs it starts; held (locked) while the context lives.
    owner: ProcessOwner,
    db: Arc<Mutex<Connection>>,
    config: RwLock<ConfigSnapshot>,
    /// Built from `config` whenever it changes (building tools is not free).
    registry: RwLock<Registry>,
    /// The tools of the MCP servers that are ready (set by the engine's [`crate::mcp::McpHub`]).
    mcp_tools: RwLock<Vec<crate::tools::ToolRef>>,
    /// Every permission rule, compiled when its inputs change (the config is reloaded, the MCP
    /// tools change), never per call.
    rules: RwLock<Arc<PermissionRules>>,
    /// Held from "has a file changed?" to the swap, so a save's reload and the watcher's
    /// never both reload (and announce) one change.
    reloading: Mutex<()>,
    /// The skills (local and from MCP servers) and who may use which.
    skills: crate::skills::SkillShelf,
    /// The skill tools over `skills`, in the registry while a skill is enabled.
    skill_tools: Vec<crate::tools::ToolRef>,
    /// settings.yaml's `secrets_from_env`, shared with every resolver this context makes and
    /// replaced on each reload (so a resolver made earlier follows an edit).
    env_allowed: EnvAllowList,
}

impl AppContext {
    /// Resolve folders (see [`AppPaths::resolve`]), seed the config folder on first run, open and
    /// migrate the database and load the config folder.
    pub fn open(explicit_home: Option<&Path>) -> Result<Self, OpenError> {
        let paths = AppPaths::resolve(explicit_home)?;
        Self::open_at(paths)
    }

    /// Like [`AppContext::open`] with already resolved folders.
    pub fn open_at(paths: AppPaths) -> Result<Self, OpenError> {
        paths.prepare()?;
        let conn = db::open(&paths.database)?;
        let owner = ProcessOwner::acquire(&paths.data_dir).map_err(|source| OpenError::Owner {
            path: paths.data_dir.join(crate::owner::OWNERS_DIR),
            source,
        })?;
        match crate::conversations::mark_interrupted_runs(&conn, &owner) {
            Ok(0) => {}
            Ok(n) => tracing::warn!("{n} run(s) were interrupted when their process stopped"),
            Err(e) => tracing::warn!("cannot mark interrupted runs: {e}"),
        }
        let config = config::load(&paths.config_dir);
        for e in &config.errors {
            tracing::warn!(error = %e, "config file not loaded");
        }
        let skills = crate::skills::SkillShelf::default();
        let env_allowed = EnvAllowList::default();
        env_allowed.replace(config.settings.secrets_from_env.iter().cloned());
        let ctx = AppContext {
            paths,
            owner,
            db: Arc::new(Mutex::new(conn)),
            registry: RwLock::new(build_registry(&config)),
            config: RwLock::new(config),
            mcp_tools: RwLock::new(Vec::new()),
            rules: RwLock::new(Arc::default()),
            reloading: Mutex::new(()),
            skill_tools: crate::skills::skill_tools(&skills),
            skills,
            env_allowed,
        };
        ctx.shelve_skills();
        ctx.compile_rules();
        Ok(ctx)
    }

    /// The skills, local and from MCP servers, and which agent may use which.
    pub fn skills(&self) -> &crate::skills::SkillShelf {
        &self.skills
    }

    /// Give the skills shelf the config's part: the skills that loaded, the ones turned off,
    /// each agent's `skills:`.
    fn shelve_skills(&self) {
        let config = self.config();
        self.skills.set_config(
            config.skills.skills.clone(),
            config.settings.skills.disabled.clone(),
            config
                .agents
                .iter()
                .map(|a| (a.name.clone(), a.skills.clone()))
                .collect(),
        );
    }

    /// The resolved folders.
    pub fn paths(&self) -> &AppPaths {
        &self.paths
    }

    /// `profile` as a client needs it: a local model's name resolved to its file in the models
    /// folder (a path is kept). A local model that is not there is an error saying where it
    /// was looked for and what to do.
    pub fn client_profile(
        &self,
        profile: &crate::models::ModelProfile,
    ) -> Result<crate::models::ModelProfile, String> {
        let mut profile = profile.clone();
        if profile.api == crate::models::Api::Local {
            let dir = self.paths.models_dir();
            let file =
                crate::models::local::resolve_model(&profile.model, &dir).ok_or_else(|| {
                    format!(
                        "model profile `{}` runs the local model `{}`, which is not in the models \
                     folder ({}): download or import it (Models), or put the .gguf file there",
                        profile.name,
                        profile.model,
                        dir.display()
                    )
                })?;
            // "Last used" on the Models screen: the last run that asked for it.
            crate::models::library::Library::new(&dir).touch_last_used(&file);
            profile.model = file.display().to_string();
        }
        Ok(profile)
    }

    /// This process, as the owner of the runs it starts.
    pub fn owner(&self) -> &ProcessOwner {
        &self.owner
    }

    /// Run `f` with the database connection.
    pub fn with_db<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        let conn = self.db.lock().unwrap_or_else(|p| p.into_inner());
        f(&conn)
    }

    /// A shared handle to the database connection (for stores that live beside the context).
    pub fn db_handle(&self) -> Arc<Mutex<Connection>> {
        Arc::clone(&self.db)
    }

    /// Re-read the config folder and swap the new snapshot in atomically. A file that no
    /// longer loads keeps its last good version active (its error is still reported), so a
    /// half-saved edit never takes a working tool, agent, model profile or setting away.
    pub fn reload_config(&self) {
        let mut snap = config::load(&self.paths.config_dir);
        let mut current = self.config.write().unwrap_or_else(|p| p.into_inner());
        let broken: Vec<_> = snap.errors.iter().map(|e| e.file.clone()).collect();
        for old in &current.tools {
            if broken.contains(&old.source)
                && !snap.tools.iter().any(|t| t.spec.name == old.spec.name)
            {
                tracing::warn!(file = %old.source.display(), "keeping the last good version of tool `{}`", old.spec.name);
                snap.tools.push(old.clone());
            }
        }
        for old in &current.agents {
            if broken.contains(&old.source) && !snap.agents.iter().any(|a| a.name == old.name) {
                tracing::warn!(file = %old.source.display(), "keeping the last good version of agent `{}`", old.name);
                snap.agents.push(old.clone());
            }
        }
        for old in &current.skills.skills {
            if broken.contains(&old.source) && snap.skills.get(&old.name).is_none() {
                tracing::warn!(file = %old.source.display(), "keeping the last good version of skill `{}`", old.name);
                snap.skills.skills.push(old.clone());
            }
        }
        snap.skills.skills.sort_by(|a, b| a.name.cmp(&b.name));
        // A kept skill may be an agent's only one: its tools follow the skills kept.
        crate::config::give_skill_tools(&mut snap);
        let models_file = self.paths.config_dir.join("models.yaml");
        if broken.contains(&models_file) && snap.models.is_empty() && !current.models.is_empty() {
            tracing::warn!("models.yaml does not load; keeping the last good model profiles");
            snap.models = current.models.clone();
        }
        let settings_file = self.paths.config_dir.join(crate::config::Settings::FILE);
        if broken.contains(&settings_file) {
            tracing::warn!("settings.yaml does not load; keeping the last good settings");
            snap.settings = current.settings.clone();
            snap.global_rules = current.global_rules.clone();
        }
        if snap.mcp.file_broken {
            tracing::warn!("mcp.json does not load; keeping the last good MCP servers");
            snap.mcp.servers = current.mcp.servers.clone();
        }
        snap.tools.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        snap.agents.sort_by(|a, b| a.name.cmp(&b.name));
        let registry = build_registry(&snap);
        self.env_allowed
            .replace(snap.settings.secrets_from_env.iter().cloned());
        *current = snap;
        *self.registry.write().unwrap_or_else(|p| p.into_inner()) = registry;
        drop(current);
        self.shelve_skills();
        self.compile_rules();
    }

    /// Reload (as [`AppContext::reload_config`]) only when a config file changed since the
    /// current snapshot was read; returns whether it did. The watcher's way in: the echo of a
    /// reload that already happened (an in-app save) is no change.
    pub fn reload_config_if_changed(&self) -> bool {
        let _one_at_a_time = self.reloading.lock().unwrap_or_else(|p| p.into_inner());
        let now = crate::config::fingerprint::fingerprint(&self.paths.config_dir);
        if self.config().loaded_from == now {
            return false;
        }
        self.reload_config();
        true
    }

    /// The loaded configuration.
    pub fn config(&self) -> std::sync::RwLockReadGuard<'_, ConfigSnapshot> {
        self.config.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The OS keyring store for this installation's secrets.
    pub fn secret_store(&self) -> SecretStore {
        SecretStore::for_data_dir(&self.paths.data_dir)
    }

    /// Resolves `{{VAR}}` templates: keyring, then the environment variables
    /// `ARTIFACTFLOW_SECRETS_FROM_ENV` or settings.yaml's `secrets_from_env` lists (the
    /// settings' as they are when it resolves), then `config/.env`.
    pub fn secret_resolver(&self) -> Arc<SecretResolver> {
        Arc::new(
            SecretResolver::new(
                Some(self.secret_store()),
                Some(self.paths.config_dir.join(".env")),
            )
            .allow_env_listed(&self.env_allowed),
        )
    }

    /// The context a tool runs with in `conversation_id`.
    pub fn tool_context(&self, conversation_id: Option<&str>) -> ToolContext {
        ToolContext {
            conversation_id: conversation_id.map(str::to_string),
            secrets: Some(self.secret_resolver()),
            http_trace: None,
            origin: None,
            progress: None,
        }
    }

    /// Built-in and custom tools from the current configuration (artifact tools are added per
    /// conversation). Name clashes are in the registry's `errors`.
    ///
    /// An MCP tool with the name of a configured (built-in or HTTP) tool is a clash: neither is
    /// offered, and the clash is a located config error, so a call never reaches a tool from
    /// another source than the one its name was meant for.
    pub fn tool_registry(&self) -> Registry {
        let mut registry = self
            .registry
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if self.skills.has_any() {
            registry = registry.with_tools(self.skill_tools.iter().cloned());
        }
        let mcp = self.mcp_tools.read().unwrap_or_else(|p| p.into_inner());
        if mcp.is_empty() {
            return registry;
        }
        let mut extra = Vec::new();
        for tool in mcp.iter() {
            let name = &tool.spec().name;
            match registry.remove(name) {
                None => extra.push(tool.clone()),
                Some(configured) => {
                    let error = crate::tools::registry::clash_with_mcp(
                        name,
                        &configured.source(),
                        &tool.source(),
                        &self.paths.config_dir.join("mcp.json"),
                    );
                    registry.errors.push(error);
                }
            }
        }
        registry.with_tools(extra)
    }

    /// Replace the MCP servers' tools in the registry (the hub calls it when a server becomes
    /// ready, changes its tools or stops).
    pub fn set_mcp_tools(&self, tools: Vec<crate::tools::ToolRef>) {
        {
            let registry = self.registry.read().unwrap_or_else(|p| p.into_inner());
            for t in &tools {
                if registry.get(&t.spec().name).is_some() {
                    tracing::warn!(
                        "MCP tool `{}` has the name of a configured tool; neither is offered",
                        t.spec().name
                    );
                }
            }
        }
        *self.mcp_tools.write().unwrap_or_else(|p| p.into_inner()) = tools;
        self.compile_rules();
    }

    /// The artifact store over this context's database.
    pub fn artifact_store(&self) -> crate::artifacts::ArtifactStore {
        crate::artifacts::ArtifactStore::new(self.db_handle())
    }

    /// Every tool available in `conversation`: built-in, custom, and the artifact tools bound to
    /// that conversation.
    pub fn conversation_registry(&self, conversation: &str) -> Registry {
        self.tool_registry()
            .with_tools(crate::artifacts::artifact_tools(
                self.artifact_store(),
                conversation,
            ))
    }

    /// Every problem in the config folder: file errors, tool-name clashes, and agents that list
    /// tools or hand-over targets that do not exist.
    pub fn config_problems(&self) -> Vec<ConfigError> {
        let registry = self.tool_registry();
        let config = self.config();
        let mut problems = config.errors.clone();
        problems.extend(registry.errors.iter().cloned());
        for agent in &config.agents {
            for tool in agent.tools.keys() {
                // A configured MCP server's tools count even while it starts or has failed.
                let known = registry.get(tool).is_some()
                    || RESERVED_ARTIFACT_TOOLS.contains(&tool.as_str())
                    || crate::mcp::server_of(tool, &config.mcp).is_some();
                if !known {
                    problems.push(ConfigError {
                        file: agent.source.clone(),
                        line: line_of_tool(&agent.source, tool),
                        field: Some(format!("tools.{tool}")),
                        message: format!(
                            "agent `{}` lists tool `{tool}`, which does not exist (or failed \
                                 to load)",
                            agent.name
                        ),
                    });
                }
            }
        }
        for agent in &config.agents {
            if let crate::config::SkillChoice::Named(names) = &agent.skills {
                let mut seen: Vec<&String> = Vec::new();
                for name in names {
                    // A name listed twice is one problem.
                    if seen.contains(&name) {
                        continue;
                    }
                    seen.push(name);
                    let of_a_server = name
                        .split_once('.')
                        .is_some_and(|(server, _)| config.mcp.servers.contains_key(server));
                    if config.skills.get(name).is_none() && !of_a_server {
                        problems.push(ConfigError {
                            file: agent.source.clone(),
                            line: line_of_tool(&agent.source, "skills"),
                            field: Some("skills".into()),
                            message: format!(
                                "agent `{}` lists skill `{name}`, which does not exist (or failed \
                                 to load); see `skills list`",
                                agent.name
                            ),
                        });
                    }
                }
            }
        }
        drop(config);
        // After the config guard is released: the rules take it again (a second read lock
        // while a reload waits to write would deadlock).
        problems.extend(
            self.permission_rules()
                .all()
                .filter_map(crate::permissions::load::RuleEntry::problem),
        );
        problems
    }

    /// Every permission rule (global, then each agent's), checked against the tools loaded now
    /// (an ignored rule keeps its located error), as compiled at the last change of the config
    /// or of the MCP tools: the same `Arc` until then.
    pub fn permission_rules(&self) -> Arc<PermissionRules> {
        Arc::clone(&self.rules.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Compile every permission rule from the config and tools loaded now. Called with no
    /// config guard held (it takes one; a second read lock while a reload waits to write would
    /// deadlock).
    fn compile_rules(&self) {
        let facts = self.tool_facts();
        let rules = {
            let config = self.config();
            let mut global = config.global_rules.clone();
            crate::permissions::load::check_against_tools(&mut global, &facts);
            let agents = config
                .agents
                .iter()
                .map(|a| {
                    let mut entries = a.rule_entries(&self.paths.config_dir);
                    crate::permissions::load::check_against_tools(&mut entries, &facts);
                    (a.name.clone(), entries)
                })
                .collect();
            PermissionRules {
                global,
                agents,
                tool_names: facts.tools.into_iter().map(|(n, _, _)| n).collect(),
            }
        };
        *self.rules.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(rules);
    }

    /// Replace `settings.yaml`'s `permission_rules` with `rules` (the other keys, their
    /// comments and order stay as they are); the caller reloads (the engine's reload announces
    /// the change to the windows). Nothing is written when a rule does not
    /// check: every problem is returned, located by the rule's position in `rules`.
    pub fn save_global_permission_rules(
        &self,
        rules: &[crate::permissions::rules::RuleSpec],
    ) -> Result<(), crate::config_edit::SaveError> {
        use crate::permissions::load::{self, RuleEntry};
        use crate::permissions::rules::{Rule, RuleOrigin};
        let file = self.paths.config_dir.join(config::Settings::FILE);
        let facts = self.tool_facts();
        let mut problems = Vec::new();
        for (i, spec) in rules.iter().enumerate() {
            let origin = RuleOrigin::Global {
                file: config::Settings::FILE.into(),
                line: 0,
            };
            let mut entry = match Rule::new(spec.clone(), origin.clone()) {
                Ok(rule) => RuleEntry {
                    origin,
                    spec: Some(spec.clone()),
                    rule: Some(rule),
                    error: None,
                },
                Err(e) => RuleEntry {
                    origin,
                    spec: Some(spec.clone()),
                    rule: None,
                    error: Some(e),
                },
            };
            load::check_against_tools(std::slice::from_mut(&mut entry), &facts);
            if let Some(message) = entry.error {
                problems.push(ConfigError {
                    file: file.clone(),
                    line: None,
                    field: Some(format!("{}[{i}]", load::KEY)),
                    message: format!("rule {} ({}): {message}", i + 1, spec.tool),
                });
            }
        }
        if !problems.is_empty() {
            return Err(crate::config_edit::SaveError::Invalid(problems));
        }
        let mut settings = self.config().settings.clone();
        settings.permission_rules = if rules.is_empty() {
            None
        } else {
            Some(serde_json::to_value(rules).map_err(|e| {
                crate::config_edit::SaveError::Invalid(vec![ConfigError {
                    file: file.clone(),
                    line: None,
                    field: Some(load::KEY.into()),
                    message: e.to_string(),
                }])
            })?)
        };
        crate::config_edit::save_settings(&self.paths.config_dir, &settings)
    }

    /// The loaded tools as permission rules see them.
    fn tool_facts(&self) -> crate::permissions::load::ToolFacts {
        let registry = self.conversation_registry("");
        let config = self.config();
        crate::permissions::load::ToolFacts {
            tools: registry
                .iter()
                .map(|t| {
                    let spec = t.spec();
                    (
                        spec.name.clone(),
                        spec.params.iter().map(|p| p.name.clone()).collect(),
                        t.sends_requests(),
                    )
                })
                .collect(),
            mcp_servers: config.mcp.servers.keys().cloned().collect(),
        }
    }

    /// The facts for the status area.
    pub fn status(&self) -> Status {
        let registry_len = self.tool_registry().len();
        let problems = self.config_problems();
        let config = self.config();
        let schema_version = self.with_db(|c| db::schema_version(c).unwrap_or(0)) as u32;
        Status {
            app_version: crate::VERSION.to_string(),
            config_dir: self.paths.config_dir.clone(),
            database: self.paths.database.clone(),
            schema_version,
            log_dir: self.paths.log_dir.clone(),
            tools_loaded: (registry_len + RESERVED_ARTIFACT_TOOLS.len()) as u32,
            agents_loaded: config.agents.len() as u32,
            config_errors: problems,
        }
    }
}

/// Built-in and custom tools for a configuration snapshot.
fn build_registry(config: &ConfigSnapshot) -> Registry {
    let routes = config
        .agents
        .iter()
        .map(|a| AgentRoute {
            name: a.name.clone(),
            internal: a.internal,
        })
        .collect();
    let builtins = builtin_tools(&config.settings, Arc::new(RwLock::new(routes)));
    Registry::build(builtins, &config.tools)
}

fn line_of_tool(file: &Path, tool: &str) -> Option<u32> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(tool)
                .is_some_and(|r| r.trim_start().starts_with(':'))
        })
        .map(|i| i as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_reports_what_was_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = AppContext::open(Some(tmp.path())).unwrap();
        let s = ctx.status();
        assert_eq!(s.config_dir, tmp.path().join("config"));
        assert_eq!(s.database, tmp.path().join("data/artifactflow.db"));
        assert!(s.database.is_file());
        assert_eq!(s.agents_loaded, 3);
        assert_eq!(s.tools_loaded, 9, "3 built-in + 6 artifact tools");
        assert!(s.config_errors.is_empty(), "{:?}", s.config_errors);
        assert_eq!(s.schema_version as usize, db::latest_version());

        std::fs::write(
            tmp.path().join("config/tools/echo.md"),
            "---\nname: echo\nendpoint: http://127.0.0.1:1/\n---\n",
        )
        .unwrap();
        ctx.reload_config();
        assert_eq!(ctx.status().tools_loaded, 10);

        // An agent that lists a missing tool, and a custom tool that clashes with a built-in.
        std::fs::write(
            tmp.path().join("config/agents/x.md"),
            "---\nname: x\ntools:\n  nope: auto\n---\n",
        )
        .unwrap();
        std::fs::write(
            tmp.path().join("config/tools/clash.md"),
            "---\nname: web_search\nendpoint: http://127.0.0.1:1/\n---\n",
        )
        .unwrap();
        ctx.reload_config();
        let problems = ctx.status().config_errors;
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems
            .iter()
            .any(|p| p.message.contains("is a built-in tool") && p.line == Some(2)));
        assert!(problems
            .iter()
            .any(|p| p.field.as_deref() == Some("tools.nope") && p.line == Some(4)));
    }

    /// A settings.yaml broken by a hand edit is reported with its line, the last good settings
    /// stay in use, and the Settings screen's save does not write over it.
    #[test]
    fn a_broken_settings_file_keeps_the_last_good_settings() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = AppContext::open(Some(tmp.path())).unwrap();
        let file = tmp.path().join("config/settings.yaml");
        std::fs::write(&file, "# mine\npermission_timeout_secs: 33\n").unwrap();
        ctx.reload_config();
        assert_eq!(ctx.config().settings.permission_timeout_secs, 33);

        let broken = "# mine\npermission_timeout_secs: 44\nweb_fetch:\n  endpoint: [unclosed\n";
        std::fs::write(&file, broken).unwrap();
        ctx.reload_config();
        assert_eq!(
            ctx.config().settings.permission_timeout_secs,
            33,
            "last good value kept"
        );
        let problem = ctx
            .status()
            .config_errors
            .into_iter()
            .find(|e| e.file == file)
            .expect("the broken file is reported");
        assert!(problem.line.is_some(), "{problem:?}");

        let mut settings = ctx.config().settings.clone();
        settings.permission_timeout_secs = 90;
        let err =
            crate::config::edit::save_settings(&tmp.path().join("config"), &settings).unwrap_err();
        assert!(err.to_string().contains("was not changed"), "{err}");
        assert_eq!(std::fs::read(&file).unwrap(), broken.as_bytes());
    }
}
