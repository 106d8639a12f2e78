//! The forms reader (`read_written_calls`, FORMS.md) on `fixtures/forms_cases.jsonl`: each
//! family's call turn as its own chat template renders it, the issue's fenced answer, broken
//! calls and look-alikes that are not calls.

use artifactflow_parser::{
    read_arguments, read_written, read_written_calls, strip_written_calls, MALFORMED,
};
use serde_json::Value;

use crate::support::assert_every_case;

struct FormsCase {
    id: String,
    input: String,
    tools: Vec<String>,
    expected: Value,
}

fn cases() -> Vec<FormsCase> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/forms_cases.jsonl"
    );
    std::fs::read_to_string(path)
        .expect("fixture readable")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("fixture line is JSON");
            FormsCase {
                id: v["id"].as_str().expect("id").to_string(),
                input: v["input"].as_str().expect("input").to_string(),
                tools: v["tools"]
                    .as_array()
                    .expect("tools")
                    .iter()
                    .map(|t| t.as_str().expect("tool name").to_string())
                    .collect(),
                expected: v["expected"].clone(),
            }
        })
        .collect()
}

#[test]
fn every_forms_case_reads_as_expected() {
    let cases = cases();
    assert!(cases.len() >= 30, "forms fixture looks truncated");
    assert_every_case(cases.iter().map(|case| {
        let is_tool = |name: &str| case.tools.iter().any(|t| t == name);
        let got = read_written_calls(&case.input, &is_tool);
        (case.id.as_str(), &case.expected, got)
    }));
}

#[test]
fn a_broken_call_says_what_was_wrong_and_how_to_write_it() {
    for case in cases() {
        let is_tool = |name: &str| case.tools.iter().any(|t| t == name);
        for written in read_written(&case.input, &is_tool) {
            let call = written.call;
            if call.name != MALFORMED {
                assert!(call.error.is_none(), "{}", case.id);
                assert_eq!(written.tool.as_deref(), Some(call.name.as_str()));
                continue;
            }
            let error = call.error.as_deref().unwrap_or_default();
            assert!(call.params.is_empty(), "{}", case.id);
            assert!(error.contains("could not be read"), "{}: {error}", case.id);
            assert!(
                error.contains("Write it like this:"),
                "{}: {error}",
                case.id
            );
            if let Some(tool) = &written.tool {
                assert!(error.contains(&format!("`{tool}`")), "{}: {error}", case.id);
            }
        }
    }
}

#[test]
fn the_broken_call_names_its_tool_and_its_form() {
    let is_tool = |name: &str| name == "create_artifact";
    let fenced = "```json\n{\"name\": \"create_artifact\", \"arguments\": {\"id\": \"a\",}}\n```";
    let written = read_written(fenced, &is_tool);
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].tool.as_deref(), Some("create_artifact"));
    let error = written[0].call.error.clone().unwrap();
    assert!(error.contains("not valid"), "{error}");
    assert!(
        error.contains(r#"{"name": "create_artifact", "arguments": {"#),
        "{error}"
    );
    let lfm2 = "<|tool_call_start|>[create_artifact(\"a\")]<|tool_call_end|>";
    let error = read_written_calls(lfm2, &is_tool)[0].error.clone().unwrap();
    assert!(error.contains("param=value"), "{error}");
    assert!(
        error.contains("<|tool_call_start|>[create_artifact("),
        "{error}"
    );
}

