//! The model's view of an agent's history, kept within its context window: the run loop's
//! side of [`super::budget`] (which decides). Here the decisions are carried out: results are
//! stored as artifacts (once), the note is asked for and stored as a `context` message, and
//! the events the chat's meter and marker follow are emitted.

use std::collections::HashMap;

use rusqlite::{params, Connection};

use super::budget::{self, Calibration, Entry, EntryCall, Kind, ResultRef};
use super::{Runner, Scope, Stop};
use crate::artifacts::{ArtifactSource, NewArtifact};
use crate::config::AgentDef;
use crate::events::EngineEvent;
use crate::gate::CallOutcome;
use crate::models::window::ContextWindow;
use crate::models::{
    ChatMessage, ChatModel, ChatRequest, Guide, ModelError, Role, ToolCallMode, ToolDefinition,
};
use crate::tools::ToolSpec;

/// The definitions native tool calling sends for `specs`.
pub(crate) fn tool_definitions(specs: &[ToolSpec]) -> Vec<ToolDefinition> {
    specs
        .iter()
        .map(|spec| ToolDefinition {
            name: crate::models::wire_tool_name(&spec.name).into_owned(),
            description: spec.description.clone(),
            parameters: spec.json_schema(),
        })
        .collect()
}

/// What one agent's loop knows about its window across requests.
#[derive(Debug, Default)]
pub(super) struct ViewState {
    /// Learnt from the server's reported prompt tokens (in this loop, or else in earlier
    /// runs with the same model: see `Runner::calibrations`).
    pub calibration: Calibration,
    /// This loop has had a report of its own (earlier runs' no longer apply).
    pub calibrated: bool,
    /// A tighter prompt budget after the server refused a request as too long: its real window
    /// is smaller than the profile says, so the rest of the run keeps to it.
    pub refused_budget: Option<u32>,
}

/// A request ready to send, and its uncalibrated estimate (to calibrate by the usage).
pub(super) struct Prepared {
    pub messages: Vec<ChatMessage>,
    /// The tools offered through native tool calling (none in text mode).
    pub tools: Vec<ToolDefinition>,
    /// The grammar of the agent's calls, when its profile guides them (text mode only).
    pub guide: Option<Guide>,
    pub estimate: u32,
    /// The plan changed nothing (a refused request cannot be helped by retrying it).
    pub unchanged: bool,
}

/// The window and the answer's reserve for `agent`'s model.
/// The window is the profile's, else what its server reports (asked once per process), else a
/// known model's default, else the conservative default (see [`crate::models::window::resolve`]).
pub(super) async fn window_of(runner: &Runner, agent: &AgentDef) -> (ContextWindow, u32, String) {
    match runner.models.profile_for(agent) {
        Some(profile) => {
            let window =
                crate::models::window::resolve(&profile, runner.ctx.secret_resolver()).await;
            let reserve = budget::reserve_tokens(profile.max_tokens, window.tokens);
            (window, reserve, profile.name)
        }
        None => {
            let window = ContextWindow {
                tokens: crate::models::window::DEFAULT_CONTEXT_WINDOW,
                source: crate::models::window::WindowSource::Default,
            };
            let reserve = budget::reserve_tokens(None, window.tokens);
            (window, reserve, agent.model.clone().unwrap_or_default())
        }
    }
}

/// The result of `outcome` in a results entry; `wire_id` is the id the model knows its call by.
pub(super) fn result_ref(outcome: &CallOutcome, wire_id: &str) -> ResultRef {
    ResultRef {
        call_id: outcome.call_id.clone(),
        wire_id: wire_id.to_string(),
        tool: outcome.tool.clone(),
        success: outcome.result.success,
        text: outcome.result_text().to_string(),
        artifact_id: outcome
            .result
            .metadata
            .get("persisted_artifact_id")
            .and_then(|v| v.as_str())
            .map(str::to_string),
    }
}

/// Remember that `call_id`'s full result is in `artifact_id` (see `result_artifacts`).
pub(super) fn remember_result_artifact(
    conn: &Connection,
    call_id: &str,
    artifact_id: &str,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO result_artifacts (call_id, artifact_id) VALUES (?1, ?2)
         ON CONFLICT(call_id) DO NOTHING",
        params![call_id, artifact_id],
    )?;
    Ok(())
}

