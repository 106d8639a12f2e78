//! The chat formats the runtime knows, in one table ([`FORMATS`]): for each, llama.cpp's name
//! for its built-in template, the architectures whose model files are written for it, how to
//! recognise it in a chat template's Jinja text, and the texts that end the assistant's turn.
//!
//! The table answers two questions:
//!
//! - **Which template renders the turns** ([`choose`]): the one given with `--chat-template`,
//!   else the model file's (`tokenizer.chat_template`), when llama.cpp's template engine can
//!   render it. A file without one (Gemma 3 270M's GGUF has none), or with one llama.cpp does
//!   not know, gets the known format of its architecture (`general.architecture`: `gemma3` →
//!   Gemma's turns, `llama` with `<|eot_id|>` in its vocabulary → Llama 3's…), and only a file of
//!   an architecture the table does not know gets ChatML, which most models follow. A model
//!   prompted in a format it never saw echoes the prompt's markers as text and never ends.
//! - **Where an answer ends** ([`Choice::stops`]): the end markers of the format in use (its
//!   own, and those of the file's template when the table recognises it), which the worker stops
//!   at even when the model writes them as plain text rather than as their special token (see
//!   `ending`). llama.cpp's end-of-generation tokens (the file's `eos`, `eot`, `eom` and the
//!   tokens it recognises by their text) end an answer whatever the format.

/// A chat format: how turns are written, and what ends one.
#[derive(Debug, PartialEq, Eq)]
pub struct Format {
    /// llama.cpp's name for its built-in template (`llama_chat_apply_template`).
    pub name: &'static str,
    /// The `general.architecture` values whose model files are written in this format.
    pub architectures: &'static [&'static str],
    /// A token the vocabulary must hold for the architecture to mean this format (a `llama`
    /// file is Llama 3 only with `<|eot_id|>`; Llama 2, Mistral and SmolLM2 are `llama` too).
    pub needs_token: Option<&'static str>,
    /// Texts that are all in a Jinja template of this format (the markers llama.cpp's own
    /// detection looks for).
    pub signature: &'static [&'static str],
    /// Texts that end the assistant's turn: its end marker and the opening of the next turn.
    pub stops: &'static [&'static str],
}

/// ChatML (`<|im_start|>role … <|im_end|>`): Qwen, SmolLM, LFM2, InternLM2, and the fallback.
pub const CHATML: Format = Format {
    name: "chatml",
    architectures: &[
        "qwen2",
        "qwen2moe",
        "qwen3",
        "qwen3moe",
        "smollm3",
        "lfm2",
        "internlm2",
    ],
    needs_token: None,
    signature: &["<|im_start|>"],
    stops: &["<|im_end|>", "<|im_start|>"],
};

/// Every format the runtime knows, the more specific first: a template or a vocabulary is
/// matched against them in this order (Phi-4's template holds ChatML's markers too, and a
/// Phi-4 file is `phi3` like a Phi-3 one).
pub const FORMATS: &[Format] = &[
    Format {
        name: "phi4",
        architectures: &["phi3"],
        needs_token: Some("<|im_sep|>"),
        signature: &["<|im_start|>", "<|im_sep|>"],
        stops: &["<|im_end|>", "<|im_start|>"],
    },
    CHATML,
    Format {
        name: "gemma",
        architectures: &["gemma", "gemma2", "gemma3", "gemma3n"],
        needs_token: None,
        signature: &["<start_of_turn>"],
        stops: &["<end_of_turn>", "<start_of_turn>"],
    },
    Format {
        name: "llama3",
        architectures: &["llama"],
        needs_token: Some("<|eot_id|>"),
        signature: &["<|start_header_id|>", "<|end_header_id|>"],
        stops: &["<|eot_id|>", "<|eom_id|>", "<|start_header_id|>"],
    },
    Format {
        name: "llama4",
        architectures: &["llama4"],
        needs_token: None,
        signature: &["<|header_start|>", "<|header_end|>"],
        stops: &["<|eot|>", "<|header_start|>"],
    },
    Format {
        name: "phi3",
        architectures: &["phi3"],
        needs_token: Some("<|end|>"),
        signature: &["<|assistant|>", "<|end|>"],
        stops: &["<|end|>", "<|user|>", "<|assistant|>", "<|system|>"],
    },
    Format {
        name: "granite",
        architectures: &["granite", "granitemoe"],
        needs_token: None,
        signature: &["<|start_of_role|>"],
        stops: &["<|end_of_text|>", "<|start_of_role|>"],
    },
    Format {
        name: "command-r",
        architectures: &["command-r", "cohere2"],
        needs_token: None,
        signature: &["<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>"],
        stops: &["<|END_OF_TURN_TOKEN|>", "<|START_OF_TURN_TOKEN|>"],
    },
    Format {
        name: "exaone3",
        architectures: &["exaone"],
        needs_token: None,
        signature: &["[|system|]", "[|assistant|]", "[|endofturn|]"],
        stops: &["[|endofturn|]", "[|user|]"],
    },
];

