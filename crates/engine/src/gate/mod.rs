//! The one gate every tool call goes through, whoever makes it (the run loop, `artifactflow-cli
//! tools call`, the tool editor's test-run): cancellation checked → the tool looked up (and the
//! agent's tool list enforced) → parameters prepared → the permission decision applied (asking
//! through [`Asker`]) → cancellation checked again → the pipeline run (a stop while it runs
//! ends it) → an oversized result stored as an artifact → the result's binary attachments
//! stored as artifacts, one line each for the model ([`store_attachments`]) → events. It returns a typed
//! [`CallOutcome`]; nothing after it reads the English text meant for the model.
//!
//! The pipeline is here; storing a result's attachments is the `attachments` module, and the permission
//! decision applied to a call (asking the user, remembering an answer) is the `permit` module.
//!
//! Events, in order: `PermissionRequest`/`PermissionResolved` (when asked), `ToolStart` (when
//! it runs), `ToolComplete` (always, with the status), `ArtifactSnapshot` (when the tool changed
//! an artifact).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use indexmap::IndexMap;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::calls::{CallRecord, CallStatus, Handover, StoredAttachment, StoredView, ViewRef};
use crate::config::AgentDef;
use crate::context::AppContext;
use crate::events::{EngineEvent, EventSink};
use crate::interrupts::PermissionBroker;
use crate::parser::{format_result, ToolCall};
use crate::permissions::{Answer, PermissionRequest};
use crate::tools::{
    pipeline, CallOrigin, Params, Tool, ToolContext, ToolProgress, ToolResult, ToolSource,
};

mod attachments;
mod permit;
mod view_standing;

pub use attachments::{store_attachments, INLINE_RESOURCE_CHARS};
use permit::{permit, Asking};
pub use view_standing::{LatestViewResult, ViewStanding, ViewStandings, REFUSALS_TO_MUTE};

/// Why a call the user's stop came before did not run.
pub const STOPPED_BEFORE: &str = "the user stopped the run";

/// How a call's permission is asked for, when its decision is to ask.
pub enum Asker<'a> {
    /// Ask synchronously (the CLI's terminal prompt).
    Now(Box<dyn FnOnce(&PermissionRequest) -> Answer + Send + 'a>),
    /// Announce the request as an event and wait for its answer through the broker (a run's or
    /// the app's permission dialog), at most `timeout`.
    Broker {
        /// The broker the answer comes through.
        broker: &'a PermissionBroker,
        /// How long to wait before denying.
        timeout: Duration,
        /// Stops the wait (the call is then not run).
        cancel: CancellationToken,
    },
}

/// Who makes a call, and where.
pub struct Caller<'a> {
    /// The app.
    pub ctx: &'a AppContext,
    /// Where events go.
    pub events: &'a dyn EventSink,
    /// The conversation the call belongs to.
    pub conversation: &'a str,
    /// The calling agent (its tool list is enforced); `None` for a direct call.
    pub agent: Option<&'a AgentDef>,
    /// Who asks, from the conversation's agent down to the caller (empty for a direct call).
    pub agent_chain: &'a [String],
    /// 0 for the conversation's agent, 1+ for sub-agents.
    pub depth: u32,
    /// The user's stop.
    pub cancel: &'a CancellationToken,
    /// Remember an "always allow" answer for the conversation (creating it if new); without
    /// it, such an answer approves this one call.
    pub remember_always: bool,
    /// The tool context (the editor's records the HTTP exchange); `None` for the usual one.
    pub tool_ctx: Option<&'a ToolContext>,
    /// A view (MCP Apps) makes the call, not an agent or a person.
    pub view: Option<ViewCaller<'a>>,
}

/// The view (MCP Apps) that makes a call: every call it makes is asked for, one at a time, and
/// refused without asking once it is muted (see [`ViewStandings`]).
#[derive(Clone, Copy)]
pub struct ViewCaller<'a> {
    /// The MCP server whose view it is.
    pub server: &'a str,
    /// What the person has said to its calls so far.
    pub standing: &'a ViewStanding,
}

impl<'a> Caller<'a> {
    /// A call made directly by a person (CLI `tools call`, the editor's test-run): no agent and
    /// no tool list, depth 0.
    pub fn direct(
        ctx: &'a AppContext,
        events: &'a dyn EventSink,
        conversation: &'a str,
        cancel: &'a CancellationToken,
        remember_always: bool,
        tool_ctx: Option<&'a ToolContext>,
    ) -> Self {
        Caller {
            ctx,
            events,
            conversation,
            agent: None,
            agent_chain: &[],
            depth: 0,
            cancel,
            remember_always,
            tool_ctx,
            view: None,
        }
    }