/// The history of conversation `id`'s own agent (depth 0) for a new run: from its latest
/// "conversation so far" note (the messages it covers are left out), else from the start.
pub(super) fn load_history(conn: &Connection, id: &str) -> rusqlite::Result<Vec<Entry>> {
    let views = crate::history::history(conn, id)?;
    let raw: HashMap<i64, String> = crate::conversations::messages(conn, id)?
        .into_iter()
        .filter(|m| m.role == "tool" && m.depth == 0)
        .map(|m| (m.id, m.content))
        .collect();
    let stored = stored_result_artifacts(conn, id)?;
    let provider_ids = provider_call_ids(conn, id)?;
    let wire_id = |call_id: &str| {
        provider_ids
            .get(call_id)
            .cloned()
            .unwrap_or_else(|| call_id.to_string())
    };
    let notes = note_coverage(conn, id)?;
    let start = views.iter().rposition(|v| {
        v.message.depth == 0 && v.message.role == "context" && notes.contains_key(&v.message.id)
    });
    let mut entries = Vec::new();
    let mut covered = i64::MIN;
    if let Some(start) = start {
        let note = &views[start].message;
        covered = notes[&note.id];
        entries.push(Entry::new(Kind::Note, note.content.clone(), Some(note.id)));
    }
    for view in views {
        let m = view.message;
        if m.depth != 0 || m.id <= covered || m.role == "context" || m.role == "system" {
            continue;
        }
        let entry = match m.role.as_str() {
            "assistant" => {
                let calls = view
                    .calls
                    .into_iter()
                    .map(|c| EntryCall {
                        wire_id: wire_id(&c.call_id),
                        in_text: !provider_ids.contains_key(&c.call_id),
                        name: c.name,
                        params: c.params,
                    })
                    .collect();
                Entry::new(Kind::Answer, m.content, Some(m.id)).with_calls(calls)
            }
            "tool" => {
                let results = view
                    .results
                    .into_iter()
                    .map(|r| ResultRef {
                        artifact_id: stored.get(&r.call_id).cloned(),
                        wire_id: wire_id(&r.call_id),
                        call_id: r.call_id,
                        tool: r.name,
                        success: r.success,
                        text: r.text,
                    })
                    .collect();
                let content = raw.get(&m.id).cloned().unwrap_or_default();
                Entry::new(Kind::Results(results), content, Some(m.id))
                    .with_notes(view.notes.unwrap_or_default())
            }
            _ => Entry::new(Kind::Task, m.content, Some(m.id)),
        };
        entries.push(entry);
    }
    Ok(entries)
}

