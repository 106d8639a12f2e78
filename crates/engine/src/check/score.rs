//! Scoring by rules: no judge model.
//!
//! Each call read from an answer is first checked as the engine checks a call before running
//! it ([`read_call`]): a tool the item offers, its parameters coerced to their types, defaults
//! filled, required ones present, no unknown one, enums respected, arrays and objects parsed
//! and checked against the schema. Then [`score_item`] compares the valid calls with the
//! item's expected ones, in any order, each argument by its [`ArgRule`]:
//!
//! | verdict | when |
//! |---|---|
//! | as asked | the expected calls, each argument meeting its rule (or no call when none is expected) |
//! | wrong arguments | the right tools, an argument off |
//! | wrong tool | valid calls, not of the expected tools (or not as many) |
//! | invalid call | a call that could not be read, names no tool of the item, or breaks its schema |
//! | no call | a call was needed and none was made |
//! | unwanted call | no call was needed (the question needs no tool, or a value is missing) and one was made |
//! | failed | the request failed (the model's server said why) |

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::items::{ArgRule, CheckItem, CompiledTool, ExpectedCall, ItemKind};
use crate::parser::Params;

/// How a call reached the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum CallSource {
    /// Written in the text in the XML `<tool_call>` format.
    Xml,
    /// The API's native tool calls.
    Native,
    /// Written in the text in another family's form (the forms reader).
    Written,
}

/// A call read from an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MadeCall {
    /// The tool it names (empty when it could not be read).
    pub name: String,
    /// Its arguments, typed, when the call is valid.
    pub arguments: Option<Map<String, Value>>,
    /// Why it is not a valid call.
    pub problem: Option<String>,
    /// How it came.
    pub source: CallSource,
}

impl MadeCall {
    /// Is it a call the engine would run?
    pub fn is_valid(&self) -> bool {
        self.arguments.is_some()
    }

    /// A call that could not be read.
    pub fn unreadable(problem: impl Into<String>, source: CallSource) -> MadeCall {
        MadeCall {
            name: String::new(),
            arguments: None,
            problem: Some(problem.into()),
            source,
        }
    }
}

/// A call of `name` with the parser's string parameters `raw`, checked against `tools` as the
/// engine checks a call before running it.
pub fn read_call(tools: &[CompiledTool], name: &str, raw: &Params, source: CallSource) -> MadeCall {
    let invalid = |problem: String| MadeCall {
        name: name.to_string(),
        arguments: None,
        problem: Some(problem),
        source,
    };
    let Some(tool) = tools.iter().find(|t| t.spec.name == name) else {
        let offered: Vec<_> = tools.iter().map(|t| t.spec.name.as_str()).collect();
        return invalid(format!(
            "there is no tool `{name}` (offered: {})",
            offered.join(", ")
        ));
    };
    let typed = match crate::tools::pipeline::prepare(&tool.spec.params, raw) {
        Ok(typed) => typed,
        Err(why) => return invalid(why),
    };
    match crate::mcp::schema::to_arguments(&tool.schema, &typed) {
        Ok(arguments) => MadeCall {
            name: name.to_string(),
            arguments: Some(arguments),
            problem: None,
            source,
        },
        Err(why) => invalid(why),
    }
}

/// What an answer to an item came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// As the item asks.
    AsAsked,
    /// The right tools, an argument off.
    WrongArguments,
    /// Valid calls of other tools (or not as many as asked).
    WrongTool,
    /// A call that is not valid.
    InvalidCall,
    /// No call where one was needed.
    NoCall,
    /// A call where none was needed.
    UnwantedCall,
    /// The request failed.
    Failed,
}

impl Verdict {
    /// In words, for tables.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::AsAsked => "as asked",
            Verdict::WrongArguments => "wrong arguments",
            Verdict::WrongTool => "wrong tool",
            Verdict::InvalidCall => "invalid call",
            Verdict::NoCall => "no call",
            Verdict::UnwantedCall => "unwanted call",
            Verdict::Failed => "failed",
        }
    }
}

