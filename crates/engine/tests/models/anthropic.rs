//! The Anthropic Messages client.

use engine::models::{Api, ChatMessage, ChatRequest, FinishReason, ModelError, Role, Usage};
use serde_json::json;
use test_support::{Dialect, ScriptedModel, Turn};
use tokio_util::sync::CancellationToken;

use crate::common::{call, client, profile, run, secrets};

#[tokio::test]
async fn streams_chunks_with_stop_reason_and_usage() {
    let turn = Turn::text("Bonjour from the Messages API.")
        .chunk_chars(5)
        .usage(21, 7);
    let expected_chunks = turn.chunks();
    let server = ScriptedModel::start(vec![turn]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(&profile(Api::Anthropic, &server.base_url, None), secrets);

    let (result, chunks) = call(&*model).await;
    let answer = result.unwrap();
    assert_eq!(chunks, expected_chunks);
    assert_eq!(answer.text, "Bonjour from the Messages API.");
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(
        answer.usage,
        Some(Usage {
            prompt_tokens: 21,
            completion_tokens: 7
        })
    );
    let sent = server.requests();
    assert_eq!(sent[0].dialect, Dialect::Anthropic);
    assert_eq!(sent[0].path, "/v1/messages");
    assert!(sent[0].stream());
}

#[tokio::test]
async fn max_tokens_stop_reason_means_cut_off() {
    let server = ScriptedModel::start(vec![Turn::text("cut").finish_length()]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(&profile(Api::Anthropic, &server.base_url, None), secrets);
    assert_eq!(
        call(&*model).await.0.unwrap().finish_reason,
        FinishReason::Length
    );
}

#[tokio::test]
async fn key_and_version_headers_are_sent() {
    let server = ScriptedModel::start(vec![Turn::text("ok")]).await;
    let (_dir, secrets) = secrets(&[("AF_MODELS_ANTHROPIC_KEY", "sk-ant-test-2")]);
    let p = profile(
        Api::Anthropic,
        &server.base_url,
        Some("AF_MODELS_ANTHROPIC_KEY"),
    );
    call(&*client(&p, secrets)).await.0.unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test-2"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
}

#[tokio::test]
async fn no_key_header_without_a_key() {
    let server = ScriptedModel::start(vec![Turn::text("ok")]).await;
    let (_dir, secrets) = secrets(&[]);
    call(&*client(
        &profile(Api::Anthropic, &server.base_url, None),
        secrets,
    ))
    .await
    .0
    .unwrap();
    assert_eq!(server.requests()[0].header("x-api-key"), None);
}

#[tokio::test]
async fn system_prompt_is_top_level_and_max_tokens_is_always_sent() {
    let server = ScriptedModel::start(vec![Turn::text("a"), Turn::text("b")]).await;
    let (_dir, secrets) = secrets(&[]);
    let mut p = profile(Api::Anthropic, &server.base_url, None);
    let model = client(&p, secrets.clone());
    let request = ChatRequest {
        messages: vec![
            ChatMessage::new(Role::System, "You are the lead agent."),
            ChatMessage::new(Role::User, "Task"),
            ChatMessage::new(Role::Assistant, "<tool_call>…</tool_call>"),
            ChatMessage::new(Role::User, "<tool_result>…</tool_result>"),
        ],
        ..ChatRequest::default()
    };
    run(&*model, &request, &CancellationToken::new())
        .await
        .0
        .unwrap();
    p.max_tokens = Some(8192);
    run(&*client(&p, secrets), &request, &CancellationToken::new())
        .await
        .0
        .unwrap();

    let sent = server.requests();
    assert_eq!(sent[0].system().as_deref(), Some("You are the lead agent."));
    let roles: Vec<String> = sent[0].messages().into_iter().map(|(r, _)| r).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user"],
        "no system message in `messages`"
    );
    assert_eq!(sent[0].body["max_tokens"], json!(4096));
    assert_eq!(sent[1].body["max_tokens"], json!(8192));
}

#[tokio::test]
async fn a_server_ignoring_stream_answers_with_json() {
    let server =
        ScriptedModel::start(vec![Turn::text("one piece").non_streaming().usage(3, 2)]).await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(&profile(Api::Anthropic, &server.base_url, None), secrets);
    let (result, chunks) = call(&*model).await;
    let answer = result.unwrap();
    assert_eq!(chunks, ["one piece"]);
    assert_eq!(
        answer.usage,
        Some(Usage {
            prompt_tokens: 3,
            completion_tokens: 2
        })
    );
}

#[tokio::test]
async fn an_error_event_after_text_fails_without_retrying() {
    let server = ScriptedModel::start(vec![
        Turn::text("started").stream_error("Overloaded"),
        Turn::text("must not be asked for"),
    ])
    .await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(&profile(Api::Anthropic, &server.base_url, None), secrets);
    let (result, chunks) = call(&*model).await;
    assert_eq!(
        result,
        Err(ModelError::Http {
            status: 529,
            message: "Overloaded".into()
        })
    );
    assert_eq!(chunks.concat(), "started");
    assert_eq!(server.requests().len(), 1, "text was shown: no retry");
}

#[tokio::test]
async fn an_error_event_before_any_text_is_retried() {
    let server = ScriptedModel::start(vec![
        Turn::text("").stream_error("Overloaded"),
        Turn::text("second try"),
    ])
    .await;
    let (_dir, secrets) = secrets(&[]);
    let model = client(&profile(Api::Anthropic, &server.base_url, None), secrets);
    assert_eq!(call(&*model).await.0.unwrap().text, "second try");
    assert_eq!(server.requests().len(), 2);
}
