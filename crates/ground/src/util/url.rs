//! Percent-encoding, for building URLs and for recognising a secret in one; and the canonical
//! form of a URL or host, the one a request really uses (permission rules compare it).

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// Everything but RFC 3986's unreserved characters (`A-Z a-z 0-9 - _ . ~`).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `s` percent-encoded as one URL component (a path segment or a query value), upper-case hex.
pub fn encode_component(s: &str) -> String {
    utf8_percent_encode(s, COMPONENT).to_string()
}

/// `text` as the URL a request to it really goes to, serialised: parsed the way the HTTP stack
/// parses it (WHATWG: tabs and newlines dropped, spaces trimmed, backslashes as slashes, the
/// host lower case and in IDNA form, the default port and dot segments removed), without the
/// `user:password@` part (sent as a header, not part of where the request goes) and without a
/// host's trailing dot. The error says why it is not a URL with a host (or a `file:` URL).
pub fn canonical_url(text: &str) -> Result<String, String> {
    let mut url = url::Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
    let Some(host) = url.host_str().map(str::to_string) else {
        // A local file (`file:///…`) has no host; other URLs must have one.
        if url.scheme() == "file" {
            return Ok(url.to_string());
        }
        return Err("not a URL with a host".into());
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let trimmed = host.trim_end_matches('.');
    if trimmed != host {
        if trimmed.is_empty() {
            return Err("the host is only dots".into());
        }
        url.set_host(Some(trimmed))
            .map_err(|e| format!("bad host: {e}"))?;
    }
    Ok(url.to_string())
}

/// `host` (a domain name or an IP address) as a request to it uses it: lower case, IDNA
/// (full-width letters, compatibility characters), no trailing dot. `None` when it is not a
/// valid host.
pub fn canonical_host(host: &str) -> Option<String> {
    let host = host.trim();
    let bracketed = host.starts_with('[') && host.ends_with(']');
    if host.is_empty()
        || host.contains(['/', '\\', '@', '?', '#'])
        || host.contains(':') && !bracketed
    {
        return None;
    }
    let url = url::Url::parse(&format!("http://{host}/")).ok()?;
    let canonical = url.host_str()?.trim_end_matches('.');
    (!canonical.is_empty()).then(|| canonical.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_all_but_unreserved_characters() {
        assert_eq!(encode_component("a-b_c.d~e"), "a-b_c.d~e");
        assert_eq!(encode_component("a b/c?d=é"), "a%20b%2Fc%3Fd%3D%C3%A9");
    }

    #[test]
    fn canonical_urls_and_hosts_are_what_a_request_uses() {
        let same = [
            "https://intranet.example.com/a/b",
            " HTTPS://Intranet.EXAMPLE.com.:443/a/./x/../b",
            "https://user:pw@intranet.example.com/a/b",
            "https:\\\\intranet.example.com\\a\\b",
            "https://intra\tnet.example.com/a/b",
            "https://ｉｎｔｒａｎｅｔ.example.com/a/b",
        ];
        for text in same {
            assert_eq!(
                canonical_url(text).as_deref(),
                Ok("https://intranet.example.com/a/b"),
                "{text:?}"
            );
        }
        assert!(canonical_url("https://intranet.example.com:99999/").is_err());
        assert!(canonical_url("mailto:a@b.c").is_err());
        assert_eq!(canonical_host("EVIL.com.").as_deref(), Some("evil.com"));
        assert_eq!(canonical_host("ＥＶＩＬ.com").as_deref(), Some("evil.com"));
        assert_eq!(canonical_host("a/b"), None);
    }
}
