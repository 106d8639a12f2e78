//! Asking a model the items, as the engine asks it.
//!
//! Each item is one conversation: the check's one-line role prompt, the item's messages, and
//! its tools offered as the run loop offers an agent's tools in the chosen mode — in text mode
//! the system prompt's `<tool_instructions>` ([`crate::run::system_prompt`]), natively the
//! tools' definitions ([`crate::run::view::tool_definitions`]); guided, the grammar and
//! triggers of the run loop's own `call_guide` for those tools and that profile. The answer
//! is read as the run loop reads one: XML calls with the tolerant parser, native calls with
//! their arguments read by [`crate::parser::read_arguments`], then each call checked as the
//! gate checks a call ([`super::score::read_call`]).
//!
//! An item that needs more calls than an answer made (a guided answer holds one call) gets
//! the next round, as an agent would: the answer and a result for each of its calls go back
//! and the model answers again, up to as many requests as the item expects calls. Every
//! other item is one request. Requests are greedy (temperature 0), so a check run twice on
//! the same model file gives the same answers.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::items::{CheckItem, CompiledTool, ItemRole};
use super::score::{self, CallSource, ItemScore, MadeCall};
use super::{CheckReport, ModelIdentity};
use crate::config::AgentDef;
use crate::context::AppContext;
use crate::models::{
    ChatMessage, ChatModel, ChatRequest, ModelError, ModelProfile, NativeCall, Role, ToolCallMode,
};
use crate::run::{ModelSource, RunOptions, Runner};

/// The role prompt every item is asked under.
pub const ROLE_PROMPT: &str = "You are a helpful assistant. Use the tools when the user's \
request needs one; when a request lacks something a tool needs, ask for it.";

/// The result each call of an answer gets when the item needs another round.
const ROUND_RESULT: &str = "Done.";

/// The most tokens an answer may have unless the profile says fewer: a call of the items
/// takes well under a hundred.
pub const DEFAULT_MAX_TOKENS: u32 = 320;

/// How to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckOptions {
    /// Text (XML calls described in the system prompt) or native tool calls. `auto` is
    /// resolved before a check runs (see [`super::resolve_mode`]).
    pub mode: ToolCallMode,
    /// Send the grammar of the calls (guided calls).
    pub guided: bool,
}

/// Where a check is after an item.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CheckProgress {
    /// Items done.
    pub done: u32,
    /// Items in all.
    pub total: u32,
    /// The item just scored.
    pub item: ItemScore,
    /// Seconds since the check started.
    pub elapsed_secs: f64,
    /// Seconds still to go, at the pace so far.
    pub eta_secs: f64,
}

/// A check's model: the profile it is asked through (its `model` the resolved file for a
/// local one) and what its results are kept by.
#[derive(Debug, Clone)]
pub struct CheckTarget {
    /// The profile.
    pub profile: ModelProfile,
    /// The model's identity.
    pub identity: ModelIdentity,
}

/// The check's model, for the run loop's `call_guide` (the grammar it builds may depend on
/// the profile: its model's call family).
struct CheckedModel {
    profile: ModelProfile,
    client: Arc<dyn ChatModel>,
}

impl ModelSource for CheckedModel {
    fn model_for(&self, _agent: &AgentDef) -> Result<Arc<dyn ChatModel>, String> {
        Ok(Arc::clone(&self.client))
    }

    fn profile_for(&self, _agent: &AgentDef) -> Option<ModelProfile> {
        Some(self.profile.clone())
    }
}

/// The agent the items are asked as (only its name and tools matter to `call_guide`).
fn check_agent() -> AgentDef {
    AgentDef {
        name: "tool-check".into(),
        display_name: None,
        description: "The built-in tool-use check".into(),
        model: None,
        tools: Default::default(),
        internal: true,
        skills: Default::default(),
        max_tool_rounds: 2,
        permission_rules: None,
        permission_rule_lines: Default::default(),
        role_prompt: ROLE_PROMPT.into(),
        source: Default::default(),
    }
}

