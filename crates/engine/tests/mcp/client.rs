//! One session with server-everything, without the engine.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::mcp::client::{connect, ConnectOptions, McpError, ProgressFn};
use engine::mcp::tool::convert_result;
use engine::mcp::McpTransport;
use engine::secrets::SecretResolver;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::support::*;

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// Tools listed and called over a transport: echo, the sum, an image, a resource, an error.
async fn exercise(client: &engine::mcp::McpClient) {
    let tools = client.list_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    for expected in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "get-resource-reference",
        "trigger-long-running-operation",
    ] {
        assert!(
            names.contains(&expected.to_string()),
            "{expected} missing from {names:?}"
        );
    }
    let never = CancellationToken::new();

    let echo = client
        .call_tool("echo", args(json!({"message": "hi there"})), &never, None)
        .await
        .unwrap();
    let echo = convert_result("s.echo", echo);
    assert!(echo.success);
    assert_eq!(echo.data, "Echo: hi there");

    let sum = client
        .call_tool("get-sum", args(json!({"a": 2, "b": 40})), &never, None)
        .await
        .unwrap();
    let sum = convert_result("s.get-sum", sum);
    assert!(sum.success && sum.data.contains("42"), "{sum:?}");

    let image = client
        .call_tool("get-tiny-image", Map::new(), &never, None)
        .await
        .unwrap();
    let image = convert_result("s.get-tiny-image", image);
    assert!(image.success);
    assert_eq!(image.attachments.len(), 1, "{image:?}");
    let a = &image.attachments[0];
    assert_eq!(a.mime, "image/png");
    assert_eq!(&a.bytes[..8], b"\x89PNG\r\n\x1a\n", "decoded PNG bytes");
    let line = format!(
        "[image/png, {} KB: stored as an artifact]",
        a.bytes.len().div_ceil(1024)
    );
    assert!(image.data.contains(&line), "{}", image.data);
    assert!(!image.data.contains("iVBOR"), "no base64 for the model");

    let resource = client
        .call_tool(
            "get-resource-reference",
            args(json!({"resourceType": "Text", "resourceId": 3})),
            &never,
            None,
        )
        .await
        .unwrap();
    let resource = convert_result("s.get-resource-reference", resource);
    assert!(resource.success, "{resource:?}");
    // The text resource is an attachment for the gate to store as a text artifact, not
    // inlined here (the gate adds its line).
    assert_eq!(resource.attachments.len(), 1, "{resource:?}");
    let r = &resource.attachments[0];
    assert_eq!(
        r.resource_uri.as_deref(),
        Some("demo://resource/dynamic/text/3")
    );
    assert_eq!(r.title, "demo://resource/dynamic/text/3");
    assert!(!r.bytes.is_empty());
    assert!(
        !resource.data.contains(&*String::from_utf8_lossy(&r.bytes)),
        "{}",
        resource.data
    );
    assert_eq!(resource.metadata["mcp_content"]["resource"], 1);

    // The server rejects the arguments: isError → a failed call with the server's words.
    let bad = client
        .call_tool("get-sum", args(json!({"a": "two", "b": 1})), &never, None)
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    let bad = convert_result("s.get-sum", bad);
    assert!(!bad.success);
    assert!(bad.error.as_deref().unwrap().contains("a"), "{bad:?}");
}

#[tokio::test]
async fn stdio_lists_and_calls_each_kind_of_content() {
    let client = connect(&everything("everything"), &ConnectOptions::default())
        .await
        .unwrap();
    let (name, _version) = client.server_info().unwrap();
    assert!(name.contains("everything"), "{name}");
    exercise(&client).await;
    assert!(client
        .stderr_tail()
        .iter()
        .any(|l| l.contains("Starting default (STDIO) server")));
}

