//! Native tool calls: the request's tools put into the prompt, and the calls read back out of
//! the answer.
//!
//! A model writes calls the way its chat template taught it. The runtime speaks one family,
//! the most common among open models (Qwen 2.5 and 3, Hermes, SmolLM3 and others): the tools
//! as JSON inside `<tools>` in the system message, each call as
//! `<tool_call>{"name": …, "arguments": {…}}</tool_call>` in the answer, each result inside
//! `<tool_response>` in a user turn.
//!
//! - When the model file's template takes tools (it uses the `tools` variable: Qwen's, Llama
//!   3's, Mistral's, LFM2's, Granite's, Phi-4-mini's…), it renders the prompt itself, with the
//!   tools, as Hugging Face's tokenizers render it (Jinja with `trim_blocks` and
//!   `lstrip_blocks`; llama.cpp's own template engine takes no tools): the model is offered the
//!   tools in its own form, whatever its family.
//! - Otherwise (a template without tools, like SmolLM2's) the runtime adds that block to the
//!   system message and writes earlier calls and results in that form, and the model's
//!   template renders the turns.
//!
//! [`Calls`] then takes the answer's `<tool_call>` blocks out of its text as they stream.
//!
//! A model file's template is a program someone else wrote. Rendering it is bounded: in steps
//! (minijinja's fuel, [`FUEL`]), in nesting ([`RECURSION`]) and in what it writes ([`output_cap`]);
//! a render past a bound fails and the runtime falls back to writing the tools in the system
//! message. Memory cannot be bounded from inside (one step may build a 100 MB string), so a
//! template is first tried on a probe conversation in a process of its own
//! (`artifactflow-runtime --check-template`, see [`check_bounded`] and `probe`), watched for
//! its memory and time: a template that goes past them there is refused before any request.

use minijinja::value::{Kwargs, Value as JinjaValue};
use minijinja::{Environment, Error, ErrorKind};
use serde_json::{json, Value};

use crate::chat::Message;

/// The opening of a call in an answer.
pub const OPEN: &str = "<tool_call>";
/// Its end.
pub const CLOSE: &str = "</tool_call>";

/// Does the model file's template render tools itself? Any template that uses the `tools`
/// variable in a Jinja tag does, whatever family it writes calls in: the model is then offered
/// the tools in its own form (see `artifactflow_parser::template_takes_tools`). Its calls in
/// the `<tool_call>` form come back as native calls (see [`Calls`]); calls in other forms come
/// back as text, which the engine reads with its forms reader.
pub fn takes_tools(source: &str) -> bool {
    artifactflow_parser::template_takes_tools(source)
}

/// Steps one render may take: a long conversation with many tools takes a few ten thousand in
/// the templates of real models.
pub const FUEL: u64 = 2_000_000;
/// How deep calls and blocks may nest.
pub const RECURSION: usize = 64;

/// The most a render may write: a template writes its messages and tools once or twice, and
/// some framing.
pub fn output_cap(messages: &[Message], tools: &[Value]) -> usize {
    let input: usize = messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.arguments.len() + c.name.len())
                    .sum::<usize>()
        })
        .sum::<usize>()
        + tools.iter().map(|t| t.to_string().len()).sum::<usize>();
    (1 << 20) + 4 * input
}

/// A render that went past a bound, and which.
pub const OVER_BOUNDS: &str = "went past the runtime's bounds";

