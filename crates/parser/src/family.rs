//! Tool-call families: how a model was trained to write a tool call, decided from its chat
//! template (and, where two families share a marker, its architecture), and the openings a
//! call of that family may start with.
//!
//! One table for the whole app: the runtime offers tools in the model's own form, the engine
//! guides calls from each opening the family uses (see [`crate::grammar::guided_calls`]), and
//! the profile page says which family a model file belongs to.
//!
//! | family | the template says | a call is written |
//! |---|---|---|
//! | [`Hermes`](ToolFamily::Hermes) (Qwen 2.5/3, Hermes, SmolLM3) | `<tool_call>` | `<tool_call>{"name": …, "arguments": {…}}</tool_call>` |
//! | [`Llama3`](ToolFamily::Llama3) | `<\|python_tag\|>`, `Environment: ipython` | `{"name": …, "parameters": {…}}`, or after `<\|python_tag\|>` |
//! | [`Mistral`](ToolFamily::Mistral) | `[TOOL_CALLS]`, `[AVAILABLE_TOOLS]` | `[TOOL_CALLS][{"name": …, "arguments": {…}}]` or `[TOOL_CALLS]name[ARGS]{…}` |
//! | [`Lfm2`](ToolFamily::Lfm2) | `<\|tool_call_start\|>`, `<\|tool_list_start\|>` | `<\|tool_call_start\|>[name(a="x")]<\|tool_call_end\|>` |
//! | [`FunctionGemma`](ToolFamily::FunctionGemma) | `<start_function_call>`, `<start_function_declaration>` | `<start_function_call>call:name{a:<escape>x<escape>}<end_function_call>` |
//! | [`Granite`](ToolFamily::Granite) | `<\|tool_call\|>` or `available_tools`, architecture `granite…` | `<\|tool_call\|>[{"name": …, "arguments": {…}}]` |
//! | [`Phi4Mini`](ToolFamily::Phi4Mini) | `<\|tool\|>` or `<\|tool_call\|>`, architecture `phi3` | `functools[{"name": …, "arguments": {…}}]` |
//!
//! Whatever the template says, small models often write a bare JSON call object instead,
//! alone on a line or in a Markdown code fence (Qwen2.5-Coder-0.5B, whose template asks for
//! `<tool_call>`, answers with a fenced JSON object): every family's openings include those
//! two ([`Opening::JsonFence`], [`Opening::JsonLine`]).
//!
//! The markers were taken from the models' own templates: Qwen2.5-Coder's (read from its GGUF),
//! Llama 3.1/3.2's, Mistral's v3 and v11 tokenizers, LiquidAI's LFM2 documentation, Google's
//! FunctionGemma format, IBM Granite 3's and Microsoft's Phi-4-mini model cards.

use serde::{Deserialize, Serialize};

/// How a model was trained to write tool calls (see the module docs for each family's form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "kebab-case")]
pub enum ToolFamily {
    /// `<tool_call>{json}</tool_call>`: Qwen 2.5 and 3, Hermes, SmolLM3 and many others.
    Hermes,
    /// Llama 3.1 to 3.3: a JSON object with `parameters`, or `<|python_tag|>` and one.
    // Named explicitly: serde and the TypeScript bindings split digits differently.
    #[serde(rename = "llama3")]
    Llama3,
    /// Mistral: `[TOOL_CALLS]` and a JSON list, or (newer tokenizers) `name[ARGS]{…}`.
    Mistral,
    /// LiquidAI LFM2: a Python-style list between `<|tool_call_start|>` and
    /// `<|tool_call_end|>`.
    #[serde(rename = "lfm2")]
    Lfm2,
    /// Google FunctionGemma: `<start_function_call>call:name{…}<end_function_call>`.
    #[serde(alias = "functiongemma")]
    FunctionGemma,
    /// IBM Granite 3: `<|tool_call|>` and a JSON list.
    Granite,
    /// Microsoft Phi-4-mini: `functools` and a JSON list.
    #[serde(rename = "phi4-mini", alias = "phi4mini", alias = "phi-4-mini")]
    Phi4Mini,
    /// A template with none of the markers above (or none at all): only the JSON openings
    /// every small model may use, and `<tool_call>`.
    #[default]
    Unknown,
}

