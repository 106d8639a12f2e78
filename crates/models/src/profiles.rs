//! Model profiles from `config/models.yaml`.
//!
//! ```yaml
//! profiles:
//!   - name: default                      # required, unique
//!     api: openai                        # openai (any OpenAI-compatible server) | anthropic
//!     base_url: "https://api.openai.com/v1"   # required, http:// or https://
//!     model: "gpt-4o-mini"               # required
//!     api_key: "{{OPENAI_API_KEY}}"      # optional; a secret template, never the key itself
//!     temperature: 0.2                   # optional, 0–2
//!     max_tokens: 4096                   # optional, at least 1
//!     context_window: 32768              # optional, tokens the model reads at once (at least 512)
//!     timeout: 60                        # optional, seconds of silence before giving up
//!     tool_calls: native                 # optional: text (the XML format, any model; the
//!                                        #   default but for `api: local`) | native (the API's
//!                                        #   own tool calling) | auto (`api: local`'s default:
//!                                        #   what the model's tool-use check found best, else
//!                                        #   its family's own form when its template takes
//!                                        #   tools, else text)
//!     tool_family: hermes                # optional, `api: local`: the form the model writes
//!                                        #   calls in (hermes | llama3 | mistral | lfm2 |
//!                                        #   function-gemma | granite | phi4-mini | unknown);
//!                                        #   read from the model file's template when absent
//!     guided_calls: on                   # optional: on | off. The model's sampler follows a
//!                                        #   grammar of the agent's calls, in either mode (on
//!                                        #   by default for `api: local`; a llama.cpp server
//!                                        #   reads it too, other servers do not)
//!     limits:                            # optional; bounds on what the server may send
//!       max_line_bytes: 1048576          #   one SSE line (default 1 MiB)
//!       max_event_bytes: 4194304         #   one SSE event (default 4 MiB)
//!       max_answer_bytes: 16777216       #   the whole answer (default 16 MiB)
//! ```
//!
//! Loading never fails as a whole: each broken profile becomes a [`ConfigError`] with the file,
//! line and field, and the other profiles still load.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use artifactflow_parser::ToolFamily;

use crate::config_error::{yaml_error, ConfigError};
use crate::limits::StreamLimits;
use crate::yaml;

/// The profiles file name inside the config folder.
pub const FILE: &str = "models.yaml";

/// Seconds of silence (before the answer starts, or between chunks) after which a call fails,
/// when the profile sets no `timeout`.
pub const DEFAULT_IDLE_TIMEOUT_SECS: f64 = 60.0;

/// Which wire protocol a profile speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// OpenAI-compatible chat completions (`POST {base_url}/chat/completions`).
    Openai,
    /// Anthropic Messages (`POST {base_url}/v1/messages`).
    Anthropic,
    /// A GGUF model run on this computer by the app's own llama.cpp runtime: `model` names a
    /// file of the models folder (or is a path to one); no `base_url`, no key.
    Local,
}

/// How a profile's model calls tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum ToolCallMode {
    /// The XML format described in the system prompt, parsed with its repairs: works with
    /// every model and server; the better choice for small local models.
    #[default]
    Text,
    /// The API's own tool calling (OpenAI `tools`/`tool_calls`, Anthropic `tool_use`): the
    /// tools are sent as JSON Schemas. XML calls the model writes in its text still run.
    Native,
    /// Chosen per model (the default of `api: local`): the mode and guidance the model's
    /// tool-use check found best, else the native form when the model's template takes tools
    /// and its family is known, else text. The engine resolves it before each request.
    Auto,
}

impl ToolCallMode {
    /// Its name in `models.yaml`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallMode::Text => "text",
            ToolCallMode::Native => "native",
            ToolCallMode::Auto => "auto",
        }
    }
}

/// An on/off setting of a profile (`on`/`off` in `models.yaml`; `true`/`false` read too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