/// Writes into a string until the cap, then fails the render.
struct Capped {
    out: Vec<u8>,
    cap: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.out.len() + buf.len() > self.cap {
            return Err(std::io::Error::other("output cap"));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Why `source` is not a Jinja template this runtime can render, if it is not.
pub fn check(source: &str) -> Result<(), String> {
    let mut env = Environment::new();
    env.add_template("chat", source)
        .map(|_| ())
        .map_err(|e| format!("the chat template cannot be read: {e}"))
}

/// The prompt from a template of the family (see [`takes_tools`]), or why it could not be
/// rendered.
///
/// `bos_token` and `eos_token` are empty: llama.cpp adds the model's start token when it reads
/// the prompt, and a template writing it too would double it.
pub fn render(source: &str, messages: &[Message], tools: &[Value]) -> Result<String, String> {
    let mut env = Environment::new();
    env.set_fuel(Some(FUEL));
    env.set_recursion_limit(RECURSION);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_filter("tojson", tojson);
    env.add_function(
        "raise_exception",
        |message: String| -> Result<String, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message))
        },
    );
    env.add_template("chat", source)
        .map_err(|e| format!("the chat template cannot be read: {e}"))?;
    let template = env
        .get_template("chat")
        .map_err(|e| format!("the chat template cannot be read: {e}"))?;
    let mut out = Capped {
        out: Vec::new(),
        cap: output_cap(messages, tools),
    };
    let messages: Vec<Value> = messages.iter().map(jinja_message).collect();
    let tools = (!tools.is_empty()).then_some(tools);
    let rendered = template.render_captured_to(
        minijinja::context! {
            messages => messages,
            tools => tools,
            add_generation_prompt => true,
            bos_token => "",
            eos_token => "",
        },
        &mut out,
    );
    match rendered {
        Ok(_) => String::from_utf8(out.out)
            .map_err(|_| "the chat template wrote text that is not UTF-8".to_string()),
        Err(e) if e.kind() == ErrorKind::OutOfFuel => Err(format!(
            "the chat template {OVER_BOUNDS}: it took more than {FUEL} steps"
        )),
        // Writing fails only at the cap.
        Err(e) if e.kind() == ErrorKind::WriteFailure => Err(format!(
            "the chat template {OVER_BOUNDS}: it wrote more than {} bytes",
            out.cap
        )),
        Err(e) if e.to_string().contains("recursion limit") => Err(format!(
            "the chat template {OVER_BOUNDS}: it nested deeper than {RECURSION}"
        )),
        Err(e) => Err(format!("the chat template failed: {e}")),
    }
}

/// Whether `source` stays within the bounds on a probe conversation: a system message, turns,
/// earlier calls and their results, and tools, as an agent's request has them. Only going past a
/// bound counts: a template that refuses this conversation (`raise_exception`) fails its
/// requests one by one, and they fall back as any failed render does.
pub fn check_bounded(source: &str) -> Result<(), String> {
    let call = |n: usize| crate::chat::ToolCallIn {
        id: format!("call_{n}"),
        name: format!("tool_{}", n % 4),
        arguments: format!("{{\"query\": \"probe {n}\", \"count\": {n}}}"),
    };
    let mut messages = vec![Message {
        role: "system".into(),
        content: "You are a careful assistant. ".repeat(40),
        ..Message::default()
    }];
    for n in 0..12 {
        messages.push(Message {
            role: "user".into(),
            content: format!("Question {n}: {}", "what is in the notes? ".repeat(20)),
            ..Message::default()
        });
        messages.push(Message {
            role: "assistant".into(),
            content: String::new(),
            tool_calls: vec![call(n)],
            ..Message::default()
        });
        messages.push(Message {
            role: "tool".into(),
            content: format!("result {n}: {}", "a line of a result. ".repeat(30)),
            tool_call_id: Some(format!("call_{n}")),
            ..Message::default()
        });
    }
    let tools: Vec<Value> = (0..8)
        .map(|n| {
            json!({"type": "function", "function": {
                "name": format!("tool_{n}"), "description": "A tool of the probe. ".repeat(5),
                "parameters": {"type": "object", "properties": {
                    "query": {"type": "string", "description": "What to look for"},
                    "count": {"type": "integer"}}, "required": ["query"]}}})
        })
        .collect();
    match render(source, &messages, &tools) {
        Err(e) if e.contains(OVER_BOUNDS) => Err(e),
        _ => Ok(()),
    }
}

/// A message as chat templates read it: arguments of calls as objects.
fn jinja_message(m: &Message) -> Value {
    let mut out = json!({"role": m.role, "content": m.content});
    if !m.tool_calls.is_empty() {
        out["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                       "function": {"name": c.name, "arguments": arguments_value(&c.arguments)}})
            })
            .collect();
    }
    if let Some(id) = &m.tool_call_id {
        out["tool_call_id"] = json!(id);
    }
    out
}

