//! A stand-in Hugging Face Hub on 127.0.0.1, for the model library's downloads.
//!
//! It serves files under the Hub's addresses and conventions:
//! - `GET /api/models/{owner}/{name}/tree/{revision}`: the files, with `lfs.oid` (sha256) and size;
//! - `GET|HEAD /{owner}/{name}/resolve/{revision}/{file}`: the bytes, honouring `Range`, with
//!   `X-Linked-Size` and `X-Linked-Etag`;
//! - `GET /api/models?search=…`: the repositories whose name contains the words.
//!
//! and misbehaves on request ([`Behaviour`]): 404s, an HTML error page, a body cut short (a
//! number of times, then whole), a slow rate, 5xx answers, a range ignored, a wrong hash listed,
//! no tree API, a token required, every address redirected to another server, and API answers
//! (search, tree) of any size, made as they are sent so that the stand-in holds none of it. It
//! records every request (method, path, `Host`, `Range`, the `Authorization` header).
//!
//! Its requests may come through it as an HTTP proxy (`HTTP_PROXY` naming it, the request line
//! an absolute URL): the route is the URL's path, and [`HubRequest::host`] the host asked for.
//!
//! `GET /_requests` returns the record as JSON and `POST /_behaviour` replaces the behaviour,
//! for tests in other languages (the `stub-hub` binary).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

/// A file the stand-in serves.
#[derive(Clone)]
pub struct HubFile {
    /// `owner/name`.
    pub repo: String,
    /// Its path in the repository.
    pub path: String,
    /// Its bytes.
    pub bytes: axum::body::Bytes,
}

impl HubFile {
    /// A file of `repo` at `path` with `bytes`.
    pub fn new(repo: &str, path: &str, bytes: Vec<u8>) -> HubFile {
        HubFile {
            repo: repo.to_string(),
            path: path.to_string(),
            bytes: axum::body::Bytes::from(bytes),
        }
    }

    fn sha256(&self) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(&self.bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// How the stand-in misbehaves. The default serves everything correctly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Behaviour {
    /// Every file address answers 404.
    pub not_found: bool,
    /// File addresses answer 200 with an HTML error page.
    pub html: bool,
    /// Cut each of the next `cut_times` file bodies after this many bytes of the response.
    pub cut_after: Option<u64>,
    /// How many bodies to cut (then whole again); with `cut_after` and 0 here, every body.
    pub cut_times: u32,
    /// Send file bodies at about this many bytes per second.
    pub rate: Option<u64>,
    /// Answer the next this-many file requests with HTTP 503.
    pub fail_times: u32,
    /// Ignore `Range` (answer 200 with the whole file).
    pub ignore_range: bool,
    /// List this sha256 in the tree and headers instead of the file's own.
    pub wrong_sha256: Option<String>,
    /// The tree API answers 404 (size and hash only in the file's headers).
    pub no_tree: bool,
    /// Every address answers 401 to a request without an `Authorization` header (a gated
    /// repository).
    pub require_token: bool,
    /// Every address answers 302 to the same path and query under this base URL (as the Hub
    /// sends files to its CDN, another origin).
    pub redirect_to: Option<String>,
    /// The search and tree answers are a JSON array of about this many bytes, of entries the
    /// library skips (tree: folders; search: repositories of one padded id), made as sent.
    pub huge_json: Option<u64>,
    /// With `huge_json`: announce its length in `Content-Length` (else it is sent chunked).
    pub huge_json_sized: bool,
}

/// A request the stand-in received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HubRequest {
    /// `GET` or `HEAD`.
    pub method: String,
    /// The path and query.
    pub path: String,
    /// The `Range` header.
    pub range: Option<String>,
    /// Whether an `Authorization` header came.
    pub authorized: bool,
    /// The `Authorization` header, as it came.
    pub authorization: Option<String>,
    /// The `Host` header (the host a proxied request was for).
    pub host: Option<String>,
}

struct Shared {
    files: Vec<HubFile>,
    behaviour: Mutex<Behaviour>,
    requests: Mutex<Vec<HubRequest>>,
    /// Bytes of `huge_json` answers handed to the connection so far.
    huge_sent: AtomicU64,
}

