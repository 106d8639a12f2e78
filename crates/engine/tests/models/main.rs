//! Integration tests of the model clients against the scripted model server (real HTTP + SSE on
//! 127.0.0.1, from the `artifactflow-test-support` crate).

mod anthropic; // Anthropic Messages: streaming, stop reasons, usage, headers, system prompt
mod common; // profiles, secrets and a runner shared by the modules
mod discover; // the server's model list (/v1/models) for the profile form's picker
mod openai; // OpenAI-compatible: streaming, finish reasons, usage, auth, JSON answers, bad SSE
mod profiles; // models.yaml loading: bundled file, located errors
mod redirects; // a call carrying a key never follows a redirect to another origin
mod resilience; // retries (429 Retry-After, 5xx, connection), idle timeout, cancellation
mod secrets; // API keys: missing key names the secret, keys never appear in errors
mod tool_mode; // `tool_calls: auto` resolved from model files' templates
mod window; // context windows discovered from llama.cpp, Ollama and /models stand-ins, the cache
