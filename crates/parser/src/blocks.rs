//! Finding call blocks in a response (rules 2 and 4).
//!
//! One forward walk over the tokens: a `<tool_call>` opening tag starts a block that ends at the
//! first `</tool_call>` or just before the next `<tool_call>`; outside blocks, `<X>` followed by a
//! container opening tag starts a bare call that ends at the first `</X>`, the next call start, or
//! the end. Every token is looked at a bounded number of times, so the walk is linear.

use super::call::{is_container, is_reserved, Reader, Span};
use super::scan::{all_ws, Kind, Token};
use super::ToolCall;

/// Where a call block is, and what kind it is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Block {
    /// `<tool_call …>` at token `open`.
    ToolCall { open: usize, span: Span },
    /// A bare `<X><params>…` call opened at token `open`.
    Bare { open: usize, span: Span },
}

/// Is token `k` the start of a bare call (rule 4): `<X>` (not reserved) then a container tag?
pub(crate) fn is_bare_start(text: &str, toks: &[Token], k: usize) -> bool {
    let t = toks[k];
    if !t.is_open_element() || is_reserved(t.inner(text)) {
        return false;
    }
    match toks.get(k + 1) {
        Some(n) => {
            matches!(n.kind, Kind::Open { .. })
                && is_container(n.inner(text))
                && all_ws(&text.as_bytes()[t.end..n.start])
        }
        None => false,
    }
}

/// Is token `k` a `<tool_call>` that starts a block?
pub(crate) fn is_tool_call_start(text: &str, t: &Token) -> bool {
    t.is_open_element() && t.inner(text).eq_ignore_ascii_case("tool_call")
}

/// The end of the block that starts after token `open`: (index of the ending token or
/// `toks.len()`, whether that token belongs to the block and is consumed).
pub(crate) fn block_end(
    text: &str,
    toks: &[Token],
    open: usize,
    bare: bool,
) -> Option<(usize, bool)> {
    let name = toks[open].inner(text);
    for (j, t) in toks.iter().enumerate().skip(open + 1) {
        if bare {
            if t.is_close_named(text, name) {
                return Some((j, true));
            }
            if is_tool_call_start(text, t) || is_bare_start(text, toks, j) {
                return Some((j, false));
            }
        } else {
            if t.is_close_named(text, "tool_call") {
                return Some((j, true));
            }
            if is_tool_call_start(text, t) {
                return Some((j, false));
            }
        }
    }
    None
}

/// All blocks of a whole response, in order.
pub(crate) fn find(text: &str, toks: &[Token]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let t = toks[k];
        let bare = if is_tool_call_start(text, &t) {
            false
        } else if is_bare_start(text, toks, k) {
            true
        } else {
            k += 1;
            continue;
        };
        let (t1, b1, next) = match block_end(text, toks, k, bare) {
            Some((j, consumed)) => (j, toks[j].start, if consumed { j + 1 } else { j }),
            None => (toks.len(), text.len(), toks.len()),
        };
        let span = Span {
            t0: k + 1,
            t1,
            b0: t.end,
            b1,
        };
        out.push(if bare {
            Block::Bare { open: k, span }
        } else {
            Block::ToolCall { open: k, span }
        });
        k = next;
    }
    out
}

/// Read one block into its call (or nothing, rule 3).
pub(crate) fn read(reader: &Reader<'_>, block: Block) -> Option<ToolCall> {
    match block {
        Block::ToolCall { open, span } => reader.tool_call(&reader.toks[open], span),
        Block::Bare { open, span } => Some(reader.bare(reader.toks[open].inner(reader.text), span)),
    }
}
