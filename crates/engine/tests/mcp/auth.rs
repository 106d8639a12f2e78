//! Sign-in to a remote server through the engine's hub, against a small authorization server
//! and MCP server stand-in on 127.0.0.1: what the official conformance suite
//! (`scripts/mcp-conformance.sh`) does not cover — the hub's "needs sign-in" status and its
//! Sign in, the tokens in the keyring (and nowhere in the app's files), a refresh of an expired
//! token saved back to the keyring, and tokens never sent to another URL.
//! Needs the keyring: `scripts/with-session.sh cargo test -p artifactflow-engine --test mcp`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use engine::engine::EngineOptions;
use engine::mcp::{auth, McpError, ServerStatus};
use engine::paths::AppPaths;
use engine::secrets::SecretStore;
use engine::Engine;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(30);

/// What the stand-in saw and hands out.
#[derive(Default)]
struct Seen {
    /// `grant_type` of every token request.
    grants: Vec<String>,
    /// `Authorization` of every MCP request (None when absent).
    bearers: Vec<Option<String>>,
    /// `scope` of every authorization request.
    scopes: Vec<String>,
    issued: u32,
}

/// What a call needs beyond listing tools (a step-up).
const WRITE: &str = "tools:write";

#[derive(Clone)]
struct Stand {
    base: String,
    seen: Arc<Mutex<Seen>>,
    /// Tokens the MCP endpoint accepts, with their scope.
    valid: Arc<Mutex<HashMap<String, String>>>,
}

impl Stand {
    fn issue(&self, expires_in: u64) -> Value {
        let mut seen = self.seen.lock().unwrap();
        seen.issued += 1;
        let access = format!("access-{}-{}", seen.issued, "x".repeat(1500));
        // The scope last asked for at /authorize.
        let scope = seen.scopes.last().cloned().unwrap_or_default();
        self.valid
            .lock()
            .unwrap()
            .insert(access.clone(), scope.clone());
        json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": expires_in,
            "refresh_token": format!("refresh-{}", seen.issued),
            "scope": scope,
            // Not needed to call the server: must not be kept.
            "id_token": "an-id-token-the-app-does-not-keep",
        })
    }
}

async fn prm(State(s): State<Stand>) -> Json<Value> {
    Json(json!({
        "resource": format!("{}/mcp", s.base),
        "authorization_servers": [s.base],
        "scopes_supported": ["tools:read"],
    }))
}

async fn as_metadata(State(s): State<Stand>) -> Json<Value> {
    Json(json!({
        "issuer": s.base,
        "authorization_endpoint": format!("{}/authorize", s.base),
        "token_endpoint": format!("{}/token", s.base),
        "registration_endpoint": format!("{}/register", s.base),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }))
}

async fn register(Json(body): Json<Value>) -> (StatusCode, Json<Value>) {
    (
        StatusCode::CREATED,
        Json(json!({"client_id": "stand-in-client", "redirect_uris": body["redirect_uris"]})),
    )
}

/// Approves at once (no login page), like the conformance suite's authorization server.
async fn authorize(State(s): State<Stand>, Query(q): Query<HashMap<String, String>>) -> Redirect {
    s.seen
        .lock()
        .unwrap()
        .scopes
        .push(q.get("scope").cloned().unwrap_or_default());
    Redirect::to(&format!(
        "{}?code=the-code&state={}&iss={}",
        q["redirect_uri"],
        q["state"],
        urlencode(&s.base)
    ))
}

fn urlencode(s: &str) -> String {
    s.replace(':', "%3A").replace('/', "%2F")
}

async fn token(State(s): State<Stand>, Form(f): Form<HashMap<String, String>>) -> Json<Value> {
    let grant = f.get("grant_type").cloned().unwrap_or_default();
    s.seen.lock().unwrap().grants.push(grant.clone());
    // The first token is already expired (expires_in 0), so the first use refreshes it.
    Json(s.issue(if grant == "refresh_token" { 3600 } else { 0 }))
}

