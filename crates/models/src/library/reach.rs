//! Why a request to the Hub (or a mirror) got no answer, in one sentence for the person who
//! asked.
//!
//! A transport error of reqwest is a chain ("error sending request for url (…): client error
//! (Connect): tcp connect error: Connection refused (os error 111)") that says what the socket
//! saw, not what to do. [`HubFailure::of`] reads the chain by its types (reqwest's own
//! `is_timeout`/`is_dns`/`is_connect`, the [`std::io::Error`] kinds, a [`rustls::Error`]) into
//! one kind, and [`Unreachable`] says it as one sentence that names the Hub's address, what
//! failed and what to check: the connection, the proxy settings, `HF_ENDPOINT`.
//!
//! **The proxy.** reqwest sends a request through the proxy the environment names for its
//! address (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, less `NO_PROXY`); a connection that fails
//! then failed to the proxy, not to the Hub. The proxy is found the way reqwest finds it
//! (hyper-util's matcher), and named without the user and password a proxy address may hold.
//!
//! Nothing of the chain reaches the sentence: no URL (a mirror's address may carry a user and
//! password: the address named is [`shown_address`]), no token (it is a header, never part of
//! an error), no `os error` numbers.

use serde::{Deserialize, Serialize};

/// What kept a request to the Hub from its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum HubFailure {
    /// The connection was refused: nothing answers at the address.
    Refused,
    /// The address's name could not be looked up (no network, or a misspelt name).
    NameNotFound,
    /// No answer in time.
    Timeout,
    /// The secure (https) connection could not be set up.
    Tls,
    /// The proxy the environment names for the address did not carry the request.
    Proxy,
    /// The connection was cut while the answer came.
    ConnectionLost,
    /// Anything else on the way.
    Other,
}

/// A request to the Hub that got no answer: what failed, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    /// The kind of failure.
    pub failure: HubFailure,
    /// The Hub's address as shown (no user and password).
    pub endpoint: String,
    /// Whether the address is `HF_ENDPOINT`'s (a mirror), not the public Hub's.
    pub custom: bool,
    /// The proxy the request went through, as shown (no user and password).
    pub proxy: Option<String>,
    /// What the proxy did, when the failure is [`HubFailure::Proxy`]: the kind of failure of the
    /// connection to it.
    pub through_proxy: Option<HubFailure>,
    /// Why the secure connection failed, for [`HubFailure::Tls`].
    pub tls: Option<String>,
}

impl HubFailure {
    /// The failure behind `e`, a request's error, with why a secure connection failed (for
    /// [`HubFailure::Tls`]).
    pub fn of(e: &reqwest::Error) -> (HubFailure, Option<String>) {
        if let Some(tls) = find_tls(e) {
            return (HubFailure::Tls, Some(tls_reason(tls)));
        }
        if e.is_timeout() {
            return (HubFailure::Timeout, None);
        }
        if e.is_dns() {
            return (HubFailure::NameNotFound, None);
        }
        let io_kind = chain(e)
            .find_map(|err| err.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind);
        use std::io::ErrorKind as K;
        match io_kind {
            Some(K::ConnectionRefused) => (HubFailure::Refused, None),
            Some(K::TimedOut) => (HubFailure::Timeout, None),
            Some(K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof) => {
                (HubFailure::ConnectionLost, None)
            }
            _ if e.is_body() || e.is_decode() => (HubFailure::ConnectionLost, None),
            _ => (HubFailure::Other, None),
        }
    }
}

/// The errors of `e`'s chain, `e` first; an [`std::io::Error`] that wraps another error is
/// followed by the one it wraps (its `source` skips it).
fn chain<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    let mut next = Some(e);
    std::iter::from_fn(move || {
        let current = next?;
        next = match current.downcast_ref::<std::io::Error>() {
            Some(io) => io.get_ref().map(|inner| inner as _),
            None => current.source(),
        };
        Some(current)
    })
}

fn find_tls(e: &reqwest::Error) -> Option<&rustls::Error> {
    chain(e).find_map(|err| err.downcast_ref::<rustls::Error>())
}

/// Why rustls refused a connection, for a person.
fn tls_reason(e: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(cert) => match cert {
            C::UnknownIssuer => "its certificate is not signed by an authority this computer \
                                 trusts"
                .into(),
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => {
                "its certificate is out of date, or this computer's date and time are wrong".into()
            }
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                "its certificate is for another name".into()
            }
            C::Revoked => "its certificate was revoked".into(),
            _ => "its certificate was refused".into(),
        },
        rustls::Error::InvalidMessage(_)
        | rustls::Error::InappropriateMessage { .. }
        | rustls::Error::InappropriateHandshakeMessage { .. } => {
            "the server there does not answer as an https server".into()
        }
        _ => "the handshake failed".into(),
    }
}

