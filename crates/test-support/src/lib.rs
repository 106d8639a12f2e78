//! Test stand-ins shared by every test of the workspace (and the desktop E2E tests, through the
//! `scripted-model-server` binary).
//!
//! [`ScriptedModel`] is a real HTTP server on 127.0.0.1 speaking both model dialects the engine
//! supports — OpenAI-compatible chat completions (`POST /v1/chat/completions`) and Anthropic
//! Messages (`POST /v1/messages`) — answering each request with the next scripted [`Turn`]:
//! streamed text (SSE, in chunks, optionally slow), native tool calls (OpenAI `tool_calls`,
//! Anthropic `tool_use` blocks, their arguments streamed verbatim in chunks), a finish reason,
//! usage, or an error status.
//! It records every request so tests can assert what the model was sent. It can stand in for
//! a model with a small context window: [`ScriptedModel::set_char_limit`] refuses longer
//! requests with a context-length error, and [`ScriptedModel::set_condensation_note`] answers
//! the engine's condensation requests with a scripted note.
//!
//! Besides the two model endpoints it serves `GET /requests` (the recorded requests as JSON)
//! and `POST /turns` (append a JSON array of turns), for tests that drive it from outside.
#![warn(missing_docs)]

pub mod gguf;
pub mod hub;
pub mod oauth;
mod scripted_model;
pub mod seed;
mod turn;

pub use scripted_model::{Dialect, RecordedRequest, ScriptedModel};
pub use turn::{Finish, Flood, FloodShape, Turn, TurnCall, TurnError, TurnUsage};
