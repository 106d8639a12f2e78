//! The run loop: one user task, answered by an agent that calls tools and hands work to
//! sub-agents.
//!
//! # One round
//! stream the model's answer (batched [`Token`](EngineEvent::Token) events, plus
//! [`ToolCallStarted`](EngineEvent::ToolCallStarted) from the incremental parser) → parse the
//! calls (each with the id its streamed events carried) → run them one by one, `call_subagent`
//! last, through the call gate ([`crate::gate`]: cancellation checked, the agent's tool
//! list enforced, the permission decision applied (a `confirm` tool waits on the
//! [`PermissionBroker`]; no answer or a closed window mean deny), the pipeline run, an oversized
//! result stored as an artifact) → each call recorded in `tool_calls` once it has ended (calls
//! a stop left unrun too, as `not_run`) → the results go back as `<tool_result>` blocks.
//! The loop ends when the model answers without a tool call, or when the agent's round limit
//! is reached (the model is then told to answer without tools).
//!
//! A sub-agent runs to its own final answer, which becomes the `call_subagent` result; nesting
//! is bounded and an agent cannot call itself. Everything is persisted as it happens.
//!
//! The agent, its tools and the model profile are looked up again at every round, so a config
//! change (hot reload) is live from the next round of a running conversation.
//!
//! Every request is kept within the model's context window (the [`budget`] module decides,
//! `view` carries it out): older tool results become references to artifacts, older turns a
//! stored "conversation so far" note, and a server's refusal as too long is condensed and
//! retried once. Each agent (sub-agents too) has its own history and budget.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::calls::CallStatus;
use crate::config::AgentDef;
use crate::context::AppContext;
use crate::conversations::{self, NewMessage, RunStatus};
use crate::events::{EngineEvent, EventSink};
use crate::gate::{self, Asker, CallOutcome, Caller, MadeBy, Subject};
use crate::ids::new_id;
use crate::interrupts::PermissionBroker;
use crate::models::{ChatModel, ChatRequest, FinishReason, Guide, Streamed};
use crate::parser::{format_result, StreamEvent, StreamParser, ToolCall};
use crate::tools::{ToolResult, ToolSpec};

pub mod budget;
mod live;
mod manager;
pub mod skills;
mod tokens;
pub mod tool_mode;
pub(crate) mod view;

pub use manager::{AlreadyRunning, RunManager};

use budget::{Entry, EntryCall, Kind};
use tokens::{ProseTracker, TokenBatcher};
use view::ViewState;

/// Where the run loop gets a model for an agent.
pub trait ModelSource: Send + Sync {
    /// The model the agent's `model` profile names (or the default profile).
    fn model_for(&self, agent: &AgentDef) -> Result<Arc<dyn ChatModel>, String>;

    /// That model's profile, for its context window and `max_tokens` (the context budget).
    /// `None` budgets with the default window.
    fn profile_for(&self, _agent: &AgentDef) -> Option<crate::models::ModelProfile> {
        None
    }
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

impl ContextModels {
    /// The profile `agent` uses.
    fn profile(&self, agent: &AgentDef) -> Result<crate::models::ModelProfile, String> {
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
            })?;
        self.ctx.client_profile(profile)
    }
}

impl ModelSource for ContextModels {
    fn profile_for(&self, agent: &AgentDef) -> Option<crate::models::ModelProfile> {
        self.profile(agent).ok()
    }

