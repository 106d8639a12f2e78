//! Calling one tool directly, outside an agent run: the CLI's `tools call` and the tool
//! editor's test panel. Both go through the same gate as a run's calls ([`crate::gate`]),
//! with no agent.

use indexmap::IndexMap;

use tokio_util::sync::CancellationToken;

use crate::calls::CallStatus;
use crate::context::AppContext;
use crate::events::EventSink;
pub use crate::gate::Asker;
use crate::gate::{self, CallOutcome, Caller, Subject};
use crate::ids::new_id;
use crate::parser::ToolCall;
use crate::permissions::{Answer, PermissionRequest};

use crate::tools::{Tool, ToolContext, ToolResult};

/// What happened to a direct call.
#[derive(Debug, Clone)]
pub struct DirectCall {
    /// The call's id (the one its events carry).
    pub call_id: String,
    /// How it ended.
    pub status: CallStatus,
    /// The tool's result (a denial or an unknown tool is a failed result).
    pub result: ToolResult,
    /// The result exactly as the model would see it.
    pub formatted: String,
    /// Why it ended so, in words for a person (a denial names the rule, which the model's
    /// text does not).
    pub reason: Option<String>,
}

impl From<CallOutcome> for DirectCall {
    fn from(o: CallOutcome) -> Self {
        DirectCall {
            call_id: o.call_id,
            status: o.status,
            result: o.result,
            formatted: o.text,
            reason: o.reason,
        }
    }
}

/// Run tool `name` with string `params` in `conversation`. `ask` is called only when the
/// permission decision is to ask; anything but an approval means the tool does not run.
/// Events (tool start/complete, permission request/resolution, artifact snapshot) go to
/// `events`.
pub async fn call(
    ctx: &AppContext,
    name: &str,
    params: &IndexMap<String, String>,
    conversation: &str,
    ask: impl FnOnce(&PermissionRequest) -> Answer + Send,
    events: &dyn EventSink,
) -> DirectCall {
    let cancel = CancellationToken::new();
    call_cancellable(ctx, name, params, conversation, ask, &cancel, events).await
}

/// [`call`], stopped by `cancel` (the CLI's Ctrl-C): a stop before the tool runs (during the
/// permission prompt) means it does not run, a stop while it runs ends it.
pub async fn call_cancellable(
    ctx: &AppContext,
    name: &str,
    params: &IndexMap<String, String>,
    conversation: &str,
    ask: impl FnOnce(&PermissionRequest) -> Answer + Send,
    cancel: &CancellationToken,
    events: &dyn EventSink,
) -> DirectCall {
    let caller = Caller::direct(ctx, events, conversation, cancel, true, None);
    let call = ToolCall::new(name, params.clone());
    let asker = Asker::Now(Box::new(ask));
    gate::run(&caller, asker, call.id.clone(), Subject::Parsed(&call))
        .await
        .into()
}

/// Run `tool` (registered or not, e.g. the tool editor's unsaved draft) with string `params`
/// through the gate: coerce, defaults, validate, permission, execute, oversized results stored
/// as artifacts of `conversation`. Without `remember_always`, an "always allow" answer
/// approves this one call only.
#[allow(clippy::too_many_arguments)]
pub async fn call_tool(
    ctx: &AppContext,
    tool: &dyn Tool,
    params: &IndexMap<String, String>,
    conversation: &str,
    ask: Asker<'_>,
    remember_always: bool,
    tool_ctx: &ToolContext,
    events: &dyn EventSink,
) -> DirectCall {
    let cancel = match &ask {
        Asker::Broker { cancel, .. } => cancel.clone(),
        Asker::Now(_) => CancellationToken::new(),
    };
    let caller = Caller::direct(
        ctx,
        events,
        conversation,
        &cancel,
        remember_always,
        Some(tool_ctx),
    );
    gate::run(&caller, ask, new_id("call"), Subject::Tool(tool, params))
        .await
        .into()
}
