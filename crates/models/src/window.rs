//! A profile's context window: how many tokens one request may hold (prompt and answer).
//!
//! The run loop budgets every request against it (see the run module's context budget).
//! Where the size comes from, first found wins:
//!
//! 1. the profile's `context_window` field (models.yaml, editable in Settings);
//! 2. the server, when it says (see `window_server`: llama.cpp `/props`, Ollama `/api/show`,
//!    a `/models` entry carrying it), asked once per profile per process by [`resolve`];
//! 3. a default for a known model name ([`known_model`]);
//! 4. [`DEFAULT_CONTEXT_WINDOW`].
//!
//! [`context_window`] is what is known without asking (1, 3, 4); [`resolve`] asks the server
//! too; [`discover`] is Settings' "what the engine would use if the field were empty".

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::profiles::{Api, ModelProfile};
use super::window_server::{self, ServerAnswer};
use crate::secrets::{Redactor, SecretResolver};

/// The window assumed when nothing else says: small enough for the local setups this app is
/// for (Ollama's default context is 2,048–4,096 tokens; llama.cpp servers often run 4,096+),
/// so a request that fits it fits almost every server.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 4096;

/// How long a failed discovery (server unreachable, key refused, server error) is remembered
/// before the server is asked again: long enough that a run does not ask before every request,
/// short enough that a local server started later is found by a later run. A server that
/// answered (with a window or without one) is remembered for the whole process.
pub const RETRY_FAILED_DISCOVERY_AFTER: Duration = Duration::from_secs(300);

/// Where a window size came from (shown beside it in Settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum WindowSource {
    /// The profile's `context_window` field.
    Profile,
    /// The server said (llama.cpp `/props`, Ollama `/api/show`, a `/models` entry).
    Server,
    /// A default for a known model name.
    KnownModel,
    /// [`DEFAULT_CONTEXT_WINDOW`].
    Default,
}

/// A context window and where its size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ContextWindow {
    /// Tokens one request may hold, answer included.
    pub tokens: u32,
    /// Where that number came from.
    pub source: WindowSource,
}

/// `profile`'s context window from what is known without asking its server: its
/// `context_window` field, else a known model's default, else [`DEFAULT_CONTEXT_WINDOW`].
pub fn context_window(profile: &ModelProfile) -> ContextWindow {
    match profile.context_window {
        Some(tokens) => ContextWindow {
            tokens,
            source: WindowSource::Profile,
        },
        None => without_server(&profile.model),
    }
}

/// A known model's default, else [`DEFAULT_CONTEXT_WINDOW`].
fn without_server(model: &str) -> ContextWindow {
    match known_model(model) {
        Some(known) if known.applies() => ContextWindow {
            tokens: known.tokens,
            source: WindowSource::KnownModel,
        },
        _ => ContextWindow {
            tokens: DEFAULT_CONTEXT_WINDOW,
            source: WindowSource::Default,
        },
    }
}

/// A family of models and its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// The family as written in [`KNOWN_MODELS`] (e.g. `gpt-4o`).
    pub family: &'static str,
    /// Its window in tokens.
    pub tokens: u32,
    /// Open weights: run by local servers with whatever context they were started with.
    pub open_weights: bool,
}

impl KnownModel {
    /// Is the family's window used? A hosted model's always is. An open-weights model runs
    /// with the context its server was started with (llama-cpp-python's default is 2,048,
    /// Ollama's 4,096), not the one it was trained with, so its window only ever lowers the
    /// default (a model trained on 2,048 tokens cannot use more), never raises it.
    pub fn applies(&self) -> bool {
        !self.open_weights || self.tokens < DEFAULT_CONTEXT_WINDOW
    }
}

/// Known model families: `(name prefix, window in tokens, open weights)`. A model name
/// matches the longest prefix, compared without case, `-`, `_`, spaces or a `provider/`
/// prefix (`openai/gpt-4o-mini`, `Qwen/Qwen2.5-7B-Instruct`, `llama3.2:3b` all match).
///
/// The numbers are the providers' documented windows, rounded down where a model's versions
/// differ: GPT-5's is its input limit (272,000 of 400,000), DeepSeek's the 64K its API long
/// served. Open-weights entries are the trained contexts (see [`KnownModel::applies`]).
pub const KNOWN_MODELS: &[(&str, u32, bool)] = &[
    // OpenAI.
    ("gpt-5", 272_000, false),
    ("gpt-4.1", 1_000_000, false),
    ("gpt-4o", 128_000, false),
    ("gpt-4-turbo", 128_000, false),
    ("gpt-4", 8_192, false),
    ("gpt-3.5-turbo", 16_385, false),
    ("o1", 200_000, false),
    ("o1-mini", 128_000, false),
    ("o3", 200_000, false),
    ("o4-mini", 200_000, false),
    ("chatgpt-4o", 128_000, false),
    // Anthropic.
    ("claude", 200_000, false),
    ("claude-2", 100_000, false),
    ("claude-instant", 100_000, false),
    // DeepSeek's API.
    ("deepseek-chat", 64_000, false),
    ("deepseek-reasoner", 64_000, false),
    // Open weights (trained contexts).
    ("qwen2.5", 32_768, true),
    ("qwen3", 32_768, true),
    ("qwen2", 32_768, true),
    ("llama3.1", 131_072, true),
    ("llama3.2", 131_072, true),
    ("llama3.3", 131_072, true),
    ("llama3", 8_192, true),
    ("llama2", 4_096, true),
    ("mistral", 32_768, true),
    ("mixtral", 32_768, true),
    ("gemma3", 131_072, true),
    ("gemma2", 8_192, true),
    ("gemma", 8_192, true),
    ("phi4", 16_384, true),
    ("phi3", 4_096, true),
    ("phi-2", 2_048, true),
    ("smollm2", 8_192, true),
    ("smollm", 2_048, true),
    ("tinyllama", 2_048, true),
    ("deepseek-r1", 131_072, true),
];

