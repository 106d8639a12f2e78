//! The scanner: turns a response into a flat list of markup tokens (RULES.md D1-D5, rule 6).
//!
//! Only markup becomes a token: opening tags, closing tags, CDATA sections and the equals-sign
//! name form `<name=x>`. Everything else is text, found implicitly as the gaps between tokens.
//! The scanner jumps from one `<` to the next with `memchr` and finds the end of a CDATA section
//! with `memmem`, so it never looks at a byte of a CDATA value twice.
//!
//! The same scanner serves the one-shot parser and the incremental [`StreamParser`]: in
//! *streaming* mode (`fin == false`) it stops in front of anything the next chunk could still
//! change (a tag cut off by the end of the buffer, a CDATA section with no `]]>` yet) and resumes
//! from a remembered offset, so a long pending construct is never rescanned from its start.
//!
//! [`StreamParser`]: super::StreamParser

use std::collections::HashMap;

use memchr::memmem;

/// What kind of markup a [`Token`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `<x ...>`; `self_closing` when it ends with `/>`.
    Open { self_closing: bool },
    /// `</x>`.
    Close,
    /// `<![CDATA[ ... ]]>`; `terminated` is false when the `]]>` was missing (D5).
    Cdata { terminated: bool },
    /// The equals-sign name form of rule 6; `a..b` is the captured tool name.
    NameEq,
}

/// One piece of markup. Offsets are byte offsets into the scanned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    /// First byte of the token (its `<`).
    pub start: usize,
    /// One past the last byte of the token.
    pub end: usize,
    /// Tag name (Open, Close), content (Cdata) or captured name (NameEq): start.
    pub a: usize,
    /// End of the range that starts at `a`.
    pub b: usize,
}

impl Token {
    /// The tag name, CDATA content or captured name.
    pub fn inner<'t>(&self, text: &'t str) -> &'t str {
        &text[self.a..self.b]
    }

    /// Is this a non-self-closing opening tag?
    pub fn is_open_element(&self) -> bool {
        self.kind
            == Kind::Open {
                self_closing: false,
            }
    }

    /// Is this a closing tag named `name` (ASCII case-insensitive)?
    pub fn is_close_named(&self, text: &str, name: &str) -> bool {
        self.kind == Kind::Close && self.inner(text).eq_ignore_ascii_case(name)
    }

    /// Is this an opening or closing tag, or the equals-sign name form?
    pub fn is_tag(&self) -> bool {
        !matches!(self.kind, Kind::Cdata { .. })
    }
}

/// D1: space, tab, CR and LF.
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// D1 trim.
pub(crate) fn trim_ws(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'))
}

/// Is the whole slice D1 whitespace?
pub(crate) fn all_ws(s: &[u8]) -> bool {
    s.iter().all(|&b| is_ws(b))
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':')
}

/// D7: a valid tool name.
pub(crate) fn is_valid_tool_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_name_char)
}

const CDATA_OPEN: &[u8] = b"<![CDATA[";

/// The outcome of trying to read one construct at a `<`.
enum At {
    /// A token.
    Token(Token),
    /// Plain text: the `<` is not markup.
    Text,
    /// The end of the buffer cuts the construct; `resume` is where scanning may pick up again.
    NeedMore { resume: usize },
}

/// Where each closing tag name last occurs in the response's *tail*: the longest suffix made only
/// of whitespace and closing tags. Used by the D5 exception for unterminated CDATA sections.
#[derive(Debug, Default)]
struct Tail {
    /// Lower-cased tag name → start of its last closing tag.
    last_close: HashMap<Vec<u8>, usize>,
}

impl Tail {
    fn compute(bytes: &[u8]) -> Tail {
        let mut tail = Tail::default();
        let mut i = bytes.len();
        loop {
            while i > 0 && is_ws(bytes[i - 1]) {
                i -= 1;
            }
            if i == 0 || bytes[i - 1] != b'>' {
                break;
            }
            // A closing tag holds no '<' or '>' inside, so its '<' is the previous '<'.
            let Some(lt) = memchr::memrchr(b'<', &bytes[..i - 1]) else {
                break;
            };
            let Some((name_end, end)) = closing_tag_at(bytes, lt, true).ok().flatten() else {
                break;
            };
            if end != i {
                break;
            }
            let key = bytes[lt + 2..name_end].to_ascii_lowercase();
            tail.last_close.entry(key).or_insert(lt);
            i = lt;
        }
        tail
    }
}

