//! Local stand-ins for remote services, each bound to 127.0.0.1:0.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub uri: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub type Log = Arc<Mutex<Vec<Seen>>>;

/// A running server: its base URL and what it received.
pub struct Server {
    pub base: String,
    pub log: Log,
}

impl Server {
    pub fn requests(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }
}

pub async fn serve(router: Router<Log>) -> Server {
    let log: Log = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router.with_state(log.clone());
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    Server {
        base: format!("http://{addr}"),
        log,
    }
}

pub fn record(log: &Log, method: &Method, uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Seen {
    let seen = Seen {
        method: method.to_string(),
        uri: uri.to_string(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect(),
        body: String::from_utf8_lossy(body).into_owned(),
    };
    log.lock().unwrap().push(seen.clone());
    seen
}

/// A JSON API for HTTP tools.
pub async fn json_api() -> Server {
    async fn echo(
        State(log): State<Log>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Json<Value> {
        let seen = record(&log, &method, &uri, &headers, &body);
        Json(json!({
            "method": seen.method,
            "uri": seen.uri,
            "authorization": seen.header("authorization"),
            "body": serde_json::from_str::<Value>(&seen.body).unwrap_or(Value::Null),
        }))
    }
    async fn price(
        State(log): State<Log>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Json<Value> {
        record(&log, &method, &uri, &headers, &body);
        Json(
            json!({"code": 200, "data": {"price": 189.5, "symbol": "AAPL",
            "items": [{"name": "a", "qty": 1}, {"name": "b", "qty": 5}, {"name": "c", "qty": 9}]}}),
        )
    }
    /// Like a careless API: echoes the credentials it got in an error body.
    async fn fail(
        State(log): State<Log>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        let seen = record(&log, &method, &uri, &headers, &body);
        let auth = seen.header("authorization").unwrap_or("").to_string();
        let text = format!(
            "invalid credentials: {auth} (request {}) {}",
            seen.uri,
            "x".repeat(2000)
        );
        (StatusCode::UNAUTHORIZED, text).into_response()
    }
    async fn redirect_loop() -> Redirect {
        Redirect::temporary("/redirect")
    }
    async fn big() -> String {
        "y".repeat(9 * 1024 * 1024)
    }
    async fn slow() -> &'static str {
        tokio::time::sleep(Duration::from_secs(10)).await;
        "late"
    }
    async fn long() -> String {
        (0..3000)
            .map(|i| format!("line {i:05} of a long answer\n"))
            .collect()
    }
    async fn text() -> &'static str {
        "<html>not json</html>"
    }
    serve(
        Router::new()
            .route("/echo", any(echo))
            .route("/echo/{*rest}", any(echo))
            .route("/price", any(price))
            .route("/fail", any(fail))
            .route("/redirect", get(redirect_loop))
            .route("/big", get(big))
            .route("/slow", get(slow))
            .route("/long", get(long))
            .route("/text", get(text)),
    )
    .await
}

/// The key the Bocha stand-in accepts.
pub const BOCHA_KEY: &str = "sk-bocha-test-0123456789";

/// Bocha AI web search: `POST /v1/web-search` with `Authorization: Bearer <key>` and a JSON body
/// `{query, freshness, summary, count}`; answers `{code, log_id, msg, data: {webPages: {value}}}`.
pub async fn bocha() -> Server {
    async fn search(
        State(log): State<Log>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        let seen = record(&log, &method, &uri, &headers, &body);
        if seen.header("authorization") != Some(&format!("Bearer {BOCHA_KEY}")) {
            return (
                StatusCode::UNAUTHORIZED,
                Json(json!({"code": 401, "log_id": "l1", "msg": "Invalid API KEY", "data": null})),
            )
                .into_response();
        }
        let req: Value = serde_json::from_str(&seen.body).unwrap_or_default();
        let query = req["query"].as_str().unwrap_or_default().to_string();
        let count = req["count"].as_u64().unwrap_or(10) as usize;
        let pages: Vec<Value> = (1..=count.min(3))
            .map(|i| {
                json!({
                    "id": format!("https://api.bochaai.com/v1/#WebPages.{i}"),
                    "name": format!("Result {i} about {query}"),
                    "url": format!("https://example.com/{i}"),
                    "displayUrl": format!("example.com/{i}"),
                    "snippet": format!("Snippet {i}."),
                    "summary": format!("Summary {i} of the page."),
                    "siteName": "Example",
                    "siteIcon": "https://example.com/favicon.ico",
                    "datePublished": "2026-11-01T08:00:00+08:00",
                    "dateLastCrawled": "2026-11-02T08:00:00Z",
                    "cachedPageUrl": null,
                    "language": null,
                    "isFamilyFriendly": null,
                    "isNavigational": null
                })
            })
            .collect();
        Json(json!({"code": 200, "log_id": "l2", "msg": null, "data": {
            "_type": "SearchResponse",
            "queryContext": {"originalQuery": query},
            "webPages": {"webSearchUrl": "", "totalEstimatedMatches": 1000, "value": pages, "someResultsRemoved": true},
            "images": null, "videos": null
        }}))
        .into_response()
    }
    serve(Router::new().route("/v1/web-search", post(search))).await
}

/// Jina Reader: `GET /<url>` returns the page as text.
pub async fn jina() -> Server {
    async fn read(
        State(log): State<Log>,
        Path(url): Path<String>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
    ) -> Response {
        record(&log, &method, &uri, &headers, &Bytes::new());
        if url.contains("missing") {
            return (StatusCode::UNPROCESSABLE_ENTITY, "target returned 404").into_response();
        }
        let body = format!(
            "Title: A page\n\nURL Source: {url}\n\nMarkdown Content:\n{}",
            "Lorem ipsum dolor sit amet. ".repeat(100)
        );
        body.into_response()
    }
    serve(Router::new().route("/{*url}", get(read))).await
}

/// A server that sends every request elsewhere: `/302/…` answers 302 and `/307/…` answers 307
/// with `Location: {target}/…` (same path rest and query), `/same/…` answers 302 to `/…` on
/// itself, and anything else is echoed like [`json_api`]'s `/echo`. Every request is logged.
pub async fn redirector(target: String) -> Server {
    async fn hop(
        State((log, target)): State<(Log, String)>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        let seen = record(&log, &method, &uri, &headers, &body);
        let path = uri.path();
        let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
        let (status, location) = if let Some(rest) = path.strip_prefix("/302") {
            (StatusCode::FOUND, format!("{target}{rest}{query}"))
        } else if let Some(rest) = path.strip_prefix("/307") {
            (
                StatusCode::TEMPORARY_REDIRECT,
                format!("{target}{rest}{query}"),
            )
        } else if let Some(rest) = path.strip_prefix("/same") {
            (StatusCode::FOUND, format!("{rest}{query}"))
        } else {
            return Json(json!({"uri": seen.uri, "method": seen.method})).into_response();
        };
        (status, [(axum::http::header::LOCATION, location)]).into_response()
    }
    let log: Log = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .fallback(hop)
        .with_state((log.clone(), target));
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    Server {
        base: format!("http://{addr}"),
        log,
    }
}
