//! The Hugging Face Hub as the library uses it: its HTTP conventions, no SDK.
//!
//! - a repository's files, with their size and sha256: `GET {endpoint}/api/models/{repo}/tree/{revision}`
//!   (large files carry `lfs.oid`, their sha256, and `lfs.size`);
//! - a file: `GET {endpoint}/{repo}/resolve/{revision}/{file}` (redirected to a CDN, which
//!   honours `Range`); its `HEAD` carries `X-Linked-Size` and `X-Linked-Etag` (the sha256);
//! - search: `GET {endpoint}/api/models?search=…&filter=gguf`.
//!
//! The endpoint is `HF_ENDPOINT` when set (mirrors, and the tests' stand-in Hub on 127.0.0.1),
//! else `https://huggingface.co`.
//!
//! **The token** (`HF_TOKEN`, for gated repositories) is sent as a bearer token, and only where
//! nobody on the way can read it: to an `https` endpoint, or over plain `http` to this computer
//! (`127.0.0.0/8`, `::1`, `localhost`). A plain-`http` endpoint elsewhere gets every request
//! without it, and [`Hub::warning`] says why (public repositories still work; a gated one's
//! refusal says the token was kept back). The token never follows a redirect to another origin:
//! reqwest drops `Authorization` when the scheme, host or port changes (the Hub's 302 to its
//! CDN), and the app's redirect rules (`platform::net`) refuse an `https` → `http` hop.
//!
//! **Answers are bounded.** Every JSON answer (search, tree) is read as it arrives, up to
//! [`MAX_ANSWER_BYTES`]; one announced or found larger fails with
//! [`LibraryError::AnswerTooLarge`], naming the endpoint and the cap, and what came is dropped.
//! Each request for one must be answered whole within [`ANSWER_TIMEOUT`]. The client asks for
//! no compressed answers (reqwest is built without decompression), so what is counted is what is
//! held. Error answers are not read at all (the status says enough), and a file's bytes are
//! bounded by the size the Hub lists for it (`download`).
//!
//! **Errors are sentences.** A request that gets no answer is [`LibraryError::Network`]: its
//! kind (refused, name not found, timeout, TLS, proxy, cut) and one sentence that names the
//! Hub's address and what to check (see [`super::reach`]); an error status is
//! [`LibraryError::HubStatus`], whose sentence says what was refused and what to do. Neither
//! holds the token, the transport's chain or a user and password of the address.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::gguf::quantization_from_name;
use super::reach::{self, HubFailure, Unreachable};
use super::LibraryError;

/// The public Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// The most of one JSON answer of the Hub that is read: 8 MB. The Hub's answers are far
/// smaller: a search (at most 100 repositories) is tens of KB, and a file listing takes about
/// 300 bytes a file, so 8 MB is over 25,000 files (GGUF repositories hold tens). The same cap as
/// an HTTP tool's response and an MCP server's tool list.
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// The longest a JSON answer may take, from the request to its last byte: a mirror dripping
/// bytes never holds a search or a listing open for longer.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// A Hub (or a mirror of it).
#[derive(Clone)]
pub struct Hub {
    endpoint: String,
    /// The endpoint as errors show it (no user and password).
    shown: String,
    /// Whether the endpoint is not the public Hub's (`HF_ENDPOINT` named a mirror).
    custom: bool,
    /// The proxy requests to the endpoint go through, as shown.
    proxy: Option<String>,
    /// The longest a JSON answer may take.
    answer_timeout: Duration,
    /// The token, when the endpoint may be sent one.
    token: Option<String>,
    /// Why a token that was given is not sent (a plain-http endpoint on another computer).
    withheld: Option<String>,
    http: reqwest::Client,
    /// For `HEAD`: the Hub's redirect to its CDN carries the `X-Linked-*` headers, and the CDN's
    /// answer does not.
    no_redirect: reqwest::Client,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("endpoint", &self.endpoint)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("withheld", &self.withheld)
            .finish()
    }
}

/// A file of a repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HubFile {
    /// Its path in the repository.
    pub path: String,
    /// Its size in bytes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub size: u64,
    /// Its sha256, lower-case hex (large files only: the Hub keeps them in LFS).
    pub sha256: Option<String>,
    /// The quantisation its name states.
    pub quantization: Option<String>,
}

/// A repository search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HubRepo {
    /// `owner/name`.
    pub id: String,
    /// Downloads in the last month, as the Hub counts them.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub downloads: u64,
    /// Likes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub likes: u64,
    /// Whether the repository asks users to accept terms (a token is then needed).
    pub gated: bool,
}