/// One entry of `models.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct ModelProfile {
    /// Unique name agents refer to.
    pub name: String,
    /// Wire protocol.
    pub api: Api,
    /// Server base URL, without a trailing `/`.
    pub base_url: String,
    /// Model name sent to the server.
    pub model: String,
    /// Secret template for the API key, e.g. `{{OPENAI_API_KEY}}`; `None` sends no key (local
    /// servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Answer token limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens (what one request may hold, answer included);
    /// `None` lets the engine find it (see [`crate::window`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    /// Idle timeout in seconds (see [`DEFAULT_IDLE_TIMEOUT_SECS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// Bounds on what the server may send; [`StreamLimits::default`] when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<StreamLimits>,
    /// How the model calls tools: `text` (the XML format, any model), `native` (the API's
    /// tool calling) or `auto` (chosen per model). `None` is `auto` for `api: local`, `text`
    /// for the others (see [`ModelProfile::tool_call_mode`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<ToolCallMode>,
    /// The form a local model writes its calls in; `None`: read from the model file's chat
    /// template and architecture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_family: Option<ToolFamily>,
    /// Guided tool calls: the request carries a grammar of the agent's calls that the sampler
    /// follows once the model opens a call. `None`: on for `api: local`, off for the others
    /// (see [`ModelProfile::guided_calls`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guided_calls: Option<Switch>,
}

impl ModelProfile {
    /// A profile with the required fields and no options.
    pub fn new(
        name: impl Into<String>,
        api: Api,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        ModelProfile {
            name: name.into(),
            api,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            temperature: None,
            max_tokens: None,
            context_window: None,
            timeout: None,
            limits: None,
            tool_calls: None,
            tool_family: None,
            guided_calls: None,
        }
    }

    /// Does a request carry the grammar of the agent's calls? `guided_calls` when set, else
    /// only for the app's own runtime (`api: local`): other servers ignore the grammar or
    /// refuse a request that has one. In native mode the grammar writes the call as the app's
    /// runtime returns native calls (see the runtime's `template`); a llama.cpp server with a
    /// Hermes-style template reads that form too.
    pub fn guided_calls(&self) -> bool {
        match self.guided_calls {
            Some(s) => s == Switch::On,
            None => self.api == Api::Local,
        }
    }

    /// How its model calls tools, as configured: `tool_calls:`, else `auto` for `api: local`
    /// and `text` for the others. `auto` is resolved per model by the engine.
    pub fn tool_call_mode(&self) -> ToolCallMode {
        self.tool_calls.unwrap_or(match self.api {
            Api::Local => ToolCallMode::Auto,
            Api::Openai | Api::Anthropic => ToolCallMode::Text,
        })
    }

    /// The stream limits in force.
    pub fn limits(&self) -> StreamLimits {
        self.limits.unwrap_or_default()
    }

    /// The secret name in `api_key` (`OPENAI_API_KEY` for `{{OPENAI_API_KEY}}`).
    pub fn api_key_name(&self) -> Option<String> {
        self.api_key.as_deref().and_then(secret_template_name)
    }

    /// How long a call may stay silent. A `timeout` out of range (see [`ModelProfile::check`])
    /// counts as unset here; calls refuse such a profile before using it.
    pub fn idle_timeout(&self) -> Duration {
        self.timeout
            .filter(|t| timeout_in_range(*t))
            .and_then(|t| Duration::try_from_secs_f64(t).ok())
            .unwrap_or(Duration::from_secs_f64(DEFAULT_IDLE_TIMEOUT_SECS))
    }

