//! Guided answers: a GBNF grammar the answer must follow, from its start or from where a
//! trigger pattern matches the answer so far (a *lazy* grammar, as llama.cpp's server takes
//! them: `grammar`, `grammar_lazy`, `grammar_triggers`).
//!
//! Nothing a request sends may end the process, and llama.cpp ends it on several inputs: it
//! builds a C++ `std::regex` from each trigger (which throws on `a{2,1}`, `*x`, `x**`, `\1`…,
//! an exception no one catches), matches it with a recursive matcher (a long answer overflows
//! the stack; `(a|a){0,64}` backtracks for ever), and aborts when a token is accepted that the
//! grammar has no place for (a grammar that allows nothing, or a trigger that matches text the
//! grammar does not start with). So the runtime keeps llama.cpp to what it does safely:
//!
//! - **Triggers are the runtime's.** Patterns are compiled with Rust's `regex` (linear time, no
//!   backtracking, bounded size; a pattern it cannot read is a 400) and matched here against the
//!   answer as it is written, the way llama.cpp would: the grammar takes over from the start of
//!   the match, or of its first non-empty group. llama.cpp only ever gets an eager grammar,
//!   no patterns.
//! - **Every token is checked before the grammar takes it** (`worker::pick`): the text the
//!   trigger matched, fed in one character at a time through tokens that spell exactly it,
//!   and each generated token. A grammar that refuses what its trigger matched, or allows no
//!   token at some point, ends the request with an error (a 400 when nothing was sent yet), and
//!   the runtime goes on.
//! - **Sizes are bounded**: the grammar's text, the number and length of patterns.

use regex::{Regex, RegexBuilder};

/// The largest grammar accepted (GBNF text). The engine's grammars for an agent's tools are
/// far smaller; llama.cpp's parser expands repetitions, so the text is bounded before it.
pub const MAX_GRAMMAR_BYTES: usize = 1 << 20;
/// The most trigger patterns of one request.
pub const MAX_TRIGGERS: usize = 32;
/// The longest trigger pattern.
pub const MAX_PATTERN_BYTES: usize = 1024;
/// What a compiled pattern may take (Rust's `regex` refuses patterns past it).
const PATTERN_SIZE_LIMIT: usize = 1 << 20;
/// How far back in the answer a trigger's match may start, counted from its end: a match
/// found later than its first chance is one longer than this.
const TRIGGER_WINDOW: usize = 16 * 1024;

/// `pattern` compiled, or why it cannot be a trigger.
pub fn compile_trigger(pattern: &str) -> Result<Regex, String> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "a trigger pattern is {} bytes; at most {MAX_PATTERN_BYTES}",
            pattern.len()
        ));
    }
    RegexBuilder::new(pattern)
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let why = e.to_string();
            let first = why.lines().last().unwrap_or(&why).trim().to_string();
            format!(
                "the trigger pattern {pattern:?} is not a regular expression this runtime \
                 accepts ({first}); patterns are read as Rust's regex crate reads them, without \
                 back-references or look-around"
            )
        })
}

/// The most repetitions a grammar's `{m,n}` may ask for (llama.cpp expands each into rules).
const MAX_REPEAT: u64 = 2000;

