//! The app's settings (`config/settings.yaml`): the built-in web tools' endpoints and keys,
//! the permission timeout, the update feed and the global permission rules as written. Read
//! on their own (a broken file gives the defaults and a located error), below the tools that
//! use them; the config loader puts them in its snapshot.

use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config_error::{yaml_error, ConfigError};
use crate::yaml;

/// Optional app settings from `config/settings.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// The Bocha web-search API used by `web_search`.
    pub web_search: ServiceSettings,
    /// The Jina Reader API used by `web_fetch`.
    pub web_fetch: ServiceSettings,
    /// Seconds a permission request waits for an answer before it counts as denied.
    pub permission_timeout_secs: u64,
    /// The update manifest (Tauri updater JSON) "Check for updates" asks. None (the default)
    /// turns update checks off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_url: Option<String>,
    /// Permission rules for every call, as written (read as plain data so a bad rule never
    /// breaks the other settings; see [`crate::permissions::load`]). The app edits them with
    /// their own command, so the web view's settings type leaves them out.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub permission_rules: Option<serde_json::Value>,
    /// Agent Skills: the user-level folders other apps use, and the skills turned off.
    #[serde(skip_serializing_if = "SkillSettings::is_default")]
    pub skills: SkillSettings,
}

/// Where skills come from besides the config folder's `skills/`, and which are off.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields, default)]
pub struct SkillSettings {
    /// Also read the skills other apps keep in the user's home (`~/.agents/skills`,
    /// `~/.claude/skills`). Off until the user turns it on.
    pub user_folders: bool,
    /// Skills turned off, by name: they load (and are checked) but no agent gets them.
    pub disabled: Vec<String>,
}

impl SkillSettings {
    /// The user-level skill folders, in the order a name is looked up (the first wins).
    pub const USER_FOLDERS: [&'static str; 2] = [".agents/skills", ".claude/skills"];

    fn is_default(&self) -> bool {
        self == &SkillSettings::default()
    }
}

/// Where a built-in web tool sends its requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct ServiceSettings {
    /// Base URL or full endpoint.
    pub endpoint: String,
    /// Secret template for the API key, e.g. `{{BOCHA_API_KEY}}`.
    #[serde(default)]
    pub api_key: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            web_search: ServiceSettings {
                endpoint: "https://api.bochaai.com/v1/web-search".into(),
                api_key: Some("{{BOCHA_API_KEY}}".into()),
            },
            web_fetch: ServiceSettings {
                endpoint: "https://r.jina.ai/".into(),
                api_key: Some("{{JINA_API_KEY}}".into()),
            },
            permission_timeout_secs: 120,
            update_url: None,
            permission_rules: None,
            skills: SkillSettings::default(),
        }
    }
}

impl Settings {
    /// The settings file name inside the config folder.
    pub const FILE: &'static str = "settings.yaml";

    /// Read `config_dir/settings.yaml`; a missing file gives the defaults.
    pub fn load(config_dir: &Path) -> Result<Settings, ConfigError> {
        let path = config_dir.join(Self::FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) if text.trim().is_empty() => Ok(Settings::default()),
            Ok(text) => yaml::from_str(&text).map_err(|e| yaml_error(&path, 1, e)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Settings::default()),
            Err(e) => Err(ConfigError {
                file: path,
                line: None,
                field: None,
                message: format!("cannot read file: {e}"),
            }),
        }
    }
}