/// The running stand-in.
pub struct StubHub {
    /// `http://127.0.0.1:PORT`: what `HF_ENDPOINT` is set to.
    pub url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StubHub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StubHub {
    /// Serve `files` on a free port of 127.0.0.1.
    pub async fn start(files: Vec<HubFile>) -> StubHub {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), files)
            .await
            .expect("bind 127.0.0.1")
    }

    /// Serve `files` on `addr`.
    pub async fn start_on(addr: SocketAddr, files: Vec<HubFile>) -> std::io::Result<StubHub> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let shared = Arc::new(Shared {
            files,
            behaviour: Mutex::default(),
            requests: Mutex::default(),
            huge_sent: AtomicU64::new(0),
        });
        let app = Router::new()
            .route("/api/models", get(search))
            .route("/api/models/{owner}/{name}/tree/{revision}", get(tree))
            .route(
                "/{owner}/{name}/resolve/{revision}/{*file}",
                get(file).head(file),
            )
            .route("/_requests", get(requests))
            .route("/_behaviour", post(set_behaviour))
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(&shared),
                gate,
            ))
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(StubHub {
            url: format!("http://{local}"),
            shared,
            task,
        })
    }

    /// Replace the behaviour.
    pub fn set(&self, behaviour: Behaviour) {
        *self.shared.behaviour.lock().unwrap() = behaviour;
    }

    /// The requests so far.
    pub fn requests(&self) -> Vec<HubRequest> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Bytes of `huge_json` answers handed to the connection so far: what a client that stops
    /// reading leaves unsent is not counted (only what the socket's buffers took).
    pub fn huge_json_sent(&self) -> u64 {
        self.shared.huge_sent.load(Ordering::Relaxed)
    }

    /// The file requests (`GET` of a `resolve` address) so far.
    pub fn downloads(&self) -> Vec<HubRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "GET" && r.path.contains("/resolve/"))
            .collect()
    }
}

fn record(shared: &Shared, method: &Method, path: String, headers: &HeaderMap) {
    shared.requests.lock().unwrap().push(HubRequest {
        method: method.to_string(),
        path,
        range: headers
            .get("range")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        authorized: headers.contains_key("authorization"),
        authorization: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        host: headers
            .get("host")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
    });
}

/// Before any route: a redirect elsewhere, or a 401 to a request without a token, when the
/// behaviour asks for one (the request is recorded here, since no route sees it).
async fn gate(
    State(shared): State<Arc<Shared>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let path = request.uri().path().to_string();
    if path.starts_with("/_") {
        return next.run(request).await;
    }
    let behaviour = shared.behaviour.lock().unwrap().clone();
    let refused = behaviour.require_token && !request.headers().contains_key("authorization");
    if let Some(base) = behaviour.redirect_to.as_deref().filter(|_| !refused) {
        record(&shared, request.method(), path, request.headers());
        let query = request
            .uri()
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        let to = format!(
            "{}{}{query}",
            base.trim_end_matches('/'),
            request.uri().path()
        );
        return (StatusCode::FOUND, [("location", to)]).into_response();
    }
    if refused {
        record(&shared, request.method(), path, request.headers());
        return (
            StatusCode::UNAUTHORIZED,
            Json(serde_json::json!({"error": "Access to this repository is restricted."})),
        )
            .into_response();
    }
    next.run(request).await
}

