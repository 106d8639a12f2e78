//! Conversations as the front ends read and change them: the list and its pages, one
//! conversation opened with its messages and call records, rename, the transcript an export
//! writes, and the conversation permission grants. Each function takes the opened
//! [`AppContext`] and does its database work in one step; a failure is a [`StoreFailure`],
//! never a database type.

use serde::Serialize;

use crate::context::AppContext;
use crate::conversations::{self, ContextUsage, ConversationPage, ConversationSummary};
pub use crate::db::StoreFailure;
use crate::history::{self, HistoryMessage, Transcript};
use crate::permissions::grants::{self, Grant};

/// One conversation as a window opens it: its row, its messages with their call records,
/// and its context meter's last reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenedConversation {
    /// The conversation's row (title, times, counts).
    pub summary: ConversationSummary,
    /// Its messages in order, each assistant message with its calls as records.
    pub messages: Vec<HistoryMessage>,
    /// The share of its agent's window at its latest request, if it made one.
    pub context_usage: Option<ContextUsage>,
}

/// Every conversation, newest first, filtered by `query` (title and message text) if given.
pub fn list(
    ctx: &AppContext,
    query: Option<&str>,
) -> Result<Vec<ConversationSummary>, StoreFailure> {
    Ok(ctx.with_db(|c| conversations::list(c, query))?)
}

/// Conversations `offset..offset + limit`, newest first, filtered by `query` if given.
pub fn page(
    ctx: &AppContext,
    query: Option<&str>,
    limit: u32,
    offset: u32,
) -> Result<ConversationPage, StoreFailure> {
    Ok(ctx.with_db(|c| conversations::page(c, query, limit, offset))?)
}

/// The conversation `id` with its messages, read together; `None` when there is none.
pub fn open(ctx: &AppContext, id: &str) -> Result<Option<OpenedConversation>, StoreFailure> {
    Ok(ctx.with_db(|c| -> rusqlite::Result<_> {
        let Some(summary) = conversations::summary(c, id)? else {
            return Ok(None);
        };
        Ok(Some(OpenedConversation {
            summary,
            context_usage: conversations::context_usage(c, id)?,
            messages: history::history(c, id)?,
        }))
    })?)
}

/// Make sure the conversation `id` exists (titled `title` if it is new).
pub fn ensure(ctx: &AppContext, id: &str, title: &str) -> Result<(), StoreFailure> {
    Ok(ctx.with_db(|c| conversations::ensure(c, id, title))?)
}

/// Rename the conversation `id`; false when there is none.
pub fn rename(ctx: &AppContext, id: &str, title: &str) -> Result<bool, StoreFailure> {
    Ok(ctx.with_db(|c| conversations::rename(c, id, title))?)
}

/// The conversation `id` as an export writes it; `None` when there is none.
pub fn transcript(ctx: &AppContext, id: &str) -> Result<Option<Transcript>, StoreFailure> {
    Ok(ctx.with_db(|c| history::transcript(c, id))?)
}

/// Every conversation permission grant ("always allow" answers and "calls like this" rules).
pub fn grants(ctx: &AppContext) -> Result<Vec<Grant>, StoreFailure> {
    Ok(ctx.with_db(grants::list)?)
}

/// Take back the grant `grant_id` (the next such call asks again); false when there is none.
pub fn delete_grant(ctx: &AppContext, grant_id: &str) -> Result<bool, StoreFailure> {
    Ok(ctx.with_db(|c| grants::delete(c, grant_id))?)
}
