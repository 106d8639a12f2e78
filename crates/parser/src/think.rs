//! Rule 1: reasoning (`<think>…</think>`) is removed before anything else is read.
//!
//! The filter walks the response with the [`Scanner`] (so CDATA sections are skipped), and on a
//! `<think>` opening tag searches plainly for the next `</think>` (CDATA is *not* recognised
//! inside a reasoning region). It copies everything outside the regions to an output string. It
//! works on a growing buffer too, which is how the streaming parser uses it.

use super::scan::{is_ws, Kind, Scanner};

/// Incremental think-region filter.
#[derive(Debug, Default)]
pub(crate) struct ThinkFilter {
    scanner: Scanner,
    /// Inside a region: where to continue the search for `</think>`.
    in_region: Option<Resume>,
    /// Has any think tag been seen yet?
    seen_think: bool,
    /// Raw text before this offset has been copied or deleted.
    copied: usize,
}

/// What [`ThinkFilter::advance`] did besides copying text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advance {
    /// Nothing special.
    Normal,
    /// A leading `</think>` turned everything before it into reasoning: the output was cleared.
    Reset,
}

impl ThinkFilter {
    /// Consume as much of `raw` as can be decided, appending kept text to `out`.
    pub fn advance(&mut self, raw: &str, fin: bool, out: &mut String) -> Advance {
        let bytes = raw.as_bytes();
        let mut result = Advance::Normal;
        loop {
            if let Some(from) = self.in_region {
                match find_think_close(bytes, from, fin) {
                    Search::Found(end) => {
                        self.in_region = None;
                        self.copied = end;
                        self.scanner.seek(end);
                    }
                    Search::NotYet(resume) => {
                        self.in_region = Some(resume);
                        return result;
                    }
                }
            }
            let Some(tok) = self.scanner.next(raw, fin) else {
                let keep_to = if fin { raw.len() } else { self.scanner.pos };
                if keep_to > self.copied {
                    out.push_str(&raw[self.copied..keep_to]);
                    self.copied = keep_to;
                }
                return result;
            };
            let is_think = matches!(tok.kind, Kind::Open { .. } | Kind::Close)
                && tok.inner(raw).eq_ignore_ascii_case("think");
            if !is_think {
                continue;
            }
            let first = !self.seen_think;
            self.seen_think = true;
            match tok.kind {
                Kind::Close if first => {
                    out.clear();
                    self.copied = tok.end;
                    result = Advance::Reset;
                }
                Kind::Open {
                    self_closing: false,
                } => {
                    out.push_str(&raw[self.copied..tok.start]);
                    self.copied = tok.end;
                    self.in_region = Some(Resume {
                        at: tok.end,
                        ws_to: None,
                    });
                }
                _ => {
                    out.push_str(&raw[self.copied..tok.start]);
                    self.copied = tok.end;
                }
            }
        }
    }
}

/// Where the search for `</think>` continues in a growing buffer.
#[derive(Debug, Clone, Copy)]
struct Resume {
    /// The next byte to look at (a `</think` cut off by the end of the buffer when `ws_to` is set).
    at: usize,
    /// With `</think` at `at`: the whitespace after it was already read up to here.
    ws_to: Option<usize>,
}

enum Search {
    /// End of the `</think>` tag.
    Found(usize),
    /// Not found yet; resume the search here.
    NotYet(Resume),
}

/// Plain search for `</think ws* >` (case-insensitive) from `from`. A `</think` followed by
/// whitespace up to the end of the buffer is resumed after that whitespace, so feeding a long run
/// of whitespace in small chunks reads it once.
fn find_think_close(bytes: &[u8], from: Resume, fin: bool) -> Search {
    let n = bytes.len();
    let want = b"</think";
    let mut i = from.at;
    while let Some(off) = memchr::memchr(b'<', &bytes[i..]) {
        let lt = i + off;
        let avail = &bytes[lt..n.min(lt + want.len())];
        if want[..avail.len()].eq_ignore_ascii_case(avail) {
            if avail.len() < want.len() {
                return if fin {
                    Search::Found(n)
                } else {
                    Search::NotYet(Resume {
                        at: lt,
                        ws_to: None,
                    })
                };
            }
            let mut j = match from.ws_to {
                Some(w) if lt == from.at => w,
                _ => lt + want.len(),
            };
            while j < n && is_ws(bytes[j]) {
                j += 1;
            }
            if j >= n {
                return if fin {
                    Search::Found(n)
                } else {
                    Search::NotYet(Resume {
                        at: lt,
                        ws_to: Some(j),
                    })
                };
            }
            if bytes[j] == b'>' {
                return Search::Found(j + 1);
            }
        }
        i = lt + 1;
    }
    if fin {
        Search::Found(n)
    } else {
        Search::NotYet(Resume { at: n, ws_to: None })
    }
}

/// Is there anything that could be a think tag at all? (A cheap pre-check for the one-shot path.)
pub(crate) fn may_contain_think(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'<', bytes).any(|lt| {
        let mut j = lt + 1;
        if bytes.get(j) == Some(&b'/') {
            j += 1;
        }
        bytes
            .get(j..j + 5)
            .is_some_and(|w| w.eq_ignore_ascii_case(b"think"))
    })
}

/// Remove reasoning from a whole response (one-shot mode).
pub(crate) fn strip(text: &str) -> std::borrow::Cow<'_, str> {
    if !may_contain_think(text) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    ThinkFilter::default().advance(text, true, &mut out);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn regions_and_strays() {
        assert_eq!(strip("a<think>x</think>b"), "ab");
        assert_eq!(strip("draft</think>rest"), "rest");
        assert_eq!(strip("a<think>never closed"), "a");
        assert_eq!(strip("<think>x</think>a</think>b<think/>c"), "abc");
        assert_eq!(strip("<![CDATA[<think>]]>z"), "<![CDATA[<think>]]>z");
        assert_eq!(strip("<THINK a='1'>x</Think >y"), "y");
    }
}
