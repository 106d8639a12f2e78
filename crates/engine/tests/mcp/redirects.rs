//! Redirects to another origin, on every path that sends a request to a remote MCP server or
//! its authorization server: the Streamable HTTP transport (a configured key header, the
//! `initialize` body), and OAuth registration and token calls. Each time server A answers 307
//! to server B on another port, and B must receive nothing. A last test checks the engine's
//! source: no HTTP client is built other than by `net::client_builder`.
//! The OAuth test needs the keyring: `scripts/with-session.sh cargo test ... --test mcp`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use engine::mcp::client::{connect, ConnectOptions};
use engine::mcp::{auth, McpTransport};
use engine::secrets::{SecretResolver, SecretStore};
use serde_json::json;

use crate::support::http;

const KEY: &str = "sk-mcp-redirect-0123456789abcdef";

/// What B received: method, path, headers and body of each request.
type Seen = Arc<Mutex<Vec<String>>>;

async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// Server B: records every request and answers 200 with an empty JSON object.
async fn recorder() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let app = Router::new().fallback(
        move |method: Method, uri: Uri, headers: HeaderMap, body: String| {
            let log = log.clone();
            async move {
                log.lock()
                    .unwrap()
                    .push(format!("{method} {uri} {headers:?} {body}"));
                axum::Json(json!({}))
            }
        },
    );
    (serve(app).await, seen)
}

fn redirect_to(target: &str, uri: &Uri) -> Response {
    let location = format!(
        "{target}{}",
        uri.path_and_query().map(|p| p.as_str()).unwrap_or("/")
    );
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, location)],
    )
        .into_response()
}

fn resolver_with_key(dir: &std::path::Path, store: Option<SecretStore>) -> Arc<SecretResolver> {
    let dotenv = dir.join(".env");
    std::fs::write(&dotenv, format!("AF_MCP_REDIRECT_KEY={KEY}\n")).unwrap();
    Arc::new(SecretResolver::new(store, Some(dotenv)))
}

#[tokio::test]
async fn the_transport_sends_no_header_or_body_to_another_origin() {
    let (b, b_seen) = recorder().await;
    let target = b.clone();
    let a = serve(Router::new().fallback(move |uri: Uri| {
        let target = target.clone();
        async move { redirect_to(&target, &uri) }
    }))
    .await;
    let mut cfg = http("redirecting", &format!("{a}/mcp"));
    let McpTransport::Http { headers, .. } = &mut cfg.transport else {
        unreachable!()
    };
    headers.insert("x-api-key".into(), "{{AF_MCP_REDIRECT_KEY}}".into());
    let dir = tempfile::tempdir().unwrap();
    let opts = ConnectOptions {
        secrets: Some(resolver_with_key(dir.path(), None)),
        ..Default::default()
    };
    let err = connect(&cfg, &opts).await.unwrap_err();
    let seen = b_seen.lock().unwrap().clone();
    assert!(
        seen.is_empty(),
        "B received the request (key header, initialize body): {seen:?}"
    );
    assert!(!format!("{err:?}").contains(KEY), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("another origin"), "{text}");
    assert!(
        text.contains(&a) && text.contains(&b),
        "names both origins: {text}"
    );
}

