//! The tool registry: built-in, artifact (reserved names) and custom tools merged by name.
//!
//! A custom tool whose name clashes with a built-in tool, a reserved artifact tool name or an
//! earlier custom tool is not registered; the clash becomes a located [`ConfigError`] and every
//! other tool still loads. An MCP tool with the name of a built-in or HTTP tool is a clash
//! too ([`clash_with_mcp`]): neither is offered.

use std::sync::Arc;

use indexmap::IndexMap;

use super::http::{HttpTool, HttpToolDef};
use super::{ToolRef, ToolSource};
use crate::config_error::ConfigError;

/// Names reserved for the per-conversation artifact tools (`search_library` searches the
/// user's sources, which are artifacts of the library).
pub const RESERVED_ARTIFACT_TOOLS: [&str; 6] = [
    "create_artifact",
    "update_artifact",
    "rewrite_artifact",
    "read_artifact",
    "grep_artifact",
    "search_library",
];

/// Tools by name, in registration order (built-ins first).
#[derive(Clone, Default)]
pub struct Registry {
    tools: IndexMap<String, ToolRef>,
    /// Clashes found while building.
    pub errors: Vec<ConfigError>,
}

impl Registry {
    /// Merge built-in tools and HTTP tool definitions.
    pub fn build(builtins: Vec<ToolRef>, custom: &[HttpToolDef]) -> Registry {
        let mut registry = Registry::default();
        for tool in builtins {
            registry.tools.insert(tool.spec().name.clone(), tool);
        }
        for def in custom {
            let name = &def.spec.name;
            let clash = if RESERVED_ARTIFACT_TOOLS.contains(&name.as_str()) {
                Some(format!(
                    "`{name}` is reserved for the artifact tools; choose another name"
                ))
            } else if crate::skills::SKILL_TOOL_NAMES.contains(&name.as_str()) {
                Some(format!(
                    "`{name}` is reserved for the skill tools; choose another name"
                ))
            } else {
                registry
                    .tools
                    .get(name)
                    .map(|existing| match existing.source() {
                        ToolSource::Http { file } => format!(
                            "`{name}` is already defined by {}; tool names must be unique",
                            file.display()
                        ),
                        _ => format!("`{name}` is a built-in tool; choose another name"),
                    })
            };
            match clash {
                Some(message) => registry.errors.push(ConfigError {
                    file: def.source.clone(),
                    line: name_line(&def.source),
                    field: Some("name".into()),
                    message,
                }),
                None => {
                    registry
                        .tools
                        .insert(name.clone(), Arc::new(HttpTool::new(def.clone())));
                }
            }
        }
        registry
    }

    /// Add per-conversation tools (the artifact tools), replacing any of the same name.
    pub fn with_tools(&self, extra: impl IntoIterator<Item = ToolRef>) -> Registry {
        let mut r = self.clone();
        for tool in extra {
            r.tools.insert(tool.spec().name.clone(), tool);
        }
        r
    }

    /// Take the tool called `name` out, if there is one.
    pub fn remove(&mut self, name: &str) -> Option<ToolRef> {
        self.tools.shift_remove(name)
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&ToolRef> {
        self.tools.get(name)
    }

    /// Every tool, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &ToolRef> {
        self.tools.values()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// No tools at all?
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// The located error for an MCP tool (from `mcp_source`) named like a configured tool (from
/// `configured`): at the HTTP tool file's `name:` line, else at `mcp_json`.
pub fn clash_with_mcp(
    name: &str,
    configured: &ToolSource,
    mcp_source: &ToolSource,
    mcp_json: &std::path::Path,
) -> ConfigError {
    let server = match mcp_source {
        ToolSource::Mcp { server } => server.as_str(),
        _ => "?",
    };
    match configured {
        ToolSource::Http { file } => ConfigError {
            file: file.clone(),
            line: name_line(file),
            field: Some("name".into()),
            message: format!(
                "`{name}` is also a tool of the MCP server `{server}`; neither is offered until one is renamed"
            ),
        },
        _ => ConfigError {
            file: mcp_json.to_path_buf(),
            line: None,
            field: Some(format!("mcpServers.{server}")),
            message: format!(
                "the MCP server `{server}` has a tool `{name}`, the name of a built-in tool; neither is offered"
            ),
        },
    }
}

fn name_line(file: &std::path::Path) -> Option<u32> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .position(|l| {
            l.strip_prefix("name")
                .is_some_and(|r| r.trim_start().starts_with(':'))
        })
        .map(|i| i as u32 + 1)
}
