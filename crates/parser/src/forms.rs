//! Tool calls written in the forms local model families are trained on, besides the
//! `<tool_call>` form [`parse`](crate::parse) reads: a JSON call object or list (alone, after
//! prose, or in a Markdown code fence), Llama 3.x's `<|python_tag|>` and pythonic list,
//! Mistral's `[TOOL_CALLS]`, LFM2's `<|tool_call_start|>`, FunctionGemma's (and Gemma 4's)
//! call blocks, the `<|tool_call|>` token of Granite 3.x and Phi-4-mini, and Phi-4-mini's
//! `functools[…]` list.
//!
//! The behaviour contract is `crates/parser/FORMS.md`; rule numbers (F1, F2, …) in the code
//! refer to it, and each form there cites the chat template or documentation it comes from.
//!
//! How it works, in one pass over the text (after reasoning is cut out, F1):
//! - the special-token forms (F3-F8) are found by their opening marker; each one's region runs
//!   to its closing marker, the next opening marker of its kind, an end-of-turn token or the
//!   end of the text, and is read by the form's own reader. A marker says a call was meant, so
//!   whatever the region holds comes back as calls or as malformed calls (F2). Phi-4-mini's
//!   `functools[` (F11) is a marker too, but only as a word followed by `[` (not
//!   `functools.partial`), and its region ends where its JSON list does;
//! - between markers, a line that starts with `{"name"`, `[{"name"` or `[name(` may open a
//!   JSON call or a pythonic list (F9, F10): without a marker, it is a call only when it names
//!   one of the agent's tools, so JSON data or a Python list that merely looks like one is left
//!   alone.
//!
//! The reader notes each stretch of text it read calls from, so [`strip_written_calls`] can
//! give an answer's text without them (and without a code fence that held only a call) when
//! its calls are sent as native tool calls.
//!
//! Every reader is a forward scan that never goes back further than where it started, and the
//! search for each closing marker only moves forward, so the whole reading is linear in the
//! text. JSON is read by the strict reader of rules 14-15 ([`super::json`]), and values become
//! parameters as they do there: strings their text, numbers as written, booleans
//! `"true"`/`"false"`, `null` (`None`) leaves the parameter out. An object or a list among the
//! values is its JSON text as `serde_json` writes it, as a native call's arguments give it
//! ([`crate::read_arguments`]): a pythonic list, tuple or dict and a Gemma list or object are
//! built as a `serde_json` value while they are read, a JSON one is converted
//! ([`json::to_serde`]).

use memchr::memmem;

use super::json::{self, Nested, Value};
use super::scan::is_valid_tool_name;
use super::{think, Params, ToolCall};

/// One call the reader found, with the tool a call that could not be read named (when it
/// named one), so the caller can add that tool's schema to the malformed call's error.
#[derive(Debug, Clone)]
pub struct WrittenCall {
    /// The call: a well-formed one, or a [`ToolCall::malformed`] with the reason.
    pub call: ToolCall,
    /// The tool the call names (for a malformed call too, when its name could be read).
    pub tool: Option<String>,
}

/// The calls written in `text` in any of the forms of FORMS.md, in order. `is_tool` says
/// whether a name is one of the agent's tools.
///
/// ```
/// use artifactflow_parser::read_written_calls;
/// let answer = "```json\n{\"name\": \"create_artifact\", \"arguments\": {\"id\": \"g\"}}\n```";
/// let calls = read_written_calls(answer, &|name| name == "create_artifact");
/// assert_eq!(calls[0].name, "create_artifact");
/// assert_eq!(calls[0].params["id"], "g");
/// assert!(read_written_calls("Use create_artifact to save it.", &|_| true).is_empty());
/// ```
pub fn read_written_calls(text: &str, is_tool: &dyn Fn(&str) -> bool) -> Vec<ToolCall> {
    read_written(text, is_tool)
        .into_iter()
        .map(|w| w.call)
        .collect()
}

/// [`read_written_calls`] with the tool each call names kept beside it.
pub fn read_written(text: &str, is_tool: &dyn Fn(&str) -> bool) -> Vec<WrittenCall> {
    let text = think::strip(text);
    let mut reader = Reader::new(&text, is_tool);
    reader.run();
    reader.out
}

/// `text` without the calls [`read_written`] reads in it: what an answer says besides its
/// calls, for a native rendering of the answer that sends its calls as data (the forms'
/// counterpart of [`strip_calls`](crate::strip_calls)). Like the reader, it works on the text
/// without its reasoning, so reasoning is left out too.
///
/// Each stretch of text the reader read calls from (a marker's region, a JSON call or list, a
/// pythonic list) is taken out when it holds at least one call that was read, together with a
/// Markdown code fence that holds nothing else; a stretch that only gave malformed calls stays,
/// as a broken `<tool_call>` does, so the model sees what it wrote beside the error.
///
/// ```
/// use artifactflow_parser::strip_written_calls;
/// let answer = "Saving it.\n```json\n{\"name\": \"create_artifact\", \"arguments\": {}}\n```\nDone.";
/// assert_eq!(
///     strip_written_calls(answer, &|name| name == "create_artifact"),
///     "Saving it.\nDone."
/// );
/// ```
pub fn strip_written_calls(text: &str, is_tool: &dyn Fn(&str) -> bool) -> String {
    let text = think::strip(text);
    let mut reader = Reader::new(&text, is_tool);
    reader.run();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (span, calls) in &reader.stretches {
        if reader.out[calls.clone()]
            .iter()
            .all(|w| w.call.is_malformed())
        {
            continue;
        }
        let span = in_fence(&text, span.clone());
        out.push_str(&text[at..span.start.max(at)]);
        at = span.end.max(at);
    }
    out.push_str(&text[at..]);
    out.trim().to_string()
}

