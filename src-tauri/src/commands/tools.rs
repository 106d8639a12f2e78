//! Tools page: every tool, where it comes from, who uses it, what the model sees.

use engine::config::Permission;
use engine::tools::{ParamSpec, ToolSource};
use serde::Serialize;
use tauri::State;

use crate::error::AppError;
use crate::state::AppState;

/// An agent that may call a tool, with its permission for it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ToolUse {
    /// Agent name.
    pub agent: String,
    /// The agent's permission for the tool (overrides the tool's default).
    pub permission: Permission,
}

/// One tool as the Tools page shows it.
#[derive(Debug, Clone, Serialize, specta::Type)]
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

/// Every tool: built-in, artifact and custom, in registration order.
#[tauri::command]
#[specta::specta]
pub fn list_tools(state: State<'_, AppState>) -> Result<Vec<ToolInfo>, AppError> {
    let ctx = &state.engine()?.ctx;
    // Artifact tools are per conversation; any conversation gives the same definitions.
    let registry = ctx.conversation_registry("");
    let config = ctx.config();
    Ok(registry
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
                        engine::mcp::agent_setting(&a.tools, &spec.name).map(|permission| ToolUse {
                            agent: a.name.clone(),
                            permission,
                        })
                    })
                    .collect(),
                instructions: engine::parser::tool_instructions(std::slice::from_ref(spec)),
            }
        })
        .collect())
}
