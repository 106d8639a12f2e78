//! OAuth for remote MCP servers, per the 2025-11-25 authorization spec, on rmcp's `auth`
//! module (which does the protocol: protected-resource and authorization-server metadata
//! discovery, dynamic client registration, client ID metadata documents, PKCE, the `resource`
//! indicator, scope selection from `WWW-Authenticate`, refresh).
//!
//! What we add:
//! - [`sign_in`]: the interactive flow. A loopback listener on `127.0.0.1` (random port) is the
//!   redirect URI; the browser opener is a parameter (the desktop opens the system browser, the
//!   CLI too, tests use [`follow_redirects_headlessly`]). A challenge from the server (a 401 or
//!   a 403 `insufficient_scope`) seeds discovery and the scopes; for a step-up the scopes
//!   already granted are kept.
//! - [`KeyringCredentials`]: tokens live in the OS keyring only (never in files, logs, events
//!   or errors), through [`SecretStore::set_chunked`] (long values split in numbered entries
//!   for Windows' 2,560-byte limit). Only what is needed is kept: the client id (and the
//!   client secret when dynamic registration handed one out), the access and refresh tokens,
//!   their lifetime and scopes, the issuer, and the server URL they belong to (tokens saved for
//!   another URL are never sent).
//! - Dynamic registration is done here rather than inside rmcp's session ([`register`]), as
//!   rmcp keeps a registered client's secret only in memory: a server that registers the app
//!   as a confidential client would refuse its refresh after a restart.
//! - [`authorized_client`]: for [`super::connect`], an rmcp `AuthClient` over the stored tokens
//!   (it refreshes them when they expire, and saves the new ones back to the keyring).
//! - Every OAuth request (discovery, registration, token, refresh) goes through
//!   [`NetOAuthClient`], built by [`crate::net::client_builder`]: discovery and registration
//!   follow redirects by the rules for requests without secrets (never a downgrade to `http`,
//!   never a body replayed to another origin), and the requests rmcp asks not to follow (the
//!   token and refresh calls, which carry the code, the refresh token and the client secret)
//!   follow none.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, CredentialStore, OAuthClientConfig, OAuthHttpClient,
    OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest,
    OAuthState, OAuthTokenResponse, StoredCredentials, WWWAuthenticateParams,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::config::{McpServerConfig, McpTransport};
use crate::secrets::{SecretResolver, SecretStore};

/// How long [`sign_in`] waits for the browser to come back.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// The name the app registers under (dynamic client registration).
pub const CLIENT_NAME: &str = "ArtifactFlow";

/// Why signing in failed. Messages say what to do; they never hold tokens or secrets.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SignInError {
    /// No such server in mcp.json.
    #[error("there is no MCP server `{0}` in mcp.json")]
    UnknownServer(String),
    /// The server is not a remote one.
    #[error("server `{0}` is a local (stdio) server: only remote servers sign in")]
    NotRemote(String),
    /// The keyring could not store or read the tokens.
    #[error("the system keyring failed ({0}); sign-in needs it to keep the tokens")]
    Keyring(String),
    /// No keyring store was given.
    #[error("no keyring is available to keep the tokens; sign-in needs one")]
    NoKeyring,
    /// The loopback listener could not start.
    #[error("cannot listen on 127.0.0.1 for the sign-in redirect: {0}")]
    Listener(String),
    /// The browser could not be opened.
    #[error("cannot open the browser ({0}); open the sign-in address yourself")]
    Browser(String),
    /// The browser did not come back in time.
    #[error("the sign-in did not finish within {} minutes; try again", .0.as_secs() / 60)]
    TimedOut(Duration),
    /// The authorization server refused (`error=` in the redirect).
    #[error("the authorization server refused the sign-in: {0}")]
    Refused(String),
    /// Discovery, registration or the token exchange failed.
    #[error("signing in to `{server}` failed: {message}")]
    OAuth {
        /// The server.
        server: String,
        /// What rmcp said (no token values: rmcp redacts them).
        message: String,
    },
}

fn oauth_error(server: &str, e: impl std::fmt::Display) -> SignInError {
    SignInError::OAuth {
        server: server.to_string(),
        message: e.to_string(),
    }
}

/// The keyring key of a server's tokens.
fn key(server: &str) -> String {
    format!("mcp-oauth/{server}")
}