/// A JSON array of about `size` bytes: `entry` repeated, then `last`; made as it is sent, and
/// what it hands to the connection counted in `shared.huge_sent`.
fn huge_json(
    shared: &Arc<Shared>,
    size: u64,
    sized: bool,
    entry: serde_json::Value,
    last: serde_json::Value,
) -> Response {
    let entry = format!("{entry},").into_bytes();
    let last = format!("{last}]").into_bytes();
    let count = size.div_ceil(entry.len() as u64).max(1);
    let total = 1 + count * entry.len() as u64 + last.len() as u64;
    // About 64 KB a chunk, as a server writing a big answer would.
    let per_chunk = (65_536 / entry.len()).max(1) as u64;
    let shared = Arc::clone(shared);
    // The state: how many entries are sent, or `None` once the array is closed.
    let stream = futures::stream::unfold(Some(0u64), move |state| {
        let Some(sent) = state else {
            return std::future::ready(None);
        };
        let mut chunk = Vec::with_capacity(65_536 + last.len() + 1);
        if sent == 0 {
            chunk.push(b'[');
        }
        let n = per_chunk.min(count - sent);
        for _ in 0..n {
            chunk.extend_from_slice(&entry);
        }
        let next = (sent + n < count).then_some(sent + n);
        if next.is_none() {
            chunk.extend_from_slice(&last);
        }
        shared
            .huge_sent
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        std::future::ready(Some((
            Ok::<_, std::io::Error>(axum::body::Bytes::from(chunk)),
            next,
        )))
    });
    let mut resp = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json");
    if sized {
        resp = resp.header("content-length", total.to_string());
    }
    resp.body(Body::from_stream(stream)).unwrap()
}

async fn requests(State(shared): State<Arc<Shared>>) -> Json<Vec<HubRequest>> {
    Json(shared.requests.lock().unwrap().clone())
}

async fn set_behaviour(
    State(shared): State<Arc<Shared>>,
    Json(behaviour): Json<Behaviour>,
) -> StatusCode {
    *shared.behaviour.lock().unwrap() = behaviour;
    StatusCode::NO_CONTENT
}

async fn search(
    State(shared): State<Arc<Shared>>,
    method: Method,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    record(&shared, &method, "/api/models".into(), &headers);
    let behaviour = shared.behaviour.lock().unwrap().clone();
    if let Some(size) = behaviour.huge_json {
        let entry = serde_json::json!({"id": "pad/pad", "downloads": 0, "pad": "x".repeat(1000)});
        let last = serde_json::json!({"id": "pad/pad"});
        return huge_json(&shared, size, behaviour.huge_json_sized, entry, last);
    }
    let words = query
        .get("search")
        .cloned()
        .unwrap_or_default()
        .to_lowercase();
    let mut repos: Vec<&str> = shared.files.iter().map(|f| f.repo.as_str()).collect();
    repos.dedup();
    let found: Vec<serde_json::Value> = repos
        .into_iter()
        .filter(|r| r.to_lowercase().contains(words.trim()))
        .map(|r| {
            serde_json::json!({
                "id": r, "modelId": r, "downloads": 1234, "likes": 5, "gated": false,
                "tags": ["gguf"]
            })
        })
        .collect();
    Json(serde_json::Value::Array(found)).into_response()
}

async fn tree(
    State(shared): State<Arc<Shared>>,
    method: Method,
    headers: HeaderMap,
    Path((owner, name, revision)): Path<(String, String, String)>,
) -> Response {
    record(
        &shared,
        &method,
        format!("/api/models/{owner}/{name}/tree/{revision}"),
        &headers,
    );
    let behaviour = shared.behaviour.lock().unwrap().clone();
    if let Some(size) = behaviour.huge_json {
        let entry =
            serde_json::json!({"type": "directory", "path": "pad", "pad": "x".repeat(1000)});
        let last = serde_json::json!({"type": "directory", "path": "pad"});
        return huge_json(&shared, size, behaviour.huge_json_sized, entry, last);
    }
    let repo = format!("{owner}/{name}");
    let files: Vec<&HubFile> = shared.files.iter().filter(|f| f.repo == repo).collect();
    if behaviour.no_tree || files.is_empty() {
        return (
            StatusCode::NOT_FOUND,
            Json(serde_json::json!({"error": "Repository not found"})),
        )
            .into_response();
    }
    let mut entries = vec![serde_json::json!({
        "type": "file", "oid": "0123", "size": 1519, "path": "README.md"
    })];
    for f in files {
        let sha = behaviour.wrong_sha256.clone().unwrap_or_else(|| f.sha256());
        entries.push(serde_json::json!({
            "type": "file", "oid": "abcd", "size": f.bytes.len(), "path": f.path,
            "lfs": {"oid": sha, "size": f.bytes.len(), "pointerSize": 135}
        }));
    }
    Json(serde_json::Value::Array(entries)).into_response()
}

