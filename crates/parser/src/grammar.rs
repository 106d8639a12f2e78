//! A grammar for guided tool calls: the XML calls one agent may make, written in GBNF (the
//! grammar format of llama.cpp), for a runtime that constrains its sampler with it.
//!
//! The grammar is *lazy*: it is off while the model writes prose and takes over once the model
//! has written `<tool_call>` (see [`TRIGGER_PATTERN`]). From there on every token must continue
//! a call this grammar accepts:
//!
//! ```text
//! <tool_call>
//!   <name>web_search</name>          one of the agent's tools
//!   <params>
//!     <query><![CDATA[…]]></query>   that tool's parameters, in the documented order,
//!     <count><![CDATA[10]]></count>  required ones present, optional ones optional,
//!   </params>                        each value in CDATA and of its type (integer, number,
//! </tool_call>                       boolean, one of the allowed values, or any text)
//! ```
//!
//! and then the end of the answer: one call per answer. The next call comes in the next round,
//! with this one's result in view. (Allowed to go on, a small model repeats its call until the
//! token limit cuts the last copy in half, which SmolLM2-135M did in the tasks tried.) The
//! grammar is built from the same [`ToolSpec`]s as the `<tool_instructions>` block, so it names
//! exactly the tools and parameters the model was told about. It is a guide, not a second parser: the tolerant parser
//! still reads every answer; guidance only shrinks what it has to repair.
//!
//! The grammar is kept as data ([`Grammar`]) and written out as GBNF by [`Grammar::gbnf`], so
//! tests can also *generate* the strings it accepts and check that each one parses into a valid
//! call (see the property test below).
//!
//! # Size
//!
//! A grammar grows with the tools' schemas, not faster: each parameter is described once, and
//! where the calls may go on in several ways (the optional parameters after a pair of a native
//! call) the way on is a rule of its own that is referred to, not written out again for each
//! place it starts from (written out, 2,000 optional parameters made 100 MB of GBNF). Even so a
//! schema can be absurd for guidance (a generated API with every field a parameter): a tool of
//! more than [`MAX_TOOL_PARAMS`] parameters, or tools whose grammar together would be over
//! [`MAX_GRAMMAR_BYTES`] (the most the app's runtime takes), get no grammar but a
//! [`GrammarTooLarge`] naming the tool and what to do. The engine then sends the agent's
//! requests unguided and says why in its log; `artifactflow-cli tools grammar` prints it.

use std::collections::HashSet;
use std::fmt::{self, Write as _};
use std::ops::Range;

use artifactflow_ground::tool_spec::{ParamSpec, ParamType, ToolSpec};

use crate::family::{Opening, ToolFamily};

/// The regular expression (ECMAScript, as llama.cpp's lazy grammars read it) that turns the
/// grammar on: the answer so far ends in `<tool_call>` and at most the whitespace the grammar
/// allows after it. Anchored at the end so that the token completing the trigger carries
/// nothing the grammar would refuse; a call opened any other way (`<tool_call>{…`) is left to
/// the tolerant parser.
pub const TRIGGER_PATTERN: &str = "<tool_call>[ \\t\\r\\n]{0,16}$";

/// The longest run of whitespace allowed between the parts of a call.
const MAX_SPACE: u32 = 16;
/// The most digits of a whole number or of either side of a decimal point (fits an `i64`).
const MAX_DIGITS: u32 = 18;

/// The most parameters one tool may have in a grammar. Past it a schema is taken for one no
/// model should be guided through (every one of them may come next after each pair, which the
/// runtime's sampler checks at every step).
pub const MAX_TOOL_PARAMS: usize = 4096;

/// The most bytes of GBNF in a grammar: the most the app's runtime takes (its own
/// `guide::MAX_GRAMMAR_BYTES`), half of the 2 MiB it takes in a whole request, the other half
/// left to the conversation and the tools' definitions.
pub const MAX_GRAMMAR_BYTES: usize = 1024 * 1024;

/// Tools whose grammar would be too large to guide calls with: no grammar is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrammarTooLarge {
    /// The tool that is too large, under the name the grammar was given; of several whose
    /// grammar is too large together, the one that takes the most of it.
    pub tool: String,
    /// The MCP server the tool comes from, when the caller knows (the grammar does not): the
    /// message then names it.
    pub server: Option<String>,
    /// What is too large.
    pub excess: Excess,
}

/// What makes a grammar too large.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Excess {
    /// The tool has `count` parameters, more than [`MAX_TOOL_PARAMS`].
    Params {
        /// Its parameters (each name counted once).
        count: usize,
    },
    /// The grammar would be `bytes` of GBNF, more than [`MAX_GRAMMAR_BYTES`], of which the
    /// tool's own rules take `tool_bytes`.
    Bytes {
        /// The whole grammar.
        bytes: usize,
        /// The tool's rules.
        tool_bytes: usize,
    },
}

impl fmt::Display for GrammarTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tool = match &self.server {
            Some(server) => format!("the tool `{}` of MCP server `{server}`", self.tool),
            None => format!("the tool `{}`", self.tool),
        };
        match self.excess {
            Excess::Params { count } => write!(
                f,
                "{tool} has {count} parameters, more than the {MAX_TOOL_PARAMS} a grammar of \
                 guided calls describes"
            )?,
            Excess::Bytes { bytes, tool_bytes } => write!(
                f,
                "the grammar of guided calls would be {}, more than the {} it may take (it goes \
                 with every request); {tool} takes {} of it, the most",
                size(bytes),
                size(MAX_GRAMMAR_BYTES),
                size(tool_bytes)
            )?,
        }
        write!(f, ": leave the tool out of the agent's tools")?;
        match &self.server {
            // Its schema is the server's.
            Some(server) => write!(f, " (name the tools it needs instead of `{server}.*`)"),
            None => write!(f, ", or give it a smaller schema"),
        }
    }
}

impl std::error::Error for GrammarTooLarge {}

/// `512 bytes`, `795 KiB`, `1 MiB`, `1.2 MiB`.
fn size(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if bytes < KIB {
        format!("{bytes} bytes")
    } else if bytes < MIB {
        format!("{} KiB", bytes / KIB)
    } else if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    }
}

/// One piece of a rule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    /// This exact text.
    Lit(String),
    /// One character in (or, negated, not in) these inclusive ranges.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    /// Another rule, by name.
    Ref(String),
    /// These in order.
    Seq(Vec<Expr>),
    /// One of these.
    Alt(Vec<Expr>),
    /// The expression `min` to `max` times (`None`: no upper bound).
    Repeat {
        expr: Box<Expr>,
        min: u32,
        max: Option<u32>,
    },
}

fn lit(text: &str) -> Expr {
    Expr::Lit(text.to_string())
}

fn rule_ref(name: &str) -> Expr {
    Expr::Ref(name.to_string())
}

fn seq(parts: Vec<Expr>) -> Expr {
    Expr::Seq(parts)
}

fn optional(expr: Expr) -> Expr {
    Expr::Repeat {
        expr: Box::new(expr),
        min: 0,
        max: Some(1),
    }
}

fn class(negated: bool, chars: &str) -> Expr {
    Expr::Class {
        negated,
        ranges: chars.chars().map(|c| (c, c)).collect(),
    }
}

fn digits() -> Expr {
    Expr::Repeat {
        expr: Box::new(Expr::Class {
            negated: false,
            ranges: vec![('0', '9')],
        }),
        min: 1,
        max: Some(MAX_DIGITS),
    }
}

/// A grammar: named rules, `root` first.
#[derive(Debug, Clone, PartialEq)]
pub struct Grammar {
    pub(crate) rules: Vec<(String, Expr)>,
}

impl Grammar {
    /// The grammar in GBNF, one rule per line, `root` first.
    pub fn gbnf(&self) -> String {
        self.rules
            .iter()
            .map(|(name, expr)| line(name, expr))
            .collect()
    }

    /// The rule called `name`.
    #[cfg(test)]
    pub(crate) fn rule(&self, name: &str) -> Option<&Expr> {
        self.rules.iter().find(|(n, _)| n == name).map(|(_, e)| e)
    }
}

/// One rule in GBNF, with its line end.
fn line(name: &str, expr: &Expr) -> String {
    format!("{name} ::= {}\n", render(expr, false))
}

/// A tool as a grammar describes it, with the parameters it describes.
struct Described<'a> {
    tool: &'a ToolSpec,
    params: Vec<&'a ParamSpec>,
    /// Its rules, from `tool-i` to the last of its own (the shared ones come after all tools).
    rules: Range<usize>,
}

/// The tools a grammar describes: tools with an empty or repeated name, and unnamed or repeated
/// parameters, are left out (the instructions never describe them either). A tool of more than
/// [`MAX_TOOL_PARAMS`] parameters is refused before anything is built.
fn described_tools(tools: &[ToolSpec]) -> Result<Vec<Described<'_>>, GrammarTooLarge> {
    let mut seen = HashSet::new();
    tools
        .iter()
        .filter(|t| !t.name.is_empty() && seen.insert(t.name.as_str()))
        .map(|tool| {
            let mut seen = HashSet::new();
            let params: Vec<&ParamSpec> = tool
                .params
                .iter()
                .filter(|p| !p.name.is_empty() && seen.insert(p.name.as_str()))
                .collect();
            if params.len() > MAX_TOOL_PARAMS {
                return Err(GrammarTooLarge {
                    tool: tool.name.clone(),
                    server: None,
                    excess: Excess::Params {
                        count: params.len(),
                    },
                });
            }
            Ok(Described {
                tool,
                params,
                rules: 0..0,
            })
        })
        .collect()
}

