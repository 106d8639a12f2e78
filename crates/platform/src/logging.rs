//! Logging with `tracing` to a daily-rotating file in the log folder (7 files kept) and, when
//! asked, to stderr. The level comes from `ARTIFACTFLOW_LOG` (an `EnvFilter` directive such as
//! `debug` or `engine=trace`), default `info`.
//!
//! The HTTP stack's own debug and trace lines (reqwest, hyper, h2, rustls, and `log` records
//! from them) describe requests, connections and redirects, and a request URL can carry a secret
//! filled into a `?key={{K}}` query. Those crates are held at INFO whatever `ARTIFACTFLOW_LOG`
//! asks ([`http_stack_detail`]); the engine's own lines never print a filled-in request.
//!
//! The MCP SDK's (`rmcp`) own lines below WARN print the messages it sends and receives whole:
//! a server's unmasked words, a tool's arguments, megabytes at a time. They are never logged
//! ([`mcp_sdk_detail`]); the client logs what a server says itself, masked, escaped and cut.

use std::path::Path;

use tracing::{Level, Metadata};
use tracing_appender::non_blocking::WorkerGuard;

/// Lines the log writer's queue holds while the file catches up (32 bytes each).
const LOG_QUEUE_LINES: usize = 8_192;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::filter::{filter_fn, FilterExt};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer, Registry};

/// Environment variable with the log filter.
pub const LOG_ENV: &str = "ARTIFACTFLOW_LOG";

/// Keeps the background log writer alive; logs are flushed when it is dropped.
pub struct LogGuard {
    _guard: WorkerGuard,
}

/// Start logging into `log_dir/<prefix>.YYYY-MM-DD.log`. Returns `None` (and logs only to stderr,
/// if enabled) when the folder cannot be written, so logging never stops the app.
pub fn init(log_dir: &Path, prefix: &str, also_stderr: bool) -> Option<LogGuard> {
    type BoxedLayer = Box<dyn Layer<Registry> + Send + Sync>;
    let filter = || {
        EnvFilter::try_from_env(LOG_ENV)
            .unwrap_or_else(|_| EnvFilter::new("info"))
            .and(filter_fn(|meta| {
                !http_stack_detail(meta) && !mcp_sdk_detail(meta)
            }))
    };
    let mut layers: Vec<BoxedLayer> = Vec::new();
    if also_stderr {
        layers.push(
            fmt::layer()
                .with_writer(std::io::stderr)
                .with_target(false)
                .with_filter(filter())
                .boxed(),
        );
    }
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(prefix)
        .filename_suffix("log")
        .max_log_files(7)
        .build(log_dir);
    let (guard, failure) = match appender {
        Ok(appender) => {
            // The default queue holds 128,000 lines, allocated up front: 4 MB of the app's
            // idle memory for a log that writes a few lines a minute. A burst beyond this
            // queue drops lines (counted by the writer) rather than blocking the caller.
            let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
                .buffered_lines_limit(LOG_QUEUE_LINES)
                .finish(appender);
            layers.push(
                fmt::layer()
                    .with_writer(writer)
                    .with_ansi(false)
                    .with_filter(filter())
                    .boxed(),
            );
            (Some(LogGuard { _guard: guard }), None)
        }
        Err(e) => (None, Some(e)),
    };
    let _ = tracing_subscriber::registry().with(layers).try_init();
    if let Some(e) = failure {
        tracing::warn!("cannot write logs to {}: {e}", log_dir.display());
    }
    guard
}

/// Crates whose lines can describe a request in full (URL with its query, headers, bytes read and
/// written) or a redirect's target.
const HTTP_STACK: &[&str] = &[
    "reqwest",
    "hyper",
    "hyper_util",
    "h2",
    "h3",
    "rustls",
    "tower",
    "tower_http",
];

/// A DEBUG or TRACE line from the HTTP stack: never logged, since it may hold a secret.
fn http_stack_detail(meta: &Metadata<'_>) -> bool {
    if *meta.level() <= Level::INFO {
        return false;
    }
    let target = meta.target();
    let krate = target.split("::").next().unwrap_or(target);
    HTTP_STACK.contains(&krate)
}

/// An INFO, DEBUG or TRACE line from the MCP SDK: never logged (see the module docs).
fn mcp_sdk_detail(meta: &Metadata<'_>) -> bool {
    *meta.level() > Level::WARN && meta.target().split("::").next() == Some("rmcp")
}

#[cfg(test)]
mod tests {
    #[test]
    fn writes_a_log_file_in_the_log_folder() {
        let tmp = tempfile::tempdir().unwrap();
        // The only test in this binary that sets the global subscriber and reads LOG_ENV.
        std::env::set_var(super::LOG_ENV, "trace");
        let guard = super::init(tmp.path(), "test", false);
        assert!(guard.is_some());
        tracing::info!("hello from the logging test");
        tracing::debug!(target: "engine::run", "engine detail kept");
        tracing::debug!(target: "reqwest::connect", "GET https://h/?key=SECRET-1");
        tracing::trace!(target: "hyper_util::client", "GET https://h/?key=SECRET-2");
        tracing::info!(target: "reqwest", "reqwest info kept");
        tracing::info!(target: "rmcp::service", "received SECRET-3");
        tracing::debug!(target: "rmcp::transport", "sent SECRET-4");
        tracing::warn!(target: "rmcp::service", "rmcp warning kept");
        drop(guard);
        let files: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
        assert!(
            name.starts_with("test.") && name.ends_with(".log"),
            "{name}"
        );
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert!(text.contains("hello from the logging test"), "{text}");
        assert!(text.contains("engine detail kept") && text.contains("reqwest info kept"));
        assert!(text.contains("rmcp warning kept"), "{text}");
        assert!(
            !text.contains("SECRET"),
            "HTTP stack and MCP SDK detail is never logged: {text}"
        );
    }
}