    /// Are the profile's numbers in range? The loader checks the same ranges; this is for
    /// profiles that did not come through it (the Settings form's "Test connection").
    /// `Err` holds the field and what is wrong with it.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if let Some(t) = self.temperature {
            check_temperature(f64::from(t)).map_err(|m| ("temperature", m))?;
        }
        if let Some(m) = self.max_tokens {
            check_max_tokens(f64::from(m)).map_err(|m| ("max_tokens", m))?;
        }
        if let Some(t) = self.timeout {
            check_timeout(t).map_err(|m| ("timeout", m))?;
        }
        if let Some(w) = self.context_window {
            check_context_window(f64::from(w)).map_err(|m| ("context_window", m))?;
        }
        if let Some((field, value)) = self.limits.and_then(|l| l.too_small()) {
            return Err(("limits", limit_too_small(field, value)));
        }
        Ok(())
    }
}

/// Longest idle timeout, in seconds (a day).
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

fn timeout_in_range(t: f64) -> bool {
    t > 0.0 && t <= MAX_TIMEOUT_SECS
}

fn limit_too_small(field: &str, value: impl std::fmt::Display) -> String {
    format!(
        "`{field}` must be a whole number of bytes from {} to {}; found {value}",
        StreamLimits::MIN_BYTES,
        u32::MAX
    )
}

fn check_temperature(t: f64) -> Result<(), String> {
    if (0.0..=2.0).contains(&t) {
        Ok(())
    } else {
        Err(format!("temperature must be between 0 and 2; found {t}"))
    }
}

fn check_max_tokens(m: f64) -> Result<(), String> {
    if m >= 1.0 && m.fract() == 0.0 && m <= f64::from(u32::MAX) {
        Ok(())
    } else {
        Err(format!(
            "max_tokens must be a whole number of at least 1; found {m}"
        ))
    }
}

/// Smallest context window a profile may declare (tokens).
pub const MIN_CONTEXT_WINDOW: u32 = 512;

fn check_context_window(w: f64) -> Result<(), String> {
    if w >= f64::from(MIN_CONTEXT_WINDOW) && w.fract() == 0.0 && w <= f64::from(u32::MAX) {
        Ok(())
    } else {
        Err(format!(
            "context_window must be a whole number of tokens, at least {MIN_CONTEXT_WINDOW}; found {w}"
        ))
    }
}

fn check_timeout(t: f64) -> Result<(), String> {
    if timeout_in_range(t) {
        Ok(())
    } else {
        Err(format!(
            "timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT_SECS}; found {t}"
        ))
    }
}

/// The name in a value that is exactly one secret template (`{{NAME}}` or `<<NAME>>`).
pub fn secret_template_name(value: &str) -> Option<String> {
    let v = value.trim();
    let inner = v
        .strip_prefix("{{")
        .and_then(|r| r.strip_suffix("}}"))
        .or_else(|| v.strip_prefix("<<").and_then(|r| r.strip_suffix(">>")))?
        .trim();
    crate::util::names::is_valid_secret_name(inner).then(|| inner.to_string())
}

/// Load `config_dir/models.yaml`. A missing file gives no profiles and no errors.
pub fn load_profiles(config_dir: &Path) -> (Vec<ModelProfile>, Vec<ConfigError>) {
    let path = config_dir.join(FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_profiles(&path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), Vec::new()),
        Err(e) => (
            Vec::new(),
            vec![ConfigError {
                file: path,
                line: None,
                field: None,
                message: format!("cannot read file: {e}"),
            }],
        ),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    profiles: Vec<Value>,
}

const FIELDS: [&str; 13] = [
    "name",
    "api",
    "base_url",
    "model",
    "api_key",
    "temperature",
    "max_tokens",
    "context_window",
    "timeout",
    "limits",
    "tool_calls",
    "tool_family",
    "guided_calls",
];

