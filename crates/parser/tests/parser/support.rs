//! Shared helpers: loading JSON-lines fixtures and comparing calls.

use std::collections::BTreeMap;
use std::path::PathBuf;

use artifactflow_parser::{ToolCall, MALFORMED};
use serde_json::Value;

/// One corpus case.
pub struct Case {
    pub id: String,
    pub input: String,
    pub expected: Value,
    /// False for the rare case whose stream events cannot match (`"stream_events": false`; the
    /// `note` says why). `finish()` must still agree with `parse()`.
    pub stream_events: bool,
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Load `tests/fixtures/<name>` (JSON lines with id, input, expected).
pub fn load(name: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(fixture(name)).expect("fixture readable");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("fixture line is JSON");
            Case {
                id: v["id"].as_str().expect("id").to_string(),
                input: v["input"].as_str().expect("input").to_string(),
                expected: v["expected"].clone(),
                stream_events: v["stream_events"].as_bool().unwrap_or(true),
            }
        })
        .collect()
}

/// The public corpus.
pub fn corpus() -> Vec<Case> {
    load("parser_cases.jsonl")
}

/// Every fixture case: the public corpus, the regressions and the rules review set.
pub fn all_cases() -> Vec<Case> {
    let mut cases = corpus();
    cases.extend(load("regressions.jsonl"));
    cases.extend(load("rules_review.jsonl"));
    cases
}

/// Calls as comparable values: (name, sorted params); `__malformed__` compares by name only.
pub fn normalise_calls(calls: &[ToolCall]) -> Vec<(String, BTreeMap<String, String>)> {
    calls
        .iter()
        .map(|c| {
            let params = if c.name == MALFORMED {
                BTreeMap::new()
            } else {
                c.params
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            };
            (c.name.clone(), params)
        })
        .collect()
}

/// The expected list of a case in the same comparable form.
pub fn normalise_expected(expected: &Value) -> Vec<(String, BTreeMap<String, String>)> {
    expected
        .as_array()
        .expect("expected is a list")
        .iter()
        .map(|c| {
            let name = c["name"].as_str().expect("name").to_string();
            let params = if name == MALFORMED {
                BTreeMap::new()
            } else {
                c.get("params")
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| {
                                (k.clone(), v.as_str().expect("string value").to_string())
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            };
            (name, params)
        })
        .collect()
}

/// Fails listing every case whose calls as read (`got`) are not its `expected` calls, all at
/// once; `results` are (case id, expected, got).
pub fn assert_every_case<'a>(
    results: impl IntoIterator<Item = (&'a str, &'a Value, Vec<ToolCall>)>,
) {
    let mut failures = Vec::new();
    for (id, expected, got) in results {
        if normalise_calls(&got) != normalise_expected(expected) {
            failures.push(format!("{id}:\n  expected {expected}\n  got      {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