/// Try to read a closing tag `</name ws* >` at `lt`. Ok(None): not a closing tag; Err: cut off.
fn closing_tag_at(bytes: &[u8], lt: usize, fin: bool) -> Result<Option<(usize, usize)>, ()> {
    closing_tag_from(bytes, lt, fin, CloseProgress::Name { upto: lt + 2 }).map_err(|_| ())
}

/// How far the reading of a closing tag cut off by the end of the buffer got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CloseProgress {
    /// `bytes[lt + 2..upto]` are name characters; the name may still grow.
    Name { upto: usize },
    /// The name ended at `name_end`; `bytes[name_end..upto]` are whitespace.
    Ws { name_end: usize, upto: usize },
}

/// [`closing_tag_at`], resumed from `from` (what an earlier, cut-off attempt already read), so
/// that a long name or a long run of whitespace is read once however often it is resumed.
fn closing_tag_from(
    bytes: &[u8],
    lt: usize,
    fin: bool,
    from: CloseProgress,
) -> Result<Option<(usize, usize)>, CloseProgress> {
    let n = bytes.len();
    let cut = |p: CloseProgress| if fin { Ok(None) } else { Err(p) };
    let (name_end, mut j) = match from {
        CloseProgress::Ws { name_end, upto } => (name_end, upto),
        CloseProgress::Name { upto } => {
            let mut j = upto;
            if j == lt + 2 {
                if j >= n {
                    return cut(CloseProgress::Name { upto: j });
                }
                if !is_name_start(bytes[j]) {
                    return Ok(None);
                }
            }
            while j < n && is_name_char(bytes[j]) {
                j += 1;
            }
            if j >= n {
                return cut(CloseProgress::Name { upto: j });
            }
            (j, j)
        }
    };
    while j < n && is_ws(bytes[j]) {
        j += 1;
    }
    if j >= n {
        return cut(CloseProgress::Ws { name_end, upto: j });
    }
    if bytes[j] == b'>' {
        Ok(Some((name_end, j + 1)))
    } else {
        Ok(None)
    }
}

/// What the scanner already knows about a construct at `lt` that the end of the buffer cut off
/// (streaming): resuming from it keeps every byte of a pending construct read a bounded number of
/// times, whatever the chunk sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// A closing tag.
    Close { lt: usize, progress: CloseProgress },
    /// An opening tag: `bytes[lt + 1..upto]` are name characters, the name may still grow.
    OpenName { lt: usize, upto: usize },
    /// An opening tag whose name ends at `name_end` and is not the equals-sign name form;
    /// the search for its `>` resumes from [`Scanner::resume`].
    OpenAttrs { lt: usize, name_end: usize },
    /// The equals-sign name form after `<name` (ending at `name_end`), matched so far.
    NameEq {
        lt: usize,
        name_end: usize,
        state: NameEqState,
    },
}

impl Cut {
    fn lt(&self) -> usize {
        match *self {
            Cut::Close { lt, .. }
            | Cut::OpenName { lt, .. }
            | Cut::OpenAttrs { lt, .. }
            | Cut::NameEq { lt, .. } => lt,
        }
    }
}

/// Resumable tokenizer state over a (possibly growing) text.
#[derive(Debug, Default)]
pub(crate) struct Scanner {
    /// Next byte to look at; everything before it has been tokenized for good.
    pub pos: usize,
    /// Where to resume the search for the end of a construct pending at `pos`.
    resume: usize,
    /// End of the last token, and whether it was a non-self-closing opening tag (with its name).
    last_end: usize,
    last_open: Option<(usize, usize)>,
    tail: Option<Tail>,
    /// Progress on the cut-off construct at `pos`, if any.
    cut: Option<Cut>,
}

