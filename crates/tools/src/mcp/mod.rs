//! MCP (Model Context Protocol) client: the tools people already have, from servers they
//! configure in `mcp.json`.
//!
//! - [`config`] reads and edits `mcp.json` (the `mcpServers` block other apps use).
//! - [`client`] is one session with one server over the official SDK (`rmcp`): stdio children
//!   with a clean environment in their own process group, or Streamable HTTP.
//! - [`schema`] turns a tool's input schema into parameters and checks JSON arguments.
//! - [`tool`] puts each server tool in the registry as `SERVER.TOOL`, through the one gate.
//! - [`hub`] keeps the configured servers running in the background with a status each.
//! - [`auth`] signs in to remote servers (OAuth) and keeps their tokens in the keyring.
//! - [`elicitation`] turns a server's question into a form for the app, and checks answers.

pub mod apps;
pub mod auth;
pub mod client;
pub mod config;
pub mod elicitation;
pub mod hub;
pub mod schema;
pub mod tool;

pub use client::{connect, ConnectOptions, ElicitationHandler, McpClient, McpError};
pub use config::{McpConfig, McpServerConfig, McpTransport, OAuthConfig};
pub use elicitation::{ElicitationForm, ElicitationReply};
pub use hub::{McpHub, McpOffer, McpServerView, ServerStatus};
pub use tool::{McpTool, McpToolInfo};

// Where an agent's `tools:` map is read: with the permissions, which decide on it.
pub use crate::permissions::{agent_setting, pattern_matches};

/// The server an agent's tool entry names, when it is an MCP tool entry (`SERVER.TOOL` or
/// `SERVER.*`) of a configured server.
pub fn server_of<'a>(entry: &'a str, servers: &McpConfig) -> Option<&'a str> {
    let (server, _) = entry.split_once('.')?;
    servers.servers.contains_key(server).then_some(server)
}

/// The tools an agent's `tools:` map names in `registry`, `SERVER.*` entries expanded, each
/// once, in the map's order.
pub fn expand_agent_tools<'a>(
    tools: &std::collections::BTreeMap<String, crate::tool_spec::Permission>,
    registry: &'a crate::tools::registry::Registry,
) -> Vec<&'a crate::tools::ToolRef> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for entry in tools.keys() {
        let matched: Vec<&crate::tools::ToolRef> = if entry.ends_with(".*") {
            registry
                .iter()
                .filter(|t| pattern_matches(entry, &t.spec().name))
                .collect()
        } else {
            registry.get(entry).into_iter().collect()
        };
        for tool in matched {
            if seen.insert(tool.spec().name.clone()) {
                out.push(tool);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_agents_setting_comes_from_the_name_else_a_server_entry() {
        use crate::tool_spec::Permission;
        let tools = std::collections::BTreeMap::from([
            ("srv.*".to_string(), Permission::Confirm),
            ("srv.echo".to_string(), Permission::Auto),
        ]);
        assert_eq!(
            super::agent_setting(&tools, "srv.echo"),
            Some(Permission::Auto)
        );
        assert_eq!(
            super::agent_setting(&tools, "srv.add"),
            Some(Permission::Confirm)
        );
        assert_eq!(super::agent_setting(&tools, "other.add"), None);
        assert_eq!(super::agent_setting(&tools, "web_fetch"), None);
    }

    #[test]
    fn patterns() {
        use super::pattern_matches as m;
        assert!(m("srv.*", "srv.echo"));
        assert!(m("srv.echo", "srv.echo"));
        assert!(!m("srv.*", "srv2.echo"));
        assert!(!m("srv.*", "srv."));
        assert!(!m("srv.echo", "srv.echo2"));
    }
}
