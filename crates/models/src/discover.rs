//! Which models a profile's server offers, from its model list (`GET {base_url}/models` for
//! OpenAI-compatible servers: OpenAI, DeepSeek, Ollama, LM Studio, llama.cpp, vLLM, OpenRouter;
//! `GET {base_url}/v1/models` for Anthropic), so the profile form and first-run setup can offer
//! a picker. A server without the list, or one that fails, leaves free text with a short note.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::profiles::{Api, ModelProfile};
use crate::secrets::{Redactor, SecretResolver};

/// How long the list may take (it is a convenience: the form stays usable without it).
const TIMEOUT: Duration = Duration::from_secs(10);
/// Largest model list read.
const MAX_BYTES: usize = 4 * 1024 * 1024;

/// The models a server offers, or why there is no list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelList {
    /// Model names, sorted, without duplicates (empty when there is no list).
    pub models: Vec<String>,
    /// Why there is no list, in a short sentence that says to type the name instead.
    pub note: Option<String>,
}

impl ModelList {
    fn note(text: String) -> Self {
        ModelList {
            models: Vec::new(),
            note: Some(format!("{text} Type the model name.")),
        }
    }
}

/// The model list's URL for `profile`.
fn list_url(profile: &ModelProfile) -> String {
    let base = profile.base_url.trim_end_matches('/');
    match profile.api {
        Api::Openai | Api::Local => format!("{base}/models"),
        Api::Anthropic => format!("{base}/v1/models"),
    }
}

/// Ask `profile`'s server for its models. `key` is a key typed into the form and not saved
/// yet (used for this request only); without it, the profile's own `api_key` template is
/// resolved like a chat call does. Never fails: problems come back as the list's note, with
/// any secret value masked.
pub async fn list_models(
    profile: &ModelProfile,
    key: Option<String>,
    secrets: Arc<SecretResolver>,
) -> ModelList {
    if profile.api == Api::Local {
        return ModelList::note(
            "A local model is a GGUF file of the models folder (or a path to one).".into(),
        );
    }
    let Ok(key) = request_key(profile, key, &secrets).await else {
        return ModelList::note(
            "The API key is not set yet, so the server's models cannot be listed.".into(),
        );
    };
    let redactor = Redactor::new(key.clone());
    let url = list_url(profile);
    match fetch(&url, profile.api, key.as_deref()).await {
        Ok(models) if models.is_empty() => {
            ModelList::note(format!("The server at {url} lists no models."))
        }
        Ok(models) => ModelList { models, note: None },
        Err(why) => ModelList::note(redactor.redact(&format!(
            "Could not list the server's models ({url}: {why})."
        ))),
    }
}

/// The key for a discovery request: `key` typed into the form (not saved yet), else the
/// profile's own `api_key` template resolved like a chat call does; `Ok(None)` for a profile
/// without a key, `Err(())` when its secret is not set yet.
pub(super) async fn request_key(
    profile: &ModelProfile,
    key: Option<String>,
    secrets: &Arc<SecretResolver>,
) -> Result<Option<String>, ()> {
    if let Some(k) = key.filter(|k| !k.trim().is_empty()) {
        return Ok(Some(k));
    }
    let Some(template) = &profile.api_key else {
        return Ok(None);
    };
    let filled = secrets
        .fill_async(vec![template.clone()])
        .await
        .pop()
        .unwrap_or_default();
    if !filled.unresolved.is_empty() || filled.text.trim().is_empty() {
        return Err(());
    }
    Ok(Some(filled.text))
}

/// `GET url` and read `{"data": [{"id": …}, …]}` (OpenAI and Anthropic both answer so;
/// Ollama's native `{"models": [{"name": …}]}` is read too).
async fn fetch(url: &str, api: Api, key: Option<&str>) -> Result<Vec<String>, String> {
    let client = crate::net::client_builder(crate::net::Secrets::Carried)
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    let mut request = client.get(url);
    if let Some(key) = key {
        request = match api {
            Api::Openai | Api::Local => request.bearer_auth(key),
            Api::Anthropic => request.header("x-api-key", key),
        };
    }
    if api == Api::Anthropic {
        request = request.header("anthropic-version", super::ANTHROPIC_VERSION);
    }
    let response = request.send().await.map_err(|e| {
        if e.is_timeout() {
            format!("no answer within {} s", TIMEOUT.as_secs())
        } else if e.is_connect() {
            "cannot connect".to_string()
        } else {
            e.to_string()
        }
    })?;
    let status = response.status();
    if !status.is_success() {
        return Err(match status.as_u16() {
            401 | 403 => format!("HTTP {status}: check the API key"),
            404 | 405 => format!("HTTP {status}: this server has no model list"),
            _ => format!("HTTP {status}"),
        });
    }
    let body = response.bytes().await.map_err(|e| e.to_string())?;
    if body.len() > MAX_BYTES {
        return Err("the list is too large".into());
    }
    parse(&body).ok_or_else(|| "the answer is not a model list".to_string())
}

/// The model names in a list answer, sorted, deduplicated.
fn parse(body: &[u8]) -> Option<Vec<String>> {
    #[derive(Deserialize)]
    struct Entry {
        #[serde(alias = "name", alias = "model")]
        id: String,
    }
    #[derive(Deserialize)]
    struct List {
        #[serde(alias = "models")]
        data: Vec<Entry>,
    }
    let list: List = serde_json::from_slice(body).ok()?;
    let mut names: Vec<String> = list
        .data
        .into_iter()
        .map(|e| e.id.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    names.sort();
    names.dedup();
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_openai_and_ollama_lists() {
        let openai =
            br#"{"object":"list","data":[{"id":"b","object":"model"},{"id":"a"},{"id":"a"}]}"#;
        assert_eq!(parse(openai).unwrap(), ["a", "b"]);
        let ollama = br#"{"models":[{"name":"llama3.2:latest"}]}"#;
        assert_eq!(parse(ollama).unwrap(), ["llama3.2:latest"]);
        assert!(parse(b"<html>").is_none());
    }

    #[test]
    fn the_list_url_follows_the_dialect() {
        let p = ModelProfile::new("p", Api::Openai, "http://127.0.0.1:1234/v1/", "m");
        assert_eq!(list_url(&p), "http://127.0.0.1:1234/v1/models");
        let p = ModelProfile::new("p", Api::Anthropic, "https://api.anthropic.com", "m");
        assert_eq!(list_url(&p), "https://api.anthropic.com/v1/models");
    }
}
