//! A profile's context window: how many tokens one request may hold (prompt and answer).
//!
//! The run loop budgets every request against it (see the run module's context budget).
//! Today the window comes from the profile's `context_window` field, else a conservative
//! default; discovery from the server and defaults for known model names build on
//! [`context_window`].

use serde::{Deserialize, Serialize};

use super::profiles::ModelProfile;

/// The window assumed when nothing else says: small enough for the local setups this app is
/// for (Ollama's default context is 2,048–4,096 tokens; llama.cpp servers often run 4,096+),
/// so a request that fits it fits almost every server.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 4096;

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

/// `profile`'s context window: its `context_window` field, else the default.
pub fn context_window(profile: &ModelProfile) -> ContextWindow {
    match profile.context_window {
        Some(tokens) => ContextWindow {
            tokens,
            source: WindowSource::Profile,
        },
        None => ContextWindow {
            tokens: DEFAULT_CONTEXT_WINDOW,
            source: WindowSource::Default,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::Api;

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
            crate::models::parse_profiles(path, &format!("{base}    context_window: 2048\n"));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(profiles[0].context_window, Some(2048));

        let (profiles, errors) =
            crate::models::parse_profiles(path, &format!("{base}    context_window: 100\n"));
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