/// One item's score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ItemScore {
    /// The item.
    pub id: String,
    /// Its kind.
    pub kind: ItemKind,
    /// What the answer came to.
    pub verdict: Verdict,
    /// The item needs a call, and every call made is valid (at least one).
    pub valid_call: bool,
    /// The calls named the expected tools, as many as expected (no call for an item that
    /// needs none).
    pub right_tool: bool,
    /// As the item asks.
    pub as_asked: bool,
    /// Why not, in words (the first thing off).
    pub why: Option<String>,
    /// The calls read from the answers.
    pub calls: Vec<MadeCall>,
    /// Requests made for it.
    pub requests: u32,
    /// Seconds it took.
    pub seconds: f64,
}

/// Score the calls `calls` read from the answers to `item`.
pub fn score_item(item: &CheckItem, calls: &[MadeCall]) -> ItemScore {
    let expected = &item.expected.calls;
    let all_valid = calls.iter().all(MadeCall::is_valid);
    let valid_call = !expected.is_empty() && !calls.is_empty() && all_valid;
    let mut names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    let mut wanted: Vec<&str> = expected.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    wanted.sort_unstable();
    let right_tool = all_valid && names == wanted;
    let (verdict, why) = if expected.is_empty() {
        match calls.first() {
            None => (Verdict::AsAsked, None),
            Some(call) => (
                Verdict::UnwantedCall,
                Some(match item.kind {
                    ItemKind::MissingValue => format!(
                        "called `{}` though a required value is missing (it should ask)",
                        shown_name(call)
                    ),
                    _ => format!("called `{}` though no tool is needed", shown_name(call)),
                }),
            ),
        }
    } else if calls.is_empty() {
        (Verdict::NoCall, Some("made no call".to_string()))
    } else if let Some(bad) = calls.iter().find(|c| !c.is_valid()) {
        (
            Verdict::InvalidCall,
            Some(bad.problem.clone().unwrap_or_default()),
        )
    } else if !right_tool {
        (
            Verdict::WrongTool,
            Some(format!(
                "called {} where {} was asked",
                names.join(", "),
                wanted.join(", ")
            )),
        )
    } else {
        match match_calls(expected, calls) {
            Ok(()) => (Verdict::AsAsked, None),
            Err(why) => (Verdict::WrongArguments, Some(why)),
        }
    };
    ItemScore {
        id: item.id.clone(),
        kind: item.kind,
        verdict,
        valid_call,
        right_tool,
        as_asked: verdict == Verdict::AsAsked,
        why,
        calls: calls.to_vec(),
        requests: 0,
        seconds: 0.0,
    }
}

/// An item whose request failed.
pub fn failed_item(item: &CheckItem, why: String, calls: &[MadeCall]) -> ItemScore {
    ItemScore {
        id: item.id.clone(),
        kind: item.kind,
        verdict: Verdict::Failed,
        valid_call: false,
        right_tool: false,
        as_asked: false,
        why: Some(why),
        calls: calls.to_vec(),
        requests: 0,
        seconds: 0.0,
    }
}

fn shown_name(call: &MadeCall) -> &str {
    if call.name.is_empty() {
        "a tool"
    } else {
        &call.name
    }
}

/// Pair every expected call with a distinct made call of its tool meeting its rules (calls
/// may come in any order). `Err` says what is off in the closest pairing.
fn match_calls(expected: &[ExpectedCall], calls: &[MadeCall]) -> Result<(), String> {
    fn search(
        expected: &[ExpectedCall],
        calls: &[MadeCall],
        used: &mut Vec<bool>,
        first_problem: &mut Option<String>,
    ) -> bool {
        let Some((want, rest)) = expected.split_first() else {
            return true;
        };
        for (i, call) in calls.iter().enumerate() {
            if used[i] || call.name != want.name {
                continue;
            }
            let arguments = call
                .arguments
                .as_ref()
                .expect("only valid calls are matched");
            match check_arguments(want, arguments) {
                Ok(()) => {
                    used[i] = true;
                    if search(rest, calls, used, first_problem) {
                        return true;
                    }
                    used[i] = false;
                }
                Err(why) => {
                    first_problem.get_or_insert(why);
                }
            }
        }
        false
    }
    let mut used = vec![false; calls.len()];
    let mut problem = None;
    if search(expected, calls, &mut used, &mut problem) {
        Ok(())
    } else {
        Err(problem.unwrap_or_else(|| "the calls do not pair with the asked ones".into()))
    }
}

