//! The check's items: what each asks, with which tools, and what answers it.
//!
//! An item is one JSON object per line (JSONL). The built-in set ([`builtin`], about 200
//! items) is compiled into the binary from `items.jsonl`, which `scripts/gen-tool-check.py`
//! writes (every item written by us, from a handful of realistic tools); `--items FILE` reads
//! another set of the same shape. [`parse_items`] checks every item before anything is asked:
//! an expected call must name one of the item's tools and every argument rule one of that
//! tool's parameters, so a mistake in a set is found at its line, not after an hour of asking.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::schema::{params_from_schema, SchemaParams};
use crate::tools::ToolSpec;

/// The built-in items, as shipped.
pub const BUILTIN_ITEMS: &str = include_str!("items.jsonl");

/// The name the built-in set is stored under.
pub const BUILTIN_SET: &str = "built-in";

/// What an item tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// One call with typed arguments (string, integer, number, boolean, enum, array).
    OneCall,
    /// The right tool among several.
    ChooseTool,
    /// Two calls (in one answer or over two rounds).
    TwoCalls,
    /// A value taken from earlier in the conversation.
    FromContext,
    /// A question that needs no tool.
    NoTool,
    /// A request missing a required value: the model should ask, not call.
    MissingValue,
}

impl ItemKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [ItemKind; 6] = [
        ItemKind::OneCall,
        ItemKind::ChooseTool,
        ItemKind::TwoCalls,
        ItemKind::FromContext,
        ItemKind::NoTool,
        ItemKind::MissingValue,
    ];

    /// Its name in items files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::OneCall => "one_call",
            ItemKind::ChooseTool => "choose_tool",
            ItemKind::TwoCalls => "two_calls",
            ItemKind::FromContext => "from_context",
            ItemKind::NoTool => "no_tool",
            ItemKind::MissingValue => "missing_value",
        }
    }
}

/// Who wrote a message of an item's conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemRole {
    /// The person.
    User,
    /// The model, earlier in the conversation.
    Assistant,
}

/// One message of an item's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemMessage {
    /// Who wrote it.
    pub role: ItemRole,
    /// What it says.
    pub content: String,
}

/// A tool offered by an item, as native tool calling describes one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemTool {
    /// Its name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of its arguments (an object).
    pub parameters: Value,
}

/// A rule one argument of an expected call must meet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum ArgRule {
    /// The same JSON value (numbers compared as numbers, strings without surrounding space).
    Exact {
        /// The value.
        exact: Value,
    },
    /// The same text, ignoring case and surrounding space.
    CaseInsensitive {
        /// The text.
        ci: String,
    },
    /// A number within `tolerance` of `number`.
    Number {
        /// The number.
        number: f64,
        /// How far off it may be.
        #[serde(default)]
        tolerance: f64,
    },
    /// Text holding each of these (ignoring case); for an array, an element holding each.
    Contains {
        /// What it must hold.
        contains: Vec<String>,
    },
    /// Present, with any value.
    Any {
        /// `true`.
        any: bool,
    },
}

/// A call an item expects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    /// The tool.
    pub name: String,
    /// Rules for the arguments that matter; others may be anything the schema allows.
    #[serde(default)]
    pub arguments: IndexMap<String, ArgRule>,
}

/// What answers an item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// The calls, in any order; none: the answer must make no call.
    #[serde(default)]
    pub calls: Vec<ExpectedCall>,
}

/// One item of the check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckItem {
    /// Unique within its set.
    pub id: String,
    /// What it tests.
    pub kind: ItemKind,
    /// The conversation so far, ending with the person's message.
    pub messages: Vec<ItemMessage>,
    /// The tools offered.
    pub tools: Vec<ItemTool>,
    /// What answers it.
    pub expected: Expected,
}

/// An item's tool as the engine offers and checks tools: its spec (for the instructions, the
/// native definition and the grammar) and its schema (for the check of arguments before a
/// call, as an MCP tool's).
#[derive(Debug, Clone)]
pub struct CompiledTool {
    /// The spec.
    pub spec: ToolSpec,
    /// The schema read into parameters.
    pub schema: SchemaParams,
}

impl ItemTool {
    /// The tool as the engine offers it (see [`CompiledTool`]).
    pub fn compile(&self) -> CompiledTool {
        let object = self.parameters.as_object().cloned().unwrap_or_default();
        let schema = params_from_schema(&object);
        CompiledTool {
            spec: ToolSpec {
                name: self.name.clone(),
                description: self.description.clone(),
                params: schema.params.clone(),
                input_schema: Some(self.parameters.clone()),
            },
            schema,
        }
    }
}

