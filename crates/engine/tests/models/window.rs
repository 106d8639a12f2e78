//! Context windows discovered from real servers on 127.0.0.1: stand-ins answering like
//! llama.cpp (`/props`), Ollama (`/api/show`) and OpenAI-compatible lists whose entries carry
//! the window, a failing server (→ known model or default), the per-process cache, the
//! resolution order, and a key that never shows in a note.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::{Json, Router};
use engine::models::window::{
    context_window, discover, resolve, ContextWindow, WindowSource, DEFAULT_CONTEXT_WINDOW,
};
use engine::models::{Api, ModelProfile};
use serde_json::{json, Value};
use test_support::ScriptedModel;

use crate::common::secrets;

/// A request as a stand-in received it.
#[derive(Debug, Clone)]
struct Seen {
    route: String,
    authorization: Option<String>,
    body: Value,
}

/// A server answering `routes` (`"GET /props"` → status and JSON) and 404 to anything else,
/// recording every request.
struct StandIn {
    root: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl StandIn {
    async fn start(routes: Vec<(&str, StatusCode, Value)>) -> StandIn {
        let routes: Arc<HashMap<String, (StatusCode, Value)>> = Arc::new(
            routes
                .into_iter()
                .map(|(r, s, v)| (r.to_string(), (s, v)))
                .collect(),
        );
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let app = Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let routes = Arc::clone(&routes);
                let record = Arc::clone(&record);
                async move {
                    let route = format!("{method} {}", uri.path());
                    record.lock().unwrap().push(Seen {
                        route: route.clone(),
                        authorization: headers
                            .get("authorization")
                            .map(|v| v.to_str().unwrap().to_string()),
                        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                    });
                    match routes.get(&route) {
                        Some((status, value)) => (*status, Json(value.clone())).into_response(),
                        None => (StatusCode::NOT_FOUND, "not found").into_response(),
                    }
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let root = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        StandIn { root, seen }
    }

    /// An OpenAI-compatible profile for `model` at `{root}/v1`.
    fn profile(&self, model: &str) -> ModelProfile {
        ModelProfile::new("local", Api::Openai, format!("{}/v1", self.root), model)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn server(tokens: u32) -> ContextWindow {
    ContextWindow {
        tokens,
        source: WindowSource::Server,
    }
}

#[tokio::test]
async fn llama_cpp_reports_its_slot_context_through_props() {
    let (_dir, secrets) = secrets(&[]);
    let llama = StandIn::start(vec![(
        "GET /props",
        StatusCode::OK,
        json!({"default_generation_settings": {"n_ctx": 6144}, "n_ctx": 24576, "total_slots": 4}),
    )])
    .await;
    assert_eq!(
        resolve(&llama.profile("any"), secrets.clone()).await,
        server(6144)
    );
    // Newer builds: only the top-level n_ctx.
    let newer = StandIn::start(vec![(
        "GET /props",
        StatusCode::OK,
        json!({"n_ctx": 8192, "model_path": "m.gguf"}),
    )])
    .await;
    let hint = discover(&newer.profile("any"), None, secrets).await;
    assert_eq!((hint.tokens, hint.source), (8192, WindowSource::Server));
    assert_eq!(hint.detail.as_deref(), Some("llama.cpp /props n_ctx"));
}

#[tokio::test]
async fn ollama_runs_num_ctx_when_set_and_at_most_its_default_otherwise() {
    let (_dir, secrets) = secrets(&[]);
    let info = json!({"general.architecture": "llama", "llama.context_length": 131072});
    let with = StandIn::start(vec![(
        "POST /api/show",
        StatusCode::OK,
        json!({"parameters": "stop \"<|eot_id|>\"\nnum_ctx                        8192", "model_info": info}),
    )])
    .await;
    assert_eq!(
        resolve(&with.profile("llama3.2:3b"), secrets.clone()).await,
        server(8192)
    );
    let show = with
        .seen()
        .into_iter()
        .find(|s| s.route == "POST /api/show")
        .unwrap();
    assert_eq!(show.body, json!({"model": "llama3.2:3b"}));

    // No num_ctx: Ollama runs its default, not the model's 131,072.
    let without = StandIn::start(vec![(
        "POST /api/show",
        StatusCode::OK,
        json!({"parameters": "stop \"<|eot_id|>\"", "model_info": info}),
    )])
    .await;
    let hint = discover(&without.profile("llama3.2:3b"), None, secrets.clone()).await;
    assert_eq!((hint.tokens, hint.source), (4096, WindowSource::Server));
    assert!(
        hint.detail.as_deref().unwrap().contains("131072"),
        "{hint:?}"
    );
    // A model trained on less than the default is believed.
    let small = StandIn::start(vec![(
        "POST /api/show",
        StatusCode::OK,
        json!({"model_info": {"general.architecture": "llama", "llama.context_length": 2048}}),
    )])
    .await;
    assert_eq!(
        resolve(&small.profile("tinyllama"), secrets).await,
        server(2048)
    );
}

#[tokio::test]
async fn a_model_list_entry_carrying_the_window_is_read_in_each_known_field() {
    let (_dir, secrets) = secrets(&[]);
    let cases = [
        (json!({"context_length": 32768}), 32768), // OpenRouter, LM Studio
        (json!({"max_model_len": 16384}), 16384),  // vLLM
        (json!({"context_window": 131072}), 131072), // Groq
        (json!({"max_context_length": 8192}), 8192), // LM Studio's native list
        (json!({"meta": {"n_ctx_train": 2048}}), 2048), // llama.cpp without /props
        (json!({"top_provider": {"context_length": 65536}}), 65536), // OpenRouter
    ];
    for (fields, tokens) in cases {
        let mut entry = json!({"id": "the-model", "object": "model"});
        entry
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        let list =
            json!({"object": "list", "data": [{"id": "other", "context_length": 999999}, entry]});
        let stand_in = StandIn::start(vec![("GET /v1/models", StatusCode::OK, list)]).await;
        assert_eq!(
            resolve(&stand_in.profile("the-model"), secrets.clone()).await,
            server(tokens),
            "{fields}"
        );
    }
}

#[tokio::test]
async fn a_server_that_fails_or_says_nothing_leaves_the_known_model_or_the_default() {
    let (_dir, secrets) = secrets(&[]);
    let failing = StandIn::start(vec![
        (
            "GET /v1/models",
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({}),
        ),
        ("GET /props", StatusCode::INTERNAL_SERVER_ERROR, json!({})),
        (
            "POST /api/show",
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({}),
        ),
    ])
    .await;
    assert_eq!(
        resolve(&failing.profile("gpt-4o"), secrets.clone()).await,
        ContextWindow {
            tokens: 128_000,
            source: WindowSource::KnownModel
        }
    );
    let hint = discover(&failing.profile("gpt-4o"), None, secrets.clone()).await;
    assert_eq!(hint.detail.as_deref(), Some("gpt-4o"));
    assert!(hint.note.unwrap().contains("HTTP 500"));

    // A list without the field, no /props, no /api/show: the conservative default, no note.
    let silent = StandIn::start(vec![(
        "GET /v1/models",
        StatusCode::OK,
        json!({"data": [{"id": "my-model"}]}),
    )])
    .await;
    let hint = discover(&silent.profile("my-model"), None, secrets.clone()).await;
    assert_eq!(
        (hint.tokens, hint.source, hint.note),
        (DEFAULT_CONTEXT_WINDOW, WindowSource::Default, None)
    );

    // Nothing listens.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let gone = ModelProfile::new(
        "p",
        Api::Openai,
        format!("http://{closed}/v1"),
        "qwen2.5:7b",
    );
    let hint = discover(&gone, None, secrets.clone()).await;
    assert_eq!((hint.tokens, hint.source), (4096, WindowSource::Default));
    assert_eq!(
        hint.detail.as_deref(),
        Some("qwen2.5 was trained with 32768 tokens")
    );
    assert!(hint.note.unwrap().contains("cannot connect"));
    assert_eq!(
        resolve(&gone, secrets).await,
        ContextWindow {
            tokens: DEFAULT_CONTEXT_WINDOW,
            source: WindowSource::Default
        }
    );
}

#[tokio::test]
async fn the_key_is_sent_like_a_chat_call_and_never_appears_in_a_note() {
    let secret = "sk-window-secret-4711";
    let (_dir, secrets) = secrets(&[("WINDOW_KEY_1", secret)]);
    let refusing = StandIn::start(vec![
        (
            "GET /v1/models",
            StatusCode::UNAUTHORIZED,
            json!({"error": secret}),
        ),
        (
            "GET /props",
            StatusCode::UNAUTHORIZED,
            json!({"error": secret}),
        ),
        (
            "POST /api/show",
            StatusCode::UNAUTHORIZED,
            json!({"error": secret}),
        ),
    ])
    .await;
    let mut profile = refusing.profile("gpt-4o");
    profile.api_key = Some("{{WINDOW_KEY_1}}".into());
    let hint = discover(&profile, None, secrets.clone()).await;
    let note = hint.note.clone().unwrap();
    assert!(note.contains("refused the API key"), "{note}");
    assert!(!format!("{hint:?}").contains(secret), "{hint:?}");
    let seen = refusing.seen();
    assert!(!seen.is_empty());
    assert!(seen
        .iter()
        .all(|s| s.authorization.as_deref() == Some(&format!("Bearer {secret}")[..])));

    // A key typed into the form is used instead, and stays out of the hint too.
    let typed = "sk-typed-window-0815";
    let hint = discover(&profile, Some(typed.into()), secrets).await;
    assert!(!format!("{hint:?}").contains(typed), "{hint:?}");
    assert_eq!(
        refusing.seen().last().unwrap().authorization.as_deref(),
        Some(&format!("Bearer {typed}")[..])
    );
}

#[tokio::test]
async fn discovery_costs_one_request_per_profile_per_process_even_when_it_fails() {
    let (_dir, secrets) = secrets(&[]);
    let llama = StandIn::start(vec![(
        "GET /props",
        StatusCode::OK,
        json!({"default_generation_settings": {"n_ctx": 3000}}),
    )])
    .await;
    let profile = llama.profile("cached");
    // Concurrent runs of the same profile share one discovery.
    let (a, b) = tokio::join!(
        resolve(&profile, secrets.clone()),
        resolve(&profile, secrets.clone())
    );
    assert_eq!((a, b), (server(3000), server(3000)));
    let asked = llama.seen().len();
    assert_eq!(asked, 2, "{:?}", llama.seen()); // /v1/models (404), then /props
    assert_eq!(resolve(&profile, secrets.clone()).await, server(3000));
    assert_eq!(llama.seen().len(), asked);
    // Another model on the same server is another profile.
    resolve(&llama.profile("other"), secrets.clone()).await;
    assert_eq!(llama.seen().len(), asked * 2);

    // A failing server is not asked again right away either.
    let failing = StandIn::start(vec![(
        "GET /v1/models",
        StatusCode::SERVICE_UNAVAILABLE,
        json!({}),
    )])
    .await;
    let profile = failing.profile("cached");
    resolve(&profile, secrets.clone()).await;
    let asked = failing.seen().len();
    assert!(asked > 0);
    resolve(&profile, secrets).await;
    assert_eq!(failing.seen().len(), asked);
}

#[tokio::test]
async fn the_profile_field_beats_the_server_which_beats_the_known_model() {
    let (_dir, secrets) = secrets(&[]);
    let llama = StandIn::start(vec![(
        "GET /props",
        StatusCode::OK,
        json!({"default_generation_settings": {"n_ctx": 5000}}),
    )])
    .await;
    let mut profile = llama.profile("gpt-4o");
    profile.context_window = Some(2048);
    assert_eq!(
        resolve(&profile, secrets.clone()).await,
        ContextWindow {
            tokens: 2048,
            source: WindowSource::Profile
        }
    );
    assert!(llama.seen().is_empty(), "the field needs no request");
    profile.context_window = None;
    assert_eq!(resolve(&profile, secrets).await, server(5000));
    // Without asking, the known model's default.
    assert_eq!(context_window(&profile).source, WindowSource::KnownModel);
}

#[tokio::test]
async fn the_scripted_model_server_reports_its_window_when_given_one() {
    let (_dir, secrets) = secrets(&[]);
    let plain = ScriptedModel::start(vec![]).await;
    let profile = ModelProfile::new("p", Api::Openai, plain.openai_base_url(), "scripted");
    assert_eq!(
        discover(&profile, None, secrets.clone()).await.source,
        WindowSource::Default
    );
    let sized = ScriptedModel::start(vec![]).await;
    sized.set_context_window(Some(6000));
    let profile = ModelProfile::new("p", Api::Openai, sized.openai_base_url(), "scripted");
    let hint = discover(&profile, None, secrets).await;
    assert_eq!((hint.tokens, hint.source), (6000, WindowSource::Server));
    assert!(sized.requests().is_empty(), "no chat request was made");
}
