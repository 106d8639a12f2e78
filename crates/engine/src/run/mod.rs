//! The run loop: one user task, answered by an agent that calls tools and hands work to
//! sub-agents.
//!
//! # One round
//! stream the model's answer (batched [`Token`](EngineEvent::Token) events, plus
//! [`ToolCallStarted`](EngineEvent::ToolCallStarted) from the incremental parser) → parse the
//! calls → run them one by one, `call_subagent` last: cancellation checked before each, the
//! agent's tool list enforced, the permission decision applied (a `confirm` tool waits on the
//! [`PermissionBroker`]; no answer, a cancel or a closed window mean deny), the pipeline run,
//! an oversized result stored as an artifact → the results go back as `<tool_result>` blocks.
//! The loop ends when the model answers without a tool call, or when the agent's round limit
//! is reached (the model is then told to answer without tools).
//!
//! A sub-agent runs to its own final answer, which becomes the `call_subagent` result; nesting
//! is bounded and an agent cannot call itself. Everything is persisted as it happens.
//!
//! The agent, its tools and the model profile are looked up again at every round, so a config
//! change (hot reload) is live from the next round of a running conversation.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::config::AgentDef;
use crate::context::AppContext;
use crate::conversations::{self, NewMessage, RunStatus};
use crate::events::{new_id, EngineEvent, EventSink};
use crate::interrupts::{PermissionBroker, Resolution};
use crate::models::{ChatMessage, ChatModel, ChatRequest, FinishReason, Role};
use crate::parser::{format_result, StreamEvent, StreamParser, ToolCall};
use crate::permissions::{
    self, AgentSetting, Answer, Decision, PermissionInput, PermissionRequest,
};
use crate::tools::{pipeline, ToolResult, ToolSpec};

mod manager;
mod tokens;

pub use manager::{AlreadyRunning, RunManager};

use tokens::TokenBatcher;

/// Where the run loop gets a model for an agent.
pub trait ModelSource: Send + Sync {
    /// The model the agent's `model` profile names (or the default profile).
    fn model_for(&self, agent: &AgentDef) -> Result<Arc<dyn ChatModel>, String>;
}

/// The models named by the config folder's profiles, with their API keys from the secrets.
/// Clients are reused while their profile is unchanged.
pub struct ContextModels {
    ctx: Arc<AppContext>,
    cache: std::sync::Mutex<std::collections::HashMap<String, CachedClient>>,
}

type CachedClient = (crate::models::ModelProfile, Arc<dyn ChatModel>);

impl ContextModels {
    /// Models for `ctx`.
    pub fn new(ctx: Arc<AppContext>) -> Self {
        ContextModels {
            ctx,
            cache: Default::default(),
        }
    }
}

impl ModelSource for ContextModels {
    fn model_for(&self, agent: &AgentDef) -> Result<Arc<dyn ChatModel>, String> {
        let config = self.ctx.config();
        let wanted = agent.model.as_deref().unwrap_or("default");
        let profile = config
            .models
            .iter()
            .find(|p| p.name == wanted)
            .or_else(|| agent.model.is_none().then(|| config.models.first()).flatten())
            .ok_or_else(|| {
                let names: Vec<_> = config.models.iter().map(|p| p.name.as_str()).collect();
                format!(
                    "agent `{}` uses the model profile `{wanted}`, which is not in models.yaml (profiles: {})",
                    agent.name,
                    if names.is_empty() { "none — add one in Settings".to_string() } else { names.join(", ") }
                )
            })?
            .clone();
        drop(config);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((cached, client)) = cache.get(&profile.name) {
            if *cached == profile {
                return Ok(Arc::clone(client));
            }
        }
        let client = crate::models::client_for(&profile, self.ctx.secret_resolver());
        cache.insert(profile.name.clone(), (profile, Arc::clone(&client)));
        Ok(client)
    }
}