/// Ask `target` every item of `items` (named `item_set` in the report) with `options`,
/// calling `progress` after each. A cancelled check returns what was scored so far, marked
/// cancelled. `Err` when the model cannot be asked at all (its profile is unusable, its server
/// cannot be reached): the message says what to do.
pub async fn run_check(
    ctx: &Arc<AppContext>,
    target: &CheckTarget,
    items: &[CheckItem],
    item_set: &str,
    options: CheckOptions,
    progress: &mut (dyn FnMut(&CheckProgress) + Send),
    cancel: &CancellationToken,
) -> Result<CheckReport, String> {
    let mut profile = target.profile.clone();
    profile.tool_calls = Some(options.mode);
    profile.guided_calls = Some(if options.guided {
        crate::models::Switch::On
    } else {
        crate::models::Switch::Off
    });
    let client = crate::models::client_for(&profile, ctx.secret_resolver());
    let source = Arc::new(CheckedModel {
        profile: profile.clone(),
        client: Arc::clone(&client),
    });
    let runner = Runner::new(
        Arc::clone(ctx),
        source,
        Arc::new(crate::interrupts::PermissionBroker::new()),
        Arc::new(|_event| {}),
        RunOptions::default(),
    );
    let agent = check_agent();
    let max_tokens = profile
        .max_tokens
        .map_or(DEFAULT_MAX_TOKENS, |m| m.min(DEFAULT_MAX_TOKENS));
    let started = Instant::now();
    let mut scores = Vec::with_capacity(items.len());
    let mut cancelled = false;
    for item in items {
        if cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        let item_started = Instant::now();
        let asked = Asked {
            runner: &runner,
            agent: &agent,
            client: client.as_ref(),
            options,
            max_tokens,
            cancel,
        };
        let mut score = match asked.item(item).await {
            Ok(score) => score,
            Err(ModelError::Cancelled) => {
                cancelled = true;
                break;
            }
            Err(e @ (ModelError::Config(_) | ModelError::Connection(_))) => {
                return Err(format!(
                    "cannot ask the model of profile `{}`: {e}",
                    profile.name
                ));
            }
            Err(e) => score::failed_item(item, e.to_string(), &[]),
        };
        score.seconds = item_started.elapsed().as_secs_f64();
        scores.push(score);
        let done = scores.len() as u32;
        let elapsed = started.elapsed().as_secs_f64();
        let per_item = elapsed / f64::from(done);
        progress(&CheckProgress {
            done,
            total: items.len() as u32,
            item: scores.last().cloned().expect("just pushed"),
            elapsed_secs: elapsed,
            eta_secs: per_item * (items.len() as u32 - done) as f64,
        });
    }
    Ok(CheckReport::new(
        target,
        options,
        item_set,
        scores,
        started.elapsed().as_secs_f64(),
        cancelled,
    ))
}

/// What every request of a check shares.
struct Asked<'a> {
    runner: &'a Runner,
    agent: &'a AgentDef,
    client: &'a dyn ChatModel,
    options: CheckOptions,
    max_tokens: u32,
    cancel: &'a CancellationToken,
}