/// Authorization server and MCP server A on one port; the request to `redirected` gets a 307
/// to B. Registration approves at once, `/authorize` sends the browser straight back.
/// Returns A's base URL and how many requests reached `redirected`.
async fn authorization_server(redirected: &'static str, b: String) -> (String, Arc<AtomicUsize>) {
    let base: Arc<Mutex<String>> = Arc::default();
    let me = base.clone();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new().fallback(move |uri: Uri| {
        let (b, me) = (b.clone(), me.lock().unwrap().clone());
        let counter = counter.clone();
        async move {
            if uri.path() == redirected {
                counter.fetch_add(1, Ordering::SeqCst);
                return redirect_to(&b, &uri);
            }
            let json = |v: serde_json::Value| axum::Json(v).into_response();
            match uri.path() {
                "/mcp" => (
                    StatusCode::UNAUTHORIZED,
                    [(
                        header::WWW_AUTHENTICATE,
                        format!(
                            r#"Bearer resource_metadata="{me}/.well-known/oauth-protected-resource/mcp""#
                        ),
                    )],
                )
                    .into_response(),
                p if p.starts_with("/.well-known/oauth-protected-resource") => json(json!({
                    "resource": format!("{me}/mcp"),
                    "authorization_servers": [me],
                })),
                p if p.starts_with("/.well-known/") => json(json!({
                    "issuer": me,
                    "authorization_endpoint": format!("{me}/authorize"),
                    "token_endpoint": format!("{me}/token"),
                    "registration_endpoint": format!("{me}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                })),
                "/register" => (
                    StatusCode::CREATED,
                    axum::Json(json!({
                        "client_id": "redirect-client",
                        "client_secret": KEY,
                        "redirect_uris": ["http://127.0.0.1/callback"],
                    })),
                )
                    .into_response(),
                "/authorize" => {
                    let pairs: std::collections::HashMap<String, String> =
                        reqwest::Url::parse(&format!("http://x{uri}"))
                            .unwrap()
                            .query_pairs()
                            .into_owned()
                            .collect();
                    let back = format!(
                        "{}?code=the-code&state={}",
                        pairs["redirect_uri"], pairs["state"]
                    );
                    (StatusCode::FOUND, [(header::LOCATION, back)]).into_response()
                }
                _ => StatusCode::NOT_FOUND.into_response(),
            }
        }
    });
    let url = serve(app).await;
    *base.lock().unwrap() = url.clone();
    (url, hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_registration_and_token_calls_stay_on_their_origin() {
    for redirected in ["/register", "/token"] {
        let (b, b_seen) = recorder().await;
        let (a, hits) = authorization_server(redirected, b).await;
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::new(
            format!("artifactflow-test-redirects-{}", std::process::id()),
            dir.path().join("index"),
        );
        let secrets = resolver_with_key(dir.path(), Some(store));
        let cfg = http("oauth-redirect", &format!("{a}/mcp"));
        let result = auth::sign_in(&cfg, &secrets, None, auth::follow_redirects_headlessly()).await;
        let seen = b_seen.lock().unwrap().clone();
        assert!(
            seen.is_empty(),
            "{redirected}: B received the request: {seen:?}"
        );
        assert_eq!(
            hits.load(Ordering::SeqCst),
            1,
            "{redirected} was asked once"
        );
        let err = result.expect_err("the redirected call fails the sign-in");
        assert!(!err.to_string().contains(KEY), "{err}");
        // The test's keyring entries go (a failed sign-in may have saved the client).
        if let Some(store) = secrets.store() {
            for name in store.names() {
                let _ = store.delete(&name);
            }
        }
    }
}

/// Every HTTP client comes from `net::client_builder`: a plain one (which follows redirects
/// anywhere with every custom header) built elsewhere fails this test.
#[test]
fn no_http_client_is_built_outside_the_one_builder() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = [
        root.join("src"),
        root.join("../cli/src"),
        root.join("../../src-tauri/src"),
    ];
    let forbidden = [
        "Client::new(",
        "Client::builder(",
        "Client::default(",
        "ClientBuilder::new(",
        "reqwest::get(",
    ];
    let mut found = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = dirs.into_iter().filter(|d| d.exists()).collect();
    let mut files = 0;
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("src/net.rs") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            // `Client::new(` as a name of its own, not the end of `McpClient::new(`.
            let builds = forbidden.iter().any(|f| {
                code.match_indices(f)
                    .any(|(at, _)| !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
            });
            if builds {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(files > 50, "the walk found the sources ({files} files)");
    assert!(
        found.is_empty(),
        "HTTP clients built outside net::client_builder:\n{}",
        found.join("\n")
    );
}
