//! Integration tests of the MCP client against the real `@modelcontextprotocol/server-everything`
//! (pinned in `tests/mcp/package.json`, installed by `scripts/setup.sh --test`), over stdio and
//! Streamable HTTP, directly and through the engine (hub, registry, gate).

mod apps; // MCP Apps: a call keeps its view, the view's calls go through the gate
mod auth; // sign-in (OAuth) through the hub against a stand-in authorization server
mod client; // one session: tools, content kinds, errors, progress, cancellation, env, PATH
mod elicit; // elicitation through the app's broker: accept, decline, URL, the run's stop
mod grants; // an MCP tool's grant is bound to its server's launch settings
mod hub; // the engine's hub: status, crash and restart, reloads, the gate, leftover processes
mod keys_and_blobs; // a secret as a key, in a blob, in an image: masked or withheld, through a run
mod redirects; // nothing reaches another origin on a redirect: transport, OAuth; one builder
mod schemas; // a server's JSON Schema 2020-12 reaches the model whole and checks the arguments
mod skills; // skills served by a server: listed, read only when used, verified
mod support;
mod versions; // protocol versions per server: 2026-07-28 (SDK v2) with its round trips, older ones
mod words; // a server's words: secrets masked, log text escaped, cut and rate limited