/// Read an items set (JSONL; blank lines and lines starting with `#` are skipped), every item
/// checked. `source` names the set in errors (`FILE:LINE: …`).
pub fn parse_items(text: &str, source: &str) -> Result<Vec<CheckItem>, String> {
    let mut items = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let at = |why: String| format!("{source}:{line_no}: {why}");
        let item: CheckItem = serde_json::from_str(trimmed).map_err(|e| {
            at(format!(
                "not a check item ({e}); an item is {{\"id\", \"kind\", \"messages\", \"tools\", \"expected\": {{\"calls\": [{{\"name\", \"arguments\": {{NAME: RULE}}}}]}}}}, a rule one of {{\"exact\": V}}, {{\"ci\": \"text\"}}, {{\"number\": N, \"tolerance\": T}}, {{\"contains\": [\"text\"]}}, {{\"any\": true}}"
            ))
        })?;
        check_item(&item).map_err(|why| at(format!("item `{}`: {why}", item.id)))?;
        if !ids.insert(item.id.clone()) {
            return Err(at(format!("the id `{}` is used twice", item.id)));
        }
        items.push(item);
    }
    if items.is_empty() {
        return Err(format!("{source}: no items (one JSON object per line)"));
    }
    Ok(items)
}

/// The built-in items.
pub fn builtin() -> Vec<CheckItem> {
    parse_items(BUILTIN_ITEMS, "items.jsonl").unwrap_or_else(|e| {
        // The engine's tests read the shipped file: this cannot happen in a release.
        tracing::error!("the built-in check items do not read: {e}");
        Vec::new()
    })
}

/// `count` of `items` spread over the kinds: the first of each kind (in [`ItemKind::ALL`]'s
/// order), then the second of each, and so on, so a short check still asks every kind.
pub fn spread(items: Vec<CheckItem>, count: usize) -> Vec<CheckItem> {
    let mut seen = std::collections::HashMap::new();
    let mut ranked: Vec<(usize, usize, CheckItem)> = items
        .into_iter()
        .map(|item| {
            let n = seen.entry(item.kind).or_insert(0usize);
            *n += 1;
            let kind = ItemKind::ALL
                .iter()
                .position(|k| *k == item.kind)
                .unwrap_or(0);
            (*n, kind, item)
        })
        .collect();
    ranked.sort_by_key(|(n, kind, _)| (*n, *kind));
    ranked
        .into_iter()
        .take(count)
        .map(|(_, _, item)| item)
        .collect()
}

