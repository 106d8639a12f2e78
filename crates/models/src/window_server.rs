//! Asking a profile's server how large a context it runs with.
//!
//! Servers that say, and where (all read with one short request each, in this order):
//!
//! - an OpenAI-compatible `GET {base_url}/models` entry for the profile's model carrying
//!   `context_length` (OpenRouter, LM Studio), `max_model_len` (vLLM), `context_window`
//!   (Groq and others), `max_context_length`, `n_ctx` or `meta.n_ctx` (the runtime context);
//! - llama.cpp's server: `GET {root}/props` → `default_generation_settings.n_ctx` (one slot's
//!   context, what a request may use), or the top-level `n_ctx` of newer builds;
//! - Ollama: `POST {root}/api/show {"model": …}` → the `num_ctx` line of `parameters` (what
//!   Ollama actually runs with), else `model_info["<arch>.context_length"]` capped at
//!   [`OLLAMA_DEFAULT_NUM_CTX`]: without `num_ctx` Ollama runs a smaller context than the model
//!   supports and silently cuts longer prompts;
//! - last, llama.cpp's `/models` entry `meta.n_ctx_train` (the context the model was trained
//!   with; only used when `/props` did not answer).
//!
//! `{root}` is the base URL without a trailing `/v1`. llama-cpp-python's server (used by the
//! small-model tests) reports its `n_ctx` nowhere (its `/v1/models` entries carry only `id`,
//! `object`, `owned_by`, `permissions`; it has no `/props`), so its profiles need the
//! `context_window` field set. Anthropic's model list is read for the same entry fields only.
//!
//! The requests follow the model list's conventions (`discover`): the redirect rules of a
//! call carrying a key, a short timeout, a size limit, and no secret in any text returned.

use std::time::Duration;

use serde_json::{json, Value};

use super::profiles::{Api, ModelProfile};

/// How long each request may take: discovery runs before a conversation's first request, so
/// a silent server must not hold it up for long.
const TIMEOUT: Duration = Duration::from_secs(5);
/// Largest answer read (OpenRouter's model list is a few hundred kB).
const MAX_BYTES: usize = 8 * 1024 * 1024;
/// Smallest window believed (the engine refuses a smaller `context_window` too).
const MIN_WINDOW: u64 = 512;

/// Ollama's runtime context for a model without a `num_ctx` parameter (the
/// `OLLAMA_CONTEXT_LENGTH` default since Ollama 0.6; older versions ran 2,048). A model's own
/// `context_length` is never believed above it.
pub const OLLAMA_DEFAULT_NUM_CTX: u32 = 4096;

/// What the server said about its window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerAnswer {
    /// A window in tokens, and where it was read (e.g. `llama.cpp /props n_ctx`).
    Window {
        /// Tokens.
        tokens: u32,
        /// The route and field it came from, for Settings.
        from: String,
    },
    /// The server answered, but none of its routes says.
    Silent,
    /// It could not be asked (connection, timeout, key refused, server error); why, in a short
    /// phrase without any secret.
    Failed(String),
}

/// Why one request gave nothing.
enum Fetch {
    /// Nothing answered (connection refused, timeout): asking other routes is pointless.
    Unreachable(String),
    /// An HTTP error status.
    Status(u16),
    /// An answer that is not JSON (or too large).
    Invalid,
}

impl Fetch {
    /// Is this a failure worth retrying later (rather than "this route does not exist")?
    fn failure(&self) -> Option<String> {
        match self {
            Fetch::Unreachable(why) => Some(why.clone()),
            Fetch::Status(401 | 403) => Some("the server refused the API key".into()),
            Fetch::Status(s) if *s >= 500 => Some(format!("the server answered HTTP {s}")),
            _ => None,
        }
    }
}

/// The base URL without a trailing `/` and `/v1` (where llama.cpp and Ollama serve their own
/// routes).
pub(super) fn root_url(base_url: &str) -> &str {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base)
}