    fn model_for(&self, agent: &AgentDef) -> Result<Arc<dyn ChatModel>, String> {
        let profile = self.profile(agent)?;
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
    /// What each model's server reported of earlier requests (see [`budget::Calibration`]),
    /// kept across runs so a new run starts with the count its server uses rather than the
    /// conservative estimate. Keyed by [`Runner::calibration_key`].
    calibrations: std::sync::Mutex<std::collections::HashMap<String, budget::Calibration>>,
    /// The guided-call grammar of each agent, with the hash of the tool set it was built from:
    /// rebuilt when the agent's tools change (a reload, an MCP server's new tool list).
    guides: std::sync::Mutex<std::collections::HashMap<String, CachedGuide>>,
    /// The runs in progress and the model files their agents run (see [`live`]).
    live: live::LiveRuns,
}

/// An agent's call grammar (`None`: no tools) and the hash of the tool set it was built from.
type CachedGuide = (u64, Option<Arc<Guide>>);

enum Stop {
    Cancelled,
    Failed(String),
    /// The server refused the request as too long for its window (its message).
    TooLong(String),
}

/// One answer of the model.
struct Answered {
    /// Its text.
    text: String,
    /// Why it stopped.
    finish: FinishReason,
    /// The positions of the XML calls the parser saw complete before the stream ended.
    completed: Vec<usize>,
    /// The calls written in its text, as the stream parser read them while it arrived (the
    /// calls that run: the answer is not parsed again).
    written: Vec<ToolCall>,
    /// The stored message.
    message_id: Option<i64>,
    /// What its calls' ids are made of.
    prefix: String,
    /// The prompt tokens the server reported.
    prompt_tokens: Option<u32>,
    /// Its native tool calls.
    native: Vec<crate::models::NativeCall>,
    /// Its last XML call was written under the call grammar (guided calls).
    guided: bool,
    /// Its calls were written in a family's own form (`FORMS.md`), not as `<tool_call>`.
    in_forms: bool,
}

/// The id of the call at `position` of the answer whose calls' ids start with `prefix`: the
/// same from the first streamed token of the call to its stored row.
fn call_id(prefix: &str, position: usize) -> String {
    format!("{prefix}_{position}")
}

/// What the model is told when its whole answer is a tool result it wrote itself.
const INVENTED_RESULT_NOTE: &str = "Your answer was a tool result you wrote yourself. Results come only from the app, after your tool calls run: to use a tool, write a tool call in the format above and wait for its result; otherwise answer the user in plain words.";

/// Whether an answer with no call is a tool result the model wrote itself: it opens with
/// `<tool_result` or `<tool_response` (any case).
fn is_invented_result(answer: &str) -> bool {
    let start = answer.trim_start().to_ascii_lowercase();
    start.starts_with("<tool_result") || start.starts_with("<tool_response")
}

/// Where a tool result the model is writing itself begins in `streamed`, looking from
/// `from` (where the chunk that ended its latest call began), as
/// [`forged_result`](crate::parser::forged_result) finds it; the stored answer is cut at the
/// same place.
fn forged_from(streamed: &str, from: usize) -> Option<usize> {
    // Cheap first: the whole answer is read only once an opening has arrived.
    let opening = b"<tool_re";
    if !streamed.as_bytes()[from..]
        .windows(opening.len())
        .any(|w| w.eq_ignore_ascii_case(opening))
    {
        return None;
    }
    let cut = crate::parser::forged_result(streamed)?;
    (cut >= from).then_some(cut)
}

/// The id of the answer's native call number `index` (from its first delta to its row).
fn native_call_id(prefix: &str, index: usize) -> String {
    format!("{prefix}_n{index}")
}

/// What the model is told when a native call's arguments cannot be read: why, and the
/// schema to follow.
fn unreadable_arguments(name: &str, spec: Option<&ToolSpec>, why: &str) -> String {
    match spec {
        Some(spec) => format!(
            "your call to `{name}` could not be read: {why}. Send it again with arguments that are one JSON object matching this schema: {}",
            spec.json_schema()
        ),
        None => format!("your call to `{name}` could not be read: {why}"),
    }
}

/// A call of an answer waiting to run.
struct Pending {
    place: Place,
    call: ToolCall,
    /// The provider's id, for a native call.
    provider_id: Option<String>,
    /// The tool a native call named (its `call` is malformed when its arguments could not
    /// be read).
    native_name: Option<String>,
}

impl Pending {
    /// The name to tell the model about.
    fn shown_name(&self) -> &str {
        match (&self.native_name, self.call.is_malformed()) {
            (Some(name), _) => name,
            (None, true) => "a tool",
            (None, false) => &self.call.name,
        }
    }

    /// The id the model knows the call by.
    fn wire_id(&self) -> String {
        self.provider_id
            .clone()
            .unwrap_or_else(|| self.call.id.clone())
    }

