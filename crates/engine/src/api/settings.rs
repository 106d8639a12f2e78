//! The Settings screen's reads and writes: what it shows (the model profiles, with the model
//! each local one runs or why it has none, `settings.yaml`, the names of the secrets in the OS
//! keyring, never their values, and the secrets the config refers to that are set nowhere), the permission rules as compiled, saving profiles, the
//! permission timeout and the global rules (each write reloads the config), a profile's
//! connection test and model list, how its model calls tools (`tool_calls: auto` resolved), and
//! secrets set or deleted.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::config_edit::{self, ConnectionTest, SaveError};
use crate::config_error::ConfigError;
use crate::context::AppContext;
use crate::engine::Engine;
use crate::models::local::{profile_model, ProfileModel};
use crate::models::window::WindowHint;
use crate::models::{Api, ModelList, ModelProfile};
use crate::permissions::load::{RuleEntry, RuleView};
use crate::rule_spec::RuleSpec;
use crate::run::tool_mode::{self, AutoChoice};
use crate::secrets::{template_names, SecretError};
use crate::settings::Settings;

/// What the Settings screen shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SettingsView {
    /// Model profiles from models.yaml.
    pub profiles: Vec<ModelProfile>,
    /// settings.yaml.
    pub settings: Settings,
    /// Names of the secrets in the OS keyring (never values).
    pub secret_names: Vec<String>,
    /// Secret names referenced by profiles, tools or settings but not found anywhere.
    pub missing_secrets: Vec<String>,
    /// The model of each profile run on this computer (`api: local`), in the profiles'
    /// order: the file of the models folder it runs, or why it has none (its model deleted
    /// or never installed, a path with no file).
    pub profile_models: Vec<ProfileModel>,
    /// The config folder.
    pub config_dir: String,
}

/// The settings as loaded, with the secrets they need. Reads the OS keyring, which may block:
/// call it off a window's main thread.
pub fn view(ctx: &AppContext) -> SettingsView {
    let config = ctx.config();
    let secret_names = secret_names(ctx);
    let mut referenced = BTreeSet::new();
    for p in &config.models {
        referenced.extend(p.api_key.iter().flat_map(|t| template_names(t)));
    }
    for s in [&config.settings.web_search, &config.settings.web_fetch] {
        referenced.extend(s.api_key.iter().flat_map(|t| template_names(t)));
    }
    for t in &config.tools {
        referenced.extend(template_names(&t.endpoint));
        for v in t.headers.values() {
            referenced.extend(template_names(v));
        }
    }
    let resolver = ctx.secret_resolver();
    let missing_secrets = referenced
        .into_iter()
        .filter(|name| resolver.resolve(name).is_none())
        .collect();
    let models_dir = ctx.paths().models_dir();
    let profile_models = config
        .models
        .iter()
        .filter_map(|p| profile_model(p, &models_dir))
        .collect();
    SettingsView {
        profiles: config.models.clone(),
        settings: config.settings.clone(),
        secret_names,
        missing_secrets,
        profile_models,
        config_dir: ctx.paths().config_dir.display().to_string(),
    }
}

/// Replace every model profile (checked by the `models.yaml` loader; nothing is written when a
/// profile does not load), then reload.
pub fn save_profiles(engine: &Engine, profiles: &[ModelProfile]) -> Result<(), SaveError> {
    config_edit::save_profiles(&engine.ctx.paths().config_dir, profiles)?;
    engine.reload_config();
    Ok(())
}

/// The shortest and longest wait for a permission answer Settings accepts, in seconds.
pub const PERMISSION_TIMEOUT_SECS: std::ops::RangeInclusive<u32> = 5..=3600;

/// Change how long a permission request waits (for runs started afterwards, and for the
/// running app after the reload). Outside [`PERMISSION_TIMEOUT_SECS`] nothing is written.
pub fn save_permission_timeout(engine: &Engine, seconds: u32) -> Result<(), SaveError> {
    let ctx = &engine.ctx;
    let file = ctx.paths().config_dir.join(Settings::FILE);
    if !PERMISSION_TIMEOUT_SECS.contains(&seconds) {
        return Err(SaveError::Invalid(vec![ConfigError {
            file,
            line: None,
            field: None,
            message: format!(
                "the permission timeout must be between {} and {} seconds",
                PERMISSION_TIMEOUT_SECS.start(),
                PERMISSION_TIMEOUT_SECS.end()
            ),
        }]));
    }
    let mut settings = ctx.config().settings.clone();
    settings.permission_timeout_secs = u64::from(seconds);
    config_edit::save_settings(&ctx.paths().config_dir, &settings)?;
    engine.reload_config();
    Ok(())
}

/// Set (or, with a blank `url`, clear) the update feed in `settings.yaml`, then reload.
/// Returns the stored value: `None` means update checks are off. A URL that is not http(s)
/// is refused, and nothing is written.
pub fn save_update_url(engine: &Engine, url: &str) -> Result<Option<String>, SaveError> {
    let ctx = &engine.ctx;
    let url = config_edit::normalize_update_url(url).map_err(|message| {
        SaveError::Invalid(vec![ConfigError {
            file: ctx.paths().config_dir.join(Settings::FILE),
            line: None,
            field: None,
            message,
        }])
    })?;
    let mut settings = ctx.config().settings.clone();
    settings.update_url = url.clone();
    config_edit::save_settings(&ctx.paths().config_dir, &settings)?;
    engine.reload_config();
    Ok(url)
}

