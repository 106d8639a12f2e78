//! Calling one tool directly, outside an agent run: the CLI's `tools call` and the tool
//! editor's test panel. Same pipeline and permission decision as a run, with no agent.

use indexmap::IndexMap;

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{pipeline, Tool, ToolContext, ToolResult};
use crate::context::AppContext;
use crate::events::{new_id, EngineEvent, EventSink};
use crate::interrupts::{PermissionBroker, Resolution};
use crate::permissions::{self, Answer, Decision, PermissionInput, PermissionRequest};

/// What happened to a direct call.
#[derive(Debug, Clone)]
pub struct DirectCall {
    /// The tool's result (a denial or an unknown tool is a failed result).
    pub result: ToolResult,
    /// The result exactly as the model would see it.
    pub formatted: String,
}

/// How a direct call asks for permission.
pub enum Asker<'a> {
    /// Ask synchronously (the CLI's terminal prompt).
    Now(Box<dyn FnOnce(&PermissionRequest) -> Answer + Send + 'a>),
    /// Announce the request as an event and wait for its answer through the broker (the app's
    /// permission dialog), at most `timeout`.
    Broker {
        /// The broker the answer comes through.
        broker: &'a PermissionBroker,
        /// How long to wait before denying.
        timeout: Duration,
        /// Stops the wait (deny).
        cancel: CancellationToken,
    },
}

/// Run tool `name` with string `params` in `conversation`. `ask` is called only when the
/// permission decision is to ask; anything but an approval means the tool does not run.
/// Events (tool start/complete, permission request/resolution) go to `events`.
pub async fn call(
    ctx: &AppContext,
    name: &str,
    params: &IndexMap<String, String>,
    conversation: &str,
    ask: impl FnOnce(&PermissionRequest) -> Answer + Send,
    events: &dyn EventSink,
) -> DirectCall {
    let registry = ctx.conversation_registry(conversation);
    match registry.get(name) {
        None => {
            let mut names: Vec<_> = registry.iter().map(|t| t.spec().name.clone()).collect();
            names.sort();
            let result = ToolResult::fail(format!(
                "there is no tool `{name}`; available: {}",
                names.join(", ")
            ));
            finish(
                name,
                conversation,
                new_id("call"),
                Instant::now(),
                result,
                events,
            )
        }
        Some(tool) => {
            let tool_ctx = ctx.tool_context(Some(conversation));
            call_tool(
                ctx,
                tool.as_ref(),
                params,
                conversation,
                Asker::Now(Box::new(ask)),
                true,
                &tool_ctx,
                events,
            )
            .await
        }
    }
}

/// Run `tool` (registered or not, e.g. the tool editor's unsaved draft) with string `params`
/// through the pipeline: coerce, defaults, validate, permission, execute, oversized results
/// stored as artifacts of `conversation`. Without `remember_always`, an "always allow" answer
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
    let started = Instant::now();
    let call_id = new_id("call");
    let name = tool.spec().name.as_str();
    let result = match pipeline::prepare(&tool.spec().params, params) {
        Err(message) => ToolResult::fail(message),
        Ok(typed) => {
            let always = ctx
                .with_db(|c| crate::conversations::always_allowed(c, conversation))
                .map(|set| set.contains(name))
                .unwrap_or(false);
            let decision = permissions::decide(PermissionInput {
                tool: name,
                tool_default: tool.permission(),
                agent: None,
                always_allowed: always,
            });
            let allowed = match decision {
                Decision::Allow => Ok(()),
                Decision::Deny(why) => Err(why),
                Decision::Ask => {
                    let request = PermissionRequest {
                        tool: name.to_string(),
                        permission: crate::config::Permission::Confirm,
                        params: typed.clone(),
                        request: tool.request_preview(&typed, tool_ctx).await,
                    };
                    let request_id = new_id("perm");
                    let conversation_title = ctx
                        .with_db(|c| crate::conversations::title(c, conversation))
                        .ok()
                        .flatten()
                        .unwrap_or_default();
                    let announce = || {
                        events.emit(EngineEvent::PermissionRequest {
                            conversation_id: conversation.to_string(),
                            conversation_title: conversation_title.clone(),
                            // A direct call: no agent asks.
                            agent_chain: Vec::new(),
                            request_id: request_id.clone(),
                            request: request.clone(),
                        })
                    };
                    let (answer, resolution) = match ask {
                        Asker::Now(ask) => {
                            announce();
                            (ask(&request), Resolution::Answered)
                        }
                        Asker::Broker {
                            broker,
                            timeout,
                            cancel,
                        } => {
                            let pending = broker.register(conversation, &request_id);
                            announce();
                            broker.wait(pending, timeout, &cancel).await
                        }
                    };
                    events.emit(EngineEvent::PermissionResolved {
                        conversation_id: conversation.to_string(),
                        request_id,
                        answer,
                        resolution,
                    });
                    match (answer, resolution) {
                        (Answer::Approve, _) => Ok(()),
                        (Answer::ApproveAlways, _) if !remember_always => Ok(()),
                        (Answer::ApproveAlways, _) => {
                            // The user named this conversation for this call, so it is created
                            // if new (a run never does this: see `set_always_allowed`).
                            if let Err(e) = ctx.with_db(|c| {
                                crate::conversations::ensure(c, conversation, "")?;
                                crate::conversations::set_always_allowed(
                                    c,
                                    conversation,
                                    name,
                                    true,
                                )
                            }) {
                                tracing::warn!("cannot remember always-allow: {e}");
                            }
                            Ok(())
                        }
                        (Answer::Deny, Resolution::TimedOut) => {
                            Err(permissions::denied_message(name, "not answered in time"))
                        }
                        (Answer::Deny, _) => Err(permissions::denied_message(name, "denied")),
                    }
                }
            };
            match allowed {
                Ok(()) => {
                    events.emit(EngineEvent::ToolStart {
                        conversation_id: conversation.to_string(),
                        call_id: call_id.clone(),
                        tool: name.to_string(),
                        params: typed.clone(),
                    });
                    let result = pipeline::execute_guarded(tool, typed, tool_ctx).await;
                    crate::artifacts::persist_oversized(
                        &ctx.artifact_store(),
                        name,
                        tool.max_result_size_chars(),
                        result,
                        conversation,
                    )
                }
                Err(message) => ToolResult::fail(message),
            }
        }
    };
    finish(name, conversation, call_id, started, result, events)
}

fn finish(
    name: &str,
    conversation: &str,
    call_id: String,
    started: Instant,
    result: ToolResult,
    events: &dyn EventSink,
) -> DirectCall {
    events.emit(EngineEvent::ToolComplete {
        conversation_id: conversation.to_string(),
        call_id,
        tool: name.to_string(),
        success: result.success,
        result: if result.success {
            result.data.clone()
        } else {
            result.error.clone().unwrap_or_default()
        },
        metadata: result.metadata.clone(),
        duration_ms: started.elapsed().as_millis() as u64,
    });
    let formatted = crate::parser::format_result(
        name,
        result.success,
        if result.success {
            &result.data
        } else {
            result.error.as_deref().unwrap_or("")
        },
    );
    DirectCall { result, formatted }
}
