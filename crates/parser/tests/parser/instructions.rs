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

// ---- example values: plausible, never placeholders ------------------------------------------

/// What a placeholder looks like: SmolLM2-135M created an artifact named `your_id_here` with
/// `your_title_here` and `your_content_here`, copied from the example.
fn placeholder() -> &'static regex::Regex {
    static PLACEHOLDER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?is)your_|_here|<.*>|placeholder|example_value").unwrap()
    });
    &PLACEHOLDER
}

/// The value the example of a one-parameter tool gives that parameter.
fn example_of(param: ParamSpec) -> Option<String> {
    let tool = ToolSpec {
        name: "some_tool".into(),
        description: String::new(),
        input_schema: None,
        params: vec![param],
    };
    let calls = parse(&xml_example(&tool));
    assert_eq!(calls.len(), 1);
    calls[0].params.values().next().cloned()
}

#[test]
fn example_values_are_drawn_from_the_name_type_and_description() {
    use ParamType::*;
    let s = |name: &str, description: &str| ParamSpec::new(name, String, description);
    let cases: Vec<(ParamSpec, &str)> = vec![
        // By name.
        (s("id", "The artifact's id"), "quarterly-report"),
        (s("title", "A short human title"), "Quarterly report"),
        (
            s("content", "The full initial content"),
            "Sales rose 4% in the second quarter.",
        ),
        (s("url", ""), "https://example.com/report"),
        (s("query", "Search query"), "quarterly sales figures"),
        (s("agent_name", "Name of the agent to call"), "researcher"),
        (s("city_name", ""), "Porto"),
        (s("file_name", ""), "quarterly-report.md"),
        (s("old_str", ""), "second quarter"),
        (s("new_str", ""), "third quarter"),
        (s("startTime", ""), "16:45"),
        (ParamSpec::new("count", Integer, "How many"), "6"),
        (ParamSpec::new("version", Integer, "A past version"), "2"),
        (ParamSpec::new("latitude", Number, ""), "41.1579"),
        (ParamSpec::new("ratio", Number, ""), "0.5"),
        (ParamSpec::new("exact", Boolean, "Exact match"), "true"),
        // By what the description says it is.
        (s("to", "The recipient's email address"), "kim@example.com"),
        (s("when", "The day, as YYYY-MM-DD (ISO date)"), "2026-05-18"),
        (s("at", "The start, as HH:MM"), "16:45"),
        (
            s("target", "Full URL of the page (http:// or https://)"),
            "https://example.com/report",
        ),
        // The example the description gives.
        (s("id", "A new id, e.g. 'report' or 'plan_v1'"), "report"),
        (
            s("script", "The script's path, e.g. scripts/convert.py"),
            "scripts/convert.py",
        ),
        (s("unit", "The unit it is in, e.g. km, mi, kg"), "km"),
        (ParamSpec::new("count", Integer, "How many, e.g. 12"), "12"),
        // ... unless it is a placeholder or no example at all.
        (s("id", "The id, e.g. <your-id>"), "quarterly-report"),
        (s("city", "e.g. the city's name"), "Porto"),
        // Within the bounds the description gives.
        (
            ParamSpec::new("count", Integer, "Number of results (1-50)"),
            "6",
        ),
        (ParamSpec::new("limit", Integer, "At most 4"), "4"),
        (
            ParamSpec::new("days", Integer, "How many days ahead (8 to 14)"),
            "8",
        ),
        (
            ParamSpec::new("timeout_secs", Integer, "Seconds (at most 600)"),
            "30",
        ),
        (ParamSpec::new("n", Integer, "between 10 and 20"), "10"),
        (ParamSpec::new("level", Number, "min 3.5"), "4.0"),
        (
            ParamSpec::new("share", Number, "between 0.1 and 0.2"),
            "0.15",
        ),
        // Its type when nothing else says more.
        (s("frobnicate", ""), "quarterly report"),
        (ParamSpec::new("frobnicate", Integer, ""), "6"),
        (ParamSpec::new("frobnicate", Number, ""), "2.5"),
        // An allowed value, a default.
        (s("mode", "").with_values(["fast", "slow"]), "fast"),
        (s("mode", "").with_values(["<auto>", "fast"]), "fast"),
        (
            ParamSpec {
                required: true,
                ..s("mode", "").with_default(json!("slow"))
            },
            "slow",
        ),
    ];
    for (param, want) in cases {
        let what = format!("{} ({})", param.name, param.description);
        assert_eq!(example_of(param).as_deref(), Some(want), "{what}");
    }
    // An optional parameter is shown with its default, unless that looks like a placeholder.
    assert_eq!(
        example_of(s("n", "").with_default(json!("10"))).as_deref(),
        Some("10")
    );
    assert_eq!(
        example_of(s("key", "").with_default(json!("your_key_here"))),
        None
    );
}

