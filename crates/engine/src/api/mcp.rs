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

pub use crate::gate::LatestViewResult;

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

/// Why a view's tool call could not be made at all (a refused or failed call is an answer:
/// see [`call_from_view`]).
#[derive(Debug, thiserror::Error)]
pub enum ViewCallError {
    /// The call has no view kept (or its conversation is gone).
    #[error("the call `{0}` has no view")]
    NoView(String),
    /// The database could not be read.
    #[error("cannot read the call's view: {0}")]
    Store(String),
}

/// What a view's tool call came to.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ViewCallAnswer {
    /// What the view gets back: the server's `CallToolResult`, or one with `isError` saying
    /// why the call did not run or failed.
    pub result: serde_json::Value,
    /// The view is muted now (the person refused its calls three times in a row): its further
    /// calls are refused without asking until the person lets it ask again.
    pub muted: bool,
}

/// The view (MCP Apps) kept with the call `view_call` calls `tool` (its real name on the
/// view's own server) with `arguments`, through the gate: permission rules (a deny rule
/// denies), the dialog (naming the view of its server as the asker) for every call a rule does
/// not deny, even of an `auto` tool, one question of the view at a time, limits, the result
/// stored as any call's, and a record in the conversation's calls (`view_of` set). After three
/// refusals in a row the view is muted: its calls are refused without asking (see
/// [`unmute_view`]). A result the server gave of a tool declaring the same view is the one the
/// view draws now ([`latest_view_result`]). A view calls its own server's tools only, those only views may call
/// included. Returns what the view gets back (a denial, no such tool, a stopped server are
/// results with `isError`) and whether the view is muted.
pub async fn call_from_view(
    engine: &Engine,
    view_call: &str,
    tool: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
    ask: Asker<'_>,
    events: &dyn EventSink,
) -> Result<ViewCallAnswer, ViewCallError> {
    let standing = engine.view_standings().of(view_call);
    let result =
        view_call_result(engine, view_call, tool, arguments, ask, events, &standing).await?;
    Ok(ViewCallAnswer {
        result,
        muted: standing.is_muted(),
    })
}

/// Is the view of the call `view_call` muted (its calls refused without asking)?
pub fn view_muted(engine: &Engine, view_call: &str) -> bool {
    engine.view_standings().is_muted(view_call)
}

/// The latest result the view of the call `view_call` drew from its own calls while the engine
/// runs (a call that succeeded, of a tool declaring the same view), for the view drawn again:
/// none when it made no such call.
pub fn latest_view_result(engine: &Engine, view_call: &str) -> Option<LatestViewResult> {
    engine.view_standings().latest(view_call)
}

/// Let the view of the call `view_call` ask again after it was muted (the person's choice in
/// its card): its next call is asked for, and three more refusals mute it again. Returns
/// whether it was muted.
pub fn unmute_view(engine: &Engine, view_call: &str) -> bool {
    engine.view_standings().unmute(view_call)
}

/// [`call_from_view`]'s call, its view's standing `standing`.
async fn view_call_result(
    engine: &Engine,
    view_call: &str,
    tool: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
    ask: Asker<'_>,
    events: &dyn EventSink,
    standing: &crate::gate::ViewStanding,
) -> Result<serde_json::Value, ViewCallError> {
    use crate::calls::store;
    use crate::gate::{self, Caller, MadeBy, Subject, ViewCaller};
    let found = engine
        .ctx
        .with_db(|c| store::view_of_call(c, view_call))
        .map_err(|e| ViewCallError::Store(e.to_string()))?;
    let Some((conversation, view, _)) = found else {
        return Err(ViewCallError::NoView(view_call.to_string()));
    };
    let error = |text: String| serde_json::json!({"content": [{"type": "text", "text": text}], "isError": true});
    // A server of the same name launched otherwise is another program: this view does not
    // drive it (checked on the configuration and on the tool found, which a reload may not
    // have replaced yet).
    if view.launch_digest.is_empty() {
        return Ok(error(
            "this view was kept by an earlier version of the app: ask for the tool again"
                .to_string(),
        ));
    }
    if engine.mcp().launch_digest(&view.server).as_deref() != Some(view.launch_digest.as_str()) {
        return Ok(error(format!(
            "the MCP server `{}` this view came from is no longer configured as it was",
            view.server
        )));
    }
    let mcp_tool = engine.mcp().view_tool(&view.server, tool).filter(|t| {
        crate::tools::Tool::server_launch_digest(t.as_ref()).as_deref()
            == Some(view.launch_digest.as_str())
    });
    let Some(mcp_tool) = mcp_tool else {
        return Ok(error(format!(
            "the MCP server `{}` has no tool `{tool}` its views may call (or it is not running)",
            view.server
        )));
    };
    // A JSON null is an argument left out.
    let params: IndexMap<String, String> = arguments
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            (k, text)
        })
        .collect();
    let cancel = match &ask {
        Asker::Broker { cancel, .. } => cancel.clone(),
        Asker::Now(_) => tokio_util::sync::CancellationToken::new(),
    };
    // "Always allow" for a view's call approves that call only: the conversation's grants
    // are for its agents, and are not used for views either (see the gate's permit).
    let caller = Caller {
        view: Some(ViewCaller {
            server: &view.server,
            standing,
        }),
        ..Caller::direct(&engine.ctx, events, &conversation, &cancel, false, None)
    };
    let call_id = crate::ids::new_id("call");
    let outcome = gate::run(
        &caller,
        ask,
        call_id,
        Subject::Tool(mcp_tool.as_ref(), &params),
    )
    .await;
    let made_by = MadeBy::View {
        server: &view.server,
    };
    outcome.keep(&engine.ctx, &conversation, made_by);
    // The server's own answer when it gave one (an `isError` result included); otherwise why
    // the call did not reach it.
    let Some(raw) = outcome.result.raw.clone() else {
        return Ok(error(outcome.result_text().to_string()));
    };
    let failed =
        !outcome.result.success || raw.get("isError") == Some(&serde_json::Value::Bool(true));
    // What the view shows now, when the tool's results are this view's to draw.
    if !failed && mcp_tool.view_uri() == Some(view.resource_uri.as_str()) {
        standing.drew(tool, raw.clone());
    }
    Ok(raw)
}
