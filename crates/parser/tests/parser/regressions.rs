//! Cases kept from reading RULES.md closely and from robustness runs
//! (`fixtures/regressions.jsonl`), and the rule-by-rule review set
//! (`fixtures/rules_review.jsonl`, one or more cases per definition, rule and example of
//! RULES.md, each citing its rule in `note`). Same format as the public corpus; every case is
//! checked one-shot and streamed character by character.

use artifactflow_parser::{parse, StreamParser, ToolCall};

use crate::stream::check_stream;
use crate::support::{load, normalise_calls, normalise_expected};

/// Feed `chunks` and return what `finish()` gives.
fn finish_of(chunks: &[&str]) -> Vec<ToolCall> {
    let mut p = StreamParser::new();
    for c in chunks {
        p.feed(c);
    }
    p.finish()
}

/// Check every case of a fixture file, one-shot and streamed, reporting all failures at once.
fn check_fixture(name: &str) {
    let cases = load(name);
    assert!(!cases.is_empty(), "{name} is empty");
    let mut failures = Vec::new();
    for case in &cases {
        let got = parse(&case.input);
        if normalise_calls(&got) != normalise_expected(&case.expected) {
            failures.push(format!(
                "{}: expected {} got {:?}",
                case.id, case.expected, got
            ));
        }
        let chars: Vec<&str> = case
            .input
            .char_indices()
            .map(|(i, c)| &case.input[i..i + c.len_utf8()])
            .collect();
        if case.stream_events {
            if let Err(e) = check_stream(&chars) {
                failures.push(format!("{} (streamed): {e}", case.id));
            }
            if let Err(e) = check_stream(&[&case.input]) {
                failures.push(format!("{} (one chunk): {e}", case.id));
            }
        } else if finish_of(&chars) != got {
            failures.push(format!("{} (streamed): finish() != parse()", case.id));
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_regression_case_passes() {
    check_fixture("regressions.jsonl");
}

#[test]
fn every_rules_review_case_passes() {
    check_fixture("rules_review.jsonl");
}
