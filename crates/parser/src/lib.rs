//! The tolerant `<tool_call>` parser, the tool-result formatter and the tool-instruction
//! generator.
//!
//! # Parsing
//!
//! [`parse`] takes one complete model response and returns its tool calls in order, following
//! the behaviour contract `corpus/RULES.md` exactly (rule numbers in the code refer to it). A
//! call block that cannot be recovered comes back in its place as a [`ToolCall`] named
//! [`MALFORMED`] with an error written for the model; a call is never dropped silently, and no
//! input makes the parser panic.
//!
//! How it works, in passes that are each linear in the input:
//! 1. [`think`]: reasoning regions are cut out (rule 1).
//! 2. [`scan`]: the rest is tokenized into tags, closing tags, CDATA sections and `<name=x>`
//!    forms; everything else is text. Unterminated CDATA follows D5.
//! 3. [`blocks`]: `<tool_call>` blocks and bare `<tool><params>` calls are located (rules 2, 4).
//! 4. [`call`]: each block is read — standard layout first, then the repairs of the seed's
//!    table where the standard layout does not fit (name as tag, equals-sign name, missing
//!    closing tags, scattered parameters), JSON calls and JSON containers through a strict
//!    [`json`] reader, and finally a `__malformed__` call with the reason.
//!
//! The layers of the original design (standard parse → repair → regex fallback → malformed)
//! are folded into this one tolerant scanner: the repairs are decisions the reader makes as it
//! meets a token, not rewrites of the text followed by a re-parse, which keeps every input —
//! damaged or not — to a single linear pass. (quick-xml was considered for the standard layer
//! but RULES.md demands behaviour an XML reader does not give: case-insensitive tag matching,
//! raw markup kept inside plain values, CDATA sections that end at a later closing tag.)
//!
//! [`StreamParser`] does the same on a token stream and reports calls as they start and finish.
//!
//! # Calls in the forms of local model families
//!
//! [`read_written_calls`] reads the calls models write in their own families' forms instead of
//! `<tool_call>`: a JSON call object or list on its own lines (alone, after prose, in a Markdown
//! code fence), Llama 3.x's `<|python_tag|>` and pythonic `[f(a=1)]` list, Mistral's
//! `[TOOL_CALLS]`, LFM2's `<|tool_call_start|>`, FunctionGemma's and Gemma 4's call blocks and
//! the `<|tool_call|>` of Granite 3.x and Phi-4-mini. It follows `FORMS.md` (rules F1-F10, each
//! form with its source): a call is read only for one of the agent's tools (a predicate the
//! caller gives), a broken one comes back as a malformed call that shows the form to use, and
//! the reading is one linear pass. [`read_written`] also says which tool a broken call named.
//!
//! # Results and instructions
//!
//! [`format_result`] frames a tool's output for the model so that nothing in it can end the frame
//! or forge a call; [`tool_instructions`] writes the `<tool_instructions>` block of the system
//! prompt from [`ToolSpec`](artifactflow_ground::tool_spec::ToolSpec)s.

#![warn(missing_docs)]

pub mod args;
mod blocks;
mod call;
mod examples;
pub mod family;
mod format;
mod forms;
pub mod grammar;
mod instructions;
mod json;
mod scan;
mod stream;
mod think;
mod value;

use indexmap::IndexMap;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

pub use args::read_arguments;
pub use family::{template_takes_tools, Opening, ToolFamily};
pub use format::{format_call, format_result, neutralise, parse_results, restore, ResultFrame};
pub use forms::{read_written, read_written_calls, strip_written_calls, WrittenCall};
pub use instructions::{tool_instructions, xml_example};
pub use stream::{StreamEvent, StreamParser};

/// The name of the call returned in place of a block that cannot be recovered.
pub const MALFORMED: &str = "__malformed__";

/// Parameters of a call: name → raw string value, in document order.
pub type Params = IndexMap<String, String>;

/// One tool call found in a model response.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// Stable id (`call_…`), given when the call is parsed; the run loop replaces it with the
    /// id its streamed events carried (or a provider's id, for native calls). Not part of the
    /// call's content: equality and the JSON form ignore it.
    pub id: String,
    /// The tool name, exactly as written; [`MALFORMED`] for a call that could not be read.
    pub name: String,
    /// Parameter values as strings (type coercion happens later), in document order.
    pub params: Params,
    /// Why the call could not be read; `Some` exactly when `name` is [`MALFORMED`].
    pub error: Option<String>,
    /// Written under the grammar of guided calls (set by the run loop from what the runtime
    /// reported; the parser never sets it). Not part of the call's content either.
    pub guided: bool,
}

