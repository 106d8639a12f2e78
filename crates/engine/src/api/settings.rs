//! What the Settings screen shows: the model profiles, `settings.yaml`, the names of the
//! secrets in the OS keyring (never their values) and the secrets the config refers to that
//! are set nowhere.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::context::AppContext;
use crate::models::ModelProfile;
use crate::secrets::template_names;
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
    /// The config folder.
    pub config_dir: String,
}

/// The settings as loaded, with the secrets they need. Reads the OS keyring, which may block:
/// call it off a window's main thread.
pub fn view(ctx: &AppContext) -> SettingsView {
    let config = ctx.config();
    let secret_names: Vec<String> = ctx.secret_store().names().into_iter().collect();
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
    SettingsView {
        profiles: config.models.clone(),
        settings: config.settings.clone(),
        secret_names,
        missing_secrets,
        config_dir: ctx.paths().config_dir.display().to_string(),
    }
}
