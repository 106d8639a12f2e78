//! What the backend pushes to the web view, and how it gets there.
//!
//! The web view fetches pushed events with the `next_events` command (a long poll over the IPC
//! protocol), not through Tauri's events. On Linux, Tauri registers every event listener and
//! delivers every event by evaluating script in the web view, and WebKitGTK turns each
//! evaluation's result into a JavaScript value in the app process: that alone loads WebKit's
//! JavaScript engine there (+5.7 MB resident, measured with `scripts/measure_app.sh
//! --breakdown`). A long poll also sends a streamed answer's tokens in batches, one round trip
//! per batch instead of one script per token.
//!
//! While the web view does not fetch (it hangs, or reloads), the [`Outbox`] keeps the newest
//! events within a count and a size in bytes ([`Limits`]), and a call's progress reports that
//! wait there coalesce into its newest one, so a tool reporting progress fast or a server
//! flooding events cannot grow the app's memory without bound.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use engine::check::Verdict;
use engine::events::EngineEvent;
use engine::models::ToolCallMode;
use serde::Serialize;
use tokio::sync::Notify;

/// The status changed (e.g. the config folder was reloaded); carries the new status.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct StatusChanged {
    /// The new status.
    pub status: engine::status::Status,
}

/// One event pushed to the web view.
// Nearly every event pushed is an engine event, so boxing it (to shrink the rare others)
// would cost an allocation per event and save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "kind", content = "event", rename_all = "snake_case")]
pub enum Pushed {
    /// An engine event (runs, tools, permissions, MCP servers…).
    Engine(EngineEvent),
    /// The status changed.
    StatusChanged(StatusChanged),
    /// A model download's progress (the Models screen, the first-run setup).
    ModelDownload(engine::models::library::PullProgress),
    /// Adding files to the library: each file started and finished (see `commands::library`).
    LibraryIngest(engine::api::library::Progress),
    /// A tool-use check's progress (the Models screen; see `commands::model_check`).
    ModelCheck(ModelCheckProgress),
    /// The user asked to close the window while the web view holds closing (see
    /// [`Outbox::hold_close`]); the window stays open until the web view closes it.
    CloseRequested,
}

/// Where a check is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum CheckPhase {
    /// Loading the model and asking the first item.
    Starting,
    /// Asking the items (`done` of `total` scored).
    Asking,
    /// Every item asked; the result is kept.
    Done,
    /// Stopped before the end; nothing is kept.
    Cancelled,
    /// The model could not be asked (`error` says why).
    Failed,
}

/// A tool-use check's progress, pushed as a `model_check` event (see `commands::model_check`).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ModelCheckProgress {
    /// The installed model (its name).
    pub model: String,
    /// The mode it is asked in (`auto` already resolved).
    pub mode: ToolCallMode,
    /// Guided calls.
    pub guided: bool,
    /// Where it is.
    pub phase: CheckPhase,
    /// Items scored.
    pub done: u32,
    /// Items in all.
    pub total: u32,
    /// The verdict of the item just scored.
    pub verdict: Option<Verdict>,
    /// Seconds since the check started.
    pub elapsed_secs: f64,
    /// Seconds still to go at the pace so far (none before the first item is scored).
    pub eta_secs: Option<f64>,
    /// Why it failed.
    pub error: Option<String>,
}

/// Events wait here, in order, until the web view fetches them.
pub struct Outbox {
    queue: Mutex<Queue>,
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
    /// Bytes (as JSON) of the events kept; the oldest are dropped beyond it, though the newest
    /// event is always kept.
    pub bytes: usize,
    /// Events handed out per fetch.
    pub batch: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            queued: 200_000,
            bytes: 32 * 1024 * 1024,
            batch: 5_000,
        }
    }
}

/// The waiting events, each with its size as JSON.
#[derive(Default)]
struct Queue {
    events: VecDeque<(Pushed, usize)>,
    /// The sum of the sizes.
    bytes: usize,
    /// The sequence number of the front event (each pushed event takes the next one).
    head: u64,
    /// The waiting progress report of each call, by (conversation, call): its sequence number.
    progress: HashMap<(String, String), u64>,
}

/// The call a progress report belongs to.
fn progress_key(event: &Pushed) -> Option<(String, String)> {
    match event {
        Pushed::Engine(EngineEvent::ToolProgress {
            conversation_id,
            call_id,
            ..
        }) => Some((conversation_id.clone(), call_id.clone())),
        // A download's reports coalesce like a call's, but its phase changes are each kept.
        Pushed::ModelDownload(p) if p.phase == engine::models::library::PullPhase::Downloading => {
            Some((String::new(), p.file.clone()))
        }
        // So do a tool-use check's, by model (the first part is no conversation id).
        Pushed::ModelCheck(p) if p.phase == CheckPhase::Asking => {
            Some(("model check".into(), p.model.clone()))
        }
        // An add's reports all coalesce: each carries the totals so far, and the job's result
        // lists every file's outcome.
        Pushed::LibraryIngest(_) => Some(("library".into(), String::new())),
        _ => None,
    }
}

