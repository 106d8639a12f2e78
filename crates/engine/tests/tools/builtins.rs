use std::sync::{Arc, RwLock};

use engine::config::ServiceSettings;
use engine::secrets::SecretResolver;
use engine::tools::builtin::{AgentRoute, CallSubagent, WebFetch, WebSearch};
use engine::tools::{pipeline, ToolContext};

use crate::http_tool::params;
use crate::servers;

fn ctx_with_dotenv(lines: &str) -> (ToolContext, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let dotenv = tmp.path().join(".env");
    std::fs::write(&dotenv, lines).unwrap();
    let ctx = ToolContext {
        conversation_id: None,
        secrets: Some(Arc::new(SecretResolver::new(None, Some(dotenv)))),
        http_trace: None,
        origin: None,
        progress: None,
    };
    (ctx, tmp)
}

fn service(endpoint: String, key: &str) -> ServiceSettings {
    ServiceSettings {
        endpoint,
        api_key: Some(key.to_string()),
    }
}

#[tokio::test]
async fn web_search_speaks_bochas_api_and_formats_results() {
    let server = servers::bocha().await;
    let tool = WebSearch::new(service(
        format!("{}/v1/web-search", server.base),
        "{{AF_TEST_BOCHA}}",
    ));
    let (ctx, _tmp) = ctx_with_dotenv(&format!("AF_TEST_BOCHA={}\n", servers::BOCHA_KEY));
    let r = pipeline::run(
        &tool,
        &params(&[("query", "rust async"), ("count", "2")]),
        &ctx,
    )
    .await;
    assert!(r.success, "{r:?}");
    let seen = &server.requests()[0];
    assert_eq!(
        seen.header("authorization"),
        Some(format!("Bearer {}", servers::BOCHA_KEY).as_str())
    );
    let body: serde_json::Value = serde_json::from_str(&seen.body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"query": "rust async", "freshness": "noLimit", "summary": true, "count": 2})
    );
    assert!(
        r.data.starts_with("Search results for \"rust async\" (2):"),
        "{}",
        r.data
    );
    for expected in [
        "1. Result 1 about rust async",
        "URL: https://example.com/1",
        "Date: 2026-11-01T08:00:00+08:00",
        "Summary 1 of the page.",
        "2. Result 2 about rust async",
    ] {
        assert!(r.data.contains(expected), "missing {expected}: {}", r.data);
    }
    assert!(!r.data.contains(servers::BOCHA_KEY));
}

#[tokio::test]
async fn web_search_errors_say_what_to_do() {
    let server = servers::bocha().await;
    let endpoint = format!("{}/v1/web-search", server.base);
    let (ctx, _tmp) = ctx_with_dotenv("AF_TEST_BOCHA_WRONG=sk-wrong-key-123\n");
    let wrong = WebSearch::new(service(endpoint.clone(), "{{AF_TEST_BOCHA_WRONG}}"));
    let e = pipeline::run(&wrong, &params(&[("query", "x")]), &ctx)
        .await
        .error
        .unwrap();
    assert!(
        e.contains("HTTP 401")
            && e.contains("check the Bocha API key")
            && e.contains("Invalid API KEY"),
        "{e}"
    );
    assert!(!e.contains("sk-wrong-key-123"));

    let unset = WebSearch::new(service(endpoint.clone(), "{{AF_TEST_BOCHA_UNSET}}"));
    let e = pipeline::run(&unset, &params(&[("query", "x")]), &ctx)
        .await
        .error
        .unwrap();
    assert!(e.contains("set the secret AF_TEST_BOCHA_UNSET"), "{e}");

    let e = pipeline::run(&wrong, &params(&[("query", "x"), ("count", "80")]), &ctx)
        .await
        .error
        .unwrap();
    assert!(e.contains("between 1 and 50; you sent 80"), "{e}");
    let e = pipeline::run(
        &wrong,
        &params(&[("query", "x"), ("freshness", "yesterday")]),
        &ctx,
    )
    .await
    .error
    .unwrap();
    assert!(
        e.contains("one of `noLimit`, `oneDay`, `oneWeek`, `oneMonth`, `oneYear`"),
        "{e}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "only the first call reached the server"
    );
}