#[derive(Deserialize)]
struct TreeEntry {
    #[serde(rename = "type")]
    kind: String,
    path: String,
    #[serde(default)]
    size: u64,
    #[serde(default)]
    lfs: Option<Lfs>,
}

#[derive(Deserialize)]
struct Lfs {
    oid: String,
    #[serde(default)]
    size: Option<u64>,
}

#[derive(Deserialize)]
struct SearchEntry {
    // The Hub sends both; older mirrors only `modelId`.
    #[serde(default)]
    id: Option<String>,
    #[serde(default, rename = "modelId")]
    model_id: Option<String>,
    #[serde(default)]
    downloads: u64,
    #[serde(default)]
    likes: u64,
    #[serde(default)]
    gated: serde_json::Value,
}

impl Hub {
    /// A Hub at `endpoint` (no trailing slash needed), with an optional token.
    pub fn new(endpoint: &str, token: Option<String>) -> Hub {
        // The app's redirect rules (no downgrade to http, no Referer). The Hub sends files with
        // a 302 to its CDN, another origin: allowed for a request without secret templates, and
        // reqwest drops the token's `Authorization` header on that hop.
        let http = crate::net::client_builder(crate::net::Secrets::None)
            .connect_timeout(Duration::from_secs(20))
            .read_timeout(Duration::from_secs(60))
            .build()
            .unwrap_or_default();
        let no_redirect = crate::net::client_builder(crate::net::Secrets::None)
            .connect_timeout(Duration::from_secs(20))
            .timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        let endpoint = endpoint.trim_end_matches('/').to_string();
        let token = token.filter(|t| !t.trim().is_empty());
        let withheld = match (&token, token_refusal(&endpoint)) {
            (Some(_), Some(why)) => {
                let warning = format!(
                    "HF_TOKEN is not sent to {endpoint}: {why}, where anyone on the network \
                     could read it. Public repositories still work; for gated ones, set \
                     HF_ENDPOINT to an https address (or one on this computer)."
                );
                tracing::warn!("{warning}");
                Some(warning)
            }
            _ => None,
        };
        Hub {
            token: token.filter(|_| withheld.is_none()),
            withheld,
            shown: reach::shown_address(&endpoint),
            custom: endpoint != DEFAULT_ENDPOINT,
            proxy: reach::proxy_for(&endpoint),
            answer_timeout: ANSWER_TIMEOUT,
            endpoint,
            http,
            no_redirect,
        }
    }

    /// This Hub with `timeout` as the longest a JSON answer (a search, a listing) may take,
    /// instead of [`ANSWER_TIMEOUT`].
    pub fn with_answer_timeout(mut self, timeout: Duration) -> Hub {
        self.answer_timeout = timeout;
        self
    }

    /// The Hub `HF_ENDPOINT` names, else the public one.
    pub fn from_env(token: Option<String>) -> Hub {
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        Hub::new(&endpoint, token)
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// `url`, an address of this Hub, as an error may show it (no user and password).
    pub(super) fn shown_url(&self, url: &str) -> String {
        url.replacen(&self.endpoint, &self.shown, 1)
    }

    /// Why the token given is not sent to this endpoint, for the user (it never holds the
    /// token); `None` when it is sent, or when there is none.
    pub fn warning(&self) -> Option<&str> {
        self.withheld.as_deref()
    }

    pub(super) fn get(&self, url: &str) -> reqwest::RequestBuilder {
        let req = self.http.get(url);
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    pub(super) fn head(&self, url: &str) -> reqwest::RequestBuilder {
        let req = self
            .no_redirect
            .head(url)
            .header("Accept-Encoding", "identity");
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    /// The address of a file.
    pub fn file_url(&self, repo: &str, revision: &str, file: &str) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            self.endpoint,
            repo,
            encode(revision),
            file.split('/').map(encode).collect::<Vec<_>>().join("/")
        )
    }

    /// The files of `repo` at `revision` (the top folder and its sub-folders as the tree API
    /// lists them with `recursive=true`).
    pub async fn files(&self, repo: &str, revision: &str) -> Result<Vec<HubFile>, LibraryError> {
        check_repo(repo)?;
        let url = format!(
            "{}/api/models/{}/tree/{}?recursive=true",
            self.endpoint,
            repo,
            encode(revision)
        );
        let what = format!("the files of {repo}");
        let entries: Vec<TreeEntry> = self
            .json(&url, &what, &format!("the repository {repo}"))
            .await?;
        Ok(entries
            .into_iter()
            .filter(|e| e.kind == "file")
            .map(|e| {
                let size = e.lfs.as_ref().and_then(|l| l.size).unwrap_or(e.size);
                let sha256 = e
                    .lfs
                    .map(|l| l.oid.to_ascii_lowercase())
                    .filter(|h| is_sha256(h));
                HubFile {
                    quantization: quantization_from_name(&e.path),
                    path: e.path,
                    size,
                    sha256,
                }
            })
            .collect())
    }

    /// GGUF repositories matching `query`, most downloaded first.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<HubRepo>, LibraryError> {
        let url = reqwest::Url::parse_with_params(
            &format!("{}/api/models", self.endpoint),
            &[
                ("search", query.trim()),
                ("filter", "gguf"),
                ("sort", "downloads"),
                ("direction", "-1"),
                ("limit", &limit.clamp(1, 100).to_string()),
            ],
        )
        .map_err(|e| {
            LibraryError::Invalid(format!(
                "{} is not a Hub address ({e}): check HF_ENDPOINT",
                self.shown
            ))
        })?;
        let entries: Vec<SearchEntry> = self.json(url.as_str(), "the search", "the search").await?;
        Ok(entries
            .into_iter()
            .filter_map(|e| Some((e.id.clone().or(e.model_id.clone())?, e)))
            .map(|(id, e)| HubRepo {
                id,
                downloads: e.downloads,
                likes: e.likes,
                gated: match e.gated {
                    serde_json::Value::Bool(b) => b,
                    serde_json::Value::String(s) => !s.is_empty() && s != "false",
                    _ => false,
                },
            })
            .collect())
    }