/// The format of a Jinja chat template, when the table knows it.
pub fn recognise(template: &str) -> Option<&'static Format> {
    FORMATS
        .iter()
        .find(|f| f.signature.iter().all(|marker| template.contains(marker)))
}

/// The known format of an architecture's model files, if any; `has_token` says whether the
/// vocabulary holds a text as one token.
pub fn for_architecture(
    architecture: &str,
    has_token: impl Fn(&str) -> bool,
) -> Option<&'static Format> {
    FORMATS
        .iter()
        .find(|f| f.architectures.contains(&architecture) && f.needs_token.is_none_or(&has_token))
}

/// Where the template that renders the turns came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `--chat-template`.
    Given,
    /// The model file's `tokenizer.chat_template`.
    ModelFile,
    /// The table's format for the file's architecture.
    Architecture,
    /// ChatML, for lack of anything better.
    Fallback,
}

impl Source {
    /// Its name on the ready line.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Given => "--chat-template",
            Source::ModelFile => "model file",
            Source::Architecture => "architecture",
            Source::Fallback => "ChatML fallback",
        }
    }
}

/// The chat template a Jinja text (given or the file's) that llama.cpp can or cannot render.
#[derive(Debug, Clone, Copy)]
pub struct Jinja<'t> {
    /// The template's text.
    pub text: &'t str,
    /// Where it came from ([`Source::Given`] or [`Source::ModelFile`]).
    pub source: Source,
    /// llama.cpp's template engine renders it (it recognises its format).
    pub renders: bool,
}

/// The template a model runs with, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// Where the template that renders the turns came from.
    pub source: Source,
    /// What llama.cpp renders the turns with: the Jinja text, or a built-in template's name.
    pub template: String,
    /// The table's format of the template in use, when it knows it.
    pub format: Option<&'static Format>,
    /// The format of the Jinja template (given or the file's), when the table knows it; it
    /// renders a request's tools when it takes them, so its end markers count too.
    pub jinja_format: Option<&'static Format>,
    /// The model file's `general.architecture`.
    pub architecture: Option<String>,
    /// Why the template in use is not the one given or the file's, for the ready line.
    pub note: Option<String>,
}

impl Choice {
    /// The texts that end an answer: the end markers of the format in use and of the Jinja
    /// template's, each once.
    pub fn stops(&self) -> Vec<&'static str> {
        let mut stops: Vec<&'static str> = Vec::new();
        for format in [self.format, self.jinja_format].into_iter().flatten() {
            for stop in format.stops {
                if !stops.contains(stop) {
                    stops.push(stop);
                }
            }
        }
        stops
    }

    /// What the ready line says about it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "source": self.source.as_str(),
            "format": self.format.map(|f| f.name),
            "architecture": self.architecture,
            "stops": self.stops(),
        })
    }
}

