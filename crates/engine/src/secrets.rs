//! Secrets: `{{NAME}}` / `<<NAME>>` templates filled from the OS keyring, then the process
//! environment, then the config folder's `.env` file — and the redaction every outward path uses.
//!
//! Values live only in the keyring (service [`KEYRING_SERVICE`], one entry per name). Names are
//! not secret: a small index file lists them, because keyrings cannot enumerate entries.
//! A missing keyring entry ([`keyring::Error::NoEntry`]) simply means "absent"; a keyring that
//! cannot be reached (no Secret Service on a headless Linux box) is logged once and treated as
//! absent, so environment variables still work.
//!
//! Keyring access blocks (D-Bus, Keychain); async callers use [`SecretResolver::fill_async`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use regex::Regex;

/// The keyring service name entries are stored under.
pub const KEYRING_SERVICE: &str = "app.artifactflow.desktop";

/// Environment variable overriding [`KEYRING_SERVICE`].
pub const SERVICE_ENV: &str = "ARTIFACTFLOW_KEYRING_SERVICE";

/// What replaces a secret value in any text that leaves the engine.
pub const MASK: &str = "••••••";

fn template_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|<<\s*([A-Za-z_][A-Za-z0-9_]*)\s*>>")
            .expect("valid regex")
    })
}

/// The variable names referenced by `{{NAME}}` / `<<NAME>>` templates in `text`, in order.
pub fn template_names(text: &str) -> Vec<String> {
    template_regex()
        .captures_iter(text)
        .filter_map(|c| {
            c.get(1)
                .or_else(|| c.get(2))
                .map(|m| m.as_str().to_string())
        })
        .collect()
}

/// Is `name` a valid secret name (`A-Z`, `a-z`, `0-9`, `_`, not starting with a digit)?
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Errors of the secret store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// The name has characters that cannot appear in a template.
    #[error(
        "`{0}` is not a valid secret name: use letters, digits and `_`, not starting with a digit"
    )]
    InvalidName(String),
    /// The keyring refused.
    #[error("the system keyring failed: {0}")]
    Keyring(String),
    /// The index of names could not be written.
    #[error("cannot update {path}: {source}")]
    Index {
        /// The index file.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
}

/// Where a resolved value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretSource {
    /// The OS keyring.
    Keyring,
    /// A process environment variable.
    Environment,
    /// The config folder's `.env` file.
    DotEnv,
}

/// The OS keyring plus the index of names.
#[derive(Debug, Clone)]
pub struct SecretStore {
    service: String,
    index: PathBuf,
}

impl SecretStore {
    /// A store using keyring `service` and the name index at `index`.
    pub fn new(service: impl Into<String>, index: impl Into<PathBuf>) -> Self {
        SecretStore {
            service: service.into(),
            index: index.into(),
        }
    }

    /// The app's store for a data folder. `ARTIFACTFLOW_KEYRING_SERVICE` overrides the service
    /// name (tests use it so they never touch a user's real entries).
    pub fn for_data_dir(data_dir: &Path) -> Self {
        let service = std::env::var(SERVICE_ENV)
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| KEYRING_SERVICE.to_string());
        Self::new(service, data_dir.join("secret-names.json"))
    }

    fn entry(&self, name: &str) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(&self.service, name).map_err(|e| SecretError::Keyring(e.to_string()))
    }

    /// Store `value` under `name` (replacing any previous value).
    pub fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        if !is_valid_name(name) {
            return Err(SecretError::InvalidName(name.to_string()));
        }
        self.entry(name)?
            .set_password(value)
            .map_err(|e| SecretError::Keyring(e.to_string()))?;
        let mut names = self.names();
        names.insert(name.to_string());
        self.write_index(&names)
    }

    /// Delete `name`. Deleting a name that does not exist is not an error.
    pub fn delete(&self, name: &str) -> Result<(), SecretError> {
        match self.entry(name)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => {}
            Err(e) => return Err(SecretError::Keyring(e.to_string())),
        }
        let mut names = self.names();
        names.remove(name);
        self.write_index(&names)
    }

    /// The value stored in the keyring, if any. Keyring failures count as absent (and are logged).
    pub fn get(&self, name: &str) -> Option<String> {
        match self.entry(name).ok()?.get_password() {
            Ok(v) => Some(v),
            Err(keyring::Error::NoEntry) => None,
            Err(e) => {
                static WARNED: OnceLock<()> = OnceLock::new();
                if WARNED.set(()).is_ok() {
                    tracing::warn!("the system keyring is not available ({e}); secrets come from the environment and .env only");
                }
                None
            }
        }
    }

    /// Names of the stored secrets, sorted.
    pub fn names(&self) -> BTreeSet<String> {
        std::fs::read(&self.index)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<BTreeSet<String>>(&bytes).ok())
            .unwrap_or_default()
    }

    fn write_index(&self, names: &BTreeSet<String>) -> Result<(), SecretError> {
        let err = |source| SecretError::Index {
            path: self.index.clone(),
            source,
        };
        if let Some(dir) = self.index.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let json = serde_json::to_vec_pretty(names).expect("names serialise");
        crate::config::write_atomically(&self.index, &json).map_err(err)
    }
}

