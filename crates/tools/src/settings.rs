//! The app's settings (`config/settings.yaml`): the built-in web tools' endpoints and keys,
//! the permission timeout, the update feed, the global permission rules as written, the skill
//! folders, and the environment variables secrets may come from. Read
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
    /// Environment variables that may fill `{{NAME}}` secret templates, besides the ones
    /// `ARTIFACTFLOW_SECRETS_FROM_ENV` lists (the two lists are merged): an app started from
    /// its menu has no shell to set that variable in. Each is a valid secret name (checked
    /// when the file loads). Edited in the file only, so the web view's settings type leaves
    /// it out.
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "secret_names"
    )]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub secrets_from_env: Vec<String>,
}

/// The names `secrets_from_env` lists: a YAML list, or one text of names separated by commas
/// or spaces (as `ARTIFACTFLOW_SECRETS_FROM_ENV` takes them). An error names a bad entry by
/// its place, never by its text: an entry that is not a name may be a value pasted by mistake.
fn secret_names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    use serde::de::Error;
    let key = crate::secrets::SETTINGS_ALLOW_KEY;
    let names: Vec<String> = match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => Vec::new(),
        serde_json::Value::String(text) => text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect(),
        serde_json::Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                serde_json::Value::String(name) => Ok(name),
                _ => Err(Error::custom(format!(
                    "entry {} of `{key}` is not text: list environment variable names",
                    i + 1
                ))),
            })
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(Error::custom(format!(
                "`{key}` lists environment variable names, e.g. `{key}: [OPENAI_API_KEY, \
                 GITHUB_TOKEN]`"
            )))
        }
    };
    match names.iter().position(|n| !crate::secrets::is_valid_name(n)) {
        Some(i) => Err(Error::custom(format!(
            "entry {} of `{key}` is not an environment variable name: list names (letters, \
             digits and `_`, not starting with a digit), never values",
            i + 1
        ))),
        None => Ok(names),
    }
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
            secrets_from_env: Vec::new(),
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
            Ok(text) => yaml::from_str(&text).map_err(|e| {
                let mut error = yaml_error(&path, 1, e);
                // The YAML library does not locate a value's own check: the key's line does.
                let key = crate::secrets::SETTINGS_ALLOW_KEY;
                if error.message.contains(&format!("`{key}`")) {
                    error.line = top_level_key_line(&text, key).or(error.line);
                    error.field = Some(key.to_string());
                }
                error
            }),
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

/// The 1-based line of the top-level `key:` in the YAML `text`.
fn top_level_key_line(text: &str, key: &str) -> Option<u32> {
    text.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Settings, ConfigError> {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(Settings::FILE), text).unwrap();
        Settings::load(tmp.path())
    }

    #[test]
    fn secrets_from_env_takes_a_list_or_names_separated_by_commas_or_spaces() {
        let listed = load("permission_timeout_secs: 30\nsecrets_from_env:\n  - OPENAI_API_KEY\n  - GITHUB_TOKEN\n")
            .unwrap();
        assert_eq!(listed.secrets_from_env, ["OPENAI_API_KEY", "GITHUB_TOKEN"]);
        assert_eq!(listed.permission_timeout_secs, 30);
        let text = load("secrets_from_env: \"OPENAI_API_KEY, GITHUB_TOKEN _X\"\n").unwrap();
        assert_eq!(
            text.secrets_from_env,
            ["OPENAI_API_KEY", "GITHUB_TOKEN", "_X"]
        );
        assert!(load("web_search:\n  endpoint: x\n")
            .unwrap()
            .secrets_from_env
            .is_empty());
    }

    /// An entry that is not a name may be a value pasted by mistake: the error locates it and
    /// says what to write, and never repeats it.
    #[test]
    fn an_entry_that_is_not_a_name_is_located_and_never_repeated() {
        let pasted = "sk-live-5f2a9c";
        let e = load(&format!(
            "permission_timeout_secs: 30\nsecrets_from_env:\n  - OPENAI_API_KEY\n  - {pasted}\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(2), "{e:?}");
        assert_eq!(e.field.as_deref(), Some("secrets_from_env"));
        assert!(
            e.message
                .contains("entry 2 of `secrets_from_env` is not an environment variable name"),
            "{e}"
        );
        assert!(!e.to_string().contains(pasted), "{e}");
        for text in [
            format!("secrets_from_env: {{key: {pasted}}}\n"),
            format!("secrets_from_env: [[{pasted}]]\n"),
            format!("secrets_from_env: \"OK_NAME {pasted}\"\n"),
        ] {
            let e = load(&format!("permission_timeout_secs: 30\n{text}")).unwrap_err();
            assert_eq!(e.line, Some(2), "{e:?}");
            assert!(e.message.contains("secrets_from_env"), "{e}");
            assert!(!e.to_string().contains(pasted), "{text}: {e}");
        }
    }
}
