//! Redirects: a model call carries a key, so it never follows a redirect to another origin.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::{header, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::Router;
use engine::models::{Api, ModelError};
use test_support::{ScriptedModel, Turn};

use crate::common::{call, client, profile, secrets};

const KEY: &str = "sk-redirect-secret-0123456789";

/// A server answering every request with `status` and `Location: {target}{path}?{query}`;
/// returns its base URL and its hit counter.
async fn redirector(status: StatusCode, target: String) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new().fallback(move |uri: Uri| {
        let counter = counter.clone();
        let target = target.clone();
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
            let location = format!("{target}{}{query}", uri.path());
            (status, [(header::LOCATION, location)]).into_response()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), hits)
}

#[tokio::test]
async fn neither_dialect_follows_a_redirect_to_another_origin() {
    // B is a working model server: had the redirect been followed, the call would succeed.
    let b = ScriptedModel::start(vec![Turn::text("leaked"), Turn::text("leaked")]).await;
    let (_dir, secrets) = secrets(&[("AF_MODELS_REDIRECT_KEY", KEY)]);
    for (api, status) in [
        (Api::Openai, StatusCode::TEMPORARY_REDIRECT),
        (Api::Anthropic, StatusCode::FOUND),
    ] {
        let (a, a_hits) = redirector(status, b.base_url.clone()).await;
        let base = match api {
            Api::Openai => format!("{a}/v1"),
            Api::Anthropic => a.clone(),
            Api::Local => unreachable!("only the HTTP dialects are listed"),
        };
        let model = client(
            &profile(api, &base, Some("AF_MODELS_REDIRECT_KEY")),
            secrets.clone(),
        );
        let (result, chunks) = call(&*model).await;
        let message = match result {
            Err(ModelError::Config(message)) => message,
            other => panic!("{api:?}: expected a refused redirect, got {other:?}"),
        };
        assert!(message.contains(&a), "{api:?} names A: {message}");
        assert!(message.contains(&b.base_url), "{api:?} names B: {message}");
        assert!(message.contains("another origin"), "{message}");
        assert!(!message.contains(KEY), "{message}");
        assert!(chunks.is_empty());
        assert_eq!(
            a_hits.load(Ordering::SeqCst),
            1,
            "{api:?}: a refused redirect is not retried"
        );
        assert!(
            b.requests().is_empty(),
            "{api:?}: B received a request carrying the key"
        );
    }
}
