//! The `<tool_instructions>` block of the system prompt, generated from tool definitions.
//!
//! Shape (from seed 000):
//!
//! ```text
//! <tool_instructions>
//! <format>
//! …how to call tools…
//! </format>
//!
//! <tool name="web_search">
//! description
//! Parameters:
//!   - query: string (required) - Search query
//!   - count: integer (optional) - Number of results. Default: 10
//! Example:
//! <tool_call>
//!   <name>web_search</name>
//!   <params>
//!     <query><![CDATA[quarterly sales figures]]></query>
//!     <count><![CDATA[10]]></count>
//!   </params>
//! </tool_call>
//! </tool>
//!
//! </tool_instructions>
//! ```
//!
//! The example shows every required parameter (its default, else its first allowed value, else a
//! plausible real value drawn from its schema, description, name and type: see
//! [`examples`](crate::examples); never a placeholder such as `your_query_here`, which small
//! models copy) and every optional parameter that has a default and no list of allowed values
//! (the listed values already show those). Every value is wrapped in CDATA.

use artifactflow_ground::tool_spec::{ParamSpec, ToolSpec};

use crate::examples::{default_text, example_value};

const FORMAT: &str = "You may make one or more tool calls per turn. They execute sequentially.\n\
Wrap ALL parameter values in <![CDATA[...]]>.";

/// The whole `<tool_instructions>` block for the tools an agent may use, in the given order.
pub fn tool_instructions(tools: &[ToolSpec]) -> String {
    let mut out = String::from("<tool_instructions>\n<format>\n");
    out.push_str(FORMAT);
    out.push_str("\n</format>\n\n");
    for tool in tools {
        out.push_str("<tool name=\"");
        out.push_str(&tool.name);
        out.push_str("\">\n");
        let description = tool.description.trim();
        if !description.is_empty() {
            out.push_str(description);
            out.push('\n');
        }
        if tool.params.is_empty() {
            out.push_str("Parameters: none\n");
        } else {
            out.push_str("Parameters:\n");
            for p in &tool.params {
                param_line(p, &mut out);
            }
        }
        out.push_str("Example:\n");
        out.push_str(&xml_example(tool));
        out.push_str("\n</tool>\n\n");
    }
    out.push_str("</tool_instructions>");
    out
}

fn param_line(p: &ParamSpec, out: &mut String) {
    out.push_str("  - ");
    out.push_str(&p.name);
    out.push_str(": ");
    out.push_str(p.kind.as_str());
    out.push_str(if p.required {
        " (required)"
    } else {
        " (optional)"
    });
    let mut notes: Vec<String> = Vec::new();
    let description = p.description.trim().trim_end_matches('.');
    if !description.is_empty() {
        notes.push(description.to_string());
    }
    if let Some(values) = p.enum_values.as_ref().filter(|v| !v.is_empty()) {
        notes.push(format!("Values: {}", values.join(", ")));
    }
    if let Some(d) = p.default.as_ref().and_then(default_text) {
        notes.push(format!("Default: {d}"));
    }
    if !notes.is_empty() {
        out.push_str(" - ");
        out.push_str(&notes.join(". "));
    }
    out.push('\n');
}

/// Wrap a value in CDATA, splitting any `]]>` inside it.
fn cdata(value: &str) -> String {
    format!("<![CDATA[{}]]>", value.replace("]]>", "]]]]><![CDATA[>"))
}

/// An XML call example for one tool, every value in CDATA.
pub fn xml_example(tool: &ToolSpec) -> String {
    let mut out = format!("<tool_call>\n  <name>{}</name>\n", tool.name);
    let lines: Vec<String> = tool
        .params
        .iter()
        .filter_map(|p| {
            example_value(tool, p).map(|v| format!("    <{0}>{1}</{0}>\n", p.name, cdata(&v)))
        })
        .collect();
    if !lines.is_empty() {
        out.push_str("  <params>\n");
        for l in lines {
            out.push_str(&l);
        }
        out.push_str("  </params>\n");
    }
    out.push_str("</tool_call>");
    out
}
