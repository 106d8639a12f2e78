//! Secrets: `{{NAME}}` / `<<NAME>>` templates filled from the OS keyring, then the process
//! environment, then the config folder's `.env` file — and the redaction every outward path uses.
//!
//! Only the environment variables named in [`ENV_ALLOW_ENV`] (`ARTIFACTFLOW_SECRETS_FROM_ENV`,
//! names separated by commas or spaces) or in settings.yaml's [`SETTINGS_ALLOW_KEY`]
//! (`secrets_from_env`, for an app started from its menu, with no shell to set a variable in)
//! may fill a template: a tool file, possibly generated from someone else's OpenAPI
//! description, must not be a way to read the app's environment (`{{AWS_SECRET_ACCESS_KEY}}`,
//! `{{HOME}}`). The two lists are merged. The settings' list lives in an [`EnvAllowList`] the
//! app shares with every resolver it makes, replaced when the settings reload, so a resolver
//! that lives long (the MCP servers') follows an edit. The keyring and `config/.env` hold what
//! the user put there for the app, so they fill any name. [`how_to_set`] says all of this to
//! the person whose secret is missing.
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
use std::sync::{Arc, OnceLock, RwLock};

use regex::Regex;

use crate::util::url::encode_component;

/// The keyring service name entries are stored under: the app's identifier, unchanged since
/// the first release (so entries stored by any earlier build stay readable).
pub const KEYRING_SERVICE: &str = crate::paths::APP_IDENTIFIER;

/// Environment variable overriding [`KEYRING_SERVICE`].
pub const SERVICE_ENV: &str = "ARTIFACTFLOW_KEYRING_SERVICE";

/// Environment variable listing the environment variables that may fill templates.
pub const ENV_ALLOW_ENV: &str = "ARTIFACTFLOW_SECRETS_FROM_ENV";

/// The names [`ENV_ALLOW_ENV`] lists now (commas or whitespace between them).
pub fn env_allow_list() -> BTreeSet<String> {
    std::env::var(ENV_ALLOW_ENV)
        .unwrap_or_default()
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| is_valid_name(n))
        .map(str::to_string)
        .collect()
}

/// The `settings.yaml` key listing more environment variables that may fill templates.
pub const SETTINGS_ALLOW_KEY: &str = "secrets_from_env";

/// Names of environment variables that may fill templates, shared by the resolvers given it
/// ([`SecretResolver::allow_env_listed`]) and replaceable while they live: the app keeps
/// settings.yaml's [`SETTINGS_ALLOW_KEY`] in one.
#[derive(Debug, Clone, Default)]
pub struct EnvAllowList(Arc<RwLock<BTreeSet<String>>>);

impl EnvAllowList {
    /// From now on, allow exactly `names` (for every resolver holding this list).
    pub fn replace<S: Into<String>>(&self, names: impl IntoIterator<Item = S>) {
        let names = names.into_iter().map(Into::into).collect();
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = names;
    }

    /// Does the list name `name`?
    pub fn contains(&self, name: &str) -> bool {
        self.0
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains(name)
    }
}

/// Where the secret `name` can be given a value, for an error saying it is missing: the
/// keyring (Settings or the CLI), `config/.env`, or an environment variable once a list names
/// it. Names only: no value is ever part of it.
pub fn how_to_set(name: &str) -> String {
    format!(
        "set it in Settings → Secrets, with `artifactflow-cli secrets set {name}`, or as a line \
         `{name}=…` in config/.env; the environment variable {name} is read only when \
         {ENV_ALLOW_ENV} or `{SETTINGS_ALLOW_KEY}` in settings.yaml lists it"
    )
}

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

