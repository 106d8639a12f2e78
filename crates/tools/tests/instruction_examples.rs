//! The example call the `<tool_instructions>` block shows for each tool is a call the tool
//! really takes, and none of its values looks like a placeholder (small models copy them: an
//! artifact named `your_id_here` was the result).
//!
//! The artifact tools' examples run, one after another, on a real artifact store; the built-in
//! and skill tools' examples pass the pipeline's checks; an MCP tool's example passes the
//! check of its arguments against the server's own JSON Schema, for hand-written schemas of
//! the kinds servers publish and for random ones.

use artifactflow_parser::{parse, xml_example};
use artifactflow_tools::artifacts::{artifact_tools, ArtifactStore};
use artifactflow_tools::mcp::schema::{params_from_schema, to_arguments};
use artifactflow_tools::settings::Settings;
use artifactflow_tools::skills::{skill_tools, SkillShelf};
use artifactflow_tools::tools::builtin::builtin_tools;
use artifactflow_tools::tools::{pipeline, Params, ToolContext, ToolSpec};
use indexmap::IndexMap;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// What a placeholder looks like.
fn looks_like_placeholder(text: &str) -> bool {
    static PLACEHOLDER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?is)your_|_here|<.*>|placeholder|example_value").unwrap()
    });
    PLACEHOLDER.is_match(text)
}

/// The example call of `spec`, read back as the parser reads a model's answer.
fn example_call(spec: &ToolSpec) -> IndexMap<String, String> {
    let example = xml_example(spec);
    let calls = parse(&example);
    assert_eq!(calls.len(), 1, "{example}");
    assert_eq!(calls[0].name, spec.name, "{example}");
    for (name, value) in &calls[0].params {
        assert!(
            !looks_like_placeholder(value),
            "{}: {name} = {value:?} looks like a placeholder",
            spec.name
        );
    }
    calls[0].params.clone()
}

#[tokio::test]
async fn the_artifact_tools_examples_run_one_after_another_on_a_real_store() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ArtifactStore::open(&tmp.path().join("artifacts.db")).unwrap();
    let tools = artifact_tools(store, "conversation");
    // The artifact the later examples name exists, made by create_artifact's own example with
    // that id (create_artifact's id is the one its description shows, `report`).
    let create = tools
        .iter()
        .find(|t| t.spec().name == "create_artifact")
        .unwrap();
    let read = tools
        .iter()
        .find(|t| t.spec().name == "read_artifact")
        .unwrap();
    let mut params = example_call(create.spec());
    params.insert("id".into(), example_call(read.spec())["id"].clone());
    let made = pipeline::run(create.as_ref(), &params, &ToolContext::default()).await;
    assert!(made.success, "{params:?}: {:?}", made.error);
    // The order a model would use them in.
    for name in [
        "create_artifact",
        "read_artifact",
        "update_artifact",
        "grep_artifact",
        "rewrite_artifact",
    ] {
        let tool = tools.iter().find(|t| t.spec().name == name).unwrap();
        let params = example_call(tool.spec());
        let result = pipeline::run(tool.as_ref(), &params, &ToolContext::default()).await;
        assert!(
            result.success,
            "{name} {params:?}: {:?}\n{}",
            result.error, result.data
        );
    }
}

#[test]
fn the_built_in_and_skill_tools_examples_pass_the_pipelines_checks() {
    let mut tools = builtin_tools(&Settings::default(), Default::default());
    tools.extend(skill_tools(&SkillShelf::default()));
    assert!(tools.len() >= 6);
    for tool in &tools {
        let params = example_call(tool.spec());
        if let Err(e) = pipeline::prepare(&tool.spec().params, &params) {
            panic!("{}: {e}", tool.spec().name);
        }
    }
}

/// The tool an MCP server describes with `schema`, as the MCP client builds it.
fn mcp_tool(schema: &Value) -> (ToolSpec, artifactflow_tools::mcp::schema::SchemaParams) {
    let params = params_from_schema(schema.as_object().unwrap());
    let spec = ToolSpec {
        name: "server__tool".into(),
        description: "An MCP tool".into(),
        params: params.params.clone(),
        input_schema: Some(schema.clone()),
    };
    (spec, params)
}

/// The arguments the server would get from the example call of `schema`'s tool, or why it
/// would refuse them before sending.
fn mcp_arguments(schema: &Value) -> Result<Map<String, Value>, String> {
    let (spec, params) = mcp_tool(schema);
    let raw = example_call(&spec);
    let typed: Params = pipeline::prepare(&spec.params, &raw)?;
    to_arguments(&params, &typed)
}

/// Every text inside a JSON value.
fn texts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| texts(v, out)),
        Value::Object(members) => members.values().for_each(|v| texts(v, out)),
        _ => {}
    }
}