/// The template to run with: the Jinja template (given, else the file's) when llama.cpp
/// renders it, else the known format of the architecture, else ChatML. `has_token` says
/// whether the vocabulary holds a text as one token.
pub fn choose(
    jinja: Option<Jinja<'_>>,
    architecture: Option<&str>,
    has_token: impl Fn(&str) -> bool,
) -> Choice {
    let jinja_format = jinja.and_then(|j| recognise(j.text));
    let architecture_owned = architecture.map(str::to_string);
    if let Some(j) = jinja.filter(|j| j.renders) {
        return Choice {
            source: j.source,
            template: j.text.to_string(),
            format: jinja_format,
            jinja_format,
            architecture: architecture_owned,
            note: None,
        };
    }
    let known = architecture.and_then(|a| for_architecture(a, has_token));
    let why = match jinja {
        None => "the model file has no chat template".to_string(),
        Some(j) => format!(
            "llama.cpp's template engine does not know {} (a request's tools still go through it when it takes them)",
            match j.source {
                Source::Given => "the --chat-template given",
                _ => "the model file's chat template",
            }
        ),
    };
    let arch = architecture.unwrap_or("not named in the file");
    let (source, format, note) = match known {
        Some(format) => (
            Source::Architecture,
            format,
            format!(
                "{why}; the {} format of its architecture ({arch}) is used",
                format.name
            ),
        ),
        None => (
            Source::Fallback,
            &CHATML,
            format!("{why} and its architecture ({arch}) has no known one; ChatML is used"),
        ),
    };
    Choice {
        source,
        template: format.name.to_string(),
        format: Some(format),
        jinja_format,
        architecture: architecture_owned,
        note: Some(note),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocabulary(tokens: &'static [&'static str]) -> impl Fn(&str) -> bool {
        move |text| tokens.contains(&text)
    }

    #[test]
    fn each_architecture_gets_its_format_and_the_vocabulary_tells_llama_3_apart() {
        let none = vocabulary(&[]);
        let name = |arch: &str, tokens: &'static [&'static str]| {
            for_architecture(arch, vocabulary(tokens)).map(|f| f.name)
        };
        for gemma in ["gemma", "gemma2", "gemma3", "gemma3n"] {
            assert_eq!(name(gemma, &[]), Some("gemma"), "{gemma}");
        }
        for qwen in ["qwen2", "qwen3", "qwen2moe", "qwen3moe"] {
            assert_eq!(name(qwen, &[]), Some("chatml"), "{qwen}");
        }
        // `llama` is Llama 3 only when its vocabulary has `<|eot_id|>`: SmolLM2, Llama 2 and
        // the first Mistral are `llama` too.
        assert_eq!(name("llama", &["<|eot_id|>"]), Some("llama3"));
        assert_eq!(name("llama", &["<|im_start|>", "<|im_end|>"]), None);
        // Phi-4 is `phi3` like Phi-3, with ChatML's markers and `<|im_sep|>`.
        assert_eq!(name("phi3", &["<|end|>", "<|assistant|>"]), Some("phi3"));
        assert_eq!(name("phi3", &["<|im_sep|>", "<|im_start|>"]), Some("phi4"));
        assert_eq!(name("phi3", &[]), None);
        assert_eq!(name("granite", &[]), Some("granite"));
        assert_eq!(name("llama4", &[]), Some("llama4"));
        assert!(for_architecture("mamba", &none).is_none());
        // Each architecture is named once per vocabulary condition, and every stop is a marker.
        for format in FORMATS {
            assert!(!format.stops.is_empty(), "{}", format.name);
            assert!(format.stops.iter().all(|s| s.len() > 2), "{}", format.name);
        }
    }

    #[test]
    fn a_template_is_recognised_by_its_markers() {
        let chatml = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
        assert_eq!(recognise(chatml).map(|f| f.name), Some("chatml"));
        let phi4 = "{% for m in messages %}<|im_start|>{{ m.role }}<|im_sep|>{{ m.content }}<|im_end|>{% endfor %}";
        assert_eq!(recognise(phi4).map(|f| f.name), Some("phi4"));
        let gemma = "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m.role }}\n{{ m.content }}<end_of_turn>\n{% endfor %}";
        assert_eq!(recognise(gemma).map(|f| f.name), Some("gemma"));
        let llama3 =
            "<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}<|eot_id|>";
        assert_eq!(recognise(llama3).map(|f| f.name), Some("llama3"));
        assert_eq!(recognise("{{ messages[0].content }}"), None);
    }

    #[test]
    fn a_file_without_template_gets_its_architectures_then_chatml() {
        let has = vocabulary(&["<start_of_turn>", "<end_of_turn>"]);
        let gemma = choose(None, Some("gemma3"), &has);
        assert_eq!(
            (gemma.source, gemma.template.as_str()),
            (Source::Architecture, "gemma")
        );
        assert_eq!(gemma.stops(), ["<end_of_turn>", "<start_of_turn>"]);
        let note = gemma.note.clone().unwrap();
        assert!(
            note.contains("no chat template") && note.contains("gemma3"),
            "{note}"
        );
        assert_eq!(gemma.to_json()["format"], "gemma");
        assert_eq!(gemma.to_json()["source"], "architecture");

        let unknown = choose(None, Some("mamba"), &has);
        assert_eq!(
            (unknown.source, unknown.template.as_str()),
            (Source::Fallback, "chatml")
        );
        assert_eq!(unknown.stops(), ["<|im_end|>", "<|im_start|>"]);
        assert!(unknown.note.unwrap().contains("ChatML is used"));
        assert_eq!(choose(None, None, &has).source, Source::Fallback);
    }

    #[test]
    fn a_template_llama_cpp_renders_is_used_and_its_markers_end_answers() {
        let text = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
        let jinja = Jinja {
            text,
            source: Source::ModelFile,
            renders: true,
        };
        // The file's template wins over its architecture's (a Gemma file with ChatML turns).
        let chosen = choose(Some(jinja), Some("gemma3"), vocabulary(&[]));
        assert_eq!(
            (
                chosen.source,
                chosen.template.as_str(),
                chosen.note.as_deref()
            ),
            (Source::ModelFile, text, None)
        );
        assert_eq!(chosen.stops(), ["<|im_end|>", "<|im_start|>"]);
        // A template the table does not know: no text ends it, only the end-of-generation tokens.
        let odd = Jinja {
            text: "{{ messages[0].content }}",
            source: Source::Given,
            renders: true,
        };
        let chosen = choose(Some(odd), Some("llama"), vocabulary(&[]));
        assert_eq!((chosen.source, chosen.format), (Source::Given, None));
        assert!(chosen.stops().is_empty());
        assert_eq!(chosen.to_json()["format"], serde_json::Value::Null);
    }

    #[test]
    fn a_template_llama_cpp_cannot_render_gives_way_to_the_architectures() {
        let text = "<start_of_turn>{{ custom_thing() }}";
        let jinja = Jinja {
            text,
            source: Source::ModelFile,
            renders: false,
        };
        let chosen = choose(Some(jinja), Some("gemma3"), vocabulary(&[]));
        assert_eq!(
            (chosen.source, chosen.template.as_str()),
            (Source::Architecture, "gemma")
        );
        assert!(chosen.note.as_deref().unwrap().contains("does not know"));
        // With the file's markers and the format's, each once.
        assert_eq!(chosen.stops(), ["<end_of_turn>", "<start_of_turn>"]);
    }
}
