//! Cases kept from reading RULES.md closely and from robustness runs
//! (`fixtures/parser/regressions.jsonl`, same format as the public corpus).

use engine::parser::parse;

use crate::stream::check_stream;
use crate::support::{load, normalise_calls, normalise_expected};

#[test]
fn every_regression_case_passes() {
    let mut failures = Vec::new();
    for case in load("regressions.jsonl") {
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
        if let Err(e) = check_stream(&chars) {
            failures.push(format!("{} (streamed): {e}", case.id));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
