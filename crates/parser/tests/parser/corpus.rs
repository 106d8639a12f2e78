//! Every public corpus case, reported all at once.

use artifactflow_parser::{parse, MALFORMED};

use crate::support::{all_cases, corpus, normalise_calls, normalise_expected};

#[test]
fn every_public_case_passes() {
    let cases = corpus();
    assert!(cases.len() >= 100, "corpus fixture looks truncated");
    let mut failures = Vec::new();
    for case in &cases {
        let got = parse(&case.input);
        if normalise_calls(&got) != normalise_expected(&case.expected) {
            failures.push(format!(
                "{}:\n  expected {}\n  got      {:?}",
                case.id, case.expected, got
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn malformed_calls_always_carry_an_error() {
    for case in all_cases() {
        for call in parse(&case.input) {
            if call.name == MALFORMED {
                assert!(
                    call.error.as_deref().is_some_and(|e| !e.is_empty()),
                    "{}",
                    case.id
                );
                assert!(call.params.is_empty(), "{}", case.id);
            } else {
                assert!(call.error.is_none(), "{}", case.id);
            }
        }
    }
}

#[test]
fn crlf_inside_cdata_survives() {
    let calls =
        parse("<tool_call><name>w</name><params><c><![CDATA[a\r\nb]]></c></params></tool_call>");
    assert_eq!(calls[0].params["c"], "a\r\nb");
}