/// `span` widened to the code fence around it when the fence holds nothing else: from the
/// start of the opening fence's line (three or more backticks and an optional language) to
/// the end of the closing fence's line.
fn in_fence(text: &str, span: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let before = &text[..span.start];
    let before = before.trim_end_matches([' ', '\t', '\r', '\n']);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let opening = before[line_start..].trim_start_matches([' ', '\t']);
    let ticks = opening.len() - opening.trim_start_matches('`').len();
    let language = &opening[ticks..];
    if ticks < 3
        || !language
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return span;
    }
    let after = &text[span.end..];
    let rest = after.trim_start_matches([' ', '\t', '\r', '\n']);
    if !rest.starts_with(&"`".repeat(ticks)) {
        return span;
    }
    let closing = &rest[ticks..];
    let line_end = closing.find('\n').map_or(closing.len(), |i| i + 1);
    if !closing[..line_end].trim().is_empty() {
        return span;
    }
    let end = text.len() - closing.len() + line_end;
    line_start..end
}

/// A special-token form: its opening marker and what ends its region.
struct Marker {
    open: &'static str,
    ends: &'static [&'static str],
    form: Form,
    /// For a marker that is an ordinary word (`functools`): the byte that must follow it
    /// (after whitespace), and it must not continue a word. `None`: the marker is a special
    /// token, an opening wherever it is.
    then: Option<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Form {
    /// F3: Llama 3.x `<|python_tag|>`.
    PythonTag,
    /// F4: Mistral `[TOOL_CALLS]`.
    Mistral,
    /// F5: LFM2 `<|tool_call_start|>`.
    Lfm2,
    /// F6: FunctionGemma `<start_function_call>`.
    FunctionGemma,
    /// F7: Gemma 4 `<|tool_call>`.
    Gemma4,
    /// F8: Granite 3.x and Phi-4-mini `<|tool_call|>`.
    ToolCallToken,
    /// F11: Phi-4-mini `functools[…]`.
    Functools,
    /// F9: a JSON call without a marker.
    Json,
    /// F10: a pythonic list without a marker.
    Pythonic,
}

const MARKERS: [Marker; 7] = [
    Marker {
        open: "<|python_tag|>",
        ends: &["<|eom_id|>", "<|eot_id|>"],
        form: Form::PythonTag,
        then: None,
    },
    Marker {
        open: "[TOOL_CALLS]",
        ends: &["</s>"],
        form: Form::Mistral,
        then: None,
    },
    Marker {
        open: "<|tool_call_start|>",
        ends: &["<|tool_call_end|>", "<|im_end|>"],
        form: Form::Lfm2,
        then: None,
    },
    Marker {
        open: "<start_function_call>",
        ends: &["<end_function_call>", "<end_of_turn>"],
        form: Form::FunctionGemma,
        then: None,
    },
    Marker {
        open: "<|tool_call>",
        ends: &["<tool_call|>", "<turn|>"],
        form: Form::Gemma4,
        then: None,
    },
    Marker {
        open: "<|tool_call|>",
        ends: &["<|/tool_call|>", "<|end_of_text|>", "<|end|>"],
        form: Form::ToolCallToken,
        then: None,
    },
    Marker {
        open: "functools",
        ends: &["<|end|>", "<|endoftext|>"],
        form: Form::Functools,
        then: Some(b'['),
    },
];

