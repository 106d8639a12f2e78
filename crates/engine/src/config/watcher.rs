//! Hot reload: a [`ConfigWatcher`] watches the config folder (`tools/`, `agents/`,
//! `models.yaml`, `settings.yaml`, `.env`) and reloads it after a short debounce.
//!
//! Reload is "parse everything, swap atomically": the new snapshot replaces the old one in one
//! step, and a file that no longer loads keeps its last good version active (see
//! [`AppContext::reload_config`]) while the error is reported through a
//! [`ConfigReloaded`](EngineEvent::ConfigReloaded) event. Dropping the watcher stops it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{new_debouncer, DebounceEventResult, Debouncer};

use crate::context::AppContext;
use crate::events::{EngineEvent, EventSink};

/// How long the folder must be quiet before a reload (editors write in several steps).
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// A running watcher; stops when dropped.
pub struct ConfigWatcher {
    _debouncer: Debouncer<RecommendedWatcher>,
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
        let last = std::sync::Mutex::new(fingerprint(&dir));
        let watched = dir.clone();
        let mut debouncer = new_debouncer(DEBOUNCE, move |result: DebounceEventResult| {
            let relevant = match &result {
                Ok(events) => events.iter().any(|e| is_relevant(&e.path)),
                Err(_) => true,
            };
            if !relevant {
                return;
            }
            // Reading the files (our own reload included) also produces events; reload only
            // when a config file really changed, or a reload would trigger the next one.
            let now = fingerprint(&watched);
            {
                let mut last = last.lock().unwrap_or_else(|p| p.into_inner());
                if *last == now {
                    return;
                }
                *last = now;
            }
            handler_ctx.reload_config();
            let errors = handler_ctx.config_problems();
            tracing::info!(problems = errors.len(), "config folder reloaded");
            events.emit(EngineEvent::ConfigReloaded { errors });
        })
        .map_err(|e| err(&e))?;
        debouncer
            .watcher()
            .watch(&dir, RecursiveMode::Recursive)
            .map_err(|e| err(&e))?;
        Ok(ConfigWatcher {
            _debouncer: debouncer,
        })
    }
}

/// Path and content hash of every config file that matters, sorted (config files are small).
fn fingerprint(dir: &Path) -> Vec<(std::path::PathBuf, u64)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(path);
            } else if is_relevant(&path) {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(&path).ok().hash(&mut hasher);
                files.push((path, hasher.finish()));
            }
        }
    }
    files.sort();
    files
}

/// Changes that matter: Markdown in tools/agents, the YAML files and `.env`; not our own
/// temporary files from atomic writes.
fn is_relevant(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.starts_with(".artifactflow-") {
        return false;
    }
    name.ends_with(".md")
        || name.ends_with(".yaml")
        || name.ends_with(".yml")
        || name == ".env"
        || path.is_dir()
}