pub use crate::util::names::is_valid_secret_name as is_valid_name;

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
                    tracing::warn!("the system keyring is not available ({e}); secrets come from the listed environment variables and .env only");
                }
                None
            }
        }
    }

    /// Store a long value the app keeps for itself (OAuth tokens) under `key`, split into
    /// numbered entries `key#0`, `key#1`, … of at most [`CHUNK_CHARS`] characters each: Windows
    /// Credential Manager holds at most 2,560 bytes (1,280 UTF-16 units) per entry, and a token
    /// set is often longer. Such entries are not user secrets: they stay out of the index of
    /// names (and so out of the secrets list and of `{{NAME}}` templates).
    pub fn set_chunked(&self, key: &str, value: &str) -> Result<(), SecretError> {
        let chars: Vec<char> = value.chars().collect();
        let chunks: Vec<String> = if chars.is_empty() {
            vec![String::new()]
        } else {
            chars
                .chunks(CHUNK_CHARS)
                .map(|c| c.iter().collect())
                .collect()
        };
        for (i, chunk) in chunks.iter().enumerate() {
            self.entry(&chunk_name(key, i))?
                .set_password(chunk)
                .map_err(|e| SecretError::Keyring(e.to_string()))?;
        }
        // A shorter value than before: drop the old value's extra entries.
        self.delete_chunks_from(key, chunks.len())
    }

    /// The value [`SecretStore::set_chunked`] stored under `key`, if any. A keyring failure is
    /// an error here (not "absent"): the caller must not mistake it for "never signed in".
    pub fn get_chunked(&self, key: &str) -> Result<Option<String>, SecretError> {
        let mut value = String::new();
        for i in 0.. {
            match self.entry(&chunk_name(key, i))?.get_password() {
                Ok(chunk) => value.push_str(&chunk),
                Err(keyring::Error::NoEntry) if i == 0 => return Ok(None),
                Err(keyring::Error::NoEntry) => break,
                Err(e) => return Err(SecretError::Keyring(e.to_string())),
            }
        }
        Ok(Some(value))
    }

    /// Delete every entry of `key` (see [`SecretStore::set_chunked`]). Absent is not an error.
    pub fn delete_chunked(&self, key: &str) -> Result<(), SecretError> {
        self.delete_chunks_from(key, 0)
    }

    fn delete_chunks_from(&self, key: &str, first: usize) -> Result<(), SecretError> {
        for i in first.. {
            match self.entry(&chunk_name(key, i))?.delete_credential() {
                Ok(()) => {}
                Err(keyring::Error::NoEntry) => break,
                Err(e) => return Err(SecretError::Keyring(e.to_string())),
            }
        }
        Ok(())
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
        crate::util::fs::write_atomically(&self.index, &json).map_err(err)
    }
}

/// Largest piece of a [`SecretStore::set_chunked`] value in one keyring entry, in characters:
/// Windows Credential Manager stores at most 2,560 bytes of UTF-16 (1,280 units); 600 fits even
/// when every character is outside the BMP (two units each).
pub const CHUNK_CHARS: usize = 600;

fn chunk_name(key: &str, i: usize) -> String {
    format!("{key}#{i}")
}

/// Resolves template variables: keyring, then the allowed environment variables, then `.env`.
#[derive(Debug, Clone)]
pub struct SecretResolver {
    store: Option<SecretStore>,
    dotenv: Option<PathBuf>,
    /// Environment variables that may fill a template.
    env_allowed: BTreeSet<String>,
    /// More of them, from a list that may change while this resolver lives (the settings').
    env_allowed_listed: Option<EnvAllowList>,
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
    /// A resolver over a keyring store (optional) and a `.env` file (optional); environment
    /// variables only when [`ENV_ALLOW_ENV`] lists them (read now).
    pub fn new(store: Option<SecretStore>, dotenv: Option<PathBuf>) -> Self {
        SecretResolver {
            store,
            dotenv,
            env_allowed: env_allow_list(),
            env_allowed_listed: None,
        }
    }