/// Arguments sent as a JSON string, as an object when they are one.
fn arguments_value(arguments: &str) -> Value {
    serde_json::from_str::<Value>(arguments)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::String(arguments.to_string()))
}

/// The `tojson` filter as Hugging Face's templates expect it: Python's `json.dumps` layout
/// (`", "` and `": "`, or `indent`), characters as they are (no HTML escapes).
fn tojson(value: JinjaValue, kwargs: Kwargs) -> Result<JinjaValue, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    let _: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let value = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let text = match indent {
        Some(n) => {
            let pad = " ".repeat(n);
            let mut out = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(pad.as_bytes());
            let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
            serde::Serialize::serialize(&value, &mut ser)
                .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
            String::from_utf8_lossy(&out).into_owned()
        }
        None => python_json(&value),
    };
    Ok(JinjaValue::from_safe_string(text))
}

/// `value` as Python's `json.dumps(value, ensure_ascii=False)` writes it.
pub fn python_json(value: &Value) -> String {
    match value {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(python_json).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), python_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The tools block added to the system message when the template does not take tools.
pub fn tools_block(tools: &[Value]) -> String {
    let mut out = String::from(
        "# Tools\n\nYou can call functions to help with the request. Their signatures are in \
         <tools></tools>:\n<tools>\n",
    );
    for tool in tools {
        out.push_str(&python_json(tool));
        out.push('\n');
    }
    out.push_str(
        "</tools>\n\nTo call one, write a JSON object with its name and arguments inside \
         <tool_call></tool_call>:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": \
         <arguments-json-object>}\n</tool_call>",
    );
    out
}

/// The messages in the family's form for a template that does not take tools: the tools
/// block at the end of the system message (or in one of its own), each earlier call as a
/// `<tool_call>` block in its assistant turn, each result as a `<tool_response>` user turn.
pub fn in_text(messages: &[Message], tools: &[Value]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len() + 1);
    for m in messages {
        let mut m = m.clone();
        if !m.tool_calls.is_empty() {
            for call in std::mem::take(&mut m.tool_calls) {
                let body =
                    json!({"name": call.name, "arguments": arguments_value(&call.arguments)});
                if !m.content.is_empty() {
                    m.content.push('\n');
                }
                m.content
                    .push_str(&format!("{OPEN}\n{}\n{CLOSE}", python_json(&body)));
            }
        }
        if m.role == "tool" {
            m.role = "user".into();
            m.content = format!("<tool_response>\n{}\n</tool_response>", m.content);
            m.tool_call_id = None;
        }
        out.push(m);
    }
    if !tools.is_empty() {
        let block = tools_block(tools);
        match out.first_mut().filter(|m| m.role == "system") {
            Some(system) => system.content = format!("{}\n\n{block}", system.content),
            None => out.insert(
                0,
                Message {
                    role: "system".into(),
                    content: block,
                    ..Message::default()
                },
            ),
        }
    }
    out
}

/// One call read out of an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The tool's name.
    pub name: String,
    /// Its arguments, JSON text.
    pub arguments: String,
}

/// Takes `<tool_call>` blocks out of an answer's text as it streams: text before the first
/// one passes on at once (but for an end that may be the start of `<tool_call>`), everything
/// from it on waits for [`Calls::finish`].
#[derive(Debug, Default)]
pub struct Calls {
    held: String,
    open: bool,
}

impl Calls {
    /// The text of `piece` that can be shown now.
    pub fn push(&mut self, piece: &str) -> String {
        self.held.push_str(piece);
        if self.open {
            return String::new();
        }
        if let Some(at) = self.held.find(OPEN) {
            self.open = true;
            let rest = self.held.split_off(at);
            return std::mem::replace(&mut self.held, rest);
        }
        // Keep back an end that could be the start of `<tool_call>`.
        let keep = (1..OPEN.len())
            .rev()
            .find(|&n| self.held.ends_with(&OPEN[..n]))
            .unwrap_or(0);
        let rest = self.held.split_off(self.held.len() - keep);
        std::mem::replace(&mut self.held, rest)
    }