    /// The MCP server whose view makes the call, if a view makes it.
    pub fn view_of(&self) -> Option<&'a str> {
        self.view.map(|v| v.server)
    }
}

/// What a call is: a parsed call (looked up by name) or a tool given directly (the editor's
/// unsaved draft).
pub enum Subject<'a> {
    /// A call from the parser (or a direct call by name), looked up in the conversation's tools.
    Parsed(&'a ToolCall),
    /// A tool and its string parameters.
    Tool(&'a dyn Tool, &'a IndexMap<String, String>),
}

/// How a call ended.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The call's id.
    pub call_id: String,
    /// The tool name as called.
    pub tool: String,
    /// How it ended.
    pub status: CallStatus,
    /// Why, in words for a person (none for a plain success).
    pub reason: Option<String>,
    /// The parameters, typed when preparation succeeded (strings otherwise).
    pub params: Params,
    /// The tool's result (a refusal is a failed result), after oversized storage.
    pub result: ToolResult,
    /// The result exactly as the model sees it (`<tool_result>` block).
    pub text: String,
    /// Artifacts the call created or changed (the attachments' included).
    pub artifact_ids: Vec<String>,
    /// The result's binary content, stored as artifacts.
    pub attachments: Vec<StoredAttachment>,
    /// When it started (wall clock, RFC 3339) and how long it took.
    pub started_at: String,
    /// How long it ran: from the permission (or, when none was asked, the gate's start) to
    /// the outcome; a wait for the person's answer is not counted.
    pub duration: Duration,
    /// For a successful `call_subagent`: the hand-over the run loop performs.
    pub handover: Option<Handover>,
    /// The call was written under the grammar of guided calls.
    pub guided: bool,
    /// Its server's interactive view (MCP Apps), stored with its document.
    pub view: Option<ViewRef>,
}

/// Who made a call, and where it sits: what its record holds beside the outcome.
#[derive(Clone, Copy)]
pub(crate) enum MadeBy<'a> {
    /// An agent of the run `run_id`, `depth` deep (0: the conversation's agent); its call at
    /// `position` (0-based) in the assistant message `message_id`, with the provider's id when
    /// it was made through native tool calling.
    Agent {
        run_id: &'a str,
        agent: &'a str,
        depth: u32,
        message_id: Option<i64>,
        position: usize,
        provider_call_id: Option<&'a str>,
    },
    /// The view of this MCP server (outside any run and message).
    View { server: &'a str },
}

impl CallOutcome {
    /// The text of the result for the model, unframed (the output or the error).
    pub fn result_text(&self) -> &str {
        result_text(&self.result)
    }

    /// The record of this call in `conversation`, made by `made_by`, ended now.
    pub(crate) fn record(&self, conversation: &str, made_by: MadeBy<'_>) -> CallRecord {
        let mut record = CallRecord {
            call_id: self.call_id.clone(),
            provider_call_id: None,
            conversation_id: conversation.to_string(),
            run_id: None,
            message_id: None,
            position: 0,
            agent: String::new(),
            depth: 0,
            tool: self.tool.clone(),
            params: self.params.clone(),
            status: self.status,
            reason: self.reason.clone(),
            result: self.result_text().to_string(),
            artifact_ids: self.artifact_ids.clone(),
            attachments: self.attachments.clone(),
            citations: citation_handles(&self.tool, &self.result),
            handover: self.handover.clone(),
            started_at: self.started_at.clone(),
            ended_at: Some(now_rfc3339()),
            guided: self.guided,
            view: self.view.clone(),
            view_of: None,
        };
        match made_by {
            MadeBy::Agent {
                run_id,
                agent,
                depth,
                message_id,
                position,
                provider_call_id,
            } => {
                record.run_id = Some(run_id.to_string());
                record.agent = agent.to_string();
                record.depth = depth;
                record.message_id = message_id;
                record.position = position as u32;
                record.provider_call_id = provider_call_id.map(str::to_string);
            }
            MadeBy::View { server } => record.view_of = Some(server.to_string()),
        }
        record
    }

