//! MCP Apps (the UI extension, `io.modelcontextprotocol/ui`): the content security policy a
//! server's view runs under. A view is untrusted HTML; the app shows it in a frame sandboxed
//! without the app's origin, under this policy: its own inline scripts and styles, and of the
//! network only what its resource declares in `_meta.ui.csp` (`connectDomains` for fetch and
//! sockets, `resourceDomains` for scripts, styles, images, fonts and media, `frameDomains`
//! for nested frames (not allowed yet), `baseUriDomains` for `<base>`). Nothing else: no other origin, not the
//! app's, no forms, no plugins. A declared source that is not a plain origin (`https://host`,
//! `https://*.host`, with a port or not; this computer only for a local server's view) is left
//! out, so a server cannot widen the policy with keywords, schemes or a second directive.
//!
//! The policy does not cover resource hints: `<link rel=preconnect>` and `dns-prefetch` are
//! under no directive, and a browser may act on `prefetch`, `preload`, `modulepreload` and
//! `prerender` before (or beside) the fetch the policy sees. So the document is rewritten
//! before it is served ([`without_undeclared_hints`], with Cloudflare's streaming HTML rewriter
//! `lol_html`): each hint whose addresses are not all at an origin the resource declares is
//! removed, and so is a setting of the view's own for DNS prefetching (the app serves the view
//! with it off).

use lol_html::html_content::Element;
use lol_html::{element, rewrite_str, RewriteStrSettings};
use serde_json::Value;
use url::Url;

/// The type of an MCP Apps view resource.
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";

/// The policy for a view whose resource's `_meta.ui` is `meta`, from a `local` server (stdio,
/// or HTTP on this computer) or a remote one. Nested frames are not allowed yet, whatever
/// `frameDomains` says: the window's navigation guard does not tell a view's nested frame from
/// a page leaving the app on every platform.
pub fn view_csp(meta: &Value, local: bool) -> String {
    let list = |key: &str| declared(meta, key, local);
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

/// The sources `_meta.ui.csp.KEY` of a view declares that the policy takes (plain origins, see
/// [`origin_source`]).
fn declared(meta: &Value, key: &str, local: bool) -> Vec<String> {
    meta.get("csp")
        .and_then(|c| c.get(key))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|s| origin_source(s, local))
        .collect()
}

/// The `rel` keywords of resource hints: each has the browser reach an address (resolve its
/// name, open a connection, fetch or render a page) that no directive of the policy governs,
/// or before the fetch the policy sees.
const RESOURCE_HINTS: [&str; 6] = [
    "preconnect",
    "dns-prefetch",
    "prefetch",
    "preload",
    "modulepreload",
    "prerender",
];

/// A view's document could not be read as HTML to remove its resource hints.
#[derive(Debug, thiserror::Error)]
#[error("the view's HTML could not be checked for resource hints ({0}); it is not shown: the MCP server's author can fix its document")]
pub struct ViewDocumentError(String);

/// `html`, the document of a view whose resource's `_meta.ui` is `meta` (from a `local` server
/// or not), without the resource hints to origins it did not declare: each `<link>` whose
/// `rel` (a space-separated list, any case) names a hint ([`RESOURCE_HINTS`]) is kept only when
/// every address it names (`href`, `imagesrcset`) is absolute and at an origin the resource
/// declares (`connectDomains`, `resourceDomains`, `baseUriDomains`, as the policy takes them).
/// A relative or protocol-relative address is removed (it would resolve against the view's own
/// address or a `<base>`, which no hint needs), and so is a `rel` or an address written with
/// character references (`&#99;`: only a disguise in a hint). Also removed: the view's own
/// `<meta http-equiv=x-dns-prefetch-control>` (the app turns DNS prefetching off for views).
/// The rest of the document is left as it is.
pub fn without_undeclared_hints(
    html: &str,
    meta: &Value,
    local: bool,
) -> Result<String, ViewDocumentError> {
    let declared: Vec<String> = ["connectDomains", "resourceDomains", "baseUriDomains"]
        .iter()
        .flat_map(|key| declared(meta, key, local))
        .collect();
    let settings = RewriteStrSettings::new()
        // Parsed as a browser parses it (no Edge Side Includes), and refused rather than
        // guessed where the rewriter cannot tell text from markup without a full tree.
        .with_enable_esi_tags(false)
        .with_strict(true)
        .append_element_content_handler(element!("link", |link| {
            if is_hint(link) && !hint_is_declared(link, &declared) {
                link.remove();
            }
            Ok(())
        }))
        .append_element_content_handler(element!("meta", |meta| {
            let sets_dns_prefetch = meta.attributes().iter().any(|a| {
                a.name() == "http-equiv"
                    && a.value()
                        .trim()
                        .eq_ignore_ascii_case("x-dns-prefetch-control")
            });
            if sets_dns_prefetch {
                meta.remove();
            }
            Ok(())
        }));
    rewrite_str(html, settings).map_err(|e| ViewDocumentError(e.to_string()))
}