fn stored_result_artifacts(
    conn: &Connection,
    id: &str,
) -> rusqlite::Result<HashMap<String, String>> {
    let mut stmt = conn.prepare(
        "SELECT r.call_id, r.artifact_id FROM result_artifacts r
         JOIN tool_calls t ON t.call_id = r.call_id WHERE t.conversation_id = ?1",
    )?;
    let rows = stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// The provider's ids of a conversation's native calls, by call id.
fn provider_call_ids(conn: &Connection, id: &str) -> rusqlite::Result<HashMap<String, String>> {
    let mut stmt = conn.prepare(
        "SELECT call_id, provider_call_id FROM tool_calls
         WHERE conversation_id = ?1 AND provider_call_id IS NOT NULL",
    )?;
    let rows = stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

fn note_coverage(conn: &Connection, id: &str) -> rusqlite::Result<HashMap<i64, i64>> {
    let mut stmt = conn.prepare(
        "SELECT n.message_id, n.covers_through FROM context_notes n
         JOIN messages m ON m.id = n.message_id WHERE m.conversation_id = ?1",
    )?;
    let rows = stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// The error ending a run whose request the server refused twice as too long.
pub(super) fn too_long_error(agent: &str, profile: &str, window: u32, server: &str) -> String {
    format!(
        "agent `{agent}`: the model server refused the request as too long for its context \
         window, even with the conversation shortened as far as it goes ({server}). The model profile \
         `{profile}` assumes a window of {window} tokens: set its context window to what the \
         server really runs with (Settings → Models → Context window, or `context_window` in \
         models.yaml), or use a model with a larger window."
    )
}

impl Runner {
    /// Remember the artifact an oversized result was stored in by the gate, so a later run
    /// refers to it instead of storing the result again.
    pub(super) fn remember_persisted(&self, outcome: &CallOutcome) {
        let Some(id) = outcome
            .result
            .metadata
            .get("persisted_artifact_id")
            .and_then(|v| v.as_str())
        else {
            return;
        };
        if let Err(e) = self
            .ctx
            .with_db(|c| remember_result_artifact(c, &outcome.call_id, id))
        {
            tracing::warn!(call = %outcome.call_id, "cannot remember a result's artifact: {e}");
        }
    }

    /// The request for `agent`'s next answer, its history shortened to fit the window (see
    /// [`budget`]); emits `ContextCondensed` when the view changed and `ContextUsage` always
    /// (the meter follows the agent's requests; the note request is not the conversation's
    /// and is not metered). `reason` is `budget`, or `server` right after a refusal.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn prepare_request(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        model: &dyn ChatModel,
        history: &mut Vec<Entry>,
        state: &mut ViewState,
        reason: &str,
    ) -> Result<Prepared, Stop> {
        let profile = self.models.profile_for(agent);
        let choice = profile.as_ref().map(|p| self.tool_choice(p));
        let mode = choice.map_or(ToolCallMode::Text, |c| c.mode);
        let specs = self.agent_specs(agent, scope.conversation);
        let role = super::skills::with_listing(
            &agent.role_prompt,
            &self.ctx.skills().of_agent(&agent.name),
        );
        let (system, tools) = match mode {
            ToolCallMode::Native => (role, tool_definitions(&specs)),
            // `auto` is resolved above; text is the fallback.
            ToolCallMode::Text | ToolCallMode::Auto => {
                (super::system_prompt(&role, &specs), Vec::new())
            }
        };
        let guide = choice
            .filter(|c| c.guided)
            .and_then(|c| self.call_guide_in(agent, &specs, c.mode, c.family))
            .map(|g| Guide::clone(&g));
        // The tools' definitions are part of the prompt the server counts.
        let tools_tokens: u32 = tools
            .iter()
            .map(|t| {
                budget::estimate_text(&t.description)
                    + budget::estimate_text(&t.parameters.to_string())
            })
            .sum();
        let (window, reserve, _) = window_of(self, agent).await;
        let mut prompt_budget = window.tokens.saturating_sub(reserve);
        if let Some(refused) = state.refused_budget {
            prompt_budget = prompt_budget.min(refused);
        }
        let plan = budget::plan(
            history,
            budget::estimate_message(&system) + tools_tokens,
            prompt_budget,
            &state.calibration,
        );
        let mut referenced = 0;
        for &i in &plan.reference {
            self.store_results(scope, &mut history[i]);
            referenced += history[i].use_references();
        }
        let mut note = None;
        let mut condensed = 0;
        if let Some(before) = plan.condense_before {
            let (content, message_id) = self
                .write_note(
                    scope,
                    agent,
                    depth,
                    model,
                    &history[..before],
                    prompt_budget,
                    state,
                )
                .await?;
            let entry = Entry::new(Kind::Note, content.clone(), message_id);
            condensed = budget::apply_condensation(history, before, entry);
            note = Some((content, message_id));
        }
        let render = |history: &[Entry]| {
            let mut messages = Vec::with_capacity(history.len() + 1);
            messages.push(ChatMessage::new(Role::System, system.clone()));
            messages.extend(budget::render(history, mode));
            let estimate = budget::estimate_messages(&messages) + tools_tokens;
            (messages, estimate)
        };
        let (mut messages, mut estimate) = render(history);
        // 3. What is sent is what the meter shows and what must fit. Still over the budget
        // (the latest round does not fit beside the instructions and the note, or the note
        // came out longer than counted): the latest round's long results are cut to the head
        // that fits, each saying where the whole result is.
        let mut cut = 0;
        if let Some(latest) = budget::latest_results(history) {
            for _ in 0..3 {
                let fits = (f64::from(prompt_budget) / state.calibration.ratio()).floor() as u32;
                if state.calibration.apply(estimate) <= prompt_budget || estimate <= fits {
                    break;
                }
                self.store_results(scope, &mut history[latest]);
                let more = history[latest].cut_results(estimate - fits);
                if more == 0 {
                    break;
                }
                cut += more;
                (messages, estimate) = render(history);
            }
        }
        if !plan.is_empty() || cut > 0 {
            self.events.emit(EngineEvent::ContextCondensed {
                conversation_id: scope.conversation.to_string(),
                agent: agent.name.clone(),
                depth,
                message_id: note.as_ref().and_then(|n| n.1),
                results_referenced: referenced,
                results_cut: cut,
                messages_condensed: condensed,
                note: note.map(|n| n.0),
                reason: reason.to_string(),
            });
        }
        let usage = crate::conversations::ContextUsage {
            estimated_tokens: state.calibration.apply(estimate),
            reserved_tokens: reserve,
            window_tokens: window.tokens,
        };
        if depth == 0 {
            // The meter of a conversation opened again (a sub-agent's budget is its own).
            if let Err(e) = self
                .ctx
                .with_db(|c| crate::conversations::set_context_usage(c, scope.conversation, usage))
            {
                tracing::warn!("cannot record the context usage: {e}");
            }
        }
        self.events.emit(EngineEvent::ContextUsage {
            conversation_id: scope.conversation.to_string(),
            agent: agent.name.clone(),
            depth,
            estimated_tokens: usage.estimated_tokens,
            reserved_tokens: usage.reserved_tokens,
            window_tokens: usage.window_tokens,
        });
        Ok(Prepared {
            messages,
            tools,
            guide,
            estimate,
            unchanged: plan.is_empty() && cut == 0,
        })
    }

    /// Give every long result of `entry` an artifact holding it in full: the one it already
    /// has, else a new one (remembered in `result_artifacts`, so never stored twice). A result
    /// that cannot be stored keeps its text.
    fn store_results(&self, scope: &Scope<'_>, entry: &mut Entry) {
        let store = self.ctx.artifact_store();
        for result in entry.results_without_artifact() {
            let id = crate::artifacts::persist::persisted_id(&result.tool);
            let title = format!("Result of {} (call {})", result.tool, result.call_id);
            let created = store.create(&NewArtifact {
                conversation_id: scope.conversation,
                id: &id,
                title: &title,
                content_type: "text/plain",
                source: ArtifactSource::Tool,
                content: &result.text,
            });
            if let Err(e) = created {
                tracing::warn!(call = %result.call_id, "cannot store a result as an artifact: {e}");
                continue;
            }
            if let Err(e) = self
                .ctx
                .with_db(|c| remember_result_artifact(c, &result.call_id, &id))
            {
                tracing::warn!(call = %result.call_id, "cannot remember a result's artifact: {e}");
            }
            result.artifact_id = Some(id);
        }
    }

    /// Ask the model for a "conversation so far" note of `condensed` (not streamed to the
    /// chat) and store it as a `context` message covering them. When the model cannot write
    /// one, the engine writes a plain one, so the run goes on.
    #[allow(clippy::too_many_arguments)]
    async fn write_note(
        &self,
        scope: &Scope<'_>,
        agent: &AgentDef,
        depth: u32,
        model: &dyn ChatModel,
        condensed: &[Entry],
        prompt_budget: u32,
        state: &ViewState,
    ) -> Result<(String, Option<i64>), Stop> {
        let note_tokens = budget::note_tokens(prompt_budget);
        let room = prompt_budget
            .saturating_sub(note_tokens + budget::estimate_message(budget::CONDENSE_PROMPT) + 64);
        let chars =
            (f64::from(room) / state.calibration.ratio()) as usize * budget::BYTES_PER_TOKEN;
        let request = ChatRequest {
            messages: budget::condensation_request(condensed, chars * 9 / 10),
            max_tokens: Some(note_tokens),
            ..Default::default()
        };
        let written = match model.stream(&request, scope.cancel, &mut |_| {}).await {
            Ok(response) if !response.text.trim().is_empty() => response.text,
            Ok(_) => fallback_note(condensed, "its answer was empty"),
            Err(ModelError::Cancelled) => return Err(Stop::Cancelled),
            Err(e) => fallback_note(condensed, &e.to_string()),
        };
        let content = budget::note_content(written.trim(), condensed);
        let id = self.persist(scope, "context", &agent.name, &content, depth, None);
        // Messages keep their order in the history except notes (written later than the
        // messages kept after them), so a note's own id does not count.
        let covers = condensed
            .iter()
            .filter(|e| e.kind != Kind::Note)
            .filter_map(|e| e.message_id)
            .max();
        if let (Some(id), Some(covers)) = (id, covers) {
            let stored = self.ctx.with_db(|c| {
                c.execute(
                    "INSERT INTO context_notes (message_id, covers_through) VALUES (?1, ?2)",
                    params![id, covers],
                )
            });
            if let Err(e) = stored {
                tracing::warn!("cannot record what a note covers: {e}");
            }
        }
        Ok((content, id))
    }
}

/// A note the engine writes when the model could not: the tasks of the condensed messages.
fn fallback_note(condensed: &[Entry], why: &str) -> String {
    let tasks: Vec<String> = condensed
        .iter()
        .filter(|e| e.kind == Kind::Task)
        .map(|e| {
            let text: String = e.content.chars().take(300).collect();
            format!("- {text}")
        })
        .collect();
    format!(
        "(Earlier messages were condensed; no summary could be written: {why}.) The user's \
         earlier requests:\n{}",
        tasks.join("\n")
    )
}
