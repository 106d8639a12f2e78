//! What the backend pushes to the web view, and how it gets there.
//!
//! The web view fetches pushed events with the `next_events` command (a long poll over the IPC
//! protocol), not through Tauri's events. On Linux, Tauri registers every event listener and
//! delivers every event by evaluating script in the web view, and WebKitGTK turns each
//! evaluation's result into a JavaScript value in the app process: that alone loads WebKit's
//! JavaScript engine there (+5.7 MB resident, measured with `scripts/measure_app.sh
//! --breakdown`). A long poll also sends a streamed answer's tokens in batches, one round trip
//! per batch instead of one script per token.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use engine::events::EngineEvent;
use serde::Serialize;
use tokio::sync::Notify;

/// The status changed (e.g. the config folder was reloaded); carries the new status.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct StatusChanged {
    /// The new status.
    pub status: engine::status::Status,
}

/// One event pushed to the web view.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "kind", content = "event", rename_all = "snake_case")]
pub enum Pushed {
    /// An engine event (runs, tools, permissions, MCP servers…).
    Engine(EngineEvent),
    /// The status changed.
    StatusChanged(StatusChanged),
    /// The user asked to close the window while the web view holds closing (see
    /// [`Outbox::hold_close`]); the window stays open until the web view closes it.
    CloseRequested,
}

/// Events wait here, in order, until the web view fetches them.
pub struct Outbox {
    queue: Mutex<VecDeque<Pushed>>,
    /// Woken when an event arrives or a newer poll supersedes the waiting one.
    changed: Notify,
    /// The newest poll: an older one (a page that reloaded) returns empty at once.
    poll: AtomicU64,
    /// Whether the web view asked to decide about closing the window.
    hold_close: AtomicBool,
    limits: Limits,
}

/// How much the outbox keeps and hands out.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Events kept while nothing fetches them (a web view that hangs or reloads); the oldest
    /// are dropped beyond it.
    pub queued: usize,
    /// Events handed out per fetch.
    pub batch: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            queued: 200_000,
            batch: 5_000,
        }
    }
}

impl Default for Outbox {
    fn default() -> Self {
        Outbox::new(Limits::default())
    }
}

impl Outbox {
    /// An empty outbox.
    pub fn new(limits: Limits) -> Self {
        Outbox {
            queue: Mutex::new(VecDeque::new()),
            changed: Notify::new(),
            poll: AtomicU64::new(0),
            hold_close: AtomicBool::new(false),
            limits,
        }
    }

    /// Queue `event` for the web view.
    pub fn push(&self, event: Pushed) {
        let dropped = {
            let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            queue.push_back(event);
            let over = queue.len().saturating_sub(self.limits.queued);
            queue.drain(..over);
            over
        };
        if dropped > 0 {
            tracing::warn!(
                dropped,
                "the window fetches no events: the oldest were dropped"
            );
        }
        self.changed.notify_waiters();
    }

    /// The queued events (at most a batch), waiting up to `wait` for one to arrive. Empty when
    /// nothing arrived, or when a newer call superseded this one.
    pub async fn next(&self, wait: Duration) -> Vec<Pushed> {
        let mine = self.poll.fetch_add(1, Ordering::SeqCst) + 1;
        // Wake an older poll, which then returns empty: only the newest takes events.
        self.changed.notify_waiters();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            // Registered before the checks, so an event pushed in between still wakes it.
            notified.as_mut().enable();
            if self.poll.load(Ordering::SeqCst) != mine {
                return Vec::new();
            }
            {
                let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                if !queue.is_empty() {
                    let n = queue.len().min(self.limits.batch);
                    return queue.drain(..n).collect();
                }
            }
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep_until(deadline) => return Vec::new(),
            }
        }
    }

    /// Whether closing the window is held for the web view to decide.
    pub fn holds_close(&self) -> bool {
        self.hold_close.load(Ordering::SeqCst)
    }

    /// Hold closing the window (`true`): a close request is then pushed as
    /// [`Pushed::CloseRequested`] instead of closing.
    pub fn hold_close(&self, held: bool) {
        self.hold_close.store(held, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn status_event(n: usize) -> Pushed {
        Pushed::Engine(EngineEvent::McpServerStatus {
            server: format!("s{n}"),
            status: engine::mcp::ServerStatus::Starting,
        })
    }

    fn server(e: &Pushed) -> String {
        match e {
            Pushed::Engine(EngineEvent::McpServerStatus { server, .. }) => server.clone(),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[tokio::test]
    async fn hands_out_queued_events_in_order_and_in_batches() {
        let outbox = Outbox::new(Limits {
            queued: 100,
            batch: 3,
        });
        for n in 0..5 {
            outbox.push(status_event(n));
        }
        let first = outbox.next(Duration::from_secs(5)).await;
        assert_eq!(
            first.iter().map(server).collect::<Vec<_>>(),
            ["s0", "s1", "s2"]
        );
        let second = outbox.next(Duration::from_secs(5)).await;
        assert_eq!(second.iter().map(server).collect::<Vec<_>>(), ["s3", "s4"]);
    }

    #[tokio::test]
    async fn a_waiting_fetch_wakes_when_an_event_arrives_and_returns_empty_at_its_deadline() {
        let outbox = Arc::new(Outbox::default());
        let waiting = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.next(Duration::from_secs(30)).await }
        });
        // The fetch is waiting (nothing queued yet) when the event comes.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished());
        outbox.push(status_event(7));
        let got = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the fetch woke")
            .unwrap();
        assert_eq!(got.iter().map(server).collect::<Vec<_>>(), ["s7"]);
        assert!(outbox.next(Duration::from_millis(20)).await.is_empty());
    }

    #[tokio::test]
    async fn a_newer_fetch_supersedes_a_waiting_one_so_no_event_goes_to_a_page_that_is_gone() {
        let outbox = Arc::new(Outbox::default());
        let old = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.next(Duration::from_secs(30)).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let new = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.next(Duration::from_secs(30)).await }
        });
        let old = tokio::time::timeout(Duration::from_secs(5), old)
            .await
            .expect("the older fetch returned")
            .unwrap();
        assert!(old.is_empty());
        outbox.push(status_event(1));
        let new = tokio::time::timeout(Duration::from_secs(5), new)
            .await
            .expect("the newer fetch woke")
            .unwrap();
        assert_eq!(new.iter().map(server).collect::<Vec<_>>(), ["s1"]);
    }

    #[tokio::test]
    async fn keeps_the_newest_events_when_nothing_fetches() {
        let outbox = Outbox::new(Limits {
            queued: 3,
            batch: 10,
        });
        for n in 0..5 {
            outbox.push(status_event(n));
        }
        let got = outbox.next(Duration::from_secs(1)).await;
        assert_eq!(
            got.iter().map(server).collect::<Vec<_>>(),
            ["s2", "s3", "s4"]
        );
    }

    #[test]
    fn pushed_events_serialise_with_their_kind() {
        let json = serde_json::to_value(status_event(1)).unwrap();
        assert_eq!(json["kind"], "engine");
        assert_eq!(json["event"]["type"], "mcp_server_status");
        assert_eq!(json["event"]["server"], "s1");
        let json = serde_json::to_value(Pushed::CloseRequested).unwrap();
        assert_eq!(json, serde_json::json!({ "kind": "close_requested" }));
    }
}
