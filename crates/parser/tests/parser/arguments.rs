//! Native-call arguments: every case of `fixtures/native_arguments.jsonl` is read as
//! its one meaning or refused with its reason (`scripts/compare_argument_readers.py` runs the
//! same table through other readers for the README's comparison).

use artifactflow_parser::read_arguments;
use serde_json::Value;

/// The parameters an expected object gives: values as text, as `read_arguments` returns them
/// (strings as they are, other values as JSON, `null` members left out).
fn as_params(expected: &Value) -> Vec<(String, String)> {
    let mut params: Vec<(String, String)> = expected
        .as_object()
        .expect("an expected value is an object")
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), text)
        })
        .collect();
    params.sort();
    params
}

#[test]
fn every_case_of_the_table_is_read_or_refused_as_written() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/native_arguments.jsonl");
    let text = std::fs::read_to_string(path).expect("fixture readable");
    let cases: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("fixture line is JSON"))
        .collect();
    assert!(cases.len() >= 50, "the table looks truncated");
    let mut failures = Vec::new();
    for case in &cases {
        let id = case["id"].as_str().expect("id");
        let input = case["input"].as_str().expect("input");
        let got = read_arguments(input, None);
        match (&case["expected"], got) {
            (Value::Null, Err(why)) => {
                let refusal = case["refusal"].as_str().expect("a refusal's reason");
                if !why.contains(refusal) {
                    failures.push(format!("{id}: refused, but not for `{refusal}`: {why}"));
                }
            }
            (Value::Null, Ok((params, _))) => {
                failures.push(format!("{id}: should be refused, read as {params:?}"));
            }
            (expected, Ok((params, repairs))) => {
                let mut got: Vec<(String, String)> = params.into_iter().collect();
                got.sort();
                if got != as_params(expected) {
                    failures.push(format!("{id}: expected {expected}, read {got:?}"));
                }
                let valid = serde_json::from_str::<Value>(input).is_ok_and(|v| v.is_object());
                if valid && !repairs.is_empty() {
                    failures.push(format!("{id}: valid JSON, yet repairs {repairs:?}"));
                }
                if !valid && repairs.is_empty() {
                    failures.push(format!("{id}: repaired without saying so"));
                }
            }
            (expected, Err(why)) => {
                failures.push(format!("{id}: expected {expected}, refused: {why}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
