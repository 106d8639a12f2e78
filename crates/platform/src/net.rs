//! The redirect rules of every outgoing HTTP client (HTTP tools, built-in web tools, models,
//! remote MCP servers and their OAuth sign-in).
//!
//! reqwest on its own follows redirects anywhere and strips only `Authorization`/`Cookie` on a
//! cross-host hop: custom key headers (`x-api-key`, `api-key`, …), a key in the query string and
//! a replayed 307/308 body would all reach the other host, and the `Referer` it adds carries the
//! previous URL with its query. So every client here is built by [`client_builder`]:
//!
//! - never a `Referer`;
//! - never an `https` → `http` downgrade;
//! - at most [`MAX_REDIRECTS`] hops;
//! - [`Secrets::Carried`] (a model call, a tool whose endpoint or headers use a secret template):
//!   every hop stays on the origin (scheme, host, port) the request was built for;
//! - [`Secrets::None`]: 301/302/303 (which reqwest turns into a body-less `GET`) may go to
//!   another origin, but a 307/308 (which replays method and body) may not.
//!
//! A refused hop fails the request with a [`RedirectRefused`] naming both origins — only the
//! origins: the redirect URL may itself hold a key in its query.

use reqwest::redirect::{Attempt, Policy};
use reqwest::{StatusCode, Url};

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// Whether a request carries secrets (and so must never leave its origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secrets {
    /// Built from secret templates (or a model call, which always may carry a key).
    Carried,
    /// Nothing secret in it.
    None,
}

/// Why a redirect was not followed. Its text names origins only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RedirectRefused(pub String);

/// `scheme://host:port` of `url`, nothing else.
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The rule itself: may a request first sent to `first`, now at `from`, follow a `status`
/// redirect to `next` (hop number `hop`, 1-based)?
pub fn check_redirect(
    secrets: Secrets,
    status: StatusCode,
    first: &Url,
    from: &Url,
    next: &Url,
    hop: usize,
) -> Result<(), RedirectRefused> {
    if hop > MAX_REDIRECTS {
        return Err(RedirectRefused(format!(
            "too many redirects (more than {MAX_REDIRECTS})"
        )));
    }
    if from.scheme() == "https" && next.scheme() != "https" {
        return Err(RedirectRefused(format!(
            "the server at {} redirected to {}, which is not https; a redirect never downgrades \
             to plain http. Point the endpoint at the final URL if that is really meant.",
            origin(from),
            origin(next)
        )));
    }
    let replays_body = matches!(
        status,
        StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
    );
    match secrets {
        Secrets::Carried if origin(next) != origin(first) => Err(RedirectRefused(format!(
            "the server at {} redirected to {}, another origin; a request carrying secrets is \
             never sent to another origin. Point the endpoint at the final URL.",
            origin(from),
            origin(next)
        ))),
        Secrets::None if replays_body && origin(next) != origin(from) => {
            Err(RedirectRefused(format!(
                "the server at {} answered {} to {}, another origin; a request is never \
                 replayed with its body to another origin. Point the endpoint at the final URL.",
                origin(from),
                status.as_u16(),
                origin(next)
            )))
        }
        _ => Ok(()),
    }
}

fn policy(secrets: Secrets) -> Policy {
    Policy::custom(move |attempt: Attempt<'_>| {
        let previous = attempt.previous();
        let (Some(first), Some(from)) = (previous.first(), previous.last()) else {
            return attempt.follow();
        };
        match check_redirect(
            secrets,
            attempt.status(),
            first,
            from,
            attempt.url(),
            previous.len(),
        ) {
            Ok(()) => attempt.follow(),
            Err(refused) => attempt.error(refused),
        }
    })
}

/// A client builder with the redirect rules for `secrets`, no `Referer`, and the app's
/// user agent.
pub fn client_builder(secrets: Secrets) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(policy(secrets))
        .referer(false)
        .user_agent(concat!("ArtifactFlow/", env!("CARGO_PKG_VERSION")))
}

/// The [`RedirectRefused`] behind a request error, if a redirect was refused.
pub fn refused_redirect(e: &reqwest::Error) -> Option<&RedirectRefused> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(refused) = err.downcast_ref::<RedirectRefused>() {
            return Some(refused);
        }
        source = err.source();
    }
    None
}

/// A failed request described for a person, without its URL (which may carry a secret: the
/// caller names the masked URL itself). Shared by HTTP tools and model clients.
pub fn describe_request_error(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "the request timed out".into()
    } else if let Some(refused) = refused_redirect(e) {
        refused.to_string()
    } else if e.is_redirect() {
        format!("too many redirects (more than {MAX_REDIRECTS})")
    } else if e.is_connect() {
        "connection failed (is the server running and the address right?)".into()
    } else {
        // Without the URL: it may contain a secret; the caller names the masked URL itself.
        let mut text = e.to_string();
        if let Some(url) = e.url() {
            text = text.replace(url.as_str(), "<url>");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    const FOUND: StatusCode = StatusCode::FOUND;

    #[test]
    fn never_downgrades_to_http_even_on_the_same_host() {
        let first = url("https://api.example.com/v1?key=sk-123");
        for secrets in [Secrets::Carried, Secrets::None] {
            let e = check_redirect(
                secrets,
                FOUND,
                &first,
                &first,
                &url("http://api.example.com/v1?key=sk-123"),
                1,
            )
            .unwrap_err();
            assert!(e.0.contains("https://api.example.com"), "{e}");
            assert!(e.0.contains("http://api.example.com"), "{e}");
            assert!(!e.0.contains("sk-123"), "origins only: {e}");
        }
    }

    #[test]
    fn secrets_stay_on_their_origin_and_bodies_are_not_replayed_elsewhere() {
        let first = url("http://127.0.0.1:1000/a?k=sk-1");
        let same = url("http://127.0.0.1:1000/b");
        let other_port = url("http://127.0.0.1:2000/b?k=sk-1");
        let other_scheme = url("https://127.0.0.1:1000/b");
        let check = |s, status, next: &Url| check_redirect(s, status, &first, &first, next, 1);
        assert!(check(Secrets::Carried, FOUND, &same).is_ok());
        assert!(check(Secrets::Carried, StatusCode::PERMANENT_REDIRECT, &same).is_ok());
        for next in [&other_port, &other_scheme] {
            let e = check(Secrets::Carried, FOUND, next).unwrap_err();
            assert!(e.0.contains("another origin"), "{e}");
            assert!(e.0.contains("http://127.0.0.1:1000"), "{e}");
            assert!(!e.0.contains("sk-1"), "{e}");
        }
        assert!(check(Secrets::None, FOUND, &other_port).is_ok());
        assert!(check(Secrets::None, StatusCode::SEE_OTHER, &other_port).is_ok());
        for status in [
            StatusCode::TEMPORARY_REDIRECT,
            StatusCode::PERMANENT_REDIRECT,
        ] {
            assert!(check(Secrets::None, status, &other_port).is_err());
        }
        // After a 302 elsewhere (now a body-less GET), a 307 within that origin is fine.
        let moved = url("http://127.0.0.1:2000/c");
        let status = StatusCode::TEMPORARY_REDIRECT;
        assert!(check_redirect(Secrets::None, status, &first, &other_port, &moved, 2).is_ok());
        let e = check_redirect(Secrets::None, FOUND, &first, &first, &same, 6).unwrap_err();
        assert!(e.0.contains("too many redirects"), "{e}");
    }
}