    /// The call as shown to the model again, with the parameters its outcome holds.
    fn shown(&self, outcome: &CallOutcome) -> EntryCall {
        EntryCall {
            wire_id: self.wire_id(),
            name: outcome.tool.clone(),
            params: outcome.params.clone(),
            in_text: self.provider_id.is_none(),
        }
    }
}

/// Why a call past an agent's tool rounds did not run.
fn rounds_used(max_tool_rounds: u32) -> String {
    format!("the agent had used up its tool rounds (max_tool_rounds: {max_tool_rounds})")
}

/// Where a call sits: the assistant message that holds it and its 0-based position there.
#[derive(Clone, Copy)]
struct Place {
    message_id: Option<i64>,
    position: usize,
}

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
            calibrations: Default::default(),
            guides: Default::default(),
            live: Default::default(),
        }
    }

    /// The grammar of the calls `agent` may make with `specs` (see
    /// [`crate::parser::grammar`]), from the cache while its tool set is the same; `None` when
    /// it has no tools, or when they are too large to guide: the agent's calls are then written
    /// unguided (the parser reads them as it reads any, the tools' schemas are checked before a
    /// call), and the log says once per tool set which tool, of which MCP server, and what to do.
    /// Guidance is an aid for small models, not a gate: leaving the tool out instead would take
    /// from the agent a tool the person gave it, and sending the grammar would fail every
    /// request (the runtime refuses a grammar over 1 MiB).
    pub(crate) fn call_guide(
        &self,
        agent: &AgentDef,
        specs: &[ToolSpec],
        mode: crate::models::ToolCallMode,
    ) -> Option<Arc<Guide>> {
        let family = self
            .models
            .profile_for(agent)
            .map_or(crate::models::ToolFamily::Hermes, |p| {
                self.tool_choice(&p).family
            });
        self.call_guide_in(agent, specs, mode, family)
    }

    /// The guide of `agent`'s calls in the forms of `family` (see [`Self::call_guide`]).
    fn call_guide_in(
        &self,
        agent: &AgentDef,
        specs: &[ToolSpec],
        mode: crate::models::ToolCallMode,
        family: crate::models::ToolFamily,
    ) -> Option<Arc<Guide>> {
        use crate::parser::grammar::{guided_calls, CallFormat};
        use std::hash::{Hash, Hasher};
        let native = mode == crate::models::ToolCallMode::Native;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        serde_json::to_string(specs)
            .unwrap_or_default()
            .hash(&mut hasher);
        native.hash(&mut hasher);
        family.hash(&mut hasher);
        let key = hasher.finish();
        let mut guides = self.guides.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((k, guide)) = guides.get(&agent.name) {
            if *k == key {
                return guide.clone();
            }
        }
        let grammar = if native {
            // Native calls name the tools as they were offered (see `wire_tool_name`).
            let offered: Vec<ToolSpec> = specs
                .iter()
                .map(|s| ToolSpec {
                    name: crate::models::wire_tool_name(&s.name).into_owned(),
                    ..s.clone()
                })
                .collect();
            guided_calls(&offered, family, CallFormat::Native)
        } else {
            guided_calls(specs, family, CallFormat::Xml)
        };
        let grammar = grammar.unwrap_or_else(|mut too_large| {
            // Named as the person configured it (not as offered natively), with its server.
            if let Some(spec) = specs
                .iter()
                .find(|s| native && crate::models::wire_tool_name(&s.name) == too_large.tool)
            {
                too_large.tool = spec.name.clone();
            }
            too_large.server =
                crate::mcp::server_of(&too_large.tool, &self.ctx.config().mcp).map(str::to_string);
            tracing::warn!(
                "agent `{}`: its tool calls are not guided: {too_large}",
                agent.name
            );
            None
        });
        // The grammar starts at every opening the model's family uses.
        let guide = grammar.map(|g| {
            Arc::new(Guide {
                grammar: g.grammar.gbnf(),
                triggers: g.triggers,
            })
        });
        guides.insert(agent.name.clone(), (key, guide.clone()));
        guide
    }

    /// How the model of `profile` (a client's profile) calls tools: `tool_calls: auto`
    /// resolved for its model file (see [`tool_mode`]).
    fn tool_choice(&self, profile: &crate::models::ModelProfile) -> tool_mode::AutoChoice {
        let tools = (profile.api == crate::models::Api::Local)
            .then(|| {
                tool_mode::template_tools(
                    std::path::Path::new(&profile.model),
                    &self.ctx.paths().models_dir(),
                )
            })
            .flatten();
        tool_mode::resolve(profile, tools, &crate::check::StoredChecks::new(&self.ctx))
    }

    /// The model `agent` talks to, as calibrations are kept: profile, server and model name.
    fn calibration_key(&self, agent: &AgentDef) -> String {
        match self.models.profile_for(agent) {
            Some(p) => format!("{}\n{}\n{}", p.name, p.base_url, p.model),
            None => agent.model.clone().unwrap_or_default(),
        }
    }

    fn calibrations(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, budget::Calibration>> {
        self.calibrations.lock().unwrap_or_else(|p| p.into_inner())
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

    /// Mark the runs whose agents run the model file `model` now (the conversation's agent or a
    /// sub-agent it waits on) as stopped for `reason`: once stopped they end as failed with it.
    /// Returns their conversations; stopping them is the caller's ([`RunManager`]).
    pub(crate) fn mark_runs_using(&self, model: &std::path::Path, reason: &str) -> Vec<String> {
        self.live.stop_using(model, reason)
    }

    /// Note the model file `agent` (at `depth` of the run) asks now, if it runs one here.
    fn note_model_file(&self, scope: &Scope<'_>, agent: &AgentDef, depth: u32) {
        let file = self
            .models
            .profile_for(agent)
            .filter(|p| p.api == crate::models::Api::Local)
            .map(|p| std::path::PathBuf::from(p.model));
        self.live.note_model(scope.run_id, depth, file);
    }

    /// Run `request` to its end. Never panics; every failure is in the outcome and in events.
    pub async fn run(&self, request: RunRequest, cancel: CancellationToken) -> RunOutcome {
        let run_id = new_id("run");
        let conversation = request.conversation_id.as_str();
        let history = self.ctx.with_db(
            |c| -> Result<(Vec<Entry>, i64), conversations::ConflictError> {
                conversations::start_run(
                    c,
                    &run_id,
                    conversation,
                    &request.agent,
                    self.ctx.owner(),
                )?;
                conversations::title_if_untitled(c, conversation, &request.task)?;
                let previous = view::load_history(c, conversation)?;
                let task = conversations::add_message(
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
                Ok((previous, task))
            },
        );
        let (mut history, task_id) = match history {
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
        history.push(Entry::new(Kind::Task, request.task.clone(), Some(task_id)));
        self.live.enter(&run_id, conversation);
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
        // Stopped by the app (its model was deleted): failed, with the reason, whatever the
        // stop looked like from inside (cancelled, or a request cut off).
        let stopped_for = self.live.leave(run_id);
        let (status, final_answer, error) = match (result, stopped_for) {
            (Ok(answer), _) => (RunStatus::Completed, Some(answer), None),
            (Err(_), Some(reason)) => (RunStatus::Failed, None, Some(reason)),
            (Err(Stop::Cancelled), None) => (RunStatus::Cancelled, None, None),
            (Err(Stop::Failed(e) | Stop::TooLong(e)), None) => (RunStatus::Failed, None, Some(e)),
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

    /// The agent `name` as it runs now: with the skill tools while it has a skill (an MCP
    /// server's skills come and go with the server).
    fn agent(&self, name: &str) -> Option<AgentDef> {
        let mut agent = self
            .ctx
            .config()
            .agents
            .iter()
            .find(|a| a.name == name)
            .cloned()?;
        if !self.ctx.skills().of_agent(name).is_empty() {
            crate::config::add_skill_tools(&mut agent);
        }
        Some(agent)
    }

    /// The specs of exactly the agent's tools (MCP servers expanded; `call_subagent` lists the
    /// agents it can call).
    fn agent_specs(&self, agent: &AgentDef, conversation: &str) -> Vec<ToolSpec> {
        let registry = self.ctx.conversation_registry(conversation);
        let callable: Vec<(String, String)> = self
            .ctx
            .config()
            .agents
            .iter()
            .filter(|a| !a.internal && a.name != agent.name)
            .map(|a| (a.name.clone(), a.description.clone()))
            .collect();
        crate::mcp::expand_agent_tools(&agent.tools, &registry)
            .into_iter()
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
            .collect()
    }

    fn persist(
        &self,
        scope: &Scope<'_>,
        role: &str,
        agent: &str,
        content: &str,
        depth: u32,
        usage: Option<(u32, u32)>,
    ) -> Option<i64> {
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
        match result {
            Ok(id) => Some(id),
            Err(e) => {
                tracing::warn!("cannot store a message of run {}: {e}", scope.run_id);
                None
            }
        }
    }

    /// Who makes calls for `agent` at `depth` in `scope`.
    fn caller<'s>(&'s self, scope: &'s Scope<'_>, agent: &'s AgentDef, depth: u32) -> Caller<'s> {
        Caller {
            ctx: &self.ctx,
            events: self.events.as_ref(),
            conversation: scope.conversation,
            agent: Some(agent),
            agent_chain: scope.agents,
            depth,
            cancel: scope.cancel,
            remember_always: true,
            tool_ctx: None,
            view: None,
        }
    }

    /// The end of `pending`'s call, not run for `reason`: recorded and returned.
    fn not_run(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        pending: &Pending,
        reason: &str,
    ) -> CallOutcome {
        let outcome = gate::not_run(&self.caller(scope, agent, depth), &pending.call, reason);
        self.record_pending(scope, agent, depth, pending, &outcome);
        outcome
    }

    /// Close a round: store its results message (each ended call's result in the order they
    /// ended, then the engine's `notes`) and return the answer's calls with what they ended as,
    /// and the results entry: what a native rendering of this round sends.
    fn end_round(
        &self,
        scope: &Scope<'_>,
        agent_name: &str,
        depth: u32,
        calls: &[Pending],
        ended: &[(usize, CallOutcome)],
        notes: &[String],
    ) -> (Vec<EntryCall>, Entry) {
        let notes = notes.join("\n\n");
        let mut blocks: Vec<String> = ended.iter().map(|(_, o)| o.text.clone()).collect();
        blocks.push(notes.clone());
        blocks.retain(|b| !b.is_empty());
        let message = blocks.join("\n\n");
        let id = self.persist(scope, "tool", agent_name, &message, depth, None);
        let shown = ended
            .iter()
            .map(|(i, outcome)| calls[*i].shown(outcome))
            .collect();
        let results = ended
            .iter()
            .map(|(i, outcome)| view::result_ref(outcome, &calls[*i].wire_id()))
            .collect();
        let entry = Entry::new(Kind::Results(results), message, id).with_notes(notes);
        (shown, entry)
    }

    /// End a call written after `agent` used up its tool rounds: it does not run. An unreadable
    /// one is still reported as unreadable (the gate refuses it before anything runs), so the
    /// model learns the format; any other is recorded as not run, saying why.
    async fn past_the_limit(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        pending: &Pending,
    ) -> CallOutcome {
        if pending.call.is_malformed() {
            let outcome = self.run_call(scope, agent, depth, &pending.call).await;
            self.record_pending(scope, agent, depth, pending, &outcome);
            return outcome;
        }
        let reason = rounds_used(agent.max_tool_rounds);
        self.not_run(scope, agent, depth, pending, &reason)
    }

    /// Store the record of `pending`'s call, ended as `outcome`.
    fn record_pending(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        pending: &Pending,
        outcome: &CallOutcome,
    ) {
        let made_by = MadeBy::Agent {
            run_id: scope.run_id,
            agent: &agent.name,
            depth,
            message_id: pending.place.message_id,
            position: pending.place.position,
            provider_call_id: pending.provider_id.as_deref(),
        };
        outcome.keep(&self.ctx, scope.conversation, made_by);
    }

    /// Run one agent to its final answer.
    fn run_agent<'a>(
        &'a self,
        scope: &'a Scope<'a>,
        agent_name: &'a str,
        mut history: Vec<Entry>,
        depth: u32,
    ) -> futures::future::BoxFuture<'a, Result<String, Stop>> {
        Box::pin(async move {
            let _at_work = live::AgentAtWork::new(&self.live, scope.run_id, depth);
            let mut view = ViewState::default();
            let mut rounds = 0u32;
            let mut final_round = false;
            let mut told_results_come_from_us = false;
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
                self.note_model_file(scope, &agent, depth);
                let answer = self
                    .answer_within_window(
                        scope,
                        &agent,
                        depth,
                        model.as_ref(),
                        &mut history,
                        &mut view,
                    )
                    .await?;
                history.push(Entry::new(
                    Kind::Answer,
                    answer.text.clone(),
                    answer.message_id,
                ));
                let answer_at = history.len() - 1;
                let mut calls = self.calls_of(scope, &agent, &answer);
                if final_round {
                    // Told to answer without tools, it called some anyway: each gets a card
                    // and a record saying why it did not run, never silence.
                    let mut blocks = Vec::new();
                    for pending in &calls {
                        blocks.push(
                            self.past_the_limit(scope, &agent, depth, pending)
                                .await
                                .text,
                        );
                    }
                    if !blocks.is_empty() {
                        // Every recorded call has its result in the history, as a stopped
                        // run's do: the next run sends each native call with one.
                        self.persist(scope, "tool", agent_name, &blocks.join("\n\n"), depth, None);
                    }
                    return Ok(answer.text);
                }
                let mut notes = Vec::new();
                if answer.finish == FinishReason::Length {
                    // The stream ended inside the last call when it is native (its arguments
                    // are cut off) or when the parser had not seen it complete.
                    let cut = calls.last().is_some_and(|last| {
                        last.provider_id.is_some()
                            || !answer.completed.contains(&last.place.position)
                    });
                    if let (true, Some(last)) = (cut, calls.last()) {
                        notes.push(format!(
                            "Your answer was cut off by the token limit in the middle of a call to `{}`; that call was not run. Send it again, shorter (for long content, create the artifact with part of it and add the rest with update_artifact).",
                            last.shown_name()
                        ));
                        self.not_run(
                            scope,
                            &agent,
                            depth,
                            last,
                            "the answer was cut off by the token limit",
                        );
                        calls.pop();
                    }
                }
                if calls.is_empty()
                    && !told_results_come_from_us
                    && is_invented_result(&answer.text)
                {
                    // An answer that is a tool result the model wrote itself is no answer for
                    // the user: it is told once where results come from, and asked again.
                    told_results_come_from_us = true;
                    notes.push(INVENTED_RESULT_NOTE.to_string());
                }
                if calls.is_empty() && notes.is_empty() {
                    return Ok(answer.text);
                }
                rounds += 1;
                if rounds > agent.max_tool_rounds {
                    // The answer's calls do not run; each still gets a result (native calls
                    // need one per id) and a record the user sees, then the model is asked
                    // for its final answer.
                    final_round = true;
                    let mut ended: Vec<(usize, CallOutcome)> = Vec::new();
                    for (i, pending) in calls.iter().enumerate() {
                        ended.push((i, self.past_the_limit(scope, &agent, depth, pending).await));
                    }
                    notes.push(format!(
                        "You have used all {} tool rounds allowed for this task. Do not call any more tools: give your final answer now.",
                        agent.max_tool_rounds
                    ));
                    let (shown, results) =
                        self.end_round(scope, agent_name, depth, &calls, &ended, &notes);
                    history[answer_at].set_calls(shown);
                    history.push(results);
                    continue;
                }
                // call_subagent last, keeping the order of the others.
                calls.sort_by_key(|p| p.call.name == "call_subagent");
                let mut blocks = Vec::new();
                let mut ended: Vec<(usize, CallOutcome)> = Vec::new();
                let mut handed_over = false;
                for (index, pending) in calls.iter().enumerate() {
                    if scope.cancel.is_cancelled() {
                        // Stopped mid-round: what ran is kept, and every call of the answer
                        // has a result (and a record), so the next run's history tells the
                        // model what happened.
                        for rest in &calls[index..] {
                            let outcome =
                                self.not_run(scope, &agent, depth, rest, gate::STOPPED_BEFORE);
                            blocks.push(outcome.text);
                        }
                        self.persist(scope, "tool", agent_name, &blocks.join("\n\n"), depth, None);
                        return Err(Stop::Cancelled);
                    }
                    if handed_over && pending.call.name == "call_subagent" {
                        let outcome = self.not_run(
                            scope,
                            &agent,
                            depth,
                            pending,
                            "only one hand-over per answer; call the next agent after this one's result",
                        );
                        blocks.push(outcome.text.clone());
                        ended.push((index, outcome));
                        continue;
                    }
                    let mut outcome = self.run_call(scope, &agent, depth, &pending.call).await;
                    if let Some(handover) = outcome.handover.clone() {
                        handed_over = true;
                        self.complete_hand_over(scope, &agent, depth, &handover, &mut outcome)
                            .await?;
                    }
                    self.record_pending(scope, &agent, depth, pending, &outcome);
                    self.remember_persisted(&outcome);
                    blocks.push(outcome.text.clone());
                    ended.push((index, outcome));
                }
                if scope.cancel.is_cancelled() {
                    self.persist(scope, "tool", agent_name, &blocks.join("\n\n"), depth, None);
                    return Err(Stop::Cancelled);
                }
                // (A call written in a family's own form was told its own form instead.)
                if !answer.in_forms
                    && calls
                        .iter()
                        .any(|p| p.call.is_malformed() && p.provider_id.is_none())
                {
                    // The engine's own text, outside the result frames so it is not escaped.
                    notes.push(FORMAT_REMINDER.to_string());
                }
                let (shown, results) =
                    self.end_round(scope, agent_name, depth, &calls, &ended, &notes);
                history[answer_at].set_calls(shown);
                history.push(results);
            }
        })
    }

    /// The calls of `answer`: those written in its text (the XML format), then its native
    /// calls, each read with the repairs of [`crate::parser::args`] (an unreadable one becomes
    /// a malformed call telling the model the schema to follow).
    fn calls_of(&self, scope: &Scope<'_>, agent: &AgentDef, answer: &Answered) -> Vec<Pending> {
        let in_text = answer.written.len();
        let mut calls: Vec<Pending> = answer
            .written
            .iter()
            .cloned()
            .enumerate()
            .map(|(position, mut call)| {
                call.id = call_id(&answer.prefix, position);
                // Once the grammar takes over it ends the answer with its call: the last one
                // (in native mode the grammar writes a native call instead).
                call.guided = answer.guided && answer.native.is_empty() && position + 1 == in_text;
                Pending {
                    place: Place {
                        message_id: answer.message_id,
                        position,
                    },
                    call,
                    provider_id: None,
                    native_name: None,
                }
            })
            .collect();
        if answer.native.is_empty() {
            return calls;
        }
        let specs = self.agent_specs(agent, scope.conversation);
        for (index, native) in answer.native.iter().enumerate() {
            // The tool's own name for the name it was offered under (see `wire_tool_name`).
            let spec = specs
                .iter()
                .find(|s| crate::models::wire_tool_name(&s.name) == native.name);
            let name = spec.map_or(native.name.as_str(), |s| s.name.as_str());
            let mut call = match crate::parser::read_arguments(&native.arguments, spec) {
                Ok((params, repairs)) => {
                    if !repairs.is_empty() {
                        tracing::info!(tool = %name, ?repairs, "repaired a native call's arguments");
                    }
                    ToolCall::new(name, params)
                }
                Err(why) => ToolCall::malformed(unreadable_arguments(name, spec, &why)),
            };
            call.id = native_call_id(&answer.prefix, index);
            // The app's runtime writes one native call per answer under its grammar.
            call.guided = answer.guided && index + 1 == answer.native.len();
            calls.push(Pending {
                place: Place {
                    message_id: answer.message_id,
                    position: in_text + index,
                },
                call,
                provider_id: Some(native.id.clone()),
                native_name: Some(name.to_string()),
            });
        }
        calls
    }

    /// Say so when the request about to be made waits for a local model to load.
    fn note_model_loading(&self, scope: &Scope<'_>, agent: &AgentDef) {
        let Some(profile) = self.models.profile_for(agent) else {
            return;
        };
        if profile.api != crate::models::Api::Local || crate::models::local::is_loaded(&profile) {
            return;
        }
        let path = std::path::Path::new(&profile.model);
        let model = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| profile.model.clone());
        self.events.emit(EngineEvent::ModelLoading {
            conversation_id: scope.conversation.to_string(),
            agent: agent.name.clone(),
            model,
        });
    }

    /// Ask for the next answer with the history shortened to the window (see [`budget`]).
    /// A refusal as too long condenses with a tighter budget and retries once; a second one
    /// ends the run with an error saying what to change.
    async fn answer_within_window(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        model: &dyn ChatModel,
        history: &mut Vec<Entry>,
        state: &mut ViewState,
    ) -> Result<Answered, Stop> {
        let key = self.calibration_key(agent);
        if !state.calibrated {
            if let Some(known) = self.calibrations().get(&key) {
                state.calibration = *known;
            }
        }
        self.note_model_loading(scope, agent);
        let mut refusal: Option<String> = None;
        loop {
            let reason = if refusal.is_some() {
                "server"
            } else {
                "budget"
            };
            let prepared = self
                .prepare_request(scope, agent, depth, model, history, state, reason)
                .await?;
            let (window, _, profile) = view::window_of(self, agent).await;
            let too_long = |server: &str| {
                Stop::Failed(view::too_long_error(
                    &agent.name,
                    &profile,
                    window.tokens,
                    server,
                ))
            };
            if let (Some(server), true) = (&refusal, prepared.unchanged) {
                // Nothing left to shorten: the same request would be refused again.
                return Err(too_long(server));
            }
            let server = match self
                .stream_answer(
                    scope,
                    agent,
                    depth,
                    model,
                    ChatRequest {
                        messages: prepared.messages,
                        tools: prepared.tools,
                        guide: prepared.guide,
                        ..Default::default()
                    },
                )
                .await
            {
                Err(Stop::TooLong(server)) => server,
                Ok(answer) => {
                    if let Some(reported) = answer.prompt_tokens {
                        state.calibration.observe(prepared.estimate, reported);
                        state.calibrated = true;
                        self.calibrations().insert(key, state.calibration);
                    }
                    return Ok(answer);
                }
                Err(stop) => return Err(stop),
            };
            if refusal.is_some() {
                return Err(too_long(&server));
            }
            // The server's window is smaller than assumed: two thirds of what it refused.
            let refused = state.calibration.apply(prepared.estimate);
            state.refused_budget = Some(refused * 2 / 3);
            refusal = Some(server);
        }
    }

    /// Stream one model answer (its text, and its native calls' starts as they come).
    async fn stream_answer(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        model: &dyn ChatModel,
        request: ChatRequest,
    ) -> Result<Answered, Stop> {
        let prefix = new_id("call");
        let mut parser = StreamParser::new();
        let mut batcher = TokenBatcher::new();
        let mut completed = Vec::new();
        let events = &self.events;
        let mut prose = ProseTracker::new();
        let emit_tokens = |text: String, (prose, prose_reset): (String, bool)| {
            events.emit(EngineEvent::Token {
                conversation_id: scope.conversation.to_string(),
                agent: agent.name.clone(),
                depth,
                text,
                prose,
                prose_reset,
            })
        };
        let started = |call_id: String, index: usize, name: Option<String>| {
            events.emit(EngineEvent::ToolCallStarted {
                conversation_id: scope.conversation.to_string(),
                call_id,
                agent: agent.name.clone(),
                depth,
                index,
                name,
            })
        };
        let mut streamed = String::new();
        // A tool result the model writes after its call is its own invention (see
        // `forged_result`): from where one begins, nothing more is shown.
        let mut call_ended_at: Option<usize> = None;
        let mut shown_upto: Option<usize> = None;
        let result = {
            let mut on_event = |event: Streamed<'_>| {
                let chunk = match event {
                    Streamed::Text(chunk) => chunk,
                    Streamed::CallStarted { index, name } => {
                        // The card shows "calling X…" from the call's first delta.
                        started(
                            native_call_id(&prefix, index),
                            index,
                            Some(name.to_string()),
                        );
                        return;
                    }
                };
                if shown_upto.is_some() {
                    streamed.push_str(chunk);
                    parser.feed(chunk);
                    return;
                }
                let chunk_at = streamed.len();
                streamed.push_str(chunk);
                for event in parser.feed(chunk) {
                    match event {
                        StreamEvent::CallStarted { index } => {
                            call_ended_at = None;
                            started(call_id(&prefix, index), index, None)
                        }
                        StreamEvent::NameKnown { index, name } => {
                            started(call_id(&prefix, index), index, Some(name))
                        }
                        StreamEvent::CallComplete { index, .. } => {
                            call_ended_at = Some(chunk_at);
                            completed.push(index)
                        }
                        StreamEvent::Reset => completed.clear(),
                    }
                }
                let shown = match call_ended_at.and_then(|at| forged_from(&streamed, at)) {
                    Some(forged) => {
                        shown_upto = Some(forged);
                        &streamed[chunk_at..forged.max(chunk_at)]
                    }
                    None => chunk,
                };
                if let Some(batch) = batcher.push(shown) {
                    let upto = shown_upto.unwrap_or(streamed.len());
                    emit_tokens(batch, prose.advance(&streamed[..upto]));
                }
            };
            model
                .stream_events(&request, scope.cancel, &mut on_event)
                .await
        };
        if let Some(rest) = batcher.flush() {
            let upto = shown_upto.unwrap_or(streamed.len());
            emit_tokens(rest, prose.advance(&streamed[..upto]));
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
                    crate::models::ModelError::ContextLength(message) => Stop::TooLong(message),
                    e => Stop::Failed(format!("agent `{}`: {e}", agent.name)),
                });
            }
        };
        let usage = response
            .usage
            .map(|u| (u.prompt_tokens, u.completion_tokens));
        // The answer kept, shown, sent back and read for calls ends before a tool result the
        // model wrote itself (calls after it were written on the strength of the invention).
        let full_text = response.text;
        let cut = crate::parser::forged_result(&full_text);
        let text = match cut {
            Some(cut) => {
                tracing::info!(
                    "agent `{}` wrote a tool result of its own after its call: its answer ends there",
                    agent.name
                );
                full_text[..cut].trim_end().to_string()
            }
            None => full_text.clone(),
        };
        let message_id = self.persist(scope, "assistant", &agent.name, &text, depth, usage);
        let citations = self
            .ctx
            .with_db(|c| crate::history::citations_of_answer(c, scope.conversation, &text))
            .unwrap_or_else(|e| {
                tracing::warn!("cannot check the answer's citations: {e}");
                Vec::new()
            });
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
            citations,
        });
        // The stream parser saw every byte of the stored text: its calls are the answer's
        // (`finish` returns what a one-shot parse of that text returns).
        let written = if cut.is_some() {
            crate::parser::parse(&text)
        } else if parser.text() == full_text {
            parser.finish()
        } else {
            tracing::warn!("the streamed text differs from the answer's; reading the answer");
            crate::parser::parse(&full_text)
        };
        // No call in the `<tool_call>` form and none native: the calls the model wrote in its
        // family's own form, if any (see `written_in_forms`). The stream parser did not see
        // them, so their cards start here, before they run.
        let in_forms = written.is_empty() && response.tool_calls.is_empty();
        let written = if in_forms {
            let calls = self.written_in_forms(scope, agent, &full_text);
            for (index, call) in calls.iter().enumerate() {
                let name = (!call.is_malformed()).then(|| call.name.clone());
                started(call_id(&prefix, index), index, name);
                if !call.is_malformed() {
                    completed.push(index);
                }
            }
            calls
        } else {
            written
        };
        let in_forms = in_forms && !written.is_empty();
        Ok(Answered {
            text,
            finish: response.finish_reason,
            completed,
            written,
            message_id,
            prefix,
            prompt_tokens: usage.map(|u| u.0),
            native: response.tool_calls,
            guided: response.guided,
            in_forms,
        })
    }

    /// The calls of an answer written in one of the forms of the parser's `FORMS.md` (a
    /// fenced JSON call, `[TOOL_CALLS]`, a pythonic list…), read against the agent's tools
    /// under the names they were configured and offered by (see
    /// [`wire_tool_name`](crate::models::wire_tool_name)); each call takes the tool's
    /// configured name, and a broken call to a known tool is told that tool's schema.
    fn written_in_forms(&self, scope: &Scope<'_>, agent: &AgentDef, text: &str) -> Vec<ToolCall> {
        let specs = self.agent_specs(agent, scope.conversation);
        let find = |name: &str| {
            specs
                .iter()
                .find(|s| s.name == name || crate::models::wire_tool_name(&s.name) == name)
        };
        crate::parser::read_written(text, &|name| find(name).is_some())
            .into_iter()
            .map(|written| {
                let mut call = written.call;
                if let Some(spec) = written.tool.as_deref().and_then(find) {
                    match call.error.take() {
                        None => call.name = spec.name.clone(),
                        Some(error) => {
                            call.error = Some(format!(
                                "{error} Its arguments must match this schema: {}",
                                spec.json_schema()
                            ))
                        }
                    }
                }
                call
            })
            .collect()
    }

    /// Run one parsed call through the gate (see [`crate::gate`]).
    async fn run_call(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        call: &ToolCall,
    ) -> CallOutcome {
        let asker = Asker::Broker {
            broker: &self.broker,
            timeout: self.permission_timeout(),
            cancel: scope.cancel.clone(),
        };
        let caller = self.caller(scope, agent, depth);
        gate::run(&caller, asker, call.id.clone(), Subject::Parsed(call)).await
    }

    /// Perform the hand-over a successful `call_subagent` asked for; the sub-agent's final
    /// answer (or why it has none) becomes the call's result and status.
    async fn complete_hand_over(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        handover: &crate::calls::Handover,
        outcome: &mut CallOutcome,
    ) -> Result<(), Stop> {
        let target = &handover.target;
        let (status, result) = match self
            .hand_over(scope, agent, depth, target, &handover.instruction)
            .await
        {
            Err(Stop::Cancelled) => (
                CallStatus::Stopped,
                ToolResult::fail(format!(
                    "agent `{target}` was stopped by the user before it finished"
                )),
            ),
            Err(stop) => return Err(stop),
            Ok(result) if result.success => (CallStatus::Succeeded, result),
            Ok(result) => (CallStatus::Failed, result),
        };
        outcome.status = status;
        outcome.reason = (!result.success).then(|| result.error.clone().unwrap_or_default());
        outcome.text = format_result(&outcome.tool, result.success, gate_text(&result));
        outcome.result = result;
        Ok(())
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
        let id = self.persist(scope, "user", target, instruction, depth + 1, None);
        let history = vec![Entry::new(Kind::Task, instruction.to_string(), id)];
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
            Ok(answer) => Ok(ToolResult::ok(answer)),
            Err(Stop::Cancelled) => Err(Stop::Cancelled),
            Err(Stop::Failed(e) | Stop::TooLong(e)) => Ok(ToolResult::fail(format!(
                "agent `{target}` could not finish: {e}"
            ))),
        }
    }
}

/// The system prompt in text mode: the role (prompt and skills) + the instructions for
/// exactly `specs`.
pub(crate) fn system_prompt(role: &str, specs: &[ToolSpec]) -> String {
    if specs.is_empty() {
        role.to_string()
    } else {
        format!("{role}\n\n{}", crate::parser::tool_instructions(specs))
    }
}

/// The unframed text of `result` for the model: its output, or its error.
fn gate_text(result: &ToolResult) -> &str {
    if result.success {
        &result.data
    } else {
        result.error.as_deref().unwrap_or("")
    }
}