#[tokio::test]
async fn streamable_http_lists_and_calls_each_kind_of_content() {
    let server = HttpServer::start("streamableHttp").await;
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let client = connect(&http("remote", &url), &ConnectOptions::default())
        .await
        .unwrap();
    exercise(&client).await;
}

#[tokio::test]
async fn a_legacy_sse_server_gets_an_error_naming_the_transport() {
    let server = HttpServer::start("sse").await;
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let err = connect(&http("old", &url), &ConnectOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::LegacySse { .. }), "{err:?}");
    assert!(err.to_string().contains("legacy HTTP+SSE"), "{err}");
}

#[tokio::test]
async fn a_long_call_reports_progress() {
    let client = connect(&everything("everything"), &ConnectOptions::default())
        .await
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let progress: ProgressFn = Arc::new(move |p, total, _| sink.lock().unwrap().push((p, total)));
    let result = client
        .call_tool(
            "trigger-long-running-operation",
            args(json!({"duration": 1, "steps": 4})),
            &CancellationToken::new(),
            Some(progress),
        )
        .await
        .unwrap();
    assert!(convert_result("t", result).data.contains("completed"));
    let seen = seen.lock().unwrap().clone();
    // rmcp handles each notification on its own task: the last step, sent right before the
    // result, can lose the race with it; the earlier ones all arrive, in order.
    let all = [1.0, 2.0, 3.0, 4.0].map(|p| (p, Some(4.0)));
    assert!(
        seen.len() >= 3 && seen[..] == all[..seen.len()],
        "every step reported, in order: {seen:?}"
    );
}

/// Stopping a call ends it at once and the server receives notifications/cancelled for it.
#[tokio::test]
async fn cancelling_a_call_tells_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("to-server.jsonl");
    let client = connect(
        &everything_teed("everything", &log),
        &ConnectOptions::default(),
    )
    .await
    .unwrap();
    let cancel = CancellationToken::new();
    let call = client.call_tool(
        "trigger-long-running-operation",
        args(json!({"duration": 600, "steps": 600})),
        &cancel,
        None,
    );
    let stopper = async {
        assert!(
            eventually(10, || std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("trigger-long-running-operation"))
            .await
        );
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, stopper);
    assert!(matches!(result, Err(McpError::Cancelled)), "{result:?}");
    let sent = || std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        eventually(10, || sent().contains("notifications/cancelled")).await,
        "the server never got the cancellation: {}",
        sent()
    );
    // It names the request it cancels.
    let call_id = sent()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["method"] == "tools/call")
        .map(|m| m["id"].clone())
        .unwrap();
    let cancelled = sent()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["method"] == "notifications/cancelled")
        .unwrap();
    assert_eq!(cancelled["params"]["requestId"], call_id);
    // The session still works.
    assert!(client.list_tools().await.is_ok());
}

/// A tool slower than the server's `timeout` fails with a clear error, and is cancelled.
#[tokio::test]
async fn a_call_past_the_timeout_fails_clearly() {
    let mut cfg = everything("everything");
    cfg.timeout_secs = 1;
    let client = connect(&cfg, &ConnectOptions::default()).await.unwrap();
    let err = client
        .call_tool(
            "trigger-long-running-operation",
            args(json!({"duration": 30, "steps": 30})),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Timeout(_)), "{err:?}");
    assert!(err.to_string().contains("raise `timeout`"), "{err}");
}