#[test]
fn an_mcp_tools_example_fits_its_own_schema() {
    let schemas = [
        // Formats, bounds and lengths.
        json!({
            "type": "object",
            "properties": {
                "day": {"type": "string", "format": "date"},
                "at": {"type": "string", "format": "date-time"},
                "contact": {"type": "string", "format": "email"},
                "page": {"type": "string", "format": "uri"},
                "request_id": {"type": "string", "format": "uuid"},
                "code": {"type": "string", "minLength": 60},
                "short": {"type": "string", "maxLength": 4},
                "limit": {"type": "integer", "minimum": 10, "maximum": 20},
                "above": {"type": "integer", "exclusiveMinimum": 100},
                "share": {"type": "number", "maximum": 0.25},
                "dry_run": {"type": "boolean"},
                "kind": {"type": "string", "enum": ["issue", "pull"]},
                "note": {"type": ["string", "null"]}
            },
            "required": ["day", "at", "contact", "page", "request_id", "code", "short", "limit",
                         "above", "share", "dry_run", "kind", "note"]
        }),
        // Objects, arrays, references and compositions, given as JSON text.
        json!({
            "type": "object",
            "$defs": {
                "person": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "email": {"type": "string", "format": "email"}
                    },
                    "required": ["name", "email"],
                    "additionalProperties": false
                }
            },
            "properties": {
                "attendees": {"type": "array", "items": {"$ref": "#/$defs/person"}, "minItems": 2},
                "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "owner": {"$ref": "#/$defs/person"},
                "window": {
                    "type": "object",
                    "properties": {
                        "start": {"type": "string", "format": "date"},
                        "days": {"type": "integer", "minimum": 1, "maximum": 3}
                    },
                    "required": ["start", "days"]
                },
                "target": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 5}]},
                "mode": {"const": "fast"},
                "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
            },
            "required": ["attendees", "labels", "owner", "window", "target", "mode", "matrix"],
            "additionalProperties": false
        }),
        // Examples the schema gives, one of them a placeholder.
        json!({
            "type": "object",
            "properties": {
                "repo": {"type": "string", "examples": ["<owner>/<repo>", "octo-org/tools"]},
                "issue": {"type": "integer", "examples": [1347]}
            },
            "required": ["repo", "issue"]
        }),
    ];
    for schema in &schemas {
        let arguments = mcp_arguments(schema).unwrap_or_else(|e| panic!("{e}\nfor {schema}"));
        let mut found = Vec::new();
        texts(&Value::Object(arguments.clone()), &mut found);
        for text in found {
            assert!(!looks_like_placeholder(&text), "{text:?} in {arguments:?}");
        }
        let required = schema["required"].as_array().unwrap();
        assert_eq!(arguments.len(), required.len(), "{arguments:?}");
    }
    // The values the schema's `examples` give, when they are not placeholders.
    let arguments = mcp_arguments(&schemas[2]).unwrap();
    assert_eq!(
        Value::Object(arguments),
        json!({"repo": "octo-org/tools", "issue": 1347})
    );
}

/// A random property schema: typed values with bounds and formats, enums, arrays, objects
/// and compositions, nested.
fn property() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        (
            proptest::option::of(0i64..50),
            proptest::option::of(0i64..50)
        )
            .prop_map(|(a, b)| {
                let mut s = json!({"type": "integer"});
                if let Some(a) = a {
                    s["minimum"] = json!(a);
                }
                if let Some(b) = b {
                    s["maximum"] = json!(a.unwrap_or(0).max(b));
                }
                s
            }),
        (proptest::option::of(-5.0f64..5.0), 0.0f64..10.0).prop_map(|(low, width)| {
            match low {
                Some(low) => json!({"type": "number", "minimum": low, "maximum": low + width}),
                None => json!({"type": "number"}),
            }
        }),
        prop::sample::select(vec![
            json!({"type": "string"}),
            json!({"type": "string", "format": "date"}),
            json!({"type": "string", "format": "email"}),
            json!({"type": "string", "format": "uri"}),
            json!({"type": "string", "minLength": 50}),
            json!({"type": "string", "maxLength": 2}),
            json!({"type": "boolean"}),
            json!({"type": ["string", "null"]}),
            json!({"enum": ["a", "b"]}),
            json!({"type": "string", "enum": ["<a>", "b"]}),
            json!({"type": "string", "examples": ["your_value_here"]}),
            json!({"const": 3}),
            json!({"type": "number", "exclusiveMinimum": 0, "maximum": 0.5}),
            json!({"type": "number", "exclusiveMinimum": 0.1, "exclusiveMaximum": 0.2}),
            json!({"type": "integer", "exclusiveMaximum": 2}),
        ]),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (inner.clone(), 0usize..3, proptest::option::of(3usize..5)).prop_map(
                |(items, fewest, most)| {
                    let mut s = json!({"type": "array", "items": items, "minItems": fewest});
                    if let Some(most) = most {
                        s["maxItems"] = json!(most);
                    }
                    s
                }
            ),
            proptest::collection::btree_map("[a-z]{1,8}", inner.clone(), 0..4).prop_map(
                |members| {
                    let required: Vec<&String> = members.keys().collect();
                    json!({
                        "type": "object",
                        "properties": members,
                        "required": required,
                        "additionalProperties": false,
                    })
                }
            ),
            (inner.clone(), inner).prop_map(|(a, b)| json!({"anyOf": [a, b]})),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// For any schema, the example call passes the pipeline's checks and the check of its
    /// arguments against the schema, with no text in them that looks like a placeholder.
    #[test]
    fn any_mcp_tools_example_fits_its_own_schema(
        members in proptest::collection::btree_map("[a-z][a-z_]{0,10}", property(), 1..5)
    ) {
        let required: Vec<&String> = members.keys().collect();
        let schema = json!({"type": "object", "properties": members, "required": required});
        let arguments = mcp_arguments(&schema);
        prop_assert!(arguments.is_ok(), "{:?}\nfor {}", arguments, schema);
        let mut found = Vec::new();
        texts(&Value::Object(arguments.unwrap()), &mut found);
        for text in found {
            prop_assert!(!looks_like_placeholder(&text), "{:?} for {}", text, schema);
        }
    }
}
