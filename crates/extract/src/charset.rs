//! The character encoding of a text file that does not say it is UTF-8.
//!
//! [`decode`] follows what browsers do, in order: a byte-order mark; then, for HTML, a
//! `<meta charset>` (or `http-equiv` content type) in the first 4 KB; then a guess from the
//! bytes themselves by `chardetng` (Firefox's detector), which keeps UTF-8 when the bytes are
//! valid UTF-8. The bytes are decoded by `encoding_rs`; a byte that is not valid in the encoding
//! becomes U+FFFD rather than an error.

use encoding_rs::Encoding;

/// How far into an HTML file a `<meta charset>` is looked for.
const META_PRESCAN: usize = 4096;

/// `bytes` decoded (see the module docs); `html` allows a `<meta charset>` to decide.
/// Returns the text and the encoding's name.
pub fn decode(bytes: &[u8], html: bool) -> (String, &'static str) {
    let (encoding, body) = match Encoding::for_bom(bytes) {
        Some((encoding, bom)) => (encoding, &bytes[bom..]),
        None => {
            let declared = if html { meta_charset(bytes) } else { None };
            let encoding = declared.unwrap_or_else(|| {
                let mut detector =
                    chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
                detector.feed(bytes, true);
                detector.guess(None, chardetng::Utf8Detection::Allow)
            });
            (encoding, bytes)
        }
    };
    let (text, _had_errors) = encoding.decode_without_bom_handling(body);
    (text.into_owned(), encoding.name())
}

/// The encoding a `<meta charset="…">` or `<meta http-equiv content="…; charset=…">` near the
/// start of an HTML file names (UTF-16 there means UTF-8, as the HTML standard says).
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_PRESCAN)];
    let lower: Vec<u8> = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = find(&lower[from..], b"<meta") {
        let start = from + at;
        let end = find(&lower[start..], b">").map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = find(tag, b"charset") {
            let rest = &tag[c + b"charset".len()..];
            let rest = rest
                .trim_ascii_start()
                .strip_prefix(b"=")?
                .trim_ascii_start();
            let rest = rest
                .strip_prefix(b"\"")
                .or_else(|| rest.strip_prefix(b"'"))
                .unwrap_or(rest);
            let label: Vec<u8> = rest
                .iter()
                .copied()
                .take_while(|b| !matches!(b, b'"' | b'\'' | b';' | b' ' | b'/' | b'>'))
                .collect();
            let encoding = Encoding::for_label(&label)?;
            return Some(
                if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
                    encoding_rs::UTF_8
                } else {
                    encoding
                },
            );
        }
        from = end;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bom_then_a_meta_charset_then_a_guess_decide() {
        assert_eq!(
            decode(b"\xEF\xBB\xBFcaf\xC3\xA9", false),
            ("café".into(), "UTF-8")
        );
        // The declaration wins over a guess that would say Latin-1.
        let meta =
            b"<html><head><meta charset=\"windows-1251\"></head><body>caf\xE9 cr\xE8me</body>";
        assert!(
            decode(meta, true).0.contains("cafй crиme"),
            "{:?}",
            decode(meta, true)
        );
        assert!(decode(meta, false).0.contains("café crème"));
        let equiv = b"<meta http-equiv=Content-Type content='text/html; charset=iso-8859-1'>\xE9";
        assert!(decode(equiv, true).0.ends_with('é'));
        let guessed = "Le caf\u{e9} est tr\u{e8}s bon, d\u{e9}j\u{e0} pr\u{ea}t.";
        let (latin1, _, _) = encoding_rs::WINDOWS_1252.encode(guessed);
        assert_eq!(decode(&latin1, false).0, guessed);
        assert_eq!(decode("déjà".as_bytes(), false).1, "UTF-8");
    }
}
