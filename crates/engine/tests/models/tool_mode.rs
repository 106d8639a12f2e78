//! `tool_calls: auto` resolved from real model files: GGUF files written with the chat
//! templates of real models, read through the models folder's library (and its metadata
//! cache), the same way a run resolves a profile before each request.

use std::path::Path;

use engine::models::{Api, ModelProfile, ToolCallMode, ToolFamily};
use engine::run::tool_mode::{resolve, template_tools, AutoReason, NoChecks};
use test_support::gguf;

/// Qwen2.5-Coder-0.5B-Instruct's template, its tool part as its GGUF has it.
const QWEN25: &str = r#"{%- if tools %}{{- '<|im_start|>system\n' }}{{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}{%- for tool in tools %}{{- "\n" }}{{- tool | tojson }}{%- endfor %}{{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}{%- endif %}{%- for message in messages %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}{%- endfor %}"#;
/// SmolLM2's: no tools.
const SMOLLM2: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}";
/// LFM2's tool part.
const LFM2: &str = "{%- if tools -%}{{- 'List of tools: <|tool_list_start|>[' -}}{%- for tool in tools -%}{{- tool | tojson -}}{%- endfor -%}{{- ']<|tool_list_end|>' -}}{%- endif -%}{%- for message in messages -%}{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' -}}{%- endfor -%}";
/// A template that takes tools in a form the app does not know.
const STRANGE: &str = "{% if tools %}Functions: {{ tools | tojson }}. Answer CALL name args.{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}";

fn install(dir: &Path, name: &str, architecture: &str, template: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.gguf"));
    std::fs::write(&path, gguf::with_template(architecture, 4096, 15, template)).unwrap();
    path
}

fn local(path: &Path) -> ModelProfile {
    ModelProfile::new("here", Api::Local, "", path.display().to_string())
}

#[test]
fn auto_takes_the_native_form_of_a_model_whose_template_takes_tools() {
    let dir = tempfile::tempdir().unwrap();
    let qwen = install(dir.path(), "qwen2.5-coder", "qwen2", QWEN25);
    let tools = template_tools(&qwen, dir.path()).expect("the template is read");
    assert_eq!(tools.family, ToolFamily::Hermes);
    assert!(tools.takes_tools);
    let choice = resolve(&local(&qwen), Some(tools), &NoChecks);
    assert_eq!(choice.mode, ToolCallMode::Native);
    assert!(choice.guided, "local calls are guided by default");
    assert_eq!(choice.family, ToolFamily::Hermes);
    assert_eq!(choice.reason, AutoReason::NativeFamily);

    let lfm2 = install(dir.path(), "lfm2", "lfm2", LFM2);
    let choice = resolve(&local(&lfm2), template_tools(&lfm2, dir.path()), &NoChecks);
    assert_eq!(
        (choice.mode, choice.family, choice.reason),
        (
            ToolCallMode::Native,
            ToolFamily::Lfm2,
            AutoReason::NativeFamily
        )
    );
}

#[test]
fn auto_falls_back_to_text_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let smol = install(dir.path(), "smollm2", "llama", SMOLLM2);
    let choice = resolve(&local(&smol), template_tools(&smol, dir.path()), &NoChecks);
    assert_eq!(choice.mode, ToolCallMode::Text);
    assert_eq!(choice.reason, AutoReason::TemplateTakesNoTools);

    let strange = install(dir.path(), "strange", "llama", STRANGE);
    let choice = resolve(
        &local(&strange),
        template_tools(&strange, dir.path()),
        &NoChecks,
    );
    assert_eq!(
        (choice.mode, choice.family, choice.reason),
        (
            ToolCallMode::Text,
            ToolFamily::Unknown,
            AutoReason::UnknownFamily
        )
    );

    // Not a model file at all: the text format, and why.
    let broken = dir.path().join("broken.gguf");
    std::fs::write(&broken, b"GGUF").unwrap();
    let choice = resolve(
        &local(&broken),
        template_tools(&broken, dir.path()),
        &NoChecks,
    );
    assert_eq!(
        (choice.mode, choice.reason),
        (ToolCallMode::Text, AutoReason::NoModelFile)
    );
}

