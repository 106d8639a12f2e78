//! No input makes the parser panic; pathological inputs give the results the rules say.
//!
//! (Speed on these inputs is measured by `benches/parser.rs`, not asserted here.)

use artifactflow_parser::{parse, read_written_calls, strip_written_calls, MALFORMED};
use proptest::prelude::*;

use crate::stream::{check_stream, split_at_fractions};

/// Markup-dense text: the pieces the parser reacts to, mixed with filler.
fn markup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<tool_call>"),
        Just("</tool_call>"),
        Just("<tool_call name=\"t\">"),
        Just("<tool_call/>"),
        Just("<name>"),
        Just("</name>"),
        Just("<name=x>"),
        Just("<name=\"y\""),
        Just("<params>"),
        Just("</params>"),
        Just("<arguments/>"),
        Just("<q>"),
        Just("</q>"),
        Just("<Q>"),
        Just("<w>"),
        Just("</w>"),
        Just("<![CDATA["),
        Just("]]>"),
        Just("]]"),
        Just("<think>"),
        Just("</think>"),
        Just("<think/>"),
        Just("{"),
        Just("}"),
        Just("\"name\": \"j\""),
        Just("\"arguments\":"),
        Just(","),
        Just("```json\n"),
        Just("```"),
        Just("&lt;"),
        Just("&#x41;"),
        Just("&"),
        Just("<"),
        Just(">"),
        Just("/"),
        Just("="),
        Just(" "),
        Just("\n"),
        Just("\r\n"),
        Just("a"),
        Just("é"),
        Just("中"),
        Just("😀"),
        Just("\u{3000}"),
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// Text dense in the pieces the forms reader (FORMS.md) reacts to.
fn forms_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<|python_tag|>"),
        Just("<|eom_id|>"),
        Just("[TOOL_CALLS]"),
        Just("[ARGS]"),
        Just("[CALL_ID]"),
        Just("</s>"),
        Just("<|tool_call_start|>"),
        Just("<|tool_call_end|>"),
        Just("<start_function_call>"),
        Just("<end_function_call>"),
        Just("call:"),
        Just("<escape>"),
        Just("<|tool_call>"),
        Just("<tool_call|>"),
        Just("<|\"|>"),
        Just("<|tool_call|>"),
        Just("<|/tool_call|>"),
        Just("{\"name\": \"t\""),
        Just("{\"name\": \"u\""),
        Just(", \"arguments\": "),
        Just("\"parameters\":"),
        Just("{"),
        Just("}"),
        Just("["),
        Just("]"),
        Just("t("),
        Just("t.call("),
        Just("a="),
        Just("'x'"),
        Just("\"y\""),
        Just("\\"),
        Just("1.5e3"),
        Just("True"),
        Just("None"),
        Just(")"),
        Just(","),
        Just(";"),
        Just(":"),
        Just("```json\n"),
        Just("```"),
        Just("<think>"),
        Just("</think>"),
        Just(" "),
        Just("\n"),
        Just("é"),
        Just("😀"),
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// The forms reader's invariants: a call names a known tool; a malformed call has a reason;
/// taking the calls out of a text only makes it shorter.
fn check_forms(text: &str) {
    let is_tool = |name: &str| name == "t";
    assert!(strip_written_calls(text, &is_tool).len() <= text.len());
    for call in read_written_calls(text, &is_tool) {
        if call.name == MALFORMED {
            assert!(call.error.as_deref().is_some_and(|e| !e.is_empty()));
            assert!(call.params.is_empty());
        } else {
            assert_eq!(call.name, "t");
            assert!(call.error.is_none());
        }
    }
}

