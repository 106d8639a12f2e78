//! [`RunManager`]: the runs in progress, one per conversation, each cancellable by its
//! conversation id. The desktop shell starts runs through it, cancels them from the UI and
//! deletes conversations through it (a run is stopped and has ended before its conversation
//! goes).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::{RunOutcome, RunRequest, Runner};

/// A conversation already has a run in progress (in this process or another live one), or is
/// being deleted. The text names the conversation by its title and says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AlreadyRunning(pub String);

/// A run in progress (or a conversation being deleted): `cancel` stops it, `ended` is
/// cancelled once it has ended and stored what it stores.
#[derive(Clone)]
struct Active {
    cancel: CancellationToken,
    ended: CancellationToken,
}

/// Runs in progress.
pub struct RunManager {
    runner: Arc<Runner>,
    active: Arc<Mutex<HashMap<String, Active>>>,
}

impl RunManager {
    /// A manager starting runs with `runner`.
    pub fn new(runner: Arc<Runner>) -> Self {
        RunManager {
            runner,
            active: Arc::default(),
        }
    }

    /// The runner (and through it the permission broker).
    pub fn runner(&self) -> &Arc<Runner> {
        &self.runner
    }

    /// Start `request` on the current tokio runtime. Its outcome also arrives as a
    /// `RunEnded` event; the returned handle resolves to it.
    pub fn start(
        &self,
        request: RunRequest,
    ) -> Result<tokio::task::JoinHandle<RunOutcome>, AlreadyRunning> {
        let conversation = request.conversation_id.clone();
        let entry = Active {
            cancel: CancellationToken::new(),
            ended: CancellationToken::new(),
        };
        {
            let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
            if active.contains_key(&conversation) {
                return Err(AlreadyRunning(self.busy_here(&conversation)));
            }
            // Another process (the CLI, a second app) may be running it.
            let elsewhere = self.runner.ctx.with_db(|c| {
                crate::conversations::busy_message(c, &conversation, self.runner.ctx.owner())
            });
            if let Ok(Some(message)) = elsewhere {
                return Err(AlreadyRunning(message));
            }
            active.insert(conversation.clone(), entry.clone());
        }
        let runner = Arc::clone(&self.runner);
        let active = Arc::clone(&self.active);
        Ok(tokio::spawn(async move {
            let outcome = runner.run(request, entry.cancel).await;
            active
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&conversation);
            entry.ended.cancel();
            outcome
        }))
    }

    fn busy_here(&self, conversation: &str) -> String {
        let title = self
            .runner
            .ctx
            .with_db(|c| {
                c.query_row(
                    "SELECT title FROM conversations WHERE id = ?1",
                    [conversation],
                    |r| r.get::<_, String>(0),
                )
            })
            .ok()
            .filter(|t| !t.trim().is_empty());
        // An untitled conversation is "this conversation": its id means nothing to a person.
        let name = title.map_or_else(
            || "this conversation".to_string(),
            |t| format!("conversation '{t}'"),
        );
        format!("{name} already has a run in progress (or is being deleted); wait for it to finish or stop it")
    }

    /// Delete `conversation` with its messages, runs and artifacts. Its run, if any, is
    /// stopped first and waited for, so nothing it stores (an artifact, a message, a
    /// remembered "always allow") is written after the delete; no run of it can start
    /// meanwhile. Refused while another live process runs it. Returns false when it did not
    /// exist.
    pub async fn delete_conversation(
        &self,
        conversation: &str,
    ) -> Result<bool, crate::conversations::ConflictError> {
        let reserved = Active {
            cancel: CancellationToken::new(),
            ended: CancellationToken::new(),
        };
        loop {
            let running = {
                let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
                match active.get(conversation) {
                    Some(run) => run.clone(),
                    None => {
                        active.insert(conversation.to_string(), reserved.clone());
                        break;
                    }
                }
            };
            running.cancel.cancel();
            running.ended.cancelled().await;
        }
        let deleted = self.runner.ctx.with_db(|c| {
            crate::conversations::delete_unless_running_elsewhere(
                c,
                conversation,
                self.runner.ctx.owner(),
            )
        });
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(conversation);
        reserved.ended.cancel();
        deleted
    }

    /// Cut `conversation`'s history at its `turn`-th task (edit-and-resend, see
    /// [`crate::conversations::truncate_at_turn`]). Refused while it runs here or in another
    /// live process, or is being deleted; the check holds the lock `start` takes, so no run
    /// of it can start halfway. Returns how many messages were deleted.
    pub fn truncate_at_turn(
        &self,
        conversation: &str,
        turn: u32,
    ) -> Result<usize, crate::conversations::ConflictError> {
        let active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        if active.contains_key(conversation) {
            return Err(crate::conversations::ConflictError::Busy(
                self.busy_here(conversation),
            ));
        }
        let cut = self.runner.ctx.with_db(|c| {
            crate::conversations::truncate_at_turn(c, conversation, turn, self.runner.ctx.owner())
        });
        drop(active);
        cut
    }

    /// Cancel the run of `conversation`. Returns false when none is in progress.
    pub fn cancel(&self, conversation: &str) -> bool {
        match self
            .active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(conversation)
        {
            Some(run) => {
                run.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Stop the runs whose agents run the model file `model` now (it is being deleted): each
    /// ends as failed with `reason` (see [`Runner`]'s stop reasons), through the same
    /// cancellation as Cancel, so its tool calls stop and what it did is stored. Waits until
    /// they have ended. Returns their conversations.
    pub async fn stop_runs_using(&self, model: &std::path::Path, reason: &str) -> Vec<String> {
        let conversations = self.runner.mark_runs_using(model, reason);
        let stopping: Vec<Active> = {
            let active = self.active.lock().unwrap_or_else(|p| p.into_inner());
            conversations
                .iter()
                .filter_map(|c| active.get(c).cloned())
                .collect()
        };
        for run in &stopping {
            run.cancel.cancel();
        }
        for run in stopping {
            run.ended.cancelled().await;
        }
        conversations
    }

    /// Conversations with a run in progress.
    pub fn running(&self) -> Vec<String> {
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// Wait (blocking this thread, which must not be one of the runtime's) until no run is in
    /// progress or `timeout` passed; true when none is. The app calls it on exit after
    /// [`cancel_all`](Self::cancel_all), so stopped runs store what they did before the process ends.
    pub fn wait_idle(&self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self
                .active
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_empty()
            {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Cancel everything (the app is closing). Pending permission requests are denied too.
    pub fn cancel_all(&self) {
        for run in self
            .active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            run.cancel.cancel();
        }
        self.runner.broker().deny_all(None);
    }
}