/// Ask `profile`'s server for its window, sending `key` the way a chat call does.
pub(super) async fn ask(profile: &ModelProfile, key: Option<&str>) -> ServerAnswer {
    // The app's own runtime says its context when it is ready (it is started to ask).
    if profile.api == Api::Local {
        return match crate::local::context_size(profile).await {
            Ok(tokens) => ServerAnswer::Window {
                tokens,
                from: "the local runtime's context".into(),
            },
            Err(e) => ServerAnswer::Failed(e.to_string()),
        };
    }
    let client = match crate::net::client_builder(crate::net::Secrets::Carried)
        .timeout(TIMEOUT)
        .build()
    {
        Ok(client) => client,
        Err(e) => return ServerAnswer::Failed(e.to_string()),
    };
    let asker = Asker {
        client,
        api: profile.api,
        key,
    };
    let base = profile.base_url.trim_end_matches('/');
    let mut failure = None;

    // 1. The model list.
    let list_url = match profile.api {
        Api::Openai | Api::Local => format!("{base}/models"),
        Api::Anthropic => format!("{base}/v1/models"),
    };
    let mut trained = None;
    match asker.get(&list_url).await {
        Ok(list) => {
            if let Some(entry) = list_entry(&list, &profile.model) {
                if let Some((tokens, field)) = entry_window(entry) {
                    return ServerAnswer::Window {
                        tokens,
                        from: format!("/models entry {field}"),
                    };
                }
                trained = positive(entry.pointer("/meta/n_ctx_train"));
            }
        }
        Err(Fetch::Unreachable(why)) => return ServerAnswer::Failed(why),
        Err(other) => failure = other.failure(),
    }
    if profile.api == Api::Anthropic {
        return failure.map_or(ServerAnswer::Silent, ServerAnswer::Failed);
    }
    let root = root_url(&profile.base_url);

    // 2. llama.cpp's /props.
    match asker.get(&format!("{root}/props")).await {
        Ok(props) => {
            if let Some(answer) = props_window(&props) {
                return answer;
            }
        }
        Err(Fetch::Unreachable(why)) => return ServerAnswer::Failed(why),
        Err(other) => failure = failure.or(other.failure()),
    }

    // 3. Ollama's /api/show.
    let show = json!({ "model": profile.model });
    match asker.post(&format!("{root}/api/show"), &show).await {
        Ok(shown) => {
            if let Some(answer) = ollama_window(&shown) {
                return answer;
            }
        }
        Err(Fetch::Unreachable(why)) => return ServerAnswer::Failed(why),
        Err(other) => failure = failure.or(other.failure()),
    }

    // 4. llama.cpp's trained context, when its /props did not say.
    if let Some(tokens) = trained {
        return ServerAnswer::Window {
            tokens,
            from: "/models entry meta.n_ctx_train".into(),
        };
    }
    failure.map_or(ServerAnswer::Silent, ServerAnswer::Failed)
}

/// One client and key for the requests of one discovery.
struct Asker<'a> {
    client: reqwest::Client,
    api: Api,
    key: Option<&'a str>,
}

impl Asker<'_> {
    async fn get(&self, url: &str) -> Result<Value, Fetch> {
        self.send(self.client.get(url)).await
    }

    async fn post(&self, url: &str, body: &Value) -> Result<Value, Fetch> {
        self.send(self.client.post(url).json(body)).await
    }

    /// Send with the key (as the dialect carries it) and read a JSON answer.
    async fn send(&self, mut request: reqwest::RequestBuilder) -> Result<Value, Fetch> {
        if let Some(key) = self.key {
            request = match self.api {
                Api::Openai | Api::Local => request.bearer_auth(key),
                Api::Anthropic => request.header("x-api-key", key),
            };
        }
        if self.api == Api::Anthropic {
            request = request.header("anthropic-version", super::ANTHROPIC_VERSION);
        }
        let response = request.send().await.map_err(|e| {
            Fetch::Unreachable(if e.is_timeout() {
                format!("no answer within {} s", TIMEOUT.as_secs())
            } else if e.is_connect() {
                "cannot connect".to_string()
            } else if e.is_redirect() {
                "a redirect was refused".to_string()
            } else {
                "the request failed".to_string()
            })
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(Fetch::Status(status.as_u16()));
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_BYTES as u64)
        {
            return Err(Fetch::Invalid);
        }
        let body = response.bytes().await.map_err(|_| Fetch::Invalid)?;
        if body.len() > MAX_BYTES {
            return Err(Fetch::Invalid);
        }
        serde_json::from_slice(&body).map_err(|_| Fetch::Invalid)
    }
}

/// A whole number of tokens a window can be (at least [`MIN_WINDOW`]), from a JSON number or
/// a string of digits.
fn positive(value: Option<&Value>) -> Option<u32> {
    let n = match value? {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f > 0.0)
                .map(|f| f as u64)
        })?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    (n >= MIN_WINDOW).then(|| u32::try_from(n).unwrap_or(u32::MAX))
}

/// The entry for `model` in a model list (`{"data": [{"id": …}]}`, or Ollama's
/// `{"models": [{"name": …}]}`): the same id, else the same id ignoring case.
fn list_entry<'a>(list: &'a Value, model: &str) -> Option<&'a Value> {
    let entries = list
        .get("data")
        .or_else(|| list.get("models"))?
        .as_array()?;
    let id = |e: &'a Value| {
        ["id", "name", "model"]
            .iter()
            .find_map(|k| e.get(*k).and_then(Value::as_str))
            .map(str::trim)
    };
    let model = model.trim();
    entries.iter().find(|e| id(e) == Some(model)).or_else(|| {
        entries
            .iter()
            .find(|e| id(e).is_some_and(|i| i.eq_ignore_ascii_case(model)))
    })
}

