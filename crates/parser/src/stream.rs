//! Incremental parsing of a token stream.
//!
//! [`StreamParser::feed`] takes the response chunk by chunk and reports, as soon as the text
//! decides it, when a call starts, when its tool name is known and when it is complete.
//! [`StreamParser::finish`] returns exactly what [`parse`](super::parse) returns for the whole
//! text.
//!
//! How: the same think filter and scanner as the one-shot parser run in *streaming* mode,
//! stopping in front of anything the next chunk could change (a cut-off tag, a CDATA section
//! whose `]]>` has not arrived, an open `<think>` region) and resuming from remembered offsets.
//! Tokens are final once produced. A block is read — by the same block reader — once the token
//! that ends it has arrived, so its `CallComplete` carries the call the one-shot parser returns.
//! Every byte is scanned a bounded number of times, so feeding is linear overall however small
//! the chunks are.
//!
//! One situation rewrites history: a `</think>` with no `<think>` before it means everything
//! so far was reasoning (rule 1). The parser then emits [`StreamEvent::Reset`] and starts over.
//! The one case no stream can foresee: that `</think>` hidden behind a CDATA section whose `]]>`
//! never comes, where only the end of the response shows (by D5's exception) that the section
//! ended before the closing tags of the tail, among them that `</think>`. Calls reported before
//! it are then not in [`StreamParser::finish`]'s list (which is still exactly `parse`'s).

use super::blocks::{is_bare_start, is_tool_call_start};
use super::call::{Reader, Span};
use super::scan::{is_ws, Kind, Scanner, Token};
use super::think::{Advance, ThinkFilter};
use super::ToolCall;

/// Something the stream made certain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// Call number `index` (0-based, the position it will have in [`StreamParser::finish`]'s
    /// list) has started.
    CallStarted {
        /// Position of the call in the response.
        index: usize,
    },
    /// The tool name of call `index` as read so far. For `<name>`-style calls it is read from the
    /// text received so far and is provisional; [`StreamEvent::CallComplete`] carries the final
    /// call.
    NameKnown {
        /// Position of the call in the response.
        index: usize,
        /// The tool name.
        name: String,
    },
    /// Call `index` is complete: this is the call [`parse`](super::parse) returns at that position
    /// (unless a later [`StreamEvent::Reset`] discards it).
    CallComplete {
        /// Position of the call in the response.
        index: usize,
        /// The call.
        call: ToolCall,
    },
    /// A `</think>` with no opening tag turned everything received so far into reasoning:
    /// discard every call reported before this event; numbering starts again at 0.
    Reset,
}

/// A block whose end has not arrived yet.
#[derive(Debug)]
struct OpenBlock {
    /// Token index of `<tool_call>` or of the bare `<X>`.
    open: usize,
    bare: bool,
    /// Call number, once the block is known to produce a call.
    index: Option<usize>,
    name_known: bool,
    name_attempts: u32,
    /// Next token to examine for the end of the block.
    scan: usize,
    /// Until the first non-whitespace byte of a `<tool_call>` block has arrived: where to look
    /// for it (so a long run of leading whitespace is read once).
    json_probe: Option<usize>,
}

/// Incremental tool-call parser. See the [module docs](self).
///
/// ```
/// use artifactflow_parser::{StreamEvent, StreamParser};
/// let mut p = StreamParser::new();
/// let mut events = p.feed("<tool_call><name>web_se");
/// events.extend(p.feed("arch</name><params><q>x</q>"));
/// assert!(events.contains(&StreamEvent::NameKnown { index: 0, name: "web_search".into() }));
/// let calls = p.finish();
/// assert_eq!(calls[0].params["q"], "x");
/// ```
#[derive(Debug, Default)]
pub struct StreamParser {
    raw: String,
    think: ThinkFilter,
    clean: String,
    scanner: Scanner,
    toks: Vec<Token>,
    /// Next token to examine at the top level (outside blocks).
    top: usize,
    block: Option<OpenBlock>,
    calls: usize,
}

impl StreamParser {
    /// A parser at the start of a response.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text received so far.
    pub fn text(&self) -> &str {
        &self.raw
    }