/// The name as compared: lower case, without a `provider/` prefix, `-`, `_` or spaces.
fn normalize(name: &str) -> String {
    let name = name.rsplit('/').next().unwrap_or(name);
    name.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The known family `model` belongs to (longest matching prefix), if any.
pub fn known_model(model: &str) -> Option<KnownModel> {
    let name = normalize(model);
    KNOWN_MODELS
        .iter()
        .filter(|(family, _, _)| name.starts_with(&normalize(family)))
        .max_by_key(|(family, _, _)| normalize(family).len())
        .map(|&(family, tokens, open_weights)| KnownModel {
            family,
            tokens,
            open_weights,
        })
}

/// What the server said, remembered per (api, base URL, model).
#[derive(Debug, Clone)]
struct Remembered {
    /// The window the server reported, if it did.
    tokens: Option<u32>,
    /// When to ask again (`None`: never in this process).
    ask_again: Option<Instant>,
}

type Slot = Arc<tokio::sync::Mutex<Option<Remembered>>>;
/// (api, base URL without a trailing `/`, model).
type DiscoveryKey = (String, String, String);

/// Discoveries of this process. Each key has its own async lock, so concurrent runs of one
/// profile wait for a single discovery instead of each asking.
static DISCOVERED: LazyLock<Mutex<HashMap<DiscoveryKey, Slot>>> = LazyLock::new(Mutex::default);

fn slot(profile: &ModelProfile) -> Slot {
    let api = match profile.api {
        Api::Openai => "openai",
        Api::Anthropic => "anthropic",
        Api::Local => "local",
    };
    let key = (
        api.to_string(),
        profile.base_url.trim_end_matches('/').to_string(),
        profile.model.clone(),
    );
    let mut map = DISCOVERED.lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(map.entry(key).or_default())
}

/// `profile`'s context window for a run: its `context_window` field, else what its server
/// reports (asked once per (api, base URL, model) per process; see
/// [`RETRY_FAILED_DISCOVERY_AFTER`] for failures), else a known model's default, else
/// [`DEFAULT_CONTEXT_WINDOW`]. Never fails and never waits longer than a few short requests.
pub async fn resolve(profile: &ModelProfile, secrets: Arc<SecretResolver>) -> ContextWindow {
    if profile.context_window.is_some() {
        return context_window(profile);
    }
    let slot = slot(profile);
    let mut remembered = slot.lock().await;
    let fresh = remembered
        .as_ref()
        .filter(|r| r.ask_again.is_none_or(|at| Instant::now() < at));
    let tokens = match fresh {
        Some(r) => r.tokens,
        None => {
            // A key that is not set yet: ask without one (local servers need none).
            let key = super::discover::request_key(profile, None, &secrets)
                .await
                .unwrap_or(None);
            let answer = window_server::ask(profile, key.as_deref()).await;
            let r = match answer {
                ServerAnswer::Window { tokens, .. } => Remembered {
                    tokens: Some(tokens),
                    ask_again: None,
                },
                ServerAnswer::Silent => Remembered {
                    tokens: None,
                    ask_again: None,
                },
                ServerAnswer::Failed(_) => Remembered {
                    tokens: None,
                    ask_again: Some(Instant::now() + RETRY_FAILED_DISCOVERY_AFTER),
                },
            };
            *remembered = Some(r.clone());
            r.tokens
        }
    };
    match tokens {
        Some(tokens) => ContextWindow {
            tokens,
            source: WindowSource::Server,
        },
        None => without_server(&profile.model),
    }
}

/// What the engine would use for a profile whose `context_window` field is empty, for
/// Settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WindowHint {
    /// Tokens.
    pub tokens: u32,
    /// Where they come from (never `profile`).
    pub source: WindowSource,
    /// For `server`, the route and field that said it; for `known_model`, the family; for
    /// `default`, what the model was trained with when it is known.
    pub detail: Option<String>,
    /// Why the server could not be asked, when it could not (no secret in it).
    pub note: Option<String>,
}

