//! [`LiveRuns`]: a runner's runs in progress, with the model file each of their agents runs now
//! (the conversation's agent and the sub-agents it waits on), so that deleting a model can stop
//! exactly the runs that use it; and why a run was stopped when it was the app, not the person,
//! that stopped it (its run then ends as failed with that reason rather than as cancelled).
//!
//! A run is entered when it starts and leaves when it ends ([`Runner::end`](super::Runner));
//! each round of an agent notes its model file (none for a model served over HTTP), and an
//! agent's note goes when it returns.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The runs in progress of one runner, by run id.
#[derive(Default)]
pub(crate) struct LiveRuns(Mutex<HashMap<String, LiveRun>>);

struct LiveRun {
    conversation: String,
    /// The model file of the agent at each depth (the conversation's agent is 0) that runs
    /// one on this computer.
    models: BTreeMap<u32, PathBuf>,
    /// Why the app stopped the run, when it did.
    stop_reason: Option<String>,
}

impl LiveRuns {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, LiveRun>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The run `run_id` of `conversation` started.
    pub(crate) fn enter(&self, run_id: &str, conversation: &str) {
        self.lock().insert(
            run_id.to_string(),
            LiveRun {
                conversation: conversation.to_string(),
                models: BTreeMap::new(),
                stop_reason: None,
            },
        );
    }

    /// The run ended: it leaves, with why the app stopped it if it did.
    pub(crate) fn leave(&self, run_id: &str) -> Option<String> {
        self.lock().remove(run_id).and_then(|run| run.stop_reason)
    }

    /// The agent at `depth` of the run asks `model` (a file run on this computer, or `None`
    /// for a model served over HTTP) for its next answer.
    pub(crate) fn note_model(&self, run_id: &str, depth: u32, model: Option<PathBuf>) {
        if let Some(run) = self.lock().get_mut(run_id) {
            match model {
                Some(file) => run.models.insert(depth, file),
                None => run.models.remove(&depth),
            };
        }
    }

    /// The agent at `depth` of the run returned (a sub-agent handed its answer back).
    pub(crate) fn agent_returned(&self, run_id: &str, depth: u32) {
        if let Some(run) = self.lock().get_mut(run_id) {
            run.models.remove(&depth);
        }
    }

    /// Mark the runs whose agents run the model file `model` now as stopped for `reason`;
    /// returns their conversations.
    pub(crate) fn stop_using(&self, model: &Path, reason: &str) -> Vec<String> {
        let mut conversations = Vec::new();
        for run in self.lock().values_mut() {
            let uses = run
                .models
                .values()
                .any(|file| crate::models::local::same_file(file, model));
            if uses {
                run.stop_reason = Some(reason.to_string());
                conversations.push(run.conversation.clone());
            }
        }
        conversations.sort();
        conversations
    }
}

/// While alive, the agent at `depth` of a run is at work; dropped when it returns (however it
/// returns), its model note goes.
pub(crate) struct AgentAtWork<'a> {
    live: &'a LiveRuns,
    run_id: &'a str,
    depth: u32,
}

impl<'a> AgentAtWork<'a> {
    /// The agent at `depth` of `run_id` starts.
    pub(crate) fn new(live: &'a LiveRuns, run_id: &'a str, depth: u32) -> Self {
        AgentAtWork {
            live,
            run_id,
            depth,
        }
    }
}

impl Drop for AgentAtWork<'_> {
    fn drop(&mut self) {
        self.live.agent_returned(self.run_id, self.depth);
    }
}
