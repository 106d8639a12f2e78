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
//! no tree API. It records every request (method, path, `Range`, whether a token came).
//!
//! `GET /_requests` returns the record as JSON and `POST /_behaviour` replaces the behaviour,
//! for tests in other languages (the `stub-hub` binary).

use std::collections::HashMap;
use std::net::SocketAddr;
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
}

struct Shared {
    files: Vec<HubFile>,
    behaviour: Mutex<Behaviour>,
    requests: Mutex<Vec<HubRequest>>,
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
    });
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
) -> Json<serde_json::Value> {
    record(&shared, &method, "/api/models".into(), &headers);
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
    Json(serde_json::Value::Array(found))
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