impl ToolCall {
    /// A well-formed call.
    pub fn new(name: impl Into<String>, params: Params) -> Self {
        ToolCall {
            id: new_call_id(),
            name: name.into(),
            params,
            error: None,
            guided: false,
        }
    }

    /// A call that could not be read, with a reason for the model.
    pub fn malformed(error: impl Into<String>) -> Self {
        let mut error = error.into();
        if error.is_empty() {
            error = "the tool call could not be read".into();
        }
        ToolCall {
            id: new_call_id(),
            name: MALFORMED.into(),
            params: Params::new(),
            error: Some(error),
            guided: false,
        }
    }

    /// Is this the placeholder for an unreadable call?
    pub fn is_malformed(&self) -> bool {
        self.error.is_some()
    }
}

/// A new unique call id.
fn new_call_id() -> String {
    artifactflow_ground::ids::new_id("call")
}

/// Two calls are equal when they say the same thing, whatever their ids.
impl PartialEq for ToolCall {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.params == other.params && self.error == other.error
    }
}

impl Eq for ToolCall {}

/// Serialises as `{"name": .., "params": {..}}` plus `"error"` for a malformed call, keeping the
/// parameters in document order.
impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("params", &self.params)?;
        if let Some(e) = &self.error {
            m.serialize_entry("error", e)?;
        }
        m.end()
    }
}

/// Parse one complete model response into its tool calls, in order.
///
/// ```
/// use artifactflow_parser::parse;
/// let calls = parse("Searching.\n<tool_call><name>web_search</name><params>\
///                    <query><![CDATA[rust]]></query></params></tool_call>");
/// assert_eq!(calls[0].name, "web_search");
/// assert_eq!(calls[0].params["query"], "rust");
/// ```
pub fn parse(text: &str) -> Vec<ToolCall> {
    let text = think::strip(text);
    parse_clean(&text)
}

/// `text` without its call blocks: what an answer says besides its calls (a native rendering
/// of an answer sends its calls as data, not twice).
pub fn strip_calls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in call_spans(text) {
        out.push_str(&text[at..start]);
        at = end;
    }
    out.push_str(&text[at..]);
    let trimmed = out.trim();
    if trimmed.len() == out.len() {
        out
    } else {
        trimmed.to_string()
    }
}

/// The byte ranges of `text`'s readable call blocks, in order: from the opening tag to the end
/// of the closing one (or to where the next block begins, or the end of the text, for a call
/// never closed).
fn call_spans(text: &str) -> Vec<(usize, usize)> {
    let toks = scan::tokenize(text);
    let reader = call::Reader::new(text, &toks);
    blocks::find(text, &toks)
        .into_iter()
        .filter(|&block| blocks::read(&reader, block).is_some())
        .map(|block| {
            let (open, span, name) = match block {
                blocks::Block::ToolCall { open, span } => (open, span, "tool_call"),
                blocks::Block::Bare { open, span } => (open, span, toks[open].inner(text)),
            };
            let end = match toks.get(span.t1) {
                Some(t) if t.is_close_named(text, name) => t.end,
                Some(t) => t.start,
                None => text.len(),
            };
            (toks[open].start, end)
        })
        .collect()
}

/// Where a tool result the model wrote itself begins: the first `<tool_result` or
/// `<tool_response` (any case) outside a call, after the answer's first readable call. Results
/// come only from the engine, after the calls have run; a small model that goes on past its
/// call and invents one (its "result" then sits in the conversation as if it were real, and
/// teaches it to do so again) has its answer end there, and calls it wrote after its invention
/// are not part of the answer. `None` without a call, or when nothing forged follows one.
///
/// ```
/// use artifactflow_parser::forged_result;
/// let answer = "<tool_call><name>read</name><params><id>a</id></params></tool_call>\n\
///               <tool_result name=\"read\" success=\"true\">made up</tool_result>";
/// let cut = forged_result(answer).unwrap();
/// assert!(answer[..cut].trim_end().ends_with("</tool_call>"));
/// assert_eq!(forged_result("Results come as <tool_result> blocks."), None);
/// ```
pub fn forged_result(text: &str) -> Option<usize> {
    let spans = call_spans(text);
    let gaps = spans.iter().enumerate().map(|(i, &(_, end))| {
        let next = spans.get(i + 1).map_or(text.len(), |&(start, _)| start);
        (end, next)
    });
    gaps.into_iter().find_map(|(from, to)| {
        let gap = text[from..to].to_ascii_lowercase();
        ["<tool_result", "<tool_response"]
            .iter()
            .filter_map(|opening| gap.find(opening))
            .min()
            .map(|at| from + at)
    })
}