/// What is kept in the keyring for one server: only what is needed to use and refresh the
/// tokens (no id token, no vendor extras).
#[derive(Serialize, Deserialize)]
struct Saved {
    /// The server URL these tokens were issued for.
    url: String,
    client_id: String,
    /// The secret dynamic registration handed out with `client_id` (a confidential client),
    /// needed to refresh. A configured client's secret is not kept (it comes from mcp.json).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    access_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_in: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    received_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issuer: Option<String>,
}

impl Saved {
    fn from_stored(url: &str, c: &StoredCredentials, client_secret: Option<String>) -> Saved {
        // Read the standard fields through serde (the token type's own accessors are in the
        // `oauth2` crate, which rmcp does not re-export); vendor extras are dropped.
        let token = c
            .token_response
            .as_ref()
            .and_then(|t| serde_json::to_value(t).ok())
            .unwrap_or_default();
        let text = |k: &str| token.get(k).and_then(|v| v.as_str()).map(str::to_string);
        Saved {
            url: url.to_string(),
            client_id: c.client_id.clone(),
            client_secret,
            access_token: text("access_token"),
            refresh_token: text("refresh_token"),
            expires_in: token.get("expires_in").and_then(|v| v.as_u64()),
            scopes: c.granted_scopes.clone(),
            received_at: c.token_received_at,
            issuer: c.issuer.clone(),
        }
    }

    fn into_stored(self) -> Result<StoredCredentials, AuthError> {
        let token = match &self.access_token {
            Some(access) => {
                let mut v = json!({"access_token": access, "token_type": "bearer"});
                if let Some(r) = &self.refresh_token {
                    v["refresh_token"] = json!(r);
                }
                if let Some(e) = self.expires_in {
                    v["expires_in"] = json!(e);
                }
                if !self.scopes.is_empty() {
                    v["scope"] = json!(self.scopes.join(" "));
                }
                Some(
                    serde_json::from_value::<OAuthTokenResponse>(v)
                        .map_err(|e| AuthError::InternalError(format!("stored tokens: {e}")))?,
                )
            }
            None => None,
        };
        Ok(
            StoredCredentials::new(self.client_id, token, self.scopes, self.received_at)
                .with_issuer(self.issuer),
        )
    }
}

/// rmcp's credential store over the OS keyring, for one server at one URL. Clones share the
/// registered client's secret: read with the tokens, and saved back with every refresh.
#[derive(Clone)]
pub struct KeyringCredentials {
    store: SecretStore,
    server: String,
    url: String,
    client_secret: Arc<std::sync::Mutex<Option<String>>>,
}

impl KeyringCredentials {
    /// The tokens of server `server` at `url`.
    pub fn new(store: SecretStore, server: &str, url: &str) -> Self {
        KeyringCredentials {
            store,
            server: server.to_string(),
            url: url.to_string(),
            client_secret: Default::default(),
        }
    }

    /// The secret of the dynamically registered client, as last loaded or registered.
    fn client_secret(&self) -> Option<String> {
        self.client_secret
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Keep `secret` with the tokens from the next save on (a fresh registration's).
    fn set_client_secret(&self, secret: Option<String>) {
        *self.client_secret.lock().unwrap_or_else(|p| p.into_inner()) = secret;
    }

    /// Are there tokens for this server and URL? Keyring failures count as "no".
    pub async fn has_tokens(&self) -> bool {
        matches!(self.load().await, Ok(Some(c)) if c.token_response.is_some())
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&SecretStore, &str) -> Result<T, crate::secrets::SecretError> + Send + 'static,
    ) -> Result<T, AuthError> {
        let store = self.store.clone();
        let key = key(&self.server);
        tokio::task::spawn_blocking(move || f(&store, &key))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }
}

#[async_trait::async_trait]
impl CredentialStore for KeyringCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(text) = self.blocking(|s, k| s.get_chunked(k)).await? else {
            return Ok(None);
        };
        let Ok(saved) = serde_json::from_str::<Saved>(&text) else {
            tracing::warn!(server = %self.server, "the stored sign-in is unreadable; sign in again");
            return Ok(None);
        };
        if saved.url != self.url {
            // Signed in for another URL: never send those tokens here.
            return Ok(None);
        }
        self.set_client_secret(saved.client_secret.clone());
        saved.into_stored().map(Some)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let saved = Saved::from_stored(&self.url, &credentials, self.client_secret());
        let text =
            serde_json::to_string(&saved).map_err(|e| AuthError::InternalError(e.to_string()))?;
        self.blocking(move |s, k| s.set_chunked(k, &text)).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.blocking(|s, k| s.delete_chunked(k)).await
    }
}