/// The fields of a model-list entry that give the window a request may use, in order.
const ENTRY_FIELDS: &[&str] = &[
    "/context_length",
    "/max_model_len",
    "/context_window",
    "/max_context_length",
    "/n_ctx",
    "/meta/n_ctx",
    "/top_provider/context_length",
];

/// The window an entry carries, and the field that said it.
fn entry_window(entry: &Value) -> Option<(u32, String)> {
    ENTRY_FIELDS
        .iter()
        .find_map(|field| positive(entry.pointer(field)).map(|t| (t, field[1..].replace('/', "."))))
}

/// llama.cpp's `/props`: one slot's `n_ctx`, else the top-level one.
fn props_window(props: &Value) -> Option<ServerAnswer> {
    let (tokens, field) = positive(props.pointer("/default_generation_settings/n_ctx"))
        .map(|t| (t, "default_generation_settings.n_ctx"))
        .or_else(|| positive(props.get("n_ctx")).map(|t| (t, "n_ctx")))?;
    Some(ServerAnswer::Window {
        tokens,
        from: format!("llama.cpp /props {field}"),
    })
}

/// Ollama's `/api/show`: the `num_ctx` parameter, else the model's context length capped at
/// [`OLLAMA_DEFAULT_NUM_CTX`].
fn ollama_window(shown: &Value) -> Option<ServerAnswer> {
    let num_ctx = shown
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|text| {
            text.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next())
                    .flatten()
                    .and_then(|n| positive(Some(&Value::String(n.into()))))
            })
        });
    if let Some(tokens) = num_ctx {
        return Some(ServerAnswer::Window {
            tokens,
            from: "Ollama /api/show num_ctx".into(),
        });
    }
    let info = shown.get("model_info")?.as_object()?;
    let arch_key = info
        .get("general.architecture")
        .and_then(Value::as_str)
        .map(|arch| format!("{arch}.context_length"));
    let trained = arch_key
        .as_deref()
        .and_then(|k| positive(info.get(k)))
        .or_else(|| {
            info.iter()
                .filter(|(k, _)| k.ends_with(".context_length"))
                .find_map(|(_, v)| positive(Some(v)))
        })?;
    let tokens = trained.min(OLLAMA_DEFAULT_NUM_CTX);
    let from = if tokens < trained {
        format!(
            "Ollama /api/show: the model supports {trained} tokens, but without a num_ctx \
             parameter Ollama runs {OLLAMA_DEFAULT_NUM_CTX}"
        )
    } else {
        "Ollama /api/show context_length".into()
    };
    Some(ServerAnswer::Window { tokens, from })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_drops_a_trailing_v1() {
        assert_eq!(
            root_url("http://127.0.0.1:11434/v1/"),
            "http://127.0.0.1:11434"
        );
        assert_eq!(root_url("http://h:8080"), "http://h:8080");
        assert_eq!(root_url("http://h/api/v1"), "http://h/api");
    }

    #[test]
    fn entry_fields_and_numbers() {
        let list = json!({"data": [
            {"id": "a", "max_model_len": 32768},
            {"id": "B", "context_length": "8192"},
            {"id": "c", "context_window": 100},
            {"id": "d", "meta": {"n_ctx_train": 8192}},
        ]});
        let a = list_entry(&list, "a").unwrap();
        assert_eq!(entry_window(a), Some((32768, "max_model_len".into())));
        let b = list_entry(&list, "b").unwrap();
        assert_eq!(entry_window(b), Some((8192, "context_length".into())));
        // Below 512 is not a window.
        assert_eq!(entry_window(list_entry(&list, "c").unwrap()), None);
        assert_eq!(entry_window(list_entry(&list, "d").unwrap()), None);
        assert!(list_entry(&list, "e").is_none());
    }

    #[test]
    fn ollama_prefers_num_ctx_and_caps_the_models_own_length() {
        let with = json!({"parameters": "stop \"<|eot|>\"\nnum_ctx                        8192",
                          "model_info": {"general.architecture": "llama", "llama.context_length": 131072}});
        assert_eq!(
            ollama_window(&with),
            Some(ServerAnswer::Window {
                tokens: 8192,
                from: "Ollama /api/show num_ctx".into()
            })
        );
        let without =
            json!({"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}});
        let Some(ServerAnswer::Window { tokens, .. }) = ollama_window(&without) else {
            panic!()
        };
        assert_eq!(tokens, OLLAMA_DEFAULT_NUM_CTX);
        let small =
            json!({"model_info": {"general.architecture": "llama", "llama.context_length": 2048}});
        let Some(ServerAnswer::Window { tokens, .. }) = ollama_window(&small) else {
            panic!()
        };
        assert_eq!(tokens, 2048);
        assert_eq!(ollama_window(&json!({"error": "not found"})), None);
    }
}