impl Form {
    /// How a call in this form is written, for the model told its call could not be read.
    fn example(self, tool: &str) -> String {
        let tool = if tool.is_empty() { "TOOL_NAME" } else { tool };
        match self {
            Form::PythonTag => {
                format!(r#"<|python_tag|>{{"name": "{tool}", "parameters": {{"param": "value"}}}}"#)
            }
            Form::Mistral => {
                format!(r#"[TOOL_CALLS][{{"name": "{tool}", "arguments": {{"param": "value"}}}}]"#)
            }
            Form::Lfm2 => format!(r#"<|tool_call_start|>[{tool}(param="value")]<|tool_call_end|>"#),
            Form::FunctionGemma => format!(
                "<start_function_call>call:{tool}{{param:<escape>value<escape>}}<end_function_call>"
            ),
            Form::Gemma4 => {
                format!(r#"<|tool_call>call:{tool}{{param:<|"|>value<|"|>}}<tool_call|>"#)
            }
            Form::ToolCallToken => {
                format!(r#"<|tool_call|>[{{"name": "{tool}", "arguments": {{"param": "value"}}}}]"#)
            }
            Form::Functools => {
                format!(r#"functools[{{"name": "{tool}", "arguments": {{"param": "value"}}}}]"#)
            }
            Form::Json => format!(r#"{{"name": "{tool}", "arguments": {{"param": "value"}}}}"#),
            Form::Pythonic => format!(r#"[{tool}(param="value")]"#),
        }
    }
}

/// The next occurrence of a needle at or after a position that only grows: each byte is
/// searched at most once, however often it is asked.
struct Next {
    needle: &'static str,
    /// A word marker's byte that must follow it (see [`Marker::then`]): occurrences without it
    /// are passed over.
    then: Option<u8>,
    /// The last answer: an occurrence at or after every position asked so far, or none.
    found: Option<Option<usize>>,
}

impl Next {
    fn new(needle: &'static str) -> Next {
        Next {
            needle,
            then: None,
            found: None,
        }
    }

    fn marker(marker: &Marker) -> Next {
        Next {
            then: marker.then,
            ..Next::new(marker.open)
        }
    }

    fn at_or_after(&mut self, text: &str, from: usize) -> Option<usize> {
        match self.found {
            Some(None) => return None,
            Some(Some(at)) if at >= from => return Some(at),
            _ => {}
        }
        let bytes = text.as_bytes();
        let mut from = from;
        let at = loop {
            let Some(at) = memmem::find(&bytes[from..], self.needle.as_bytes()).map(|i| from + i)
            else {
                break None;
            };
            let Some(then) = self.then else {
                break Some(at);
            };
            let after = skip_ws(bytes, at + self.needle.len(), bytes.len());
            let in_word =
                at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
            if !in_word && bytes.get(after) == Some(&then) {
                break Some(at);
            }
            from = at + self.needle.len();
        };
        self.found = Some(at);
        at
    }
}

struct Reader<'a> {
    text: &'a str,
    is_tool: &'a dyn Fn(&str) -> bool,
    out: Vec<WrittenCall>,
    /// Each stretch of text calls were read from, with the indices in `out` of its calls.
    stretches: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// Where each marker of [`MARKERS`] next opens.
    finders: Vec<Next>,
    /// Where each end of each marker next occurs (made on first use).
    ends: Vec<Vec<Next>>,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, is_tool: &'a dyn Fn(&str) -> bool) -> Self {
        Reader {
            text,
            is_tool,
            out: Vec::new(),
            stretches: Vec::new(),
            finders: MARKERS.iter().map(Next::marker).collect(),
            ends: Vec::new(),
        }
    }

    /// Note that `text[span]` gave the calls `out[found..]` (when it gave any).
    fn stretch(&mut self, span: std::ops::Range<usize>, found: usize) {
        if self.out.len() > found {
            // A stretch ends where its last call does, not at the space after it.
            let mut end = span.end.min(self.text.len());
            while !self.text.is_char_boundary(end) {
                end += 1;
            }
            let end = span.start + self.text[span.start..end].trim_end().len();
            self.stretches
                .push((span.start..end.max(span.start), found..self.out.len()));
        }
    }

    fn run(&mut self) {
        let len = self.text.len();
        let mut at = 0;
        while at < len {
            // The nearest marker (ties: the longer marker, listed first where it matters).
            let mut next: Option<(usize, usize)> = None;
            for (k, finder) in self.finders.iter_mut().enumerate() {
                if let Some(p) = finder.at_or_after(self.text, at) {
                    if next.is_none_or(|(q, _)| p < q) {
                        next = Some((p, k));
                    }
                }
            }
            let upto = next.map_or(len, |(p, _)| p);
            at = self.lines(at, upto);
            if at < upto {
                continue;
            }
            let Some((p, k)) = next else { break };
            at = self.marked(p, k);
        }
    }

    /// F9-F10 on the lines of `text[from..upto]`: returns where reading stopped (`upto` when
    /// no call starts before it; else just after the call or its error).
    fn lines(&mut self, from: usize, upto: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut line = from;
        // `from` is a line start when it is the text's start or follows a line break or a
        // marker region (a call right after a region's end counts as starting a line).
        while line < upto {
            let mut i = line;
            // Blanks: spaces, tabs, and a carriage return (of a CRLF line end, or alone).
            while i < upto && matches!(bytes[i], b' ' | b'\t' | b'\r') {
                i += 1;
            }
            if i < upto {
                if let Some(form) = candidate(&bytes[i..upto]) {
                    let found = self.out.len();
                    let stop = match form {
                        Form::Json => self.json_calls(i, upto, Form::Json),
                        _ => self.pythonic(i, upto, Form::Pythonic),
                    };
                    self.stretch(i..stop, found);
                    return stop.max(i + 1);
                }
            }
            line = match memchr::memchr(b'\n', &bytes[i..upto]) {
                Some(k) => i + k + 1,
                None => upto,
            };
        }
        upto
    }

    /// A marker region (F2-F8) opening at `p`: returns where reading goes on.
    fn marked(&mut self, p: usize, k: usize) -> usize {
        let marker = &MARKERS[k];
        let start = p + marker.open.len();
        if self.ends.is_empty() {
            self.ends = MARKERS
                .iter()
                .map(|m| m.ends.iter().map(|e| Next::new(e)).collect())
                .collect();
        }
        // The region ends at the first end marker, or where the next call of the same form
        // opens, or at the end of the text.
        let mut end = self.finders[k]
            .at_or_after(self.text, start)
            .unwrap_or(self.text.len());
        let mut after = end;
        for finder in &mut self.ends[k] {
            if let Some(e) = finder.at_or_after(self.text, start) {
                if e < end {
                    end = e;
                    after = e + finder.needle.len();
                }
            }
        }
        let found = self.out.len();
        match marker.form {
            Form::PythonTag | Form::Lfm2 => {
                let i = skip_ws(self.text.as_bytes(), start, end);
                if self.text.as_bytes().get(i) == Some(&b'{') || is_json_list(&self.text[i..end]) {
                    self.json_calls(i, end, marker.form);
                } else {
                    self.pythonic(i, end, marker.form);
                }
            }
            Form::Mistral => self.mistral(start, end),
            Form::FunctionGemma => self.gemma(start, end, "<escape>", Form::FunctionGemma),
            Form::Gemma4 => self.gemma(start, end, "<|\"|>", Form::Gemma4),
            Form::ToolCallToken => {
                self.json_calls(start, end, marker.form);
            }
            Form::Functools => {
                // The region ends with the list (and an end-of-turn token right after it):
                // no closing marker is written, and text after the list is prose.
                let list = skip_ws(self.text.as_bytes(), start, end);
                if let Some(stop) = self.functools(list, end) {
                    let next = skip_ws(self.text.as_bytes(), stop, end);
                    after = match marker
                        .ends
                        .iter()
                        .find(|e| self.text[next..].starts_with(*e))
                    {
                        Some(e) => next + e.len(),
                        None => stop,
                    };
                }
            }
            Form::Json | Form::Pythonic => unreachable!("not a marker form"),
        }
        self.stretch(p..after, found);
        if self.out.len() == found {
            // F2: a marker with nothing readable after it is a call that could not be read.
            self.malformed(
                None,
                format!(
                    "a tool call was opened with {} but no call follows it",
                    marker.open
                ),
                marker.form,
            );
        }
        after
    }

    fn push(&mut self, name: String, params: Params) {
        self.out.push(WrittenCall {
            call: ToolCall::new(name.clone(), params),
            tool: Some(name),
        });
    }

    fn malformed(&mut self, tool: Option<&str>, why: String, form: Form) {
        let example = form.example(tool.unwrap_or(""));
        let error = match tool {
            Some(tool) => {
                format!(
                    "your call to `{tool}` could not be read: {why}. Write it like this: {example}"
                )
            }
            None => {
                format!("your tool call could not be read: {why}. Write it like this: {example}")
            }
        };
        self.out.push(WrittenCall {
            call: ToolCall::malformed(error),
            tool: tool.map(str::to_string),
        });
    }

    /// One call given by name and arguments: read when it names a tool; an unknown name is
    /// left alone without a marker (F9-F10) and reported with one (F2).
    fn named(&mut self, name: &str, args: Result<Params, String>, form: Form) {
        let marked = !matches!(form, Form::Json | Form::Pythonic);
        if !(self.is_tool)(name) {
            if marked {
                let why = if is_valid_tool_name(name) {
                    format!("`{name}` is not one of your tools")
                } else {
                    format!("`{name}` is not a valid tool name")
                };
                self.malformed(None, why, form);
            }
            return;
        }
        match args {
            Ok(params) => self.push(name.to_string(), params),
            Err(why) => self.malformed(Some(name), why, form),
        }
    }

    /// JSON calls (F3, F4, F5, F8, F9) from `from`: one call object, a list of them, or several
    /// separated by `;` or `,`. Returns where reading stopped.
    fn json_calls(&mut self, from: usize, end: usize, form: Form) -> usize {
        let bytes = self.text.as_bytes();
        let marked = form != Form::Json;
        let mut at = skip_ws(bytes, from, end);
        let mut first = true;
        loop {
            if !first {
                let sep = skip_ws(bytes, at, end);
                if sep < end && matches!(bytes[sep], b';' | b',') {
                    at = skip_ws(bytes, sep + 1, end);
                } else {
                    at = sep;
                }
            }
            if at >= end || !matches!(bytes[at], b'{' | b'[') {
                return at;
            }
            if !first && !marked && candidate(&bytes[at..end]).is_none() {
                return at;
            }
            first = false;
            match json::parse_prefix(&self.text[at..end]) {
                Ok((value, used)) => {
                    if !self.json_value(value, form) {
                        return at + used;
                    }
                    at += used;
                }
                Err((why, stopped)) => {
                    let name = broken_call_name(&self.text[at..end]);
                    let known = name.as_deref().filter(|n| (self.is_tool)(n));
                    if marked || known.is_some() {
                        self.malformed(known, format!("the JSON is not valid ({why})"), form);
                    }
                    return at + stopped.max(1);
                }
            }
        }
    }

    /// F11: Phi-4-mini's JSON list of calls from `from` (its `[`) to at most `end`. Returns
    /// where the list ends when it could be read as JSON (its calls are read or reported as
    /// [`Self::json_value`] does); a list that is not valid JSON is a malformed call.
    fn functools(&mut self, from: usize, end: usize) -> Option<usize> {
        match json::parse_prefix(&self.text[from..end]) {
            Ok((value, used)) => {
                self.json_value(value, Form::Functools);
                Some(from + used)
            }
            Err((why, _)) => {
                let name = broken_call_name(&self.text[from..end]);
                let known = name.as_deref().filter(|n| (self.is_tool)(n));
                self.malformed(
                    known,
                    format!("the JSON is not valid ({why})"),
                    Form::Functools,
                );
                None
            }
        }
    }

    /// A JSON value read as call(s). False when it is not call-shaped (F9: not a call; with a
    /// marker: reported).
    fn json_value(&mut self, value: Value<'_>, form: Form) -> bool {
        let marked = form != Form::Json;
        match value {
            Value::Obj(members) => {
                if !call_shaped(&members, marked) {
                    if marked {
                        self.malformed(
                            None,
                            "the JSON object is not a call (a call has \"name\" and \"arguments\")"
                                .into(),
                            form,
                        );
                    }
                    return false;
                }
                self.json_call(members, form);
                true
            }
            Value::Arr(items) => {
                let shaped = items
                    .iter()
                    .all(|v| matches!(v, Value::Obj(m) if call_shaped(m, marked)));
                if !shaped {
                    if marked {
                        self.malformed(None, "the list holds something that is not a call (a call has \"name\" and \"arguments\")".into(), form);
                    }
                    return false;
                }
                for item in items {
                    if let Value::Obj(members) = item {
                        self.json_call(members, form);
                    }
                }
                true
            }
            other => {
                if marked {
                    self.malformed(
                        None,
                        format!("expected a call object, found {}", other.kind()),
                        form,
                    );
                }
                false
            }
        }
    }

    fn json_call(&mut self, members: Vec<(String, Value<'_>)>, form: Form) {
        let name = members
            .iter()
            .rev()
            .find_map(|(k, v)| match (k.as_str(), v) {
                ("name", Value::Str(s)) => Some(s.clone()),
                _ => None,
            });
        let Some(name) = name else {
            // Only with a marker: without one, the shape check wants a string name.
            self.malformed(None, "the call's \"name\" is not a string".into(), form);
            return;
        };
        let args = json::call_value_with(Value::Obj(members), Nested::AsJsonText)
            .map(|(_, params)| params);
        self.named(&name, args, form);
    }

    /// Pythonic calls (F3, F5, F10): `[f(a=1), g()]`, or after `<|python_tag|>` also a bare
    /// `f(a=1)` (or `f.call(a=1)`). Returns where reading stopped.
    fn pythonic(&mut self, from: usize, end: usize, form: Form) -> usize {
        let mut py = Py {
            s: self.text.as_bytes(),
            text: self.text,
            i: skip_ws(self.text.as_bytes(), from, end),
            end,
        };
        let listed = py.peek() == Some(b'[');
        if listed {
            py.i += 1;
        } else if form != Form::PythonTag {
            return py.i;
        }
        loop {
            py.ws();
            if listed && py.peek() == Some(b']') {
                py.i += 1;
                return py.i;
            }
            let name_at = py.i;
            let name = py.name();
            if name.is_empty() {
                self.py_error(
                    None,
                    py.error("expected a call like name(param=value)"),
                    form,
                );
                return py.i.max(from + 1);
            }
            let name = if !(self.is_tool)(name) && name.ends_with(".call") {
                // Llama 3.1's built-in tool form `brave_search.call(query="x")`.
                &name[..name.len() - ".call".len()]
            } else {
                name
            };
            py.ws();
            if py.peek() != Some(b'(') {
                self.py_error(
                    Some(name),
                    py.error("expected `(` after the tool name"),
                    form,
                );
                return py.i.max(name_at + 1);
            }
            py.i += 1;
            match py.arguments() {
                Ok(args) => self.named(name, args, form),
                Err(why) => {
                    self.py_error(Some(name), why, form);
                    return py.i.max(name_at + 1);
                }
            }
            py.ws();
            match py.peek() {
                Some(b',' | b';') => py.i += 1,
                Some(b']') if listed => {
                    py.i += 1;
                    return py.i;
                }
                None if !listed => return py.i,
                _ if !listed => return py.i,
                _ => {
                    self.py_error(
                        Some(name),
                        py.error("expected `,` or `]` after a call"),
                        form,
                    );
                    return py.i;
                }
            }
        }
    }

    /// A pythonic call that could not be read: reported when it names a tool or has a marker.
    fn py_error(&mut self, name: Option<&str>, why: String, form: Form) {
        let known = name.filter(|n| (self.is_tool)(n));
        if known.is_some() || form != Form::Pythonic {
            self.malformed(known, why, form);
        }
    }

    /// F4: `[TOOL_CALLS]` then a JSON list (v3), or `name[ARGS]{…}` (optionally with
    /// `[CALL_ID]id` before `[ARGS]`).
    fn mistral(&mut self, start: usize, end: usize) {
        let bytes = self.text.as_bytes();
        let i = skip_ws(bytes, start, end);
        if i < end && matches!(bytes[i], b'[' | b'{') {
            self.json_calls(i, end, Form::Mistral);
            return;
        }
        let region = &self.text[i..end];
        let Some(args_at) = region.find("[ARGS]") else {
            let name = region.split(['[', '{', ' ', '\n']).next().unwrap_or("");
            let known = Some(name).filter(|n| (self.is_tool)(n));
            self.malformed(
                known,
                "the call has no [ARGS] and no JSON list after [TOOL_CALLS]".into(),
                Form::Mistral,
            );
            return;
        };
        let head = &region[..args_at];
        let name = head.split("[CALL_ID]").next().unwrap_or("").trim();
        let body = &region[args_at + "[ARGS]".len()..];
        let args = match json::parse_prefix(body) {
            Ok((value @ (Value::Obj(_) | Value::Str(_)), _)) => json::call_value_with(
                Value::Obj(vec![
                    ("name".into(), Value::Str(name.to_string())),
                    ("arguments".into(), value),
                ]),
                Nested::AsJsonText,
            )
            .map(|(_, params)| params),
            Ok((other, _)) => Err(format!("the arguments are {}, not an object", other.kind())),
            Err((why, _)) => Err(format!("the JSON is not valid ({why})")),
        };
        self.named(name, args, Form::Mistral);
    }

    /// F6-F7: `call:name{key:<escape>text<escape>,n:1}`, the string quote being `<escape>`
    /// (FunctionGemma) or `<|"|>` (Gemma 4).
    fn gemma(&mut self, start: usize, end: usize, quote: &str, form: Form) {
        let region = self.text[start..end].trim();
        let region = region.strip_prefix("call:").unwrap_or(region);
        let name_end = region
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
            .unwrap_or(region.len());
        let name = &region[..name_end];
        let rest = region[name_end..].trim_start();
        let Some(body) = rest.strip_prefix('{') else {
            let known = Some(name).filter(|n| (self.is_tool)(n));
            self.malformed(known, "expected `{` after the tool name".into(), form);
            return;
        };
        let args = gemma_arguments(body, quote);
        self.named(name, args, form);
    }
}

/// The arguments of a Gemma call after its `{`, up to the matching `}`.
fn gemma_arguments(body: &str, quote: &str) -> Result<Params, String> {
    let mut params = Params::new();
    let mut rest = body;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix('}') {
            let _ = after;
            return Ok(params);
        }
        if rest.is_empty() {
            return Err("the arguments are cut off (no closing `}`)".into());
        }
        let Some(colon) = rest.find(':') else {
            return Err("expected `key:value` in the arguments".into());
        };
        let key = rest[..colon].trim();
        let key = key
            .strip_prefix(quote)
            .and_then(|k| k.strip_suffix(quote))
            .unwrap_or(key);
        if key.is_empty() || key.contains(['{', '}', ',', '<', '>']) {
            return Err(format!("`{key}` is not a parameter name"));
        }
        rest = rest[colon + 1..].trim_start();
        let value = if let Some(after) = rest.strip_prefix(quote) {
            let Some(close) = after.find(quote) else {
                return Err(format!("the text of `{key}` is not closed with {quote}"));
            };
            rest = &after[close + quote.len()..];
            Some(after[..close].to_string())
        } else if rest.starts_with(['{', '[']) {
            let (value, after) = gemma_nested(rest, quote, 1)
                .map_err(|why| format!("the value of `{key}` cannot be read: {why}"))?;
            rest = after;
            Some(value.to_string())
        } else {
            let stop = rest.find([',', '}']).unwrap_or(rest.len());
            let raw = rest[..stop].trim();
            rest = &rest[stop..];
            match raw {
                "null" | "None" => None,
                "True" => Some("true".to_string()),
                "False" => Some("false".to_string()),
                _ => Some(raw.to_string()),
            }
        };
        match value {
            Some(v) => {
                params.insert(key.to_string(), v);
            }
            None => {
                params.shift_remove(key);
            }
        }
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        } else if !rest.starts_with('}') {
            return Err(if rest.is_empty() {
                "the arguments are cut off (no closing `}`)".into()
            } else {
                format!("expected `,` or `}}` after the value of `{key}`")
            });
        }
    }
}

/// A Gemma list `[v,…]` or object `{key:v,…}` (or a value inside one) at the start of `rest`
/// (F6-F7, the templates' `format_argument`), as JSON, and the text after it. Strings are
/// enclosed in `quote`; keys are bare or enclosed in `quote`; a bare value is `true`, `false`,
/// `null` (`True`, `False`, `None`), a JSON number, or else its own text.
fn gemma_nested<'t>(
    rest: &'t str,
    quote: &str,
    depth: usize,
) -> Result<(serde_json::Value, &'t str), String> {
    if depth > MAX_DEPTH {
        return Err(format!("the arguments nest deeper than {MAX_DEPTH} levels"));
    }
    const CUT: &str = "the arguments are cut off (a list or object is not closed)";
    if let Some(after) = rest.strip_prefix(quote) {
        let close = after
            .find(quote)
            .ok_or_else(|| format!("a text is not closed with {quote}"))?;
        let text = serde_json::Value::String(after[..close].to_string());
        return Ok((text, &after[close + quote.len()..]));
    }
    let (close, object) = match rest.as_bytes().first() {
        Some(b'[') => (']', false),
        Some(b'{') => ('}', true),
        _ => {
            let stop = rest.find([',', '}', ']']).unwrap_or(rest.len());
            let value = match rest[..stop].trim() {
                "" => return Err("expected a value".into()),
                "true" | "True" => serde_json::Value::Bool(true),
                "false" | "False" => serde_json::Value::Bool(false),
                "null" | "None" => serde_json::Value::Null,
                raw => serde_json::from_str::<serde_json::Number>(raw)
                    .map(serde_json::Value::Number)
                    .unwrap_or_else(|_| serde_json::Value::String(raw.to_string())),
            };
            return Ok((value, &rest[stop..]));
        }
    };
    let mut rest = &rest[1..];
    let mut items = Vec::new();
    let mut members = serde_json::Map::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(close) {
            let value = if object {
                serde_json::Value::Object(members)
            } else {
                serde_json::Value::Array(items)
            };
            return Ok((value, after));
        }
        if rest.is_empty() {
            return Err(CUT.into());
        }
        if object {
            let colon = rest.find(':').ok_or(CUT)?;
            let key = rest[..colon].trim();
            let key = key
                .strip_prefix(quote)
                .and_then(|k| k.strip_suffix(quote))
                .unwrap_or(key);
            if key.is_empty() || key.contains(['{', '}', '[', ']', ',', '<', '>']) {
                return Err(format!("`{key}` is not a key"));
            }
            let (value, after) = gemma_nested(rest[colon + 1..].trim_start(), quote, depth + 1)?;
            members.insert(key.to_string(), value);
            rest = after;
        } else {
            let (value, after) = gemma_nested(rest, quote, depth + 1)?;
            items.push(value);
            rest = after;
        }
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        } else if rest.is_empty() {
            return Err(CUT.into());
        } else if !rest.starts_with(close) {
            return Err(format!("expected `,` or `{close}`"));
        }
    }
}

/// F9-F10: does a line's text (from its first non-blank character) open a call without a
/// marker? `{` `"name"`, `[` `{` `"name"` (whitespace between allowed) or `[` name `(`.
fn candidate(s: &[u8]) -> Option<Form> {
    let after = |i: usize| {
        let mut j = i;
        while j < s.len() && is_json_ws(s[j]) {
            j += 1;
        }
        j
    };
    match s.first()? {
        b'{' => s[after(1)..].starts_with(b"\"name\"").then_some(Form::Json),
        b'[' => {
            let j = after(1);
            if s.get(j) == Some(&b'{') {
                return s[after(j + 1)..]
                    .starts_with(b"\"name\"")
                    .then_some(Form::Json);
            }
            let k = j + s[j..].iter().take_while(|&&b| is_name_byte(b)).count();
            let starts_like_a_name = k > j && (s[j].is_ascii_alphabetic() || s[j] == b'_');
            (starts_like_a_name && s.get(after(k)) == Some(&b'(')).then_some(Form::Pythonic)
        }
        _ => None,
    }
}

/// Does `s` start (after whitespace) with a JSON list of objects (`[` then `{`)?
fn is_json_list(s: &str) -> bool {
    let b = s.trim_start().as_bytes();
    b.first() == Some(&b'[') && s.trim_start()[1..].trim_start().starts_with('{')
}

/// F9: a call object is `"name"` plus `"arguments"` or `"parameters"`, and nothing but `"id"`,
/// `"type"` and `"call_id"` besides; with a marker, the arguments may be missing and other
/// members are ignored.
fn call_shaped(members: &[(String, Value<'_>)], marked: bool) -> bool {
    let has = |key: &str| members.iter().any(|(k, _)| k == key);
    if marked {
        return has("name");
    }
    let name_is_text = members
        .iter()
        .any(|(k, v)| k == "name" && matches!(v, Value::Str(_)));
    name_is_text
        && (has("arguments") || has("parameters"))
        && members.iter().all(|(k, _)| {
            matches!(
                k.as_str(),
                "name" | "arguments" | "parameters" | "id" | "type" | "call_id"
            )
        })
}

/// The name a broken JSON call gives (`{"name": "x", …` or `[{"name": "x", …`), if any.
fn broken_call_name(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let skip = |mut i: usize| {
        while i < b.len() && is_json_ws(b[i]) {
            i += 1;
        }
        i
    };
    let mut i = skip(0);
    if b.get(i) == Some(&b'[') {
        i = skip(i + 1);
    }
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip(i + 1);
    if !s[i..].starts_with("\"name\"") {
        return None;
    }
    i = skip(i + "\"name\"".len());
    if b.get(i) != Some(&b':') {
        return None;
    }
    i = skip(i + 1);
    json::string_prefix(&s[i..]).map(|(name, _)| name)
}

fn is_json_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':')
}

fn skip_ws(bytes: &[u8], mut i: usize, end: usize) -> usize {
    while i < end && is_json_ws(bytes[i]) {
        i += 1;
    }
    i
}

/// Deepest nesting of Python values followed (deeper is refused).
const MAX_DEPTH: usize = 64;

/// A Python value as far as a call's argument needs it.
enum PyValue {
    /// A string's text.
    Str(String),
    /// A number, as written.
    Num(String),
    Bool(bool),
    None,
    /// A list, tuple or dict, as JSON (True/False/None inside as true/false/null).
    Nested(serde_json::Value),
    /// A value JSON cannot hold (a tuple as a dict key, `-inf`), and why.
    Invalid(String),
}

impl PyValue {
    /// The value inside a list, tuple or dict, as JSON.
    fn into_json(self) -> Result<serde_json::Value, String> {
        Ok(match self {
            PyValue::Str(s) => serde_json::Value::String(s),
            PyValue::Num(n) => serde_json::Value::Number(json_number(&n)?),
            PyValue::Bool(b) => serde_json::Value::Bool(b),
            PyValue::None => serde_json::Value::Null,
            PyValue::Nested(v) => v,
            PyValue::Invalid(why) => return Err(why),
        })
    }

    /// The value as a dict key, as Python's `json.dumps` writes it (text, a number as
    /// written, `true`, `false`, `null`); a list, tuple or dict cannot be one.
    fn into_key(self) -> Result<String, String> {
        match self {
            PyValue::Str(s) | PyValue::Num(s) => Ok(s),
            PyValue::Bool(b) => Ok(b.to_string()),
            PyValue::None => Ok("null".into()),
            PyValue::Nested(_) => {
                Err("a dict key is a list, tuple or dict, which JSON cannot hold".into())
            }
            PyValue::Invalid(why) => Err(why),
        }
    }
}

/// A Python number literal as a JSON number, in `serde_json`'s spelling (as a native call's
/// arguments give it): `+1`, `.5` and `5.` are read as Python reads them; `inf` and `nan`
/// have no JSON spelling.
fn json_number(literal: &str) -> Result<serde_json::Number, String> {
    if let Ok(number) = serde_json::from_str::<serde_json::Number>(literal) {
        return Ok(number);
    }
    let unsigned = literal.strip_prefix('+').unwrap_or(literal);
    if let Ok(n) = unsigned.parse::<i64>() {
        return Ok(n.into());
    }
    unsigned
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .ok_or_else(|| format!("the number `{literal}` has no JSON spelling"))
}

/// A reader of pythonic calls' arguments over `s[i..end]`.
struct Py<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    end: usize,
}

impl<'a> Py<'a> {
    fn peek(&self) -> Option<u8> {
        (self.i < self.end).then(|| self.s[self.i])
    }