impl Asked<'_> {
    /// Ask one item (one request per round, see the module docs) and score its calls.
    async fn item(&self, item: &CheckItem) -> Result<ItemScore, ModelError> {
        let tools: Vec<CompiledTool> = item.tools.iter().map(|t| t.compile()).collect();
        let specs: Vec<_> = tools.iter().map(|t| t.spec.clone()).collect();
        let native = self.options.mode == ToolCallMode::Native;
        let system = if native {
            ROLE_PROMPT.to_string()
        } else {
            crate::run::system_prompt(ROLE_PROMPT, &specs)
        };
        let mut messages = vec![ChatMessage::new(Role::System, system)];
        for m in &item.messages {
            let role = match m.role {
                ItemRole::User => Role::User,
                ItemRole::Assistant => Role::Assistant,
            };
            messages.push(ChatMessage::new(role, m.content.clone()));
        }
        let guide = if self.options.guided {
            self.runner
                .call_guide(self.agent, &specs, self.options.mode)
                .map(|g| crate::models::Guide::clone(&g))
        } else {
            None
        };
        let tool_definitions = if native {
            crate::run::view::tool_definitions(&specs)
        } else {
            Vec::new()
        };
        let wanted = item.expected.calls.len().max(1);
        let mut calls: Vec<MadeCall> = Vec::new();
        let mut requests = 0;
        loop {
            let request = ChatRequest {
                messages: messages.clone(),
                temperature: Some(0.0),
                max_tokens: Some(self.max_tokens),
                tools: tool_definitions.clone(),
                guide: guide.clone(),
            };
            requests += 1;
            let response = self
                .client
                .stream_events(&request, self.cancel, &mut |_| {})
                .await?;
            let answer = read_answer(&response.text, &response.tool_calls, &tools);
            let made = answer.len();
            calls.extend(answer.iter().map(|(call, _)| call.clone()));
            // Another round only for an item that needs more calls, after valid ones.
            if made == 0 || calls.len() >= wanted || !calls.iter().all(MadeCall::is_valid) {
                break;
            }
            messages.push(ChatMessage {
                tool_calls: response.tool_calls.clone(),
                ..ChatMessage::new(Role::Assistant, response.text.clone())
            });
            let mut results = Vec::new();
            for (call, native_id) in &answer {
                match native_id {
                    Some(id) => messages.push(ChatMessage::tool_result(id, ROUND_RESULT)),
                    None => {
                        results.push(crate::parser::format_result(&call.name, true, ROUND_RESULT))
                    }
                }
            }
            if !results.is_empty() {
                messages.push(ChatMessage::new(Role::User, results.join("\n\n")));
            }
        }
        let mut score = score::score_item(item, &calls);
        score.requests = requests;
        Ok(score)
    }
}

/// The calls of one answer, as the run loop reads them: the XML calls of its text, then its
/// native calls (with their ids), then, when neither gave one, the calls written in another
/// family's form.
fn read_answer(
    text: &str,
    native: &[NativeCall],
    tools: &[CompiledTool],
) -> Vec<(MadeCall, Option<String>)> {
    let mut calls: Vec<(MadeCall, Option<String>)> = crate::parser::parse(text)
        .into_iter()
        .map(|call| {
            let made = if call.is_malformed() {
                MadeCall::unreadable(call.error.unwrap_or_default(), CallSource::Xml)
            } else {
                score::read_call(tools, &call.name, &call.params, CallSource::Xml)
            };
            (made, None)
        })
        .collect();
    for call in native {
        let tool = tools
            .iter()
            .find(|t| crate::models::wire_tool_name(&t.spec.name) == call.name);
        let name = tool.map_or(call.name.as_str(), |t| t.spec.name.as_str());
        let made = match crate::parser::read_arguments(&call.arguments, tool.map(|t| &t.spec)) {
            Ok((params, _repairs)) => score::read_call(tools, name, &params, CallSource::Native),
            Err(why) => MadeCall {
                name: name.to_string(),
                arguments: None,
                problem: Some(format!("its arguments could not be read: {why}")),
                source: CallSource::Native,
            },
        };
        calls.push((made, Some(call.id.clone())));
    }
    if calls.is_empty() {
        calls = written_calls(text, tools);
    }
    calls
}

/// The calls written in another family's form (a JSON call object alone or in a code fence,
/// Llama's, Mistral's, LFM2's …; see the parser's `FORMS.md`), read only when they name one of
/// the item's tools, as the run loop reads them when an answer has no other call.
fn written_calls(text: &str, tools: &[CompiledTool]) -> Vec<(MadeCall, Option<String>)> {
    let is_tool = |name: &str| tools.iter().any(|t| t.spec.name == name);
    crate::parser::read_written_calls(text, &is_tool)
        .into_iter()
        .map(|call| {
            let made = if call.is_malformed() {
                MadeCall::unreadable(call.error.unwrap_or_default(), CallSource::Written)
            } else {
                score::read_call(tools, &call.name, &call.params, CallSource::Written)
            };
            (made, None)
        })
        .collect()
}
