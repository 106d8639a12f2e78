//! What the person has said to a view's tool calls (MCP Apps). A view is untrusted code that
//! can call tools in a loop, so its calls are not treated as an agent's:
//!
//! - every call a view makes is asked for, even of a tool whose permission is `auto` or that a
//!   rule allows (a deny rule still denies, without asking);
//! - a view's questions come one at a time: its next call waits for the person's answer to the
//!   one before (a view cannot pile up dialogs);
//! - after [`REFUSALS_TO_MUTE`] refusals in a row (the person's "Deny"; an approval starts the
//!   count again) the view is muted: its further calls are refused without asking, and the
//!   calls already waiting for their turn too, until the person lets it ask again
//!   ([`ViewStandings::unmute`], from the view's card).
//!
//! The standing is kept here, by the call whose view it is, for as long as the engine runs: it
//! holds whoever asks for the call (the card, or anything else that reaches the engine).
//!
//! Beside it is kept the latest result the view drew from its own calls
//! ([`ViewStanding::drew`]): a view's frame is its only memory (it runs without storage), so a
//! view drawn again (its conversation shown again, the window reloaded) gets its call's result
//! and then that one, and shows what it showed before, not what it showed first. Only results of
//! tools that declare the same view are kept (those are the results it draws), and only for as
//! long as the engine runs: a server started again with the app may not remember what it said.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// After this many refusals in a row, a view's further calls are refused without asking.
pub const REFUSALS_TO_MUTE: u32 = 3;

/// Why a muted view's call was not run, for the person (the call's record).
pub const MUTED_REASON: &str =
    "blocked: the person refused this view's calls three times in a row (its card can let it ask again)";

/// What the view gets back for a call refused because it is muted.
pub fn muted_message(tool: &str) -> String {
    format!(
        "calls from this view were blocked after three refusals: `{tool}` was not run, and further calls will not be either unless the person lets the view ask again in its card"
    )
}

/// The standing of every view that made a call, by the id of the call whose view it is.
#[derive(Default)]
pub struct ViewStandings(Mutex<HashMap<String, Arc<ViewStanding>>>);

impl ViewStandings {
    /// The standing of the view of the call `view_call` (new and unmuted when it made no call
    /// yet).
    pub fn of(&self, view_call: &str) -> Arc<ViewStanding> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(view_call.to_string())
            .or_default()
            .clone()
    }

    /// Is the view of the call `view_call` muted?
    pub fn is_muted(&self, view_call: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(view_call)
            .is_some_and(|s| s.is_muted())
    }

    /// The latest result the view of the call `view_call` drew from its own calls, if it made
    /// one that succeeded while the engine runs.
    pub fn latest(&self, view_call: &str) -> Option<LatestViewResult> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(view_call)
            .and_then(|s| s.latest())
    }

    /// Let the view of the call `view_call` ask again (its count of refusals starts again).
    /// Returns whether it was muted.
    pub fn unmute(&self, view_call: &str) -> bool {
        let standings = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(standing) = standings.get(view_call) else {
            return false;
        };
        standing.refusals.swap(0, Ordering::SeqCst) >= REFUSALS_TO_MUTE
    }
}

/// The latest result a view drew from a call it made: of a tool that declares the same view.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LatestViewResult {
    /// The tool called (its name on the view's own server).
    pub tool: String,
    /// The server's `CallToolResult`, as the view got it.
    pub result: serde_json::Value,
}

/// One view's standing: its refusals in a row, its turn to ask, and the latest result it drew.
#[derive(Default)]
pub struct ViewStanding {
    refusals: AtomicU32,
    /// Held while one of the view's calls is asked for: the next one waits its turn.
    turn: tokio::sync::Mutex<()>,
    latest: Mutex<Option<LatestViewResult>>,
}

impl ViewStanding {
    /// Has the person refused this view [`REFUSALS_TO_MUTE`] times in a row?
    pub fn is_muted(&self) -> bool {
        self.refusals.load(Ordering::SeqCst) >= REFUSALS_TO_MUTE
    }

    /// Wait for this view's turn to ask (the question before answered).
    pub(crate) async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.turn.lock().await
    }

    /// The person refused a call of this view.
    pub(crate) fn refused(&self) {
        self.refusals.fetch_add(1, Ordering::SeqCst);
    }

    /// The person approved a call of this view: the count starts again.
    pub(crate) fn approved(&self) {
        self.refusals.store(0, Ordering::SeqCst);
    }

    /// The view drew `result`, its call of `tool` (a tool declaring the same view): the latest.
    pub(crate) fn drew(&self, tool: &str, result: serde_json::Value) {
        *self.latest.lock().unwrap_or_else(|p| p.into_inner()) = Some(LatestViewResult {
            tool: tool.to_string(),
            result,
        });
    }

    /// The latest result the view drew from its own calls.
    pub fn latest(&self) -> Option<LatestViewResult> {
        self.latest
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_refusals_in_a_row_mute_a_view_until_it_is_let_ask_again() {
        let standings = ViewStandings::default();
        let view = standings.of("call_a");
        view.refused();
        view.refused();
        view.approved();
        view.refused();
        view.refused();
        assert!(
            !standings.is_muted("call_a"),
            "an approval starts the count again"
        );
        view.refused();
        assert!(standings.is_muted("call_a"));
        assert!(!standings.is_muted("call_b"), "another view is not");
        assert!(standings.of("call_a").is_muted(), "the same standing");
        assert!(standings.unmute("call_a"));
        assert!(!view.is_muted());
        assert!(!standings.unmute("call_a"), "it was not muted any more");
        assert!(!standings.unmute("call_b"));
    }

    #[test]
    fn the_latest_result_drawn_replaces_the_one_before_for_that_view_only() {
        let standings = ViewStandings::default();
        assert_eq!(standings.latest("call_a"), None);
        let view = standings.of("call_a");
        view.drew(
            "increment",
            serde_json::json!({"structuredContent": {"count": 1}}),
        );
        view.drew(
            "increment",
            serde_json::json!({"structuredContent": {"count": 2}}),
        );
        let latest = standings.latest("call_a").unwrap();
        assert_eq!(latest.tool, "increment");
        assert_eq!(latest.result["structuredContent"]["count"], 2);
        assert_eq!(standings.latest("call_b"), None, "another view has none");
    }
}