/// Does the `<link>` name a resource hint in any of its `rel` attributes (a browser reads the
/// first; all are read here)? A `rel` with a character reference counts as one.
fn is_hint(link: &Element<'_, '_>) -> bool {
    link.attributes()
        .iter()
        .filter(|a| a.name() == "rel")
        .any(|rel| {
            let value = rel.value();
            value.contains('&')
                || value
                    .split(|c: char| c.is_ascii_whitespace())
                    .any(|token| RESOURCE_HINTS.iter().any(|h| token.eq_ignore_ascii_case(h)))
        })
}

/// Are all the addresses a hint names (`href`, each `imagesrcset` candidate) at origins in
/// `declared`? False when it names none.
fn hint_is_declared(link: &Element<'_, '_>, declared: &[String]) -> bool {
    let mut addresses = Vec::new();
    for attribute in link.attributes() {
        match attribute.name().as_str() {
            "href" => addresses.push(attribute.value()),
            "imagesrcset" => addresses.extend(
                attribute
                    .value()
                    .split(',')
                    .filter_map(|candidate| candidate.split_ascii_whitespace().next())
                    .map(str::to_string),
            ),
            _ => {}
        }
    }
    !addresses.is_empty()
        && addresses.iter().all(|address| {
            // The parser takes what a browser takes: blanks and controls around it trimmed,
            // tabs and line breaks in it dropped. A relative address is no URL here.
            !address.contains('&')
                && Url::parse(address)
                    .is_ok_and(|url| declared.iter().any(|source| source_matches(source, &url)))
        })
}

