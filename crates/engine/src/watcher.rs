//! Hot reload: a [`ConfigWatcher`] watches the config folder (`tools/`, `agents/`,
//! `models.yaml`, `settings.yaml`, `.env`) and reloads it after a short debounce.
//!
//! Reload is "parse everything, swap atomically": the new snapshot replaces the old one in one
//! step, and a file that no longer loads keeps its last good version active (see
//! [`AppContext::reload_config`]) while the error is reported through a
//! [`ConfigReloaded`](EngineEvent::ConfigReloaded) event. Dropping the watcher stops it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{new_debouncer, DebounceEventResult, Debouncer};

use crate::config::fingerprint::is_relevant;
use crate::context::AppContext;
use crate::events::{EngineEvent, EventSink};

/// How long the folder must be quiet before a reload (editors write in several steps).
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// A running watcher; stops when dropped.
pub struct ConfigWatcher {
    _debouncer: Debouncer<RecommendedWatcher>,
    handled: Arc<AtomicU64>,
}

/// Errors starting the watcher.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch {path} for changes: {message}")]
pub struct WatchError {
    /// The folder.
    pub path: std::path::PathBuf,
    /// The reason.
    pub message: String,
}

impl ConfigWatcher {
    /// Watch `ctx`'s config folder; every debounced change reloads it and emits
    /// [`EngineEvent::ConfigReloaded`] to `events`.
    pub fn start(ctx: Arc<AppContext>, events: Arc<dyn EventSink>) -> Result<Self, WatchError> {
        let dir = ctx.paths().config_dir.clone();
        let err = |e: &dyn std::fmt::Display| WatchError {
            path: dir.clone(),
            message: e.to_string(),
        };
        let handler_ctx = Arc::clone(&ctx);
        let handled = Arc::new(AtomicU64::new(0));
        let handler_handled = Arc::clone(&handled);
        let mut debouncer = new_debouncer(DEBOUNCE, move |result: DebounceEventResult| {
            let relevant = match &result {
                Ok(events) => events.iter().any(|e| is_relevant(&e.path)),
                Err(_) => true,
            };
            if !relevant {
                return;
            }
            // Reading the files (our own reload included) also produces events, and an in-app
            // save has reloaded already: reload only when a config file really changed since
            // the snapshot was read, or one change would be reloaded and announced twice.
            if handler_ctx.reload_config_if_changed() {
                announce_reload(&handler_ctx, &*events);
            }
            handler_handled.fetch_add(1, Ordering::SeqCst);
        })
        .map_err(|e| err(&e))?;
        debouncer
            .watcher()
            .watch(&dir, RecursiveMode::Recursive)
            .map_err(|e| err(&e))?;
        // The user-level skill folders count when Settings turn them on; one that cannot be
        // watched only loses hot reload of those skills.
        for folder in crate::config::user_skill_folders() {
            if folder.is_dir() {
                if let Err(e) = debouncer.watcher().watch(&folder, RecursiveMode::Recursive) {
                    tracing::warn!(folder = %folder.display(), "cannot watch skills: {e}");
                }
            }
        }
        Ok(ConfigWatcher {
            _debouncer: debouncer,
            handled,
        })
    }

    /// How many batches of config-file changes this watcher has handled (reloaded, or found
    /// to be no change). Lets a caller wait until the watcher has caught up with a write.
    pub fn handled(&self) -> u64 {
        self.handled.load(Ordering::SeqCst)
    }
}

/// Tell `events` that `ctx`'s config was reloaded, with the problems it has now. The one
/// announcement of a reload, whether a save or the watcher caused it.
pub fn announce_reload(ctx: &AppContext, events: &dyn EventSink) {
    let errors = ctx.config_problems();
    tracing::info!(problems = errors.len(), "config folder reloaded");
    events.emit(EngineEvent::ConfigReloaded { errors });
}
