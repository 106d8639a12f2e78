//! Every public corpus case, reported all at once.

use artifactflow_parser::{parse, MALFORMED};

use crate::support::{all_cases, assert_every_case, corpus};

#[test]
fn every_public_case_passes() {
    let cases = corpus();
    assert!(cases.len() >= 100, "corpus fixture looks truncated");
    assert_every_case(
        cases
            .iter()
            .map(|c| (c.id.as_str(), &c.expected, parse(&c.input))),
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