/// `rules` as a grammar, unless its GBNF is over [`MAX_GRAMMAR_BYTES`]: then the error names
/// the tool whose own rules take the most of it.
fn within_limit(
    rules: Vec<(String, Expr)>,
    tools: &[Described<'_>],
) -> Result<Grammar, GrammarTooLarge> {
    let sizes: Vec<usize> = rules.iter().map(|(n, e)| line(n, e).len()).collect();
    let bytes: usize = sizes.iter().sum();
    if bytes <= MAX_GRAMMAR_BYTES {
        return Ok(Grammar { rules });
    }
    let (largest, tool_bytes) = tools
        .iter()
        .map(|t| (t, sizes[t.rules.clone()].iter().sum::<usize>()))
        .max_by_key(|(_, tool_bytes)| *tool_bytes)
        .expect("a grammar has a tool");
    Err(GrammarTooLarge {
        tool: largest.tool.name.clone(),
        server: None,
        excess: Excess::Bytes { bytes, tool_bytes },
    })
}

/// The grammar of the calls an agent with `tools` may make, or `None` when it has no tool
/// (nothing to call, nothing to guide). Tools with an empty or repeated name, and repeated
/// parameters, are left out (the instructions never describe them either). Tools too large to
/// guide (see [`MAX_TOOL_PARAMS`] and [`MAX_GRAMMAR_BYTES`]) get an error naming the tool.
pub fn call_grammar(tools: &[ToolSpec]) -> Result<Option<Grammar>, GrammarTooLarge> {
    let mut tools = described_tools(tools)?;
    if tools.is_empty() {
        return Ok(None);
    }
    let mut rules: Vec<(String, Expr)> = Vec::new();
    let ws = || rule_ref("ws");
    rules.push(("root".into(), rule_ref("call")));
    rules.push((
        "call".into(),
        seq(vec![
            lit("<tool_call>"),
            ws(),
            Expr::Alt(
                (0..tools.len())
                    .map(|i| rule_ref(&format!("tool-{i}")))
                    .collect(),
            ),
            ws(),
            lit("</tool_call>"),
        ]),
    ));
    let mut uses = Uses::default();
    for (i, described) in tools.iter_mut().enumerate() {
        let (tool, params) = (described.tool, &described.params);
        let name = seq(vec![lit("<name>"), lit(&tool.name), lit("</name>")]);
        // Each rule goes before the rules it uses: a placeholder now, filled in below.
        let at = rules.len();
        rules.push((format!("tool-{i}"), Expr::Seq(Vec::new())));
        let body = if params.is_empty() {
            // The example leaves an empty <params> out; an empty one is fine too.
            seq(vec![
                name,
                optional(seq(vec![ws(), lit("<params>"), ws(), lit("</params>")])),
            ])
        } else {
            let mut parts = vec![name, ws(), lit("<params>")];
            for (j, p) in params.iter().enumerate() {
                let rule = format!("tool-{i}-param-{j}");
                let slot = rules.len();
                rules.push((rule.clone(), Expr::Seq(Vec::new())));
                let value = value_rule(p, &format!("{rule}-value"), &mut rules, &mut uses);
                rules[slot].1 = seq(vec![
                    lit(&format!("<{}>", p.name)),
                    value,
                    lit(&format!("</{}>", p.name)),
                ]);
                let item = seq(vec![ws(), rule_ref(&rule)]);
                parts.push(if p.required { item } else { optional(item) });
            }
            parts.extend([ws(), lit("</params>")]);
            seq(parts)
        };
        rules[at].1 = body;
        described.rules = at..rules.len();
    }
    uses.add_shared(&mut rules);
    rules.push((
        "ws".into(),
        Expr::Repeat {
            expr: Box::new(class(false, " \t\r\n")),
            min: 0,
            max: Some(MAX_SPACE),
        },
    ));
    within_limit(rules, &tools).map(Some)
}

/// The grammar of native calls an agent with `tools` may make through the app's runtime, or
/// `None` when it has no tool. A native call is written the way Hermes-style chat templates
/// (Qwen 2.5 and 3, Hermes, SmolLM3 and others) ask for, and the runtime returns it to the
/// engine as an OpenAI-style `tool_calls` entry:
///
/// ```text
/// <tool_call>
/// {"name": "web_search", "arguments": {"query": "…", "count": 10}}
/// </tool_call>
/// ```
///
/// The name is one of `tools` (pass them under the names they are offered by), the arguments
/// are that tool's parameters in the documented order, required ones present, each value a
/// JSON value of its type or one of its allowed values; one call per answer, like
/// [`call_grammar`], and the same limits. Lazy with the same trigger ([`TRIGGER_PATTERN`]).
pub fn native_call_grammar(tools: &[ToolSpec]) -> Result<Option<Grammar>, GrammarTooLarge> {
    let Some(JsonCalls {
        mut rules, tools, ..
    }) = json_calls(tools, lit("\"arguments\""))?
    else {
        return Ok(None);
    };
    let Expr::Seq(object) = std::mem::replace(&mut rules[0].1, Expr::Seq(Vec::new())) else {
        unreachable!("a JSON call is a sequence");
    };
    let mut root = vec![lit("<tool_call>"), rule_ref("ws")];
    root.extend(object);
    root.extend([rule_ref("ws"), lit("</tool_call>")]);
    rules[0] = ("root".into(), seq(root));
    within_limit(rules, &tools).map(Some)
}

/// The rules of JSON call objects for `tools`, the first one (`json-call`) the object itself:
/// `{"name": "…", ARGS_KEY: {…}}`, with `args_key` for the key of the arguments; the tools as
/// described, for the size check.
struct JsonCalls<'a> {
    rules: Vec<(String, Expr)>,
    tools: Vec<Described<'a>>,
}

/// See [`JsonCalls`]; `None` when there is no tool.
fn json_calls(
    tools: &[ToolSpec],
    args_key: Expr,
) -> Result<Option<JsonCalls<'_>>, GrammarTooLarge> {
    let mut tools = described_tools(tools)?;
    if tools.is_empty() {
        return Ok(None);
    }
    let ws = || rule_ref("ws");
    let json_text = |text: &str| lit(&serde_json::Value::from(text).to_string());
    let mut rules: Vec<(String, Expr)> = vec![(
        "json-call".into(),
        seq(vec![
            lit("{"),
            ws(),
            lit("\"name\""),
            ws(),
            lit(":"),
            ws(),
            Expr::Alt(
                (0..tools.len())
                    .map(|i| rule_ref(&format!("tool-{i}")))
                    .collect(),
            ),
            ws(),
            lit("}"),
        ]),
    )];
    let mut uses = Uses::default();
    let mut any_json = false;
    for (i, described) in tools.iter_mut().enumerate() {
        // Required parameters first, then the optional ones, each in the documented order.
        // A JSON call's last value is then one after which more may come whenever the tool has
        // optional parameters, so a model's `",` token there is allowed: with an optional
        // parameter between two required ones (create_artifact's content_type before title and
        // content), a model that writes them in another order was held inside its last string
        // (it could not write `",`) and ran on to the token limit.
        // (Stable: the rules of Python-style calls and the size check see the same order.)
        described.params.sort_by_key(|p| !p.required);
        let (tool, params) = (described.tool, &described.params);
        let at = rules.len();
        rules.push((format!("tool-{i}"), Expr::Seq(Vec::new())));
        // One key and its value.
        let mut pairs = Vec::new();
        for (j, p) in params.iter().enumerate() {
            let value = if is_structured(tool, &p.name) {
                // An object, array or composition in the tool's own schema (MCP): the model is
                // shown that schema, so any JSON value is let through (the engine checks it
                // against the schema before the call).
                any_json = true;
                rule_ref("json-value")
            } else {
                json_value_rule(p, &format!("tool-{i}-param-{j}"), &mut rules, &mut uses)
            };
            pairs.push(seq(vec![json_text(&p.name), ws(), lit(":"), ws(), value]));
        }
        // The pairs in that order (see `pair_chain`).
        let arguments = object(pair_chain(&format!("tool-{i}"), pairs, params, &mut rules));
        // The arguments object as a rule of its own: Mistral's `name[ARGS]{…}` writes it
        // after the bare name.
        rules.push((format!("tool-{i}-args"), seq(arguments)));
        rules[at].1 = seq(vec![
            json_text(&tool.name),
            ws(),
            lit(","),
            ws(),
            args_key.clone(),
            ws(),
            lit(":"),
            ws(),
            rule_ref(&format!("tool-{i}-args")),
        ]);
        described.rules = at..rules.len();
    }
    if any_json {
        for kind in [ParamType::String, ParamType::Number] {
            if !uses.0.contains(&kind) {
                uses.0.push(kind);
            }
        }
        add_any_json(&mut rules);
    }
    uses.add_json(&mut rules);
    rules.push((
        "ws".into(),
        Expr::Repeat {
            expr: Box::new(class(false, " \t\r\n")),
            min: 0,
            max: Some(MAX_SPACE),
        },
    ));
    Ok(Some(JsonCalls { rules, tools }))
}

/// The format a profile's calls are asked for in: the app's XML text format, or the model's
/// own (native) form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallFormat {
    /// The XML format of the `<tool_instructions>` block.
    Xml,
    /// The model's own form, the tools offered through its chat template.
    Native,
}

/// A lazy grammar of guided calls with the trigger patterns that turn it on, one per opening
/// of the model's family (see [`ToolFamily::openings`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GuidedCalls {
    /// The grammar: its root accepts a call starting with each opening.
    pub grammar: Grammar,
    /// The trigger patterns, in the order the runtime tries them.
    pub triggers: Vec<String>,
}

/// The grammar of the calls an agent with `tools` may make in a model of `family`, with the
/// triggers of every opening the family uses, or `None` when it has no tool. Each trigger's
/// match is what the grammar is first fed, so the grammar's root accepts, from each opening,
/// a call written the way the opening starts it:
///
/// | opening | the call |
/// |---|---|
/// | `<tool_call>` | `<tool_call>{json call}</tool_call>`; for [`CallFormat::Xml`] the XML call instead |
/// | a code fence and `{"name"` | ```` ```json\n{json call}\n``` ```` |
/// | `{"name"` at the start of a line | `{json call}` |
/// | `<\|python_tag\|>` (Llama 3) | `<\|python_tag\|>{json call}` |
/// | `[TOOL_CALLS]` (Mistral) | `[TOOL_CALLS][{json call}]`, or `[TOOL_CALLS]name[ARGS]{arguments}` |
/// | `<\|tool_call_start\|>` (LFM2) | `<\|tool_call_start\|>[name(key="text", n=2, on=True)]<\|tool_call_end\|>`, or a JSON call in the brackets |
/// | `<\|tool_call\|>` (Granite) | `<\|tool_call\|>[{json call}]` |
/// | `functools[` (Phi-4-mini) | `functools[{json call}]` |
///
/// A JSON call is `{"name": "tool", "arguments": {…}}` (`"parameters"` also, as Llama 3's
/// template asks), its arguments as [`native_call_grammar`] has them; natively the tools are
/// named as `tools` name them (pass them under the names they are offered by). One call per
/// answer, and the same limits as the other grammars: the whole grammar stays within
/// [`MAX_GRAMMAR_BYTES`], or the error names the tool that takes the most of it.
pub fn guided_calls(
    tools: &[ToolSpec],
    family: ToolFamily,
    format: CallFormat,
) -> Result<Option<GuidedCalls>, GrammarTooLarge> {
    let Some(JsonCalls {
        rules: json_rules,
        tools: described,
    }) = json_calls(tools, rule_ref("args-key"))?
    else {
        return Ok(None);
    };
    let ws = || rule_ref("ws");
    let openings = family.openings();
    let mut rules: Vec<(String, Expr)> = vec![("root".into(), Expr::Alt(Vec::new()))];
    let mut forms = Vec::new();
    let json = || rule_ref("json-call");
    let json_list = |head: &str| {
        seq(vec![
            lit(head),
            ws(),
            lit("["),
            ws(),
            json(),
            ws(),
            lit("]"),
        ])
    };
    for opening in &openings {
        forms.push(match opening {
            Opening::ToolCallTag => {
                // In the XML format a `<tool_call>` block holds the XML call the system prompt
                // teaches (a JSON call there is read by the contract's rule 15, which refuses
                // list and object values that a JSON call may carry; JSON calls are guided from
                // the fence and line openings instead, read by the forms reader).
                let body = match format {
                    CallFormat::Native => json(),
                    CallFormat::Xml => rule_ref("xml-call"),
                };
                seq(vec![
                    lit("<tool_call>"),
                    ws(),
                    body,
                    ws(),
                    lit("</tool_call>"),
                ])
            }
            Opening::JsonFence => seq(vec![
                lit("```"),
                Expr::Repeat {
                    expr: Box::new(Expr::Class {
                        negated: false,
                        ranges: vec![('A', 'Z'), ('a', 'z'), ('_', '_')],
                    }),
                    min: 0,
                    max: Some(MAX_SPACE),
                },
                Expr::Repeat {
                    expr: Box::new(class(false, " \t")),
                    min: 0,
                    max: Some(MAX_SPACE),
                },
                optional(lit("\r")),
                lit("\n"),
                ws(),
                json(),
                ws(),
                lit("```"),
            ]),
            Opening::JsonLine => json(),
            Opening::PythonTag => seq(vec![lit("<|python_tag|>"), ws(), json()]),
            // The JSON list (v3 tokenizers), or the bare name, `[ARGS]` and the arguments
            // object (v11 and later).
            Opening::MistralToolCalls => seq(vec![
                lit("[TOOL_CALLS]"),
                ws(),
                Expr::Alt(vec![
                    seq(vec![lit("["), ws(), json(), ws(), lit("]")]),
                    rule_ref("mistral-call"),
                ]),
            ]),
            Opening::GraniteToolCall => json_list("<|tool_call|>"),
            Opening::Functools => seq(vec![
                lit("functools"),
                ws(),
                lit("["),
                ws(),
                json(),
                ws(),
                lit("]"),
            ]),
            Opening::Lfm2ToolCallStart => seq(vec![
                lit("<|tool_call_start|>"),
                ws(),
                lit("["),
                ws(),
                Expr::Alt(vec![rule_ref("python-call"), json()]),
                ws(),
                lit("]"),
                ws(),
                lit("<|tool_call_end|>"),
            ]),
        });
    }
    rules[0].1 = Expr::Alt(forms);
    rules.push((
        "args-key".into(),
        Expr::Alt(vec![lit("\"arguments\""), lit("\"parameters\"")]),
    ));
    rules.extend(json_rules);
    if openings.contains(&Opening::Lfm2ToolCallStart) {
        add_python_calls(&described, &mut rules);
    }
    if openings.contains(&Opening::MistralToolCalls) {
        let calls = described
            .iter()
            .enumerate()
            .map(|(i, d)| {
                seq(vec![
                    lit(&d.tool.name),
                    lit("[ARGS]"),
                    rule_ref(&format!("tool-{i}-args")),
                ])
            })
            .collect();
        rules.push(("mistral-call".into(), Expr::Alt(calls)));
    }
    if format == CallFormat::Xml && openings.contains(&Opening::ToolCallTag) {
        let xml = call_grammar(tools)?.expect("tools to call");
        for (name, expr) in xml.rules {
            match name.as_str() {
                "root" => {}
                // The XML call without its `<tool_call>` tags, which the root writes.
                "call" => {
                    let Expr::Seq(parts) = expr else {
                        unreachable!("the XML call is a sequence");
                    };
                    rules.push(("xml-call".into(), prefixed(&parts[2], "xml-")));
                }
                "ws" => {}
                _ => rules.push((format!("xml-{name}"), prefixed(&expr, "xml-"))),
            }
        }
    }
    // `ws` once, last (the JSON rules brought one).
    rules.retain(|(name, _)| name != "ws");
    rules.push((
        "ws".into(),
        Expr::Repeat {
            expr: Box::new(class(false, " \t\r\n")),
            min: 0,
            max: Some(MAX_SPACE),
        },
    ));
    let grammar = within_limit_by_name(rules, &described)?;
    Ok(Some(GuidedCalls {
        grammar,
        triggers: openings.into_iter().map(Opening::trigger).collect(),
    }))
}