/// Limits of a run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// How deep sub-agents may nest (the conversation's agent is depth 0).
    pub max_depth: u32,
    /// How long a permission request waits for an answer; `None` reads
    /// `permission_timeout_secs` from the current settings at each request.
    pub permission_timeout: Option<Duration>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_depth: 3,
            permission_timeout: None,
        }
    }
}

/// One task for an agent in a conversation.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// Conversation (created if new).
    pub conversation_id: String,
    /// The agent to run.
    pub agent: String,
    /// The user's message.
    pub task: String,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Run id.
    pub run_id: String,
    /// Completed, cancelled or failed.
    pub status: RunStatus,
    /// The final answer, when completed.
    pub final_answer: Option<String>,
    /// The reason, when failed.
    pub error: Option<String>,
}

/// Runs agents. Cheap to share; one runner serves every conversation of the app.
pub struct Runner {
    ctx: Arc<AppContext>,
    models: Arc<dyn ModelSource>,
    broker: Arc<PermissionBroker>,
    events: Arc<dyn EventSink>,
    options: RunOptions,
}

enum Stop {
    Cancelled,
    Failed(String),
}

/// The result of a call the user's stop came before.
const NOT_RUN_STOPPED: &str = "not run: the user stopped the run";

/// The tool-call format shown to a model whose call could not be read.
const FORMAT_REMINDER: &str = "Write each tool call exactly like this, with every value in CDATA:\n<tool_call>\n  <name>TOOL_NAME</name>\n  <params>\n    <PARAM_NAME><![CDATA[value]]></PARAM_NAME>\n  </params>\n</tool_call>";

#[derive(Clone, Copy)]
struct Scope<'a> {
    run_id: &'a str,
    conversation: &'a str,
    cancel: &'a CancellationToken,
    /// The agents from the conversation's agent down to the one running (for permission
    /// requests: who asks).
    agents: &'a [String],
}

impl Runner {
    /// A runner over `ctx`, getting models from `models`, asking permissions through `broker`
    /// and reporting to `events`.
    pub fn new(
        ctx: Arc<AppContext>,
        models: Arc<dyn ModelSource>,
        broker: Arc<PermissionBroker>,
        events: Arc<dyn EventSink>,
        options: RunOptions,
    ) -> Self {
        Runner {
            ctx,
            models,
            broker,
            events,
            options,
        }
    }

    fn permission_timeout(&self) -> Duration {
        self.options.permission_timeout.unwrap_or_else(|| {
            Duration::from_secs(self.ctx.config().settings.permission_timeout_secs.max(1))
        })
    }

    /// The permission broker requests are answered through.
    pub fn broker(&self) -> &Arc<PermissionBroker> {
        &self.broker
    }

    /// Run `request` to its end. Never panics; every failure is in the outcome and in events.
    pub async fn run(&self, request: RunRequest, cancel: CancellationToken) -> RunOutcome {
        let run_id = new_id("run");
        let conversation = request.conversation_id.as_str();
        let history = self.ctx.with_db(
            |c| -> Result<Vec<ChatMessage>, conversations::ConflictError> {
                conversations::start_run(
                    c,
                    &run_id,
                    conversation,
                    &request.agent,
                    self.ctx.owner(),
                )?;
                conversations::title_if_untitled(c, conversation, &request.task)?;
                let previous = conversations::messages(c, conversation)?;
                conversations::add_message(
                    c,
                    &NewMessage {
                        conversation_id: conversation,
                        run_id: &run_id,
                        role: "user",
                        agent: &request.agent,
                        content: &request.task,
                        depth: 0,
                        usage: None,
                    },
                )?;
                Ok(previous
                    .into_iter()
                    .filter(|m| m.depth == 0)
                    .map(|m| {
                        let role = if m.role == "assistant" {
                            Role::Assistant
                        } else {
                            Role::User
                        };
                        ChatMessage::new(role, m.content)
                    })
                    .collect())
            },
        );
        let mut history = match history {
            Ok(h) => h,
            Err(conversations::ConflictError::Busy(message)) => {
                return self.end(&run_id, conversation, Err(Stop::Failed(message)))
            }
            Err(e) => {
                return self.end(
                    &run_id,
                    conversation,
                    Err(Stop::Failed(format!("cannot write to the database: {e}"))),
                )
            }
        };
        history.push(ChatMessage::new(Role::User, request.task.clone()));
        self.events.emit(EngineEvent::RunStarted {
            conversation_id: conversation.to_string(),
            run_id: run_id.clone(),
            agent: request.agent.clone(),
        });
        let agents = [request.agent.clone()];
        let scope = Scope {
            run_id: &run_id,
            conversation,
            cancel: &cancel,
            agents: &agents,
        };
        let result = self.run_agent(&scope, &request.agent, history, 0).await;
        self.end(&run_id, conversation, result)
    }

