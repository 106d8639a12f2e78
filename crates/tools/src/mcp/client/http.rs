//! The Streamable HTTP (and legacy SSE) transports to a remote server, with the one HTTP client
//! builder's rules: no hop leaves the server's origin.

#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
    StreamableHttpError,
};

use super::launch::StderrTail;
use super::lifecycle;
use super::{
    fill, handler, handshake, ConnectOptions, HandshakeError, McpClient, McpError,
    MAX_MESSAGE_BYTES,
};
use crate::mcp::config::{McpServerConfig, McpTransport};
use crate::secrets::Redactor;

/// Connect to a remote server with any rmcp HTTP client (e.g. rmcp's `AuthClient` for OAuth).
pub async fn connect_http_with<C>(
    cfg: &McpServerConfig,
    opts: &ConnectOptions,
    client: C,
) -> Result<McpClient, McpError>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    let McpTransport::Http { url, headers } = &cfg.transport else {
        return Err(McpError::Other(format!(
            "server `{}` is not a remote server",
            cfg.name
        )));
    };
    let (filled, secret_values) = fill(opts, headers).await;
    let redactor = Redactor::new(secret_values.into_iter().chain(opts.auth_header.clone()));
    let mut custom = HashMap::new();
    let mut auth = opts.auth_header.clone();
    for (k, v) in filled {
        if k.eq_ignore_ascii_case("authorization") {
            // rmcp sends the bearer token itself; a configured header is used as the token.
            auth = Some(v.strip_prefix("Bearer ").unwrap_or(&v).to_string());
            continue;
        }
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| McpError::Other(format!("header name `{k}` is not valid")))?;
        let value = reqwest::header::HeaderValue::from_str(&v)
            .map_err(|_| McpError::Other(format!("the value of header `{k}` is not valid")))?;
        custom.insert(name, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
        .custom_headers(custom)
        .max_sse_event_size(MAX_MESSAGE_BYTES)
        .max_json_response_size(MAX_MESSAGE_BYTES)
        .reinit_on_expired_session(true);
    if let Some(token) = auth {
        config = config.auth_header(token);
    }
    let h = handler(cfg, opts, &redactor);
    let handler_copy = h.clone();
    let started_at = std::time::Instant::now();
    let first = StreamableHttpClientTransport::with_client(client.clone(), config.clone());
    let started = match handshake(
        opts.connect_timeout,
        h.clone(),
        first,
        lifecycle::lifecycle(),
    )
    .await
    {
        // An older server that does not answer `server/discover` as the protocol says (no
        // error, an empty body, a 202): over HTTP a new connection costs little, so start
        // again with the `initialize` handshake alone, in what is left of the timeout.
        Err(HandshakeError::Rmcp(e)) if worth_a_handshake(&e) => {
            let left = opts.connect_timeout.saturating_sub(started_at.elapsed());
            tracing::info!(server = %cfg.name, "server/discover failed ({}): starting the initialize handshake", redactor.redact(&e.to_string()));
            let again = StreamableHttpClientTransport::with_client(client, config);
            match handshake(left, h, again, lifecycle::handshake_only()).await {
                Err(HandshakeError::TimedOut(_)) => {
                    Err(HandshakeError::TimedOut(opts.connect_timeout))
                }
                // Both failed: say what each said.
                Err(HandshakeError::Rmcp(fallback)) if !fallback.is_authorization_required() => {
                    Err(HandshakeError::Rmcp(Box::new(
                        rmcp::service::ClientInitializeError::LegacyFallbackFailed {
                            discover: e,
                            fallback,
                        },
                    )))
                }
                other => other,
            }
        }
        other => other,
    };
    let service = match started {
        Ok(s) => s,
        Err(HandshakeError::TimedOut(after)) => {
            return Err(McpError::Handshake {
                message: HandshakeError::TimedOut(after).to_string(),
                stderr_tail: Vec::new(),
            })
        }
        Err(HandshakeError::Rmcp(e)) => {
            if e.is_authorization_required() {
                return Err(McpError::NeedsSignIn {
                    challenge: e.auth_challenge().map(str::to_string),
                });
            }
            if is_legacy_sse(url).await {
                return Err(McpError::LegacySse { url: url.clone() });
            }
            // A refused redirect says why (rmcp's text only says "error following redirect").
            let message = match refused_redirect(&e) {
                Some(refused) => format!("the server did not start the MCP session: {refused}"),
                None => e.to_string(),
            };
            return Err(McpError::Handshake {
                message: redactor.redact(&message),
                stderr_tail: Vec::new(),
            });
        }
    };
    Ok(McpClient::new(
        cfg,
        service,
        handler_copy,
        Arc::new(StderrTail::default()),
        None,
        None,
        redactor,
    ))
}

/// Is a failed `server/discover` worth a second try with the `initialize` handshake? Not when
/// the server wants a sign-in or more scope, a redirect was refused, or the server could not
/// be reached at all (no connection, TLS, a timeout): the handshake would fail the same way.
fn worth_a_handshake(e: &rmcp::service::ClientInitializeError) -> bool {
    if e.is_authorization_required() || e.auth_challenge().is_some() {
        return false;
    }
    if refused_redirect(e).is_some() {
        return false;
    }
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = e else {
        return true;
    };
    !matches!(
        error.error.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        Some(StreamableHttpError::Client(e)) if e.is_connect() || e.is_timeout()
    )
}

/// The reqwest client for remote servers: [`crate::net`]'s rules for requests carrying secrets
/// (every hop stays on the server's origin, no downgrade, no `Referer`).
pub fn remote_http_client() -> Result<reqwest::Client, McpError> {
    crate::net::client_builder(crate::net::Secrets::Carried)
        .build()
        .map_err(|e| McpError::Other(format!("the HTTP client could not start: {e}")))
}

/// The [`crate::net::RedirectRefused`] behind a failed handshake over [`remote_http_client`]
/// (rmcp's error text only says "error following redirect", and its errors do not chain their
/// sources, so the layers are unwrapped here).
pub(super) fn refused_redirect(
    e: &rmcp::service::ClientInitializeError,
) -> Option<crate::net::RedirectRefused> {
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = e else {
        return None;
    };
    match error
        .error
        .downcast_ref::<StreamableHttpError<reqwest::Error>>()?
    {
        StreamableHttpError::Client(e) => crate::net::refused_redirect(e).cloned(),
        _ => None,
    }
}

/// Does `url` answer a GET with the legacy transport's `endpoint` event?
pub(super) async fn is_legacy_sse(url: &str) -> bool {
    let probe = async {
        let response = remote_http_client()
            .ok()?
            .get(url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .ok()?;
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            return Some(false);
        }
        let mut response = response;
        let mut seen = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            seen.extend_from_slice(&chunk);
            if String::from_utf8_lossy(&seen).contains("event: endpoint") {
                return Some(true);
            }
            if seen.len() > 4096 {
                break;
            }
        }
        Some(false)
    };
    tokio::time::timeout(Duration::from_secs(3), probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}