    /// The rest of the text, and the calls. A block that is not a JSON call with a name stays
    /// in the text (the engine's tolerant parser reads it there).
    pub fn finish(self) -> (String, Vec<Call>) {
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut rest = self.held.as_str();
        while let Some(at) = rest.find(OPEN) {
            text.push_str(&rest[..at]);
            let after = &rest[at + OPEN.len()..];
            let (inner, next, whole_len) = match after.find(CLOSE) {
                Some(end) => (
                    &after[..end],
                    &after[end + CLOSE.len()..],
                    OPEN.len() + end + CLOSE.len(),
                ),
                None => (after, "", rest.len() - at),
            };
            match read_call(inner) {
                Some(call) => calls.push(call),
                None => text.push_str(&rest[at..at + whole_len]),
            }
            rest = next;
        }
        text.push_str(rest);
        if !calls.is_empty() && text.trim().is_empty() {
            text.clear();
        }
        (text, calls)
    }
}

/// `{"name": "…", "arguments": {…}}` (arguments may also be JSON text, or missing: none).
fn read_call(inner: &str) -> Option<Call> {
    let value: Value = serde_json::from_str(inner.trim()).ok()?;
    let name = value.get("name")?.as_str()?.trim();
    if name.is_empty() {
        return None;
    }
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    Some(Call {
        name: name.to_string(),
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolCallIn;

    /// A template of the family, written for this test in the way such templates are: tools
    /// in the system turn, calls and results in their tags, ChatML turns.
    const FAMILY: &str = r#"{%- if tools %}
<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}
# Tools
<tools>
{% for tool in tools %}
{{ tool | tojson }}
{% endfor %}
</tools>
Write calls as <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>
{% elif messages[0].role == 'system' %}
<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{% for message in messages %}
{% if message.role == 'user' or (message.role == 'assistant' and not message.tool_calls) %}
<|im_start|>{{ message.role }}
{{ message.content | trim }}<|im_end|>
{% elif message.role == 'assistant' %}
<|im_start|>assistant
{% if message.content %}{{ message.content }}
{% endif %}
{% for call in message.tool_calls %}
<tool_call>
{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}
</tool_call>
{% endfor %}
<|im_end|>
{% elif message.role == 'tool' %}
<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% endif %}
{% endfor %}
{% if add_generation_prompt %}
<|im_start|>assistant
{% endif %}"#;

    fn message(role: &str, content: &str) -> Message {
        Message {
            role: role.into(),
            content: content.into(),
            ..Message::default()
        }
    }

    fn history() -> Vec<Message> {
        vec![
            message("system", "Be brief."),
            message("user", "Find <cats>."),
            Message {
                tool_calls: vec![ToolCallIn {
                    id: "call_1".into(),
                    name: "web_search".into(),
                    arguments: r#"{"query":"cats","count":2}"#.into(),
                }],
                ..message("assistant", "")
            },
            Message {
                tool_call_id: Some("call_1".into()),
                ..message("tool", "2 results")
            },
        ]
    }

    fn tools() -> Vec<Value> {
        vec![json!({"type": "function", "function": {
            "name": "web_search", "description": "Search the <web> & more",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}})]
    }

    #[test]
    fn a_template_of_the_family_renders_tools_calls_and_results() {
        assert!(takes_tools(FAMILY));
        assert!(!takes_tools(
            "{% for m in messages %}{{ m.content }}{% endfor %}"
        ));
        // A template of another family that takes tools is given them too (LFM2's).
        assert!(takes_tools(
            "{%- if tools -%}List of tools: <|tool_list_start|>{{ tools | tojson }}<|tool_list_end|>{%- endif -%}{% for m in messages %}{{ m.content }}{% endfor %}"
        ));
        let prompt = render(FAMILY, &history(), &tools()).unwrap();
        insta::assert_snapshot!(prompt, @r###"
        <|im_start|>system
        Be brief.

        # Tools
        <tools>
        {"type": "function", "function": {"name": "web_search", "description": "Search the <web> & more", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}
        </tools>
        Write calls as <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>
        <|im_start|>user
        Find <cats>.<|im_end|>
        <|im_start|>assistant
        <tool_call>
        {"name": "web_search", "arguments": {"query": "cats", "count": 2}}
        </tool_call>
        <|im_end|>
        <|im_start|>user
        <tool_response>
        2 results
        </tool_response><|im_end|>
        <|im_start|>assistant
        "###);
    }

    #[test]
    fn a_template_past_the_bounds_is_stopped_and_said_so() {
        // An endless loop of steps, a doubling string written out, and deep recursion.
        let looping =
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
        let e = render(looping, &history(), &tools()).unwrap_err();
        assert!(e.contains(OVER_BOUNDS) && e.contains("steps"), "{e}");
        let writing = "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}";
        let e = render(writing, &history(), &tools()).unwrap_err();
        assert!(
            e.contains(OVER_BOUNDS) && e.contains("wrote more than"),
            "{e}"
        );
        let deep = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}";
        let e = render(deep, &history(), &tools()).unwrap_err();
        assert!(e.contains(OVER_BOUNDS), "{e}");
        for bad in [looping, writing, deep] {
            assert!(check_bounded(bad).unwrap_err().contains(OVER_BOUNDS));
        }
        // A template of the family, and one that refuses the probe, are not refused.
        assert_eq!(check_bounded(FAMILY), Ok(()));
        assert_eq!(
            check_bounded("{{ raise_exception('roles must alternate') }}"),
            Ok(())
        );
    }

    #[test]
    fn a_template_that_fails_says_so() {
        let failing = "{{ raise_exception('no tools here') }}";
        let e = render(failing, &history(), &tools()).unwrap_err();
        assert!(e.contains("no tools here"), "{e}");
        let e = render("{% for %}", &history(), &tools()).unwrap_err();
        assert!(e.contains("cannot be read"), "{e}");
        assert!(check("{% for %}").unwrap_err().contains("cannot be read"));
        assert_eq!(check(FAMILY), Ok(()));
    }

    #[test]
    fn without_a_template_of_the_family_calls_and_results_become_text() {
        let out = in_text(&history(), &tools());
        assert_eq!(out.len(), 4);
        assert!(out[0].content.starts_with("Be brief.\n\n# Tools"));
        assert!(out[0].content.contains(r#""name": "web_search""#));
        assert_eq!(
            out[2].content,
            "<tool_call>\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"cats\", \"count\": 2}}\n</tool_call>"
        );
        assert_eq!(
            (out[3].role.as_str(), out[3].content.as_str()),
            ("user", "<tool_response>\n2 results\n</tool_response>")
        );
        // No system message: the block gets one of its own.
        let out = in_text(&history()[1..], &tools());
        assert_eq!(out[0].role, "system");
        assert!(out[0].content.starts_with("# Tools"));
    }

    #[test]
    fn calls_are_taken_out_of_the_stream() {
        let mut calls = Calls::default();
        let mut shown = String::new();
        for piece in [
            "Let me look. <to",
            "ol_ca",
            "ll>\n{\"name\": \"web_search\", ",
            "\"arguments\": {\"query\": \"cats\"}}\n</tool_call>",
        ] {
            shown.push_str(&calls.push(piece));
        }
        assert_eq!(shown, "Let me look. ");
        let (rest, read) = calls.finish();
        assert_eq!(rest, "");
        assert_eq!(
            read,
            [Call {
                name: "web_search".into(),
                arguments: r#"{"query":"cats"}"#.into()
            }]
        );
        // A `<` that starts no call passes on once it is clear.
        let mut calls = Calls::default();
        assert_eq!(calls.push("a <"), "a ");
        assert_eq!(calls.push("b"), "<b");
        assert_eq!(calls.finish(), ("".to_string(), vec![]));
    }

    #[test]
    fn a_block_that_is_not_a_call_stays_in_the_text() {
        let mut calls = Calls::default();
        calls.push("<tool_call><name>x</name></tool_call> and <tool_call>{\"name\": \"a\"}");
        let (rest, read) = calls.finish();
        assert_eq!(rest, "<tool_call><name>x</name></tool_call> and ");
        assert_eq!(
            read,
            [Call {
                name: "a".into(),
                arguments: "{}".into()
            }]
        );
    }
}
