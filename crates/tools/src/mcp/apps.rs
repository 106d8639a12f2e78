//! MCP Apps (the UI extension, `io.modelcontextprotocol/ui`): the content security policy a
//! server's view runs under. A view is untrusted HTML; the app shows it in a frame sandboxed
//! without the app's origin, under this policy: its own inline scripts and styles, and of the
//! network only what its resource declares in `_meta.ui.csp` (`connectDomains` for fetch and
//! sockets, `resourceDomains` for scripts, styles, images, fonts and media, `frameDomains`
//! for nested frames (not allowed yet), `baseUriDomains` for `<base>`). Nothing else: no other origin, not the
//! app's, no forms, no plugins. A declared source that is not a plain origin (`https://host`,
//! `https://*.host`, with a port or not; this computer only for a local server's view) is left
//! out, so a server cannot widen the policy with keywords, schemes or a second directive.

use serde_json::Value;

/// The type of an MCP Apps view resource.
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";

/// The policy for a view whose resource's `_meta.ui` is `meta`, from a `local` server (stdio,
/// or HTTP on this computer) or a remote one. Nested frames are not allowed yet, whatever
/// `frameDomains` says: the window's navigation guard does not tell a view's nested frame from
/// a page leaving the app on every platform.
pub fn view_csp(meta: &Value, local: bool) -> String {
    let csp = meta.get("csp");
    let list = |key: &str| -> Vec<String> {
        csp.and_then(|c| c.get(key))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter_map(|s| origin_source(s, local))
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
        "frame-src 'none'".to_string(),
        format!("base-uri {}", join(&[], &list("baseUriDomains"))),
        "object-src 'none'".to_string(),
        "form-action 'none'".to_string(),
        "worker-src 'none'".to_string(),
        "manifest-src 'none'".to_string(),
    ]
    .join("; ")
}

/// `source` as a CSP source when it is a plain origin: `https://host[:port]` or
/// `https://*.host[:port]` (`wss` too) with a host of two labels at least (`*.com` is not an
/// origin). This computer (`localhost`, `127.0.0.1`), over `http`, `ws` or their secure forms,
/// only for a `local` server's view (a remote server's view must not reach the programs
/// listening here); names under `localhost` never (the app's own addresses). `None` for anything else:
/// keywords, bare schemes, paths, wildcards elsewhere, separators, other characters.
fn origin_source(source: &str, local: bool) -> Option<String> {
    let source = source.trim().trim_end_matches('/');
    let (scheme, rest) = source.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            (h, Some(p))
        }
        _ => (rest, None),
    };
    let host = host.to_ascii_lowercase();
    let (wild, bare) = match host.strip_prefix("*.") {
        Some(bare) => (true, bare),
        None => (false, host.as_str()),
    };
    let labels: Vec<&str> = bare.split('.').collect();
    let host_ok = labels.iter().all(|label| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    });
    if !host_ok {
        return None;
    }
    // The app's own addresses are names under `localhost` (`ipc.localhost`,
    // `tauri.localhost`, `asset.localhost`): never a view's.
    if bare.ends_with(".localhost") {
        return None;
    }
    let this_computer = bare == "localhost" || bare == "127.0.0.1";
    let secure = matches!(scheme.as_str(), "https" | "wss");
    let plain = matches!(scheme.as_str(), "http" | "ws");
    // An address given as numbers is a machine on some network (this one, the local one, a
    // cloud's metadata service): for a local server's view only.
    let numeric = bare.parse::<std::net::Ipv4Addr>().is_ok();
    // A name ends in letters (`1.1` or `*.1.1` is neither a name nor an address).
    let numeric_end = labels
        .last()
        .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()));
    if numeric_end && !numeric {
        return None;
    }
    let allowed = if this_computer {
        local && !wild && (secure || plain)
    } else if numeric {
        local && !wild && secure
    } else {
        secure && labels.len() >= 2
    };
    if !allowed {
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
        let csp = view_csp(&json!({}), true);
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
        let meta = json!({"csp": {
            "connectDomains": ["https://api.example.com", "http://localhost:8080"],
            "resourceDomains": ["https://*.cdn.example.org/"],
            "frameDomains": ["https://www.youtube.com"],
        }});
        let csp = view_csp(&meta, true);
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
        assert_eq!(directive(&csp, "frame-src"), "frame-src 'none'", "not yet");
        assert_eq!(directive(&csp, "base-uri"), "base-uri 'none'");
        // A remote server's view does not reach this computer.
        assert_eq!(
            directive(&view_csp(&meta, false), "connect-src"),
            "connect-src https://api.example.com"
        );
    }

    #[test]
    fn anything_but_a_plain_origin_is_left_out() {
        let meta = json!({"csp": {"connectDomains": [
            "*", "'self'", "'unsafe-eval'", "https:", "data:", "http://evil.example.com",
            "https://a.example.com; script-src *", "https://a.example.com/path",
            "https://a.*.example.com", "ipc://localhost", "https://exa mple.com", 7,
            "ws://127.0.0.1:9000", "tauri://localhost", "https://*.com", "https://com",
            "https://*.localhost", "http://*.localhost", "https://a.example.com,b.example.com",
            "https://a.example.com'", "https://\u{ff45}xample.com", "http://ipc.localhost",
            "https://tauri.localhost", "HTTPS://API.Example.COM", "https://*.1.1"
        ]}});
        let csp = view_csp(&meta, true);
        assert_eq!(
            directive(&csp, "connect-src"),
            "connect-src ws://127.0.0.1:9000 https://api.example.com"
        );
        assert_eq!(csp.matches("script-src").count(), 1);
        let remote = json!({"csp": {"connectDomains": [
            "http://LOCALHOST:1", "https://localhost", "wss://127.0.0.1", "ws://127.0.0.1:9000",
            "https://169.254.169.254", "https://192.168.1.1:8443", "https://0.0.0.0"
        ]}});
        assert_eq!(
            directive(&view_csp(&remote, false), "connect-src"),
            "connect-src 'none'"
        );
        assert_eq!(
            directive(&view_csp(&remote, true), "connect-src"),
            "connect-src http://localhost:1 https://localhost wss://127.0.0.1 ws://127.0.0.1:9000 https://169.254.169.254 https://192.168.1.1:8443 https://0.0.0.0"
        );
    }
}