/// Forget a server's tokens (sign out).
pub fn sign_out(store: &SecretStore, server: &str) -> Result<(), SignInError> {
    store
        .delete_chunked(&key(server))
        .map_err(|e| SignInError::Keyring(e.to_string()))
}

fn remote_url(cfg: &McpServerConfig) -> Option<&str> {
    match &cfg.transport {
        McpTransport::Http { url, .. } => Some(url),
        McpTransport::Stdio { .. } => None,
    }
}

/// Longest OAuth answer read (metadata, a registration, tokens).
const MAX_OAUTH_BODY_BYTES: usize = 1024 * 1024;

/// Longest wait for one OAuth request when rmcp suggests none.
const OAUTH_TIMEOUT: Duration = Duration::from_secs(30);

/// The HTTP client of every OAuth request rmcp makes, on [`crate::net`]'s rules (rmcp's own
/// follows a discovery or registration redirect anywhere, to `http` too). What it gives up:
/// rmcp's own client also checks the addresses a discovered host name resolves to; with a
/// client of ours rmcp checks the discovered URLs' host text only (IP literals, metadata
/// host names).
pub struct NetOAuthClient {
    /// Discovery and registration: nothing secret in them.
    follow: reqwest::Client,
    /// Token and refresh calls: a redirect is handed back to rmcp, never followed.
    stop: reqwest::Client,
}

impl NetOAuthClient {
    /// Both clients, or why they could not start.
    pub fn build() -> Result<Arc<dyn OAuthHttpClient>, AuthError> {
        let build = |builder: reqwest::ClientBuilder| {
            builder
                .build()
                .map_err(|e| AuthError::InternalError(e.to_string()))
        };
        Ok(Arc::new(NetOAuthClient {
            follow: build(crate::net::client_builder(crate::net::Secrets::None))?,
            stop: build(
                crate::net::client_builder(crate::net::Secrets::Carried)
                    .redirect(reqwest::redirect::Policy::none()),
            )?,
        }))
    }
}

impl OAuthHttpClient for NetOAuthClient {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let OAuthHttpRequest {
                request,
                redirect_policy,
                timeout,
                ..
            } = request;
            let client = match redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let mut request = reqwest::Request::try_from(request)
                .map_err(|e| Box::new(e) as OAuthHttpClientError)?;
            *request.timeout_mut() = Some(timeout.unwrap_or(OAUTH_TIMEOUT));
            let mut response = client
                .execute(request)
                .await
                .map_err(|e| Box::new(e) as OAuthHttpClientError)?;
            let mut answer = axum::http::Response::builder()
                .status(response.status())
                .version(response.version());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| Box::new(e) as OAuthHttpClientError)?
            {
                if body.len() + chunk.len() > MAX_OAUTH_BODY_BYTES {
                    return Err(format!(
                        "the OAuth answer is larger than {MAX_OAUTH_BODY_BYTES} bytes"
                    )
                    .into());
                }
                body.extend_from_slice(&chunk);
            }
            answer
                .body(body)
                .map_err(|e| Box::new(e) as OAuthHttpClientError)
        })
    }
}

/// rmcp's authorization manager for `url`, its requests made by [`NetOAuthClient`].
async fn manager_for(url: &str) -> Result<AuthorizationManager, AuthError> {
    AuthorizationManager::new_with_oauth_http_client(url, NetOAuthClient::build()?).await
}

/// The configured client secret with its `{{VAR}}` filled from the keyring/environment.
async fn client_secret(cfg: &McpServerConfig, secrets: &Arc<SecretResolver>) -> Option<String> {
    let template = cfg.oauth.as_ref()?.client_secret.clone()?;
    let filled = secrets.fill_async(vec![template]).await;
    filled.into_iter().next().map(|f| f.text)
}

