//! Retries, timeouts and cancellation. Assertions count requests and check outcomes; the only
//! clock involved is the generous per-call bound in `common`.

use std::sync::Arc;

use engine::models::{client_for, Api, ModelError, RetryPolicy};
use test_support::{ScriptedModel, Turn};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::common::{call, client, profile, request, run, secrets, STEP};

#[tokio::test]
async fn rate_limit_then_success_honours_retry_after() {
    let server =
        ScriptedModel::start(vec![Turn::rate_limited(1), Turn::text("after the wait")]).await;
    let (_dir, secrets) = secrets(&[]);
    // The default policy: the wait comes from Retry-After, not from the backoff.
    let model = client_for(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    let (result, chunks) = call(&*model).await;
    assert_eq!(result.unwrap().text, "after the wait");
    assert_eq!(chunks.concat(), "after the wait");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_retry_after_beyond_the_limit_fails_at_once() {
    let server = ScriptedModel::start(vec![Turn::rate_limited(3600), Turn::text("never")]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(&profile(Api::Anthropic, &server.base_url, None), secrets);
    match call(&*model).await.0 {
        Err(ModelError::Http { status: 429, .. }) => {}
        other => panic!("expected HTTP 429, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_until_the_attempts_run_out() {
    let mut turns = vec![Turn::error(500, "boom"); 4];
    turns.push(Turn::text("not reached"));
    let server = ScriptedModel::start(turns).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    assert_eq!(
        call(&*model).await.0,
        Err(ModelError::Http {
            status: 500,
            message: "boom".into()
        })
    );
    assert_eq!(server.requests().len(), 4);
    assert_eq!(server.remaining_turns(), 1);
}

#[tokio::test]
async fn a_server_error_then_success_is_transparent() {
    let server =
        ScriptedModel::start(vec![Turn::error(503, "warming up"), Turn::text("fine")]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(&profile(Api::Anthropic, &server.base_url, None), secrets);
    assert_eq!(call(&*model).await.0.unwrap().text, "fine");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server =
        ScriptedModel::start(vec![Turn::error(400, "bad request"), Turn::text("no")]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    assert!(matches!(
        call(&*model).await.0,
        Err(ModelError::Http { status: 400, .. })
    ));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_exhausted_script_answers_with_a_clear_500() {
    let server = ScriptedModel::start(vec![]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    match call(&*model).await.0 {
        Err(ModelError::Http {
            status: 500,
            message,
        }) => {
            assert!(message.contains("no turns left"), "{message}")
        }
        other => panic!("expected HTTP 500, got {other:?}"),
    }
}

#[tokio::test]
async fn an_unreachable_server_is_a_connection_error_after_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &format!("http://{addr}/v1"), None),
        secrets,
    );
    assert!(matches!(
        call(&*model).await.0,
        Err(ModelError::Connection(_))
    ));
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    let server = ScriptedModel::start(vec![Turn::text("partial").stall(), Turn::text("no")]).await;
    let (_dir, secrets) = secrets(&[]);
    let mut p = profile(Api::Openai, &server.openai_base_url(), None);
    p.timeout = Some(0.3);
    let (result, chunks) = call(&*client(&p, secrets)).await;
    assert!(matches!(result, Err(ModelError::Timeout(_))), "{result:?}");
    assert_eq!(chunks.concat(), "partial");
    assert_eq!(server.requests().len(), 1, "a timeout is not retried");
}

#[tokio::test]
async fn cancel_mid_stream_returns_cancelled_promptly() {
    // 400 chunks of one character, 50 ms apart: 20 s if it ran to the end.
    let full = "x".repeat(400);
    let server = ScriptedModel::start(vec![Turn::text(full.clone())
        .chunk_chars(1)
        .chunk_delay(std::time::Duration::from_millis(50))])
    .await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(&profile(Api::Anthropic, &server.base_url, None), secrets);
    let cancel = CancellationToken::new();
    let first_text = Arc::new(Notify::new());
    let canceller = tokio::spawn({
        let cancel = cancel.clone();
        let first_text = Arc::clone(&first_text);
        async move {
            first_text.notified().await;
            cancel.cancel();
        }
    });
    let mut received = String::new();
    let mut on_text = |t: &str| {
        received.push_str(t);
        first_text.notify_one();
    };
    // Bounded well below the 20 s the stream would take: the call must end on cancellation.
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        model.stream(&request(), &cancel, &mut on_text),
    )
    .await
    .expect("cancellation ends the call");
    assert_eq!(result, Err(ModelError::Cancelled));
    assert!(!received.is_empty() && received.len() < full.len());
    canceller.await.unwrap();
}

#[tokio::test]
async fn cancel_while_waiting_to_retry() {
    let server = ScriptedModel::start(vec![Turn::rate_limited(30), Turn::text("no")]).await;
    let (_dir, secrets) = secrets(&[]);
    let policy = RetryPolicy {
        max_retry_after: std::time::Duration::from_secs(60),
        ..RetryPolicy::default()
    };
    let model = engine::models::client_with_retries(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
        policy,
    );
    let cancel = CancellationToken::new();
    let server = Arc::new(server);
    let canceller = tokio::spawn({
        let cancel = cancel.clone();
        let server = Arc::clone(&server);
        async move {
            server.wait_for_requests(1).await;
            cancel.cancel();
        }
    });
    let (result, _) = run(&*model, &request(), &cancel).await;
    assert_eq!(result, Err(ModelError::Cancelled));
    assert_eq!(server.requests().len(), 1);
    tokio::time::timeout(STEP, canceller)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn an_already_cancelled_token_sends_nothing() {
    let server = ScriptedModel::start(vec![Turn::text("no")]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        run(&*model, &request(), &cancel).await.0,
        Err(ModelError::Cancelled)
    );
    assert!(server.requests().is_empty());
}

/// A server refusing a request as too long for its window answers with a typed error, in both
/// dialects, and the refusal is not retried (the same request would be refused again).
#[tokio::test]
async fn a_context_length_refusal_is_typed_and_not_retried() {
    for api in [Api::Openai, Api::Anthropic] {
        let server = ScriptedModel::start(vec![Turn::text("never")]).await;
        server.set_char_limit(Some(5));
        let (_dir, secrets) = secrets(&[]);
        let base = match api {
            Api::Openai => server.openai_base_url(),
            Api::Anthropic => server.base_url.clone(),
            Api::Local => unreachable!("only the HTTP dialects are listed"),
        };
        let model = client(&profile(api, &base, None), secrets);
        match call(&*model).await.0 {
            Err(ModelError::ContextLength(message)) => {
                assert!(
                    message.contains("maximum context length")
                        || message.contains("prompt is too long"),
                    "{api:?}: {message}"
                );
            }
            other => panic!("{api:?}: expected a context-length error, got {other:?}"),
        }
        assert_eq!(server.refused_count(), 1, "{api:?}");
        assert_eq!(server.remaining_turns(), 1);
    }
}