/// Does the CSP source `source` (as [`origin_source`] makes it: `scheme://host[:port]`,
/// `scheme://*.host[:port]`) match `url`'s origin, as the policy would: the same scheme, the
/// host (a wildcard for the names under it only), the port (the scheme's own when the source
/// gives none)?
fn source_matches(source: &str, url: &Url) -> bool {
    let Some((scheme, rest)) = source.split_once("://") else {
        return false;
    };
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => match p.parse::<u16>() {
            Ok(p) => (h, Some(p)),
            // No port a URL can have.
            Err(_) => return false,
        },
        None => (rest, None),
    };
    let default_port = match scheme {
        "https" | "wss" => Some(443),
        "http" | "ws" => Some(80),
        _ => None,
    };
    let Some(url_host) = url.host_str() else {
        return false;
    };
    let host_ok = match host.strip_prefix("*.") {
        Some(bare) => url_host
            .strip_suffix(bare)
            .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
        None => url_host == host,
    };
    url.scheme() == scheme && host_ok && url.port_or_known_default() == port.or(default_port)
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

    /// The view's document rewritten with the needs `meta` declares, from a local server.
    fn served(html: &str, meta: &Value) -> String {
        without_undeclared_hints(html, meta, true).unwrap()
    }

    #[test]
    fn hints_to_undeclared_origins_are_removed_whatever_their_case_and_company() {
        let meta = json!({"csp": {"connectDomains": ["https://api.example.com"]}});
        for hint in [
            r#"<link rel=preconnect href="http://127.0.0.1:9/">"#,
            r#"<link rel="dns-prefetch" href="//127.0.0.1">"#,
            r#"<LINK REL="PreConnect" HREF="http://127.0.0.1:9">"#,
            r#"<link rel="prefetch" href="http://127.0.0.1:9/next">"#,
            r#"<link rel="preload" as="fetch" crossorigin href="http://127.0.0.1:9/data.json">"#,
            r#"<link rel="modulepreload" href="http://127.0.0.1:9/app.js">"#,
            r#"<link rel="prerender" href="http://127.0.0.1:9/page">"#,
            // One hint among other keywords, separated by any blank.
            r#"<link rel="icon preconnect" href="http://127.0.0.1:9">"#,
            "<link rel=\"stylesheet\tPRELOAD\nalternate\" as=style href=\"http://127.0.0.1:9/s.css\">",
            // The declared host on another port or scheme, or as a user name, is elsewhere.
            r#"<link rel="preconnect" href="https://api.example.com:8443">"#,
            r#"<link rel="preconnect" href="http://api.example.com">"#,
            r#"<link rel="preconnect" href="https://api.example.com@127.0.0.1:9/">"#,
            r#"<link rel="preconnect" href="https://api.example.com.evil.example.net">"#,
            // Relative and protocol-relative addresses resolve against the view's own address.
            r#"<link rel="preconnect" href="//api.example.com">"#,
            r#"<link rel="modulepreload" href="/app.js">"#,
            r#"<link rel="prefetch" href="next.html">"#,
            // Nothing to reach, or only some of it declared.
            r#"<link rel="preload" as="image">"#,
            r#"<link rel="preload" as="image" href="https://api.example.com/a.png" imagesrcset="https://api.example.com/a.png 1x, http://127.0.0.1:9/b.png 2x">"#,
            // A second `rel` or `href` (a browser reads the first; a check cannot assume which).
            r#"<link rel="stylesheet" rel="preconnect" href="http://127.0.0.1:9">"#,
            r#"<link rel="preconnect" href="https://api.example.com" href="http://127.0.0.1:9">"#,
            // Character references: a browser decodes them; as a hint's disguise they go.
            r#"<link rel="pre&#99;onnect" href="http://127.0.0.1:9">"#,
            r#"<link rel="preconnect" href="https://api.example.com&#47;@127.0.0.1:9">"#,
            // The view's own DNS prefetching setting: the app's is the one that counts.
            r#"<meta http-equiv="X-DNS-Prefetch-Control" content="on">"#,
        ] {
            let html = format!("<!doctype html><html><head>{hint}<title>t</title></head><body>x</body></html>");
            assert_eq!(
                served(&html, &meta),
                "<!doctype html><html><head><title>t</title></head><body>x</body></html>",
                "{hint}"
            );
        }
    }

    #[test]
    fn declared_hints_and_everything_else_are_kept_as_they_are() {
        let meta = json!({"csp": {
            "connectDomains": ["https://api.example.com", "http://localhost:8080"],
            "resourceDomains": ["https://*.cdn.example.org"],
            "baseUriDomains": ["https://base.example.com"],
        }});
        let html = concat!(
            "<!DOCTYPE html><html><head>",
            r#"<link rel="preconnect" href="https://api.example.com">"#,
            r#"<link rel="dns-prefetch" href="https://API.example.com:443/">"#,
            r#"<link rel="preconnect" href="http://localhost:8080">"#,
            r#"<link rel="modulepreload" href="https://js.cdn.example.org/app.js">"#,
            r#"<link rel="preload" as="image" href="https://img.cdn.example.org/a.png" imagesrcset="https://img.cdn.example.org/a.png 1x, https://img.cdn.example.org/b.png 2x">"#,
            r#"<link rel="prefetch" href="https://base.example.com/next">"#,
            // Not hints: the policy decides whether they load.
            r#"<link rel="stylesheet" href="http://127.0.0.1:9/s.css">"#,
            r#"<link rel="icon" href="http://127.0.0.1:9/favicon.ico">"#,
            r#"<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="img-src 'none'">"#,
            "</head><body><p>Hi &amp; welcome</p>",
            r#"<script>const s = '<link rel=preconnect href=http://127.0.0.1:9>';</script>"#,
            r#"<textarea><link rel=preconnect href=http://127.0.0.1:9></textarea>"#,
            "</body></html>"
        );
        assert_eq!(served(html, &meta), html);
    }

    #[test]
    fn a_wildcard_is_for_the_names_under_it_and_this_computer_for_a_local_server_only() {
        let meta = json!({"csp": {
            "resourceDomains": ["https://*.cdn.example.org"],
            "connectDomains": ["http://127.0.0.1:9"],
        }});
        let under = r#"<link rel="preload" as="script" href="https://a.cdn.example.org/x.js">"#;
        let bare = r#"<link rel="preload" as="script" href="https://cdn.example.org/x.js">"#;
        let lookalike =
            r#"<link rel="preload" as="script" href="https://evilcdn.example.org/x.js">"#;
        let here = r#"<link rel="preconnect" href="http://127.0.0.1:9">"#;
        let html = format!("{under}{bare}{lookalike}{here}");
        assert_eq!(served(&html, &meta), format!("{under}{here}"));
        // A remote server's view may not declare this computer: its hint goes.
        assert_eq!(
            without_undeclared_hints(&html, &meta, false).unwrap(),
            under
        );
    }

    #[test]
    fn a_port_no_url_can_have_matches_nothing() {
        let url = Url::parse("https://api.example.com/").unwrap();
        assert!(source_matches("https://api.example.com", &url));
        assert!(source_matches("https://api.example.com:443", &url));
        assert!(!source_matches("https://api.example.com:99999", &url));
        assert!(!source_matches("https://*.example.com:99999", &url));
    }
}