    /// The JSON answer at `url`, read up to [`MAX_ANSWER_BYTES`] as it arrives (see the module
    /// docs). `what` names the answer for a person ("the files of owner/name"), `asked` what an
    /// error status refused ("the repository owner/name").
    async fn json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        what: &str,
        asked: &str,
    ) -> Result<T, LibraryError> {
        let mut resp = self
            .get(url)
            .timeout(self.answer_timeout)
            .send()
            .await
            .map_err(|e| self.unreachable(&e))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(self.status_error(status.as_u16(), asked));
        }
        let html = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("html"));
        if html {
            return Err(LibraryError::Hub(format!(
                "{} answered {what} with a web page, not the Hub's API: check HF_ENDPOINT",
                self.shown
            )));
        }
        let too_large = || LibraryError::AnswerTooLarge {
            endpoint: self.shown.clone(),
            url: url.replacen(&self.endpoint, &self.shown, 1),
            what: what.to_string(),
            cap: MAX_ANSWER_BYTES,
        };
        // Refused before a byte is read when the answer says its size.
        if resp
            .content_length()
            .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
        {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.unreachable(&e))? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| {
            LibraryError::Hub(format!(
                "{} did not answer {what} as the Hub's API does ({e}): check HF_ENDPOINT",
                self.shown
            ))
        })
    }

    /// A request that failed on its way (not with a status), said as one sentence (see
    /// [`super::reach`]). A connection that failed while a proxy carries the requests failed to
    /// the proxy.
    pub(super) fn unreachable(&self, e: &reqwest::Error) -> LibraryError {
        let (mut failure, tls) = HubFailure::of(e);
        let mut through_proxy = None;
        if self.proxy.is_some() && e.is_connect() && failure != HubFailure::Tls {
            through_proxy = Some(failure);
            failure = HubFailure::Proxy;
        }
        tracing::debug!("the Hub at {} did not answer: {failure:?}", self.shown);
        LibraryError::Network(Unreachable {
            failure,
            endpoint: self.shown.clone(),
            custom: self.custom,
            proxy: self.proxy.clone(),
            through_proxy,
            tls,
        })
    }

    /// An error status for `what` (a person's words: "the search", "the repository a/b").
    pub(super) fn status_error(&self, status: u16, what: &str) -> LibraryError {
        let endpoint = &self.shown;
        let message = match status {
            401 | 403 if self.withheld.is_some() => format!(
                "the Hub refused {what} (HTTP {status}): it may be gated or private, and the token HF_TOKEN was not sent, because {} is plain http to another computer, where anyone on the network could read it; set HF_ENDPOINT to an https address (or one on this computer)",
                self.shown
            ),
            401 | 403 if self.token.is_none() => format!(
                "the Hub refused {what} (HTTP {status}): it may be gated or private; accept its terms on the Hub and save a Hub token as the secret HF_TOKEN"
            ),
            401 | 403 => format!(
                "the Hub refused {what} (HTTP {status}) with the token HF_TOKEN: check that the token is valid and that you accepted the repository's terms"
            ),
            404 => format!("{what} was not found on {endpoint} (HTTP 404)"),
            407 => format!(
                "the proxy {} asks for a user and password (HTTP 407) before it carries requests to {endpoint}; put them in the proxy setting (http://USER:PASSWORD@HOST:PORT)",
                self.proxy.as_deref().unwrap_or("between this computer and the Hub")
            ),
            429 => format!("the Hub at {endpoint} is limiting requests (HTTP 429); try again in a minute"),
            500..=599 => format!(
                "the Hub at {endpoint} failed to answer {what} (HTTP {status}), a fault on its side or a proxy's; try again in a few minutes{}",
                if self.custom { ", and check that HF_ENDPOINT's server is working" } else { "" }
            ),
            s => format!(
                "the Hub at {endpoint} answered HTTP {s} for {what}; check HF_ENDPOINT{}",
                if self.custom { "" } else { " (unset, it is the public Hub)" }
            ),
        };
        LibraryError::HubStatus { status, message }
    }
}