/// Why llama.cpp must not be given `grammar`, if it must not: its parser expands `x{m,n}` into
/// `n - m` rules counted without a check, so `{2,1}` asks for about 2^64 of them (the process
/// grows until the system kills it). The text is scanned as GBNF is read: string literals and
/// character classes (with their escapes) and comments are skipped, each `{…}` checked.
pub fn check_grammar(grammar: &str) -> Result<(), String> {
    let bytes = grammar.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'[') => {
                let close = if quote == b'"' { b'"' } else { b']' };
                i += 1;
                while i < bytes.len() && bytes[i] != close {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'{' => {
                let end = grammar[i..].find('}').map_or(bytes.len(), |e| i + e);
                let inner = &grammar[i + 1..end];
                let number = |t: &str| t.trim().parse::<u64>().ok();
                let (min, max) = match inner.split_once(',') {
                    None => (number(inner), number(inner)),
                    Some((a, b)) if b.trim().is_empty() => (number(a), Some(u64::MAX)),
                    Some((a, b)) => (number(a), number(b)),
                };
                let line = grammar[..i].matches('\n').count() + 1;
                match (min, max) {
                    (Some(min), Some(max)) if min > max => {
                        return Err(format!(
                            "the grammar's repetition {{{inner}}} (line {line}) asks for at least {min} and at most {max}"
                        ))
                    }
                    (Some(min), Some(max)) if min > MAX_REPEAT || (max != u64::MAX && max > MAX_REPEAT) => {
                        return Err(format!(
                            "the grammar's repetition {{{inner}}} (line {line}) is over {MAX_REPEAT}"
                        ))
                    }
                    // Not numbers: llama.cpp's parser says what is wrong.
                    _ => {}
                }
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// `text` as a regular expression matching exactly it (a `word` trigger).
pub fn escape(text: &str) -> String {
    regex::escape(text)
}

/// The compiled triggers of one request.
#[derive(Debug, Default)]
pub struct Triggers(Vec<Regex>);

impl Triggers {
    /// Compile `patterns` (checked already: see [`compile_trigger`]).
    pub fn new(patterns: &[String]) -> Result<Triggers, String> {
        patterns
            .iter()
            .map(|p| compile_trigger(p))
            .collect::<Result<Vec<_>, _>>()
            .map(Triggers)
    }

    /// Where in `text` (the answer so far) the grammar takes over, if a trigger matches: the
    /// start of the first trigger's match, or of its first group that matched something.
    pub fn start_in(&self, text: &str) -> Option<usize> {
        let mut from = text.len().saturating_sub(TRIGGER_WINDOW);
        while !text.is_char_boundary(from) {
            from += 1;
        }
        self.0.iter().find_map(|regex| {
            let captures = regex.captures_at(text, from)?;
            let whole = captures.get(0)?;
            let start = captures
                .iter()
                .skip(1)
                .flatten()
                .find(|group| !group.is_empty())
                .map_or(whole.start(), |group| group.start());
            Some(start)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_that_stop_llama_cpp_are_refused_with_a_reason() {
        // Each of these made llama.cpp's std::regex throw, which ended the process.
        for bad in ["a{2,1}", "*x", "\\1", "(<a", "[a", "(?=x)y", "a{99999}"] {
            let e = compile_trigger(bad).unwrap_err();
            assert!(e.contains("not a regular expression"), "{bad}: {e}");
        }
        // This one too; Rust's regex reads it as `(x*)*`, in linear time, so it is harmless
        // here (llama.cpp never sees a pattern).
        assert!(compile_trigger("x**").unwrap().is_match("xx"));
        assert!(compile_trigger(&"a".repeat(2000))
            .unwrap_err()
            .contains("at most 1024"));
        for good in [
            "<tool_call>[ \\t\\r\\n]{0,16}$",
            "^\\s*\\{\"name\"",
            "```(?:json)?\\s*\\{",
            "\\[TOOL_CALLS\\]",
            "<\\|tool_call_start\\|>",
        ] {
            compile_trigger(good).unwrap();
        }
    }

    #[test]
    fn repetitions_llama_cpp_would_expand_for_ever_are_refused() {
        for bad in [
            "root ::= \"a\"{2,1}",
            "root ::= [[^a]{2,1}}",
            "root ::= x\nx ::= \"b\"{9,3}",
            "root ::= \"a\"{0,99999}",
        ] {
            assert!(check_grammar(bad).is_err(), "{bad}");
        }
        assert!(check_grammar("root ::= \"a\"{2,1}")
            .unwrap_err()
            .contains("at least 2 and at most 1"));
        for good in [
            "root ::= \"a\"{1,2} [0-9]{3} \"b\"{2,}",
            // Inside literals, classes and comments, braces are text.
            "root ::= \"{2,1}\" [{}] # {9,1}\n",
            "root ::= \"\\\"{2,1}\"",
        ] {
            assert_eq!(check_grammar(good), Ok(()), "{good}");
        }
    }

    #[test]
    fn the_grammar_starts_where_llama_cpp_would_start_it() {
        let t = Triggers::new(&["<tool_call>[ \\n]{0,16}$".into()]).unwrap();
        assert_eq!(t.start_in("Let me look."), None);
        assert_eq!(t.start_in("Let me look. <tool_call>\n"), Some(13));
        // Anchored at the end: text after it is not a trigger any more.
        assert_eq!(t.start_in("<tool_call> and more"), None);
        // The first group that matched something decides.
        let t = Triggers::new(&["(x)?y(z)".into()]).unwrap();
        assert_eq!(t.start_in("..yz"), Some(3));
        assert_eq!(t.start_in("..xyz"), Some(2));
        // A word.
        let t = Triggers::new(&[escape("a.b")]).unwrap();
        assert_eq!(t.start_in("xxa.b"), Some(2));
        assert_eq!(t.start_in("xxazb"), None);
    }

    #[test]
    fn a_long_answer_is_searched_in_its_tail_only() {
        let t = Triggers::new(&["<go>".into()]).unwrap();
        let mut text = "<go>".to_string();
        text.push_str(&"€".repeat(TRIGGER_WINDOW));
        // The early match is out of the window (it would have been found when it was written).
        assert_eq!(t.start_in(&text), None);
        text.push_str("<go>");
        assert_eq!(t.start_in(&text), Some(text.len() - 4));
    }
}