/// F2: an object or a list among a written call's values is the JSON text the same arguments
/// give as a native call (`read_arguments`), so the engine's schema check sees the same values
/// whichever way the model called. (A number that is a value itself keeps the characters
/// written, as rule 14 says; the cases here hold none that serde_json would spell otherwise.)
#[test]
fn written_values_are_the_native_values() {
    let is_tool = |name: &str| name == "t";
    for arguments in [
        r#"{"to": "a@b.c", "cc": ["x@y.z"], "tags": {"k": 1}}"#,
        r#"{"f": {"a": null, "b": [1.50, -2e3, 0.1e1, true, "\u00e9\n"]}, "g": []}"#,
        r#"{"k": {"x": 1, "y": 2, "x": 3}, "k": [{}], "n": [10000000000000000000000]}"#,
        r#"{"big": [1e400]}"#,
    ] {
        let native = read_arguments(arguments, None);
        for written in [
            format!(r#"{{"name": "t", "arguments": {arguments}}}"#),
            format!(r#"[TOOL_CALLS]t[ARGS]{arguments}</s>"#),
            format!(
                r#"<|tool_call|>[{{"name": "t", "arguments": {}}}]"#,
                serde_json::to_string(arguments).unwrap()
            ),
        ] {
            let calls = read_written_calls(&written, &is_tool);
            assert_eq!(calls.len(), 1, "{written}");
            match &native {
                Ok((params, _)) => assert_eq!(&calls[0].params, params, "{written}"),
                Err(_) => assert_eq!(calls[0].name, MALFORMED, "{written}"),
            }
        }
    }
    // Python literals inside a pythonic call's list or dict are their JSON counterparts.
    let (native, _) = read_arguments(
        r#"{"a": [1, true, false, null, "x", [2.5]], "b": {"k": {"n": null}}}"#,
        None,
    )
    .unwrap();
    for written in [
        r#"[t(a=[1, True, False, None, 'x', (2.50,)], b={'k': {"n": None}})]"#,
        r#"<|tool_call_start|>[t(a=(1, True, False, None, "x", [2.5]), b={"k": {'n': None}})]<|tool_call_end|>"#,
    ] {
        let calls = read_written_calls(written, &is_tool);
        assert_eq!(calls[0].params, native, "{written}");
    }
}

#[test]
fn calls_keep_their_order_across_forms() {
    let is_tool = |name: &str| matches!(name, "a" | "b" | "c");
    let text = "First:\n{\"name\": \"a\", \"arguments\": {}}\nthen <|tool_call_start|>[b(x=1)]<|tool_call_end|>\n[c(y='z')]";
    let names: Vec<_> = read_written_calls(text, &is_tool)
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
}

#[test]
fn stripping_the_calls_of_every_case_leaves_no_call_and_keeps_text_without_calls() {
    for case in cases() {
        let is_tool = |name: &str| case.tools.iter().any(|t| t == name);
        let written = read_written(&case.input, &is_tool);
        let stripped = strip_written_calls(&case.input, &is_tool);
        let left = read_written_calls(&stripped, &is_tool);
        if written.iter().all(|w| w.call.name != MALFORMED) {
            // Every call read is taken out, and nothing else is found in what is left.
            assert!(
                left.is_empty(),
                "{}: {stripped:?} still reads {left:?}",
                case.id
            );
        } else {
            // A broken call stays in the text, as the model wrote it.
            assert!(
                left.iter().any(|c| c.name == MALFORMED),
                "{}: {stripped:?}",
                case.id
            );
        }
        if written.is_empty() && !case.input.contains("<think") {
            assert_eq!(stripped, case.input.trim(), "{}", case.id);
        }
    }
}

#[test]
fn a_stripped_answer_keeps_its_prose_and_loses_the_fence_of_its_call() {
    let is_tool = |name: &str| matches!(name, "create_artifact" | "get_time");
    let call = r#"{"name": "create_artifact", "arguments": {"id": "g"}}"#;
    let cases = [
        (
            format!("I'll save it.\n\n```json\n{call}\n```\nDone."),
            "I'll save it.\n\nDone.",
        ),
        (format!("```\n{call}\n```"), ""),
        (format!("Saving:\n{call}"), "Saving:"),
        (
            format!("Two:\n[{call}, {{\"name\": \"get_time\", \"arguments\": {{}}}}]\nok"),
            "Two:\n\nok",
        ),
        (
            "Now <|tool_call_start|>[get_time()]<|tool_call_end|> then".to_string(),
            "Now  then",
        ),
        (
            "[TOOL_CALLS][{\"name\": \"get_time\", \"arguments\": {}}]</s>".to_string(),
            "",
        ),
        // Data in a fence that is not a call stays, and so does the fence of a call with
        // other lines beside it.
        (
            "```json\n{\"name\": \"Ada\", \"age\": 3}\n```".to_string(),
            "```json\n{\"name\": \"Ada\", \"age\": 3}\n```",
        ),
        (
            format!("```python\nx = 1\n{call}\n```"),
            "```python\nx = 1\n\n```",
        ),
        // A broken call stays, as a broken <tool_call> does.
        (
            "```json\n{\"name\": \"get_time\", \"arguments\": {,}}\n```".to_string(),
            "```json\n{\"name\": \"get_time\", \"arguments\": {,}}\n```",
        ),
    ];
    for (answer, expected) in cases {
        assert_eq!(
            strip_written_calls(&answer, &is_tool),
            expected,
            "{answer:?}"
        );
    }
}