/// The size of `event` as JSON, without building the text.
fn json_len(event: &Pushed) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, event);
    count.0
}

impl Queue {
    /// Take the front event.
    fn pop(&mut self) -> Option<Pushed> {
        let (event, size) = self.events.pop_front()?;
        self.bytes -= size;
        if let Some(key) = progress_key(&event) {
            if self.progress.get(&key) == Some(&self.head) {
                self.progress.remove(&key);
            }
        }
        self.head += 1;
        Some(event)
    }

    /// Replace the waiting progress report of `key`'s call with `event`, if one waits.
    fn coalesce(&mut self, key: &(String, String), event: Pushed, size: usize) -> Option<Pushed> {
        let Some(at) = self
            .progress
            .get(key)
            .and_then(|seq| seq.checked_sub(self.head))
        else {
            return Some(event);
        };
        match self.events.get_mut(at as usize) {
            Some(slot) if progress_key(&slot.0).as_ref() == Some(key) => {
                self.bytes = self.bytes - slot.1 + size;
                *slot = (event, size);
                None
            }
            _ => Some(event),
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
            queue: Mutex::new(Queue::default()),
            changed: Notify::new(),
            poll: AtomicU64::new(0),
            hold_close: AtomicBool::new(false),
            limits,
        }
    }

    /// Queue `event` for the web view: a call's progress report replaces its waiting one;
    /// beyond the [`Limits`] the oldest events are dropped.
    pub fn push(&self, event: Pushed) {
        let size = json_len(&event);
        let key = progress_key(&event);
        let dropped = {
            let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            let event = match &key {
                Some(key) => queue.coalesce(key, event, size),
                None => Some(event),
            };
            let mut dropped = 0;
            if let Some(event) = event {
                let seq = queue.head + queue.events.len() as u64;
                if let Some(key) = key {
                    queue.progress.insert(key, seq);
                }
                queue.events.push_back((event, size));
                queue.bytes += size;
                while queue.events.len() > self.limits.queued
                    || (queue.bytes > self.limits.bytes && queue.events.len() > 1)
                {
                    queue.pop();
                    dropped += 1;
                }
            }
            dropped
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
                if !queue.events.is_empty() {
                    let n = queue.events.len().min(self.limits.batch);
                    return (0..n).filter_map(|_| queue.pop()).collect();
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
            ..Limits::default()
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
            ..Limits::default()
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

    fn progress(call: &str, progress: f64, message: &str) -> Pushed {
        Pushed::Engine(EngineEvent::ToolProgress {
            conversation_id: "c1".into(),
            call_id: call.into(),
            progress,
            total: None,
            message: Some(message.into()),
        })
    }

    fn describe(e: &Pushed) -> String {
        match e {
            Pushed::Engine(EngineEvent::ToolProgress {
                call_id, progress, ..
            }) => format!("{call_id}@{progress}"),
            other => server(other),
        }
    }

    #[tokio::test]
    async fn a_calls_waiting_progress_reports_coalesce_into_its_newest() {
        let outbox = Outbox::default();
        outbox.push(progress("a", 1.0, ""));
        outbox.push(status_event(1));
        outbox.push(progress("a", 2.0, ""));
        outbox.push(progress("b", 1.0, ""));
        for p in 3..=10_000 {
            outbox.push(progress("a", f64::from(p), "a long step description"));
        }
        let got = outbox.next(Duration::from_secs(1)).await;
        assert_eq!(
            got.iter().map(describe).collect::<Vec<_>>(),
            ["a@10000", "s1", "b@1"],
            "one report per call, where its first one waited"
        );
        // Once fetched, the next report is a new event.
        outbox.push(progress("a", 10_001.0, ""));
        let got = outbox.next(Duration::from_secs(1)).await;
        assert_eq!(got.iter().map(describe).collect::<Vec<_>>(), ["a@10001"]);
    }

    #[tokio::test]
    async fn keeps_the_newest_events_within_the_byte_limit() {
        let outbox = Outbox::new(Limits {
            queued: 1_000,
            bytes: 10_000,
            batch: 1_000,
        });
        let big = "x".repeat(1_000);
        for n in 0..50 {
            outbox.push(progress(&format!("call{n}"), 1.0, &big));
        }
        let got = outbox.next(Duration::from_secs(1)).await;
        let bytes: usize = got.iter().map(json_len).sum();
        assert!(bytes <= 10_000, "{bytes} bytes kept");
        assert!(got.len() >= 8, "{} events kept", got.len());
        assert_eq!(describe(got.last().unwrap()), "call49@1");
        // An event over the limit on its own is still handed out.
        outbox.push(progress("huge", 1.0, &"y".repeat(20_000)));
        let got = outbox.next(Duration::from_secs(1)).await;
        assert_eq!(got.iter().map(describe).collect::<Vec<_>>(), ["huge@1"]);
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
