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
///
/// Each reference is read structurally from its `&` (a short name, or `#` and a run of digits),
/// so the work is linear however many `&` there are and however long a digit run is.
pub(crate) fn decode_entities(s: &str, out: &mut String) {
    let bytes = s.as_bytes();
    let mut at = 0;
    let mut search = 0;
    while let Some(off) = memchr::memchr(b'&', &bytes[search..]) {
        let amp = search + off;
        search = amp + 1;
        if let Some((c, end)) = reference_at(bytes, amp + 1) {
            out.push_str(&s[at..amp]);
            out.push(c);
            at = end;
            search = end;
        }
    }
    out.push_str(&s[at..]);
}

/// The character of the reference whose text starts after an `&` at `i`, and the end of the
/// reference (after its `;`).
fn reference_at(bytes: &[u8], i: usize) -> Option<(char, usize)> {
    if bytes.get(i) == Some(&b'#') {
        // `&#N;` and `&#xH;` (lower-case `x` only, as RULES.md writes it).
        let (from, radix) = match bytes.get(i + 1) {
            Some(b'x') => (i + 2, 16),
            _ => (i + 1, 10),
        };
        let mut j = from;
        let mut value: u32 = 0;
        while let Some(d) = bytes.get(j).and_then(|&b| (b as char).to_digit(radix)) {
            // Saturate: anything past U+10FFFF is an invalid code point either way.
            value = value.saturating_mul(radix).saturating_add(d);
            j += 1;
        }
        if j == from || bytes.get(j) != Some(&b';') {
            return None;
        }
        return char::from_u32(value).map(|c| (c, j + 1));
    }
    const NAMED: [(&[u8], char); 5] = [
        (b"lt;", '<'),
        (b"gt;", '>'),
        (b"amp;", '&'),
        (b"quot;", '"'),
        (b"apos;", '\''),
    ];
    let rest = &bytes[i..];
    NAMED
        .iter()
        .find(|(name, _)| rest.starts_with(name))
        .map(|&(name, c)| (c, i + name.len()))
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
            dec("&#65;&#x42;&#X43;&nbsp;&#xD800;&#;&#x;&amp;lt;&#1114112;"),
            "AB&#X43;&nbsp;&#xD800;&#;&#x;&lt;&#1114112;"
        );
        assert_eq!(dec("& &amp"), "& &amp");
        let long = format!("&#{}65;&#x{}41;", "0".repeat(64), "0".repeat(64));
        assert_eq!(dec(&long), "AA");
        assert_eq!(
            dec(&format!("&#{};", "9".repeat(64))),
            format!("&#{};", "9".repeat(64))
        );
    }
}
