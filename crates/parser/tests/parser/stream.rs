//! Streaming and one-shot parsing agree, for every corpus case and any chunking.

use artifactflow_parser::{parse, StreamEvent, StreamParser};
use proptest::prelude::*;

use crate::support::{all_cases, corpus};

/// Feed `chunks`, then check the events against the one-shot result of the whole text.
///
/// `finish()` must always equal `parse()`. The events must agree with it too, except in the one
/// case the parser's module docs name: an unterminated CDATA section whose D5 exception (and so
/// a `</think>` in the tail) only the end of the response decides. There the events must agree
/// with the response as it reads when more text follows, which is all a stream can know.
pub fn check_stream(chunks: &[&str]) -> Result<(), String> {
    let text: String = chunks.concat();
    let mut p = StreamParser::new();
    let mut events = Vec::new();
    for c in chunks {
        events.extend(p.feed(c));
    }
    let oneshot = parse(&text);
    let finished = p.finish();
    if finished != oneshot {
        return Err(format!("finish() {finished:?} != parse() {oneshot:?}"));
    }
    check_events(&events, &oneshot).or_else(|error| {
        let continued = parse(&format!("{text}x"));
        if text.contains("<![CDATA[") && continued != oneshot {
            check_events(&events, &continued)
                .map_err(|e| format!("{error}; against the continued text too: {e}"))
        } else {
            Err(error)
        }
    })
}

/// The events after the last reset describe exactly the calls of `oneshot`, in order.
fn check_events(
    events: &[StreamEvent],
    oneshot: &[artifactflow_parser::ToolCall],
) -> Result<(), String> {
    let from = events
        .iter()
        .rposition(|e| *e == StreamEvent::Reset)
        .map_or(0, |i| i + 1);
    let mut started = 0;
    let mut completed = vec![false; oneshot.len()];
    for e in &events[from..] {
        match e {
            StreamEvent::CallStarted { index } => {
                if *index != started {
                    return Err(format!("CallStarted {index}, expected {started}"));
                }
                started += 1;
            }
            StreamEvent::NameKnown { index, .. } => {
                if *index >= started {
                    return Err(format!("NameKnown {index} before its CallStarted"));
                }
            }
            StreamEvent::CallComplete { index, call } => {
                if *index >= started || *index >= oneshot.len() {
                    return Err(format!("CallComplete {index} out of range"));
                }
                if completed[*index] {
                    return Err(format!("CallComplete {index} twice"));
                }
                completed[*index] = true;
                if *call != oneshot[*index] {
                    return Err(format!(
                        "streamed {call:?} != one-shot {:?}",
                        oneshot[*index]
                    ));
                }
            }
            StreamEvent::Reset => unreachable!(),
        }
    }
    if started > oneshot.len() {
        return Err(format!("{started} calls started, {} parsed", oneshot.len()));
    }
    Ok(())
}

/// Split `text` at the given fractions (snapped to char boundaries).
pub fn split_at_fractions<'t>(text: &'t str, fractions: &[f64]) -> Vec<&'t str> {
    let mut cuts: Vec<usize> = fractions
        .iter()
        .map(|f| {
            let mut i = ((text.len() as f64) * f) as usize;
            while i < text.len() && !text.is_char_boundary(i) {
                i += 1;
            }
            i.min(text.len())
        })
        .collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut at = 0;
    for c in cuts {
        out.push(&text[at..c]);
        at = c;
    }
    out.push(&text[at..]);
    out
}

#[test]
fn every_case_fed_char_by_char() {
    for case in corpus().iter().filter(|c| c.input.len() < 20_000) {
        let chunks: Vec<&str> = case
            .input
            .char_indices()
            .map(|(i, c)| &case.input[i..i + c.len_utf8()])
            .collect();
        check_stream(&chunks).unwrap_or_else(|e| panic!("{}: {e}", case.id));
    }
}

#[test]
fn every_case_in_one_chunk_and_with_empty_chunks() {
    for case in corpus() {
        check_stream(&[&case.input]).unwrap_or_else(|e| panic!("{}: {e}", case.id));
        check_stream(&["", &case.input, ""]).unwrap_or_else(|e| panic!("{}: {e}", case.id));
    }
}