#[test]
fn no_example_value_of_the_pinned_tools_looks_like_a_placeholder() {
    let mut tools = vec![web_search()];
    tools.extend(other_tools());
    let instructions = tool_instructions(&tools);
    for call in parse(&instructions) {
        for (name, value) in &call.params {
            assert!(
                !placeholder().is_match(value),
                "{}: {name} = {value:?}",
                call.name
            );
        }
    }
}

/// Is `call` a valid call of `tool`: its name, only its parameters, every required one, each
/// value of its type, one of its allowed values, within the bounds its description gives (as
/// the example generator reads them: `(A-B)`, `A to B`, `at most N`), JSON where it asks for
/// JSON?
fn check_call(call: &artifactflow_parser::ToolCall, tool: &ToolSpec) -> Result<(), String> {
    if call.name != tool.name {
        return Err(format!("named {:?} ({:?})", call.name, call.error));
    }
    for (name, value) in &call.params {
        let p = tool
            .params
            .iter()
            .find(|p| &p.name == name)
            .ok_or_else(|| format!("no parameter {name}"))?;
        if let Some(values) = &p.enum_values {
            if !values.contains(value) {
                return Err(format!("{name}: {value:?} is not one of {values:?}"));
            }
        }
        let number = match p.kind {
            ParamType::String => None,
            ParamType::Integer => Some(value.parse::<i64>().map(|n| n as f64).ok()),
            ParamType::Number => Some(value.parse::<f64>().ok().filter(|n| n.is_finite())),
            ParamType::Boolean if value == "true" || value == "false" => None,
            ParamType::Boolean => return Err(format!("{name}: {value:?} is not a boolean")),
        };
        match number {
            Some(None) => return Err(format!("{name}: {value:?} is not a {}", p.kind.as_str())),
            Some(Some(n)) if p.default.is_none() => {
                let (low, high) = bounds(&p.description);
                if low.is_some_and(|low| n < low) || high.is_some_and(|high| n > high) {
                    return Err(format!("{name}: {n} is outside {:?}", p.description));
                }
            }
            _ => {}
        }
        if p.description.contains("give a JSON") && p.enum_values.is_none() && p.default.is_none() {
            serde_json::from_str::<serde_json::Value>(value)
                .map_err(|e| format!("{name}: {value:?} is not JSON: {e}"))?;
        }
    }
    for p in tool.params.iter().filter(|p| p.required) {
        if !call.params.contains_key(&p.name) {
            return Err(format!("the required {} is missing", p.name));
        }
    }
    Ok(())
}

/// The bounds the generated descriptions below give.
fn bounds(description: &str) -> (Option<f64>, Option<f64>) {
    static RANGE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\((-?\d+)-(-?\d+)\)|(-?\d+) to (-?\d+)").unwrap()
    });
    static MOST: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"at most (-?\d+)").unwrap());
    if let Some(c) = RANGE.captures(description) {
        let n = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<f64>().ok());
        let (low, high) = (n(1).or(n(3)), n(2).or(n(4)));
        if low <= high {
            return (low, high);
        }
    }
    let high = MOST
        .captures(description)
        .and_then(|c| c[1].parse::<f64>().ok());
    (None, high)
}

