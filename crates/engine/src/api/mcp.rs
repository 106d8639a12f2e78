//! The MCP servers as the Tools page changes them: one server's entry of `mcp.json` to edit,
//! pasted servers added or replaced, a server removed or turned off and on (each change
//! reloads the config, so servers start and stop at once), and a test call of one of a ready
//! server's tools through the same gate as a run's calls.

use std::path::PathBuf;

use indexmap::IndexMap;

use super::direct::Asker;
use super::editor::{ToolTest, TEST_CONVERSATION};
use crate::engine::Engine;
use crate::events::EventSink;
use crate::mcp::config::{self as mcp_config, EditError};
use crate::tools::ToolSource;

fn mcp_file(engine: &Engine) -> PathBuf {
    engine.ctx.paths().config_dir.join(mcp_config::FILE)
}

/// The server `name` as `mcp.json` has it, as a `{"mcpServers": {...}}` block to edit (secrets
/// stay `{{VAR}}` references).
pub fn server_config(engine: &Engine, name: &str) -> Result<String, EditError> {
    mcp_config::server_block(&mcp_file(engine), name)
}

/// Add or replace the servers of pasted JSON (one server by name, or a whole `mcpServers`
/// block), then reload so they start. `replacing`: the server being edited; when the paste no
/// longer names it, it was renamed and the old entry goes. Returns the names written.
pub fn save_servers(
    engine: &Engine,
    json: &str,
    replacing: Option<&str>,
) -> Result<Vec<String>, EditError> {
    let path = mcp_file(engine);
    let names = mcp_config::upsert_servers(&path, json)?;
    if let Some(old) = replacing.filter(|old| !names.iter().any(|n| n == old)) {
        mcp_config::remove_server(&path, old)?;
    }
    engine.reload_config();
    Ok(names)
}

/// Remove the server `name` from `mcp.json` (its process ends), then reload.
pub fn remove_server(engine: &Engine, name: &str) -> Result<(), EditError> {
    mcp_config::remove_server(&mcp_file(engine), name)?;
    engine.reload_config();
    Ok(())
}

/// Turn the server `name` off (it stops and is not started again) or on, then reload.
pub fn set_disabled(engine: &Engine, name: &str, disabled: bool) -> Result<(), EditError> {
    mcp_config::set_disabled(&mcp_file(engine), name, disabled)?;
    engine.reload_config();
    Ok(())
}

/// No ready MCP tool has that name.
#[derive(Debug, thiserror::Error)]
#[error("there is no MCP tool `{0}`: its server is not ready (see its status)")]
pub struct NoSuchMcpTool(pub String);

/// Call the MCP tool `name` (`SERVER.TOOL`) with `params` as the model would write them,
/// through the gate: typed and checked against its schema, and asked as `ask` says, like a
/// run's call (annotations never skip it). It runs in the tool editor's test conversation, so
/// denying that conversation's requests withdraws it, and its "always allow" is not kept.
pub async fn test_tool(
    engine: &Engine,
    name: &str,
    params: &IndexMap<String, String>,
    ask: Asker<'_>,
    events: &dyn EventSink,
) -> Result<ToolTest, NoSuchMcpTool> {
    let registry = engine.ctx.conversation_registry(TEST_CONVERSATION);
    let tool = registry
        .get(name)
        .filter(|t| matches!(t.source(), ToolSource::Mcp { .. }))
        .ok_or_else(|| NoSuchMcpTool(name.to_string()))?;
    Ok(super::editor::test_call(&engine.ctx, tool.as_ref(), params, ask, events, None).await)
}
