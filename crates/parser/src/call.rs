//! Reading one call block into a [`ToolCall`] (rules 3, 5-16).
//!
//! A block is a range of tokens. The reader walks it once, keeping a small stack of open
//! containers, and handles each repair of the seed's table where it arises:
//!
//! | seed repair | where |
//! |---|---|
//! | tool name as tag (`<web_fetch><params>…`) | rule 7 here (second pass), rule 4 in [`super::blocks`] |
//! | equals-sign name (`<name=x</name>`) | [`Kind::NameEq`] tokens from the scanner, taken here |
//! | missing closing tag after CDATA | [`Reader::value`]: the parameter ends after its CDATA |
//! | scattered parameters / several `<params>` | every element is merged into one map |
//! | missing `</params>` | a container runs to the end of the block |
//! | unclosed `<tool_call>` | [`super::blocks`]: the block ends at the next call or the end |
//!
//! "The first closing tag with this name later in the block" is answered by a per-response
//! index of closing tags (name → positions, binary search), so no value ever triggers a rescan.

use std::cell::OnceCell;
use std::collections::HashMap;

use super::json;
use super::scan::{all_ws, is_valid_tool_name, is_ws, trim_ws, Kind, Token};
use super::value::decode_plain;
use super::{Params, ToolCall};

const CONTAINERS: [&str; 3] = ["params", "parameters", "arguments"];
const RESERVED: [&str; 6] = [
    "tool_call",
    "name",
    "params",
    "parameters",
    "arguments",
    "think",
];

pub(crate) fn is_container(name: &str) -> bool {
    CONTAINERS.iter().any(|c| c.eq_ignore_ascii_case(name))
}

pub(crate) fn is_reserved(name: &str) -> bool {
    RESERVED.iter().any(|c| c.eq_ignore_ascii_case(name))
}

/// Lower-cased closing-tag name → indices of those closing tags, ascending.
type CloseIndex = HashMap<Vec<u8>, Vec<usize>>;

/// Shared, read-only view of one response's tokens.
pub(crate) struct Reader<'a> {
    pub text: &'a str,
    pub toks: &'a [Token],
    index: OnceCell<CloseIndex>,
}

/// The token range of one block: tokens `t0..t1`, bytes `b0..b1`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub t0: usize,
    pub t1: usize,
    pub b0: usize,
    pub b1: usize,
}

/// What one pass over a block found.
#[derive(Default)]
struct Pass {
    /// Rules 5-6: the first block-level `<name>` element (Some(None): it was not a valid name).
    name: Option<Option<String>>,
    /// Rule 7: the first block-level element that could be the tool.
    name_tag: Option<usize>,
    params: Params,
    /// Rule 14: a container with bad JSON makes the call malformed.
    error: Option<String>,
}

impl<'a> Reader<'a> {
    pub fn new(text: &'a str, toks: &'a [Token]) -> Self {
        Reader {
            text,
            toks,
            index: OnceCell::new(),
        }
    }

    /// The first closing tag named `name` at a token index in `after+1..before`.
    fn first_close(&self, name: &str, after: usize, before: usize) -> Option<usize> {
        let index = self.index.get_or_init(|| {
            let mut idx = CloseIndex::new();
            for (i, t) in self.toks.iter().enumerate() {
                if t.kind == Kind::Close {
                    idx.entry(t.inner(self.text).as_bytes().to_ascii_lowercase())
                        .or_default()
                        .push(i);
                }
            }
            idx
        });
        let list = index.get(&name.as_bytes().to_ascii_lowercase())?;
        let at = list.partition_point(|&i| i <= after);
        list.get(at).copied().filter(|&i| i < before)
    }