/// Does `arguments` meet every rule of `want`?
fn check_arguments(want: &ExpectedCall, arguments: &Map<String, Value>) -> Result<(), String> {
    for (name, rule) in &want.arguments {
        let Some(value) = arguments.get(name) else {
            return Err(format!("`{}`: `{name}` is missing", want.name));
        };
        if !rule_holds(rule, value) {
            return Err(format!(
                "`{}`: `{name}` is {}, asked {}",
                want.name,
                value,
                describe(rule)
            ));
        }
    }
    Ok(())
}

/// Does `value` meet `rule`?
pub fn rule_holds(rule: &ArgRule, value: &Value) -> bool {
    match rule {
        ArgRule::Exact { exact } => same_value(exact, value),
        ArgRule::CaseInsensitive { ci } => {
            text_of(value).trim().to_lowercase() == ci.trim().to_lowercase()
        }
        ArgRule::Number { number, tolerance } => {
            let got = match value {
                Value::Number(n) => n.as_f64(),
                _ => None,
            };
            got.is_some_and(|got| (got - number).abs() <= tolerance.abs() + f64::EPSILON * 16.0)
        }
        ArgRule::Contains { contains } => {
            let holds =
                |text: &str, needle: &str| text.to_lowercase().contains(&needle.to_lowercase());
            match value {
                Value::Array(elements) => contains
                    .iter()
                    .all(|needle| elements.iter().any(|e| holds(&text_of(e), needle))),
                Value::Object(_) => false,
                other => {
                    let text = text_of(other);
                    contains.iter().all(|needle| holds(&text, needle))
                }
            }
        }
        ArgRule::Any { any } => *any,
    }
}

/// Equal JSON values, numbers by value (`2` and `2.0`), strings without surrounding space.
fn same_value(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::String(a), Value::String(b)) => a.trim() == b.trim(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_value(a, b))
        }
        (a, b) => a == b,
    }
}

fn text_of(value: &Value) -> String {
    crate::tools::pipeline::value_text(value)
}