fn check_item(item: &CheckItem) -> Result<(), String> {
    if item.id.trim().is_empty() {
        return Err("the id is empty".into());
    }
    match item.messages.last() {
        Some(last) if last.role == ItemRole::User => {}
        _ => return Err("the conversation must end with a user message".into()),
    }
    let mut names = std::collections::HashSet::new();
    for tool in &item.tools {
        if !names.insert(tool.name.as_str()) {
            return Err(format!("the tool `{}` is offered twice", tool.name));
        }
        if !tool.parameters.is_object() {
            return Err(format!(
                "the tool `{}`'s parameters must be a JSON Schema object",
                tool.name
            ));
        }
    }
    let no_call = matches!(item.kind, ItemKind::NoTool | ItemKind::MissingValue);
    if no_call != item.expected.calls.is_empty() {
        return Err(format!(
            "a `{}` item expects {}",
            item.kind.as_str(),
            if no_call {
                "no call"
            } else {
                "at least one call"
            }
        ));
    }
    for call in &item.expected.calls {
        let Some(tool) = item.tools.iter().find(|t| t.name == call.name) else {
            return Err(format!(
                "it expects a call to `{}`, which it does not offer",
                call.name
            ));
        };
        let properties = tool.parameters.get("properties").and_then(Value::as_object);
        for (name, rule) in &call.arguments {
            if !properties.is_some_and(|p| p.contains_key(name)) {
                return Err(format!(
                    "a rule names the argument `{name}`, which `{}` does not take",
                    call.name
                ));
            }
            if let ArgRule::Any { any: false } = rule {
                return Err(format!(
                    "the rule of `{name}` is {{\"any\": false}}; leave the argument out instead"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_items_read_and_cover_every_kind() {
        let items = parse_items(BUILTIN_ITEMS, "items.jsonl").unwrap();
        assert!(items.len() >= 200, "{}", items.len());
        for kind in ItemKind::ALL {
            let n = items.iter().filter(|i| i.kind == kind).count();
            assert!(n >= 20, "{} items of {}", n, kind.as_str());
        }
        // Every argument type is asked for somewhere.
        let text = BUILTIN_ITEMS;
        for needle in [
            "\"type\": \"integer\"",
            "\"type\": \"number\"",
            "\"type\": \"boolean\"",
            "\"enum\"",
            "\"type\": \"array\"",
        ] {
            assert!(text.contains(needle), "{needle}");
        }
    }

    #[test]
    fn a_short_check_asks_every_kind() {
        let items = parse_items(BUILTIN_ITEMS, "items.jsonl").unwrap();
        let some = spread(items, 12);
        let kinds: Vec<ItemKind> = some.iter().map(|i| i.kind).collect();
        assert_eq!(kinds[..6], ItemKind::ALL);
        assert_eq!(kinds[6..], ItemKind::ALL);
        assert_eq!(some[0].id, "one_call-001");
        assert_eq!(some[6].id, "one_call-002");
    }

    /// The instructions' example of every tool the items offer is a valid call of it, and no
    /// value it shows is one an item asks for (unless the tool's own description shows it
    /// too): a model that copies the example does not pass for one that understood.
    #[test]
    fn the_instructions_examples_are_valid_calls_that_answer_no_item() {
        use crate::check::score::{read_call, rule_holds, CallSource};
        let items = parse_items(BUILTIN_ITEMS, "items.jsonl").unwrap();
        let mut examples_checked = 0;
        for item in &items {
            let tools: Vec<CompiledTool> = item.tools.iter().map(ItemTool::compile).collect();
            for tool in &tools {
                let example = crate::parser::xml_example(&tool.spec);
                let calls = crate::parser::parse(&example);
                assert_eq!(calls.len(), 1, "{example}");
                let made = read_call(&tools, &tool.spec.name, &calls[0].params, CallSource::Xml);
                let Some(arguments) = made.arguments else {
                    panic!("{}: {:?}\n{example}", item.id, made.problem);
                };
                examples_checked += 1;
                let expected = item
                    .expected
                    .calls
                    .iter()
                    .filter(|c| c.name == tool.spec.name);
                for (name, rule) in expected.flat_map(|c| &c.arguments) {
                    let (Some(value), false) =
                        (arguments.get(name), matches!(rule, ArgRule::Any { .. }))
                    else {
                        continue;
                    };
                    let shown = crate::tools::pipeline::value_text(value);
                    let described = tool.spec.description.contains(&shown)
                        || tool
                            .spec
                            .params
                            .iter()
                            .any(|p| p.description.contains(&shown));
                    assert!(
                        described || !rule_holds(rule, value),
                        "{}: the example's {name} = {value} is what the item asks for",
                        item.id
                    );
                }
            }
        }
        let offered: usize = items.iter().map(|i| i.tools.len()).sum();
        assert!(offered > 600 && examples_checked == offered);
    }

    #[test]
    fn a_broken_item_is_refused_at_its_line_saying_what_is_wrong() {
        let good = r#"{"id": "a", "kind": "no_tool", "messages": [{"role": "user", "content": "hi"}], "tools": [], "expected": {"calls": []}}"#;
        let cases = [
            ("{not json", "not a check item"),
            (
                r#"{"id": "b", "kind": "one_call", "messages": [{"role": "user", "content": "x"}], "tools": [], "expected": {"calls": [{"name": "t"}]}}"#,
                "does not offer",
            ),
            (
                r#"{"id": "b", "kind": "one_call", "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}], "expected": {"calls": [{"name": "t", "arguments": {"b": {"any": true}}}]}}"#,
                "does not take",
            ),
            (
                r#"{"id": "b", "kind": "one_call", "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}], "expected": {"calls": [{"name": "t", "arguments": {"a": {"roughly": 1}}}]}}"#,
                "a rule one of",
            ),
            (
                r#"{"id": "b", "kind": "no_tool", "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "t", "parameters": {"type": "object"}}], "expected": {"calls": [{"name": "t"}]}}"#,
                "expects no call",
            ),
            (
                r#"{"id": "b", "kind": "no_tool", "messages": [{"role": "assistant", "content": "x"}], "tools": [], "expected": {"calls": []}}"#,
                "end with a user message",
            ),
            (good, "used twice"),
        ];
        for (line, why) in cases {
            let text = format!("{good}\n\n{line}\n");
            let err = parse_items(&text, "small.jsonl").unwrap_err();
            assert!(err.starts_with("small.jsonl:3: "), "{err}");
            assert!(err.contains(why), "{line}: {err}");
        }
        assert!(parse_items("\n# nothing\n", "e.jsonl")
            .unwrap_err()
            .contains("no items"));
    }
}