    fn ws(&mut self) {
        while self.i < self.end && is_json_ws(self.s[self.i]) {
            self.i += 1;
        }
    }

    fn error(&self, what: &str) -> String {
        match self.peek() {
            None => format!("{what}, but the call ends there (cut off?)"),
            Some(_) => {
                let near: String = self.text[self.i..self.end].chars().take(12).collect();
                format!("{what}, found `{near}`")
            }
        }
    }

    /// A tool name: letters, digits, `_ - . :`.
    fn name(&mut self) -> &'a str {
        let start = self.i;
        while self.i < self.end && is_name_byte(self.s[self.i]) {
            self.i += 1;
        }
        &self.text[start..self.i]
    }

    /// `a=1, b="x")` (the `(` read): the parameters, or why not.
    fn arguments(&mut self) -> Result<Result<Params, String>, String> {
        let mut params = Params::new();
        let mut problem: Option<String> = None;
        loop {
            self.ws();
            if self.peek() == Some(b')') {
                self.i += 1;
                return Ok(match problem {
                    Some(p) => Err(p),
                    None => Ok(params),
                });
            }
            let key_at = self.i;
            while self.i < self.end
                && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
            {
                self.i += 1;
            }
            let key = &self.text[key_at..self.i];
            self.ws();
            if key.is_empty() || self.peek() != Some(b'=') {
                self.i = key_at;
                return Err(self.error("expected `param=value` (every argument needs its name)"));
            }
            self.i += 1;
            self.ws();
            let text = match self.value(0)? {
                PyValue::Str(s) | PyValue::Num(s) => Some(s),
                PyValue::Bool(b) => Some(b.to_string()),
                PyValue::None => None,
                PyValue::Nested(v) => Some(v.to_string()),
                PyValue::Invalid(why) => {
                    problem.get_or_insert(format!("parameter `{key}` cannot be read: {why}"));
                    None
                }
            };
            match text {
                Some(text) => {
                    params.insert(key.to_string(), text);
                }
                None => {
                    params.shift_remove(key);
                }
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b')') => {}
                _ => return Err(self.error("expected `,` or `)` after a value")),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<PyValue, String> {
        if depth > MAX_DEPTH {
            return Err(format!("the arguments nest deeper than {MAX_DEPTH} levels"));
        }
        match self.peek() {
            None => Err(self.error("expected a value")),
            Some(q @ (b'"' | b'\'')) => self.string(q).map(PyValue::Str),
            Some(open @ (b'[' | b'(' | b'{')) => {
                let close = match open {
                    b'[' => b']',
                    b'(' => b')',
                    _ => b'}',
                };
                self.i += 1;
                // The first value JSON cannot hold; reading goes on to the closing bracket.
                let mut invalid: Option<String> = None;
                let mut items = Vec::new();
                let mut members = serde_json::Map::new();
                loop {
                    self.ws();
                    if self.peek() == Some(close) {
                        self.i += 1;
                        return Ok(match invalid {
                            Some(why) => PyValue::Invalid(why),
                            None if open == b'{' => {
                                PyValue::Nested(serde_json::Value::Object(members))
                            }
                            None => PyValue::Nested(serde_json::Value::Array(items)),
                        });
                    }
                    let item = self.value(depth + 1)?;
                    self.ws();
                    if open == b'{' {
                        if self.peek() != Some(b':') {
                            return Err(self.error("expected `:` in a dict"));
                        }
                        self.i += 1;
                        self.ws();
                        let value = self.value(depth + 1)?;
                        self.ws();
                        match (item.into_key(), value.into_json()) {
                            (Ok(key), Ok(value)) => {
                                members.insert(key, value);
                            }
                            (Err(why), _) | (_, Err(why)) => {
                                invalid.get_or_insert(why);
                            }
                        }
                    } else {
                        match item.into_json() {
                            Ok(value) => items.push(value),
                            Err(why) => {
                                invalid.get_or_insert(why);
                            }
                        }
                    }
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(c) if c == close => {}
                        _ => return Err(self.error("expected `,` or a closing bracket")),
                    }
                }
            }
            Some(c) if c == b'-' || c == b'+' || c == b'.' || c.is_ascii_digit() => {
                let start = self.i;
                while self.i < self.end
                    && (self.s[self.i].is_ascii_alphanumeric()
                        || matches!(self.s[self.i], b'.' | b'-' | b'+' | b'_'))
                {
                    self.i += 1;
                }
                let literal = &self.text[start..self.i];
                if literal.parse::<f64>().is_ok() || literal.parse::<i128>().is_ok() {
                    Ok(PyValue::Num(literal.to_string()))
                } else {
                    self.i = start;
                    Err(self.error("expected a number"))
                }
            }
            Some(_) => {
                let start = self.i;
                while self.i < self.end
                    && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
                {
                    self.i += 1;
                }
                match &self.text[start..self.i] {
                    "True" | "true" => Ok(PyValue::Bool(true)),
                    "False" | "false" => Ok(PyValue::Bool(false)),
                    "None" | "null" => Ok(PyValue::None),
                    _ => {
                        self.i = start;
                        Err(self.error("expected a value (text needs quotes)"))
                    }
                }
            }
        }
    }

    /// A Python string in `quote`, decoded.
    fn string(&mut self, quote: u8) -> Result<String, String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while self.i < self.end && self.s[self.i] != quote && self.s[self.i] != b'\\' {
                self.i += 1;
            }
            out.push_str(&self.text[start..self.i]);
            match self.peek() {
                None => return Err(self.error("a string is not closed")),
                Some(b'\\') => {
                    self.i += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error("a string is not closed"));
                    };
                    self.i += 1;
                    match e {
                        b'n' => out.push('\n'),
                        b't' => out.push('\t'),
                        b'r' => out.push('\r'),
                        b'a' => out.push('\u{7}'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'v' => out.push('\u{b}'),
                        b'0'..=b'7' => {
                            // An octal escape: one to three digits.
                            let mut code = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        code = code * 8 + u32::from(d - b'0');
                                        self.i += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        b'\\' | b'\'' | b'"' => out.push(e as char),
                        b'\n' => {}
                        b'u' | b'U' | b'x' => {
                            let n = match e {
                                b'u' => 4,
                                b'U' => 8,
                                _ => 2,
                            };
                            let digits = self.text.get(self.i..self.i + n).unwrap_or("");
                            let code = u32::from_str_radix(digits, 16)
                                .ok()
                                .filter(|_| digits.bytes().all(|b| b.is_ascii_hexdigit()))
                                .and_then(char::from_u32);
                            match code {
                                Some(c) if self.i + n <= self.end => {
                                    out.push(c);
                                    self.i += n;
                                }
                                _ => return Err(self.error("a bad escape in a string")),
                            }
                        }
                        _ => {
                            // Python keeps an unknown escape as written.
                            out.push('\\');
                            self.i -= 1;
                        }
                    }
                }
                Some(_) => {
                    self.i += 1;
                    return Ok(out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(name: &str) -> bool {
        matches!(name, "create_artifact" | "web_search" | "get_time")
    }

    fn read(text: &str) -> Vec<(String, Vec<(String, String)>)> {
        read_written_calls(text, &tools)
            .into_iter()
            .map(|c| {
                let name = if c.is_malformed() {
                    format!("!{}", c.error.unwrap())
                } else {
                    c.name
                };
                (name, c.params.into_iter().collect())
            })
            .collect()
    }

    fn p(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn pythonic_values() {
        let got = read(r#"[web_search(query='it\'s "x"', n=3, fresh=True, skip=None, f=-1.5e3)]"#);
        assert_eq!(
            got,
            [(
                "web_search".to_string(),
                p(&[
                    ("query", "it's \"x\""),
                    ("n", "3"),
                    ("fresh", "true"),
                    ("f", "-1.5e3")
                ])
            )]
        );
        let got = read(r#"[web_search(query=["a", ('b', 1.50)], f={1: None, 'x': +.5})]"#);
        assert_eq!(
            got,
            [(
                "web_search".to_string(),
                p(&[
                    ("query", r#"["a",["b",1.5]]"#),
                    ("f", r#"{"1":null,"x":0.5}"#)
                ])
            )]
        );
        let got = read(r#"[web_search(query=[-inf], n=1), get_time()]"#);
        assert!(
            got[0]
                .0
                .contains("`query` cannot be read: the number `-inf` has no JSON spelling"),
            "{got:?}"
        );
        assert_eq!(got[1].0, "get_time");
        assert!(read("[print(x=1)]").is_empty());
    }

    #[test]
    fn gemma_values() {
        let got = read("<start_function_call>call:web_search{n:3,query:<escape>a, {b}<escape>,x:null}<end_function_call>");
        assert_eq!(
            got,
            [(
                "web_search".to_string(),
                p(&[("n", "3"), ("query", "a, {b}")])
            )]
        );
    }

    #[test]
    fn gemma_nested_values() {
        let got = read("<start_function_call>call:web_search{q:[1,<escape>a]b<escape>,{k:x y}],n:3}<end_function_call>");
        assert_eq!(
            got,
            [(
                "web_search".to_string(),
                p(&[("q", r#"[1,"a]b",{"k":"x y"}]"#), ("n", "3")])
            )]
        );
        for (broken, why) in [
            ("{q:[1,2}", "expected `,` or `]`"),
            ("{q:[[1]x]}", "expected `,` or `]`"),
            ("{q:{[a]:1}}", "is not a key"),
            ("{q:[<escape>a<escape>", "cut off"),
        ] {
            let got = read(&format!("<start_function_call>call:web_search{broken}"));
            assert!(got[0].0.contains(why), "{broken}: {got:?}");
        }
    }

    #[test]
    fn broken_json_call_names_its_tool() {
        let got = read("{\"name\": \"web_search\", \"arguments\": {\"query\": \"x\"");
        assert!(
            got[0].0.starts_with("!your call to `web_search`"),
            "{got:?}"
        );
        assert!(read("{\"name\": \"other\", \"arguments\": {").is_empty());
    }
}
