//! API keys: resolved from the secrets at call time, named when missing, never in an error.

use engine::models::{Api, ModelError};
use engine::secrets::MASK;
use test_support::{ScriptedModel, Turn};

use crate::common::{call, client, profile, secrets};

const KEY: &str = "sk-live-very-secret-0123456789";

#[tokio::test]
async fn a_missing_key_is_a_config_error_naming_the_secret() {
    let server = ScriptedModel::start(vec![Turn::text("no")]).await;
    let (_dir, secrets) = secrets(&[]);
    for p in [
        profile(
            Api::Openai,
            &server.openai_base_url(),
            Some("AF_MODELS_NEVER_SET_KEY"),
        ),
        profile(
            Api::Anthropic,
            &server.base_url,
            Some("AF_MODELS_NEVER_SET_KEY"),
        ),
    ] {
        match call(&*client(&p, secrets.clone())).await.0 {
            Err(ModelError::Config(message)) => {
                assert!(message.contains("AF_MODELS_NEVER_SET_KEY"), "{message}");
                assert!(message.contains("`test`"), "names the profile: {message}");
            }
            other => panic!("expected a config error, got {other:?}"),
        }
    }
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_key_echoed_by_the_server_is_masked_in_errors() {
    let echo = format!("invalid x-api-key {KEY} (check your key)");
    let server = ScriptedModel::start(vec![
        Turn::error(401, echo.clone()),
        Turn::error(401, echo),
        Turn::raw_sse(format!("data: {{broken {KEY}\n\n")),
        Turn::text("").stream_error(format!("bad key {KEY}")),
    ])
    .await;
    let (_dir, secrets) = secrets(&[("AF_MODELS_ECHO_KEY", KEY)]);
    let openai = client(
        &profile(
            Api::Openai,
            &server.openai_base_url(),
            Some("AF_MODELS_ECHO_KEY"),
        ),
        secrets.clone(),
    );
    let anthropic = client(
        &profile(Api::Anthropic, &server.base_url, Some("AF_MODELS_ECHO_KEY")),
        secrets,
    );
    let mut errors = Vec::new();
    errors.push(call(&*openai).await.0.unwrap_err());
    errors.push(call(&*anthropic).await.0.unwrap_err());
    errors.push(call(&*openai).await.0.unwrap_err());
    errors.push(call(&*openai).await.0.unwrap_err());
    assert!(matches!(errors[0], ModelError::Http { status: 401, .. }));
    assert!(matches!(errors[1], ModelError::Http { status: 401, .. }));
    assert!(matches!(errors[2], ModelError::Protocol(_)));
    assert!(matches!(errors[3], ModelError::Protocol(_)));
    for e in &errors {
        let text = format!("{e} {e:?}");
        assert!(!text.contains(KEY), "{text}");
        assert!(text.contains(MASK), "{text}");
    }
    // The key did reach the server, in the right header.
    let sent = server.requests();
    assert_eq!(
        sent[0].header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(sent[1].header("x-api-key"), Some(KEY));
}
