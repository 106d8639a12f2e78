//! Adding a tool in Rust (seed 001, path B), end to end:
//! 1. implement [`Tool`]: a [`ToolSpec`] with the parameters, a default permission, and
//!    `execute` doing only the work (the pipeline already coerced, defaulted and validated);
//! 2. register an instance (for a built-in: add it to `engine::tools::builtin::builtin_tools`);
//! 3. list it in an agent's `tools:` map, e.g. `word_count: auto`.

use engine::tools::{pipeline, Params, Permission, Tool, ToolContext, ToolResult, ToolSpec};
use engine::tools::{ParamSpec, ParamType};
use serde_json::json;

use crate::http_tool::params;

/// Counts words, optionally only those longer than `min_len`.
struct WordCount {
    spec: ToolSpec,
}

impl WordCount {
    fn new() -> Self {
        WordCount {
            spec: ToolSpec {
                name: "word_count".into(),
                description: "Count the words in a text".into(),
                input_schema: None,
                params: vec![
                    ParamSpec::new("text", ParamType::String, "The text"),
                    ParamSpec::new("min_len", ParamType::Integer, "Only count longer words")
                        .with_default(json!(0)),
                ],
            },
        }
    }
}

#[async_trait::async_trait]
impl Tool for WordCount {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        Permission::Auto
    }

    async fn execute(&self, params: Params, _ctx: &ToolContext) -> ToolResult {
        // Types and defaults are guaranteed by the pipeline.
        let text = params["text"].as_str().unwrap();
        let min_len = params["min_len"].as_i64().unwrap() as usize;
        let n = text
            .split_whitespace()
            .filter(|w| w.chars().count() > min_len)
            .count();
        ToolResult::ok(n.to_string()).with_meta("words", n)
    }
}

#[tokio::test]
async fn a_custom_tool_runs_through_the_pipeline() {
    let tool = WordCount::new();
    let ctx = ToolContext::default();
    let r = pipeline::run(&tool, &params(&[("text", "a bb ccc dddd")]), &ctx).await;
    assert_eq!((r.success, r.data.as_str()), (true, "4"));
    let r = pipeline::run(
        &tool,
        &params(&[("text", "a bb ccc dddd"), ("min_len", "2")]),
        &ctx,
    )
    .await;
    assert_eq!(r.data, "2");
    let r = pipeline::run(&tool, &params(&[("min_len", "x")]), &ctx).await;
    assert!(!r.success);
    // Its instructions are generated from the spec, like every other tool's.
    let block = engine::parser::tool_instructions(&[tool.spec().clone()]);
    assert!(block.contains("<tool name=\"word_count\">") && block.contains("<text><![CDATA["));
}