/// An rmcp HTTP client that sends the server's stored token (refreshing it when it expires),
/// or `None` when the user has not signed in to this server at this URL.
pub async fn authorized_client(
    cfg: &McpServerConfig,
    secrets: &Arc<SecretResolver>,
) -> Option<AuthClient<reqwest::Client>> {
    let url = remote_url(cfg)?;
    let store = secrets.store()?.clone();
    let credentials = KeyringCredentials::new(store, &cfg.name, url);
    if !credentials.has_tokens().await {
        return None;
    }
    let mut manager = match manager_for(url).await {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!(server = %cfg.name, "OAuth set-up failed: {e}");
            return None;
        }
    };
    manager.set_credential_store(credentials.clone());
    match manager.initialize_from_store().await {
        Ok(true) => {}
        Ok(false) => return None,
        Err(e) => {
            // Discovery failed (the authorization server is down): connect without a token,
            // the server's 401 then says "needs sign-in".
            tracing::warn!(server = %cfg.name, "restoring the sign-in failed: {e}");
            return None;
        }
    }
    // A confidential client refreshes with its secret: a pre-registered one's from mcp.json,
    // else the one dynamic registration handed out (kept with the tokens).
    let configured = cfg.oauth.as_ref().and_then(|o| o.client_id.clone());
    let client = match configured {
        Some(id) => client_secret(cfg, secrets).await.map(|secret| (id, secret)),
        None => match (credentials.client_secret(), credentials.load().await) {
            (Some(secret), Ok(Some(stored))) => Some((stored.client_id, secret)),
            _ => None,
        },
    };
    if let Some((id, secret)) = client {
        let _ = manager.configure_client(
            OAuthClientConfig::new(id, "http://127.0.0.1/callback").with_client_secret(secret),
        );
    }
    let http = match sign_in_client() {
        Ok(http) => http,
        Err(e) => {
            tracing::warn!(server = %cfg.name, "the HTTP client could not start: {e}");
            return None;
        }
    };
    Some(AuthClient::new(http, manager))
}

/// Opens the sign-in page: the system browser in the app and CLI, a headless stand-in in tests.
pub type BrowserOpener = Box<dyn FnOnce(String) -> Result<(), String> + Send>;

/// What a finished sign-in got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The scopes granted (as the token response or the request said).
    pub scopes: Vec<String>,
}