fn describe(rule: &ArgRule) -> String {
    match rule {
        ArgRule::Exact { exact } => exact.to_string(),
        ArgRule::CaseInsensitive { ci } => format!("{ci:?} (any case)"),
        ArgRule::Number { number, tolerance } => format!("{number} ± {tolerance}"),
        ArgRule::Contains { contains } => format!("something holding {contains:?}"),
        ArgRule::Any { .. } => "any value".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::items::parse_items;
    use serde_json::json;

    fn item(kind: &str, calls: Value) -> CheckItem {
        let line = json!({
            "id": "x", "kind": kind,
            "messages": [{"role": "user", "content": "do it"}],
            "tools": [
                {"name": "get_weather", "description": "Weather", "parameters": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string"},
                        "units": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                    },
                    "required": ["city"], "additionalProperties": false}},
                {"name": "create_event", "description": "Calendar", "parameters": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string"},
                        "minutes": {"type": "integer"},
                        "hours": {"type": "number"},
                        "remind": {"type": "boolean"},
                        "attendees": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["title"], "additionalProperties": false}}
            ],
            "expected": {"calls": calls}
        });
        parse_items(&line.to_string(), "t").unwrap().remove(0)
    }

    fn tools(item: &CheckItem) -> Vec<CompiledTool> {
        item.tools.iter().map(|t| t.compile()).collect()
    }

    fn call(item: &CheckItem, name: &str, params: &[(&str, &str)]) -> MadeCall {
        let raw: Params = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        read_call(&tools(item), name, &raw, CallSource::Xml)
    }

    fn weather_item() -> CheckItem {
        item(
            "one_call",
            json!([{"name": "get_weather", "arguments": {"city": {"ci": "Paris"}, "units": {"exact": "celsius"}}}]),
        )
    }

    #[test]
    fn one_call_as_asked_wrong_argument_wrong_tool_invalid_and_none() {
        let it = weather_item();
        let good = call(
            &it,
            "get_weather",
            &[("city", " paris "), ("units", "celsius")],
        );
        let s = score_item(&it, &[good]);
        assert_eq!(
            (s.verdict, s.valid_call, s.right_tool),
            (Verdict::AsAsked, true, true)
        );
        assert!(s.as_asked && s.why.is_none());

        let off = call(
            &it,
            "get_weather",
            &[("city", "Lyon"), ("units", "celsius")],
        );
        let s = score_item(&it, &[off]);
        assert_eq!(
            (s.verdict, s.valid_call, s.right_tool),
            (Verdict::WrongArguments, true, true)
        );
        assert!(s.why.unwrap().contains("`city` is \"Lyon\""));

        let missing = call(&it, "get_weather", &[("city", "Paris")]);
        assert_eq!(score_item(&it, &[missing]).verdict, Verdict::WrongArguments);

        let other = call(&it, "create_event", &[("title", "Paris")]);
        let s = score_item(&it, &[other]);
        assert_eq!(
            (s.verdict, s.valid_call, s.right_tool),
            (Verdict::WrongTool, true, false)
        );

        let bad_enum = call(
            &it,
            "get_weather",
            &[("city", "Paris"), ("units", "kelvin")],
        );
        let s = score_item(&it, &[bad_enum]);
        assert_eq!((s.verdict, s.valid_call), (Verdict::InvalidCall, false));
        assert!(s.why.unwrap().contains("must be one of"));

        let unknown_tool = call(&it, "get_wether", &[("city", "Paris")]);
        let s = score_item(&it, &[unknown_tool]);
        assert_eq!(s.verdict, Verdict::InvalidCall);
        assert!(s.why.unwrap().contains("no tool `get_wether`"));

        let unknown_param = call(&it, "get_weather", &[("city", "Paris"), ("town", "x")]);
        assert_eq!(
            score_item(&it, &[unknown_param]).verdict,
            Verdict::InvalidCall
        );
        let no_required = call(&it, "get_weather", &[("units", "celsius")]);
        assert_eq!(
            score_item(&it, &[no_required]).verdict,
            Verdict::InvalidCall
        );
        let unreadable = MadeCall::unreadable("the tool call could not be read", CallSource::Xml);
        assert_eq!(score_item(&it, &[unreadable]).verdict, Verdict::InvalidCall);

        let s = score_item(&it, &[]);
        assert_eq!(
            (s.verdict, s.valid_call, s.right_tool),
            (Verdict::NoCall, false, false)
        );
    }

    #[test]
    fn typed_arguments_each_rule() {
        let it = item(
            "one_call",
            json!([{"name": "create_event", "arguments": {
                "title": {"contains": ["dentist", "CHECK"]},
                "minutes": {"exact": 45},
                "hours": {"number": 0.75, "tolerance": 0.01},
                "remind": {"exact": true},
                "attendees": {"contains": ["ana@", "bo@example.org"]}
            }}]),
        );
        let verdict =
            |params: &[(&str, &str)]| score_item(&it, &[call(&it, "create_event", params)]).verdict;
        let base = [
            ("title", "Dentist check-up"),
            ("minutes", "45"),
            ("hours", "0.755"),
            ("remind", "true"),
            ("attendees", r#"["ana@example.com", "BO@example.org"]"#),
        ];
        assert_eq!(verdict(&base), Verdict::AsAsked);
        let with = |k: &str, v: &'static str| {
            let mut p = base.to_vec();
            p.iter_mut().find(|(n, _)| *n == k).unwrap().1 = v;
            verdict(&p)
        };
        // Each rule's negative case.
        assert_eq!(with("title", "Doctor check-up"), Verdict::WrongArguments);
        assert_eq!(with("minutes", "40"), Verdict::WrongArguments);
        assert_eq!(
            with("minutes", "45.5"),
            Verdict::InvalidCall,
            "not an integer"
        );
        assert_eq!(with("hours", "0.8"), Verdict::WrongArguments);
        assert_eq!(with("hours", "three quarters"), Verdict::InvalidCall);
        assert_eq!(with("remind", "false"), Verdict::WrongArguments);
        assert_eq!(with("remind", "maybe"), Verdict::InvalidCall);
        assert_eq!(
            with("attendees", r#"["ana@example.com"]"#),
            Verdict::WrongArguments
        );
        assert_eq!(
            with("attendees", "ana and bo"),
            Verdict::InvalidCall,
            "not a JSON array"
        );
        assert_eq!(
            with("attendees", "[1, 2]"),
            Verdict::InvalidCall,
            "items are strings"
        );
    }

    #[test]
    fn rules_one_by_one() {
        let ci = ArgRule::CaseInsensitive { ci: "Paris".into() };
        assert!(rule_holds(&ci, &json!("PARIS ")));
        assert!(!rule_holds(&ci, &json!("Paris, France")));
        let exact = ArgRule::Exact { exact: json!(2) };
        assert!(rule_holds(&exact, &json!(2.0)));
        assert!(
            !rule_holds(&exact, &json!("2")),
            "a string is not the number"
        );
        let exact_text = ArgRule::Exact {
            exact: json!("celsius"),
        };
        assert!(
            !rule_holds(&exact_text, &json!("Celsius")),
            "exact keeps case"
        );
        let number = ArgRule::Number {
            number: 3.1,
            tolerance: 0.0,
        };
        assert!(rule_holds(&number, &json!(3.1)));
        assert!(!rule_holds(&number, &json!(3.11)));
        assert!(!rule_holds(&number, &json!("3.1")));
        let contains = ArgRule::Contains {
            contains: vec!["milk".into()],
        };
        assert!(rule_holds(&contains, &json!("Eggs, MILK")));
        assert!(!rule_holds(&contains, &json!({"milk": 1})));
        let any = ArgRule::Any { any: true };
        assert!(rule_holds(&any, &json!(null)));
    }

    #[test]
    fn rule_forms_read_from_json_and_unknown_ones_are_refused() {
        let read = |v: Value| serde_json::from_value::<ArgRule>(v);
        assert_eq!(
            read(json!({"ci": "a"})).unwrap(),
            ArgRule::CaseInsensitive { ci: "a".into() }
        );
        assert_eq!(
            read(json!({"number": 2, "tolerance": 0.5})).unwrap(),
            ArgRule::Number {
                number: 2.0,
                tolerance: 0.5
            }
        );
        assert!(read(json!({"roughly": 2})).is_err());
        assert!(read(json!({"ci": "a", "exact": 1})).is_err());
    }

    #[test]
    fn two_calls_in_any_order_and_each_paired_once() {
        let it = item(
            "two_calls",
            json!([
                {"name": "get_weather", "arguments": {"city": {"ci": "Paris"}}},
                {"name": "get_weather", "arguments": {"city": {"ci": "Oslo"}}}
            ]),
        );
        let w = |city: &str| call(&it, "get_weather", &[("city", city)]);
        assert_eq!(
            score_item(&it, &[w("oslo"), w("paris")]).verdict,
            Verdict::AsAsked
        );
        let s = score_item(&it, &[w("Paris"), w("Paris")]);
        assert_eq!((s.verdict, s.right_tool), (Verdict::WrongArguments, true));
        let s = score_item(&it, &[w("Paris")]);
        assert_eq!(
            (s.verdict, s.valid_call, s.right_tool),
            (Verdict::WrongTool, true, false)
        );
        let s = score_item(&it, &[w("Paris"), w("Oslo"), w("Rome")]);
        assert_eq!(
            s.verdict,
            Verdict::WrongTool,
            "a third call is not what was asked"
        );
        let bad = call(&it, "get_weather", &[("town", "Oslo")]);
        assert_eq!(
            score_item(&it, &[w("Paris"), bad]).verdict,
            Verdict::InvalidCall
        );
    }

    #[test]
    fn no_tool_and_missing_value_items_want_no_call() {
        for kind in ["no_tool", "missing_value"] {
            let it = item(kind, json!([]));
            let s = score_item(&it, &[]);
            assert_eq!(
                (s.verdict, s.valid_call, s.right_tool),
                (Verdict::AsAsked, false, true)
            );
            let made = call(&it, "get_weather", &[("city", "Paris")]);
            let s = score_item(&it, &[made]);
            assert_eq!(
                (s.verdict, s.as_asked, s.right_tool),
                (Verdict::UnwantedCall, false, false)
            );
            let why = s.why.unwrap();
            assert_eq!(kind == "missing_value", why.contains("should ask"), "{why}");
            let broken = MadeCall::unreadable("cut off", CallSource::Xml);
            assert_eq!(score_item(&it, &[broken]).verdict, Verdict::UnwantedCall);
        }
    }

    #[test]
    fn native_and_xml_calls_score_alike_and_defaults_fill_in() {
        let it = weather_item();
        let tools = tools(&it);
        let (raw, _) = crate::parser::read_arguments(
            r#"{"city": "Paris", "units": "celsius"}"#,
            Some(&tools[0].spec),
        )
        .unwrap();
        let native = read_call(&tools, "get_weather", &raw, CallSource::Native);
        assert_eq!(score_item(&it, &[native]).verdict, Verdict::AsAsked);
    }
}