#[tokio::test]
async fn web_fetch_reads_through_jina_and_notes_truncation() {
    let server = servers::jina().await;
    let tool = WebFetch::new(service(format!("{}/", server.base), "{{AF_TEST_JINA}}"));
    let (ctx, _tmp) = ctx_with_dotenv("AF_TEST_JINA=jina_test_key_42\n");
    let r = pipeline::run(
        &tool,
        &params(&[("url", "https://example.com/a?b=1")]),
        &ctx,
    )
    .await;
    assert!(r.success, "{r:?}");
    assert!(
        r.data
            .starts_with("Title: A page\n\nURL Source: https://example.com/a"),
        "{}",
        r.data
    );
    assert!(!r.data.contains("[Content truncated"));
    let seen = &server.requests()[0];
    assert_eq!(seen.uri, "/https://example.com/a?b=1");
    assert_eq!(
        seen.header("authorization"),
        Some("Bearer jina_test_key_42")
    );

    let r = pipeline::run(
        &tool,
        &params(&[
            ("url", "https://example.com/a"),
            ("max_content_length", "100"),
        ]),
        &ctx,
    )
    .await;
    let total = r.metadata["content_chars"].as_u64().unwrap();
    assert!(r.data.contains(&format!(
        "[Content truncated: showing the first 100 of {total} characters. Call web_fetch again with a larger max_content_length to read more.]"
    )), "{}", r.data);

    let e = pipeline::run(&tool, &params(&[("url", "example.com")]), &ctx)
        .await
        .error
        .unwrap();
    assert!(e.contains("must be a full http:// or https:// URL"));
    let e = pipeline::run(&tool, &params(&[("url", "https://missing.example")]), &ctx)
        .await
        .error
        .unwrap();
    assert!(e.contains("HTTP 422"), "{e}");
}

#[tokio::test]
async fn call_subagent_validates_the_route_only() {
    let routes = Arc::new(RwLock::new(vec![
        AgentRoute {
            name: "search_agent".into(),
            internal: false,
        },
        AgentRoute {
            name: "secret_agent".into(),
            internal: true,
        },
    ]));
    let tool = CallSubagent::new(routes.clone());
    let ctx = ToolContext::default();
    let ok = pipeline::run(
        &tool,
        &params(&[("agent_name", "search_agent"), ("instruction", "find x")]),
        &ctx,
    )
    .await;
    assert!(ok.success);
    // The hand-over is typed by the call gate from the parameters, not passed as metadata.
    assert!(ok.metadata.is_empty(), "{:?}", ok.metadata);
    let e = pipeline::run(
        &tool,
        &params(&[("agent_name", "secret_agent"), ("instruction", "x")]),
        &ctx,
    )
    .await
    .error
    .unwrap();
    assert!(
        e.contains("is internal") && e.contains("`search_agent`"),
        "{e}"
    );
    let e = pipeline::run(
        &tool,
        &params(&[("agent_name", "nobody"), ("instruction", "x")]),
        &ctx,
    )
    .await
    .error
    .unwrap();
    assert!(e.contains("there is no agent `nobody`"), "{e}");
    // Hot reload swaps the routes.
    routes.write().unwrap().push(AgentRoute {
        name: "nobody".into(),
        internal: false,
    });
    assert!(
        pipeline::run(
            &tool,
            &params(&[("agent_name", "nobody"), ("instruction", "x")]),
            &ctx
        )
        .await
        .success
    );
}

/// What permission rules' `$host`/`$url`/`$method` see: the configured service, secrets filled
/// in (web_fetch's page appended to its reader's URL); no destination while a secret is unset.
#[tokio::test]
async fn the_web_tools_destination_is_their_configured_service() {
    use engine::tools::Tool;
    let (ctx, _tmp) = ctx_with_dotenv("AF_TEST_READER=https://Reader.Example:8443\n");
    let fetch = WebFetch::new(service("{{AF_TEST_READER}}/".into(), "{{AF_NONE}}"));
    assert!(fetch.sends_requests());
    let p = serde_json::json!({"url": "https://docs.rs/serde"})
        .as_object()
        .unwrap()
        .clone();
    let d = fetch.call_destination(&p, &ctx).await.unwrap();
    assert_eq!(
        (d.method.as_str(), d.host.as_str(), d.url.as_str()),
        (
            "GET",
            "reader.example",
            "https://reader.example:8443/https://docs.rs/serde"
        ),
        "the URL as parsed (host lower case), which is what is sent"
    );
    let search = WebSearch::new(service(
        "https://api.search.example/v1/s".into(),
        "{{AF_NONE}}",
    ));
    let d = search.call_destination(&p, &ctx).await.unwrap();
    assert_eq!(
        (d.method.as_str(), d.host.as_str()),
        ("POST", "api.search.example")
    );
    let unset = WebSearch::new(service("{{AF_NOT_SET_ANYWHERE}}/s".into(), "{{AF_NONE}}"));
    assert!(unset.call_destination(&p, &ctx).await.is_none());
}
