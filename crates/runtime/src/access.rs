//! Who the runtime answers: only the process that started it.
//!
//! A server on 127.0.0.1 is reachable by every program of the computer, and by any web page
//! that points a name of its own at 127.0.0.1 (DNS rebinding). So the runtime treats every
//! request as if it came from the network:
//!
//! - **A per-launch key.** The app makes at least 128 random bits for each start and gives them
//!   through the environment variable [`KEY_VARIABLE`] (read once, then removed from the
//!   process's environment) or as the first line of stdin (`--key-stdin`); never on the command
//!   line, which every local user can read. Every request must carry it as
//!   `Authorization: Bearer KEY`; it is compared in constant time. A runtime started without a
//!   key does not serve.
//! - **Its own address only.** A request's `Host` must be `127.0.0.1:PORT` or `localhost:PORT`
//!   with the runtime's port: a page that rebinds `evil.example` to 127.0.0.1 sends
//!   `Host: evil.example:PORT` and is refused before anything else is read.
//!
//! What a request learns (its usage, including how much of the prompt was already cached) thus
//! goes to the key holder only: no other client can time or count the cache to guess the app's
//! last prompt.

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use subtle::ConstantTimeEq;

/// The environment variable the key comes in.
pub const KEY_VARIABLE: &str = "ARTIFACTFLOW_RUNTIME_KEY";

/// The fewest characters a key may have: 32 hexadecimal digits are 128 bits.
pub const MIN_KEY_CHARS: usize = 32;
/// The most: a key is a token, not a document.
const MAX_KEY_CHARS: usize = 512;

/// The key every request must carry, and the port the runtime listens on.
#[derive(Clone)]
pub struct Access {
    key: String,
    port: u16,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key never reaches a log.
        f.debug_struct("Access")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// Why `key` cannot be the runtime's key, if it cannot.
pub fn check_key(key: &str) -> Result<(), String> {
    let n = key.chars().count();
    if n < MIN_KEY_CHARS {
        return Err(format!(
            "the key in {KEY_VARIABLE} has {n} characters; it needs at least {MIN_KEY_CHARS} \
             (128 random bits as hexadecimal digits)"
        ));
    }
    if n > MAX_KEY_CHARS {
        return Err(format!(
            "the key in {KEY_VARIABLE} has {n} characters; at most {MAX_KEY_CHARS}"
        ));
    }
    if !key.chars().all(|c| c.is_ascii_graphic()) {
        return Err(format!(
            "the key in {KEY_VARIABLE} must be printable ASCII without spaces"
        ));
    }
    Ok(())
}

impl Access {
    /// Access for `key` (see [`check_key`]) on `port`.
    pub fn new(key: String, port: u16) -> Access {
        Access { key, port }
    }

    /// Whether `host` (a request's `Host` header) names this runtime.
    fn host_ok(&self, host: &str) -> bool {
        let Some((name, port)) = host.rsplit_once(':') else {
            return false;
        };
        port == self.port.to_string()
            && (name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost"))
    }

    /// Whether `authorization` (a request's header) carries the key, compared in constant time.
    fn key_ok(&self, authorization: Option<&[u8]>) -> bool {
        let given = authorization
            .and_then(|value| value.strip_prefix(b"Bearer "))
            .unwrap_or_default();
        // `ct_eq` on slices of different lengths returns at once; the length of the key is not
        // the secret.
        bool::from(given.ct_eq(self.key.as_bytes()))
    }
}

fn refused(status: StatusCode, message: &str) -> Response {
    let mut response = (
        status,
        Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
    )
        .into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

/// The check every request passes before its route: its `Host`, then its key.
pub async fn guard(State(access): State<Access>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !access.host_ok(host) {
        return refused(
            StatusCode::FORBIDDEN,
            "this runtime answers requests for 127.0.0.1 or localhost at its own port only",
        );
    }
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    if !access.key_ok(authorization) {
        return refused(
            StatusCode::UNAUTHORIZED,
            "this runtime answers only the app that started it: the request lacks its key",
        );
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn a_key_has_at_least_128_bits_of_printable_characters() {
        assert_eq!(check_key(KEY), Ok(()));
        assert!(check_key("short").unwrap_err().contains("at least 32"));
        assert!(check_key(&format!("{KEY} x"))
            .unwrap_err()
            .contains("printable"));
        assert!(check_key(&"k".repeat(600)).unwrap_err().contains("at most"));
    }

    #[test]
    fn only_this_runtimes_own_address_is_answered() {
        let access = Access::new(KEY.into(), 41234);
        for host in ["127.0.0.1:41234", "localhost:41234", "LocalHost:41234"] {
            assert!(access.host_ok(host), "{host}");
        }
        for host in [
            "",
            "127.0.0.1",
            "127.0.0.1:41235",
            "evil.example:41234",
            "localhost.evil.example:41234",
            "[::1]:41234",
            "127.0.0.2:41234",
            "localhost:041234",
        ] {
            assert!(!access.host_ok(host), "{host}");
        }
    }

    #[test]
    fn only_the_key_opens() {
        let access = Access::new(KEY.into(), 1);
        assert!(access.key_ok(Some(format!("Bearer {KEY}").as_bytes())));
        for wrong in [
            String::new(),
            KEY.to_string(),
            format!("Bearer {}", &KEY[..31]),
            format!("Bearer {KEY}0"),
            format!("bearer {KEY}"),
            format!("Bearer {}", KEY.to_uppercase()),
        ] {
            assert!(!access.key_ok(Some(wrong.as_bytes())), "{wrong}");
        }
        assert!(!access.key_ok(None));
        // The key is not in its debug form.
        assert!(!format!("{access:?}").contains(KEY));
    }
}
