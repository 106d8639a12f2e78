//! Decoding a plain value (rule 12): CDATA sections unwrapped, entities decoded, then trimmed.

use super::scan::{trim_ws, Kind, Token};

/// Decode the raw text `text[from..to]`, whose CDATA sections are `cdata` (tokens in that range).
pub(crate) fn decode_plain(text: &str, from: usize, to: usize, cdata: &[Token]) -> String {
    let mut out = String::with_capacity(to - from);
    let mut at = from;
    for tok in cdata {
        if !matches!(tok.kind, Kind::Cdata { .. }) || tok.start < at || tok.end > to {
            continue;
        }
        decode_entities(&text[at..tok.start], &mut out);
        out.push_str(tok.inner(text));
        at = tok.end;
    }
    decode_entities(&text[at..to], &mut out);
    let trimmed = trim_ws(&out);
    if trimmed.len() == out.len() {
        out
    } else {
        trimmed.to_string()
    }
}

/// Single-pass decoding of the five XML entities and numeric references; anything else stays.
pub(crate) fn decode_entities(s: &str, out: &mut String) {
    let bytes = s.as_bytes();
    let mut at = 0;
    let mut search = 0;
    while let Some(off) = memchr::memchr(b'&', &bytes[search..]) {
        let amp = search + off;
        search = amp + 1;
        let Some(len) = bytes[amp + 1..].iter().take(32).position(|&b| b == b';') else {
            continue;
        };
        let name = &s[amp + 1..amp + 1 + len];
        let decoded = match name {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => numeric(name),
        };
        if let Some(c) = decoded {
            out.push_str(&s[at..amp]);
            out.push(c);
            at = amp + len + 2;
            search = at;
        }
    }
    out.push_str(&s[at..]);
}

fn numeric(name: &str) -> Option<char> {
    let digits = name.strip_prefix('#')?;
    let (digits, radix) = match digits.strip_prefix(['x', 'X']) {
        Some(h) => (h, 16),
        None => (digits, 10),
    };
    let ok = match radix {
        16 => digits.bytes().all(|b| b.is_ascii_hexdigit()),
        _ => digits.bytes().all(|b| b.is_ascii_digit()),
    };
    if digits.is_empty() || !ok {
        return None;
    }
    char::from_u32(u32::from_str_radix(digits, radix).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> String {
        let mut o = String::new();
        decode_entities(s, &mut o);
        o
    }

    #[test]
    fn entities() {
        assert_eq!(dec("a &lt; b &amp;&amp; R&D"), "a < b && R&D");
        assert_eq!(
            dec("&#65;&#x42;&#X43;&nbsp;&#xD800;&#;&amp;lt;"),
            "ABC&nbsp;&#xD800;&#;&lt;"
        );
        assert_eq!(dec("& &amp"), "& &amp");
    }
}