    /// A `<tool_call>` block. `None` when it is not a call at all (rule 3).
    pub fn tool_call(&self, open: &Token, span: Span) -> Option<ToolCall> {
        if let Some(json_at) = self.json_call_start(span) {
            return Some(
                match json::call(json_call_text(&self.text[json_at..span.b1])) {
                    Ok((name, params)) => ToolCall::new(name, params),
                    Err(e) => ToolCall::malformed(format!("JSON tool call: {e}")),
                },
            );
        }
        if !self.toks[span.t0..span.t1].iter().any(Token::is_tag) {
            return None;
        }
        let pass = self.walk(span, false, None);
        if let Some(e) = pass.error {
            return Some(ToolCall::malformed(e));
        }
        if let Some(Some(name)) = pass.name {
            return Some(ToolCall::new(name, pass.params));
        }
        if let Some(k) = pass.name_tag {
            let second = self.walk(span, false, Some(k));
            if let Some(e) = second.error {
                return Some(ToolCall::malformed(e));
            }
            let name = self.toks[k].inner(self.text).to_string();
            return Some(ToolCall::new(name, second.params));
        }
        if let Some(name) = name_attribute(&self.text[open.start..open.end]) {
            return Some(ToolCall::new(name, pass.params));
        }
        Some(ToolCall::malformed(match pass.name {
            Some(None) => "the <name> element does not hold a valid tool name (letters, digits, \
                           _ - . : only); write <name>tool_name</name>"
                .to_string(),
            _ => "the tool call has no tool name; put <name>tool_name</name> inside <tool_call>"
                .to_string(),
        }))
    }

    /// The tool name rules 5-6 give for a block read so far (streaming preview).
    pub fn provisional_name(&self, span: Span) -> Option<String> {
        self.walk(span, false, None).name.flatten()
    }

    /// A bare `<X><params>…` call (rule 4): the content is read like a container's.
    pub fn bare(&self, name: &str, span: Span) -> ToolCall {
        let pass = self.walk(span, true, None);
        match pass.error {
            Some(e) => ToolCall::malformed(e),
            None => ToolCall::new(name.to_string(), pass.params),
        }
    }