impl Scanner {
    /// A scanner positioned at `pos` (used after a skipped region).
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos;
        self.resume = pos;
        self.last_end = pos;
        self.last_open = None;
        self.cut = None;
    }

    /// The next token at or after `pos`, or `None` at the end of the text (or, when `fin` is
    /// false, in front of a construct the next chunk could still change; `pos` then points at
    /// it).
    pub fn next(&mut self, text: &str, fin: bool) -> Option<Token> {
        let bytes = text.as_bytes();
        loop {
            let Some(off) = memchr::memchr(b'<', &bytes[self.pos..]) else {
                self.pos = bytes.len();
                self.resume = self.pos;
                return None;
            };
            let lt = self.pos + off;
            if self.resume < lt {
                self.resume = lt;
            }
            match self.read_at(text, lt, fin) {
                At::Token(tok) => {
                    self.pos = tok.end;
                    self.resume = tok.end;
                    self.last_end = tok.end;
                    self.last_open = if tok.is_open_element() {
                        Some((tok.a, tok.b))
                    } else {
                        None
                    };
                    return Some(tok);
                }
                At::Text => {
                    self.pos = lt + 1;
                }
                At::NeedMore { resume } => {
                    self.pos = lt;
                    self.resume = resume;
                    return None;
                }
            }
        }
    }

    fn read_at(&mut self, text: &str, lt: usize, fin: bool) -> At {
        let bytes = text.as_bytes();
        let n = bytes.len();
        let rest = &bytes[lt..];
        let cut = self.cut.take().filter(|c| c.lt() == lt);
        // A prefix of `<![CDATA[` cut by the end of the buffer may still become one.
        if rest.len() < CDATA_OPEN.len() && CDATA_OPEN.starts_with(rest) && !fin {
            return At::NeedMore { resume: lt };
        }
        if rest.starts_with(CDATA_OPEN) {
            return self.read_cdata(text, lt, fin);
        }
        if rest.len() < 2 {
            return if fin {
                At::Text
            } else {
                At::NeedMore { resume: lt }
            };
        }
        if rest[1] == b'/' {
            let from = match cut {
                Some(Cut::Close { progress, .. }) => progress,
                _ => CloseProgress::Name { upto: lt + 2 },
            };
            return match closing_tag_from(bytes, lt, fin, from) {
                Ok(Some((name_end, end))) => At::Token(Token {
                    kind: Kind::Close,
                    start: lt,
                    end,
                    a: lt + 2,
                    b: name_end,
                }),
                Ok(None) => At::Text,
                Err(progress) => {
                    self.cut = Some(Cut::Close { lt, progress });
                    At::NeedMore { resume: lt }
                }
            };
        }
        if !is_name_start(rest[1]) {
            return At::Text;
        }
        let (mut j, name_eq) = match cut {
            Some(Cut::OpenName { upto, .. }) => (upto, None),
            Some(Cut::OpenAttrs { name_end, .. }) => (name_end, Some(None)),
            Some(Cut::NameEq {
                name_end, state, ..
            }) => (name_end, Some(Some(state))),
            _ => (lt + 1, None),
        };
        while j < n && is_name_char(bytes[j]) {
            j += 1;
        }
        let name_end = j;
        if j >= n {
            if fin {
                return At::Text;
            }
            self.cut = Some(Cut::OpenName { lt, upto: j });
            return At::NeedMore { resume: lt };
        }
        // `name_eq`: None — not tried yet; Some(None) — decided: not the form; Some(Some(s)) —
        // resume the match from `s`.
        let name_eq = match name_eq {
            Some(known) => known,
            None if bytes[lt + 1..name_end].eq_ignore_ascii_case(b"name") => {
                Some(NameEqState::new(name_end))
            }
            None => None,
        };
        if let Some(state) = name_eq {
            match name_equals_at(bytes, state, fin) {
                NameEq::Match { a, b, end } => {
                    return At::Token(Token {
                        kind: Kind::NameEq,
                        start: lt,
                        end,
                        a,
                        b,
                    })
                }
                NameEq::NeedMore(state) => {
                    self.cut = Some(Cut::NameEq {
                        lt,
                        name_end,
                        state,
                    });
                    return At::NeedMore { resume: lt };
                }
                NameEq::No => {}
            }
        }
        let open = |end: usize, self_closing: bool| {
            At::Token(Token {
                kind: Kind::Open { self_closing },
                start: lt,
                end,
                a: lt + 1,
                b: name_end,
            })
        };
        let mut wait = |resume: usize| {
            self.cut = Some(Cut::OpenAttrs { lt, name_end });
            At::NeedMore { resume }
        };
        match bytes[j] {
            b'>' => open(j + 1, false),
            b'/' => match bytes.get(j + 1) {
                Some(b'>') => open(j + 2, true),
                Some(_) => At::Text,
                None if fin => At::Text,
                None => wait(lt),
            },
            b if is_ws(b) => {
                // Attributes: anything but '<' and '>' up to the '>'.
                let from = self.resume.max(j + 1);
                match memchr::memchr2(b'<', b'>', &bytes[from..]) {
                    Some(k) if bytes[from + k] == b'>' => {
                        let gt = from + k;
                        open(gt + 1, bytes[gt - 1] == b'/')
                    }
                    Some(_) => At::Text,
                    None if fin => At::Text,
                    None => wait(n),
                }
            }
            _ => At::Text,
        }
    }

    fn read_cdata(&mut self, text: &str, lt: usize, fin: bool) -> At {
        let bytes = text.as_bytes();
        let content = lt + CDATA_OPEN.len();
        let from = self.resume.max(content);
        if let Some(k) = memmem::find(&bytes[from..], b"]]>") {
            let close = from + k;
            return At::Token(Token {
                kind: Kind::Cdata { terminated: true },
                start: lt,
                end: close + 3,
                a: content,
                b: close,
            });
        }
        if !fin {
            // The `]]>` may straddle the chunk boundary: look again from two bytes back.
            return At::NeedMore {
                resume: bytes.len().saturating_sub(2).max(content),
            };
        }
        // D5: an unterminated section runs to the end, unless it opens a value right after `<X>`
        // and the last `</X>` sits in the tail of closing tags.
        let mut end = bytes.len();
        if let Some((na, nb)) = self.last_open {
            if all_ws(&bytes[self.last_end..lt]) {
                let tail = self.tail.get_or_insert_with(|| Tail::compute(bytes));
                let key = bytes[na..nb].to_ascii_lowercase();
                if let Some(&p) = tail.last_close.get(&key) {
                    if p >= content {
                        end = p;
                    }
                }
            }
        }
        At::Token(Token {
            kind: Kind::Cdata { terminated: false },
            start: lt,
            end,
            a: content,
            b: end,
        })
    }
}