fn check_invariants(text: &str) {
    for call in parse(text) {
        if call.name == MALFORMED {
            assert!(call.error.as_deref().is_some_and(|e| !e.is_empty()));
            assert!(call.params.is_empty());
        } else {
            assert!(!call.name.is_empty());
            assert!(call
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':')));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn markup_soup_never_panics_and_streams_agree(
        text in markup(),
        fractions in proptest::collection::vec(0.0f64..1.0, 0..12),
    ) {
        check_invariants(&text);
        let chunks = split_at_fractions(&text, &fractions);
        if let Err(e) = check_stream(&chunks) {
            prop_assert!(false, "{:?}: {}", text, e);
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        check_invariants(&text);
        check_forms(&text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_invariants(&String::from_utf8_lossy(&bytes));
        check_forms(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn forms_soup_never_panics_and_calls_name_known_tools(text in forms_soup()) {
        check_forms(&text);
    }
}

const MB: usize = 1_000_000;

fn repeat_to(piece: &str, size: usize) -> String {
    piece.repeat(size / piece.len() + 1)
}

#[test]
fn thousands_of_unclosed_tags_are_prose() {
    assert!(parse(&repeat_to("<a>", MB)).is_empty());
    assert!(parse(&repeat_to("<a><b x='1'>text ", MB)).is_empty());
}

#[test]
fn thousands_of_tool_call_openers_without_tags_give_nothing() {
    assert!(parse(&repeat_to("<tool_call>", MB)).is_empty());
}

#[test]
fn thousands_of_unclosed_params_are_one_call_each() {
    let text = repeat_to("<tool_call><name>t</name><q>v", MB);
    let calls = parse(&text);
    assert_eq!(calls.len(), text.matches("<tool_call>").count());
    assert_eq!(calls[0].params["q"], "v");
}

#[test]
fn thousands_of_name_equals_fragments() {
    // `<name=` with no name after it is plain text (rule 6 needs a name), so the block has no
    // tag at all (rule 3).
    assert!(parse(&format!("<tool_call>{}", repeat_to("<name=", MB))).is_empty());
    let calls = parse(&format!("<tool_call>{}", repeat_to("<name=x ", MB)));
    assert_eq!(calls[0].name, "x");
}

#[test]
fn thousands_of_unterminated_cdata_openers() {
    let text = format!(
        "<tool_call><name>w</name><params><c>{}",
        repeat_to("<![CDATA[x", MB)
    );
    let calls = parse(&text);
    assert_eq!(calls.len(), 1);
    assert!(calls[0].params["c"].starts_with("x<![CDATA[x"));
}

#[test]
fn thousands_of_think_openers() {
    assert!(parse(&repeat_to("<think>", MB)).is_empty());
    assert!(parse(&repeat_to("</think><tool_call>", MB)).is_empty());
}

/// The forms reader on inputs made to make a careless reader go back and forth: each gives
/// what FORMS.md says (speed is measured by the benches, not asserted here).
#[test]
fn the_forms_reader_on_pathological_inputs() {
    let is_tool = |name: &str| name == "t";
    let read = |text: &str| read_written_calls(text, &is_tool);
    // Openers with no call after them: one malformed call each (F2).
    let text = repeat_to("<|tool_call_start|>", MB / 8);
    assert_eq!(
        read(&text).len(),
        text.matches("<|tool_call_start|>").count()
    );
    // Lines that look like a call's start but never end: each read once, none a call.
    assert!(read(&repeat_to("{\"name\": \"u\", \"arguments\": {\n", MB)).is_empty());
    assert!(read(&repeat_to("[{\"name\"\n", MB)).is_empty());
    assert!(read(&repeat_to("[[[[[[[[", MB)).is_empty());
    assert!(read(&repeat_to("[u(a=[", MB)).is_empty());
    // A call cut off after a huge nesting: malformed, not a stack overflow.
    let deep = format!("{{\"name\": \"t\", \"arguments\": {}", "[".repeat(MB));
    assert_eq!(read(&deep)[0].name, MALFORMED);
    let deep = format!("[t(a={})]", "[".repeat(MB));
    assert_eq!(read(&deep)[0].name, MALFORMED);
    let deep = format!("<start_function_call>call:t{{a:{}", "[".repeat(MB));
    assert_eq!(read(&deep)[0].name, MALFORMED);
    // Gemma lists opened and never closed: one malformed call per opener.
    let text = repeat_to("<start_function_call>call:t{a:[{b:[", MB / 8);
    assert_eq!(
        read(&text).len(),
        text.matches("<start_function_call>").count()
    );
    // Thousands of real calls, one per line: all read, and all taken out.
    let text = repeat_to("{\"name\": \"t\", \"arguments\": {\"q\": 1}}\n", MB);
    assert_eq!(read(&text).len(), text.matches("\"t\"").count());
    assert_eq!(strip_written_calls(&text, &is_tool), "");
    // FunctionGemma escapes never closed.
    let text = format!(
        "<start_function_call>call:t{{a:{}",
        repeat_to("<escape>x", MB)
    );
    assert_eq!(read(&text).len(), 1);
}