/// Every call marker the families write, as the text of the marker: the openings, closings and
/// separators of their calls (see the module docs and `forms.rs`), Hermes's tags, and Gemma 4's.
///
/// In many vocabularies these are control tokens (Llama 3's `<|python_tag|>`, Mistral's
/// `[TOOL_CALLS]`, LFM2's `<|tool_call_start|>`…), which llama.cpp renders as nothing unless
/// asked for their text. The runtime renders a token with its text when the token is exactly one
/// of these markers, so that they reach the answer where the triggers and the forms reader look
/// for them; every other control token stays hidden.
pub const CALL_MARKERS: &[&str] = &[
    // Hermes (in Qwen's vocabulary ordinary added tokens, rendered anyway).
    "<tool_call>",
    "</tool_call>",
    // Llama 3.
    "<|python_tag|>",
    // Mistral.
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    // LFM2.
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    // Granite 3 and Phi-4-mini.
    "<|tool_call|>",
    "<|/tool_call|>",
    // FunctionGemma.
    "<start_function_call>",
    "<end_function_call>",
    "<escape>",
    // Gemma 4.
    "<|tool_call>",
    "<tool_call|>",
    "<|\"|>",
];

/// A way a tool call may start, with the trigger that turns guidance on there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opening {
    /// `<tool_call>` (Hermes; also the app's own XML text format).
    ToolCallTag,
    /// A Markdown code fence whose first line is a JSON call object: ```` ```json\n{"name"````.
    JsonFence,
    /// A line that starts a JSON call object: `{"name"`.
    JsonLine,
    /// Llama 3's `<|python_tag|>`.
    PythonTag,
    /// Mistral's `[TOOL_CALLS]`.
    MistralToolCalls,
    /// LFM2's `<|tool_call_start|>`.
    Lfm2ToolCallStart,
    /// Granite's `<|tool_call|>` followed by a JSON list.
    GraniteToolCall,
    /// Phi-4-mini's `functools[`.
    Functools,
}

/// Whitespace between the parts of a call, as the grammars allow it (at most 16 characters).
const WS: &str = "[ \\t\\r\\n]{0,16}";

impl Opening {
    /// The regular expression (Rust's `regex`, as the runtime reads triggers) that turns
    /// guidance on once the answer so far ends in this opening. Anchored at the end, so that
    /// the text it matches is exactly what the grammar was fed; where the grammar starts
    /// later than the match (a JSON call on its own line starts at its `{`), the first group
    /// marks where.
    pub fn trigger(self) -> String {
        // After `"name"`: the token that completes it may carry the colon and the opening
        // quote of the name too.
        let name_key = "\"name\"(?:[ \\t]{0,16}:[ \\t]{0,16}\"?)?$";
        match self {
            Opening::ToolCallTag => format!("<tool_call>{WS}$"),
            Opening::JsonFence => {
                format!("```[A-Za-z_]{{0,16}}[ \\t]{{0,16}}\\r?\\n{WS}\\{{{WS}{name_key}")
            }
            Opening::JsonLine => format!("(?:^|\\n)[ \\t]{{0,16}}(\\{{){WS}{name_key}"),
            Opening::PythonTag => format!("<\\|python_tag\\|>{WS}$"),
            Opening::MistralToolCalls => format!("\\[TOOL_CALLS\\]{WS}$"),
            Opening::Lfm2ToolCallStart => format!("<\\|tool_call_start\\|>{WS}$"),
            Opening::GraniteToolCall => format!("<\\|tool_call\\|>{WS}$"),
            Opening::Functools => format!("functools{WS}\\[{WS}$"),
        }
    }
}

impl ToolFamily {
    /// Every family, in the order the profile page lists them.
    pub const ALL: [ToolFamily; 8] = [
        ToolFamily::Hermes,
        ToolFamily::Llama3,
        ToolFamily::Mistral,
        ToolFamily::Lfm2,
        ToolFamily::FunctionGemma,
        ToolFamily::Granite,
        ToolFamily::Phi4Mini,
        ToolFamily::Unknown,
    ];

