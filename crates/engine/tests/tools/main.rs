//! Integration tests of the tools: real HTTP servers on 127.0.0.1, real SQLite files, and the
//! real OS keyring (run under `scripts/with-session.sh` on Linux, as `scripts/test.sh` does).

mod attachments; // binary attachments stored as artifacts by the gate
mod builtins; // web_search, web_fetch, call_subagent against their stand-ins
mod custom_tool;
mod direct;
mod editor; // the tool editor: drafts checked, test runs with the whole exchange // direct calls: artifact tools per conversation, oversized results stored
mod grants; // conversation grants: bound to the host, "calls like this", never loosening a rule
mod http_tool; // HTTP tool calls: query vs body, headers, JSONPath, errors, caps
mod loading;
mod openapi; // OpenAPI descriptions imported as HTTP tools // HTTP tool files: every field and default, located errors, registry clashes
mod redirects; // secrets never follow a redirect to another origin; no Referer
mod rewrites; // rules compare canonical forms: rewritten URLs, addresses, hosts, JSON denied
mod secrets; // keyring → env → .env, and no secret in any output
mod servers; // axum stand-ins: a JSON API, Bocha web search, Jina Reader // adding a tool in Rust (seed 001 path B), called through the pipeline
