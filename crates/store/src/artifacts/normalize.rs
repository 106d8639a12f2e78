//! Text normalisation for `update_artifact`'s second matching layer, with a map back to the
//! original text.
//!
//! Per character: Unicode NFKC; curly quotes → straight; dash variants → `-`; non-breaking and
//! other special spaces (and tabs, `\r`) → space; zero-width characters dropped. Per line:
//! leading indentation dropped, runs of spaces collapsed to one, trailing spaces dropped.
//! Every byte of the normalised text remembers the byte range of the original character it
//! came from, so a span found in the normalised text maps back to exactly the original span.

use unicode_normalization::UnicodeNormalization;

/// A normalised text and its map back to the original.
#[derive(Debug, Clone)]
pub struct Normalised {
    /// The normalised text.
    pub text: String,
    starts: Vec<u32>,
    ends: Vec<u32>,
}

impl Normalised {
    /// The original byte range of the normalised byte range `start..end` (`end > start`).
    pub fn original_span(&self, start: usize, end: usize) -> (usize, usize) {
        (self.starts[start] as usize, self.ends[end - 1] as usize)
    }
}

fn map_char(c: char, out: &mut Vec<char>) {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{FF07}' => {
            out.push('\'')
        }
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{FF02}' => {
            out.push('"')
        }
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => out.push('-'),
        '\t'
        | '\r'
        | '\u{000B}'
        | '\u{000C}'
        | '\u{00A0}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200A}'
        | '\u{202F}'
        | '\u{205F}'
        | '\u{3000}' => out.push(' '),
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => {}
        c if c.is_ascii() => out.push(c),
        c => {
            for n in std::iter::once(c).nfkc() {
                if n.is_whitespace() && n != '\n' {
                    out.push(' ');
                } else {
                    out.push(n);
                }
            }
        }
    }
}

/// Normalise `text` (see the module docs).
pub fn normalise(text: &str) -> Normalised {
    let mut n = Normalised {
        text: String::with_capacity(text.len()),
        starts: Vec::with_capacity(text.len()),
        ends: Vec::with_capacity(text.len()),
    };
    let mut at_line_start = true;
    let mut pending_space: Option<(u32, u32)> = None;
    let mut mapped = Vec::with_capacity(4);
    let mut buf = [0u8; 4];
    for (pos, c) in text.char_indices() {
        let (s, e) = (pos as u32, (pos + c.len_utf8()) as u32);
        if c == '\n' {
            pending_space = None;
            at_line_start = true;
            n.text.push('\n');
            n.starts.push(s);
            n.ends.push(e);
            continue;
        }
        mapped.clear();
        map_char(c, &mut mapped);
        for &m in &mapped {
            if m == ' ' {
                if !at_line_start {
                    pending_space = Some(match pending_space {
                        Some((ps, _)) => (ps, e),
                        None => (s, e),
                    });
                }
                continue;
            }
            if let Some((ps, pe)) = pending_space.take() {
                n.text.push(' ');
                n.starts.push(ps);
                n.ends.push(pe);
            }
            at_line_start = false;
            let encoded = m.encode_utf8(&mut buf);
            n.text.push_str(encoded);
            for _ in 0..encoded.len() {
                n.starts.push(s);
                n.ends.push(e);
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_dashes_spaces_and_indentation_are_normalised() {
        let n = normalise("  say \u{201C}hi\u{201D}\u{00A0}\u{2014}  now   \nnext\t\r\n");
        assert_eq!(n.text, "say \"hi\" - now\nnext\n");
    }

    #[test]
    fn nfkc_folds_compatibility_characters() {
        assert_eq!(normalise("\u{FB01}le \u{FF21}").text, "file A");
    }

    #[test]
    fn spans_map_back_to_the_original_bytes() {
        let original = "x  \u{201C}quoted\u{201D}  y";
        let n = normalise(original);
        let start = n.text.find('"').unwrap();
        let end = n.text.rfind('"').unwrap() + 1;
        let (s, e) = n.original_span(start, end);
        assert_eq!(&original[s..e], "\u{201C}quoted\u{201D}");
    }
}