enum NameEq {
    Match { a: usize, b: usize, end: usize },
    No,
    NeedMore(NameEqState),
}

/// How far the match of rule 6's expression got when the end of the buffer cut it (streaming).
/// Resuming from it reads every byte of the form once, whatever the chunk sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NameEqState {
    /// 0: `\s*=`; 1: `\s*["']?` and the first name byte; 2: the name; 4: `\s*/?>?` after the
    /// closing quote; 5: `\s*</name`; 6: `\s*>`.
    phase: u8,
    /// Where to continue.
    i: usize,
    /// The captured name `a..b` (from phase 2 on).
    a: usize,
    b: usize,
    /// End of the match without the optional `\s*</name\s*>` (from phase 5 on).
    matched: usize,
}

impl NameEqState {
    fn new(name_end: usize) -> Self {
        NameEqState {
            phase: 0,
            i: name_end,
            a: 0,
            b: 0,
            matched: 0,
        }
    }
}

/// Rule 6, by hand: after `<name`, match
/// `\s*=\s*["']?([A-Za-z0-9_.:-]+)["']?\s*/?>?(\s*</name\s*>)?` (from `state`). In streaming
/// mode the greedy optional parts may still grow, so it waits for a decisive byte.
fn name_equals_at(bytes: &[u8], state: NameEqState, fin: bool) -> NameEq {
    let n = bytes.len();
    let NameEqState {
        mut phase,
        mut i,
        mut a,
        mut b,
        mut matched,
    } = state;
    let is_quote = |c: u8| matches!(c, b'"' | b'\'');
    let is_group = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':' | b'-');
    // The end of the buffer at `at`: the match is `$done` if the text is complete, otherwise
    // wait, resuming this phase at `resume`.
    macro_rules! at_end {
        ($at:expr, $resume:expr, $done:expr) => {
            if $at >= n {
                return if fin {
                    $done
                } else {
                    NameEq::NeedMore(NameEqState {
                        phase,
                        i: $resume,
                        a,
                        b,
                        matched,
                    })
                };
            }
        };
    }
    macro_rules! skip_ws {
        () => {
            while i < n && is_ws(bytes[i]) {
                i += 1;
            }
        };
    }
    let done = |a: usize, b: usize, end: usize| NameEq::Match { a, b, end };
    loop {
        match phase {
            0 => {
                skip_ws!();
                at_end!(i, i, NameEq::No);
                if bytes[i] != b'=' {
                    return NameEq::No;
                }
                i += 1;
                phase = 1;
            }
            1 => {
                skip_ws!();
                at_end!(i, i, NameEq::No);
                let p = if is_quote(bytes[i]) { i + 1 } else { i };
                at_end!(p, i, NameEq::No);
                a = p;
                i = p;
                phase = 2;
            }
            2 => {
                while i < n && is_group(bytes[i]) {
                    i += 1;
                }
                if i == a {
                    return NameEq::No;
                }
                b = i;
                at_end!(i, i, done(a, b, i));
                if is_quote(bytes[i]) {
                    i += 1;
                }
                phase = 4;
            }
            4 => {
                skip_ws!();
                at_end!(i, i, done(a, b, i));
                let mut p = i;
                if bytes[p] == b'/' {
                    p += 1;
                    at_end!(p, i, done(a, b, p));
                }
                if bytes[p] == b'>' {
                    p += 1;
                }
                matched = p;
                i = p;
                phase = 5;
            }
            5 => {
                skip_ws!();
                at_end!(i, i, done(a, b, matched));
                if bytes[i] != b'<' {
                    return done(a, b, matched);
                }
                let want = b"</name";
                let avail = &bytes[i..n.min(i + want.len())];
                if !want[..avail.len()].eq_ignore_ascii_case(avail) {
                    return done(a, b, matched);
                }
                at_end!(i + avail.len(), i, done(a, b, matched));
                i += want.len();
                phase = 6;
            }
            _ => {
                skip_ws!();
                at_end!(i, i, done(a, b, matched));
                return if bytes[i] == b'>' {
                    done(a, b, i + 1)
                } else {
                    done(a, b, matched)
                };
            }
        }
    }
}

