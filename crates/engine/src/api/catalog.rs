//! What the front ends list: the agents and the tools, each tool with where it comes from,
//! which agents use it (and with what permission) and the instruction block the model sees.

use serde::Serialize;

use crate::context::AppContext;
use crate::tool_spec::{ParamSpec, Permission};
use crate::tools::ToolSource;

/// An agent the user can talk to.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentInfo {
    /// Name (the id).
    pub name: String,
    /// The name people see, when the agent's file gives one.
    pub display_name: Option<String>,
    /// What it does.
    pub description: String,
    /// Model profile.
    pub model: Option<String>,
    /// Internal agents are only reachable as sub-agents.
    pub internal: bool,
}

/// An agent that may call a tool, with its permission for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolUse {
    /// Agent name.
    pub agent: String,
    /// The agent's permission for the tool (overrides the tool's default).
    pub permission: Permission,
}

/// One tool as the Tools page shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolInfo {
    /// Name.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// `builtin`, `artifact`, `http` or `mcp`.
    pub source: String,
    /// The Markdown file of an HTTP tool.
    pub file: Option<String>,
    /// The MCP server an `mcp` tool comes from.
    pub server: Option<String>,
    /// Default permission.
    pub permission: Permission,
    /// Parameters.
    pub params: Vec<ParamSpec>,
    /// Agents that list it.
    pub used_by: Vec<ToolUse>,
    /// The instruction block the model sees for it.
    pub instructions: String,
}

/// Every agent, in the order the config folder gives them.
pub fn agents(ctx: &AppContext) -> Vec<AgentInfo> {
    ctx.config()
        .agents
        .iter()
        .map(|a| AgentInfo {
            name: a.name.clone(),
            display_name: a.display_name.clone(),
            description: a.description.clone(),
            model: a.model.clone(),
            internal: a.internal,
        })
        .collect()
}

/// Every tool a conversation has (built-in, artifact, HTTP and MCP), in registration order.
pub fn tools(ctx: &AppContext) -> Vec<ToolInfo> {
    // Artifact tools are per conversation; any conversation gives the same definitions.
    let registry = ctx.conversation_registry("");
    let config = ctx.config();
    registry
        .iter()
        .map(|tool| {
            let spec = tool.spec();
            let (source, file, server) = match tool.source() {
                ToolSource::Builtin => ("builtin", None, None),
                ToolSource::Artifact => ("artifact", None, None),
                ToolSource::Http { file } => ("http", Some(file.display().to_string()), None),
                ToolSource::Mcp { server } => ("mcp", None, Some(server)),
            };
            ToolInfo {
                name: spec.name.clone(),
                description: spec.description.clone(),
                source: source.to_string(),
                file,
                server,
                permission: tool.permission(),
                params: spec.params.clone(),
                used_by: config
                    .agents
                    .iter()
                    .filter_map(|a| {
                        // By name, or through a `SERVER.*` entry for an MCP server's tool.
                        crate::mcp::agent_setting(&a.tools, &spec.name).map(|permission| ToolUse {
                            agent: a.name.clone(),
                            permission,
                        })
                    })
                    .collect(),
                instructions: crate::parser::tool_instructions(std::slice::from_ref(spec)),
            }
        })
        .collect()
}