/// A minimal MCP server behind a bearer check: initialize, tools/list, notifications.
async fn mcp(State(s): State<Stand>, headers: HeaderMap, Json(msg): Json<Value>) -> Response {
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_start_matches("Bearer ").to_string());
    s.seen.lock().unwrap().bearers.push(bearer.clone());
    let scope = bearer.and_then(|b| s.valid.lock().unwrap().get(&b).cloned());
    let Some(scope) = scope else {
        let challenge = format!(
            r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource/mcp", scope="tools:read""#,
            s.base
        );
        return (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", challenge)],
            "sign in",
        )
            .into_response();
    };
    let id = msg.get("id").cloned();
    let result = match msg["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stand-in", "version": "1"},
        }),
        "tools/list" => json!({"tools": [
            {"name": "whoami", "inputSchema": {"type": "object", "properties": {}}}
        ]}),
        "tools/call" if !scope.split(' ').any(|s| s == WRITE) => {
            let challenge = format!(
                r#"Bearer error="insufficient_scope", scope="tools:read {WRITE}", resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
                s.base
            );
            return (
                StatusCode::FORBIDDEN,
                [("www-authenticate", challenge)],
                "more scope",
            )
                .into_response();
        }
        "tools/call" => json!({"content": [{"type": "text", "text": format!("scope {scope}")}]}),
        _ => return StatusCode::ACCEPTED.into_response(),
    };
    match id {
        Some(id) => Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

async fn start_stand_in() -> Stand {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let stand = Stand {
        base,
        seen: Default::default(),
        valid: Default::default(),
    };
    let app = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route(
            "/mcp",
            post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        )
        .route("/other/mcp", post(mcp))
        .with_state(stand.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    stand
}

fn open(home: &std::path::Path, name: &str, url: &str) -> Engine {
    let paths = AppPaths::resolve(Some(home)).unwrap();
    paths.prepare().unwrap();
    std::fs::write(
        paths.config_dir.join("mcp.json"),
        json!({"mcpServers": {name: {"url": url}}}).to_string(),
    )
    .unwrap();
    Engine::open_with(
        paths,
        Arc::new(engine::events::discard()),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap()
}

/// Every file under `dir`, read as text (lossy).
fn all_text(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&all_text(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_through_the_hub_keeps_tokens_in_the_keyring_and_refreshes_them() {
    let stand = start_stand_in().await;
    let home = tempfile::tempdir().unwrap();
    let name = format!("remote-{}", std::process::id());
    let url = format!("{}/mcp", stand.base);
    let engine = open(home.path(), &name, &url);
    let store = SecretStore::for_data_dir(&engine.ctx.paths().data_dir);
    auth::sign_out(&store, &name).unwrap();

    // No token: the server's 401 makes the status "needs sign-in", saying how.
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    let ServerStatus::NeedsSignIn { reason } = status else {
        panic!("expected needs sign-in, got {status:?}")
    };
    assert!(reason.contains(&format!("mcp login {name}")), "{reason}");

    // Sign in (the browser replaced by the headless redirect follower): ready, one tool.
    let signed = engine
        .mcp()
        .sign_in(&name, auth::follow_redirects_headlessly())
        .await
        .expect("signed in");
    assert_eq!(signed.scopes, ["tools:read"]);
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert_eq!(status, ServerStatus::Ready { tool_count: 1 });
    {
        let seen = stand.seen.lock().unwrap();
        // The scope came from the server's challenge.
        assert_eq!(seen.scopes, ["tools:read"]);
        // The first token was born expired: its first use refreshed it.
        assert_eq!(seen.grants, ["authorization_code", "refresh_token"]);
        let sent: Vec<&str> = seen.bearers.iter().flatten().map(String::as_str).collect();
        assert!(sent.iter().all(|b| b.starts_with("access-2-")), "{sent:?}");
    }

    // The refreshed tokens are in the keyring (several entries: longer than one Windows
    // entry), without the id token; nothing of them is in the app's files.
    let kept = store
        .get_chunked(&format!("mcp-oauth/{name}"))
        .unwrap()
        .expect("tokens in the keyring");
    assert!(kept.contains("access-2-") && kept.contains("refresh-2"));
    assert!(!kept.contains("access-1-") && !kept.contains("id-token"));
    assert!(kept.chars().count() > engine::secrets::CHUNK_CHARS);
    let files = all_text(home.path());
    assert!(!files.contains("access-2-") && !files.contains("refresh-2"));
    drop(engine);

    // The same name at another URL: the tokens are not sent there.
    let other = format!("{}/other/mcp", stand.base);
    let engine = open(home.path(), &name, &other);
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert!(
        matches!(status, ServerStatus::NeedsSignIn { .. }),
        "{status:?}"
    );
    let last = stand.seen.lock().unwrap().bearers.last().cloned().flatten();
    assert_eq!(last, None, "a token was sent to another URL");
    drop(engine);
    auth::sign_out(&store, &name).unwrap();
}

/// A call the server refuses for lack of scope (403 `insufficient_scope`) fails saying to sign
/// in; the next Sign in asks for the old and the new scopes (step-up) and the call then works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_for_scope_is_granted_after_signing_in_again() {
    let stand = start_stand_in().await;
    let home = tempfile::tempdir().unwrap();
    let name = format!("stepup-{}", std::process::id());
    let engine = open(home.path(), &name, &format!("{}/mcp", stand.base));
    let store = SecretStore::for_data_dir(&engine.ctx.paths().data_dir);
    auth::sign_out(&store, &name).unwrap();
    engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    engine
        .mcp()
        .sign_in(&name, auth::follow_redirects_headlessly())
        .await
        .expect("signed in");
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert_eq!(status, ServerStatus::Ready { tool_count: 1 });

    let call = || async {
        let client = engine.mcp().client(&name).expect("running");
        client
            .call_tool(
                "whoami",
                Default::default(),
                &CancellationToken::new(),
                None,
            )
            .await
    };
    let refused = call().await.unwrap_err();
    assert!(
        matches!(refused, McpError::NeedsSignIn { .. }),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("sign in"), "{refused}");

    let signed = engine
        .mcp()
        .sign_in(&name, auth::follow_redirects_headlessly())
        .await
        .expect("signed in again");
    assert_eq!(signed.scopes, ["tools:read", WRITE]);
    assert_eq!(
        stand.seen.lock().unwrap().scopes,
        ["tools:read", &format!("tools:read {WRITE}")]
    );
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert_eq!(status, ServerStatus::Ready { tool_count: 1 });
    let result = call().await.expect("the call works with the new scope");
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        format!("scope tools:read {WRITE}")
    );
    drop(engine);
    auth::sign_out(&store, &name).unwrap();
}