/// Parse the text of a `models.yaml`; `path` is used for error locations only.
pub fn parse_profiles(path: &Path, text: &str) -> (Vec<ModelProfile>, Vec<ConfigError>) {
    let mut errors = Vec::new();
    if text.trim().is_empty() {
        return (Vec::new(), errors);
    }
    let raw: RawFile = match yaml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => return (Vec::new(), vec![yaml_error(path, 1, e)]),
    };
    let items = item_lines(text);
    let mut profiles: Vec<ModelProfile> = Vec::new();
    let mut first_line: BTreeMap<String, Option<u32>> = BTreeMap::new();
    for (i, entry) in raw.profiles.iter().enumerate() {
        let range = items.get(i).copied();
        let locate = |field: Option<String>, message: String| ConfigError {
            file: path.to_path_buf(),
            line: match (&field, range) {
                (Some(f), Some(r)) => field_line(text, r, f).or(Some(r.0 as u32)),
                (None, Some(r)) => Some(r.0 as u32),
                _ => None,
            },
            field: Some(match field {
                Some(f) => format!("profiles[{i}].{f}"),
                None => format!("profiles[{i}]"),
            }),
            message,
        };
        if let Some((field, found)) = range.and_then(|r| special_number(text, r, entry)) {
            errors.push(locate(
                Some(field.into()),
                format!("`{field}` must be a finite number; found {found}"),
            ));
            continue;
        }
        match check_profile(entry) {
            Ok(profile) => {
                if let Some(line) = first_line.get(&profile.name) {
                    let at = line.map_or(String::new(), |l| format!(" (line {l})"));
                    errors.push(locate(
                        Some("name".into()),
                        format!(
                            "profile name `{}` is already used by an earlier profile{at}; names must be unique",
                            profile.name
                        ),
                    ));
                    continue;
                }
                let line = locate(Some("name".into()), String::new()).line;
                first_line.insert(profile.name.clone(), line);
                profiles.push(profile);
            }
            Err((field, message)) => errors.push(locate(field, message)),
        }
    }
    (profiles, errors)
}

type FieldError = (Option<String>, String);

/// The numeric fields of a profile.
const NUMBERS: [&str; 4] = ["temperature", "max_tokens", "context_window", "timeout"];

/// A numeric field written as YAML's `.nan` or `.inf` (which reach [`check_profile`] as "no
/// value", JSON having no such numbers), found by the text of its line: the field and the text.
fn special_number(
    text: &str,
    range: (usize, usize),
    entry: &Value,
) -> Option<(&'static str, String)> {
    NUMBERS.into_iter().find_map(|field| {
        if entry.get(field) != Some(&Value::Null) {
            return None;
        }
        let line = field_line(text, range, field)?;
        let raw = text.lines().nth(line as usize - 1)?;
        let value = raw.split_once(':')?.1.split('#').next()?.trim();
        let bare = value.trim_start_matches(['+', '-']).to_ascii_lowercase();
        matches!(bare.as_str(), ".nan" | ".inf").then(|| (field, value.to_string()))
    })
}

