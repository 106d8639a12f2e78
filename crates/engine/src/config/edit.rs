//! Writing configuration from the app's Settings screen: model profiles (`models.yaml`) and app
//! settings (`settings.yaml`). Every write is validated by the same loader that reads the file
//! and is atomic, so a bad form never leaves a broken file behind. Also: testing a profile's
//! connection.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigError, Settings};
use crate::models::{ChatMessage, ChatRequest, ModelProfile, Role};
use crate::secrets::SecretResolver;

/// Why a save wrote nothing: the values do not validate (the user fixes the form), or the file
/// could not be read or written (the user fixes the disk). Callers report the two differently.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The values (or the file on disk) do not load; every problem, located.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<ConfigError>),
    /// Reading or writing the file failed.
    #[error("{0}")]
    Io(ConfigError),
}

impl SaveError {
    /// Every problem, located.
    pub fn errors(&self) -> &[ConfigError] {
        match self {
            SaveError::Invalid(errors) => errors,
            SaveError::Io(e) => std::slice::from_ref(e),
        }
    }
}

const MODELS_HEADER: &str = "# Model profiles, edited by ArtifactFlow's Settings screen (hand edits are fine too).\n# `api_key` is a secret template such as \"{{OPENAI_API_KEY}}\": the value lives in the OS keyring.\n";
const SETTINGS_HEADER: &str =
    "# App settings, edited by ArtifactFlow's Settings screen (hand edits are fine too).\n";

#[derive(Serialize)]
struct ModelsFile<'a> {
    profiles: &'a [ModelProfile],
}

/// Validate `profiles` with the `models.yaml` loader and write them atomically.
/// Returns every problem (and writes nothing) when they do not validate.
pub fn save_profiles(config_dir: &Path, profiles: &[ModelProfile]) -> Result<(), SaveError> {
    let path = config_dir.join("models.yaml");
    let yaml = crate::yaml::to_string(&ModelsFile { profiles }).map_err(|e| {
        SaveError::Invalid(vec![ConfigError {
            file: path.clone(),
            line: None,
            field: None,
            message: e.to_string(),
        }])
    })?;
    let text = format!("{MODELS_HEADER}{yaml}");
    let (_, errors) = crate::models::parse_profiles(&path, &text);
    if !errors.is_empty() {
        return Err(SaveError::Invalid(errors));
    }
    crate::util::fs::write_atomically(&path, text.as_bytes()).map_err(|e| {
        SaveError::Io(ConfigError {
            file: path,
            line: None,
            field: None,
            message: format!("cannot write: {e}"),
        })
    })
}

/// Save `settings` into `settings.yaml`, atomically, changing only what changed: each top-level
/// key whose value differs from the file's is rewritten in place (or appended, or removed when
/// it went back to an unset default), so the user's comments, key order and other keys stay
/// byte for byte. A file that does not load is never written over: the error says where it is
/// broken and nothing changes on disk. A missing or empty file is written whole.
pub fn save_settings(config_dir: &Path, settings: &Settings) -> Result<(), SaveError> {
    let path = config_dir.join(Settings::FILE);
    let located = |message: String| ConfigError {
        file: path.clone(),
        line: None,
        field: None,
        message,
    };
    let invalid = |message: String| SaveError::Invalid(vec![located(message)]);
    let current = match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => Some(text),
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(SaveError::Io(located(format!("cannot read: {e}")))),
    };
    let text = match current {
        None => {
            let yaml = crate::yaml::to_string(settings).map_err(|e| invalid(e.to_string()))?;
            format!("{SETTINGS_HEADER}{yaml}")
        }
        Some(text) => {
            let on_disk: Settings = crate::yaml::from_str(&text).map_err(|e| {
                let located = crate::config_error::yaml_error(&path, 1, e);
                SaveError::Invalid(vec![ConfigError {
                    message: format!(
                        "{}; this file does not load, so it was not changed: fix it (or delete it to go back to the defaults), then save again",
                        located.message
                    ),
                    ..located
                }])
            })?;
            edit_changed_keys(&text, &on_disk, settings).map_err(invalid)?
        }
    };
    match crate::yaml::from_str::<Settings>(&text) {
        Ok(written) if written == *settings => {}
        _ => {
            return Err(invalid(
                "cannot edit this file in place (its layout is unusual); nothing was written: change the value by hand".into(),
            ))
        }
    }
    crate::util::fs::write_atomically(&path, text.as_bytes())
        .map_err(|e| SaveError::Io(located(format!("cannot write: {e}"))))
}

