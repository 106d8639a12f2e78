//! Chat: agents, conversations, runs and permission answers.

use engine::api::catalog::{self, AgentInfo};
use engine::api::conversations;
use engine::conversations::{ConversationPage, ConversationSummary};
use engine::history::HistoryMessage;
use engine::permissions::Answer;
use engine::run::RunRequest;
use serde::Serialize;
use tauri::State;

use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// A conversation with its messages.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ConversationView {
    /// The conversation (None for a new, still empty one).
    pub summary: Option<ConversationSummary>,
    /// Every message, in order, with its tool calls read from their stored records.
    pub messages: Vec<HistoryMessage>,
    /// Is a run in progress?
    pub running: bool,
    /// The conversation's agent's share of its model's window at its latest request (the
    /// context meter), if a request was sent.
    pub context_usage: Option<engine::conversations::ContextUsage>,
}

/// Every agent.
#[tauri::command]
#[specta::specta]
pub fn list_agents(state: State<'_, AppState>) -> Result<Vec<AgentInfo>, AppError> {
    Ok(catalog::agents(&state.engine()?.ctx))
}

/// Conversations, newest first, optionally filtered by `query` (title or message text).
#[tauri::command]
#[specta::specta]
pub fn list_conversations(
    state: State<'_, AppState>,
    query: Option<String>,
) -> Result<Vec<ConversationSummary>, AppError> {
    Ok(conversations::list(&state.engine()?.ctx, query.as_deref())?)
}

/// Conversations `offset..offset + limit`, newest first, optionally filtered by `query` (title
/// or message text), with the number of matches: the chat's list loads it a page at a time.
/// Off the main thread (`async`), so a search typed quickly never holds up the window.
#[tauri::command(async)]
#[specta::specta]
pub fn list_conversation_page(
    state: State<'_, AppState>,
    query: Option<String>,
    limit: u32,
    offset: u32,
) -> Result<ConversationPage, AppError> {
    Ok(conversations::page(
        &state.engine()?.ctx,
        query.as_deref(),
        limit,
        offset,
    )?)
}

/// One conversation with its messages.
#[tauri::command]
#[specta::specta]
pub fn get_conversation(
    state: State<'_, AppState>,
    id: String,
) -> Result<ConversationView, AppError> {
    let engine = state.engine()?;
    let running = engine.runs.running().contains(&id);
    Ok(match conversations::open(&engine.ctx, &id)? {
        Some(opened) => ConversationView {
            summary: Some(opened.summary),
            messages: opened.messages,
            running,
            context_usage: opened.context_usage,
        },
        None => ConversationView {
            summary: None,
            messages: Vec::new(),
            running,
            context_usage: None,
        },
    })
}

/// Rename a conversation.
#[tauri::command]
#[specta::specta]
pub fn rename_conversation(
    state: State<'_, AppState>,
    id: String,
    title: String,
) -> Result<(), AppError> {
    let found = conversations::rename(&state.engine()?.ctx, &id, title.trim())?;
    found
        .then_some(())
        .ok_or_else(|| AppError::new(ErrorCode::NotFound, format!("no conversation `{id}`")))
}

/// Delete a conversation with its messages, runs and artifacts. Its run is stopped and waited
/// for first, so nothing it stores outlives the conversation; a run in another live process
/// (the CLI) refuses the delete. (Async: the wait must not block the window's main thread.)
#[tauri::command]
#[specta::specta]
pub async fn delete_conversation(state: State<'_, AppState>, id: String) -> Result<(), AppError> {
    let engine = state.engine()?;
    engine.runs.delete_conversation(&id).await?;
    Ok(())
}

/// Start `agent` on `task` in `conversation_id` (created if new). Progress arrives as
/// `engine-event` events; the end as a `run_ended` event. (Async so it runs on the app's tokio
/// runtime, where the run is spawned.)
#[tauri::command]
#[specta::specta]
pub async fn start_run(
    state: State<'_, AppState>,
    conversation_id: String,
    agent: String,
    task: String,
) -> Result<(), AppError> {
    let engine = state.engine()?;
    engine.runs.start(RunRequest {
        conversation_id,
        agent,
        task,
    })?;
    Ok(())
}

/// Edit-and-resend: cut the conversation's history at its `turn`-th task (0-based, counting
/// the user's own messages), deleting that task and everything after it, so the next
/// `start_run` goes on from there. Refused while the conversation runs. Returns how many
/// messages were deleted.
#[tauri::command]
#[specta::specta]
pub fn truncate_conversation(
    state: State<'_, AppState>,
    conversation_id: String,
    turn: u32,
) -> Result<u32, AppError> {
    let deleted = state
        .engine()?
        .runs
        .truncate_at_turn(&conversation_id, turn)?;
    Ok(u32::try_from(deleted).unwrap_or(u32::MAX))
}

/// Cancel the run of a conversation. Returns false when none was in progress.
#[tauri::command]
#[specta::specta]
pub fn cancel_run(state: State<'_, AppState>, conversation_id: String) -> Result<bool, AppError> {
    Ok(state.engine()?.runs.cancel(&conversation_id))
}

/// Answer a pending permission request by its id. With `approve_always`, `grant` says what to
/// remember: the tool in this conversation (also when absent) or a "calls like this" rule as
/// the user edited it. An invalid rule is refused with an `invalid_answer` error naming the
/// wrong pattern; the request keeps waiting.
#[tauri::command]
#[specta::specta]
pub fn answer_permission(
    state: State<'_, AppState>,
    request_id: String,
    answer: Answer,
    grant: Option<engine::permissions::grants::GrantChoice>,
) -> Result<(), AppError> {
    let grant = grant.map(|g| g.checked()).transpose().map_err(|e| {
        AppError::new(
            ErrorCode::InvalidAnswer,
            format!("the rule is not valid: {e}"),
        )
    })?;
    Ok(state
        .engine()?
        .runs
        .runner()
        .broker()
        .answer_with(&request_id, answer, grant)?)
}

/// Answer a form (or URL request) an MCP server asked for, by its id. Accepted values are
/// checked against the form first: invalid ones are an `invalid_answer` error naming each
/// field, nothing is sent and the form keeps waiting.
#[tauri::command]
#[specta::specta]
pub fn answer_elicitation(
    state: State<'_, AppState>,
    request_id: String,
    answer: engine::mcp::ElicitationReply,
) -> Result<(), AppError> {
    Ok(state.engine()?.elicitations().answer(&request_id, answer)?)
}

/// Every conversation's permission grants ("always allow" answers), for Settings.
#[tauri::command]
#[specta::specta]
pub fn list_permission_grants(
    state: State<'_, AppState>,
) -> Result<Vec<engine::permissions::grants::Grant>, AppError> {
    Ok(conversations::grants(&state.engine()?.ctx)?)
}

/// Delete a permission grant by its id (the next such call asks again). False when it was
/// already gone.
#[tauri::command]
#[specta::specta]
pub fn delete_permission_grant(
    state: State<'_, AppState>,
    grant_id: String,
) -> Result<bool, AppError> {
    Ok(conversations::delete_grant(
        &state.engine()?.ctx,
        &grant_id,
    )?)
}