/// Ask `profile`'s server now (not remembered; the form may have changed the URL) and say
/// what the engine would use if the profile's `context_window` field were empty. `key` is a
/// key typed into the form and not saved yet; without it the profile's own key is resolved.
pub async fn discover(
    profile: &ModelProfile,
    key: Option<String>,
    secrets: Arc<SecretResolver>,
) -> WindowHint {
    let (key, mut note) = match super::discover::request_key(profile, key, &secrets).await {
        Ok(key) => (key, None),
        Err(()) => (
            None,
            Some("The API key is not set yet; the server was asked without it.".to_string()),
        ),
    };
    let redactor = Redactor::new(key.clone());
    match window_server::ask(profile, key.as_deref()).await {
        ServerAnswer::Window { tokens, from } => {
            return WindowHint {
                tokens,
                source: WindowSource::Server,
                detail: Some(redactor.redact(&from)),
                note: None,
            }
        }
        ServerAnswer::Silent => {}
        ServerAnswer::Failed(why) => {
            note = Some(redactor.redact(&format!(
                "Could not ask the server at {} ({why}).",
                window_server::root_url(&profile.base_url)
            )));
        }
    }
    let known = known_model(&profile.model);
    let window = without_server(&profile.model);
    let detail = known.map(|k| match window.source {
        WindowSource::KnownModel => k.family.to_string(),
        _ => format!("{} was trained with {} tokens", k.family, k.tokens),
    });
    WindowHint {
        tokens: window.tokens,
        source: window.source,
        detail,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names_match_without_case_or_provider_and_open_weights_only_lower_the_default() {
        let family = |m: &str| known_model(m).map(|k| k.family);
        assert_eq!(family("gpt-4o-mini"), Some("gpt-4o"));
        assert_eq!(family("openai/GPT-4.1-nano"), Some("gpt-4.1"));
        assert_eq!(family("gpt-4-0613"), Some("gpt-4"));
        assert_eq!(family("o1-mini-2024-09-12"), Some("o1-mini"));
        assert_eq!(family("claude-sonnet-4-5"), Some("claude"));
        assert_eq!(family("Qwen/Qwen2.5-7B-Instruct"), Some("qwen2.5"));
        assert_eq!(family("llama3.2:3b"), Some("llama3.2"));
        assert_eq!(family("meta-llama/Llama-3.1-8B-Instruct"), Some("llama3.1"));
        assert_eq!(family("SmolLM2-135M-Instruct"), Some("smollm2"));
        assert_eq!(family("scripted"), None);
        let at = |m: &str| context_window(&ModelProfile::new("p", Api::Openai, "http://h/v1", m));
        assert_eq!(
            at("gpt-4o"),
            ContextWindow {
                tokens: 128_000,
                source: WindowSource::KnownModel
            }
        );
        // A local model's trained 131,072 tokens are not what its server runs.
        assert_eq!(
            at("llama3.1:8b"),
            ContextWindow {
                tokens: DEFAULT_CONTEXT_WINDOW,
                source: WindowSource::Default
            }
        );
        // But a model trained on less lowers the default.
        assert_eq!(
            at("TinyLlama-1.1B-Chat"),
            ContextWindow {
                tokens: 2048,
                source: WindowSource::KnownModel
            }
        );
    }

    #[test]
    fn the_profile_field_wins_over_the_default() {
        let mut profile = ModelProfile::new("p", Api::Openai, "http://127.0.0.1:1/v1", "m");
        assert_eq!(
            context_window(&profile),
            ContextWindow {
                tokens: DEFAULT_CONTEXT_WINDOW,
                source: WindowSource::Default
            }
        );
        profile.context_window = Some(6000);
        assert_eq!(
            context_window(&profile),
            ContextWindow {
                tokens: 6000,
                source: WindowSource::Profile
            }
        );
    }

    #[test]
    fn models_yaml_reads_the_field_and_refuses_a_tiny_window_with_its_line() {
        let path = std::path::Path::new("models.yaml");
        let base = "profiles:\n  - name: local\n    api: openai\n    base_url: http://127.0.0.1:8080/v1\n    model: m\n";
        let (profiles, errors) =
            crate::parse_profiles(path, &format!("{base}    context_window: 2048\n"));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(profiles[0].context_window, Some(2048));

        let (profiles, errors) =
            crate::parse_profiles(path, &format!("{base}    context_window: 100\n"));
        assert!(profiles.is_empty());
        assert_eq!(errors[0].line, Some(6), "{errors:?}");
        assert_eq!(
            errors[0].field.as_deref(),
            Some("profiles[0].context_window")
        );
        assert!(
            errors[0].message.contains("at least 512"),
            "{}",
            errors[0].message
        );
    }
}
