//! The `<tool_instructions>` block, pinned by snapshots, and its examples parse back.

use artifactflow_ground::tool_spec::{ParamSpec, ParamType, ToolSpec};
use artifactflow_parser::{parse, tool_instructions, xml_example};
use serde_json::json;

fn web_search() -> ToolSpec {
    ToolSpec {
        name: "web_search".into(),
        description: "Web search and information retrieval specialist...".into(),
        input_schema: None,
        params: vec![
            ParamSpec::new("query", ParamType::String, "Search query"),
            ParamSpec::new("freshness", ParamType::String, "Time range filter")
                .with_default(json!("noLimit"))
                .with_values(["noLimit", "oneDay", "oneWeek", "oneMonth", "oneYear"]),
            ParamSpec::new(
                "count",
                ParamType::Integer,
                "Number of results to return (1-50)",
            )
            .with_default(json!(10)),
        ],
    }
}

fn other_tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "read_artifact".into(),
            description: "Read an artifact by line.\nReturns an <artifact_slice>.".into(),
            input_schema: None,
            params: vec![
                ParamSpec::new("id", ParamType::String, "Artifact id."),
                ParamSpec::new("offset", ParamType::Integer, "First line").with_default(json!(1)),
                ParamSpec::new("limit", ParamType::Integer, "").optional(),
                ParamSpec::new("exact", ParamType::Boolean, "Exact match"),
                ParamSpec::new("ratio", ParamType::Number, "Weight").with_default(json!(0.5)),
                ParamSpec::new("mode", ParamType::String, "Mode").with_values(["a", "b"]),
                ParamSpec::new("note", ParamType::String, "Has ]]> inside")
                    .with_default(json!("x]]>y")),
            ],
        },
        ToolSpec {
            name: "get_time".into(),
            description: "Current time.".into(),
            input_schema: None,
            params: vec![],
        },
    ]
}

#[test]
fn seed_example_block() {
    insta::assert_snapshot!("seed_web_search", tool_instructions(&[web_search()]));
}

#[test]
fn several_tools_with_every_kind_of_parameter() {
    let mut tools = vec![web_search()];
    tools.extend(other_tools());
    insta::assert_snapshot!("several_tools", tool_instructions(&tools));
}

#[test]
fn no_tools() {
    insta::assert_snapshot!("no_tools", tool_instructions(&[]));
}

#[test]
fn examples_parse_back_to_their_values() {
    let mut tools = vec![web_search()];
    tools.extend(other_tools());
    for tool in &tools {
        let example = xml_example(tool);
        let calls = parse(&example);
        assert_eq!(calls.len(), 1, "{example}");
        assert_eq!(calls[0].name, tool.name);
        for (k, v) in &calls[0].params {
            assert!(tool.params.iter().any(|p| &p.name == k), "{k}");
            assert!(
                example.contains(&format!("<{k}><![CDATA[")),
                "{k} not in CDATA"
            );
            if k == "note" {
                assert_eq!(v, "x]]>y");
            }
        }
    }
    // The whole instruction block holds one example call per tool.
    assert_eq!(parse(&tool_instructions(&tools)).len(), tools.len());
}