    /// Store [`Self::record`] in the library (see [`crate::calls::store`]); a record that
    /// cannot be stored costs a warning, never the run or the view that made the call.
    pub(crate) fn keep(&self, ctx: &AppContext, conversation: &str, made_by: MadeBy<'_>) {
        let record = self.record(conversation, made_by);
        if let Err(e) = ctx.with_db(|c| crate::calls::store::record(c, &record)) {
            tracing::warn!(
                "cannot store call {} of {conversation}: {e}",
                record.call_id
            );
        }
    }
}

fn result_text(result: &ToolResult) -> &str {
    if result.success {
        &result.data
    } else {
        result.error.as_deref().unwrap_or("")
    }
}

/// The passages of the user's sources a successful call retrieved, from its result's
/// `citations` metadata. Only the library's own tools are believed: another tool's result is
/// untrusted and cannot make an answer's citation look checked.
fn citation_handles(tool: &str, result: &ToolResult) -> Vec<crate::citations::CitationHandle> {
    if !result.success || !matches!(tool, "search_library" | "read_artifact") {
        return Vec::new();
    }
    result
        .metadata
        .get(crate::artifacts::sources::CITATIONS_KEY)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// Milliseconds since the Unix epoch, `after` from now.
fn deadline_ms(after: Duration) -> u64 {
    (SystemTime::now() + after)
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The artifacts a result names: a changed artifact's snapshot, an oversized result's artifact.
fn artifact_ids(result: &ToolResult) -> Vec<String> {
    let snapshot = result
        .metadata
        .get("artifact_snapshot")
        .and_then(|s| s.get("id"))
        .and_then(Value::as_str);
    let persisted = result
        .metadata
        .get("persisted_artifact_id")
        .and_then(Value::as_str);
    snapshot
        .into_iter()
        .chain(persisted)
        .map(str::to_string)
        .collect()
}

/// The end of `call`, which is not run for `reason` (a stop came first, or only one hand-over
/// per answer): completed with status `not_run`, its result "not run: {reason}".
pub fn not_run(caller: &Caller<'_>, call: &ToolCall, reason: &str) -> CallOutcome {
    Gate::new(call.id.clone(), &call.name, call.guided).not_run(
        caller,
        string_params(&call.params),
        reason,
    )
}

fn string_params(params: &IndexMap<String, String>) -> Params {
    params
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect()
}

/// The per-call facts the steps share.
struct Gate {
    call_id: String,
    tool: String,
    /// When the call started running (reset once permission is given).
    started: Instant,
    started_at: String,
    /// The result's attachments once stored.
    attachments: Vec<StoredAttachment>,
    /// Written under the grammar of guided calls.
    guided: bool,
    /// The result's view once stored.
    view: Option<ViewRef>,
}

impl Gate {
    fn new(call_id: String, tool: &str, guided: bool) -> Self {
        Gate {
            call_id,
            tool: tool.to_string(),
            started: Instant::now(),
            started_at: now_rfc3339(),
            attachments: Vec::new(),
            guided,
            view: None,
        }
    }

    /// The call failed before it ran (unreadable, unknown tool, invalid parameters).
    fn fail(self, caller: &Caller<'_>, params: Params, message: String) -> CallOutcome {
        let result = ToolResult::fail(message.clone());
        self.finish(caller, CallStatus::Failed, Some(message), params, result)
    }

    /// The call is not run, for `reason`.
    fn not_run(self, caller: &Caller<'_>, params: Params, reason: &str) -> CallOutcome {
        let result = ToolResult::fail(format!("not run: {reason}"));
        self.finish(
            caller,
            CallStatus::NotRun,
            Some(reason.to_string()),
            params,
            result,
        )
    }

    /// Emit the completion (and the snapshot) and build the outcome.
    fn finish(
        self,
        caller: &Caller<'_>,
        status: CallStatus,
        reason: Option<String>,
        params: Params,
        result: ToolResult,
    ) -> CallOutcome {
        let duration = self.started.elapsed();
        let mut ids = artifact_ids(&result);
        ids.extend(self.attachments.iter().map(|a| a.artifact_id.clone()));
        let agent = caller.agent.map(|a| a.name.clone()).unwrap_or_default();
        caller.events.emit(EngineEvent::ToolComplete {
            conversation_id: caller.conversation.to_string(),
            call_id: self.call_id.clone(),
            agent,
            depth: caller.depth,
            tool: self.tool.clone(),
            params: params.clone(),
            success: result.success,
            status,
            reason: reason.clone(),
            result: result_text(&result).to_string(),
            metadata: result.metadata.clone(),
            artifact_ids: ids.clone(),
            attachments: self.attachments.clone(),
            duration_ms: duration.as_millis() as u64,
            guided: self.guided,
            view: self.view.clone().map(Box::new),
            view_of: caller.view_of().map(str::to_string),
        });
        if let Some(snapshot) = result.metadata.get("artifact_snapshot") {
            caller.events.emit(EngineEvent::ArtifactSnapshot {
                conversation_id: caller.conversation.to_string(),
                snapshot: snapshot.clone(),
            });
        }
        let handover = (status.succeeded() && self.tool == "call_subagent")
            .then(|| {
                Some(Handover {
                    target: params.get("agent_name")?.as_str()?.trim().to_string(),
                    instruction: params.get("instruction")?.as_str()?.trim().to_string(),
                })
            })
            .flatten();
        let text = format_result(&self.tool, result.success, result_text(&result));
        CallOutcome {
            call_id: self.call_id,
            tool: self.tool,
            status,
            reason,
            params,
            result,
            text,
            artifact_ids: ids,
            attachments: self.attachments,
            started_at: self.started_at,
            duration,
            handover,
            guided: self.guided,
            view: self.view,
        }
    }
}

/// The current time as stored in the database (RFC 3339, UTC, milliseconds).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Run one call through the gate, asking permission through `asker`. Never panics; every
/// refusal is an outcome.
pub async fn run(
    caller: &Caller<'_>,
    asker: Asker<'_>,
    call_id: String,
    subject: Subject<'_>,
) -> CallOutcome {
    let (name, raw, parsed, given) = match subject {
        Subject::Parsed(call) => (call.name.as_str(), &call.params, Some(call), None),
        Subject::Tool(tool, params) => (tool.spec().name.as_str(), params, None, Some(tool)),
    };
    let mut gate = Gate::new(call_id, name, parsed.is_some_and(|c| c.guided));
    if caller.cancel.is_cancelled() {
        return gate.not_run(caller, string_params(raw), STOPPED_BEFORE);
    }
    if let Some(error) = parsed.and_then(|c| c.error.as_deref()) {
        let message = format!(
            "your tool call could not be read ({error}); see the format below and send it again"
        );
        return gate.fail(caller, Params::new(), message);
    }
    let registry;
    let tool: &dyn Tool = match given {
        Some(tool) => tool,
        None => {
            registry = caller.ctx.conversation_registry(caller.conversation);
            match registry.get(name) {
                Some(tool) => tool.as_ref(),
                None => {
                    let message = unknown_tool(caller, &registry, name);
                    return gate.fail(caller, string_params(raw), message);
                }
            }
        }
    };
    let typed = match pipeline::prepare(&tool.spec().params, raw) {
        Ok(t) => t,
        Err(message) => return gate.fail(caller, string_params(raw), message),
    };
    let default_ctx;
    let tool_ctx = match caller.tool_ctx {
        Some(c) => c,
        None => {
            default_ctx = caller.ctx.tool_context(Some(caller.conversation));
            &default_ctx
        }
    };
    if let Some((status, reason, message)) = permit(
        caller,
        asker,
        Asking {
            call_id: &gate.call_id,
            name,
            tool,
            typed: &typed,
            tool_ctx,
        },
    )
    .await
    {
        return gate.finish(
            caller,
            status,
            Some(reason),
            typed,
            ToolResult::fail(message),
        );
    }
    if caller.cancel.is_cancelled() {
        return gate.not_run(caller, typed, STOPPED_BEFORE);
    }
    // The call's duration is how long it ran: the time the permission dialog waited for the
    // person is not the tool's.
    gate.started = Instant::now();
    caller.events.emit(EngineEvent::ToolStart {
        conversation_id: caller.conversation.to_string(),
        call_id: gate.call_id.clone(),
        tool: name.to_string(),
        params: typed.clone(),
        view_of: caller.view_of().map(str::to_string),
    });
    let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
    let tool_ctx = ToolContext {
        origin: Some(origin(caller, &gate.call_id, tool)),
        progress: Some(progress_tx),
        ..tool_ctx.clone()
    };
    let running = pipeline::execute_guarded(tool, typed.clone(), &tool_ctx);
    tokio::pin!(running);
    let announce = |p: ToolProgress| {
        caller.events.emit(EngineEvent::ToolProgress {
            conversation_id: caller.conversation.to_string(),
            call_id: gate.call_id.clone(),
            progress: p.progress,
            total: p.total,
            message: p.message,
        })
    };
    let result = loop {
        tokio::select! {
            r = &mut running => {
                // Reports sent just before the result are still queued: they come first.
                while let Ok(p) = progress_rx.try_recv() {
                    announce(p);
                }
                break r;
            }
            Some(p) = progress_rx.recv() => announce(p),
            _ = caller.cancel.cancelled() => {
                let reason = "stopped by the user while running; it may have partly happened";
                return gate.finish(
                    caller,
                    CallStatus::Stopped,
                    Some(reason.to_string()),
                    typed,
                    ToolResult::fail(reason),
                );
            }
        }
    };
    let store = caller.ctx.artifact_store();
    let mut result = crate::artifacts::persist_oversized(
        &store,
        name,
        tool.max_result_size_chars(),
        result,
        caller.conversation,
    );
    gate.attachments = store_attachments(&store, caller.conversation, &mut result);
    gate.view = store_view(caller, &gate.call_id, &mut result);
    let (status, reason) = if result.success {
        (CallStatus::Succeeded, None)
    } else {
        (CallStatus::Failed, result.error.clone())
    };
    gate.finish(caller, status, reason, typed, result)
}

/// Store `result`'s view's document (MCP Apps) and return the view as the call keeps it. A
/// document that cannot be stored costs the view, never the call (a warning says why).
fn store_view(caller: &Caller<'_>, call_id: &str, result: &mut ToolResult) -> Option<ViewRef> {
    let view = result.view.take()?;
    let stored = caller
        .ctx
        .with_db(|c| -> rusqlite::Result<Option<ViewRef>> {
            // A direct call outside any stored conversation (`mcp call` in a terminal) has
            // nowhere to show a view: nothing is kept.
            if crate::conversations::summary(c, caller.conversation)?.is_none() {
                return Ok(None);
            }
            // The document and the call's view together, or neither.
            let tx = c.unchecked_transaction()?;
            let document = crate::calls::store::put_view_document(&tx, &view.html)?;
            let stored = StoredView {
                server: view.server.clone(),
                resource_uri: view.resource_uri.clone(),
                document,
                launch_digest: view.launch_digest.clone(),
                local_server: view.local_server,
                meta: view.meta.clone(),
                tool_input: view.tool_input.clone(),
                tool_result: result.raw.clone(),
            };
            // Kept now, before the event and the call's row: the card asks for it at once.
            crate::calls::store::put_view(&tx, call_id, caller.conversation, &stored)?;
            tx.commit()?;
            Ok(Some(ViewRef {
                server: stored.server,
                resource_uri: stored.resource_uri,
            }))
        });
    match stored {
        Ok(stored) => stored,
        Err(e) => {
            tracing::warn!(server = %view.server, "cannot store a view: {e}");
            None
        }
    }
}

/// Who makes the call `call_id`, for a form its tool's server may ask for while it runs. The
/// conversation's title is read only for MCP tools (the only ones that ask).
fn origin(caller: &Caller<'_>, call_id: &str, tool: &dyn Tool) -> CallOrigin {
    let conversation_title = match tool.source() {
        ToolSource::Mcp { .. } => caller
            .ctx
            .with_db(|c| crate::conversations::title(c, caller.conversation))
            .ok()
            .flatten()
            .unwrap_or_default(),
        _ => String::new(),
    };
    CallOrigin {
        conversation_id: caller.conversation.to_string(),
        conversation_title,
        call_id: call_id.to_string(),
        agent: caller.agent.map(|a| a.name.clone()).unwrap_or_default(),
        agent_chain: caller.agent_chain.to_vec(),
        depth: caller.depth,
        view_of: caller.view_of().map(str::to_string),
    }
}

/// The refusal of a tool that is not in the conversation's registry.
fn unknown_tool(
    caller: &Caller<'_>,
    registry: &crate::tools::registry::Registry,
    name: &str,
) -> String {
    match caller.agent {
        None => {
            let mut names: Vec<_> = registry.iter().map(|t| t.spec().name.clone()).collect();
            names.sort();
            format!("there is no tool `{name}`; available: {}", names.join(", "))
        }
        Some(agent) if crate::mcp::agent_setting(&agent.tools, name).is_some() => {
            format!("tool `{name}` is not available right now (its definition failed to load)")
        }
        Some(_) => {
            format!("there is no tool `{name}`; use only the tools listed in your instructions")
        }
    }
}