async fn file(
    State(shared): State<Arc<Shared>>,
    method: Method,
    headers: HeaderMap,
    Path((owner, name, revision, path)): Path<(String, String, String, String)>,
) -> Response {
    record(
        &shared,
        &method,
        format!("/{owner}/{name}/resolve/{revision}/{path}"),
        &headers,
    );
    let repo = format!("{owner}/{name}");
    let Some(found) = shared
        .files
        .iter()
        .find(|f| f.repo == repo && f.path == path)
        .cloned()
    else {
        return (StatusCode::NOT_FOUND, "Entry not found").into_response();
    };
    // One decision per request, taken under the lock (counters go down here).
    let (behaviour, cut) = {
        let mut b = shared.behaviour.lock().unwrap();
        let is_get = method == Method::GET;
        if is_get && b.fail_times > 0 {
            b.fail_times -= 1;
            return (StatusCode::SERVICE_UNAVAILABLE, "try later").into_response();
        }
        let cut = match (b.cut_after, is_get) {
            (Some(n), true) if b.cut_times > 0 => {
                b.cut_times -= 1;
                if b.cut_times == 0 {
                    b.cut_after = None;
                }
                Some(n)
            }
            (Some(n), true) => Some(n),
            _ => None,
        };
        (b.clone(), cut)
    };
    if behaviour.not_found {
        return (StatusCode::NOT_FOUND, "Entry not found").into_response();
    }
    if behaviour.html {
        return (
            StatusCode::OK,
            [("content-type", "text/html; charset=utf-8")],
            "<!doctype html><html><body><h1>Something went wrong</h1></body></html>",
        )
            .into_response();
    }
    let total = found.bytes.len() as u64;
    let sha = behaviour
        .wrong_sha256
        .clone()
        .unwrap_or_else(|| found.sha256());
    let range_start = headers
        .get("range")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("bytes="))
        .and_then(|v| v.strip_suffix('-'))
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|_| !behaviour.ignore_range);
    let start = range_start.unwrap_or(0);
    if start > total {
        return (StatusCode::RANGE_NOT_SATISFIABLE, "").into_response();
    }
    let mut resp = Response::builder()
        .header("content-type", "application/octet-stream")
        .header("accept-ranges", "bytes")
        .header("x-linked-size", total.to_string())
        .header("x-linked-etag", format!("\"{sha}\""))
        .header("etag", format!("\"{sha}\""))
        .header("content-length", (total - start).to_string());
    resp = match range_start {
        Some(s) => resp.status(StatusCode::PARTIAL_CONTENT).header(
            "content-range",
            format!("bytes {s}-{}/{total}", total.saturating_sub(1)),
        ),
        None => resp.status(StatusCode::OK),
    };
    if method == Method::HEAD {
        return resp.body(Body::empty()).unwrap();
    }
    let end = match cut {
        Some(n) => (start + n).min(total),
        None => total,
    };
    let rate = behaviour.rate;
    let chunk = rate.map_or(256 * 1024, |r| (r / 20).clamp(1, 256 * 1024)) as usize;
    let bytes = found.bytes;
    let cut_short = end < total;
    let stream = futures::stream::unfold(start as usize, move |at| {
        let bytes = bytes.clone();
        async move {
            if at >= end as usize {
                if cut_short {
                    // Let what was sent reach the client, then drop the connection: the client
                    // sees a body shorter than announced.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    return Some((Err(std::io::Error::other("cut short")), usize::MAX));
                }
                return None;
            }
            if let Some(r) = rate {
                tokio::time::sleep(Duration::from_secs_f64(chunk as f64 / r as f64)).await;
            }
            let to = (at + chunk).min(end as usize);
            Some((Ok::<_, std::io::Error>(bytes.slice(at..to)), to))
        }
    });
    // After an error the stream ends.
    let stream = futures::StreamExt::take_while(stream, {
        let mut failed = false;
        move |item| {
            let go = !failed;
            failed |= item.is_err();
            std::future::ready(go)
        }
    });
    resp.body(Body::from_stream(stream)).unwrap()
}