/// `expr` with every rule it refers to renamed `PREFIX` + name, but `ws`.
fn prefixed(expr: &Expr, prefix: &str) -> Expr {
    match expr {
        Expr::Ref(name) if name == "ws" => expr.clone(),
        Expr::Ref(name) => Expr::Ref(format!("{prefix}{name}")),
        Expr::Seq(parts) => Expr::Seq(parts.iter().map(|p| prefixed(p, prefix)).collect()),
        Expr::Alt(options) => Expr::Alt(options.iter().map(|p| prefixed(p, prefix)).collect()),
        Expr::Repeat { expr, min, max } => Expr::Repeat {
            expr: Box::new(prefixed(expr, prefix)),
            min: *min,
            max: *max,
        },
        Expr::Lit(_) | Expr::Class { .. } => expr.clone(),
    }
}

/// `rules` as a grammar, unless its GBNF is over [`MAX_GRAMMAR_BYTES`]: then the error names
/// the tool whose rules take the most of it (tool `i`'s rules are named `tool-i`, `tool-i-…`,
/// or those with a prefix, `xml-tool-i…`).
fn within_limit_by_name(
    rules: Vec<(String, Expr)>,
    tools: &[Described<'_>],
) -> Result<Grammar, GrammarTooLarge> {
    let sizes: Vec<usize> = rules.iter().map(|(n, e)| line(n, e).len()).collect();
    let bytes: usize = sizes.iter().sum();
    if bytes <= MAX_GRAMMAR_BYTES {
        return Ok(Grammar { rules });
    }
    let tool_of = |name: &str| -> Option<usize> {
        let rest = name.strip_prefix("xml-").unwrap_or(name);
        let rest = rest.strip_prefix("tool-")?;
        rest.split('-').next()?.parse().ok()
    };
    let mut per_tool = vec![0usize; tools.len()];
    for ((name, _), size) in rules.iter().zip(&sizes) {
        if let Some(i) = tool_of(name).filter(|i| *i < tools.len()) {
            per_tool[i] += size;
        }
    }
    let (largest, tool_bytes) = per_tool
        .iter()
        .enumerate()
        .max_by_key(|(_, b)| **b)
        .map(|(i, b)| (i, *b))
        .expect("a grammar has a tool");
    Err(GrammarTooLarge {
        tool: tools[largest].tool.name.clone(),
        server: None,
        excess: Excess::Bytes { bytes, tool_bytes },
    })
}

/// The rules of Python-style calls (`python-call`), LFM2's form: `name(key="text", n=2,
/// on=True)`, the keyword arguments in the documented order, required ones present. Values as
/// in JSON calls (a JSON string is a Python string literal too), but booleans `True` and
/// `False`; allowed values and the shared value rules are the JSON calls' (already there).
fn add_python_calls(tools: &[Described<'_>], rules: &mut Vec<(String, Expr)>) {
    let ws = || rule_ref("ws");
    let mut calls = Vec::new();
    let mut booleans = false;
    for (i, described) in tools.iter().enumerate() {
        let (tool, params) = (described.tool, &described.params);
        let prefix = format!("tool-{i}-py");
        let pairs = params
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let has_values = p.enum_values.iter().flatten().any(|v| !v.is_empty());
                let value = if is_structured(tool, &p.name) {
                    rule_ref("json-value")
                } else if has_values {
                    rule_ref(&format!("tool-{i}-param-{j}"))
                } else {
                    rule_ref(match p.kind {
                        ParamType::String => "json-string",
                        ParamType::Integer => "json-integer",
                        ParamType::Number => "json-number",
                        ParamType::Boolean => {
                            booleans = true;
                            "python-boolean"
                        }
                    })
                };
                seq(vec![lit(&p.name), ws(), lit("="), ws(), value])
            })
            .collect();
        let at = rules.len();
        rules.push((prefix.clone(), Expr::Seq(Vec::new())));
        let mut call = vec![lit(&tool.name), lit("("), ws()];
        call.extend(pair_chain(&prefix, pairs, params, rules));
        call.push(lit(")"));
        rules[at].1 = seq(call);
        calls.push(rule_ref(&prefix));
    }
    rules.insert(1, ("python-call".into(), Expr::Alt(calls)));
    if booleans {
        rules.push((
            "python-boolean".into(),
            Expr::Alt(vec![lit("True"), lit("False")]),
        ));
    }
}

/// The rules of a tool's key-value pairs in the documented order, a comma between two,
/// optional ones optional (`pairs[j]` is parameter `params[j]` written out), named after
/// `prefix`; the expression of the whole list with the whitespace after it (optional when
/// none is required). Two rules per parameter, each referring
/// to the next. So the grammar grows with the number of parameters (a rule that repeated each
/// tail grew with its square: 100 MB of GBNF for 2,000 optional parameters), each pair is
/// written once, and between two pairs llama.cpp follows one way on; only right after a comma
/// is every later key open. `None` when there is no parameter.
///
/// - `PREFIX-from-j`: the pairs from `j` on, at least one: pair `j` then `PREFIX-rest-(j+1)`,
///   or (`j` optional and not the last) `PREFIX-from-(j+1)`
/// - `PREFIX-rest-k`: after a pair, a comma and `PREFIX-from-k`, optional unless a required
///   parameter is still to come
fn pair_chain(
    prefix: &str,
    pairs: Vec<Expr>,
    params: &[&ParamSpec],
    rules: &mut Vec<(String, Expr)>,
) -> Option<Expr> {
    let ws = || rule_ref("ws");
    let count = pairs.len();
    let mut required_from = vec![false; count + 1];
    for k in (0..count).rev() {
        required_from[k] = required_from[k + 1] || params[k].required;
    }
    for (j, pair) in pairs.into_iter().enumerate() {
        let rest = format!("{prefix}-rest-{}", j + 1);
        let written = if j + 1 < count {
            seq(vec![pair, rule_ref(&rest)])
        } else {
            pair
        };
        let from = if params[j].required || j + 1 == count {
            written
        } else {
            Expr::Alt(vec![written, rule_ref(&format!("{prefix}-from-{}", j + 1))])
        };
        rules.push((format!("{prefix}-from-{j}"), from));
        if j + 1 < count {
            let more = seq(vec![
                ws(),
                lit(","),
                ws(),
                rule_ref(&format!("{prefix}-from-{}", j + 1)),
            ]);
            let more = if required_from[j + 1] {
                more
            } else {
                optional(more)
            };
            rules.push((rest, more));
        }
    }
    if count == 0 {
        return None;
    }
    let all = seq(vec![rule_ref(&format!("{prefix}-from-0")), ws()]);
    Some(if required_from[0] { all } else { optional(all) })
}

/// The parts of a JSON object of the pairs `chain` (see [`pair_chain`]).
fn object(chain: Option<Expr>) -> Vec<Expr> {
    let mut parts = vec![lit("{"), rule_ref("ws")];
    parts.extend(chain);
    parts.push(lit("}"));
    parts
}

/// Is `param` an object, an array or a composition (`anyOf`, …) in the tool's own JSON Schema
/// (an MCP tool's `inputSchema`)? Our parameters carry such a value as JSON text; natively the
/// model writes the value itself.
fn is_structured(tool: &ToolSpec, param: &str) -> bool {
    let Some(property) = tool
        .input_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(param))
    else {
        return false;
    };
    let simple = ["string", "integer", "number", "boolean"];
    match property.get("type") {
        Some(serde_json::Value::String(t)) => !simple.contains(&t.as_str()),
        Some(serde_json::Value::Array(types)) => {
            let non_null: Vec<&str> = types
                .iter()
                .filter_map(serde_json::Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            !(non_null.len() == 1 && simple.contains(&non_null[0]))
        }
        None => property.get("enum").is_none(),
        _ => true,
    }
}

/// The rules of any JSON value (`json-value`), over the shared string and number rules. The
/// first choice of each ends without recursing (the tests' generator takes it deep down).
fn add_any_json(rules: &mut Vec<(String, Expr)>) {
    let ws = || rule_ref("ws");
    let pair = || {
        seq(vec![
            rule_ref("json-string"),
            ws(),
            lit(":"),
            ws(),
            rule_ref("json-value"),
        ])
    };
    let more = |item: Expr| Expr::Repeat {
        expr: Box::new(seq(vec![ws(), lit(","), ws(), item])),
        min: 0,
        max: None,
    };
    rules.push((
        "json-value".into(),
        Expr::Alt(vec![
            rule_ref("json-string"),
            rule_ref("json-number"),
            lit("true"),
            lit("false"),
            lit("null"),
            rule_ref("json-object"),
            rule_ref("json-array"),
        ]),
    ));
    rules.push((
        "json-object".into(),
        seq(vec![
            lit("{"),
            ws(),
            optional(seq(vec![pair(), more(pair())])),
            ws(),
            lit("}"),
        ]),
    ));
    rules.push((
        "json-array".into(),
        seq(vec![
            lit("["),
            ws(),
            optional(seq(vec![
                rule_ref("json-value"),
                more(rule_ref("json-value")),
            ])),
            ws(),
            lit("]"),
        ]),
    ));
}

/// The expression for one parameter's JSON value: a shared rule for its type, or a rule of its
/// own listing its allowed values (as JSON strings).
fn json_value_rule(
    p: &ParamSpec,
    name: &str,
    rules: &mut Vec<(String, Expr)>,
    uses: &mut Uses,
) -> Expr {
    let values: Vec<&String> = p
        .enum_values
        .iter()
        .flatten()
        .filter(|v| !v.is_empty())
        .collect();
    if !values.is_empty() {
        rules.push((
            name.to_string(),
            Expr::Alt(
                values
                    .into_iter()
                    .map(|v| lit(&serde_json::Value::from(v.as_str()).to_string()))
                    .collect(),
            ),
        ));
        return rule_ref(name);
    }
    if !uses.0.contains(&p.kind) {
        uses.0.push(p.kind);
    }
    rule_ref(match p.kind {
        ParamType::String => "json-string",
        ParamType::Integer => "json-integer",
        ParamType::Number => "json-number",
        ParamType::Boolean => "json-boolean",
    })
}

/// The value types whose shared rules the grammar needs.
#[derive(Default)]
struct Uses(Vec<ParamType>);

impl Uses {
    fn add_shared(&self, rules: &mut Vec<(String, Expr)>) {
        let cdata = |inner: Expr| seq(vec![lit("<![CDATA["), inner, lit("]]>")]);
        let uses = |kind| self.0.contains(&kind);
        if uses(ParamType::String) {
            // Any text, then `]]>`: a small automaton over how much of `]]>` was just seen
            // (nothing, `]`, `]]`). After `]]` only `>` (or more `]`) may follow: small models
            // often end a value with `]]</content>`, and here that `]]` ends the value as they
            // meant instead of taking the rest of the answer into it. The price: a value cannot
            // hold `]]` followed by anything but `]`, which tool arguments hardly ever need.
            rules.push((
                "text".into(),
                seq(vec![lit("<![CDATA["), rule_ref("text-0")]),
            ));
            rules.push((
                "text-0".into(),
                seq(vec![
                    Expr::Repeat {
                        expr: Box::new(class(true, "]")),
                        min: 0,
                        max: None,
                    },
                    lit("]"),
                    rule_ref("text-1"),
                ]),
            ));
            rules.push((
                "text-1".into(),
                Expr::Alt(vec![
                    seq(vec![lit("]"), rule_ref("text-2")]),
                    seq(vec![class(true, "]"), rule_ref("text-0")]),
                ]),
            ));
            rules.push((
                "text-2".into(),
                Expr::Alt(vec![lit(">"), seq(vec![lit("]"), rule_ref("text-2")])]),
            ));
        }
        if uses(ParamType::Integer) {
            rules.push((
                "integer".into(),
                cdata(seq(vec![optional(lit("-")), digits()])),
            ));
        }
        if uses(ParamType::Number) {
            rules.push((
                "number".into(),
                cdata(seq(vec![
                    optional(lit("-")),
                    digits(),
                    optional(seq(vec![lit("."), digits()])),
                ])),
            ));
        }
        if uses(ParamType::Boolean) {
            rules.push((
                "boolean".into(),
                cdata(Expr::Alt(vec![lit("true"), lit("false")])),
            ));
        }
    }
}