    /// This resolver, also allowed to read the environment variables `names`.
    pub fn allow_env<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.env_allowed.extend(names.into_iter().map(Into::into));
        self
    }

    /// This resolver, also allowed to read the environment variables `list` names whenever it
    /// resolves (the list may change afterwards).
    pub fn allow_env_listed(mut self, list: &EnvAllowList) -> Self {
        self.env_allowed_listed = Some(list.clone());
        self
    }

    /// May the environment variable `name` fill a template?
    fn env_allows(&self, name: &str) -> bool {
        self.env_allowed.contains(name)
            || self
                .env_allowed_listed
                .as_ref()
                .is_some_and(|list| list.contains(name))
    }

    /// The keyring store, if this resolver has one.
    pub fn store(&self) -> Option<&SecretStore> {
        self.store.as_ref()
    }

    /// Look up one name.
    pub fn resolve(&self, name: &str) -> Option<(String, SecretSource)> {
        if let Some(v) = self.store.as_ref().and_then(|s| s.get(name)) {
            return Some((v, SecretSource::Keyring));
        }
        if self.env_allows(name) {
            if let Some(v) = std::env::var(name).ok().filter(|v| !v.is_empty()) {
                return Some((v, SecretSource::Environment));
            }
        }
        let path = self.dotenv.as_ref()?;
        let iter = dotenvy::from_path_iter(path).ok()?;
        iter.filter_map(Result::ok)
            .find(|(k, _)| k == name)
            .map(|(_, v)| (v, SecretSource::DotEnv))
    }

    /// Every secret value this resolver reaches (the keyring's, then `.env`'s), for masking
    /// text that may hold any of them (a skill script's output). Blocks: keyring calls.
    pub fn known_values(&self) -> Vec<String> {
        let mut values: Vec<String> = self
            .store
            .iter()
            .flat_map(|s| s.names().into_iter().filter_map(|n| s.get(&n)))
            .collect();
        if let Some(iter) = self
            .dotenv
            .as_ref()
            .and_then(|p| dotenvy::from_path_iter(p).ok())
        {
            values.extend(iter.filter_map(Result::ok).map(|(_, v)| v));
        }
        values.retain(|v| !v.is_empty());
        values
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
                        "template variable not found in keyring, allowed environment or .env; left as is"
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
///
/// A server may echo a secret in another spelling, so each value is looked for in these forms,
/// in any mix within one occurrence (each character may be spelled differently):
///
/// - as is;
/// - JSON-escaped: `\"`, `\\`, `\/`, `\n`-style escapes and `\uXXXX` (either hex case,
///   surrogate pairs for characters outside the BMP) for any character;
/// - percent-encoded: any byte as `%XX` in either hex case (whatever set of characters the
///   encoder left alone), and a space as `+` (form encoding);
/// - base64, standard and URL-safe alphabets, padded or not, of the value alone; and the part
///   of its base64 that does not depend on its neighbours when it sits inside a longer encoded
///   blob (e.g. `user:secret` in a Basic header), for each of the three byte alignments — the
///   one to three characters at each end that mix the secret's bits with its neighbours' stay
///   visible, and this inner part is masked only when it is at least
///   [`Redactor::MIN_BASE64_CORE`] characters long; these base64 forms may also be
///   JSON-escaped or percent-encoded.
///
/// Not covered: encodings applied twice (`%252F`), HTML entities, hex or other encodings of the
/// value, and a value split across separately redacted texts.
///
/// JSON is redacted whole by [`Redactor::redact_json`]: every string and every object key at
/// any depth. Bytes that are not text (an image, a file) cannot be masked without corrupting
/// them: [`Redactor::holds_secret`] says whether they hold a value in any of these forms, so
/// the caller can refuse to keep them.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    values: Vec<String>,
    pattern: Option<Regex>,
    /// The same alternation as `pattern`, over bytes: built on first use by
    /// [`Redactor::holds_secret`] (most redactors only ever see text).
    bytes_pattern: OnceLock<Option<regex::bytes::Regex>>,
}

impl Redactor {
    /// Values shorter than this are not redacted (they would mangle ordinary text and are not
    /// credible secrets).
    pub const MIN_LEN: usize = 4;

    /// Shortest base64 inner part (of a value inside a longer blob) that is masked.
    pub const MIN_BASE64_CORE: usize = 8;

    /// A redactor for these values.
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = values
            .into_iter()
            .filter(|v| v.chars().count() >= Self::MIN_LEN)
            .collect();
        // Longest first, so a value containing another is replaced whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        let pattern = build_pattern(&values);
        Redactor {
            values,
            pattern,
            bytes_pattern: OnceLock::new(),
        }
    }

    /// Has it no value to look for (every text passes unchanged)?
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every secret value (in any of the forms above) replaced by [`MASK`].
    pub fn redact(&self, text: &str) -> String {
        match &self.pattern {
            Some(re) => re.replace_all(text, MASK).into_owned(),
            None => {
                // Only when the pattern could not be built (a huge value): the plain forms.
                let mut out = text.to_string();
                for v in &self.values {
                    out = out.replace(v.as_str(), MASK);
                    out = out.replace(encode_component(v).as_str(), MASK);
                }
                out
            }
        }
    }

    /// `value` with [`Redactor::redact`] applied to every string and every object key, at any
    /// depth. Keys that masking leaves alone keep their names; a masked key that would clash
    /// with another key of the same object is numbered (`•••••• (2)`, `•••••• (3)`, …, the
    /// first free number), so no member is lost. Members keep their order.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => {
                let masked = self.redact(s);
                if masked != *s {
                    *s = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => {
                map.values_mut().for_each(|v| self.redact_json(v));
                let masked: Vec<Option<String>> = map
                    .keys()
                    .map(|k| Some(self.redact(k)).filter(|m| m != k))
                    .collect();
                if masked.iter().any(Option::is_some) {
                    *map = rename_keys(std::mem::take(map), masked);
                }
            }
            _ => {}
        }
    }

    /// Do `bytes` (binary data: an image, a file) hold a secret value in any of the forms
    /// [`Redactor::redact`] masks in text (as is, JSON-escaped, percent-encoded, base64)?
    pub fn holds_secret(&self, bytes: &[u8]) -> bool {
        if self.is_empty() {
            return false;
        }
        let pattern = self
            .bytes_pattern
            .get_or_init(|| build_bytes_pattern(&self.values));
        match pattern {
            Some(re) => re.is_match(bytes),
            None => self.values.iter().any(|v| {
                contains(bytes, v.as_bytes()) || contains(bytes, encode_component(v).as_bytes())
            }),
        }
    }
}

