//! Integration tests of the tool-call parser, the result formatter and the instruction generator.
//!
//! Modules:
mod arguments; // native-call arguments: fixtures/native_arguments.jsonl, read or refused
mod corpus; // every case of fixtures/parser_cases.jsonl (the public corpus) passes
mod format; // hostile tool output cannot close the result frame or forge a call
mod forms; // the call forms of local model families: fixtures/forms_cases.jsonl (FORMS.md)
mod instructions; // the <tool_instructions> block, pinned by insta snapshots
mod regressions; // inputs kept from robustness work: fixtures/regressions.jsonl
mod robustness; // arbitrary input never panics; pathological inputs parse correctly
mod stream; // streaming and one-shot parsing agree for any chunking

pub mod support;