#[test]
fn a_profile_that_says_is_taken_as_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let qwen = install(dir.path(), "qwen", "qwen2", QWEN25);
    let tools = template_tools(&qwen, dir.path());
    let mut profile = local(&qwen);
    profile.tool_calls = Some(ToolCallMode::Text);
    let choice = resolve(&profile, tools, &NoChecks);
    assert_eq!(
        (choice.mode, choice.reason),
        (ToolCallMode::Text, AutoReason::Configured)
    );
    // A family override wins over the template's.
    profile.tool_calls = None;
    profile.tool_family = Some(ToolFamily::Mistral);
    let choice = resolve(&profile, tools, &NoChecks);
    assert_eq!(
        (choice.mode, choice.family),
        (ToolCallMode::Native, ToolFamily::Mistral)
    );
    // A model outside the models folder is read from its file.
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = install(elsewhere.path(), "qwen", "qwen2", QWEN25);
    assert_eq!(template_tools(&copy, dir.path()), tools);
}

/// The profile form's line: a profile as models.yaml holds it (its local model named by file
/// name) resolved through the Settings API, as the run loop would before a request.
#[test]
fn the_profile_form_is_told_what_auto_chose_and_why() {
    use engine::api::settings::profile_tool_mode;
    use engine::check::{self, CheckOptions, ItemKind, ItemScore, Verdict};

    let home = tempfile::tempdir().unwrap();
    let ctx = engine::context::AppContext::open(Some(home.path())).unwrap();
    let models = ctx.paths().models_dir();
    std::fs::create_dir_all(&models).unwrap();
    install(&models, "qwen", "qwen2", QWEN25);
    install(&models, "smollm2", "llama", SMOLLM2);
    let profile = |model: &str, mode: ToolCallMode| {
        let mut p = ModelProfile::new("here", Api::Local, "", model);
        p.tool_calls = Some(mode);
        p
    };
    let said = |p: &ModelProfile| {
        let c = profile_tool_mode(&ctx, p);
        (c.mode, c.guided, c.family, c.reason)
    };

    assert_eq!(
        said(&profile("qwen", ToolCallMode::Auto)),
        (
            ToolCallMode::Native,
            true,
            ToolFamily::Hermes,
            AutoReason::NativeFamily
        )
    );
    assert_eq!(
        said(&profile("smollm2.gguf", ToolCallMode::Auto)).3,
        AutoReason::TemplateTakesNoTools
    );
    assert_eq!(
        said(&profile("not-downloaded", ToolCallMode::Auto)).3,
        AutoReason::NoModelFile
    );
    assert_eq!(
        said(&profile("qwen", ToolCallMode::Text)),
        (
            ToolCallMode::Text,
            true,
            ToolFamily::Hermes,
            AutoReason::Configured
        )
    );

    // Once the model's check has run, its best mode and guidance, whatever the template says.
    let target = check::target(&ctx, "qwen").unwrap();
    let items = (0..4)
        .map(|i| ItemScore {
            id: format!("i{i}"),
            kind: ItemKind::OneCall,
            verdict: Verdict::AsAsked,
            valid_call: true,
            right_tool: true,
            as_asked: true,
            why: None,
            calls: Vec::new(),
            requests: 1,
            seconds: 1.0,
        })
        .collect();
    let options = CheckOptions {
        mode: ToolCallMode::Text,
        guided: false,
    };
    let report = check::CheckReport::new(&target, options, check::BUILTIN_SET, items, 4.0, false);
    check::store_report(&ctx, &report).unwrap().unwrap();
    assert_eq!(
        said(&profile("qwen", ToolCallMode::Auto)),
        (
            ToolCallMode::Text,
            false,
            ToolFamily::Hermes,
            AutoReason::Checked
        )
    );
}