/// `text` with every top-level key whose value differs between `old` and `new` rewritten.
fn edit_changed_keys(text: &str, old: &Settings, new: &Settings) -> Result<String, String> {
    let as_map = |s: &Settings| match serde_json::to_value(s) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        _ => Err("cannot serialise the settings".to_string()),
    };
    let (old, new) = (as_map(old)?, as_map(new)?);
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if lines.last().is_some_and(|l| !l.ends_with('\n')) {
        let last = lines.len() - 1;
        lines[last].push_str(newline);
    }
    let mut keys: Vec<&String> = Vec::new();
    for key in old.keys().chain(new.keys()) {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for key in keys {
        if old.get(key) == new.get(key) {
            continue;
        }
        let block: Vec<String> = match new.get(key) {
            Some(value) => {
                let mut one = serde_json::Map::new();
                one.insert(key.clone(), value.clone());
                crate::yaml::to_string(&one)
                    .map_err(|e| e.to_string())?
                    .lines()
                    .map(|l| format!("{l}{newline}"))
                    .collect()
            }
            None => Vec::new(),
        };
        match key_block(&lines, key) {
            Some((start, end)) => {
                lines.splice(start..end, block);
            }
            None => lines.extend(block),
        }
    }
    Ok(lines.concat())
}

/// The lines `start..end` of top-level key `key`: its `key:` line and the indented (or `- `)
/// lines under it; blank lines and comments after its last value line are not part of it.
fn key_block(lines: &[String], key: &str) -> Option<(usize, usize)> {
    let start = lines.iter().position(|l| {
        l.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    })?;
    let mut end = start + 1;
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        if line.trim().is_empty() {
            continue;
        }
        let nested =
            line.starts_with([' ', '\t']) || (line.starts_with('-') && !line.starts_with("---"));
        if !nested {
            break;
        }
        end = i + 1;
    }
    Some((start, end))
}

/// Check an update manifest URL typed into the app: blank means "updates off" (`None`);
/// otherwise it must be an `https://` URL with a host (plain `http://` only for a feed on this
/// machine, `localhost` or `127.0.0.1`, for testing). Returns the trimmed URL.
pub fn normalize_update_url(input: &str) -> Result<Option<String>, String> {
    let url = input.trim();
    if url.is_empty() {
        return Ok(None);
    }
    let rest = if let Some(rest) = url.strip_prefix("https://") {
        rest
    } else if let Some(rest) = url.strip_prefix("http://") {
        let host = rest.split(['/', '?', '#']).next().unwrap_or("");
        let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
        if !matches!(host, "localhost" | "127.0.0.1" | "[::1]") {
            return Err("the update feed must be an https:// URL".into());
        }
        rest
    } else {
        return Err("the update feed must be an https:// URL".into());
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() || url.chars().any(char::is_whitespace) {
        return Err(format!("`{url}` is not a valid URL"));
    }
    Ok(Some(url.to_string()))
}

/// The result of a connection test.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConnectionTest {
    /// Did the model answer?
    pub ok: bool,
    /// Milliseconds until the answer was complete.
    pub latency_ms: u32,
    /// The model's (short) reply, or what went wrong.
    pub message: String,
}