/// Replace `settings.yaml`'s permission rules (other keys and comments stay), then reload. A
/// rule that does not check is refused with its error, and nothing is written.
pub fn save_permission_rules(engine: &Engine, rules: &[RuleSpec]) -> Result<(), SaveError> {
    engine.ctx.save_global_permission_rules(rules)?;
    engine.reload_config();
    Ok(())
}

/// Send a tiny request through `profile` (its key resolved from the keyring or `.env`).
pub async fn test_profile(ctx: &AppContext, profile: &ModelProfile) -> ConnectionTest {
    match ctx.client_profile(profile) {
        Ok(profile) => config_edit::test_profile(&profile, ctx.secret_resolver()).await,
        Err(message) => ConnectionTest {
            ok: false,
            latency_ms: 0,
            message,
        },
    }
}

/// The models `profile`'s server lists, for the profile form's picker. `key` is a key typed
/// into the form and not saved yet (used for this one request); without it the profile's own
/// key is resolved. A server without a list comes back as a note. A local profile lists the
/// installed models that the runtime can read.
pub async fn list_models(
    ctx: &AppContext,
    profile: &ModelProfile,
    key: Option<String>,
) -> ModelList {
    if profile.api == crate::models::Api::Local {
        let installed = crate::api::models::library(ctx).list().unwrap_or_default();
        let models: Vec<String> = installed
            .into_iter()
            .filter(|m| m.error.is_none())
            .map(|m| m.name)
            .collect();
        let note = models.is_empty().then(|| {
            "No models are installed yet: download one on the Models screen, or import a .gguf file.".to_string()
        });
        return ModelList { models, note };
    }
    crate::models::list_models(profile, key, ctx.secret_resolver()).await
}

/// What the engine would use as `profile`'s context window if its `context_window` field were
/// empty (the server's report, a known model's default, or the conservative default). The
/// server is asked now, since the form may point it elsewhere. `key` as for [`list_models`].
pub async fn discover_context_window(
    ctx: &AppContext,
    profile: &ModelProfile,
    key: Option<String>,
) -> WindowHint {
    let profile = ctx
        .client_profile(profile)
        .unwrap_or_else(|_| profile.clone());
    crate::models::window::discover(&profile, key, ctx.secret_resolver()).await
}

/// How `profile` (as the profile form holds it, a local model named as in models.yaml) calls
/// tools, and why: `tool_calls: auto` resolved as the run loop resolves it before each request
/// (see [`crate::run::tool_mode`]), for the line under the form's Tool calls field. Reads the
/// models folder's library and the tool-use check results; changes nothing (a local model is
/// not marked as used).
pub fn profile_tool_mode(ctx: &AppContext, profile: &ModelProfile) -> AutoChoice {
    let mut profile = profile.clone();
    let mut tools = None;
    if profile.api == Api::Local {
        let dir = ctx.paths().models_dir();
        if let Some(file) = crate::models::local::resolve_model(&profile.model, &dir) {
            tools = tool_mode::template_tools(&file, &dir);
            profile.model = file.display().to_string();
        }
    }
    tool_mode::resolve(&profile, tools, &crate::check::StoredChecks::new(ctx))
}

/// Store a secret in the OS keyring (no command ever returns its value). Blocks on the
/// keyring: call it off a window's main thread.
pub fn set_secret(ctx: &AppContext, name: &str, value: &str) -> Result<(), SecretError> {
    ctx.secret_store().set(name, value)
}

/// The names of the secrets in the OS keyring (never their values), sorted.
pub fn secret_names(ctx: &AppContext) -> Vec<String> {
    ctx.secret_store().names().into_iter().collect()
}

/// Delete a secret from the OS keyring. Blocks on the keyring, like [`set_secret`].
pub fn delete_secret(ctx: &AppContext, name: &str) -> Result<(), SecretError> {
    ctx.secret_store().delete(name)
}

/// One agent's permission rules, for the Settings list.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentRules {
    /// The agent's name.
    pub agent: String,
    /// Its file (absolute), to open it in the editor.
    pub path: String,
    /// Its rules, in file order.
    pub rules: Vec<RuleView>,
}

/// Every permission rule with where it comes from, why it is ignored (if it is) and the
/// loaded tools it covers.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PermissionRulesView {
    /// `settings.yaml`'s, in file order.
    pub global: Vec<RuleView>,
    /// Each agent's that has any, in the compiled rules' order.
    pub agents: Vec<AgentRules>,
}

impl PermissionRulesView {
    /// Every rule, the global ones first, then each agent's.
    pub fn all(&self) -> impl Iterator<Item = &RuleView> {
        self.global
            .iter()
            .chain(self.agents.iter().flat_map(|a| a.rules.iter()))
    }
}

/// The permission rules as compiled for the loaded config (Settings → Permission rules, the
/// Tools page and `artifactflow-cli permissions list`).
pub fn permission_rules(ctx: &AppContext) -> PermissionRulesView {
    let rules = ctx.permission_rules();
    let config = ctx.config();
    let view = |entries: &[RuleEntry]| -> Vec<RuleView> {
        entries
            .iter()
            .map(|e| RuleView::of(e, &rules.tool_names))
            .collect()
    };
    PermissionRulesView {
        global: view(&rules.global),
        agents: rules
            .agents
            .iter()
            .filter(|(_, entries)| !entries.is_empty())
            .map(|(agent, entries)| AgentRules {
                agent: agent.clone(),
                path: config
                    .agents
                    .iter()
                    .find(|a| &a.name == agent)
                    .map(|a| a.source.display().to_string())
                    .unwrap_or_default(),
                rules: view(entries),
            })
            .collect(),
    }
}
