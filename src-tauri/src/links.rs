//! Links: the main window only ever shows the app itself. A link in an answer, an artifact or
//! a tool card must not replace the app with a remote page (live state lost, no way back, and
//! the page could pose as the app asking for keys). So:
//!
//! - [`navigation_guard`] refuses every navigation away from the app's own pages;
//! - the UI hands http(s) and mailto links to [`open_external`], which opens them in the
//!   system's browser or mail program (through the opener plugin), and refuses anything else.

use tauri::plugin::TauriPlugin;
use tauri::{AppHandle, Manager, Runtime, Url};

use crate::error::{AppError, ErrorCode};

/// Schemes [`open_external`] hands to the system.
const EXTERNAL_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// A plugin whose only job is to refuse navigations away from the app's own pages.
pub fn navigation_guard<R: Runtime>() -> TauriPlugin<R> {
    tauri::plugin::Builder::new("navigation-guard")
        .on_navigation(|webview, url| {
            // The dev server is the app's page only in `tauri dev` builds.
            let dev_url = if tauri::is_dev() {
                webview.config().build.dev_url.clone()
            } else {
                None
            };
            let allowed = is_app_page(url, dev_url.as_ref());
            if !allowed {
                // Scheme and host only: a link's path or query may carry anything.
                tracing::warn!(
                    scheme = url.scheme(),
                    host = url.host_str().unwrap_or(""),
                    "navigation refused: the window only shows the app"
                );
            }
            allowed
        })
        .build()
}

/// Is `url` one of the app's own pages: the embedded UI (`tauri://localhost` on Linux and
/// macOS, `http(s)://tauri.localhost` on Windows), the dev server in dev builds, or the
/// empty documents of frames (`about:blank`, and `about:srcdoc` of HTML artifacts, which load
/// nothing: their frame is sandboxed with a CSP of its own)?
pub(crate) fn is_app_page(url: &Url, dev_url: Option<&Url>) -> bool {
    match url.scheme() {
        // An MCP view's frame (see commands::views): served once, under its own policy.
        "tauri" | "mcp-view" => url.host_str() == Some("localhost"),
        "http" | "https" => {
            url.host_str() == Some("tauri.localhost")
                || (url.scheme() == "http" && url.host_str() == Some("mcp-view.localhost"))
                || dev_url.is_some_and(|dev| dev.origin() == url.origin())
        }
        "about" => matches!(url.path(), "blank" | "srcdoc"),
        _ => false,
    }
}

/// `text` as a link [`open_external`] may open, or why not.
pub(crate) fn external_url(text: &str) -> Result<Url, AppError> {
    let refused = |why: &str| {
        AppError::new(
            ErrorCode::LinkRefused,
            format!("not opened: {why}; only http, https and mailto links open (in your browser or mail program)"),
        )
    };
    let url = Url::parse(text.trim()).map_err(|_| refused("this is not a complete link"))?;
    if !EXTERNAL_SCHEMES.contains(&url.scheme()) {
        return Err(refused(&format!(
            "`{}:` links are not opened",
            url.scheme()
        )));
    }
    if url.scheme() != "mailto" && url.host_str().is_none_or(str::is_empty) {
        return Err(refused("the link names no host"));
    }
    Ok(url)
}

/// Open an http(s) or mailto link from the window in the system's browser or mail program;
/// anything else is refused (the window itself never leaves the app, see [`navigation_guard`]).
#[tauri::command]
#[specta::specta]
pub fn open_external(app: AppHandle, url: String) -> Result<(), AppError> {
    open_url(&app, &external_url(&url)?)
}

/// Open `url` in the system's browser (or mail program), or, in the end-to-end tests' build,
/// log it instead (see [`crate::seams::opener_log`]).
pub(crate) fn open_url(app: &AppHandle, url: &Url) -> Result<(), AppError> {
    use tauri_plugin_opener::OpenerExt;
    if let Some(log) = crate::seams::opener_log() {
        return log_instead_of_opening(&log, url);
    }
    app.opener()
        .open_url(url.as_str(), None::<&str>)
        .map_err(|e| {
            AppError::new(
                ErrorCode::OpenFailed,
                format!("cannot open the link in your browser: {e}; copy it and open it by hand"),
            )
        })
}

/// The end-to-end tests' stand-in for the system browser: the URL is appended to `log`.
fn log_instead_of_opening(log: &std::path::Path, url: &Url) -> Result<(), AppError> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| writeln!(f, "{url}"))
        .map_err(|e| {
            AppError::new(
                ErrorCode::Io,
                format!("cannot write {}: {e}", log.display()),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn the_window_shows_only_the_app() {
        for own in [
            "tauri://localhost/",
            "tauri://localhost/index.html#x",
            "http://tauri.localhost/",
            "https://tauri.localhost/assets/x.js",
            "about:blank",
            "about:srcdoc",
            "mcp-view://localhost/0123abcd",
            "http://mcp-view.localhost/0123abcd",
        ] {
            assert!(is_app_page(&url(own), None), "{own} is the app");
        }
        for away in [
            "https://example.com/docs",
            "http://localhost:1420/",
            "tauri://evil.example/",
            "http://tauri.localhost.evil.example/",
            "file:///etc/passwd",
            "data:text/html,<h1>keys?</h1>",
            "javascript:alert(1)",
            "about:config",
            "mcp-view://evil.example/",
            "https://mcp-view.localhost/",
            "http://mcp-view.localhost.evil.example/",
        ] {
            assert!(!is_app_page(&url(away), None), "{away} is not the app");
        }
        // The dev server's origin only, and only when given (dev builds).
        let dev = url("http://localhost:1420");
        assert!(is_app_page(&url("http://localhost:1420/"), Some(&dev)));
        assert!(!is_app_page(&url("http://localhost:1421/"), Some(&dev)));
    }

    #[test]
    fn only_http_https_and_mailto_open_outside() {
        for ok in [
            "https://example.com/docs?q=1",
            "http://127.0.0.1:8080/",
            "mailto:someone@example.com",
        ] {
            assert_eq!(external_url(ok).unwrap().as_str(), ok);
        }
        for refused in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "tauri://localhost/",
            "ftp://example.com/",
            "smb://server/share",
            "/relative/path",
            "https://",
        ] {
            let e = external_url(refused).unwrap_err();
            assert_eq!(e.code, ErrorCode::LinkRefused, "{refused}");
            assert!(
                e.message.contains("only http, https and mailto"),
                "{}",
                e.message
            );
        }
    }
}
