//! [`OAuthStandIn`]: a small OAuth authorization server and MCP server on 127.0.0.1, for tests
//! of MCP sign-in beyond the official conformance suite (the engine's hub, the CLI's
//! `mcp login`). Protected-resource and authorization-server metadata, dynamic client
//! registration, an authorization endpoint that approves at once (redirecting to the client's
//! loopback redirect URI, as the conformance suite's does), a token endpoint whose first token
//! is born expired (so its first use refreshes it) and whose tokens carry the scope last asked
//! for, and a minimal MCP endpoint (`initialize`, `tools/list` with one tool `whoami`,
//! `tools/call`) that answers 401 without a valid token and 403 `insufficient_scope` to a call
//! without [`WRITE`].
//!
//! [`OAuthStandIn::start_confidential`] makes it a server that registers clients as
//! confidential ones: registration hands out a client secret, and the token endpoint refuses
//! (401 `invalid_client`) a grant without it, in the form (`client_secret_post`) or in HTTP
//! Basic.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use serde_json::{json, Value};

/// What the stand-in saw and hands out.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// `grant_type` of every token request.
    pub grants: Vec<String>,
    /// `Authorization` of every MCP request (None when absent).
    pub bearers: Vec<Option<String>>,
    /// `scope` of every authorization request.
    pub scopes: Vec<String>,
    /// Tokens issued so far.
    pub issued: u32,
    /// The client secret each token request carried (form or HTTP Basic), in order.
    pub secrets: Vec<Option<String>>,
}

/// The client secret a confidential stand-in's registration hands out.
pub const CLIENT_SECRET: &str = "stand-in-client-secret";

/// What a call needs beyond listing tools (a step-up).
pub const WRITE: &str = "tools:write";

/// The running stand-in (see the module's documentation).
#[derive(Clone)]
pub struct OAuthStandIn {
    /// `http://127.0.0.1:PORT`: the MCP endpoints are `/mcp` and `/other/mcp`.
    pub base: String,
    seen: Arc<Mutex<Seen>>,
    /// Tokens the MCP endpoint accepts, with their scope.
    valid: Arc<Mutex<HashMap<String, String>>>,
    /// The authorization endpoint shows a login page instead of approving at once.
    login_page: Arc<std::sync::atomic::AtomicBool>,
    /// Registration hands out [`CLIENT_SECRET`] and the token endpoint requires it.
    confidential: bool,
}

impl OAuthStandIn {
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

async fn prm(State(s): State<OAuthStandIn>) -> Json<Value> {
    Json(json!({
        "resource": format!("{}/mcp", s.base),
        "authorization_servers": [s.base],
        "scopes_supported": ["tools:read"],
    }))
}

async fn as_metadata(State(s): State<OAuthStandIn>) -> Json<Value> {
    Json(json!({
        "issuer": s.base,
        "authorization_endpoint": format!("{}/authorize", s.base),
        "token_endpoint": format!("{}/token", s.base),
        "registration_endpoint": format!("{}/register", s.base),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported":
            if s.confidential { json!(["client_secret_basic"]) } else { json!(["none"]) },
    }))
}

async fn register(
    State(s): State<OAuthStandIn>,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    let mut client =
        json!({"client_id": "stand-in-client", "redirect_uris": body["redirect_uris"]});
    if s.confidential {
        client["client_secret"] = json!(CLIENT_SECRET);
        client["token_endpoint_auth_method"] = json!("client_secret_basic");
    }
    (StatusCode::CREATED, Json(client))
}

/// The client secret of a token request: `client_secret` in the form, or the password of
/// HTTP Basic (`client_id:secret`, each form-urlencoded, per RFC 6749 §2.3.1).
fn secret_of(headers: &HeaderMap, form: &HashMap<String, String>) -> Option<String> {
    use base64::Engine as _;
    if let Some(secret) = form.get("client_secret") {
        return Some(secret.clone());
    }
    let basic = headers
        .get("authorization")?
        .to_str()
        .ok()?
        .strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic.trim())
        .ok()?;
    let pair = String::from_utf8(decoded).ok()?;
    let (_, secret) = pair.split_once(':')?;
    // The stand-in's secret has no character that form-urlencoding changes.
    Some(secret.to_string())
}

/// Approves at once (no login page), like the conformance suite's authorization server —
/// unless [`OAuthStandIn::show_login_page`] was called.
async fn authorize(
    State(s): State<OAuthStandIn>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    s.seen
        .lock()
        .unwrap()
        .scopes
        .push(q.get("scope").cloned().unwrap_or_default());
    if s.login_page.load(std::sync::atomic::Ordering::SeqCst) {
        return axum::response::Html("<form>Your password: <input type=password></form>")
            .into_response();
    }
    Redirect::to(&format!(
        "{}?code=the-code&state={}&iss={}",
        q["redirect_uri"],
        q["state"],
        urlencode(&s.base)
    ))
    .into_response()
}

fn urlencode(s: &str) -> String {
    s.replace(':', "%3A").replace('/', "%2F")
}

async fn token(
    State(s): State<OAuthStandIn>,
    headers: HeaderMap,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    let grant = f.get("grant_type").cloned().unwrap_or_default();
    let secret = secret_of(&headers, &f);
    {
        let mut seen = s.seen.lock().unwrap();
        seen.grants.push(grant.clone());
        seen.secrets.push(secret.clone());
    }
    if s.confidential && secret.as_deref() != Some(CLIENT_SECRET) {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "invalid_client", "error_description": "client authentication failed"})),
        )
            .into_response();
    }
    // The first token is already expired (expires_in 0), so the first use refreshes it.
    Json(s.issue(if grant == "refresh_token" { 3600 } else { 0 })).into_response()
}

/// A minimal MCP server behind a bearer check: initialize, tools/list, notifications.
async fn mcp(
    State(s): State<OAuthStandIn>,
    headers: HeaderMap,
    Json(msg): Json<Value>,
) -> Response {
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
        // Anything else, `server/discover` among them, gets a 202 and never an answer, as
        // some servers written before 2026-07-28 do: the client must start over with the
        // `initialize` handshake (the sign-in tests fail if it does not).
        _ => return StatusCode::ACCEPTED.into_response(),
    };
    match id {
        Some(id) => Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

impl OAuthStandIn {
    /// Start it on a free port of 127.0.0.1 (in the current tokio runtime).
    pub async fn start() -> OAuthStandIn {
        start_stand_in(false).await
    }

    /// Start one that registers clients as confidential (see the module's documentation).
    pub async fn start_confidential() -> OAuthStandIn {
        start_stand_in(true).await
    }

    /// From now on the authorization endpoint shows a login page (a person must sign in).
    pub fn show_login_page(&self) {
        self.login_page
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// What it saw so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }
}

async fn start_stand_in(confidential: bool) -> OAuthStandIn {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let stand = OAuthStandIn {
        base,
        seen: Default::default(),
        valid: Default::default(),
        login_page: Default::default(),
        confidential,
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