    /// Add a chunk; returns what it made certain, in order.
    pub fn feed(&mut self, chunk: &str) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        self.raw.push_str(chunk);
        if self.think.advance(&self.raw, false, &mut self.clean) == Advance::Reset {
            self.scanner = Scanner::default();
            self.toks.clear();
            self.top = 0;
            self.block = None;
            self.calls = 0;
            events.push(StreamEvent::Reset);
        }
        while let Some(tok) = self.scanner.next(&self.clean, false) {
            self.toks.push(tok);
        }
        self.advance_blocks(&mut events);
        events
    }

    /// End of the stream: every call of the whole response, exactly as [`parse`](super::parse)
    /// returns them.
    pub fn finish(self) -> Vec<ToolCall> {
        super::parse(&self.raw)
    }

    fn advance_blocks(&mut self, events: &mut Vec<StreamEvent>) {
        loop {
            if self.block.is_some() {
                if !self.advance_open_block(events) {
                    return;
                }
                continue;
            }
            // Outside blocks: find the next call start.
            let text = &self.clean;
            let mut started = None;
            while self.top < self.toks.len() {
                let k = self.top;
                if is_tool_call_start(text, &self.toks[k]) {
                    started = Some((k, false));
                    break;
                }
                if self.toks[k].is_open_element() && k + 1 == self.toks.len() {
                    return; // a bare start needs the next token to be decided
                }
                if is_bare_start(text, &self.toks, k) {
                    started = Some((k, true));
                    break;
                }
                self.top += 1;
            }
            let Some((open, bare)) = started else { return };
            self.block = Some(OpenBlock {
                open,
                bare,
                index: None,
                name_known: false,
                name_attempts: 0,
                scan: open + 1,
                json_probe: (!bare).then(|| self.toks[open].end),
            });
            if bare {
                let index = start_call(&mut self.calls, events);
                let name = self.toks[open].inner(&self.clean).to_string();
                events.push(StreamEvent::NameKnown { index, name });
                if let Some(b) = self.block.as_mut() {
                    b.index = Some(index);
                    b.name_known = true;
                }
            }
        }
    }

    /// Look for the end of the open block. Returns true when the block was completed.
    fn advance_open_block(&mut self, events: &mut Vec<StreamEvent>) -> bool {
        let Some(mut b) = self.block.take() else {
            return false;
        };
        let text = &self.clean;
        let name = self.toks[b.open].inner(text).to_string();
        // A `<tool_call>` whose content starts with `{` is a JSON call: it produces one entry.
        if let Some(from) = b.json_probe {
            let bytes = text.as_bytes();
            match bytes[from..].iter().position(|&c| !is_ws(c)) {
                Some(i) => {
                    b.json_probe = None;
                    if bytes[from + i] == b'{' && b.index.is_none() {
                        b.index = Some(start_call(&mut self.calls, events));
                    }
                }
                None => b.json_probe = Some(bytes.len()),
            }
        }
        let mut end = None;
        let mut name_probe = false;
        while b.scan < self.toks.len() {
            let j = b.scan;
            let t = self.toks[j];
            let ends = if b.bare {
                if t.is_close_named(text, &name) {
                    Some((j, true))
                } else if is_tool_call_start(text, &t) {
                    Some((j, false))
                } else if t.is_open_element() && j + 1 == self.toks.len() {
                    break; // could be a bare start: wait for the next token
                } else if is_bare_start(text, &self.toks, j) {
                    Some((j, false))
                } else {
                    None
                }
            } else if t.is_close_named(text, "tool_call") {
                Some((j, true))
            } else if is_tool_call_start(text, &t) {
                Some((j, false))
            } else {
                None
            };
            if ends.is_some() {
                end = ends;
                break;
            }
            if b.index.is_none() && t.is_tag() {
                b.index = Some(start_call(&mut self.calls, events));
            }
            if t.kind == Kind::NameEq || t.is_close_named(text, "name") {
                name_probe = true;
            }
            b.scan += 1;
        }
        let span_to = |t1: usize, b1: usize| Span {
            t0: 1,
            t1: t1 - b.open,
            b0: self.toks[b.open].end,
            b1,
        };
        if let Some((j, consumed)) = end {
            let toks = &self.toks[b.open..j];
            let reader = Reader::new(text, toks);
            let span = span_to(j, self.toks[j].start);
            let call = if b.bare {
                Some(reader.bare(&name, span))
            } else {
                reader.tool_call(&toks[0], span)
            };
            if let Some(call) = call {
                let index = match b.index {
                    Some(i) => i,
                    None => start_call(&mut self.calls, events),
                };
                events.push(StreamEvent::CallComplete { index, call });
            }
            self.top = if consumed { j + 1 } else { j };
            return true;
        }
        if name_probe && !b.name_known && b.name_attempts < 4 && !b.bare {
            b.name_attempts += 1;
            let toks = &self.toks[b.open..];
            let reader = Reader::new(text, toks);
            let span = span_to(self.toks.len(), self.scanner.pos);
            if let (Some(index), Some(name)) = (b.index, reader.provisional_name(span)) {
                b.name_known = true;
                events.push(StreamEvent::NameKnown { index, name });
            }
        }
        self.block = Some(b);
        false
    }
}

/// Number the next call and announce it.
fn start_call(calls: &mut usize, events: &mut Vec<StreamEvent>) -> usize {
    let index = *calls;
    *calls += 1;
    events.push(StreamEvent::CallStarted { index });
    index
}