    /// Rule 15: where the JSON object of a JSON call block starts, if this is one.
    fn json_call_start(&self, span: Span) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let mut i = span.b0;
        while i < span.b1 && is_ws(bytes[i]) {
            i += 1;
        }
        if i < span.b1 && matches!(bytes[i], b'`' | b'~') {
            let fence = bytes[i];
            let mut j = i;
            while j < span.b1 && bytes[j] == fence {
                j += 1;
            }
            if j - i < 3 {
                return None;
            }
            // The fence line (with its language, or whatever else) runs to the end of the line.
            i = memchr::memchr(b'\n', &bytes[j..span.b1]).map_or(span.b1, |k| j + k);
            while i < span.b1 && is_ws(bytes[i]) {
                i += 1;
            }
        }
        (i < span.b1 && bytes[i] == b'{').then_some(i)
    }

    /// One pass over a block (or a bare call's content when `in_container`). With `name_tag`,
    /// that element is read as the tool (rule 7).
    fn walk(&self, span: Span, in_container: bool, name_tag: Option<usize>) -> Pass {
        let mut pass = Pass::default();
        self.walk_into(&mut pass, span, in_container, name_tag);
        pass
    }

    fn walk_into(&self, pass: &mut Pass, span: Span, in_container: bool, name_tag: Option<usize>) {
        let text = self.text;
        let bytes = text.as_bytes();
        // Open containers, innermost last (their tag names).
        let mut stack: Vec<&str> = Vec::new();
        let mut k = span.t0;
        while k < span.t1 && pass.error.is_none() {
            let tok = self.toks[k];
            let block_level = stack.is_empty() && !in_container;
            match tok.kind {
                Kind::Cdata { .. } => k += 1,
                Kind::NameEq => {
                    if block_level && pass.name.is_none() {
                        pass.name = Some(Some(tok.inner(text).to_string()));
                    }
                    k += 1;
                }
                Kind::Close => {
                    let name = tok.inner(text);
                    if let Some(d) = stack.iter().rposition(|s| s.eq_ignore_ascii_case(name)) {
                        stack.truncate(d);
                    }
                    k += 1;
                }
                Kind::Open { self_closing } => {
                    let name = tok.inner(text);
                    if is_container(name) {
                        k += 1;
                        if self_closing {
                            continue;
                        }
                        let after = skip_ws(bytes, tok.end, span.b1);
                        let next_tok_start = self.toks.get(k).map_or(span.b1, |t| t.start);
                        if after < span.b1 && bytes[after] == b'{' && after < next_tok_start {
                            // Rule 14: JSON up to this container's own closing tag.
                            let close = self.first_close(name, k - 1, span.t1);
                            let end = close.map_or(span.b1, |c| self.toks[c].start);
                            if let Err(e) = json::container_params(
                                trim_ws(&text[tok.end..end]),
                                &mut pass.params,
                            ) {
                                pass.error = Some(format!("JSON in <{name}>: {e}"));
                            }
                            k = close.map_or(span.t1, |c| c + 1);
                        } else {
                            stack.push(name);
                        }
                        continue;
                    }
                    // A `<tool_call>` here can only be the ignored self-closing form (rule 2). A
                    // `<think>` that survived rule 1 (joined from pieces) is an ordinary element.
                    if name.eq_ignore_ascii_case("tool_call") {
                        k += 1;
                        continue;
                    }
                    if block_level && name.eq_ignore_ascii_case("name") {
                        let (value, next) = self.value(k, span);
                        if pass.name.is_none() {
                            let v = trim_ws(&value);
                            pass.name = Some(is_valid_tool_name(v).then(|| v.to_string()));
                        }
                        k = next;
                        continue;
                    }
                    if name_tag == Some(k) {
                        // Rule 7: read the element like a container, up to `</X>` or the end.
                        let close = self.first_close(name, k, span.t1);
                        let inner = Span {
                            t0: k + 1,
                            t1: close.unwrap_or(span.t1),
                            b0: tok.end,
                            b1: close.map_or(span.b1, |c| self.toks[c].start),
                        };
                        self.walk_into(pass, inner, true, None);
                        k = close.map_or(span.t1, |c| c + 1);
                        continue;
                    }
                    if block_level
                        && !self_closing
                        && pass.name_tag.is_none()
                        && !is_reserved(name)
                        && self.content_starts_with_tag(k, span)
                    {
                        pass.name_tag = Some(k);
                    }
                    let (value, next) = self.value(k, span);
                    pass.params.insert(name.to_string(), value);
                    k = next;
                }
            }
        }
    }

    /// Does the element opened at `k` have content that begins (after whitespace) with a tag?
    fn content_starts_with_tag(&self, k: usize, span: Span) -> bool {
        let open = self.toks[k];
        match self.toks.get(k + 1) {
            Some(next) if k + 1 < span.t1 => {
                matches!(next.kind, Kind::Open { .. })
                    && all_ws(&self.text.as_bytes()[open.end..next.start])
            }
            _ => false,
        }
    }

    /// Read the value of the parameter opened at token `k` (rules 10-13). Returns the value and
    /// the index of the first token after it.
    fn value(&self, k: usize, span: Span) -> (String, usize) {
        let text = self.text;
        let bytes = text.as_bytes();
        let open = self.toks[k];
        if open.kind == (Kind::Open { self_closing: true }) {
            return (String::new(), k + 1);
        }
        let name = open.inner(text);
        let first = k + 1;
        // Rules 10-11: a CDATA value.
        if first < span.t1 {
            let t = self.toks[first];
            if matches!(t.kind, Kind::Cdata { .. }) && all_ws(&bytes[open.end..t.start]) {
                let mut value = String::from(t.inner(text));
                let mut j = first;
                while j + 1 < span.t1 {
                    let n = self.toks[j + 1];
                    if !matches!(n.kind, Kind::Cdata { .. }) || n.start != self.toks[j].end {
                        break;
                    }
                    value.push_str(n.inner(text));
                    j += 1;
                }
                let mut next = j + 1;
                if next < span.t1 {
                    let c = self.toks[next];
                    if c.is_close_named(text, name) && all_ws(&bytes[self.toks[j].end..c.start]) {
                        next += 1;
                    }
                }
                return (value, next);
            }
        }
        // Rule 12: a plain value.
        let (end_byte, cdata_to, next) = match self.first_close(name, k, span.t1) {
            Some(c) => (self.toks[c].start, c, c + 1),
            None => {
                let m = (first..span.t1)
                    .find(|&m| self.toks[m].is_tag())
                    .unwrap_or(span.t1);
                let end = if m < span.t1 {
                    self.toks[m].start
                } else {
                    span.b1
                };
                (end, m, m)
            }
        };
        let value = decode_plain(text, open.end, end_byte, &self.toks[first..cdata_to]);
        (value, next)
    }
}