fn check_profile(entry: &Value) -> Result<ModelProfile, FieldError> {
    let Some(map) = entry.as_object() else {
        return Err((
            None,
            "each profile must be a mapping with name, api, base_url and model".into(),
        ));
    };
    if let Some(unknown) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err((
            Some(unknown.clone()),
            format!(
                "unknown field `{unknown}`; a profile has {}",
                FIELDS.join(", ")
            ),
        ));
    }
    let name = required_text(map, "name")?;
    let api = match required_text(map, "api")?.as_str() {
        "openai" => Api::Openai,
        "anthropic" => Api::Anthropic,
        "local" => Api::Local,
        other => {
            return Err((
                Some("api".into()),
                format!(
                "unknown api `{other}`; use `openai` (any OpenAI-compatible server), `anthropic`, or \
                 `local` (a model file run on this computer)"
            ),
            ))
        }
    };
    // A local model is run by the app itself: it has no server to name.
    let base_url = if api == Api::Local {
        String::new()
    } else {
        let base_url = required_text(map, "base_url")?
            .trim()
            .trim_end_matches('/')
            .to_string();
        match reqwest::Url::parse(&base_url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {}
            _ => {
                return Err((
                    Some("base_url".into()),
                    format!("`{base_url}` is not a full http:// or https:// URL"),
                ))
            }
        }
        base_url
    };
    let model = required_text(map, "model")?;
    let api_key = match map.get("api_key") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if secret_template_name(s).is_some() => Some(s.trim().to_string()),
        Some(_) => {
            // Never repeat the value: it may be a real key.
            return Err((
                Some("api_key".into()),
                "`api_key` must name a secret, not hold the key: store the key as a secret \
                 (Settings → Secrets, or `artifactflow-cli secrets set OPENAI_API_KEY`) and \
                 write its name here as \"{{OPENAI_API_KEY}}\""
                    .into(),
            ));
        }
    };
    let temperature = optional_number(map, "temperature")?;
    if let Some(t) = temperature {
        check_temperature(t).map_err(|m| (Some("temperature".into()), m))?;
    }
    let max_tokens = optional_number(map, "max_tokens")?;
    if let Some(m) = max_tokens {
        check_max_tokens(m).map_err(|m| (Some("max_tokens".into()), m))?;
    }
    let context_window = optional_number(map, "context_window")?;
    if let Some(w) = context_window {
        check_context_window(w).map_err(|m| (Some("context_window".into()), m))?;
    }
    let timeout = optional_number(map, "timeout")?;
    if let Some(t) = timeout {
        check_timeout(t).map_err(|m| (Some("timeout".into()), m))?;
    }
    let limits = match map.get("limits") {
        None | Some(Value::Null) => None,
        Some(value) => Some(check_limits(value)?),
    };
    let tool_calls = match map.get("tool_calls") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim() == "text" => Some(ToolCallMode::Text),
        Some(Value::String(s)) if s.trim() == "native" => Some(ToolCallMode::Native),
        Some(Value::String(s)) if s.trim() == "auto" => Some(ToolCallMode::Auto),
        Some(other) => {
            return Err((
                Some("tool_calls".into()),
                format!(
                    "`tool_calls` must be `text` (the XML format, any model), `native` (the \
                     API's tool calling) or `auto` (chosen per model); found {}",
                    match other {
                        Value::String(s) => format!("`{s}`"),
                        other => kind(other).to_string(),
                    }
                ),
            ))
        }
    };
    let tool_family = match map.get("tool_family") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            serde_json::from_value::<ToolFamily>(value.clone()).map_err(|_| {
                let names: Vec<&str> = ToolFamily::ALL.iter().map(|f| f.as_str()).collect();
                (
                    Some("tool_family".into()),
                    format!(
                        "`tool_family` must be one of {}; found {}",
                        names.join(", "),
                        match value {
                            Value::String(s) => format!("`{s}`"),
                            other => kind(other).to_string(),
                        }
                    ),
                )
            })?,
        ),
    };
    let guided_calls = match map.get("guided_calls") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(if *b { Switch::On } else { Switch::Off }),
        Some(Value::String(s)) if matches!(s.trim(), "on" | "true") => Some(Switch::On),
        Some(Value::String(s)) if matches!(s.trim(), "off" | "false") => Some(Switch::Off),
        Some(other) => {
            return Err((
                Some("guided_calls".into()),
                format!(
                    "`guided_calls` must be `on` or `off`; found {}",
                    match other {
                        Value::String(s) => format!("`{s}`"),
                        other => kind(other).to_string(),
                    }
                ),
            ))
        }
    };
    Ok(ModelProfile {
        name,
        api,
        base_url,
        model,
        api_key,
        temperature: temperature.map(|t| t as f32),
        max_tokens: max_tokens.map(|m| m as u32),
        context_window: context_window.map(|w| w as u32),
        timeout,
        limits,
        tool_calls,
        tool_family,
        guided_calls,
    })
}

