//! Permission interrupts: a run that needs a yes parks on [`PermissionBroker::ask`] until the UI
//! (or the terminal) answers through [`PermissionBroker::answer`] with the request id.
//!
//! Deny is the default for everything that is not an explicit approval: the timeout running out,
//! the run being cancelled, the listener going away ([`PermissionBroker::deny_all`] when a window
//! closes), or the broker being dropped. An answer for an unknown (or already answered) request id
//! is an error and changes nothing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::permissions::grants::GrantChoice;
use crate::permissions::Answer;

/// Why an answer was not delivered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("there is no pending permission request `{0}` (it was already answered, timed out or cancelled)")]
pub struct UnknownRequest(pub String);

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Resolution {
    /// The user answered.
    Answered,
    /// Nobody answered in time.
    TimedOut,
    /// The run was cancelled while waiting.
    Cancelled,
    /// The listener went away (window closed, broker dropped).
    ListenerGone,
}

/// An answer and, for "always allow", what to remember (`None`: the whole tool).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The answer.
    pub answer: Answer,
    /// What an `ApproveAlways` remembers; ignored for the other answers.
    pub grant: Option<GrantChoice>,
}

impl Reply {
    fn plain(answer: Answer) -> Reply {
        Reply {
            answer,
            grant: None,
        }
    }
}

/// A registered request waiting for [`PermissionBroker::wait`].
pub struct Pending {
    request_id: String,
    rx: oneshot::Receiver<Reply>,
}

type Slots = HashMap<String, (String, oneshot::Sender<Reply>)>;

/// Pending permission requests.
#[derive(Default)]
pub struct PermissionBroker {
    pending: Mutex<Slots>,
}

