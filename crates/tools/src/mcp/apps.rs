//! MCP Apps (the UI extension, `io.modelcontextprotocol/ui`): the content security policy a
//! server's view runs under. A view is untrusted HTML; the app shows it in a frame sandboxed
//! without the app's origin, under this policy: its own inline scripts and styles, and of the
//! network only what its resource declares in `_meta.ui.csp` (`connectDomains` for fetch and
//! sockets, `resourceDomains` for scripts, styles, images, fonts and media, `frameDomains`
//! for nested frames, `baseUriDomains` for `<base>`). Nothing else: no other origin, not the
//! app's, no forms, no plugins. A declared source that is not a plain origin (`https://host`,
//! `https://*.host`, with a port or not; `http` only for this computer) is left out, so a
//! server cannot widen the policy with keywords, schemes or a second directive.

use serde_json::Value;

/// The policy for a view whose resource's `_meta.ui` is `meta`.
pub fn view_csp(meta: &Value) -> String {
    let csp = meta.get("csp");
    let list = |key: &str| -> Vec<String> {
        csp.and_then(|c| c.get(key))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter_map(origin_source)
            .collect()
    };
    let resources = list("resourceDomains");
    let join = |fixed: &[&str], extra: &[String]| -> String {
        let mut all: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
        all.extend(extra.iter().cloned());
        if all.is_empty() {
            "'none'".to_string()
        } else {
            all.join(" ")
        }
    };
    [
        "default-src 'none'".to_string(),
        format!("script-src {}", join(&["'unsafe-inline'"], &resources)),
        format!("style-src {}", join(&["'unsafe-inline'"], &resources)),
        format!("img-src {}", join(&["data:", "blob:"], &resources)),
        format!("font-src {}", join(&["data:"], &resources)),
        format!("media-src {}", join(&["data:", "blob:"], &resources)),
        format!("connect-src {}", join(&[], &list("connectDomains"))),
        format!("frame-src {}", join(&[], &list("frameDomains"))),
        format!("base-uri {}", join(&[], &list("baseUriDomains"))),
        "object-src 'none'".to_string(),
        "form-action 'none'".to_string(),
        "worker-src 'none'".to_string(),
        "manifest-src 'none'".to_string(),
    ]
    .join("; ")
}

/// `source` as a CSP source when it is a plain origin: `https://host[:port]` or
/// `https://*.host[:port]` (`wss` too), or `http`/`ws` for `localhost` and `127.0.0.1`; `None`
/// for anything else (keywords, bare schemes, paths, wildcards elsewhere, separators).
fn origin_source(source: &str) -> Option<String> {
    let source = source.trim().trim_end_matches('/');
    let (scheme, rest) = source.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            (h, Some(p))
        }
        _ => (rest, None),
    };
    let bare = host.strip_prefix("*.").unwrap_or(host);
    let host_ok = !bare.is_empty()
        && bare.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if !host_ok {
        return None;
    }
    let local = matches!(bare, "localhost" | "127.0.0.1") && host == bare;
    let secure = matches!(scheme.as_str(), "https" | "wss");
    let plain = matches!(scheme.as_str(), "http" | "ws");
    if !(secure || (plain && local)) {
        return None;
    }
    Some(match port {
        Some(p) => format!("{scheme}://{host}:{p}"),
        None => format!("{scheme}://{host}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn directive(csp: &str, name: &str) -> String {
        csp.split("; ")
            .find(|d| d.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in {csp}"))
            .to_string()
    }

    #[test]
    fn a_view_without_declared_needs_reaches_nothing() {
        let csp = view_csp(&json!({}));
        assert_eq!(directive(&csp, "default-src"), "default-src 'none'");
        assert_eq!(directive(&csp, "connect-src"), "connect-src 'none'");
        assert_eq!(directive(&csp, "frame-src"), "frame-src 'none'");
        assert_eq!(directive(&csp, "base-uri"), "base-uri 'none'");
        assert_eq!(directive(&csp, "script-src"), "script-src 'unsafe-inline'");
        assert_eq!(directive(&csp, "form-action"), "form-action 'none'");
        assert!(
            !csp.contains("'self'"),
            "not even the view's own scheme: {csp}"
        );
    }

    #[test]
    fn declared_origins_are_allowed_where_declared_only() {
        let csp = view_csp(&json!({"csp": {
            "connectDomains": ["https://api.example.com", "http://localhost:8080"],
            "resourceDomains": ["https://*.cdn.example.org/"],
            "frameDomains": ["https://www.youtube.com"],
        }}));
        assert_eq!(
            directive(&csp, "connect-src"),
            "connect-src https://api.example.com http://localhost:8080"
        );
        assert_eq!(
            directive(&csp, "script-src"),
            "script-src 'unsafe-inline' https://*.cdn.example.org"
        );
        assert_eq!(
            directive(&csp, "img-src"),
            "img-src data: blob: https://*.cdn.example.org"
        );
        assert_eq!(
            directive(&csp, "frame-src"),
            "frame-src https://www.youtube.com"
        );
        assert_eq!(directive(&csp, "base-uri"), "base-uri 'none'");
    }

    #[test]
    fn anything_but_a_plain_origin_is_left_out() {
        let csp = view_csp(&json!({"csp": {"connectDomains": [
            "*", "'self'", "'unsafe-eval'", "https:", "data:", "http://evil.example.com",
            "https://a.example.com; script-src *", "https://a.example.com/path",
            "https://a.*.example.com", "ipc://localhost", "https://exa mple.com", 7,
            "ws://127.0.0.1:9000", "tauri://localhost"
        ]}}));
        assert_eq!(
            directive(&csp, "connect-src"),
            "connect-src ws://127.0.0.1:9000"
        );
        assert_eq!(csp.matches("script-src").count(), 1);
    }
}
