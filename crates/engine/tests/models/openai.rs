//! The OpenAI-compatible client.

use engine::models::{Api, FinishReason, ModelError, Usage};
use serde_json::json;
use test_support::{ScriptedModel, Turn};

use crate::common::{call, client, profile, secrets};

#[tokio::test]
async fn streams_chunks_in_order_with_finish_reason_and_usage() {
    let turn = Turn::text("Hello, streaming world! ✓")
        .chunk_chars(4)
        .usage(11, 6);
    let expected_chunks = turn.chunks();
    let server = ScriptedModel::start(vec![turn]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );

    let (result, chunks) = call(&*model).await;
    let answer = result.unwrap();
    assert!(expected_chunks.len() > 3);
    assert_eq!(chunks, expected_chunks);
    assert_eq!(answer.text, "Hello, streaming world! ✓");
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(
        answer.usage,
        Some(Usage {
            prompt_tokens: 11,
            completion_tokens: 6
        })
    );

    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].path, "/v1/chat/completions");
    assert_eq!(sent[0].model(), Some("scripted-model"));
    assert!(sent[0].stream());
    assert_eq!(
        sent[0].body["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(
        sent[0].messages(),
        [
            ("system".to_string(), "You are terse.".to_string()),
            ("user".to_string(), "Say hello.".to_string())
        ]
    );
}

#[tokio::test]
async fn length_finish_reason_means_cut_off() {
    let server = ScriptedModel::start(vec![Turn::text("<tool_call>partial").finish_length()]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    let answer = call(&*model).await.0.unwrap();
    assert_eq!(answer.finish_reason, FinishReason::Length);
    assert_eq!(answer.text, "<tool_call>partial");
}

#[tokio::test]
async fn bearer_key_is_sent_when_the_profile_has_one() {
    let server = ScriptedModel::start(vec![Turn::text("ok")]).await;
    let (_dir, secrets) = secrets(&[("AF_MODELS_OPENAI_KEY", "sk-test-openai-1")]);
    let p = profile(
        Api::Openai,
        &server.openai_base_url(),
        Some("AF_MODELS_OPENAI_KEY"),
    );
    call(&*client(&p, secrets)).await.0.unwrap();
    let sent = server.requests();
    assert_eq!(
        sent[0].header("Authorization"),
        Some("Bearer sk-test-openai-1")
    );
}

#[tokio::test]
async fn no_auth_header_without_a_key() {
    let server = ScriptedModel::start(vec![Turn::text("ok")]).await;
    let (_dir, secrets) = secrets(&[]);
    call(&*client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    ))
    .await
    .0
    .unwrap();
    let sent = server.requests();
    assert_eq!(sent[0].header("authorization"), None);
    assert_eq!(sent[0].header("x-api-key"), None);
}

#[tokio::test]
async fn temperature_and_max_tokens_reach_the_server() {
    let server = ScriptedModel::start(vec![Turn::text("ok")]).await;
    let (_dir, secrets) = secrets(&[]);
    let mut p = profile(Api::Openai, &server.openai_base_url(), None);
    p.temperature = Some(0.25);
    p.max_tokens = Some(300);
    call(&*client(&p, secrets)).await.0.unwrap();
    let body = &server.requests()[0].body;
    assert_eq!(body["temperature"], json!(0.25));
    assert_eq!(body["max_tokens"], json!(300));
}

#[tokio::test]
async fn a_server_ignoring_stream_answers_with_json() {
    let server =
        ScriptedModel::start(vec![Turn::text("whole answer").non_streaming().usage(5, 2)]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    let (result, chunks) = call(&*model).await;
    let answer = result.unwrap();
    assert_eq!(chunks, ["whole answer"]);
    assert_eq!(answer.text, "whole answer");
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(answer.usage.map(|u| u.completion_tokens), Some(2));
}

#[tokio::test]
async fn malformed_sse_is_a_protocol_error() {
    let server = ScriptedModel::start(vec![Turn::raw_sse(
        "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: {not json at all\n\n",
    )])
    .await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    let (result, chunks) = call(&*model).await;
    match result {
        Err(ModelError::Protocol(message)) => assert!(message.contains("not JSON"), "{message}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
    assert_eq!(chunks, ["ok"]);
    assert_eq!(
        server.requests().len(),
        1,
        "a protocol error is not retried"
    );
}

#[tokio::test]
async fn a_body_that_is_neither_sse_nor_json_is_a_protocol_error() {
    let server = ScriptedModel::start(vec![Turn::raw_sse("<html>gateway page</html>")]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    match call(&*model).await.0 {
        Err(ModelError::Protocol(message)) => {
            assert!(message.contains("gateway page"), "{message}")
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_error_inside_the_stream_ends_the_call() {
    let server = ScriptedModel::start(vec![Turn::text("half").stream_error("model crashed")]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(
        &profile(Api::Openai, &server.openai_base_url(), None),
        secrets,
    );
    let (result, chunks) = call(&*model).await;
    match result {
        Err(ModelError::Protocol(message)) => {
            assert!(message.contains("model crashed"), "{message}")
        }
        other => panic!("expected an error, got {other:?}"),
    }
    assert_eq!(chunks.concat(), "half");
}