/// Send a tiny request through `profile` and report how it went.
pub async fn test_profile(profile: &ModelProfile, secrets: Arc<SecretResolver>) -> ConnectionTest {
    let client = crate::models::client_for(profile, secrets);
    let started = Instant::now();
    let request = ChatRequest {
        messages: vec![ChatMessage::new(
            Role::User,
            "Reply with the single word OK.",
        )],
        max_tokens: Some(16),
        ..Default::default()
    };
    let result = client
        .stream(&request, &CancellationToken::new(), &mut |_chunk: &str| {})
        .await;
    let latency_ms = started.elapsed().as_millis().min(u32::MAX as u128) as u32;
    match result {
        Ok(r) => ConnectionTest {
            ok: true,
            latency_ms,
            message: r.text.trim().chars().take(200).collect(),
        },
        Err(e) => ConnectionTest {
            ok: false,
            latency_ms,
            message: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_round_trip_and_invalid_ones_are_not_written() {
        let tmp = tempfile::tempdir().unwrap();
        let mut p = ModelProfile::new(
            "local",
            crate::models::Api::Openai,
            "http://127.0.0.1:11434/v1",
            "qwen",
        );
        p.api_key = Some("{{LOCAL_KEY}}".into());
        save_profiles(tmp.path(), std::slice::from_ref(&p)).unwrap();
        let (loaded, errors) = crate::models::load_profiles(tmp.path());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(loaded, [p.clone()]);

        let mut clear_key = p.clone();
        clear_key.api_key = Some("sk-plain-text-key".into());
        let errors = save_profiles(tmp.path(), &[clear_key]).unwrap_err();
        assert!(
            matches!(&errors, SaveError::Invalid(e) if !e.is_empty()),
            "{errors:?}"
        );
        assert!(
            !std::fs::read_to_string(tmp.path().join("models.yaml"))
                .unwrap()
                .contains("sk-plain"),
            "nothing written"
        );
        let errors = save_profiles(tmp.path(), &[p.clone(), p]).unwrap_err();
        assert!(
            errors.errors().iter().any(|e| e.message.contains("local")),
            "{errors:?}"
        );
    }

    #[test]
    fn a_profiles_context_window_is_saved_and_a_tiny_one_refused_with_its_field() {
        let tmp = tempfile::tempdir().unwrap();
        let mut p = ModelProfile::new(
            "local",
            crate::models::Api::Openai,
            "http://127.0.0.1:8080/v1",
            "m",
        );
        p.context_window = Some(8192);
        save_profiles(tmp.path(), std::slice::from_ref(&p)).unwrap();
        let text = std::fs::read_to_string(tmp.path().join("models.yaml")).unwrap();
        assert!(text.contains("context_window: 8192"), "{text}");
        assert_eq!(crate::models::load_profiles(tmp.path()).0, [p.clone()]);

        p.context_window = Some(100);
        let errors = save_profiles(tmp.path(), &[p]).unwrap_err();
        let error = &errors.errors()[0];
        assert_eq!(
            error.field.as_deref(),
            Some("profiles[0].context_window"),
            "{errors:?}"
        );
        assert!(error.message.contains("at least 512"), "{errors:?}");
    }

    #[test]
    fn settings_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let settings = Settings {
            permission_timeout_secs: 45,
            ..Default::default()
        };
        save_settings(tmp.path(), &settings).unwrap();
        assert_eq!(Settings::load(tmp.path()).unwrap(), settings);
    }

    #[test]
    fn update_url_is_off_by_default_and_round_trips() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            Settings::default().update_url,
            None,
            "updates are off by default"
        );
        // The bundled settings.yaml turns nothing on either.
        let bundled = crate::paths::BUNDLED_CONFIG
            .get_file("settings.yaml")
            .and_then(|f| f.contents_utf8())
            .unwrap();
        let bundled: Settings = crate::yaml::from_str(bundled).unwrap();
        assert_eq!(bundled.update_url, None);

        let on = Settings {
            update_url: Some("https://example.com/artifactflow/latest.json".into()),
            ..Default::default()
        };
        save_settings(tmp.path(), &on).unwrap();
        let text = std::fs::read_to_string(tmp.path().join(Settings::FILE)).unwrap();
        assert!(text.contains("update_url"), "{text}");
        assert_eq!(Settings::load(tmp.path()).unwrap(), on);

        // Turning it off again removes the key, and what loads is "off".
        save_settings(tmp.path(), &Settings::default()).unwrap();
        let text = std::fs::read_to_string(tmp.path().join(Settings::FILE)).unwrap();
        assert!(!text.contains("update_url"), "{text}");
        assert_eq!(Settings::load(tmp.path()).unwrap().update_url, None);
    }

    /// Saving one setting rewrites only its line: comments, key order and other keys stay.
    #[test]
    fn saving_keeps_comments_and_order_byte_for_byte_except_the_changed_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(Settings::FILE);
        let original = "# My settings\n\n# How long to wait (seconds).\npermission_timeout_secs: 120   # two minutes\n\nweb_fetch:\n  # my own reader\n  endpoint: http://127.0.0.1:9/\n  api_key: null\n\n# search last\nweb_search:\n  endpoint: https://api.bochaai.com/v1/web-search\n";
        std::fs::write(&path, original).unwrap();
        let mut settings = Settings::load(tmp.path()).unwrap();
        settings.permission_timeout_secs = 45;
        save_settings(tmp.path(), &settings).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            original.replace(
                "permission_timeout_secs: 120   # two minutes",
                "permission_timeout_secs: 45"
            )
        );
        assert_eq!(Settings::load(tmp.path()).unwrap(), settings);

        // A key the file does not have is appended; unsetting it removes just its lines.
        settings.update_url = Some("https://example.com/latest.json".into());
        save_settings(tmp.path(), &settings).unwrap();
        let with_url = std::fs::read_to_string(&path).unwrap();
        assert!(with_url.starts_with(&text), "{with_url}");
        assert_eq!(Settings::load(tmp.path()).unwrap(), settings);
        settings.update_url = None;
        save_settings(tmp.path(), &settings).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    /// The Settings screen's two saves into the bundled file: one line changes, one is added.
    #[test]
    fn saving_into_the_bundled_file_changes_only_the_saved_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(Settings::FILE);
        let bundled = crate::paths::BUNDLED_CONFIG
            .get_file("settings.yaml")
            .and_then(|f| f.contents_utf8())
            .unwrap();
        std::fs::write(&path, bundled).unwrap();
        let mut settings = Settings::load(tmp.path()).unwrap();
        settings.permission_timeout_secs = 300;
        settings.update_url = Some("https://example.com/latest.json".into());
        save_settings(tmp.path(), &settings).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = format!(
            "{}update_url: https://example.com/latest.json\n",
            bundled.replace(
                "permission_timeout_secs: 120",
                "permission_timeout_secs: 300"
            )
        );
        assert_eq!(text, expected);
        assert_eq!(Settings::load(tmp.path()).unwrap(), settings);
    }

    /// A write that fails is an IO failure, not a form to fix.
    #[test]
    fn a_failed_write_is_an_io_error() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("no such folder");
        let err = save_settings(&missing, &Settings::default()).unwrap_err();
        assert!(matches!(err, SaveError::Io(_)), "{err:?}");
        assert!(err.to_string().contains("cannot write"), "{err}");
        let err = save_profiles(&missing, &[]).unwrap_err();
        assert!(matches!(err, SaveError::Io(_)), "{err:?}");
    }

    /// A file that does not load is never written over, and the error says where it breaks.
    #[test]
    fn a_broken_settings_file_is_not_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(Settings::FILE);
        let broken = "# keep me\npermission_timeout_secs: 60\nweb_fetch: [oops\n";
        std::fs::write(&path, broken).unwrap();
        let err = save_settings(
            tmp.path(),
            &Settings {
                permission_timeout_secs: 30,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            broken.as_bytes(),
            "untouched"
        );
        let SaveError::Invalid(errors) = &err else {
            panic!("a file that does not load is invalid, not a write failure: {err:?}")
        };
        assert!(errors[0].line.is_some(), "{err:?}");
        assert!(errors[0].message.contains("was not changed"), "{err}");
        assert!(err.to_string().contains("settings.yaml"), "{err}");
    }

    #[test]
    fn update_urls_must_be_https_except_on_this_machine() {
        assert_eq!(normalize_update_url("  "), Ok(None));
        assert_eq!(
            normalize_update_url(" https://example.com/latest.json "),
            Ok(Some("https://example.com/latest.json".into()))
        );
        assert_eq!(
            normalize_update_url("http://127.0.0.1:8123/latest.json"),
            Ok(Some("http://127.0.0.1:8123/latest.json".into()))
        );
        assert!(normalize_update_url("http://localhost/feed.json").is_ok());
        for bad in [
            "http://example.com/latest.json",
            "ftp://example.com/x",
            "example.com/latest.json",
            "https://",
            "https://exa mple.com/x",
        ] {
            assert!(normalize_update_url(bad).is_err(), "{bad} was accepted");
        }
    }
}