impl Unreachable {
    /// One sentence: what failed at which address, and what to check.
    pub fn sentence(&self) -> String {
        let endpoint = &self.endpoint;
        let hub = if self.custom {
            format!("the Hub that HF_ENDPOINT names ({endpoint})")
        } else {
            format!("the Hugging Face Hub ({endpoint})")
        };
        let host = reqwest::Url::parse(endpoint)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| endpoint.clone());
        let lead = match self.failure {
            HubFailure::Refused => format!(
                "cannot reach {hub}: the connection was refused, nothing answers at that address"
            ),
            HubFailure::NameNotFound => {
                format!("cannot reach {hub}: the name {host} could not be looked up")
            }
            HubFailure::Timeout => format!("{hub} did not answer in time"),
            HubFailure::Tls => format!(
                "cannot reach {hub}: the secure connection failed, {}",
                self.tls.as_deref().unwrap_or("the handshake failed")
            ),
            HubFailure::Proxy => {
                let proxy = self.proxy.as_deref().unwrap_or("the proxy");
                let what = match self.through_proxy {
                    Some(HubFailure::Refused) => "it refused the connection",
                    Some(HubFailure::NameNotFound) => "its name could not be looked up",
                    Some(HubFailure::Timeout) => "it did not answer in time",
                    _ => "it did not carry the request",
                };
                format!("cannot reach {hub} through the proxy {proxy}: {what}")
            }
            HubFailure::ConnectionLost => {
                format!("the connection to {hub} was cut before the answer ended")
            }
            HubFailure::Other => format!("the request to {hub} failed on its way"),
        };
        let check = match (self.failure, self.custom) {
            (HubFailure::Proxy, _) => "check the proxy settings (HTTPS_PROXY, HTTP_PROXY, \
                                        ALL_PROXY, NO_PROXY) and that the proxy is running"
                .to_string(),
            (HubFailure::Tls, true) => "check that HF_ENDPOINT's address and scheme (https or \
                                        http) are right, this computer's date and time, and any \
                                        proxy or security software that inspects https"
                .to_string(),
            (HubFailure::Tls, false) => "check this computer's date and time, and any proxy or \
                                         security software that inspects https"
                .to_string(),
            (_, true) => "check that HF_ENDPOINT is right and its server is running, then the \
                          internet connection and the proxy settings"
                .to_string(),
            (_, false) => "check the internet connection and the proxy settings (HTTPS_PROXY); \
                           HF_ENDPOINT can name a mirror"
                .to_string(),
        };
        format!("{lead}; {check}")
    }
}

/// `endpoint` as an error may show it: without a user and password (`https://user:pw@host`
/// is shown as `https://host`).
pub fn shown_address(endpoint: &str) -> String {
    match reqwest::Url::parse(endpoint) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.as_str().trim_end_matches('/').to_string()
        }
        _ => endpoint.to_string(),
    }
}

/// The proxy reqwest sends requests for `endpoint` through, as shown (scheme, host and port;
/// never its user and password), found as reqwest finds it.
pub fn proxy_for(endpoint: &str) -> Option<String> {
    let uri: http::Uri = endpoint.parse().ok()?;
    let intercept = hyper_util::client::proxy::matcher::Matcher::from_system().intercept(&uri)?;
    let proxy = intercept.uri();
    Some(format!(
        "{}://{}",
        proxy.scheme_str().unwrap_or("http"),
        proxy.authority()?.as_str().rsplit('@').next()?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_shown_without_its_user_and_password() {
        assert_eq!(
            shown_address("https://me:s3cret@mirror.example.com/hf"),
            "https://mirror.example.com/hf"
        );
        assert_eq!(
            shown_address("https://huggingface.co"),
            "https://huggingface.co"
        );
    }

    #[test]
    fn each_failure_is_one_sentence_with_what_to_check() {
        let at = |failure, custom| Unreachable {
            failure,
            endpoint: "http://127.0.0.1:9".into(),
            custom,
            proxy: Some("http://proxy.example:3128".into()),
            through_proxy: Some(HubFailure::Refused),
            tls: None,
        };
        for failure in [
            HubFailure::Refused,
            HubFailure::NameNotFound,
            HubFailure::Timeout,
            HubFailure::Tls,
            HubFailure::Proxy,
            HubFailure::ConnectionLost,
            HubFailure::Other,
        ] {
            for custom in [true, false] {
                let text = at(failure, custom).sentence();
                assert!(text.contains("http://127.0.0.1:9"), "{text}");
                assert_eq!(text.matches("; check ").count(), 1, "{text}");
                assert!(!text.contains("os error") && !text.contains('\n'), "{text}");
            }
        }
        let proxy = at(HubFailure::Proxy, false).sentence();
        assert!(
            proxy
                .contains("through the proxy http://proxy.example:3128: it refused the connection")
                && proxy.contains("HTTPS_PROXY"),
            "{proxy}"
        );
        assert!(at(HubFailure::Refused, true)
            .sentence()
            .contains("HF_ENDPOINT"));
        assert!(at(HubFailure::Refused, false)
            .sentence()
            .contains("internet connection"));
    }
}