/// `map` with each key whose entry in `masked` is `Some` renamed to it, numbered when that
/// name is taken (see [`Redactor::redact_json`]).
fn rename_keys(
    map: serde_json::Map<String, serde_json::Value>,
    masked: Vec<Option<String>>,
) -> serde_json::Map<String, serde_json::Value> {
    // The keys masking leaves alone are taken first: they keep their names.
    let mut taken: std::collections::HashSet<String> = map
        .keys()
        .zip(&masked)
        .filter(|(_, m)| m.is_none())
        .map(|(k, _)| k.clone())
        .collect();
    let mut out = serde_json::Map::with_capacity(map.len());
    for ((key, value), masked) in map.into_iter().zip(masked) {
        let name = match masked {
            None => key,
            Some(masked) => {
                let mut name = masked.clone();
                let mut n = 2;
                while taken.contains(&name) {
                    name = format!("{masked} ({n})");
                    n += 1;
                }
                taken.insert(name.clone());
                name
            }
        };
        out.insert(name, value);
    }
    out
}

/// Does `haystack` contain `needle`?
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// The alternation of every form of every value, longest form first.
fn alternation(values: &[String]) -> String {
    let mut forms: Vec<String> = values.iter().flat_map(|v| forms_of(v)).collect();
    forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    forms.dedup();
    forms
        .iter()
        .map(|f| f.chars().map(char_pattern).collect::<String>())
        .collect::<Vec<_>>()
        .join("|")
}

/// One regex matching every form of every value, longest form first.
fn build_pattern(values: &[String]) -> Option<Regex> {
    if values.is_empty() {
        return None;
    }
    regex::RegexBuilder::new(&alternation(values))
        .size_limit(64 * 1024 * 1024)
        .build()
        .map_err(|e| tracing::warn!("secret redaction falls back to plain forms: {e}"))
        .ok()
}

/// [`build_pattern`] over bytes: a character outside ASCII matches its UTF-8 bytes, and the
/// haystack need not be UTF-8.
fn build_bytes_pattern(values: &[String]) -> Option<regex::bytes::Regex> {
    if values.is_empty() {
        return None;
    }
    regex::bytes::RegexBuilder::new(&alternation(values))
        .size_limit(64 * 1024 * 1024)
        .build()
        .map_err(|e| tracing::warn!("secret detection in bytes falls back to plain forms: {e}"))
        .ok()
}

/// The value itself and its base64 forms (each later matched with any character escaped).
fn forms_of(value: &str) -> Vec<String> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    use base64::Engine;
    let bytes = value.as_bytes();
    let mut forms = vec![value.to_string()];
    for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
        forms.push(engine.encode(bytes));
    }
    for offset in 0..3 {
        // Encode behind `offset` filler bytes; keep the groups of 3 bytes that are all secret.
        let mut shifted = vec![0u8; offset];
        shifted.extend_from_slice(bytes);
        let first_group = offset.div_ceil(3);
        let end_group = shifted.len() / 3;
        if end_group <= first_group {
            continue;
        }
        let encoded = STANDARD_NO_PAD.encode(&shifted);
        let core = &encoded[first_group * 4..end_group * 4];
        if core.len() >= Redactor::MIN_BASE64_CORE {
            forms.push(core.to_string());
            forms.push(core.replace('+', "-").replace('/', "_"));
        }
    }
    forms
}