/// The scopes a challenge asks for (`scope="a b"` in `WWW-Authenticate`).
fn challenge_scopes(challenge: &str, url: &str) -> Vec<String> {
    let Ok(base) = reqwest::Url::parse(url) else {
        return Vec::new();
    };
    WWWAuthenticateParams::parse(challenge, &base)
        .scope
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Sign in to remote server `cfg` interactively: discover its authorization server, register
/// (or use the configured client), open the authorization page with `open`, wait for the
/// redirect to a loopback listener, exchange the code (PKCE) and keep the tokens in the
/// keyring. `challenge` is the server's `WWW-Authenticate` value when it asked (a 401, or a 403
/// `insufficient_scope` for a step-up: the scopes already granted are asked for again with
/// the new ones).
pub async fn sign_in(
    cfg: &McpServerConfig,
    secrets: &Arc<SecretResolver>,
    challenge: Option<&str>,
    open: BrowserOpener,
) -> Result<SignedIn, SignInError> {
    let url = remote_url(cfg).ok_or_else(|| SignInError::NotRemote(cfg.name.clone()))?;
    let store = secrets.store().ok_or(SignInError::NoKeyring)?.clone();
    let credentials = KeyringCredentials::new(store, &cfg.name, url);
    let previous = credentials
        .load()
        .await
        .map_err(|e| SignInError::Keyring(e.to_string()))?;
    // A new sign-in registers again (or uses the configured client): the old secret goes.
    credentials.set_client_secret(None);

    let listener = Loopback::bind().await?;
    let redirect_uri = listener.redirect_uri();

    let mut manager = manager_for(url)
        .await
        .map_err(|e| oauth_error(&cfg.name, e))?;
    manager.set_credential_store(credentials.clone());
    let mut request = AuthorizationRequest::new(&redirect_uri).with_client_name(CLIENT_NAME);
    let oauth = cfg.oauth.clone().unwrap_or_default();
    if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id);
        if let Some(secret) = client_secret(cfg, secrets).await {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(metadata_url) = &oauth.client_metadata_url {
        request = request.with_client_metadata_url(metadata_url);
    }
    let mut scopes = oauth.scopes.clone();
    // Asked from the user's side (Sign in): what a refused call or the server asks for.
    let asked = match challenge {
        Some(_) => None,
        None => challenge_for(&cfg.name, url).await,
    };
    if let Some(challenge) = challenge.or(asked.as_deref()) {
        request = request.with_challenge(challenge);
        let wanted = challenge_scopes(challenge, url);
        if !wanted.is_empty() {
            // Step-up: keep what was granted, add what the server now asks for.
            if let Some(prev) = &previous {
                for s in &prev.granted_scopes {
                    if !scopes.contains(s) {
                        scopes.push(s.clone());
                    }
                }
            }
            for s in wanted {
                if !scopes.contains(&s) {
                    scopes.push(s);
                }
            }
        }
    }
    if !scopes.is_empty() {
        request = request.with_scopes(scopes.clone());
    }

    let mut state = if oauth.client_id.is_none() && oauth.client_metadata_url.is_none() {
        let challenge = challenge.or(asked.as_deref());
        let (session, secret) = register(manager, request, &redirect_uri, challenge, &scopes)
            .await
            .map_err(|e| oauth_error(&cfg.name, e))?;
        credentials.set_client_secret(secret);
        OAuthState::Session(session)
    } else {
        let mut state = OAuthState::Unauthorized(manager);
        state
            .start_authorization(request)
            .await
            .map_err(|e| oauth_error(&cfg.name, e))?;
        state
    };
    let auth_url = state
        .get_authorization_url()
        .await
        .map_err(|e| oauth_error(&cfg.name, e))?;
    tracing::info!(server = %cfg.name, "opening the sign-in page");
    open(auth_url).map_err(SignInError::Browser)?;

    let callback = listener.wait(SIGN_IN_TIMEOUT).await?;
    let callback = AuthorizationCallback::from_redirect_url(&callback)
        .map_err(|e| oauth_error(&cfg.name, e))?;
    state
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(|e| oauth_error(&cfg.name, e))?;
    let granted = match state.get_credentials().await {
        Ok((_, Some(token))) => serde_json::to_value(&token)
            .ok()
            .and_then(|v| v.get("scope")?.as_str().map(str::to_string))
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or(scopes),
        _ => scopes,
    };
    tracing::info!(server = %cfg.name, "signed in");
    Ok(SignedIn { scopes: granted })
}

/// Start an authorization session with a client registered here (dynamic client
/// registration), as rmcp's `start_authorization` would register it — the same discovery from
/// `challenge`, the same scopes — but keeping what the registration returns: the client's
/// secret, when the authorization server made it a confidential client. The session then uses
/// the client as a pre-registered one (with its secret for the code exchange).
async fn register(
    mut manager: AuthorizationManager,
    request: AuthorizationRequest,
    redirect_uri: &str,
    challenge: Option<&str>,
    scopes: &[String],
) -> Result<(AuthorizationSession, Option<String>), AuthError> {
    let resolution = manager.resolve_metadata_from_challenge(challenge).await?;
    manager.set_metadata(resolution.metadata);
    let scopes = if scopes.is_empty() {
        manager.select_scopes(None, &[])
    } else {
        scopes.to_vec()
    };
    let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let client = manager
        .register_client(CLIENT_NAME, redirect_uri, &refs)
        .await
        .map_err(|e| AuthError::RegistrationFailed(format!("Dynamic registration failed: {e}")))?;
    let mut request = request.with_preregistered_client(client.client_id);
    if let Some(secret) = &client.client_secret {
        request = request.with_client_secret(secret.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| e)?;
    Ok((session, client.client_secret))
}

/// The last challenge each server sent with a refused call (a 403 `insufficient_scope`: the
/// call needs more access), kept for the next sign-in to ask for it (step-up).
fn refused_calls() -> &'static std::sync::Mutex<std::collections::HashMap<String, String>> {
    static MAP: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, String>>> =
        std::sync::OnceLock::new();
    MAP.get_or_init(Default::default)
}

/// Remember that server `server` refused a call with `challenge` (see [`McpHub::sign_in`]).
///
/// [`McpHub::sign_in`]: super::McpHub::sign_in
pub fn remember_challenge(server: &str, challenge: &str) {
    refused_calls()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(server.to_string(), challenge.to_string());
}

/// The challenge the next sign-in to `server` answers: the last refused call's, else the one
/// the server sends to an unauthenticated `initialize`.
pub async fn challenge_for(server: &str, url: &str) -> Option<String> {
    let remembered = refused_calls()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(server);
    match remembered {
        Some(c) => Some(c),
        None => probe_challenge(url).await,
    }
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated `initialize`, if it sends
/// one (its scope hint and metadata address).
async fn probe_challenge(url: &str) -> Option<String> {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE,
        "capabilities": {},
        "clientInfo": {"name": "artifactflow", "version": crate::VERSION},
    }});
    let response = sign_in_client()
        .ok()?
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    if !matches!(response.status().as_u16(), 401 | 403) {
        return None;
    }
    response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()
        .map(str::to_string)
}

/// The loopback redirect target: one HTTP listener on 127.0.0.1 that takes the first
/// `/callback` request carrying `code` or `error`.
struct Loopback {
    listener: tokio::net::TcpListener,
    port: u16,
}