/// The server sees only the basic environment plus its configured `env`, whose `{{VAR}}` is
/// resolved from the secrets: not the app's other variables.
#[tokio::test]
async fn the_server_environment_is_clean() {
    std::env::set_var("ARTIFACTFLOW_TEST_LEAK_KEY", "sk-do-not-pass-me");
    let tmp = tempfile::tempdir().unwrap();
    let dotenv = tmp.path().join(".env");
    std::fs::write(&dotenv, "MCP_TEST_TOKEN=tok-from-dotenv\n").unwrap();
    let mut cfg = everything("everything");
    let McpTransport::Stdio { env, .. } = &mut cfg.transport else {
        unreachable!()
    };
    env.insert("GREETING_TOKEN".into(), "{{MCP_TEST_TOKEN}}".into());
    let opts = ConnectOptions {
        secrets: Some(Arc::new(SecretResolver::new(None, Some(dotenv)))),
        ..Default::default()
    };
    let client = connect(&cfg, &opts).await.unwrap();
    let result = client
        .call_tool("get-env", Map::new(), &CancellationToken::new(), None)
        .await
        .unwrap();
    let text = convert_result("t", result).data;
    let seen: Map<String, Value> = serde_json::from_str(&text).unwrap();
    assert!(
        !seen.contains_key("ARTIFACTFLOW_TEST_LEAK_KEY"),
        "leaked: {text}"
    );
    assert!(!text.contains("sk-do-not-pass-me"));
    // The server got the secret's value: its echo comes back masked, as all it says does.
    assert_eq!(seen["GREETING_TOKEN"], engine::secrets::MASK);
    assert!(!text.contains("tok-from-dotenv"), "{text}");
    assert!(seen.contains_key("PATH"));
    let allowed = |k: &str| {
        k == "PATH"
            || k == "GREETING_TOKEN"
            || k.starts_with("LC_")
            || engine::mcp::client::INHERITED_ENV
                .iter()
                .any(|n| n.eq_ignore_ascii_case(k))
    };
    let extra: Vec<_> = seen
        .keys()
        .filter(|k| !allowed(k) && !k.starts_with("npm_") && !k.starts_with("NODE"))
        .collect();
    assert!(extra.is_empty(), "unexpected variables: {extra:?}");
}