mod generated {
    use super::*;
    use proptest::prelude::*;

    /// Names: words the generator knows, words it does not, and names that look like
    /// placeholders themselves.
    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "id",
                "title",
                "content",
                "url",
                "query",
                "count",
                "limit",
                "version",
                "path",
                "email",
                "date",
                "start_time",
                "latitude",
                "enabled",
                "agent_name",
                "city",
                "tags",
                "body",
                "to",
                "old_str",
                "new_str",
                "max_results",
                "timeout_secs",
                "your_id_here",
                "placeholder",
                "example_value",
                "q",
                "userId",
                "fileName",
            ])
            .prop_map(str::to_string),
            "[a-z][a-z_]{0,11}",
        ]
    }

    fn description() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "",
                "Search query",
                "The recipient's email address",
                "The day, as YYYY-MM-DD",
                "The start time, as HH:MM (24-hour)",
                "A new id, e.g. 'report' or 'plan_v1'",
                "The id, e.g. <your-id>",
                "e.g. your_value_here",
                "for example the name",
                "Full URL of the page (http:// or https://)",
                "Number of results to return (1-50)",
                "How many days ahead (3 to 7)",
                "Seconds before it is stopped (at most 600)",
                "How many, e.g. 99 (at most 10)",
                "Negative (-20--5)",
                "The file's path, relative to the documents folder",
                "(give a JSON array)",
                "(give a JSON object)",
            ])
            .prop_map(str::to_string),
            "[a-zA-Z0-9 ,.()'_<>-]{0,30}",
        ]
    }

    fn kind() -> impl Strategy<Value = ParamType> {
        prop::sample::select(vec![
            ParamType::String,
            ParamType::Integer,
            ParamType::Number,
            ParamType::Boolean,
        ])
    }

    /// Allowed values and defaults, some of them placeholders.
    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9 _.-]{1,8}",
            prop::sample::select(vec!["<auto>", "your_mode", "mode_here", "placeholder"])
                .prop_map(str::to_string),
        ]
    }

    fn param() -> impl Strategy<Value = ParamSpec> {
        (
            name(),
            kind(),
            description(),
            any::<bool>(),
            proptest::option::of(word()),
            proptest::option::of(proptest::collection::vec(word(), 1..4)),
        )
            .prop_map(|(name, kind, description, required, default, values)| {
                let mut p = ParamSpec::new(name, kind, description);
                p.required = required;
                // Typed parameters get allowed values and defaults of their type.
                if kind == ParamType::String {
                    p.default = default.map(serde_json::Value::from);
                    p.enum_values = values;
                }
                p
            })
    }

    fn tool() -> impl Strategy<Value = ToolSpec> {
        proptest::collection::vec(param(), 0..6).prop_map(|params| {
            let mut seen = std::collections::HashSet::new();
            ToolSpec {
                name: "some_tool".into(),
                description: "A tool".into(),
                input_schema: None,
                params: params
                    .into_iter()
                    .filter(|p| seen.insert(p.name.clone()))
                    .collect(),
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Every example reads back as one valid call of its tool, and no value in it looks
        /// like a placeholder unless the tool allows nothing else.
        #[test]
        fn every_example_is_a_valid_call_without_placeholders(tool in tool()) {
            let example = xml_example(&tool);
            let calls = parse(&example);
            prop_assert_eq!(calls.len(), 1, "{}", example);
            if let Err(e) = check_call(&calls[0], &tool) {
                prop_assert!(false, "{}\nin {}", e, example);
            }
            for (name, value) in &calls[0].params {
                let p = tool.params.iter().find(|p| &p.name == name).unwrap();
                let forced = p
                    .enum_values
                    .as_ref()
                    .is_some_and(|v| v.iter().all(|v| placeholder().is_match(v)));
                prop_assert!(
                    forced || !placeholder().is_match(value),
                    "{} = {:?} looks like a placeholder\nin {}", name, value, example
                );
            }
            // The same, deterministically: the same tool gives the same example.
            prop_assert_eq!(example, xml_example(&tool));
        }
    }
}