    fn end(&self, run_id: &str, conversation: &str, result: Result<String, Stop>) -> RunOutcome {
        let (status, final_answer, error) = match result {
            Ok(answer) => (RunStatus::Completed, Some(answer), None),
            Err(Stop::Cancelled) => (RunStatus::Cancelled, None, None),
            Err(Stop::Failed(e)) => (RunStatus::Failed, None, Some(e)),
        };
        if let Err(e) = self
            .ctx
            .with_db(|c| conversations::finish_run(c, run_id, status, error.as_deref()))
        {
            tracing::warn!("cannot record the end of run {run_id}: {e}");
        }
        self.events.emit(EngineEvent::RunEnded {
            conversation_id: conversation.to_string(),
            run_id: run_id.to_string(),
            status,
            final_answer: final_answer.clone(),
            error: error.clone(),
        });
        RunOutcome {
            run_id: run_id.to_string(),
            status,
            final_answer,
            error,
        }
    }

    fn agent(&self, name: &str) -> Option<AgentDef> {
        self.ctx
            .config()
            .agents
            .iter()
            .find(|a| a.name == name)
            .cloned()
    }

    /// The system prompt: role prompt + the instructions for exactly the agent's tools.
    fn system_prompt(&self, agent: &AgentDef, conversation: &str) -> String {
        let registry = self.ctx.conversation_registry(conversation);
        let callable: Vec<(String, String)> = self
            .ctx
            .config()
            .agents
            .iter()
            .filter(|a| !a.internal && a.name != agent.name)
            .map(|a| (a.name.clone(), a.description.clone()))
            .collect();
        let specs: Vec<ToolSpec> = agent
            .tools
            .keys()
            .filter_map(|name| registry.get(name))
            .map(|tool| {
                let mut spec = tool.spec().clone();
                if spec.name == "call_subagent" {
                    spec.description.push_str("\nAgents you can call:");
                    for (name, description) in &callable {
                        spec.description
                            .push_str(&format!("\n- {name}: {description}"));
                    }
                }
                spec
            })
            .collect();
        if specs.is_empty() {
            agent.role_prompt.clone()
        } else {
            format!(
                "{}\n\n{}",
                agent.role_prompt,
                crate::parser::tool_instructions(&specs)
            )
        }
    }

    fn persist(
        &self,
        scope: &Scope<'_>,
        role: &str,
        agent: &str,
        content: &str,
        depth: u32,
        usage: Option<(u32, u32)>,
    ) {
        let result = self.ctx.with_db(|c| {
            conversations::add_message(
                c,
                &NewMessage {
                    conversation_id: scope.conversation,
                    run_id: scope.run_id,
                    role,
                    agent,
                    content,
                    depth,
                    usage,
                },
            )
        });
        if let Err(e) = result {
            tracing::warn!("cannot store a message of run {}: {e}", scope.run_id);
        }
    }