    /// Its name in `models.yaml` (`tool_family:`).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolFamily::Hermes => "hermes",
            ToolFamily::Llama3 => "llama3",
            ToolFamily::Mistral => "mistral",
            ToolFamily::Lfm2 => "lfm2",
            ToolFamily::FunctionGemma => "function-gemma",
            ToolFamily::Granite => "granite",
            ToolFamily::Phi4Mini => "phi4-mini",
            ToolFamily::Unknown => "unknown",
        }
    }

    /// The family of a model from its chat template (`tokenizer.chat_template` of its GGUF)
    /// and its architecture (`general.architecture`: `qwen2`, `llama`, `granite`, `phi3`…),
    /// by the markers each family's templates use (see the module docs). The most specific
    /// markers are looked for first: an LFM2 or FunctionGemma template never says
    /// `<tool_call>`, but a template of another family might mention it in passing.
    pub fn from_template(template: &str, architecture: &str) -> ToolFamily {
        let has = |marker: &str| template.contains(marker);
        let architecture = architecture.to_ascii_lowercase();
        if has("<start_function_call>") || has("<start_function_declaration>") {
            ToolFamily::FunctionGemma
        } else if has("<|tool_call_start|>") || has("<|tool_list_start|>") {
            ToolFamily::Lfm2
        } else if has("[TOOL_CALLS]") || has("[AVAILABLE_TOOLS]") {
            ToolFamily::Mistral
        } else if architecture.starts_with("phi") && (has("<|tool|>") || has("<|tool_call|>")) {
            ToolFamily::Phi4Mini
        } else if has("<|tool_call|>") || has("available_tools") {
            ToolFamily::Granite
        } else if has("<tool_call>") {
            ToolFamily::Hermes
        } else if has("<|python_tag|>") || has("Environment: ipython") {
            ToolFamily::Llama3
        } else {
            ToolFamily::Unknown
        }
    }

    /// The openings a call of this family may start with, the family's own first, then the
    /// JSON openings every family gets (a fence before a bare line: a fenced call is guided
    /// from its fence, so that the fence is closed too).
    pub fn openings(self) -> Vec<Opening> {
        let own: &[Opening] = match self {
            ToolFamily::Hermes | ToolFamily::Unknown => &[],
            ToolFamily::Llama3 => &[Opening::PythonTag],
            ToolFamily::Mistral => &[Opening::MistralToolCalls],
            ToolFamily::Lfm2 => &[Opening::Lfm2ToolCallStart],
            // Its call blocks write strings between `<escape>` tokens, which a grammar over
            // characters cannot tell from the text inside them without refusing some values;
            // its calls are read as written, and guided when they start as JSON.
            ToolFamily::FunctionGemma => &[],
            ToolFamily::Granite => &[Opening::GraniteToolCall],
            ToolFamily::Phi4Mini => &[Opening::Functools],
        };
        let mut openings = own.to_vec();
        openings.extend([Opening::ToolCallTag, Opening::JsonFence, Opening::JsonLine]);
        openings
    }

    /// The trigger patterns of its openings, in order.
    pub fn triggers(self) -> Vec<String> {
        self.openings().into_iter().map(Opening::trigger).collect()
    }
}

/// Does a chat template render a request's tools itself? It does when one of its Jinja tags
/// (`{{ … }}`, `{% … %}`) uses the variable `tools` (the name Hugging Face's tokenizers give
/// them); a template that mentions tools only in its text (or not at all, like SmolLM2's)
/// does not. The family does not matter: any template that takes tools is given them.
pub fn template_takes_tools(template: &str) -> bool {
    let mut rest = template;
    while let Some(open) = rest.find(['{']) {
        let after = &rest[open + 1..];
        let close = match after.chars().next() {
            Some('{') => "}}",
            Some('%') => "%}",
            _ => {
                rest = after;
                continue;
            }
        };
        let inside = &after[1..];
        let end = inside.find(close).unwrap_or(inside.len());
        let tag = &inside[..end];
        let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let mut from = 0;
        while let Some(at) = tag[from..].find("tools") {
            let start = from + at;
            let end_word = start + "tools".len();
            let before = tag[..start].chars().next_back();
            let after = tag[end_word..].chars().next();
            // `tools` itself, not `builtin_tools`, and not a string ('tools') or attribute.
            if !before.is_some_and(|c| is_word(c) || c == '.' || c == '\'' || c == '"')
                && !after.is_some_and(|c| is_word(c) || c == '\'' || c == '"')
            {
                return true;
            }
            from = end_word;
        }
        rest = &inside[end.min(inside.len())..];
    }
    false
}