/// Resolves template variables: keyring, then environment, then `.env`.
#[derive(Debug, Clone)]
pub struct SecretResolver {
    store: Option<SecretStore>,
    dotenv: Option<PathBuf>,
}

/// A template with its variables filled in.
#[derive(Debug, Clone, Default)]
pub struct Filled {
    /// The text with every resolvable variable replaced.
    pub text: String,
    /// Names that were found nowhere (left literally in `text`).
    pub unresolved: Vec<String>,
    /// The values substituted — for [`Redactor`] only.
    pub values: Vec<String>,
}

impl SecretResolver {
    /// A resolver over a keyring store (optional) and a `.env` file (optional).
    pub fn new(store: Option<SecretStore>, dotenv: Option<PathBuf>) -> Self {
        SecretResolver { store, dotenv }
    }

    /// Look up one name.
    pub fn resolve(&self, name: &str) -> Option<(String, SecretSource)> {
        if let Some(v) = self.store.as_ref().and_then(|s| s.get(name)) {
            return Some((v, SecretSource::Keyring));
        }
        if let Some(v) = std::env::var(name).ok().filter(|v| !v.is_empty()) {
            return Some((v, SecretSource::Environment));
        }
        let path = self.dotenv.as_ref()?;
        let iter = dotenvy::from_path_iter(path).ok()?;
        iter.filter_map(Result::ok)
            .find(|(k, _)| k == name)
            .map(|(_, v)| (v, SecretSource::DotEnv))
    }

    /// Fill every `{{NAME}}` / `<<NAME>>` in `template`. Unresolved names stay literal and are
    /// logged as a warning (by name only).
    pub fn fill(&self, template: &str) -> Filled {
        let mut filled = Filled::default();
        let text = template_regex().replace_all(template, |c: &regex::Captures<'_>| {
            let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            match self.resolve(name) {
                Some((value, _)) => {
                    filled.values.push(value.clone());
                    value
                }
                None => {
                    tracing::warn!(
                        variable = name,
                        "template variable not found in keyring, environment or .env; left as is"
                    );
                    filled.unresolved.push(name.to_string());
                    c[0].to_string()
                }
            }
        });
        filled.text = text.into_owned();
        filled
    }

    /// [`SecretResolver::fill`] on a blocking thread (keyring calls block).
    pub async fn fill_async(self: &Arc<Self>, templates: Vec<String>) -> Vec<Filled> {
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || templates.iter().map(|t| me.fill(t)).collect())
            .await
            .unwrap_or_default()
    }
}

/// Replaces known secret values in text that leaves the engine (results, errors, events, logs).
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    values: Vec<String>,
}

impl Redactor {
    /// Values shorter than this are not redacted (they would mangle ordinary text and are not
    /// credible secrets).
    pub const MIN_LEN: usize = 4;

    /// A redactor for these values.
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = values
            .into_iter()
            .filter(|v| v.chars().count() >= Self::MIN_LEN)
            .collect();
        // Longest first, so a value containing another is replaced whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Redactor { values }
    }

    /// `text` with every secret value (and its URL-encoded form) replaced by [`MASK`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), MASK);
            }
            let encoded = url_encode(v);
            if encoded != *v && out.contains(encoded.as_str()) {
                out = out.replace(encoded.as_str(), MASK);
            }
        }
        out
    }
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_both_template_forms() {
        assert_eq!(
            template_names("https://{{HOST}}/x?k=<<KEY>>&{{ spaced }}"),
            ["HOST", "KEY", "spaced"]
        );
        assert!(template_names("{{not valid}} {{1X}}").is_empty());
    }

    #[test]
    fn env_then_dotenv_and_unresolved_stay_literal() {
        let tmp = tempfile::tempdir().unwrap();
        let dotenv = tmp.path().join(".env");
        std::fs::write(
            &dotenv,
            "# comment\nAF_TEST_DOTENV_ONLY=from-dotenv\nexport AF_TEST_BOTH=\"dotenv-loses\"\n",
        )
        .unwrap();
        std::env::set_var("AF_TEST_BOTH", "env-wins");
        let r = SecretResolver::new(None, Some(dotenv));
        let f = r.fill("a={{AF_TEST_DOTENV_ONLY}} b=<<AF_TEST_BOTH>> c={{AF_TEST_MISSING}}");
        assert_eq!(f.text, "a=from-dotenv b=env-wins c={{AF_TEST_MISSING}}");
        assert_eq!(f.unresolved, ["AF_TEST_MISSING"]);
        assert_eq!(f.values, ["from-dotenv", "env-wins"]);
    }

    #[test]
    fn redacts_values_and_their_url_encoding() {
        let r = Redactor::new(["s3cr3t/+key".to_string(), "ab".to_string()]);
        assert_eq!(
            r.redact("h=s3cr3t/+key q=s3cr3t%2F%2Bkey ab"),
            format!("h={MASK} q={MASK} ab")
        );
    }

    #[test]
    fn validates_names() {
        assert!(is_valid_name("OPENAI_API_KEY"));
        assert!(is_valid_name("_x1"));
        assert!(!is_valid_name("1X"));
        assert!(!is_valid_name("a-b"));
        assert!(!is_valid_name(""));
    }
}