    /// Run one agent to its final answer.
    fn run_agent<'a>(
        &'a self,
        scope: &'a Scope<'a>,
        agent_name: &'a str,
        mut history: Vec<ChatMessage>,
        depth: u32,
    ) -> futures::future::BoxFuture<'a, Result<String, Stop>> {
        Box::pin(async move {
            let mut rounds = 0u32;
            let mut final_round = false;
            loop {
                if scope.cancel.is_cancelled() {
                    return Err(Stop::Cancelled);
                }
                let Some(agent) = self.agent(agent_name) else {
                    return Err(Stop::Failed(format!(
                        "there is no agent `{agent_name}` (check config/agents)"
                    )));
                };
                let model = self.models.model_for(&agent).map_err(Stop::Failed)?;
                let mut messages = vec![ChatMessage::new(
                    Role::System,
                    self.system_prompt(&agent, scope.conversation),
                )];
                messages.extend(history.iter().cloned());
                let answer = self
                    .stream_answer(scope, &agent, depth, model.as_ref(), messages)
                    .await?;
                let (text, finish_reason, completed_during_stream) = answer;
                history.push(ChatMessage::new(Role::Assistant, text.clone()));
                let mut calls = crate::parser::parse(&text);
                if final_round {
                    return Ok(text);
                }
                let mut notes = Vec::new();
                if finish_reason == FinishReason::Length {
                    if let Some(last) = calls.last() {
                        if !completed_during_stream.contains(&(calls.len() - 1)) {
                            notes.push(format!(
                                "Your answer was cut off by the token limit in the middle of a call to `{}`; that call was not run. Send it again, shorter (for long content, create the artifact with part of it and add the rest with update_artifact).",
                                if last.is_malformed() { "a tool" } else { last.name.as_str() }
                            ));
                            calls.pop();
                        }
                    }
                }
                if calls.is_empty() && notes.is_empty() {
                    return Ok(text);
                }
                rounds += 1;
                if rounds > agent.max_tool_rounds {
                    final_round = true;
                    let message = format!(
                        "You have used all {} tool rounds allowed for this task. Do not call any more tools: give your final answer now.",
                        agent.max_tool_rounds
                    );
                    self.persist(scope, "tool", agent_name, &message, depth, None);
                    history.push(ChatMessage::new(Role::User, message));
                    continue;
                }
                // call_subagent last, keeping the order of the others.
                calls.sort_by_key(|c| c.name == "call_subagent");
                let mut blocks = Vec::new();
                let mut handed_over = false;
                for (index, call) in calls.iter().enumerate() {
                    if scope.cancel.is_cancelled() {
                        // Stopped mid-round: what ran is kept, and every call of the answer
                        // has a result, so the next run's history tells the model what happened.
                        for rest in &calls[index..] {
                            blocks.push(format_result(&rest.name, false, NOT_RUN_STOPPED));
                        }
                        self.persist(scope, "tool", agent_name, &blocks.join("\n\n"), depth, None);
                        return Err(Stop::Cancelled);
                    }
                    if handed_over && call.name == "call_subagent" {
                        blocks.push(format_result(
                            &call.name,
                            false,
                            "not run: only one hand-over per answer; call the next agent after this one's result",
                        ));
                        continue;
                    }
                    let (result, subagent) = self.run_call(scope, &agent, depth, call).await?;
                    let result = match subagent {
                        Some((target, instruction)) => {
                            handed_over = true;
                            match self
                                .hand_over(scope, &agent, depth, &target, &instruction)
                                .await
                            {
                                Err(Stop::Cancelled) => ToolResult::fail(format!(
                                    "agent `{target}` was stopped by the user before it finished"
                                )),
                                other => other?,
                            }
                        }
                        None => result,
                    };
                    blocks.push(format_result(
                        &call.name,
                        result.success,
                        if result.success {
                            &result.data
                        } else {
                            result.error.as_deref().unwrap_or("")
                        },
                    ));
                }
                if scope.cancel.is_cancelled() {
                    self.persist(scope, "tool", agent_name, &blocks.join("\n\n"), depth, None);
                    return Err(Stop::Cancelled);
                }
                if calls.iter().any(ToolCall::is_malformed) {
                    // The engine's own text, outside the result frames so it is not escaped.
                    notes.push(FORMAT_REMINDER.to_string());
                }
                blocks.extend(notes);
                let message = blocks.join("\n\n");
                self.persist(scope, "tool", agent_name, &message, depth, None);
                history.push(ChatMessage::new(Role::User, message));
            }
        })
    }

    /// Stream one model answer; returns its text, finish reason and the indices of the calls
    /// that were complete before the stream ended.
    async fn stream_answer(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        model: &dyn ChatModel,
        messages: Vec<ChatMessage>,
    ) -> Result<(String, FinishReason, Vec<usize>), Stop> {
        let mut parser = StreamParser::new();
        let mut batcher = TokenBatcher::new();
        let mut completed = Vec::new();
        let events = &self.events;
        let emit_tokens = |text: String| {
            events.emit(EngineEvent::Token {
                conversation_id: scope.conversation.to_string(),
                agent: agent.name.clone(),
                depth,
                text,
            })
        };
        let request = ChatRequest {
            messages,
            ..Default::default()
        };
        let mut streamed = String::new();
        let result = {
            let mut on_text = |chunk: &str| {
                streamed.push_str(chunk);
                if let Some(batch) = batcher.push(chunk) {
                    emit_tokens(batch);
                }
                for event in parser.feed(chunk) {
                    match event {
                        StreamEvent::CallStarted { index } => {
                            events.emit(EngineEvent::ToolCallStarted {
                                conversation_id: scope.conversation.to_string(),
                                agent: agent.name.clone(),
                                index,
                                name: None,
                            })
                        }
                        StreamEvent::NameKnown { index, name } => {
                            events.emit(EngineEvent::ToolCallStarted {
                                conversation_id: scope.conversation.to_string(),
                                agent: agent.name.clone(),
                                index,
                                name: Some(name),
                            })
                        }
                        StreamEvent::CallComplete { index, .. } => completed.push(index),
                        StreamEvent::Reset => completed.clear(),
                    }
                }
            };
            model.stream(&request, scope.cancel, &mut on_text).await
        };
        if let Some(rest) = batcher.flush() {
            emit_tokens(rest);
        }
        let response = match result {
            Ok(r) => r,
            Err(e) => {
                // What the user already saw stays in the conversation.
                if !streamed.trim().is_empty() {
                    self.persist(scope, "assistant", &agent.name, &streamed, depth, None);
                }
                return Err(match e {
                    crate::models::ModelError::Cancelled => Stop::Cancelled,
                    e => Stop::Failed(format!("agent `{}`: {e}", agent.name)),
                });
            }
        };
        let usage = response
            .usage
            .map(|u| (u.prompt_tokens, u.completion_tokens));
        self.persist(
            scope,
            "assistant",
            &agent.name,
            &response.text,
            depth,
            usage,
        );
        self.events.emit(EngineEvent::ModelAnswer {
            conversation_id: scope.conversation.to_string(),
            agent: agent.name.clone(),
            depth,
            finish_reason: match &response.finish_reason {
                FinishReason::Stop => "stop".into(),
                FinishReason::Length => "length".into(),
                FinishReason::Other(o) => o.clone(),
            },
            prompt_tokens: usage.map(|u| u.0),
            completion_tokens: usage.map(|u| u.1),
        });
        Ok((response.text, response.finish_reason, completed))
    }

    /// Run one parsed call. Returns the result and, for a successful `call_subagent`, the
    /// hand-over target and instruction.
    async fn run_call(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        call: &ToolCall,
    ) -> Result<(ToolResult, Option<(String, String)>), Stop> {
        let started = Instant::now();
        let call_id = new_id("call");
        let complete = |result: &ToolResult| {
            self.events.emit(EngineEvent::ToolComplete {
                conversation_id: scope.conversation.to_string(),
                call_id: call_id.clone(),
                tool: call.name.clone(),
                success: result.success,
                result: if result.success {
                    result.data.clone()
                } else {
                    result.error.clone().unwrap_or_default()
                },
                metadata: result.metadata.clone(),
                duration_ms: started.elapsed().as_millis() as u64,
            });
            if let Some(snapshot) = result.metadata.get("artifact_snapshot") {
                self.events.emit(EngineEvent::ArtifactSnapshot {
                    conversation_id: scope.conversation.to_string(),
                    snapshot: snapshot.clone(),
                });
            }
        };
        if call.is_malformed() {
            let result = ToolResult::fail(format!(
                "your tool call could not be read ({}); see the format below and send it again",
                call.error.as_deref().unwrap_or("malformed")
            ));
            complete(&result);
            return Ok((result, None));
        }
        let registry = self.ctx.conversation_registry(scope.conversation);
        let setting = match agent.tools.get(&call.name) {
            Some(p) => AgentSetting::Listed(*p),
            None => AgentSetting::NotListed,
        };
        let Some(tool) = registry.get(&call.name).cloned() else {
            let result = ToolResult::fail(match setting {
                AgentSetting::NotListed => format!(
                    "there is no tool `{}`; use only the tools listed in your instructions",
                    call.name
                ),
                AgentSetting::Listed(_) => format!(
                    "tool `{}` is not available right now (its definition failed to load)",
                    call.name
                ),
            });
            complete(&result);
            return Ok((result, None));
        };
        let typed = match pipeline::prepare(&tool.spec().params, &call.params) {
            Ok(t) => t,
            Err(message) => {
                let result = ToolResult::fail(message);
                complete(&result);
                return Ok((result, None));
            }
        };
        let always = self
            .ctx
            .with_db(|c| conversations::always_allowed(c, scope.conversation))
            .map(|s| s.contains(&call.name))
            .unwrap_or(false);
        let decision = permissions::decide(PermissionInput {
            tool: &call.name,
            tool_default: tool.permission(),
            agent: Some(setting),
            always_allowed: always,
        });
        let denial = match decision {
            Decision::Allow => None,
            Decision::Deny(why) => Some(why),
            Decision::Ask => {
                let request_id = new_id("perm");
                let request = PermissionRequest {
                    tool: call.name.clone(),
                    permission: crate::config::Permission::Confirm,
                    params: typed.clone(),
                    request: tool
                        .request_preview(&typed, &self.ctx.tool_context(Some(scope.conversation)))
                        .await,
                };
                let conversation_title = self
                    .ctx
                    .with_db(|c| conversations::title(c, scope.conversation))
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                // Registered before it is announced, so an immediate answer always finds it.
                let pending = self.broker.register(scope.conversation, &request_id);
                self.events.emit(EngineEvent::PermissionRequest {
                    conversation_id: scope.conversation.to_string(),
                    conversation_title,
                    agent_chain: scope.agents.to_vec(),
                    request_id: request_id.clone(),
                    request,
                });
                let (answer, resolution) = self
                    .broker
                    .wait(pending, self.permission_timeout(), scope.cancel)
                    .await;
                self.events.emit(EngineEvent::PermissionResolved {
                    conversation_id: scope.conversation.to_string(),
                    request_id,
                    answer,
                    resolution,
                });
                match (answer, resolution) {
                    (Answer::Approve, _) => None,
                    (Answer::ApproveAlways, _) => {
                        if let Err(e) = self.ctx.with_db(|c| {
                            conversations::set_always_allowed(
                                c,
                                scope.conversation,
                                &call.name,
                                true,
                            )
                        }) {
                            tracing::warn!("cannot remember always-allow: {e}");
                        }
                        None
                    }
                    (Answer::Deny, Resolution::Cancelled) => Some(
                        "not run: the run was stopped while waiting for permission".to_string(),
                    ),
                    (Answer::Deny, Resolution::TimedOut) => Some(permissions::denied_message(
                        &call.name,
                        "no answer before the permission timeout",
                    )),
                    (Answer::Deny, Resolution::ListenerGone) => Some(permissions::denied_message(
                        &call.name,
                        "the window asking for permission was closed",
                    )),
                    (Answer::Deny, Resolution::Answered) => {
                        Some(permissions::denied_message(&call.name, "denied"))
                    }
                }
            }
        };
        if let Some(message) = denial {
            let result = ToolResult::fail(message);
            complete(&result);
            return Ok((result, None));
        }
        if scope.cancel.is_cancelled() {
            let result = ToolResult::fail(NOT_RUN_STOPPED);
            complete(&result);
            return Ok((result, None));
        }
        self.events.emit(EngineEvent::ToolStart {
            conversation_id: scope.conversation.to_string(),
            call_id: call_id.clone(),
            tool: call.name.clone(),
            params: typed.clone(),
        });
        let tool_ctx = self.ctx.tool_context(Some(scope.conversation));
        let result = tokio::select! {
            r = pipeline::execute_guarded(tool.as_ref(), typed, &tool_ctx) => r,
            _ = scope.cancel.cancelled() => {
                let result = ToolResult::fail(
                    "stopped by the user while running; it may have partly happened",
                );
                complete(&result);
                return Ok((result, None));
            }
        };
        let result = crate::artifacts::persist_oversized(
            &self.ctx.artifact_store(),
            &call.name,
            tool.max_result_size_chars(),
            result,
            scope.conversation,
        );
        complete(&result);
        let subagent = (call.name == "call_subagent" && result.success)
            .then(|| {
                Some((
                    result.metadata.get("subagent")?.as_str()?.to_string(),
                    result.metadata.get("instruction")?.as_str()?.to_string(),
                ))
            })
            .flatten();
        let _ = depth;
        Ok((result, subagent))
    }

    /// Run sub-agent `target` on `instruction`; its final answer is the call_subagent result.
    async fn hand_over(
        &self,
        scope: &Scope<'_>,
        caller: &AgentDef,
        depth: u32,
        target: &str,
        instruction: &str,
    ) -> Result<ToolResult, Stop> {
        if scope.cancel.is_cancelled() {
            return Err(Stop::Cancelled);
        }
        if target == caller.name {
            return Ok(ToolResult::fail(
                "an agent cannot hand a task to itself; do the work directly or call another agent",
            ));
        }
        if depth + 1 > self.options.max_depth {
            return Ok(ToolResult::fail(format!(
                "hand-over refused: agents may nest at most {} levels deep; do this part yourself",
                self.options.max_depth
            )));
        }
        self.events.emit(EngineEvent::AgentSwitch {
            conversation_id: scope.conversation.to_string(),
            from: caller.name.clone(),
            to: target.to_string(),
            instruction: instruction.to_string(),
            depth: depth + 1,
        });
        self.persist(scope, "user", target, instruction, depth + 1, None);
        let history = vec![ChatMessage::new(Role::User, instruction.to_string())];
        let agents = [scope.agents, &[target.to_string()]].concat();
        let sub_scope = Scope {
            agents: &agents,
            ..*scope
        };
        let outcome = self.run_agent(&sub_scope, target, history, depth + 1).await;
        let success = outcome.is_ok();
        self.events.emit(EngineEvent::AgentReturn {
            conversation_id: scope.conversation.to_string(),
            from: target.to_string(),
            to: caller.name.clone(),
            success,
        });
        match outcome {
            Ok(answer) => Ok(ToolResult::ok(answer).with_meta("subagent", target.to_string())),
            Err(Stop::Cancelled) => Err(Stop::Cancelled),
            Err(Stop::Failed(e)) => Ok(ToolResult::fail(format!(
                "agent `{target}` could not finish: {e}"
            ))),
        }
    }
}