impl Uses {
    /// The shared rules of JSON values: strings with JSON's escapes but `\/` (a JSON string is
    /// then a Python string of the same text, as LFM2's pythonic calls read it; Python keeps
    /// `\/` as two characters) and a `\u` escape never naming a lone surrogate, which JSON
    /// readers refuse; whole numbers without leading zeros, decimals, booleans.
    fn add_json(&self, rules: &mut Vec<(String, Expr)>) {
        let uses = |kind| self.0.contains(&kind);
        // 1 to 18 digits, the first not 0.
        let nonzero = || {
            seq(vec![
                Expr::Class {
                    negated: false,
                    ranges: vec![('1', '9')],
                },
                Expr::Repeat {
                    expr: Box::new(Expr::Class {
                        negated: false,
                        ranges: vec![('0', '9')],
                    }),
                    min: 0,
                    max: Some(MAX_DIGITS - 1),
                },
            ])
        };
        if uses(ParamType::String) {
            let hex = Expr::Class {
                negated: false,
                ranges: vec![('0', '9'), ('a', 'f'), ('A', 'F')],
            };
            rules.push((
                "json-string".into(),
                seq(vec![
                    lit("\""),
                    Expr::Repeat {
                        expr: Box::new(rule_ref("json-char")),
                        min: 0,
                        max: None,
                    },
                    lit("\""),
                ]),
            ));
            rules.push((
                "json-char".into(),
                Expr::Alt(vec![
                    Expr::Class {
                        negated: true,
                        ranges: vec![('"', '"'), ('\\', '\\'), ('\0', '\u{1f}')],
                    },
                    seq(vec![
                        lit("\\"),
                        Expr::Alt(vec![
                            class(false, "\"\\bfnrt"),
                            seq(vec![
                                lit("u"),
                                Expr::Class {
                                    negated: false,
                                    ranges: vec![
                                        ('0', '9'),
                                        ('a', 'c'),
                                        ('A', 'C'),
                                        ('e', 'f'),
                                        ('E', 'F'),
                                    ],
                                },
                                Expr::Repeat {
                                    expr: Box::new(hex),
                                    min: 3,
                                    max: Some(3),
                                },
                            ]),
                        ]),
                    ]),
                ]),
            ));
        }
        if uses(ParamType::Integer) {
            // Not `-0`: JSON readers take it for the decimal -0.0.
            rules.push((
                "json-integer".into(),
                Expr::Alt(vec![lit("0"), seq(vec![optional(lit("-")), nonzero()])]),
            ));
        }
        if uses(ParamType::Number) {
            rules.push((
                "json-number".into(),
                seq(vec![
                    optional(lit("-")),
                    Expr::Alt(vec![lit("0"), nonzero()]),
                    optional(seq(vec![lit("."), digits()])),
                ]),
            ));
        }
        if uses(ParamType::Boolean) {
            rules.push((
                "json-boolean".into(),
                Expr::Alt(vec![lit("true"), lit("false")]),
            ));
        }
    }
}

/// The expression for one parameter's value: a shared rule for its type, or a rule of its own
/// listing its allowed values.
fn value_rule(p: &ParamSpec, name: &str, rules: &mut Vec<(String, Expr)>, uses: &mut Uses) -> Expr {
    let values: Vec<&String> = p
        .enum_values
        .iter()
        .flatten()
        .filter(|v| !v.is_empty() && !v.contains("]]>"))
        .collect();
    if !values.is_empty() {
        rules.push((
            name.to_string(),
            seq(vec![
                lit("<![CDATA["),
                Expr::Alt(values.into_iter().map(|v| lit(v)).collect()),
                lit("]]>"),
            ]),
        ));
        return rule_ref(name);
    }
    if !uses.0.contains(&p.kind) {
        uses.0.push(p.kind);
    }
    rule_ref(match p.kind {
        ParamType::String => "text",
        ParamType::Integer => "integer",
        ParamType::Number => "number",
        ParamType::Boolean => "boolean",
    })
}

/// One expression in GBNF; `nested` wraps alternatives and sequences in parentheses.
fn render(expr: &Expr, nested: bool) -> String {
    match expr {
        Expr::Lit(text) => {
            let mut out = String::from("\"");
            for c in text.chars() {
                escape_into(c, &['"'], &mut out);
            }
            out.push('"');
            out
        }
        Expr::Class { negated, ranges } => {
            let mut out = String::from(if *negated { "[^" } else { "[" });
            for &(from, to) in ranges {
                escape_into(from, &[']', '[', '-', '^'], &mut out);
                if to != from {
                    out.push('-');
                    escape_into(to, &[']', '[', '-', '^'], &mut out);
                }
            }
            out.push(']');
            out
        }
        Expr::Ref(name) => name.clone(),
        Expr::Seq(parts) => {
            // A sequence inside a sequence needs no parentheses; alternatives do.
            let inner = parts
                .iter()
                .map(|p| render(p, !matches!(p, Expr::Seq(_))))
                .collect::<Vec<_>>()
                .join(" ");
            if nested && parts.len() > 1 {
                format!("({inner})")
            } else {
                inner
            }
        }
        Expr::Alt(options) => {
            let inner = options
                .iter()
                .map(|p| render(p, false))
                .collect::<Vec<_>>()
                .join(" | ");
            if nested && options.len() > 1 {
                format!("({inner})")
            } else {
                inner
            }
        }
        Expr::Repeat { expr, min, max } => {
            let atom = match expr.as_ref() {
                Expr::Seq(p) if p.len() > 1 => format!("({})", render(expr, false)),
                Expr::Alt(p) if p.len() > 1 => format!("({})", render(expr, false)),
                Expr::Repeat { .. } => format!("({})", render(expr, false)),
                _ => render(expr, true),
            };
            let suffix = match (min, max) {
                (0, Some(1)) => "?".to_string(),
                (0, None) => "*".to_string(),
                (1, None) => "+".to_string(),
                (m, None) => format!("{{{m},}}"),
                (m, Some(n)) => format!("{{{m},{n}}}"),
            };
            format!("{atom}{suffix}")
        }
    }
}