/// The `limits:` mapping: known fields only, each a whole number of bytes in range.
fn check_limits(value: &Value) -> Result<StreamLimits, FieldError> {
    let fields = StreamLimits::FIELDS.join(", ");
    let Some(map) = value.as_object() else {
        return Err((
            Some("limits".into()),
            format!("`limits` must be a mapping with any of {fields}"),
        ));
    };
    let mut limits = StreamLimits::default();
    for (key, value) in map {
        let err = |message: String| (Some("limits".into()), message);
        if !StreamLimits::FIELDS.contains(&key.as_str()) {
            return Err(err(format!(
                "unknown field `limits.{key}`; limits has {fields}"
            )));
        }
        let Some(n) = value.as_f64() else {
            return Err(err(format!(
                "`{key}` must be a whole number of bytes; found {}",
                kind(value)
            )));
        };
        let in_range =
            n.fract() == 0.0 && n >= f64::from(StreamLimits::MIN_BYTES) && n <= f64::from(u32::MAX);
        if !in_range {
            return Err(err(limit_too_small(key, n)));
        }
        limits.set(key, n as u32);
    }
    Ok(limits)
}

fn required_text(map: &Map<String, Value>, field: &'static str) -> Result<String, FieldError> {
    match map.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        Some(Value::String(_)) => Err((Some(field.into()), format!("`{field}` must not be empty"))),
        Some(Value::Null) | None => Err((None, format!("missing field `{field}`"))),
        Some(other) => Err((
            Some(field.into()),
            format!("`{field}` must be text; found {}", kind(other)),
        )),
    }
}

fn optional_number(
    map: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<f64>, FieldError> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(other) => Err((
            Some(field.into()),
            format!("`{field}` must be a number; found {}", kind(other)),
        )),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The 1-based line ranges `[start, end)` of the items of the top-level `profiles:` list.
fn item_lines(text: &str) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|l| l.trim_end().starts_with("profiles:"))
    else {
        return Vec::new();
    };
    let mut starts = Vec::new();
    let mut indent = None;
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let this = line.len() - trimmed.len();
        if this == 0 && !trimmed.starts_with('-') {
            end = i;
            break;
        }
        if trimmed.starts_with('-') && indent.is_none_or(|n| n == this) {
            indent = Some(this);
            starts.push(i);
        }
    }
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| (s + 1, starts.get(k + 1).copied().unwrap_or(end) + 1))
        .collect()
}