fn skip_ws(bytes: &[u8], mut i: usize, end: usize) -> usize {
    while i < end && is_ws(bytes[i]) {
        i += 1;
    }
    i
}

/// Rule 15: from the `{` to the end of the block, trimmed, without a closing fence.
fn json_call_text(s: &str) -> &str {
    let s = trim_ws(s);
    for fence in ['`', '~'] {
        let stripped = s.trim_end_matches(fence);
        if s.len() - stripped.len() >= 3 {
            return trim_ws(stripped);
        }
    }
    s
}

/// Rule 8: a `name="…"` / `name='…'` attribute of the `<tool_call …>` tag, if valid.
fn name_attribute(tag: &str) -> Option<String> {
    let bytes = tag.as_bytes();
    // Skip `<` and the tag name.
    let mut i = 1;
    while i < bytes.len() && !is_ws(bytes[i]) && bytes[i] != b'>' && bytes[i] != b'/' {
        i += 1;
    }
    loop {
        while i < bytes.len() && (is_ws(bytes[i]) || bytes[i] == b'/') {
            i += 1;
        }
        if i >= bytes.len() || bytes[i] == b'>' {
            return None;
        }
        let a = i;
        while i < bytes.len() && !is_ws(bytes[i]) && !matches!(bytes[i], b'=' | b'>' | b'/') {
            i += 1;
        }
        let attr = &tag[a..i];
        while i < bytes.len() && is_ws(bytes[i]) {
            i += 1;
        }
        if bytes.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while i < bytes.len() && is_ws(bytes[i]) {
            i += 1;
        }
        let value = match bytes.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let start = i + 1;
                let end = memchr::memchr(q, &bytes[start..]).map(|k| start + k);
                i = end.map_or(bytes.len(), |e| e + 1);
                end.map(|e| &tag[start..e])
            }
            _ => {
                while i < bytes.len() && !is_ws(bytes[i]) && bytes[i] != b'>' {
                    i += 1;
                }
                None
            }
        };
        if attr.eq_ignore_ascii_case("name") {
            if let Some(v) = value {
                let v = trim_ws(v);
                return is_valid_tool_name(v).then(|| v.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_attribute_forms() {
        assert_eq!(
            name_attribute(r#"<tool_call name="web_search">"#).as_deref(),
            Some("web_search")
        );
        assert_eq!(
            name_attribute("<tool_call id=1 name=' a '>").as_deref(),
            Some("a")
        );
        assert_eq!(
            name_attribute(r#"<tool_call data-name="x" type="f">"#),
            None
        );
        assert_eq!(name_attribute(r#"<tool_call name="a b">"#), None);
    }

    #[test]
    fn json_fence_removed() {
        assert_eq!(json_call_text("{\"a\":1}\n```\n"), "{\"a\":1}");
        assert_eq!(json_call_text("{\"a\":1}~~~~"), "{\"a\":1}");
        assert_eq!(json_call_text("{\"a\":1}``"), "{\"a\":1}``");
    }
}