impl std::fmt::Display for ToolFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Qwen2.5-Coder-0.5B-Instruct template's tool part, as its GGUF has it.
    const QWEN25: &str = "{%- if tools %}{{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}{%- endif %}";

    #[test]
    fn every_marker_a_trigger_waits_for_is_a_call_marker() {
        // A trigger written as a marker the runtime hides would never fire.
        for family in ToolFamily::ALL {
            for opening in family.openings() {
                let trigger = regex::Regex::new(&opening.trigger()).unwrap();
                let markers = CALL_MARKERS.iter().filter(|m| trigger.is_match(m)).count();
                let spelled = matches!(
                    opening,
                    Opening::JsonFence | Opening::JsonLine | Opening::Functools
                );
                assert_eq!(markers, usize::from(!spelled), "{opening:?}");
            }
        }
    }

    #[test]
    fn families_are_told_apart_by_their_templates_and_architecture() {
        let cases = [
            (QWEN25, "qwen2", ToolFamily::Hermes),
            (
                "{%- if builtin_tools is defined or tools is not none %}{{- \"Environment: ipython\\n\" }}{%- endif %}{{- '<|python_tag|>' + tool_call.name }}",
                "llama",
                ToolFamily::Llama3,
            ),
            (
                "{{- '[AVAILABLE_TOOLS] [' }}{{- '[TOOL_CALLS] [' }}",
                "llama",
                ToolFamily::Mistral,
            ),
            (
                "{{- 'List of tools: <|tool_list_start|>[' }}<|tool_call_start|>",
                "lfm2",
                ToolFamily::Lfm2,
            ),
            (
                "{{- '<start_function_declaration>' }}{{- '<start_function_call>call:' }}",
                "gemma3",
                ToolFamily::FunctionGemma,
            ),
            (
                "<|start_of_role|>available_tools<|end_of_role|>{{- '<|tool_call|>' }}",
                "granite",
                ToolFamily::Granite,
            ),
            (
                "{{ '<|' + message['role'] + '|>' + message['content'] + '<|tool|>' + message['tools'] + '<|/tool|>' + '<|end|>' }}",
                "phi3",
                ToolFamily::Phi4Mini,
            ),
            (
                "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}",
                "llama",
                ToolFamily::Unknown,
            ),
            ("", "", ToolFamily::Unknown),
        ];
        for (template, architecture, family) in cases {
            assert_eq!(
                ToolFamily::from_template(template, architecture),
                family,
                "{template}"
            );
        }
    }

    #[test]
    fn every_family_has_the_json_openings_and_its_own() {
        for family in ToolFamily::ALL {
            let openings = family.openings();
            for json in [Opening::ToolCallTag, Opening::JsonFence, Opening::JsonLine] {
                assert!(openings.contains(&json), "{family}: {json:?}");
            }
        }
        assert_eq!(ToolFamily::Mistral.openings()[0], Opening::MistralToolCalls);
        assert_eq!(ToolFamily::Lfm2.openings()[0], Opening::Lfm2ToolCallStart);
    }

    #[test]
    fn a_template_takes_tools_when_a_jinja_tag_uses_them() {
        assert!(template_takes_tools(QWEN25));
        assert!(template_takes_tools(
            "{%- for tool in tools %}{{ tool | tojson }}{% endfor %}"
        ));
        assert!(template_takes_tools(
            "{{- '[AVAILABLE_TOOLS]' + tools|tojson }}"
        ));
        // SmolLM2's: no tools at all.
        assert!(!template_takes_tools(
            "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>{% endfor %}"
        ));
        // Mentioned in text, a string, or another variable only.
        assert!(!template_takes_tools(
            "You have no tools. {{ 'tools' }} {% if builtin_tools %}{% endif %}{{ message.tools_used }}"
        ));
    }

    #[test]
    fn family_names_in_models_yaml_round_trip() {
        for family in ToolFamily::ALL {
            let yaml = serde_json::to_string(&family).unwrap();
            assert_eq!(yaml, format!("\"{}\"", family.as_str()));
            assert_eq!(serde_json::from_str::<ToolFamily>(&yaml).unwrap(), family);
        }
        assert_eq!(
            serde_json::from_str::<ToolFamily>("\"phi4mini\"").unwrap(),
            ToolFamily::Phi4Mini
        );
    }
}
