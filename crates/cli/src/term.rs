//! Text from models, tool servers and artifacts is untrusted. Printed as it is, a control
//! character in it reaches the terminal: an escape sequence can write the clipboard (OSC 52),
//! erase or rewrite lines that were already printed, change the window title, or hide text with
//! a carriage return. Every piece of such text printed for a person goes through [`clean`];
//! `--json` output is left exact (JSON escapes control characters itself) and `artifacts export`
//! writes the bytes as they are.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character (C0, DEL and C1, the Unicode `Cc` category) shown as a
/// visible escape such as `\x1b` or `\u{9b}`, except newline and tab. A Windows line end (`\r\n`)
/// becomes a plain newline; a lone `\r` is shown as `\r`.
pub fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => out.push_str("\\r"),
            c if is_unsafe(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "línea 1\n\tcode → ok";
        assert!(matches!(clean(text), std::borrow::Cow::Borrowed(_)));
        assert_eq!(clean(text), text);
    }

    #[test]
    fn escape_sequences_become_visible_text() {
        // OSC 52 (clipboard write), erase line, cursor up, 8-bit CSI, DEL, BEL.
        let hostile = "a\x1b]52;c;ZXZpbA==\x07b\x1b[2K\x1b[1Ac\u{9b}31md\x7f";
        let shown = clean(hostile);
        assert_eq!(
            shown,
            "a\\x1b]52;c;ZXZpbA==\\x07b\\x1b[2K\\x1b[1Ac\\u{9b}31md\\x7f"
        );
        assert!(!shown.chars().any(|c| c.is_control()));
    }

    #[test]
    fn line_ends_keep_lines_and_a_lone_carriage_return_is_shown() {
        assert_eq!(clean("one\r\ntwo\n"), "one\ntwo\n");
        assert_eq!(clean("safe\rEVIL"), "safe\\rEVIL");
    }
}