/// Why a token must not be sent to `endpoint`, or `None` when it may: over https, or over plain
/// http to this computer (`127.0.0.0/8`, `::1` and its IPv4-mapped form `::ffff:127.x.y.z`, or
/// the name `localhost`). The address is read as reqwest reads it (`127.1` and `0x7f.1` are
/// 127.0.0.1), so what is judged is where the request goes. Any other name, even one that
/// resolves to this computer, is taken for another computer.
fn token_refusal(endpoint: &str) -> Option<&'static str> {
    let Ok(url) = reqwest::Url::parse(endpoint) else {
        return Some("it is not a URL");
    };
    match url.scheme() {
        "https" => return None,
        "http" => {}
        _ => return Some("it is neither https nor http"),
    }
    // The URL parser writes an IPv4 address in dotted decimal and an IPv6 one in brackets.
    let host = url.host_str().unwrap_or_default();
    let address = host.trim_start_matches('[').trim_end_matches(']');
    let this_computer = match address.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    };
    (!this_computer).then_some("it is plain http to another computer")
}

/// `owner/name`, each part of letters, digits, `-`, `_` and `.`.
pub(super) fn check_repo(repo: &str) -> Result<(), LibraryError> {
    let ok_part = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match repo.split_once('/') {
        Some((owner, name)) if ok_part(owner) && ok_part(name) => Ok(()),
        _ => Err(LibraryError::Invalid(format!(
            "\"{repo}\" is not a Hub repository: write it as owner/name"
        ))),
    }
}

pub(super) fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn encode(part: &str) -> String {
    part.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_goes_over_https_or_to_this_computer_only() {
        for endpoint in [
            "https://huggingface.co",
            "https://hf-mirror.example.com/",
            "https://10.0.0.5:8443",
            "http://127.0.0.1:8080",
            "http://127.45.6.7",
            "http://127.1:9000",
            "http://0x7f000001",
            "http://localhost:3000",
            "http://LOCALHOST",
            "http://[::1]:8080",
            "http://[::ffff:127.0.0.1]",
        ] {
            assert_eq!(token_refusal(endpoint), None, "{endpoint}");
        }
        for endpoint in [
            "http://huggingface.co",
            "http://10.0.0.5:8080",
            "http://192.168.1.20",
            "http://[::2]",
            "http://[::ffff:10.0.0.1]",
            "http://128.0.0.1",
            "http://localhost.example.com",
            "http://127.0.0.1.nip.io",
            "http://my-localhost",
            "ftp://127.0.0.1",
            "not a url",
        ] {
            assert!(token_refusal(endpoint).is_some(), "{endpoint}");
        }
    }

    #[test]
    fn a_token_withheld_is_said_without_the_token() {
        let secret = "hf_do_not_print";
        let hub = Hub::new("http://10.1.2.3:8080", Some(secret.into()));
        assert!(hub.token.is_none());
        let warning = hub.warning().expect("a warning");
        assert!(warning.contains("HF_TOKEN") && warning.contains("http://10.1.2.3:8080"));
        assert!(warning.contains("plain http") && warning.contains("https"));
        for text in [
            warning.to_string(),
            format!("{hub:?}"),
            hub.status_error(401, "the repository a/b").to_string(),
        ] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(hub
            .status_error(401, "the repository a/b")
            .to_string()
            .contains("was not sent"));

        // Sent (no warning) where it may go; no warning either without a token.
        for endpoint in ["https://huggingface.co", "http://127.0.0.1:9"] {
            let hub = Hub::new(endpoint, Some(secret.into()));
            assert!(hub.token.is_some() && hub.warning().is_none(), "{endpoint}");
        }
        assert!(Hub::new("http://10.1.2.3", None).warning().is_none());
    }
}