impl PermissionBroker {
    /// A broker with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register `request_id` (of `conversation`) and wait for its answer, at most `timeout`.
    /// Returns the answer (deny unless explicitly approved) and how the wait ended.
    pub async fn ask(
        &self,
        conversation: &str,
        request_id: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> (Answer, Resolution) {
        let pending = self.register(conversation, request_id);
        self.wait(pending, timeout, cancel).await
    }

    /// Register a request so it can be answered from now on (announce it only after this).
    pub fn register(&self, conversation: &str, request_id: &str) -> Pending {
        let (tx, rx) = oneshot::channel();
        self.lock()
            .insert(request_id.to_string(), (conversation.to_string(), tx));
        Pending {
            request_id: request_id.to_string(),
            rx,
        }
    }

    /// Wait for the answer to a registered request, at most `timeout`.
    pub async fn wait(
        &self,
        pending: Pending,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> (Answer, Resolution) {
        let (reply, resolution) = self.wait_reply(pending, timeout, cancel).await;
        (reply.answer, resolution)
    }

    /// [`Self::wait`], with the grant choice that came with the answer.
    pub async fn wait_reply(
        &self,
        pending: Pending,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> (Reply, Resolution) {
        let Pending { request_id, rx } = pending;
        let request_id = request_id.as_str();
        // In this order: a stop wins over the listener going away (the app's close does both,
        // stop first), so the request is recorded as stopped, the same every time.
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => (Reply::plain(Answer::Deny), Resolution::Cancelled),
            reply = rx => match reply {
                Ok(reply) => (reply, Resolution::Answered),
                Err(_) => (Reply::plain(Answer::Deny), Resolution::ListenerGone),
            },
            _ = tokio::time::sleep(timeout) => (Reply::plain(Answer::Deny), Resolution::TimedOut),
        };
        self.lock().remove(request_id);
        outcome
    }

    /// Deliver the user's answer to a pending request.
    pub fn answer(&self, request_id: &str, answer: Answer) -> Result<(), UnknownRequest> {
        self.answer_with(request_id, answer, None)
    }

    /// Deliver the user's answer with what an "always allow" remembers (check a rule choice
    /// with [`GrantChoice::checked`] first: the gate remembers only a valid one).
    pub fn answer_with(
        &self,
        request_id: &str,
        answer: Answer,
        grant: Option<GrantChoice>,
    ) -> Result<(), UnknownRequest> {
        let (_, tx) = self
            .lock()
            .remove(request_id)
            .ok_or_else(|| UnknownRequest(request_id.to_string()))?;
        tx.send(Reply { answer, grant })
            .map_err(|_| UnknownRequest(request_id.to_string()))
    }

    /// Deny every pending request (of `conversation`, or all when `None`): the listener is gone.
    pub fn deny_all(&self, conversation: Option<&str>) {
        let mut pending = self.lock();
        let ids: Vec<String> = pending
            .iter()
            .filter(|(_, (c, _))| conversation.is_none_or(|want| want == c))
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            // Dropping the sender resolves the wait as ListenerGone → deny.
            pending.remove(&id);
        }
    }

    /// Ids of the pending requests.
    pub fn pending(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    async fn wait_pending(b: &PermissionBroker, n: usize) {
        while b.pending().len() < n {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn an_answer_completes_the_pending_request() {
        let b = Arc::new(PermissionBroker::new());
        let cancel = CancellationToken::new();
        let waiter = {
            let b = b.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { b.ask("c", "r1", Duration::from_secs(60), &cancel).await })
        };
        wait_pending(&b, 1).await;
        assert_eq!(
            b.answer("nope", Answer::Approve),
            Err(UnknownRequest("nope".into()))
        );
        b.answer("r1", Answer::ApproveAlways).unwrap();
        assert_eq!(
            waiter.await.unwrap(),
            (Answer::ApproveAlways, Resolution::Answered)
        );
        assert!(
            b.answer("r1", Answer::Approve).is_err(),
            "answered once only"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn timeout_cancel_and_a_gone_listener_all_mean_deny() {
        let b = Arc::new(PermissionBroker::new());
        let cancel = CancellationToken::new();
        assert_eq!(
            b.ask("c", "t", Duration::from_secs(5), &cancel).await,
            (Answer::Deny, Resolution::TimedOut)
        );

        let waiter = {
            let (b, cancel) = (b.clone(), cancel.clone());
            tokio::spawn(async move { b.ask("c", "x", Duration::from_secs(60), &cancel).await })
        };
        wait_pending(&b, 1).await;
        cancel.cancel();
        assert_eq!(waiter.await.unwrap(), (Answer::Deny, Resolution::Cancelled));

        let cancel = CancellationToken::new();
        let (w1, w2) = {
            let (b1, c1) = (b.clone(), cancel.clone());
            let (b2, c2) = (b.clone(), cancel.clone());
            (
                tokio::spawn(
                    async move { b1.ask("closing", "a", Duration::from_secs(60), &c1).await },
                ),
                tokio::spawn(
                    async move { b2.ask("other", "b", Duration::from_secs(60), &c2).await },
                ),
            )
        };
        wait_pending(&b, 2).await;
        b.deny_all(Some("closing"));
        assert_eq!(w1.await.unwrap(), (Answer::Deny, Resolution::ListenerGone));
        assert_eq!(b.pending(), ["b"]);
        b.answer("b", Answer::Approve).unwrap();
        assert_eq!(w2.await.unwrap().0, Answer::Approve);

        // The app's close stops the runs, then drops every listener: always recorded as a stop.
        for i in 0..50 {
            let cancel = CancellationToken::new();
            let waiter = {
                let (b, c) = (b.clone(), cancel.clone());
                tokio::spawn(async move { b.ask("c", "z", Duration::from_secs(60), &c).await })
            };
            wait_pending(&b, 1).await;
            cancel.cancel();
            b.deny_all(None);
            assert_eq!(
                waiter.await.unwrap(),
                (Answer::Deny, Resolution::Cancelled),
                "attempt {i}"
            );
        }
    }
}