/// A command missing from our PATH is found through the login shell's PATH (macOS apps start
/// with a bare PATH), and the status can say which was used.
#[tokio::test]
async fn a_command_missing_from_our_path_is_found_through_the_login_shell() {
    let node = which::which("node").expect("node is installed");
    let node_dir = node.parent().unwrap().to_path_buf();
    let tmp = tempfile::tempdir().unwrap();
    let shell = tmp.path().join("login-shell");
    std::fs::write(
        &shell,
        format!(
            "#!/bin/sh\n# a login shell that knows where node is\nprintf %s \"{}:/bin\"\n",
            node_dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let empty = tmp.path().join("empty-bin");
    std::fs::create_dir(&empty).unwrap();

    let opts = ConnectOptions {
        path_env: Some(empty.clone().into_os_string()),
        login_shell: Some(shell.clone()),
        ..Default::default()
    };
    let client = connect(&everything("everything"), &opts).await.unwrap();
    let resolved = client.resolved_command().unwrap();
    assert!(resolved.from_login_shell);
    assert_eq!(resolved.path, node);
    assert!(client.list_tools().await.is_ok());

    // Without the login shell's help: a clear error naming the command.
    let opts = ConnectOptions {
        path_env: Some(empty.into_os_string()),
        login_shell: Some(tmp.path().join("no-such-shell")),
        ..Default::default()
    };
    let err = connect(&everything("everything"), &opts).await.unwrap_err();
    assert!(matches!(err, McpError::CommandNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("`node` was not found"), "{err}");
}

/// A server that exits during the handshake: a clear error with its stderr.
#[tokio::test]
async fn a_server_that_dies_at_start_reports_its_stderr() {
    let cfg = stdio(
        "broken",
        "node",
        vec![
            "-e".into(),
            "console.error('missing API key: set FOO'); process.exit(3)".into(),
        ],
    );
    let err = connect(&cfg, &ConnectOptions::default()).await.unwrap_err();
    let McpError::Handshake { stderr_tail, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        stderr_tail.iter().any(|l| l.contains("missing API key")),
        "{stderr_tail:?}"
    );
    let _ = Duration::ZERO;
}

/// A server that never answers the handshake fails after the connect timeout instead of
/// staying "starting" forever.
#[tokio::test]
async fn a_server_that_never_answers_fails_after_the_connect_timeout() {
    let cfg = stdio(
        "silent",
        "node",
        vec![
            "-e".into(),
            "console.error('waiting forever'); setInterval(() => {}, 1000)".into(),
        ],
    );
    let opts = ConnectOptions {
        connect_timeout: Duration::from_secs(1),
        ..Default::default()
    };
    let err = connect(&cfg, &opts).await.unwrap_err();
    let McpError::Handshake {
        message,
        stderr_tail,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert!(message.contains("did not answer `initialize`"), "{message}");
    assert!(stderr_tail.iter().any(|l| l.contains("waiting forever")));
}

/// A secret given to a server through `env` never shows in what we keep of its stderr.
#[tokio::test]
async fn a_secret_the_server_prints_is_masked_in_its_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let dotenv = tmp.path().join(".env");
    std::fs::write(&dotenv, "MCP_TEST_KEY=sk-live-0123456789abcdef\n").unwrap();
    let mut cfg = stdio(
        "leaky",
        "node",
        vec![
            "-e".into(),
            "console.error('using key ' + process.env.API_KEY); process.exit(2)".into(),
        ],
    );
    let McpTransport::Stdio { env, .. } = &mut cfg.transport else {
        unreachable!()
    };
    env.insert("API_KEY".into(), "{{MCP_TEST_KEY}}".into());
    let opts = ConnectOptions {
        secrets: Some(Arc::new(SecretResolver::new(None, Some(dotenv)))),
        ..Default::default()
    };
    let err = connect(&cfg, &opts).await.unwrap_err();
    let McpError::Handshake { stderr_tail, .. } = &err else {
        panic!("{err:?}")
    };
    let text = stderr_tail.join("\n");
    assert!(text.contains("using key"), "{text}");
    assert!(!text.contains("sk-live-0123456789abcdef"), "{text}");
    assert!(!format!("{err:?}").contains("sk-live"), "{err:?}");
}

/// A remote server that answers 401 needs a sign-in: a clear status, not a crash loop.
#[tokio::test]
async fn a_remote_server_asking_for_authorization_needs_sign_in() {
    use axum::http::{header, StatusCode};
    let app = axum::Router::new().fallback(|| async {
        (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource""#,
            )],
            "sign in first",
        )
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let err = connect(&http("locked", &url), &ConnectOptions::default())
        .await
        .unwrap_err();
    let McpError::NeedsSignIn { challenge } = &err else {
        panic!("{err:?}")
    };
    assert!(
        challenge
            .as_deref()
            .unwrap_or("")
            .contains("resource_metadata"),
        "{challenge:?}"
    );
}

/// An answer over the message size limit ends with a clear error instead of filling memory;
/// answers under it (1 MB here) come through whole.
#[tokio::test]
async fn an_answer_over_the_size_limit_fails_clearly() {
    everything_js(); // the same install provides the SDK the script uses
    let script = test_servers_dir().join("big-result.mjs");
    let client = connect(
        &stdio("big", "node", vec![script.display().to_string()]),
        &ConnectOptions::default(),
    )
    .await
    .unwrap();
    let never = CancellationToken::new();
    let ok = client
        .call_tool("text", args(json!({"mb": 1})), &never, None)
        .await
        .unwrap();
    assert_eq!(convert_result("big.text", ok).data.len(), 1024 * 1024);
    let err = client
        .call_tool("text", args(json!({"mb": 20})), &never, None)
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::TooLarge(_)), "{err:?}");
    assert!(err.to_string().contains("larger than 16 MB"), "{err}");
    // The session goes on: the next answer under the limit comes through.
    let ok = client
        .call_tool("text", args(json!({"mb": 0.5})), &never, None)
        .await
        .unwrap();
    assert_eq!(convert_result("big.text", ok).data.len(), 512 * 1024);
}