#[test]
fn reports_start_name_and_completion_as_they_arrive() {
    let mut p = StreamParser::new();
    assert!(p.feed("Let me search.\n<tool_call>\n  <na").is_empty());
    let e = p.feed("me>web_search</name>\n  <params><query><![CDATA[ru");
    assert_eq!(
        e,
        vec![
            StreamEvent::CallStarted { index: 0 },
            StreamEvent::NameKnown {
                index: 0,
                name: "web_search".into()
            }
        ]
    );
    assert!(p.feed("st]]></query></params>\n").is_empty());
    let e = p.feed("</tool_call>");
    assert!(
        matches!(&e[..], [StreamEvent::CallComplete { index: 0, call }] if call.params["query"] == "rust")
    );
    let e = p.feed("<web_fetch><params><url>u</url>");
    assert_eq!(
        e,
        vec![
            StreamEvent::CallStarted { index: 1 },
            StreamEvent::NameKnown {
                index: 1,
                name: "web_fetch".into()
            }
        ]
    );
    assert_eq!(p.finish().len(), 2);
}

#[test]
fn late_think_close_resets() {
    let mut p = StreamParser::new();
    let e = p.feed("<tool_call><name>a</name></tool_call>");
    assert!(e
        .iter()
        .any(|e| matches!(e, StreamEvent::CallComplete { .. })));
    let e = p.feed(" hmm</think><tool_call><name>b</name></tool_call>");
    assert_eq!(e[0], StreamEvent::Reset);
    assert!(
        matches!(&e.last(), Some(StreamEvent::CallComplete { index: 0, call }) if call.name == "b")
    );
    assert_eq!(p.finish()[0].name, "b");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn any_chunking_of_any_case_agrees(
        case in 0usize..10_000,
        fractions in proptest::collection::vec(0.0f64..1.0, 0..40),
    ) {
        let cases: Vec<_> = all_cases().into_iter().filter(|c| c.stream_events).collect();
        let case = &cases[case % cases.len()];
        let chunks = split_at_fractions(&case.input, &fractions);
        if let Err(e) = check_stream(&chunks) {
            prop_assert!(false, "{}: {}", case.id, e);
        }
    }
}

/// Feed `text` one character at a time and check agreement with the one-shot parser.
fn char_by_char(text: &str) {
    let chunks: Vec<&str> = text
        .char_indices()
        .map(|(i, c)| &text[i..i + c.len_utf8()])
        .collect();
    check_stream(&chunks).unwrap_or_else(|e| panic!("{}: {e}", &text[..40.min(text.len())]));
}

/// Constructs that stay undecided while a long run arrives in tiny chunks: each must be resumed
/// where the previous attempt stopped, not re-read from its `<` (which would make feeding
/// quadratic; at this size that would not finish in any reasonable time).
#[test]
fn long_cut_constructs_fed_char_by_char_are_resumed() {
    const N: usize = 200_000;
    let ws = " \t\r\n".repeat(N / 4);
    let long = "a".repeat(N);
    let texts = [
        // `</think` then whitespace: a stray (or leading) closing think tag, outside a region…
        format!("x</think{ws}>\n<tool_call><name>a</name></tool_call>"),
        // …and inside a region (plain search for `</think>`).
        format!("<think>r</think{ws}>\n<tool_call><name>a</name></tool_call>"),
        format!("<think>r</THINK{ws}"),
        // Any closing tag with a long name or long whitespace.
        format!("<tool_call><name>a</name><q>v</q{ws}></tool_call>"),
        format!("<tool_call><name>a</name><q>v</{long}{ws}></tool_call>"),
        // An opening tag with a long name, then attributes.
        format!("<tool_call><name>a</name><{long}{ws}x='1'{ws}/></tool_call>"),
        // The equals-sign name form with long runs in every part.
        format!("<tool_call><name{ws}={ws}'{long}'{ws}/>{ws}</name{ws}></tool_call>"),
        // A `<tool_call>` block whose content starts with a long run of whitespace.
        format!("<tool_call>{ws}{{\"name\": \"a\"}}</tool_call>"),
    ];
    for text in &texts {
        char_by_char(text);
    }
    assert_eq!(parse(&texts[0])[0].name, "a");
    assert_eq!(parse(&texts[6])[0].name, long);
}

/// Found by the markup proptest: whether the CDATA section ends before `</tool_call>` (and so
/// whether the final `</think>` turns everything into reasoning) is decided only by the end of
/// the response. The stream reports the call it reads; `finish()` is still exactly `parse()`.
#[test]
fn a_think_close_that_only_the_end_reveals_keeps_finish_exact() {
    let text =
        "<tool_call><tool_call name=\"t\">]]><tool_call/><tool_call><![CDATA[</tool_call></think>";
    assert!(parse(text).is_empty());
    assert_eq!(
        parse(&format!("{text}x")).len(),
        1,
        "with more text the section runs on"
    );
    check_stream(&[text]).unwrap();
    let mut p = StreamParser::new();
    p.feed(text);
    assert!(p.finish().is_empty());
}