/// Tokenize a whole response (one-shot mode).
pub(crate) fn tokenize(text: &str) -> Vec<Token> {
    let mut scanner = Scanner::default();
    let mut out = Vec::new();
    while let Some(tok) = scanner.next(text, true) {
        out.push(tok);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        tokenize(text)
            .into_iter()
            .map(|t| (t.kind, &text[t.start..t.end]))
            .collect()
    }

    #[test]
    fn plain_lt_is_text() {
        assert!(kinds("a < b, <3, <!-- x -->, <query=x>, <cut").is_empty());
    }

    #[test]
    fn tags_and_attributes() {
        let k = kinds(r#"<a><b x="1"/></A ><c />"#);
        assert_eq!(k.len(), 4);
        assert_eq!(k[1].0, Kind::Open { self_closing: true });
        assert_eq!(k[2].0, Kind::Close);
        assert_eq!(k[3].0, Kind::Open { self_closing: true });
    }

    #[test]
    fn name_equals_forms() {
        for s in [
            "<name=call_subagent</name>",
            "<name=call_subagent>",
            "<name=call_subagent></name>",
            "<name=\"call_subagent\">",
            "<name = call_subagent>",
        ] {
            let t = tokenize(s);
            assert_eq!(t.len(), 1, "{s}");
            assert_eq!(t[0].kind, Kind::NameEq);
            assert_eq!(t[0].inner(s), "call_subagent");
            assert_eq!(t[0].end, s.len(), "{s}");
        }
    }

    #[test]
    fn unterminated_cdata_exception() {
        let s = "<c><![CDATA[body</c></params></tool_call>";
        let t = tokenize(s);
        assert_eq!(t[1].inner(s), "body");
        assert_eq!(t[2].kind, Kind::Close);
        let s = "<c><![CDATA[x</c> then more text";
        let t = tokenize(s);
        assert_eq!(t[1].inner(s), "x</c> then more text");
    }

    #[test]
    fn streaming_waits_for_cut_constructs() {
        let mut sc = Scanner::default();
        assert!(sc.next("<tool_ca", false).is_none());
        assert_eq!(sc.pos, 0);
        assert!(sc.next("<![CDATA[abc]]", false).is_none());
        assert_eq!(sc.pos, 0);
        let t = sc.next("<![CDATA[abc]]>", false).unwrap();
        assert_eq!(t.kind, Kind::Cdata { terminated: true });
    }
}