/// The 1-based line of `field:` within an item's line range.
fn field_line(text: &str, (start, end): (usize, usize), field: &str) -> Option<u32> {
    text.lines()
        .enumerate()
        .skip(start - 1)
        .take(end - start)
        .find(|(_, l)| {
            let l = l.trim_start().trim_start_matches('-').trim_start();
            l.strip_prefix(field)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|(i, _)| i as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Vec<ModelProfile>, Vec<ConfigError>) {
        parse_profiles(Path::new("models.yaml"), text)
    }

    #[test]
    fn bundled_profiles_load_without_errors() {
        let (profiles, errors) =
            load_profiles(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config"));
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<_> = profiles.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["default", "local", "claude"]);
        assert_eq!(
            profiles[0].api_key_name().as_deref(),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(profiles[1].api_key, None);
        assert_eq!(profiles[2].api, Api::Anthropic);
        assert_eq!(profiles[2].max_tokens, Some(8192));
    }

    #[test]
    fn a_local_profile_needs_no_server_and_calls_tools_in_either_mode() {
        let text = "profiles:\n  - name: here\n    api: local\n    model: smollm2-135m\n";
        let (profiles, errors) = parse_profiles(Path::new("models.yaml"), text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(profiles[0].api, Api::Local);
        assert_eq!(profiles[0].base_url, "");
        assert_eq!(profiles[0].model, "smollm2-135m");
        // Chosen per model unless the profile says.
        assert_eq!(profiles[0].tool_call_mode(), ToolCallMode::Auto);
        assert_eq!(profiles[0].tool_family, None);
        let native = format!("{text}    tool_calls: native\n");
        let (profiles, errors) = parse_profiles(Path::new("models.yaml"), &native);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(profiles[0].tool_call_mode(), ToolCallMode::Native);
        let (_, errors) = parse_profiles(
            Path::new("models.yaml"),
            "profiles:\n  - name: x\n    api: lokal\n    model: m\n",
        );
        assert!(errors[0].message.contains("`local`"), "{errors:?}");
        let auto = format!("{text}    tool_calls: auto\n    tool_family: phi4-mini\n");
        let (profiles, errors) = parse_profiles(Path::new("models.yaml"), &auto);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(profiles[0].tool_call_mode(), ToolCallMode::Auto);
        assert_eq!(profiles[0].tool_family, Some(ToolFamily::Phi4Mini));
        let (_, errors) = parse_profiles(
            Path::new("models.yaml"),
            &format!("{text}    tool_family: qwen\n"),
        );
        assert_eq!(
            errors[0].field.as_deref(),
            Some("profiles[0].tool_family"),
            "{errors:?}"
        );
        for says in ["`qwen`", "hermes", "phi4-mini"] {
            assert!(errors[0].message.contains(says), "{says}: {errors:?}");
        }
        // Profiles of servers stay in the text format unless they say.
        let server = "profiles:\n  - name: s\n    api: openai\n    base_url: http://127.0.0.1:1/v1\n    model: m\n";
        let (profiles, errors) = parse_profiles(Path::new("models.yaml"), server);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(profiles[0].tool_call_mode(), ToolCallMode::Text);
    }

    #[test]
    fn guided_calls_are_on_for_the_local_runtime_unless_turned_off() {
        let local = "profiles:\n  - name: here\n    api: local\n    model: m\n";
        let server =
            "profiles:\n  - name: s\n    api: openai\n    base_url: http://h/v1\n    model: m\n";
        let guided = |text: &str| {
            let (profiles, errors) = parse(text);
            assert!(errors.is_empty(), "{errors:?}");
            profiles[0].guided_calls()
        };
        assert!(guided(local));
        assert!(!guided(server));
        for (value, on) in [
            ("off", false),
            ("false", false),
            ("on", true),
            ("true", true),
        ] {
            assert_eq!(
                guided(&format!("{local}    guided_calls: {value}\n")),
                on,
                "{value}"
            );
            assert_eq!(
                guided(&format!("{server}    guided_calls: {value}\n")),
                on,
                "{value}"
            );
        }
        // Native calls too: by default on the app's runtime, elsewhere when asked for.
        assert!(!guided(&format!("{server}    tool_calls: native\n")));
        assert!(guided(&format!(
            "{server}    guided_calls: on\n    tool_calls: native\n"
        )));
        assert!(guided(&format!("{local}    tool_calls: native\n")));
        assert!(!guided(&format!(
            "{local}    tool_calls: native\n    guided_calls: off\n"
        )));
        let (_, errors) = parse(&format!("{local}    guided_calls: maybe\n"));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].field.as_deref(), Some("profiles[0].guided_calls"));
        assert!(errors[0].message.contains("`on` or `off`"), "{errors:?}");
        assert_eq!(errors[0].line, Some(5), "{errors:?}");
    }

    #[test]
    fn reads_every_field_and_trims_the_base_url() {
        let (profiles, errors) = parse(
            "profiles:\n  - name: a\n    api: openai\n    base_url: http://h:1/v1/\n    model: m\n    api_key: '<<K>>'\n    temperature: 0.5\n    max_tokens: 100\n    timeout: 0.5\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let p = &profiles[0];
        assert_eq!(p.base_url, "http://h:1/v1");
        assert_eq!(p.api_key_name().as_deref(), Some("K"));
        assert_eq!(p.temperature, Some(0.5));
        assert_eq!(p.max_tokens, Some(100));
        assert_eq!(p.idle_timeout(), Duration::from_millis(500));
    }

    #[test]
    fn clear_api_key_is_rejected_without_repeating_it() {
        let (profiles, errors) = parse(
            "profiles:\n  - name: ok\n    api: openai\n    base_url: http://h/v1\n    model: m\n  - name: leak\n    api: openai\n    base_url: http://h/v1\n    model: m\n    api_key: sk-live-123456\n",
        );
        assert_eq!(profiles.len(), 1);
        let e = &errors[0];
        assert_eq!(e.line, Some(10));
        assert_eq!(e.field.as_deref(), Some("profiles[1].api_key"));
        assert!(e.message.contains("secret"), "{e}");
        assert!(!e.to_string().contains("sk-live"), "{e}");
    }

    #[test]
    fn located_errors_for_each_problem() {
        let text = "\
profiles:
  - name: a
    api: gemini
    base_url: http://h/v1
    model: m
  - name: b
    api: openai
    base_url: ftp://h
    model: m
  - name: c
    api: openai
    base_url: http://h/v1
    model: m
  - name: c
    api: anthropic
    base_url: http://h
    model: m
  - name: d
    api: openai
    base_url: http://h/v1
  - name: e
    api: openai
    base_url: http://h/v1
    model: m
    temprature: 1
  - name: f
    api: openai
    base_url: http://h/v1
    model: m
    max_tokens: many
";
        let (profiles, errors) = parse(text);
        assert_eq!(profiles.len(), 1, "{profiles:?}");
        let got: Vec<_> = errors
            .iter()
            .map(|e| (e.line, e.field.clone().unwrap_or_default()))
            .collect();
        assert_eq!(
            got,
            [
                (Some(3), "profiles[0].api".to_string()),
                (Some(8), "profiles[1].base_url".to_string()),
                (Some(14), "profiles[3].name".to_string()),
                (Some(18), "profiles[4]".to_string()),
                (Some(25), "profiles[5].temprature".to_string()),
                (Some(30), "profiles[6].max_tokens".to_string()),
            ]
        );
        assert!(errors[0].message.contains("gemini"));
        assert!(errors[2].message.contains("line 10"), "{}", errors[2]);
        assert!(errors[3].message.contains("missing field `model`"));
        assert!(errors[4].message.contains("temprature"));
    }

    #[test]
    fn limits_are_read_and_checked_with_a_location() {
        let base =
            "profiles:\n  - name: a\n    api: openai\n    base_url: http://h/v1\n    model: m\n";
        let (profiles, errors) = parse(&format!("{base}    limits:\n      max_line_bytes: 2048\n"));
        assert!(errors.is_empty(), "{errors:?}");
        let limits = profiles[0].limits();
        assert_eq!(limits.max_line_bytes, 2048);
        assert_eq!(
            limits.max_answer_bytes,
            StreamLimits::default().max_answer_bytes
        );
        assert_eq!(
            ModelProfile::new("b", Api::Openai, "http://h", "m").limits(),
            StreamLimits::default()
        );
        for (bad, needle) in [
            ("max_line_bytes: 10", "from 1024"),
            ("max_event_bytes: 1.5e12", "from 1024"),
            ("max_answer_bytes: lots", "whole number of bytes"),
            ("max_lines: 4096", "unknown field `limits.max_lines`"),
        ] {
            let (profiles, errors) = parse(&format!("{base}    limits:\n      {bad}\n"));
            assert!(profiles.is_empty(), "{bad}");
            assert_eq!(errors[0].line, Some(6), "{bad}");
            assert_eq!(errors[0].field.as_deref(), Some("profiles[0].limits"));
            assert!(errors[0].message.contains(needle), "{bad}: {}", errors[0]);
        }
    }

    #[test]
    fn yaml_syntax_error_and_missing_file() {
        let (_, errors) = parse("profiles:\n  - name: [a\n");
        assert!(errors[0].line.is_some(), "{errors:?}");
        let tmp = tempfile::tempdir().unwrap();
        let (profiles, errors) = load_profiles(tmp.path());
        assert!(profiles.is_empty() && errors.is_empty());
    }
}
