//! The Hugging Face Hub as the library uses it: its HTTP conventions, no SDK.
//!
//! - a repository's files, with their size and sha256: `GET {endpoint}/api/models/{repo}/tree/{revision}`
//!   (large files carry `lfs.oid`, their sha256, and `lfs.size`);
//! - a file: `GET {endpoint}/{repo}/resolve/{revision}/{file}` (redirected to a CDN, which
//!   honours `Range`); its `HEAD` carries `X-Linked-Size` and `X-Linked-Etag` (the sha256);
//! - search: `GET {endpoint}/api/models?search=…&filter=gguf`.
//!
//! The endpoint is `HF_ENDPOINT` when set (mirrors, and the tests' stand-in Hub on 127.0.0.1),
//! else `https://huggingface.co`. A token, for gated repositories, is sent as a bearer token to
//! the endpoint only (reqwest drops it on a redirect to another host).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::gguf::quantization_from_name;
use super::LibraryError;

/// The public Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// A Hub (or a mirror of it).
#[derive(Clone)]
pub struct Hub {
    endpoint: String,
    token: Option<String>,
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
        Hub {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            token: token.filter(|t| !t.trim().is_empty()),
            http,
            no_redirect,
        }
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
        let resp = self
            .get(&url)
            .send()
            .await
            .map_err(|e| LibraryError::network(&self.endpoint, e))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(self.status_error(status.as_u16(), &format!("the repository {repo}")));
        }
        let entries: Vec<TreeEntry> = json_body(resp, &url).await?;
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
        .map_err(|e| LibraryError::Hub(format!("bad Hub address {}: {e}", self.endpoint)))?;
        let shown = url.to_string();
        let resp = self
            .get(url.as_str())
            .send()
            .await
            .map_err(|e| LibraryError::network(&self.endpoint, e))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(self.status_error(status.as_u16(), "the search"));
        }
        let entries: Vec<SearchEntry> = json_body(resp, &shown).await?;
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

    pub(super) fn status_error(&self, status: u16, what: &str) -> LibraryError {
        LibraryError::Hub(match status {
            401 | 403 if self.token.is_none() => format!(
                "the Hub refused {what} (HTTP {status}): it may be gated or private; accept its terms on the Hub and save a Hub token as the secret HF_TOKEN"
            ),
            401 | 403 => format!(
                "the Hub refused {what} (HTTP {status}) with the token HF_TOKEN: check that the token is valid and that you accepted the repository's terms"
            ),
            404 => format!("{what} was not found on {} (HTTP 404)", self.endpoint),
            429 => "the Hub is limiting requests (HTTP 429); try again in a minute".to_string(),
            s => format!("the Hub answered HTTP {s} for {what}"),
        })
    }
}

async fn json_body<T: serde::de::DeserializeOwned>(
    resp: reqwest::Response,
    url: &str,
) -> Result<T, LibraryError> {
    let html = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("html"));
    let text = resp
        .text()
        .await
        .map_err(|e| LibraryError::Hub(format!("reading {url}: {e}")))?;
    if html {
        return Err(LibraryError::Hub(format!(
            "{url} answered with a web page, not the Hub's API: check HF_ENDPOINT"
        )));
    }
    serde_json::from_str(&text)
        .map_err(|e| LibraryError::Hub(format!("{url} did not answer as the Hub's API does: {e}")))
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