impl Loopback {
    async fn bind() -> Result<Loopback, SignInError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| SignInError::Listener(e.to_string()))?;
        let port = listener
            .local_addr()
            .map_err(|e| SignInError::Listener(e.to_string()))?
            .port();
        Ok(Loopback { listener, port })
    }

    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// The full redirect URL the browser came back with.
    async fn wait(self, timeout: Duration) -> Result<String, SignInError> {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(1);
        let tx = Arc::new(tx);
        let app = axum::Router::new().route(
            "/callback",
            axum::routing::get(move |uri: axum::http::Uri| {
                let tx = tx.clone();
                async move {
                    let query = uri.query().unwrap_or_default().to_string();
                    let _ = tx.try_send(query);
                    axum::response::Html(
                        "<!doctype html><title>ArtifactFlow</title><p>Signed in: you can close this tab and go back to ArtifactFlow.</p>",
                    )
                }
            }),
        );
        let base = self.redirect_uri();
        let server = tokio::spawn(async move {
            let _ = axum::serve(self.listener, app).await;
        });
        let outcome = tokio::time::timeout(timeout, async {
            while let Some(query) = rx.recv().await {
                let pairs: Vec<(String, String)> = url_pairs(&query);
                if let Some((_, error)) = pairs.iter().find(|(k, _)| k == "error") {
                    let detail = pairs
                        .iter()
                        .find(|(k, _)| k == "error_description")
                        .map(|(_, d)| format!(" ({d})"))
                        .unwrap_or_default();
                    return Err(SignInError::Refused(format!("{error}{detail}")));
                }
                if pairs.iter().any(|(k, _)| k == "code") {
                    return Ok(format!("{base}?{query}"));
                }
            }
            Err(SignInError::Listener("the listener stopped".into()))
        })
        .await;
        server.abort();
        outcome.unwrap_or(Err(SignInError::TimedOut(timeout)))
    }
}

fn url_pairs(query: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://x/?{query}"))
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

/// A [`BrowserOpener`] for tests and `mcp login --headless`: instead of a browser, fetch the
/// authorization page and follow its redirects (an authorization server that approves without
/// a login page, like the conformance suite's) until one reaches the loopback redirect URI.
pub fn follow_redirects_headlessly() -> BrowserOpener {
    Box::new(|auth_url: String| {
        tokio::spawn(async move {
            if let Err(e) = follow(&auth_url).await {
                // End the wait now rather than at the timeout: tell the loopback listener.
                tracing::warn!("headless sign-in: {e}");
                if let Some(mut back) = redirect_uri_of(&auth_url) {
                    back.query_pairs_mut()
                        .append_pair("error", "headless_sign_in_failed")
                        .append_pair("error_description", &e);
                    if let Ok(client) = headless_client() {
                        let _ = client.get(back).send().await;
                    }
                }
            }
        });
        Ok(())
    })
}

/// The `redirect_uri` an authorization URL carries.
fn redirect_uri_of(auth_url: &str) -> Option<reqwest::Url> {
    let url = reqwest::Url::parse(auth_url).ok()?;
    let (_, back) = url.query_pairs().find(|(k, _)| k == "redirect_uri")?;
    reqwest::Url::parse(&back).ok()
}

/// The headless stand-in's client: it follows redirects itself, one by one.
fn headless_client() -> Result<reqwest::Client, String> {
    crate::net::client_builder(crate::net::Secrets::None)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())
}

async fn follow(start: &str) -> Result<(), String> {
    let client = headless_client()?;
    let mut url = reqwest::Url::parse(start).map_err(|e| e.to_string())?;
    for _ in 0..10 {
        let response = client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let Some(location) = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
        else {
            return Err(format!(
                "the authorization page answered HTTP {} without a redirect (it needs a person)",
                response.status()
            ));
        };
        url = url.join(location).map_err(|e| e.to_string())?;
        if url.host_str() == Some("127.0.0.1") && url.path() == "/callback" {
            client.get(url).send().await.map_err(|e| e.to_string())?;
            return Ok(());
        }
    }
    Err("too many redirects".into())
}

/// The client for sign-in requests: the MCP transport's rules ([`crate::net`] for requests
/// carrying secrets: every hop stays on the server's origin, no downgrade, no `Referer`).
fn sign_in_client() -> reqwest::Result<reqwest::Client> {
    crate::net::client_builder(crate::net::Secrets::Carried).build()
}