/// `c` as GBNF writes it inside a literal or a class: backslash escapes for the characters
/// that would end or change it and for control characters; everything else as itself (llama.cpp
/// reads UTF-8).
fn escape_into(c: char, special: &[char], out: &mut String) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if special.contains(&c) => {
            out.push('\\');
            out.push(c);
        }
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            let _ = write!(out, "\\x{:02X}", c as u32);
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;
    use artifactflow_ground::tool_spec::{ParamSpec, ParamType, ToolSpec};
    use proptest::prelude::*;
    use serde_json::json;
    use std::collections::HashMap;

    fn tool(name: &str, params: Vec<ParamSpec>) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("The {name} tool"),
            params,
            input_schema: None,
        }
    }

    /// The built-in, artifact, HTTP and MCP shapes: text, numbers, booleans, allowed values,
    /// optional parameters with defaults, a tool without parameters, MCP-style names.
    fn shapes() -> Vec<ToolSpec> {
        vec![
            tool(
                "web_search",
                vec![
                    ParamSpec::new("query", ParamType::String, "What to search for"),
                    ParamSpec::new("count", ParamType::Integer, "How many").with_default(json!(10)),
                    ParamSpec::new("freshness", ParamType::String, "How recent")
                        .optional()
                        .with_values(["oneDay", "oneWeek", "noLimit"]),
                ],
            ),
            tool(
                "create_artifact",
                vec![
                    ParamSpec::new("id", ParamType::String, ""),
                    ParamSpec::new("title", ParamType::String, ""),
                    ParamSpec::new("content", ParamType::String, ""),
                ],
            ),
            tool(
                "weather_now",
                vec![
                    ParamSpec::new("latitude", ParamType::Number, ""),
                    ParamSpec::new("metric", ParamType::Boolean, "").optional(),
                    ParamSpec::new("unit", ParamType::String, "")
                        .optional()
                        .with_values(["°C", "a \"quoted\" \\ unit"]),
                ],
            ),
            tool("list_artifacts", vec![]),
            tool(
                "files__read_file",
                vec![ParamSpec::new(
                    "path",
                    ParamType::String,
                    "A \"quoted\" path",
                )],
            ),
        ]
    }

    #[test]
    fn the_grammar_of_a_search_tool_is_stable() {
        let grammar = call_grammar(&shapes()[..1]).unwrap().unwrap().gbnf();
        insta::assert_snapshot!(grammar, @r###"
        root ::= call
        call ::= "<tool_call>" ws tool-0 ws "</tool_call>"
        tool-0 ::= "<name>" "web_search" "</name>" ws "<params>" ws tool-0-param-0 (ws tool-0-param-1)? (ws tool-0-param-2)? ws "</params>"
        tool-0-param-0 ::= "<query>" text "</query>"
        tool-0-param-1 ::= "<count>" integer "</count>"
        tool-0-param-2 ::= "<freshness>" tool-0-param-2-value "</freshness>"
        tool-0-param-2-value ::= "<![CDATA[" ("oneDay" | "oneWeek" | "noLimit") "]]>"
        text ::= "<![CDATA[" text-0
        text-0 ::= [^\]]* "]" text-1
        text-1 ::= "]" text-2 | [^\]] text-0
        text-2 ::= ">" | "]" text-2
        integer ::= "<![CDATA[" "-"? [0-9]{1,18} "]]>"
        ws ::= [ \t\r\n]{0,16}
        "###);
    }

    #[test]
    fn the_grammar_of_every_shape_is_stable() {
        let grammar = call_grammar(&shapes()).unwrap().unwrap().gbnf();
        insta::assert_snapshot!(grammar, @r###"
        root ::= call
        call ::= "<tool_call>" ws (tool-0 | tool-1 | tool-2 | tool-3 | tool-4) ws "</tool_call>"
        tool-0 ::= "<name>" "web_search" "</name>" ws "<params>" ws tool-0-param-0 (ws tool-0-param-1)? (ws tool-0-param-2)? ws "</params>"
        tool-0-param-0 ::= "<query>" text "</query>"
        tool-0-param-1 ::= "<count>" integer "</count>"
        tool-0-param-2 ::= "<freshness>" tool-0-param-2-value "</freshness>"
        tool-0-param-2-value ::= "<![CDATA[" ("oneDay" | "oneWeek" | "noLimit") "]]>"
        tool-1 ::= "<name>" "create_artifact" "</name>" ws "<params>" ws tool-1-param-0 ws tool-1-param-1 ws tool-1-param-2 ws "</params>"
        tool-1-param-0 ::= "<id>" text "</id>"
        tool-1-param-1 ::= "<title>" text "</title>"
        tool-1-param-2 ::= "<content>" text "</content>"
        tool-2 ::= "<name>" "weather_now" "</name>" ws "<params>" ws tool-2-param-0 (ws tool-2-param-1)? (ws tool-2-param-2)? ws "</params>"
        tool-2-param-0 ::= "<latitude>" number "</latitude>"
        tool-2-param-1 ::= "<metric>" boolean "</metric>"
        tool-2-param-2 ::= "<unit>" tool-2-param-2-value "</unit>"
        tool-2-param-2-value ::= "<![CDATA[" ("°C" | "a \"quoted\" \\ unit") "]]>"
        tool-3 ::= "<name>" "list_artifacts" "</name>" (ws "<params>" ws "</params>")?
        tool-4 ::= "<name>" "files__read_file" "</name>" ws "<params>" ws tool-4-param-0 ws "</params>"
        tool-4-param-0 ::= "<path>" text "</path>"
        text ::= "<![CDATA[" text-0
        text-0 ::= [^\]]* "]" text-1
        text-1 ::= "]" text-2 | [^\]] text-0
        text-2 ::= ">" | "]" text-2
        integer ::= "<![CDATA[" "-"? [0-9]{1,18} "]]>"
        number ::= "<![CDATA[" "-"? [0-9]{1,18} ("." [0-9]{1,18})? "]]>"
        boolean ::= "<![CDATA[" ("true" | "false") "]]>"
        ws ::= [ \t\r\n]{0,16}
        "###);
    }

    #[test]
    fn no_tools_no_grammar() {
        assert!(call_grammar(&[]).unwrap().is_none());
        assert!(call_grammar(&[tool("", vec![])]).unwrap().is_none());
    }

    #[test]
    fn repeated_tools_and_parameters_appear_once() {
        let twice = vec![
            tool(
                "a",
                vec![
                    ParamSpec::new("x", ParamType::String, ""),
                    ParamSpec::new("x", ParamType::Integer, ""),
                ],
            ),
            tool("a", vec![]),
        ];
        let gbnf = call_grammar(&twice).unwrap().unwrap().gbnf();
        assert_eq!(gbnf.matches("\"a\"").count(), 1, "{gbnf}");
        assert_eq!(gbnf.matches("\"<x>\"").count(), 1, "{gbnf}");
    }

    // ---- generating what the grammar accepts ------------------------------------------------

    /// A small deterministic generator (xorshift), seeded by proptest.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Characters a value may be drawn from: letters, markup, brackets, quotes, whitespace and
    /// characters outside ASCII.
    const POOL: &[char] = &[
        'a', 'Z', '0', '7', ' ', '\n', '\t', '<', '>', '/', ']', '[', '&', '"', '\'', '{', '}',
        '!', '-', '.', 'é', '€', '中', '😀', '\\',
    ];

    fn in_class(c: char, negated: bool, ranges: &[(char, char)]) -> bool {
        ranges.iter().any(|&(a, b)| (a..=b).contains(&c)) != negated
    }

    /// Generates random strings a grammar accepts.
    struct Generator<'g> {
        rules: HashMap<&'g str, &'g Expr>,
        /// The rules being expanded, outermost first.
        open: Vec<&'g str>,
        rng: Rng,
    }

    impl<'g> Generator<'g> {
        fn new(g: &'g Grammar, seed: u64) -> Self {
            Generator {
                rules: g.rules.iter().map(|(n, e)| (n.as_str(), e)).collect(),
                open: Vec::new(),
                rng: Rng(seed | 1),
            }
        }

        /// A random string `expr` accepts. Past `depth` 40 the generator stops recursing where
        /// it can (the shortest choice of an alternative, the least repetitions). Depth counts
        /// repetitions and rules entered again while open (a JSON value within a JSON value),
        /// not a chain of different rules (one per parameter of a wide tool), which ends.
        fn generate(&mut self, expr: &'g Expr, depth: u32, out: &mut String) {
            let deep = depth > 40;
            match expr {
                Expr::Lit(text) => out.push_str(text),
                Expr::Class { negated, ranges } => {
                    let choices: Vec<char> = if *negated {
                        POOL.iter()
                            .copied()
                            .filter(|c| in_class(*c, true, ranges))
                            .collect()
                    } else {
                        ranges.iter().flat_map(|&(a, b)| a..=b).collect()
                    };
                    out.push(choices[self.rng.below(choices.len())]);
                }
                Expr::Ref(name) => {
                    let rule = *self
                        .rules
                        .get(name.as_str())
                        .unwrap_or_else(|| panic!("no rule {name}"));
                    let again = self.open.contains(&name.as_str());
                    self.open.push(name);
                    self.generate(rule, depth + u32::from(again), out);
                    self.open.pop();
                }
                Expr::Seq(parts) => {
                    for p in parts {
                        self.generate(p, depth, out);
                    }
                }
                Expr::Alt(options) => {
                    // Rules recurse through their later options (the first one ends): deep
                    // down, take the first.
                    let pick = if deep {
                        0
                    } else {
                        self.rng.below(options.len())
                    };
                    self.generate(&options[pick], depth, out);
                }
                Expr::Repeat { expr, min, max } => {
                    let most = max.unwrap_or(min + 6);
                    let n = if deep {
                        *min
                    } else {
                        *min + self.rng.below((most - min + 1) as usize) as u32
                    };
                    for _ in 0..n {
                        self.generate(expr, depth + 1, out);
                    }
                }
            }
        }
    }

    fn accepted(g: &Grammar, seed: u64) -> String {
        let mut generator = Generator::new(g, seed);
        let mut out = String::new();
        generator.generate(g.rule("root").unwrap(), 0, &mut out);
        out
    }

    /// Is `call` a valid call of one of `tools`: a tool it has, only that tool's parameters,
    /// every required one, each value of its type or one of its allowed values?
    fn check_call(call: &crate::ToolCall, tools: &[ToolSpec]) -> Result<(), String> {
        let tool = tools
            .iter()
            .find(|t| t.name == call.name)
            .ok_or_else(|| format!("no tool {:?} ({:?})", call.name, call.error))?;
        for (name, value) in &call.params {
            let p = tool
                .params
                .iter()
                .find(|p| &p.name == name)
                .ok_or_else(|| format!("{} has no parameter {name}", tool.name))?;
            if let Some(values) = &p.enum_values {
                if !values.contains(value) {
                    return Err(format!("{name}: {value:?} is not one of {values:?}"));
                }
            }
            let ok = match p.kind {
                ParamType::String => true,
                ParamType::Integer => value.parse::<i64>().is_ok(),
                ParamType::Number => value.parse::<f64>().is_ok_and(f64::is_finite),
                ParamType::Boolean => value == "true" || value == "false",
            };
            if !ok {
                return Err(format!("{name}: {value:?} is not a {}", p.kind.as_str()));
            }
        }
        for p in tool.params.iter().filter(|p| p.required) {
            if !call.params.contains_key(&p.name) {
                return Err(format!("{}: the required {} is missing", tool.name, p.name));
            }
        }
        Ok(())
    }

    #[test]
    fn every_string_the_shapes_accept_parses_into_valid_calls() {
        let tools = shapes();
        let g = call_grammar(&tools).unwrap().unwrap();
        for seed in 0..2000u64 {
            let text = accepted(&g, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let calls = parse(&text);
            assert_eq!(calls.len(), 1, "one call in {text:?}");
            for call in &calls {
                if let Err(e) = check_call(call, &tools) {
                    panic!("{e}\nin {text:?}\nread as {calls:?}");
                }
            }
        }
    }

    #[test]
    fn the_native_grammar_of_a_search_tool_is_stable() {
        let grammar = native_call_grammar(&shapes()[..1]).unwrap().unwrap().gbnf();
        insta::assert_snapshot!(grammar, @r###"
        root ::= "<tool_call>" ws "{" ws "\"name\"" ws ":" ws tool-0 ws "}" ws "</tool_call>"
        tool-0 ::= "\"web_search\"" ws "," ws "\"arguments\"" ws ":" ws tool-0-args
        tool-0-param-2 ::= "\"oneDay\"" | "\"oneWeek\"" | "\"noLimit\""
        tool-0-from-0 ::= "\"query\"" ws ":" ws json-string tool-0-rest-1
        tool-0-rest-1 ::= (ws "," ws tool-0-from-1)?
        tool-0-from-1 ::= "\"count\"" ws ":" ws json-integer tool-0-rest-2 | tool-0-from-2
        tool-0-rest-2 ::= (ws "," ws tool-0-from-2)?
        tool-0-from-2 ::= "\"freshness\"" ws ":" ws tool-0-param-2
        tool-0-args ::= "{" ws tool-0-from-0 ws "}"
        json-string ::= "\"" json-char* "\""
        json-char ::= [^"\\\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3,3})
        json-integer ::= "0" | "-"? [1-9] [0-9]{0,17}
        ws ::= [ \t\r\n]{0,16}
        "###);
    }

    /// Optional parameters before and after a required one: a JSON call begins with the
    /// required one, and the optional ones follow in their order, each optional (`from`), a
    /// comma after any pair optional (`rest`): a model that wants to go on after the required
    /// value (its `",` token) may, and one that wants to stop may.
    #[test]
    fn the_native_grammar_of_leading_optional_parameters_is_stable() {
        let page = tool(
            "list_pages",
            vec![
                ParamSpec::new("limit", ParamType::Integer, "").optional(),
                ParamSpec::new("cursor", ParamType::String, "").optional(),
                ParamSpec::new("space", ParamType::String, ""),
                ParamSpec::new("archived", ParamType::Boolean, "").optional(),
            ],
        );
        let grammar = native_call_grammar(&[page]).unwrap().unwrap().gbnf();
        insta::assert_snapshot!(grammar, @r###"
        root ::= "<tool_call>" ws "{" ws "\"name\"" ws ":" ws tool-0 ws "}" ws "</tool_call>"
        tool-0 ::= "\"list_pages\"" ws "," ws "\"arguments\"" ws ":" ws tool-0-args
        tool-0-from-0 ::= "\"space\"" ws ":" ws json-string tool-0-rest-1
        tool-0-rest-1 ::= (ws "," ws tool-0-from-1)?
        tool-0-from-1 ::= "\"limit\"" ws ":" ws json-integer tool-0-rest-2 | tool-0-from-2
        tool-0-rest-2 ::= (ws "," ws tool-0-from-2)?
        tool-0-from-2 ::= "\"cursor\"" ws ":" ws json-string tool-0-rest-3 | tool-0-from-3
        tool-0-rest-3 ::= (ws "," ws tool-0-from-3)?
        tool-0-from-3 ::= "\"archived\"" ws ":" ws json-boolean
        tool-0-args ::= "{" ws tool-0-from-0 ws "}"
        json-string ::= "\"" json-char* "\""
        json-char ::= [^"\\\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3,3})
        json-integer ::= "0" | "-"? [1-9] [0-9]{0,17}
        json-boolean ::= "true" | "false"
        ws ::= [ \t\r\n]{0,16}
        "###);
    }

    /// Is `text` one native call (`<tool_call>{"name": …, "arguments": {…}}</tool_call>`) of
    /// one of `tools`: a tool it has, only that tool's parameters, every required one, each value
    /// a JSON value of its type or one of its allowed values?
    fn check_native(text: &str, tools: &[ToolSpec]) -> Result<(), String> {
        let inner = text
            .strip_prefix("<tool_call>")
            .and_then(|t| t.strip_suffix("</tool_call>"))
            .ok_or("not framed by <tool_call>")?;
        check_json_call(inner, tools)
    }

    /// Is `text` one JSON call object of one of `tools`, its arguments (under `arguments` or
    /// `parameters`) valid?
    fn check_json_call(text: &str, tools: &[ToolSpec]) -> Result<(), String> {
        let call: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let name = call["name"].as_str().ok_or("no name")?;
        let args = call
            .get("arguments")
            .or_else(|| call.get("parameters"))
            .and_then(|a| a.as_object())
            .ok_or("arguments not an object")?;
        check_arguments(name, args, tools)
    }

    /// Are `args` valid arguments of the tool `name` of `tools`?
    fn check_arguments(
        name: &str,
        args: &serde_json::Map<String, serde_json::Value>,
        tools: &[ToolSpec],
    ) -> Result<(), String> {
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| format!("no tool {name:?}"))?;
        for (key, value) in args {
            let p = tool
                .params
                .iter()
                .find(|p| &p.name == key)
                .ok_or_else(|| format!("{name} has no parameter {key}"))?;
            if let Some(values) = &p.enum_values {
                if !values.iter().any(|v| value.as_str() == Some(v)) {
                    return Err(format!("{key}: {value} is not one of {values:?}"));
                }
            }
            let ok = match p.kind {
                // An object or array of the tool's own schema: any JSON value.
                _ if is_structured(tool, key) => true,
                ParamType::String => value.is_string(),
                ParamType::Integer => value.is_i64(),
                ParamType::Number => value.is_number(),
                ParamType::Boolean => value.is_boolean(),
            };
            if !ok {
                return Err(format!("{key}: {value} is not a {}", p.kind.as_str()));
            }
        }
        for p in tool.params.iter().filter(|p| p.required) {
            if !args.contains_key(&p.name) {
                return Err(format!("{name}: the required {} is missing", p.name));
            }
        }
        Ok(())
    }

    #[test]
    fn every_string_the_native_grammar_of_the_shapes_accepts_is_a_valid_call() {
        let tools = shapes();
        let g = native_call_grammar(&tools).unwrap().unwrap();
        let mut optional_left_out = false;
        for seed in 0..2000u64 {
            let text = accepted(&g, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            if let Err(e) = check_native(&text, &tools) {
                panic!("{e}\nin {text:?}");
            }
            optional_left_out |= text.contains("\"web_search\"") && !text.contains("\"count\"");
        }
        assert!(
            optional_left_out,
            "optional parameters are sometimes left out"
        );
        assert!(native_call_grammar(&[]).unwrap().is_none());
    }

    /// An MCP tool whose schema has an array, an object and a composition: the model writes
    /// them as JSON values, and the rest keeps its types.
    #[test]
    fn structured_mcp_parameters_take_any_json_value_natively() {
        let mut mcp = tool(
            "files__search",
            vec![
                ParamSpec::new("tags", ParamType::String, ""),
                ParamSpec::new("filter", ParamType::String, "").optional(),
                ParamSpec::new("either", ParamType::String, "").optional(),
                ParamSpec::new("name", ParamType::String, ""),
                ParamSpec::new("depth", ParamType::Integer, "").optional(),
            ],
        );
        mcp.input_schema = Some(json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "filter": {"type": ["object", "null"]},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "name": {"type": ["string", "null"]},
            "depth": {"type": "integer"},
        }, "required": ["tags", "name"]}));
        let tools = vec![mcp];
        let g = native_call_grammar(&tools).unwrap().unwrap();
        let gbnf = g.gbnf();
        assert!(
            gbnf.contains("\"\\\"tags\\\"\" ws \":\" ws json-value"),
            "{gbnf}"
        );
        assert!(
            gbnf.contains("\"\\\"name\\\"\" ws \":\" ws json-string"),
            "{gbnf}"
        );
        assert!(
            gbnf.contains("\"\\\"depth\\\"\" ws \":\" ws json-integer"),
            "{gbnf}"
        );
        let mut shapes = HashSet::new();
        for seed in 0..2000u64 {
            let text = accepted(&g, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            if let Err(e) = check_native(&text, &tools) {
                panic!("{e}\nin {text:?}");
            }
            let call: serde_json::Value = serde_json::from_str(
                text.trim_start_matches("<tool_call>")
                    .trim_end_matches("</tool_call>"),
            )
            .unwrap();
            let tags = &call["arguments"]["tags"];
            shapes.insert(if tags.is_array() {
                "array"
            } else if tags.is_object() {
                "object"
            } else {
                "scalar"
            });
        }
        assert_eq!(shapes.len(), 3, "{shapes:?}");
    }

    /// A tool with `n` optional parameters of every kind (text, whole numbers, decimals,
    /// booleans, allowed values), as a generated schema of a large API might have.
    fn wide_tool(n: usize) -> ToolSpec {
        let params = (0..n)
            .map(|j| {
                let name = format!("option_{j}");
                match j % 5 {
                    0 => ParamSpec::new(name, ParamType::String, ""),
                    1 => ParamSpec::new(name, ParamType::Integer, ""),
                    2 => ParamSpec::new(name, ParamType::Number, ""),
                    3 => ParamSpec::new(name, ParamType::Boolean, ""),
                    _ => ParamSpec::new(name, ParamType::String, "").with_values(["on", "off"]),
                }
                .optional()
            })
            .collect();
        tool("wide", params)
    }

    /// [`native_call_grammar`] or [`call_grammar`].
    type Builder = fn(&[ToolSpec]) -> Result<Option<Grammar>, GrammarTooLarge>;

    /// Bytes of GBNF and number of rules of the grammar of one tool with `n` optional
    /// parameters.
    fn grammar_size(build: Builder, n: usize) -> (usize, usize) {
        let grammar = build(&[wide_tool(n)]).unwrap().expect("a grammar");
        (grammar.gbnf().len(), grammar.rules.len())
    }

    /// Each optional tail is a rule of its own, referred to: the grammar grows with the number
    /// of parameters, not with its square (2,000 optional parameters once gave 100 MB of GBNF,
    /// past the runtime's 2 MB limit on a request from about 270).
    #[test]
    fn grammars_grow_linearly_with_the_optional_parameters() {
        for (kind, build) in [
            ("native", native_call_grammar as Builder),
            ("XML", call_grammar),
        ] {
            let (bytes_100, rules_100) = grammar_size(build, 100);
            let (bytes_1000, rules_1000) = grammar_size(build, 1000);
            let (bytes_2000, rules_2000) = grammar_size(build, 2000);
            let sizes = format!(
                "{kind}: {bytes_100}, {bytes_1000}, {bytes_2000} bytes; \
                 {rules_100}, {rules_1000}, {rules_2000} rules"
            );
            assert!(bytes_2000 * 2 < bytes_1000 * 5, "{sizes}");
            assert!(bytes_1000 < bytes_100 * 12, "{sizes}");
            assert!(rules_2000 * 2 < rules_1000 * 5, "{sizes}");
            assert!(rules_1000 < rules_100 * 12, "{sizes}");
            // Well within what the runtime takes in a request, with the conversation beside it.
            assert!(bytes_2000 < 512 * 1024, "{sizes}");
        }
    }

    /// A tool past [`MAX_TOOL_PARAMS`] gets no grammar, and the error names it, its count and
    /// what to do; one at the limit gets one.
    #[test]
    fn a_tool_with_too_many_parameters_is_refused_by_name() {
        for (kind, build) in [
            ("native", native_call_grammar as Builder),
            ("XML", call_grammar),
        ] {
            let tools = vec![shapes().remove(0), wide_tool(MAX_TOOL_PARAMS + 1)];
            let error = build(&tools).expect_err(kind);
            assert_eq!(error.tool, "wide", "{kind}");
            assert_eq!(
                error.excess,
                Excess::Params {
                    count: MAX_TOOL_PARAMS + 1
                },
                "{kind}"
            );
            let message = error.to_string();
            for says in ["`wide`", "4097 parameters", "4096", "leave the tool out"] {
                assert!(message.contains(says), "{kind}: {says} in {message}");
            }
            let at_limit = build(&[wide_tool(MAX_TOOL_PARAMS)]).expect(kind);
            assert!(
                at_limit.unwrap().gbnf().len() <= MAX_GRAMMAR_BYTES,
                "{kind}"
            );
        }
    }

    /// Tools whose grammar together would be over [`MAX_GRAMMAR_BYTES`] (here through allowed
    /// values) get none, and the error names the tool that takes the most of it; with its MCP
    /// server known, the message names the server and its `SERVER.*` entry.
    #[test]
    fn a_grammar_over_the_byte_limit_is_refused_naming_the_largest_tool() {
        let values = |n: usize, tag: &str| -> Vec<String> {
            (0..n).map(|v| format!("{tag} {v:0>40}")).collect()
        };
        let menu = tool(
            "menu.pick",
            vec![ParamSpec::new("dish", ParamType::String, "").with_values(values(15_000, "dish"))],
        );
        let drinks = tool(
            "menu.drink",
            vec![ParamSpec::new("drink", ParamType::String, "").with_values(values(8_000, "drink"))],
        );
        for (kind, build) in [
            ("native", native_call_grammar as Builder),
            ("XML", call_grammar),
        ] {
            // Each alone fits.
            for one in [&menu, &drinks] {
                let grammar = build(std::slice::from_ref(one)).expect(kind).unwrap();
                assert!(grammar.gbnf().len() <= MAX_GRAMMAR_BYTES, "{kind}");
            }
            let mut error =
                build(&[shapes().remove(0), drinks.clone(), menu.clone()]).expect_err(kind);
            assert_eq!(error.tool, "menu.pick", "{kind}");
            let Excess::Bytes { bytes, tool_bytes } = error.excess else {
                panic!("{kind}: {error:?}");
            };
            assert!(
                bytes > MAX_GRAMMAR_BYTES && tool_bytes > bytes / 2,
                "{kind}: {error:?}"
            );
            let message = error.to_string();
            for says in ["`menu.pick`", "MiB", "1 MiB", "leave the tool out"] {
                assert!(message.contains(says), "{kind}: {says} in {message}");
            }
            error.server = Some("menu".into());
            let message = error.to_string();
            for says in ["MCP server `menu`", "`menu.*`"] {
                assert!(message.contains(says), "{kind}: {says} in {message}");
            }
        }
    }

    /// Runs `test` on a thread with room for the generator's recursion through a chain of
    /// 2,000 rules.
    fn with_deep_stack(test: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(64 * 1024 * 1024)
            .spawn(test)
            .expect("a test thread")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    }

    /// The property of the small shapes on a tool of 2,000 parameters, two of them required:
    /// every string the grammar accepts is a valid call, and the strings reach the last
    /// parameters and begin with later ones.
    #[test]
    fn every_string_the_native_grammar_of_a_wide_tool_accepts_is_a_valid_call() {
        with_deep_stack(|| {
            let mut wide = wide_tool(2000);
            wide.params[700].required = true;
            wide.params[1999].required = true;
            let tools = vec![wide, tool("list_artifacts", vec![])];
            let g = native_call_grammar(&tools).unwrap().unwrap();
            let (mut most, mut thirds) = (0, HashSet::new());
            for seed in 0..40u64 {
                let text = accepted(&g, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                if let Err(e) = check_native(&text, &tools) {
                    panic!("{e}\nin {text:?}");
                }
                let inner = &text["<tool_call>".len()..text.len() - "</tool_call>".len()];
                let call: serde_json::Value = serde_json::from_str(inner).unwrap();
                if let Some(args) = call["arguments"].as_object().filter(|a| !a.is_empty()) {
                    // The required parameters first, in their order; any optional one after.
                    let keys: Vec<&String> = args.keys().collect();
                    assert_eq!(keys[..2], ["option_700", "option_1999"], "in {text:?}");
                    most = most.max(args.len());
                    thirds.extend(keys.get(2).map(|k| k.to_string()));
                }
            }
            assert!(most > 3, "calls of at most {most} parameters");
            assert!(
                thirds.len() > 2,
                "optional parameters begin with {thirds:?}"
            );
        });
    }

    /// The tools as a grammar describes them: the first tool of a repeated name, the first
    /// parameter of a repeated name.
    fn described(tools: &[ToolSpec]) -> Vec<ToolSpec> {
        let mut seen = HashSet::new();
        tools
            .iter()
            .filter(|t| seen.insert(t.name.clone()))
            .cloned()
            .map(|mut t| {
                let mut names = HashSet::new();
                t.params.retain(|p| names.insert(p.name.clone()));
                t
            })
            .collect()
    }

    fn param_strategy() -> impl Strategy<Value = ParamSpec> {
        (
            "[a-z][a-z0-9_]{0,8}",
            prop_oneof![
                Just(ParamType::String),
                Just(ParamType::Integer),
                Just(ParamType::Number),
                Just(ParamType::Boolean)
            ],
            any::<bool>(),
            proptest::option::of(proptest::collection::vec("[a-zA-Z0-9 _.-]{1,8}", 1..4)),
        )
            .prop_map(|(name, kind, required, values)| {
                let mut p = ParamSpec::new(name, kind, "");
                p.required = required;
                // Allowed values only for text, as tools declare them.
                if kind == ParamType::String {
                    p.enum_values = values;
                }
                p
            })
    }

    fn tool_strategy() -> impl Strategy<Value = ToolSpec> {
        (
            "[a-z][a-z0-9_.:-]{0,12}",
            proptest::collection::vec(param_strategy(), 0..5),
        )
            .prop_map(|(name, params)| tool(&name, params))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Any tool set: every string its grammar accepts parses back into calls of allowed
        /// tools with allowed, typed parameters and every required one.
        #[test]
        fn any_tools_every_accepted_string_is_a_valid_call(
            tools in proptest::collection::vec(tool_strategy(), 1..5),
            seed in any::<u64>(),
        ) {
            let g = call_grammar(&tools).unwrap().unwrap();
            for k in 0..8u64 {
                let text = accepted(&g, seed ^ k.wrapping_mul(0x2545_F491_4F6C_DD1D));
                let calls = parse(&text);
                prop_assert_eq!(calls.len(), 1, "one call in {:?}", text);
                let first = described(&tools);
                for call in &calls {
                    if let Err(e) = check_call(call, &first) {
                        prop_assert!(false, "{}\nin {:?}\nread as {:?}", e, text, calls);
                    }
                }
            }
        }

        /// Any tool set: every string its native grammar accepts is one valid JSON call.
        #[test]
        fn any_tools_every_accepted_native_string_is_a_valid_call(
            tools in proptest::collection::vec(tool_strategy(), 1..5),
            seed in any::<u64>(),
        ) {
            let g = native_call_grammar(&tools).unwrap().unwrap();
            let first = described(&tools);
            for k in 0..8u64 {
                let text = accepted(&g, seed ^ k.wrapping_mul(0x2545_F491_4F6C_DD1D));
                if let Err(e) = check_native(&text, &first) {
                    prop_assert!(false, "{}\nin {:?}", e, text);
                }
            }
        }
    }

    // ---- guided calls in each family's forms ------------------------------------------------

    /// Does `g` accept `text` as the start of something it accepts (or all of it)? A plain
    /// recursive matcher over the grammar's data, for the short texts of the tests.
    fn accepts_prefix(g: &Grammar, text: &str) -> bool {
        let rules: HashMap<&str, &Expr> = g.rules.iter().map(|(n, e)| (n.as_str(), e)).collect();
        let mut prefix = false;
        let ends = match_ends(&rules, g.rule("root").unwrap(), text, 0, &mut prefix);
        prefix || ends.contains(&text.len())
    }

    /// Where a match of `expr` from `pos` in `text` may end; `prefix` is set when the text ends
    /// inside one.
    fn match_ends(
        rules: &HashMap<&str, &Expr>,
        expr: &Expr,
        text: &str,
        pos: usize,
        prefix: &mut bool,
    ) -> std::collections::BTreeSet<usize> {
        let mut out = std::collections::BTreeSet::new();
        let rest = &text[pos..];
        match expr {
            Expr::Lit(l) => {
                if rest.starts_with(l.as_str()) {
                    out.insert(pos + l.len());
                } else if l.starts_with(rest) {
                    *prefix = true;
                }
            }
            Expr::Class { negated, ranges } => match rest.chars().next() {
                None => *prefix = true,
                Some(c) if in_class(c, *negated, ranges) => {
                    out.insert(pos + c.len_utf8());
                }
                Some(_) => {}
            },
            Expr::Ref(name) => return match_ends(rules, rules[name.as_str()], text, pos, prefix),
            Expr::Seq(parts) => {
                let mut at = std::collections::BTreeSet::from([pos]);
                for part in parts {
                    at = at
                        .into_iter()
                        .flat_map(|p| match_ends(rules, part, text, p, prefix))
                        .collect();
                }
                return at;
            }
            Expr::Alt(options) => {
                for o in options {
                    out.extend(match_ends(rules, o, text, pos, prefix));
                }
            }
            Expr::Repeat { expr, min, max } => {
                let mut at = std::collections::BTreeSet::from([pos]);
                let mut count = 0;
                if *min == 0 {
                    out.insert(pos);
                }
                while !at.is_empty() && max.is_none_or(|m| count < m) {
                    at = at
                        .into_iter()
                        .flat_map(|p| {
                            match_ends(rules, expr, text, p, prefix)
                                .into_iter()
                                .filter(move |e| *e > p)
                        })
                        .collect();
                    count += 1;
                    if count >= *min {
                        out.extend(at.iter().copied());
                    }
                }
            }
        }
        out
    }

    /// Where the runtime would start the grammar in `written` (the answer so far), as its
    /// `guide::Triggers::start_in` does: the first trigger that matches, from the start of its
    /// first non-empty group or of the match.
    fn trigger_start(triggers: &[regex::Regex], written: &str) -> Option<usize> {
        triggers.iter().find_map(|regex| {
            let captures = regex.captures(written)?;
            let whole = captures.get(0)?;
            Some(
                captures
                    .iter()
                    .skip(1)
                    .flatten()
                    .find(|g| !g.is_empty())
                    .map_or(whole.start(), |g| g.start()),
            )
        })
    }

    fn compiled(guided: &GuidedCalls) -> Vec<regex::Regex> {
        guided
            .triggers
            .iter()
            .map(|t| regex::Regex::new(t).unwrap())
            .collect()
    }

    /// Reads a Python-style call (`name(key="x", n=2, on=True)`) into its name and arguments.
    fn python_call(
        text: &str,
    ) -> Result<(String, serde_json::Map<String, serde_json::Value>), String> {
        let open = text.find('(').ok_or("no (")?;
        let name = text[..open].to_string();
        let mut rest = text[open + 1..]
            .strip_suffix(')')
            .ok_or("no )")?
            .trim_start();
        let mut args = serde_json::Map::new();
        while !rest.is_empty() {
            let eq = rest.find('=').ok_or("no =")?;
            let key = rest[..eq].trim().to_string();
            rest = rest[eq + 1..].trim_start();
            let value = if let Some(after) = rest.strip_prefix("True") {
                rest = after;
                serde_json::Value::Bool(true)
            } else if let Some(after) = rest.strip_prefix("False") {
                rest = after;
                serde_json::Value::Bool(false)
            } else {
                let mut values =
                    serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
                let value = values
                    .next()
                    .ok_or("no value")?
                    .map_err(|e| format!("{key}: {e}"))?;
                rest = &rest[values.byte_offset()..];
                value
            };
            args.insert(key, value);
            rest = rest.trim_start();
            rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        }
        Ok((name, args))
    }

    /// Is `text` one valid call of `tools` in one of the forms of [`guided_calls`]? Returns
    /// the opening it starts with.
    fn check_form(text: &str, tools: &[ToolSpec]) -> Result<&'static str, String> {
        let list_of_one = |inner: &str| -> Result<(), String> {
            let inner = inner.trim();
            let inner = inner
                .strip_prefix('[')
                .and_then(|i| i.strip_suffix(']'))
                .ok_or("not a list")?;
            check_json_call(inner.trim(), tools)
        };
        if let Some(inner) = text
            .strip_prefix("<tool_call>")
            .and_then(|t| t.strip_suffix("</tool_call>"))
        {
            if inner.trim_start().starts_with('{') {
                return check_json_call(inner.trim(), tools).map(|()| "<tool_call>{");
            }
            let calls = parse(text);
            if calls.len() != 1 {
                return Err(format!("{} calls", calls.len()));
            }
            return check_call(&calls[0], tools).map(|()| "<tool_call><name>");
        }
        if let Some(fenced) = text.strip_prefix("```") {
            let (_, body) = fenced.split_once('\n').ok_or("no fence line")?;
            let body = body.strip_suffix("```").ok_or("fence not closed")?;
            return check_json_call(body.trim(), tools).map(|()| "```");
        }
        if text.starts_with('{') {
            return check_json_call(text, tools).map(|()| "{");
        }
        if let Some(rest) = text.strip_prefix("<|python_tag|>") {
            return check_json_call(rest.trim(), tools).map(|()| "<|python_tag|>");
        }
        if let Some(rest) = text.strip_prefix("[TOOL_CALLS]") {
            if let Some((name, args)) = rest.trim_start().split_once("[ARGS]") {
                if !name.starts_with('[') {
                    let call = format!(
                        "{{\"name\": {}, \"arguments\": {args}}}",
                        serde_json::Value::from(name)
                    );
                    return check_json_call(&call, tools).map(|()| "[TOOL_CALLS]name[ARGS]");
                }
            }
            return list_of_one(rest).map(|()| "[TOOL_CALLS]");
        }
        if let Some(rest) = text.strip_prefix("<|tool_call|>") {
            return list_of_one(rest).map(|()| "<|tool_call|>");
        }
        if let Some(rest) = text.strip_prefix("functools") {
            return list_of_one(rest).map(|()| "functools");
        }
        if let Some(rest) = text.strip_prefix("<|tool_call_start|>") {
            let inner = rest
                .strip_suffix("<|tool_call_end|>")
                .ok_or("not closed")?
                .trim();
            let inner = inner
                .strip_prefix('[')
                .and_then(|i| i.strip_suffix(']'))
                .ok_or("not a list")?
                .trim();
            if inner.starts_with('{') {
                return check_json_call(inner, tools).map(|()| "<|tool_call_start|>{");
            }
            let (name, args) = python_call(inner)?;
            return check_arguments(&name, &args, tools).map(|()| "<|tool_call_start|>f(");
        }
        Err("no opening".into())
    }

    /// The forms each family's grammar must have produced among its strings.
    fn expected_forms(family: ToolFamily, format: CallFormat) -> Vec<&'static str> {
        let mut forms = vec!["```", "{"];
        forms.push(match format {
            CallFormat::Native => "<tool_call>{",
            CallFormat::Xml => "<tool_call><name>",
        });
        forms.extend(match family {
            ToolFamily::Llama3 => vec!["<|python_tag|>"],
            ToolFamily::Mistral => vec!["[TOOL_CALLS]", "[TOOL_CALLS]name[ARGS]"],
            ToolFamily::Lfm2 => vec!["<|tool_call_start|>{", "<|tool_call_start|>f("],
            ToolFamily::Granite => vec!["<|tool_call|>"],
            ToolFamily::Phi4Mini => vec!["functools"],
            _ => vec![],
        });
        forms
    }

    /// Every family, both formats: every string the grammar accepts is one valid call in one of
    /// the family's forms, every form comes up, and written after some prose, each string turns
    /// its grammar on where the call starts, with text the grammar accepts.
    #[test]
    fn every_family_guides_a_valid_call_from_each_of_its_openings() {
        let tools = shapes();
        for family in ToolFamily::ALL {
            for format in [CallFormat::Native, CallFormat::Xml] {
                let guided = guided_calls(&tools, family, format).unwrap().unwrap();
                let triggers = compiled(&guided);
                let mut seen = HashSet::new();
                for seed in 0..400u64 {
                    let text = accepted(&guided.grammar, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    let form = check_form(&text, &tools)
                        .unwrap_or_else(|e| panic!("{family} {format:?}: {e}\nin {text:?}"));
                    seen.insert(form);
                    // Written a character at a time after a line of prose.
                    let prose = "I will save it now.\n";
                    let answer = format!("{prose}{text}");
                    let start = answer
                        .char_indices()
                        .map(|(i, c)| i + c.len_utf8())
                        .find_map(|end| trigger_start(&triggers, &answer[..end]).map(|s| (s, end)))
                        .unwrap_or_else(|| panic!("{family}: no trigger in {text:?}"));
                    assert_eq!(
                        start.0,
                        prose.len(),
                        "{family}: started at {start:?} in {answer:?}"
                    );
                    let matched = &answer[start.0..start.1];
                    assert!(
                        accepts_prefix(&guided.grammar, matched),
                        "{family}: the grammar refuses its trigger's {matched:?}"
                    );
                }
                let expected = expected_forms(family, format);
                for form in &expected {
                    assert!(
                        seen.contains(form),
                        "{family} {format:?}: no {form} in {seen:?}"
                    );
                }
                assert_eq!(seen.len(), expected.len(), "{family} {format:?}: {seen:?}");
            }
        }
    }

    /// What a trigger matches when the token that completes it carries a little more (the
    /// colon, the name's opening quote, a `JSON` fence, CRLF line ends): each is text the
    /// grammar accepts.
    #[test]
    fn the_grammar_accepts_whatever_its_triggers_match() {
        let tools = shapes();
        let answers = [
            "```json\n{\"name\"",
            "```JSON\r\n{ \"name\":",
            "Here it is:\n```\n  {\n  \"name\": \"",
            "```tool_call\n{\"name\":\"",
            "{\"name\"",
            "Sure.\n  {\"name\" : ",
            "<tool_call>",
            "<tool_call>\n",
            "[TOOL_CALLS] ",
            "<|tool_call_start|>",
            "<|tool_call|>",
            "<|python_tag|>",
            "functools [",
        ];
        for family in ToolFamily::ALL {
            let guided = guided_calls(&tools, family, CallFormat::Native)
                .unwrap()
                .unwrap();
            let triggers = compiled(&guided);
            for answer in answers {
                if let Some(start) = trigger_start(&triggers, answer) {
                    let matched = &answer[start..];
                    assert!(
                        accepts_prefix(&guided.grammar, matched),
                        "{family}: the grammar refuses {matched:?}"
                    );
                }
            }
            // The JSON openings are every family's.
            for answer in &answers[..6] {
                assert!(
                    trigger_start(&triggers, answer).is_some(),
                    "{family}: {answer:?}"
                );
            }
        }
    }

    /// Ordinary prose and code never turn guidance on: not a Python fence, not a JSON document
    /// without `"name"` first, not a tool named in a sentence; at no point while they are
    /// written.
    #[test]
    fn triggers_do_not_fire_on_prose_or_ordinary_code() {
        let answers = [
            "I can call create_artifact to save a note named \"groceries\".",
            "Here is the code:\n```python\ndef f(x):\n    return {\"name\": x}\n```\nDone.",
            "```json\n{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}}}\n```",
            "The record is {\"id\": 3, \"name\": \"Ada\"}.",
            "Use functools.partial([1, 2]) for that.",
            "```\nname = \"x\"\n```",
            "In JSON, the key \"name\" holds the tool's name: {name: …}.",
        ];
        for family in ToolFamily::ALL {
            let guided = guided_calls(&shapes(), family, CallFormat::Native)
                .unwrap()
                .unwrap();
            let triggers = compiled(&guided);
            for answer in answers {
                for (i, c) in answer.char_indices() {
                    let written = &answer[..i + c.len_utf8()];
                    assert_eq!(
                        trigger_start(&triggers, written),
                        None,
                        "{family}: {written:?}"
                    );
                }
            }
        }
    }

    /// The family grammars grow linearly too, and one over the byte limit names its tool.
    #[test]
    fn family_grammars_grow_linearly_and_keep_the_limit() {
        for format in [CallFormat::Native, CallFormat::Xml] {
            let size = |n: usize| {
                guided_calls(&[wide_tool(n)], ToolFamily::Lfm2, format)
                    .unwrap()
                    .unwrap()
                    .grammar
                    .gbnf()
                    .len()
            };
            let (b100, b1000, b2000) = (size(100), size(1000), size(2000));
            assert!(b2000 * 2 < b1000 * 5, "{format:?}: {b100} {b1000} {b2000}");
            assert!(b1000 < b100 * 12, "{format:?}: {b100} {b1000} {b2000}");
            assert!(b2000 <= MAX_GRAMMAR_BYTES, "{format:?}: {b2000}");
        }
        let values: Vec<String> = (0..12_000).map(|v| format!("dish {v:0>40}")).collect();
        let menu = tool(
            "menu.pick",
            vec![ParamSpec::new("dish", ParamType::String, "").with_values(values)],
        );
        let Err(error) = guided_calls(
            &[shapes().remove(0), menu],
            ToolFamily::Hermes,
            CallFormat::Xml,
        ) else {
            panic!("a grammar over the limit");
        };
        assert_eq!(error.tool, "menu.pick");
        assert!(matches!(error.excess, Excess::Bytes { bytes, .. } if bytes > MAX_GRAMMAR_BYTES));
    }

    // ---- the reader agrees with the grammar ------------------------------------------------

    /// A call as the reader gives it: the tool and its parameters as texts (RULES.md rule 14,
    /// FORMS.md F2), in any order.
    type Meant = (String, std::collections::BTreeMap<String, String>);

    /// A JSON value as a parameter's text (F2): a string its text, a number the characters
    /// written, a boolean `true`/`false`, an object or a list its JSON text as `serde_json`
    /// writes it; `None` for `null` (the parameter is left out).
    fn param_text(raw: &serde_json::value::RawValue) -> Option<String> {
        let value: serde_json::Value = serde_json::from_str(raw.get()).unwrap();
        match value {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s),
            serde_json::Value::Number(_) => Some(raw.get().to_string()),
            serde_json::Value::Bool(b) => Some(b.to_string()),
            nested => Some(nested.to_string()),
        }
    }

    /// The call a JSON call object means, read with `serde_json` (numbers as written).
    fn meant_json(text: &str) -> Meant {
        #[derive(serde::Deserialize)]
        struct Call {
            name: String,
            #[serde(alias = "parameters")]
            arguments: indexmap::IndexMap<String, Box<serde_json::value::RawValue>>,
        }
        let call: Call =
            serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
        let params = call
            .arguments
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), param_text(v)?)))
            .collect();
        (call.name, params)
    }

    /// The call a Python call `name(key=value, …)` means, as Python reads it; the grammar's
    /// values are JSON literals but `True`/`False`.
    fn meant_python(text: &str) -> Meant {
        let open = text.find('(').unwrap();
        let name = text[..open].to_string();
        let mut rest = text[open + 1..].strip_suffix(')').unwrap().trim_start();
        let mut params = std::collections::BTreeMap::new();
        while !rest.is_empty() {
            let eq = rest.find('=').unwrap();
            let key = rest[..eq].trim().to_string();
            rest = rest[eq + 1..].trim_start();
            let value = if let Some(after) = rest.strip_prefix("True") {
                rest = after;
                Some("true".to_string())
            } else if let Some(after) = rest.strip_prefix("False") {
                rest = after;
                Some("false".to_string())
            } else {
                let mut values = serde_json::Deserializer::from_str(rest)
                    .into_iter::<Box<serde_json::value::RawValue>>();
                let raw = values.next().unwrap().unwrap();
                rest = &rest[values.byte_offset()..];
                param_text(&raw)
            };
            params.extend(value.map(|v| (key, v)));
            rest = rest.trim_start();
            rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        }
        (name, params)
    }

    /// The call the XML form means: the name, and each parameter's CDATA text.
    fn meant_xml(text: &str) -> Meant {
        let inner = text.trim();
        let name_at = inner.find("<name>").unwrap() + "<name>".len();
        let name_end = inner.find("</name>").unwrap();
        let mut params = std::collections::BTreeMap::new();
        let mut rest = &inner[name_end..];
        while let Some(open) = rest.find("<![CDATA[") {
            let tag_start = rest[..open].rfind('<').unwrap();
            let key = rest[tag_start + 1..open].trim_end_matches('>').to_string();
            let value_at = open + "<![CDATA[".len();
            let close = rest[value_at..].find("]]>").unwrap() + value_at;
            params.insert(key, rest[value_at..close].to_string());
            rest = &rest[close + 3..];
        }
        (inner[name_at..name_end].to_string(), params)
    }

    /// The call a string of [`guided_calls`] means, by its form (see [`check_form`]), and
    /// whether it is a `<tool_call>` form (read by [`parse`]).
    fn meant(text: &str) -> (Meant, bool) {
        let list_item = |inner: &str| -> String {
            let inner = inner.trim();
            inner[1..inner.len() - 1].to_string()
        };
        if let Some(inner) = text
            .strip_prefix("<tool_call>")
            .and_then(|t| t.strip_suffix("</tool_call>"))
        {
            return if inner.trim_start().starts_with('{') {
                (meant_json(inner), true)
            } else {
                (meant_xml(inner), true)
            };
        }
        let json = if let Some(fenced) = text.strip_prefix("```") {
            let body = fenced.split_once('\n').unwrap().1;
            body.strip_suffix("```").unwrap().to_string()
        } else if text.starts_with('{') {
            text.to_string()
        } else if let Some(rest) = text.strip_prefix("<|python_tag|>") {
            rest.to_string()
        } else if let Some(rest) = text.strip_prefix("[TOOL_CALLS]") {
            match rest.trim_start().split_once("[ARGS]") {
                // `name[ARGS]{…}`: the bare name and the arguments object.
                Some((name, args)) if !name.starts_with('[') => format!(
                    "{{\"name\": {}, \"arguments\": {args}}}",
                    serde_json::Value::from(name)
                ),
                _ => list_item(rest),
            }
        } else if let Some(rest) = text.strip_prefix("<|tool_call|>") {
            list_item(rest)
        } else if let Some(rest) = text.strip_prefix("functools") {
            list_item(rest)
        } else if let Some(rest) = text.strip_prefix("<|tool_call_start|>") {
            let inner = list_item(rest.strip_suffix("<|tool_call_end|>").unwrap());
            if inner.trim_start().starts_with('{') {
                inner
            } else {
                return (meant_python(inner.trim()), false);
            }
        } else {
            panic!("no form: {text}")
        };
        (meant_json(&json), false)
    }

    /// Every string a family's guided grammar generates, written after some prose, is read
    /// back (by [`parse`] in a `<tool_call>` form, else by [`read_written_calls`]) as exactly
    /// the call it means: one call, the same tool, the same parameters with the same texts.
    fn check_read_back(
        tools: &[ToolSpec],
        family: ToolFamily,
        format: CallFormat,
        seed: u64,
    ) -> Result<(), String> {
        let guided = guided_calls(tools, family, format).unwrap().unwrap();
        let names: HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let is_tool = |name: &str| names.contains(name);
        for k in 0..8u64 {
            let text = accepted(
                &guided.grammar,
                seed ^ k.wrapping_mul(0x2545_F491_4F6C_DD1D),
            );
            let answer = format!("I will save it now.\n{text}");
            let (expected, tagged) = meant(&text);
            let calls = if tagged && format == CallFormat::Native {
                // In native mode the runtime takes the JSON call out of its `<tool_call>` tags
                // and the engine reads its arguments as a native call's (a list or an object
                // as its JSON text): read as the same JSON call written on its own line.
                let inner = answer
                    .replace("<tool_call>", "\n")
                    .replace("</tool_call>", "\n");
                crate::read_written_calls(&inner, &is_tool)
            } else if tagged {
                parse(&answer)
            } else {
                crate::read_written_calls(&answer, &is_tool)
            };
            let got: Vec<Meant> = calls
                .iter()
                .map(|c| {
                    let name = c
                        .error
                        .clone()
                        .map_or(c.name.clone(), |e| format!("{}: {e}", c.name));
                    (name, c.params.clone().into_iter().collect())
                })
                .collect();
            if got != [expected.clone()] {
                return Err(format!(
                    "{family} {format:?}: {answer:?}\n  means {expected:?}\n  read  {got:?}"
                ));
            }
        }
        Ok(())
    }

    /// The shapes with an MCP tool whose parameters are a list and an object in its schema.
    fn shapes_and_structured() -> Vec<ToolSpec> {
        let mut mcp = tool(
            "files__search",
            vec![
                ParamSpec::new("tags", ParamType::String, ""),
                ParamSpec::new("filter", ParamType::String, "").optional(),
            ],
        );
        mcp.input_schema = Some(json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "filter": {"type": ["object", "null"]},
        }, "required": ["tags"]}));
        let mut tools = shapes();
        tools.push(mcp);
        tools
    }

    #[test]
    fn every_family_s_guided_calls_of_the_shapes_are_read_back_as_generated() {
        let tools = shapes_and_structured();
        for family in ToolFamily::ALL {
            for format in [CallFormat::Native, CallFormat::Xml] {
                for seed in 0..60u64 {
                    if let Err(e) = check_read_back(
                        &tools,
                        family,
                        format,
                        seed.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    ) {
                        panic!("{e}");
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any tool set, any family, either format: every call the guided grammar generates is
        /// read back as exactly that call.
        #[test]
        fn any_tools_any_family_every_guided_call_is_read_back_as_generated(
            tools in proptest::collection::vec(tool_strategy(), 1..5),
            family in proptest::sample::select(ToolFamily::ALL.to_vec()),
            native in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let format = if native { CallFormat::Native } else { CallFormat::Xml };
            if let Err(e) = check_read_back(&described(&tools), family, format, seed) {
                prop_assert!(false, "{}", e);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any tool set, any family: every string its guided grammar accepts is one valid call.
        #[test]
        fn any_tools_any_family_every_guided_string_is_a_valid_call(
            tools in proptest::collection::vec(tool_strategy(), 1..5),
            family in proptest::sample::select(ToolFamily::ALL.to_vec()),
            native in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let format = if native { CallFormat::Native } else { CallFormat::Xml };
            let guided = guided_calls(&tools, family, format).unwrap().unwrap();
            let first = described(&tools);
            for k in 0..8u64 {
                let text = accepted(&guided.grammar, seed ^ k.wrapping_mul(0x2545_F491_4F6C_DD1D));
                if let Err(e) = check_form(&text, &first) {
                    prop_assert!(false, "{} {:?}: {}\nin {:?}", family, format, e, text);
                }
            }
        }
    }
}