/// A regex alternation matching `c` as is, JSON-escaped or percent-encoded.
fn char_pattern(c: char) -> String {
    let mut alternatives = vec![regex::escape(&c.to_string())];
    let mut units = [0u16; 2];
    let unicode: String = c
        .encode_utf16(&mut units)
        .iter()
        .map(|u| format!("\\\\u{}", hex_any_case(&format!("{u:04x}"))))
        .collect();
    alternatives.push(unicode);
    match c {
        '"' | '\\' | '/' => alternatives.push(regex::escape(&format!("\\{c}"))),
        '\n' => alternatives.push(r"\\n".into()),
        '\r' => alternatives.push(r"\\r".into()),
        '\t' => alternatives.push(r"\\t".into()),
        '\u{8}' => alternatives.push(r"\\b".into()),
        '\u{c}' => alternatives.push(r"\\f".into()),
        ' ' => alternatives.push(r"\+".into()),
        _ => {}
    }
    let mut utf8 = [0u8; 4];
    let percent: String = c
        .encode_utf8(&mut utf8)
        .bytes()
        .map(|b| format!("%{}", hex_any_case(&format!("{b:02x}"))))
        .collect();
    alternatives.push(percent);
    format!("(?:{})", alternatives.join("|"))
}

/// `hex` with each letter matching either case (`c3` → `[cC]3`).
fn hex_any_case(hex: &str) -> String {
    hex.chars()
        .map(|h| {
            if h.is_ascii_alphabetic() {
                format!("[{}{}]", h.to_ascii_lowercase(), h.to_ascii_uppercase())
            } else {
                h.to_string()
            }
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
        let r = SecretResolver::new(None, Some(dotenv)).allow_env(["AF_TEST_BOTH"]);
        let f = r.fill("a={{AF_TEST_DOTENV_ONLY}} b=<<AF_TEST_BOTH>> c={{AF_TEST_MISSING}}");
        assert_eq!(f.text, "a=from-dotenv b=env-wins c={{AF_TEST_MISSING}}");
        assert_eq!(f.unresolved, ["AF_TEST_MISSING"]);
        assert_eq!(f.values, ["from-dotenv", "env-wins"]);
    }

    /// A resolver reads the variables a shared list names when it resolves, not when it was
    /// made: the app's settings change the list while the MCP servers' resolver lives.
    #[test]
    fn a_shared_list_allows_variables_from_the_moment_it_names_them() {
        std::env::set_var("AF_TEST_SHARED_LISTED", "shared-8d1e");
        let list = EnvAllowList::default();
        let resolver = SecretResolver::new(None, None).allow_env_listed(&list);
        assert_eq!(resolver.resolve("AF_TEST_SHARED_LISTED"), None);
        list.replace(["AF_TEST_SHARED_LISTED"]);
        assert_eq!(
            resolver.resolve("AF_TEST_SHARED_LISTED"),
            Some(("shared-8d1e".into(), SecretSource::Environment))
        );
        assert_eq!(
            resolver.fill("k={{AF_TEST_SHARED_LISTED}}").text,
            "k=shared-8d1e"
        );
        list.replace(Vec::<String>::new());
        assert_eq!(resolver.resolve("AF_TEST_SHARED_LISTED"), None);
    }

    #[test]
    fn how_to_set_names_every_place_and_both_lists() {
        let how = how_to_set("GITHUB_TOKEN");
        for expected in [
            "Settings → Secrets",
            "`artifactflow-cli secrets set GITHUB_TOKEN`",
            "`GITHUB_TOKEN=…` in config/.env",
            "the environment variable GITHUB_TOKEN is read only when \
             ARTIFACTFLOW_SECRETS_FROM_ENV or `secrets_from_env` in settings.yaml lists it",
        ] {
            assert!(how.contains(expected), "{expected}: {how}");
        }
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
    fn redacts_escaped_percent_encoded_and_base64_forms() {
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        use base64::Engine;
        let secret = "k/e+y \"É✓ 9";
        let r = Redactor::new([secret.to_string()]);
        let forms = [
            r#"k\/e+y \"\u00c9\u2713 9"#.to_string(),
            r#"\u006B/e+y \u0022\u00C9\u2713\u0020\u0039"#.to_string(),
            "k%2fe%2by%20%22%c3%89%e2%9c%93%209".to_string(),
            "k%2Fe%2By+%22%C3%89%E2%9C%93+9".to_string(),
            "k/e%2By+%22%C3%89%E2%9C%93+9".to_string(),
            STANDARD.encode(secret),
            URL_SAFE_NO_PAD.encode(secret),
        ];
        for form in &forms {
            assert_eq!(
                r.redact(&format!("<{form}>")),
                format!("<{MASK}>"),
                "{form}"
            );
        }
        // Inside a longer blob, at each alignment, only the bits mixed with neighbours remain.
        for prefix in ["", "u:", "us:", "use:"] {
            let blob = STANDARD.encode(format!("{prefix}{secret}:tail"));
            let out = r.redact(&blob);
            assert!(out.contains(MASK), "{prefix}: {out}");
            assert!(
                out.chars().count() < blob.chars().count(),
                "{prefix}: {out}"
            );
        }
        assert_eq!(r.redact("ordinary text"), "ordinary text");
    }

    #[test]
    fn redacts_every_string_and_key_of_json_at_any_depth() {
        let secret = "sk-json-0123456789";
        let r = Redactor::new([secret.to_string()]);
        let mut value = serde_json::json!({
            secret: {"deeper": [{format!("x-{secret}"): format!("a {secret} b")}]},
            "list": [[{"k": secret}]],
            "number": 4,
        });
        r.redact_json(&mut value);
        assert_eq!(
            value,
            serde_json::json!({
                MASK: {"deeper": [{format!("x-{MASK}"): format!("a {MASK} b")}]},
                "list": [[{"k": MASK}]],
                "number": 4,
            })
        );
        // Members keep their order.
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, [MASK, "list", "number"]);
    }

    #[test]
    fn a_masked_key_that_clashes_is_numbered_and_nothing_is_lost() {
        let secret = "sk-json-0123456789";
        let r = Redactor::new([secret.to_string()]);
        // A key already spelled like the mask keeps its name; the masked ones are numbered in
        // order, skipping a number another key already has.
        let mut value = serde_json::json!({"inner": {
            secret: 1,
            MASK: 2,
            secret.replace('-', "\\u002d"): 3,
            format!("{MASK} (2)"): 4,
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, secret): 5,
        }});
        r.redact_json(&mut value);
        let inner = value["inner"].as_object().unwrap();
        let members: Vec<(String, i64)> = inner
            .iter()
            .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
            .collect();
        assert_eq!(
            members,
            [
                (format!("{MASK} (3)"), 1),
                (MASK.to_string(), 2),
                (format!("{MASK} (4)"), 3),
                (format!("{MASK} (2)"), 4),
                (format!("{MASK} (5)"), 5),
            ]
        );
        let mut untouched = serde_json::json!({"a": {"b": ["c"]}});
        r.redact_json(&mut untouched);
        assert_eq!(untouched, serde_json::json!({"a": {"b": ["c"]}}));
    }

    #[test]
    fn finds_a_secret_in_binary_data_in_each_form() {
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        use base64::Engine;
        let secret = "k/e+y \"É✓ 9";
        let r = Redactor::new([secret.to_string()]);
        // Bytes that are not UTF-8 around the secret, in each form the text redaction knows.
        let binary = |inner: &[u8]| {
            let mut bytes = vec![0x89, b'P', b'N', b'G', 0x00, 0xff, 0xfe];
            bytes.extend_from_slice(inner);
            bytes.extend_from_slice(&[0x00, 0xc3, 0x28]);
            bytes
        };
        let forms: Vec<Vec<u8>> = vec![
            secret.as_bytes().to_vec(),
            br#"k\/e+y \"\u00c9\u2713 9"#.to_vec(),
            b"k%2Fe%2By+%22%C3%89%E2%9C%93+9".to_vec(),
            STANDARD.encode(secret).into_bytes(),
            URL_SAFE_NO_PAD.encode(secret).into_bytes(),
            // Inside a longer base64 blob.
            STANDARD.encode(format!("user:{secret}:tail")).into_bytes(),
        ];
        for form in &forms {
            assert!(
                r.holds_secret(&binary(form)),
                "{}",
                String::from_utf8_lossy(form)
            );
        }
        assert!(!r.holds_secret(&binary(b"k/e+y and nothing else")));
        assert!(!Redactor::new(Vec::<String>::new()).holds_secret(secret.as_bytes()));
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