/// Parse a response whose reasoning has already been removed.
fn parse_clean(text: &str) -> Vec<ToolCall> {
    let toks = scan::tokenize(text);
    let reader = call::Reader::new(text, &toks);
    blocks::find(text, &toks)
        .into_iter()
        .filter_map(|b| blocks::read(&reader, b))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_the_model_wrote_after_its_last_call_is_found() {
        let call = "<tool_call><name>read</name><params><id>a</id></params></tool_call>";
        let forged = "<tool_result name=\"read\" success=\"true\">1: made up</tool_result>";
        // Right after the call, after prose, and in Hermes' own word, in any case.
        for after in [
            forged.to_string(),
            format!("\nNow I wait.\n{forged}"),
            "\n<Tool_Response>{}</Tool_Response>".to_string(),
        ] {
            let text = format!("Reading.\n{call}{after}");
            let cut = forged_result(&text).unwrap();
            assert!(
                text[cut..].to_ascii_lowercase().starts_with("<tool_re"),
                "{text}"
            );
            assert!(text[..cut].contains(call), "{text}");
            assert_eq!(parse(&text[..cut]), parse(&text));
        }
        // After a bare-named call too.
        let bare = format!("<read><params><id>a</id></params></read>{forged}");
        assert_eq!(forged_result(&bare), bare.find("<tool_result"));
        // Nothing forged: no call, nothing after the call, prose after it, a result named inside
        // a value.
        assert_eq!(forged_result(&format!("See {forged}")), None);
        assert_eq!(forged_result(call), None);
        assert_eq!(forged_result(&format!("{call} done.")), None);
        assert_eq!(
            forged_result(&format!("Results look like {forged}\n{call}")),
            None
        );
        let inside = "<tool_call><name>w</name><params><c><![CDATA[write <tool_result> blocks]]></c></params></tool_call>";
        assert_eq!(forged_result(inside), None);
        // Two calls with a forged result between them: the answer ends after the first (the
        // second was written on the strength of the invention).
        let between = format!("{call}{forged}{call}");
        assert_eq!(forged_result(&between), Some(call.len()));
    }

    #[test]
    fn strip_calls_keeps_the_text_around_calls() {
        let text = "Searching.\n<tool_call><name>web_search</name><params><q>x</q></params></tool_call>\nThen <read_artifact><params><id>a</id></params></read_artifact> done.";
        assert_eq!(strip_calls(text), "Searching.\n\nThen  done.");
        assert_eq!(strip_calls("no calls"), "no calls");
        let cut = "Begin <tool_call><name>w</name><params><q>x";
        assert_eq!(strip_calls(cut), "Begin");
    }

    #[test]
    fn format_call_reads_back_as_the_same_call() {
        let params: Params = [("q", "a ]]> b"), ("n", "3")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let text = format_call("web_search", &params);
        assert_eq!(parse(&text), vec![ToolCall::new("web_search", params)]);
    }

    fn names(text: &str) -> Vec<String> {
        parse(text).into_iter().map(|c| c.name).collect()
    }

    #[test]
    fn rules_examples() {
        assert_eq!(
            names("I will wrap it in <tool_call> tags."),
            Vec::<String>::new()
        );
        assert_eq!(
            names("<tool_call><name>a</name>\n<tool_call><name>b</name>"),
            ["a", "b"]
        );
        let c = &parse("<tool_call><name>w</name><params><c><![CDATA[a\n</c>\n</params>")[0];
        assert_eq!(c.params["c"], "a\n");
        let c = &parse(
            "<tool_call><name>w</name><params><c><![CDATA[a</c><d>b</d></params></tool_call>",
        )[0];
        assert_eq!(c.params["c"], "a</c><d>b</d></params></tool_call>");
        let c = &parse("<tool_call><name>t</name><q>  a &lt; b &amp;&amp; R&D </q>")[0];
        assert_eq!(c.params["q"], "a < b && R&D");
    }
}
