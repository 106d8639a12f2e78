//! The window remembers its size and position: the window-state plugin restores it at start,
//! and this module saves it while the app runs (debounced after moves and resizes, and at
//! once when the window closes), so even a crash or a kill does not lose it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{AppHandle, Manager, Runtime, Window, WindowEvent};
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

/// Quiet time after the last move/resize before saving.
const DEBOUNCE: Duration = Duration::from_millis(500);

static PENDING: AtomicBool = AtomicBool::new(false);

fn save<R: Runtime>(app: &AppHandle<R>) {
    if let Err(e) = app.save_window_state(StateFlags::all()) {
        tracing::warn!("cannot save the window state: {e}");
    }
}

/// Hook for `Builder::on_window_event`.
pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    match event {
        WindowEvent::Moved(_) | WindowEvent::Resized(_) => {
            if PENDING.swap(true, Ordering::SeqCst) {
                return;
            }
            let app = window.app_handle().clone();
            tauri::async_runtime::spawn(async move {
                tokio::time::sleep(DEBOUNCE).await;
                PENDING.store(false, Ordering::SeqCst);
                save(&app);
            });
        }
        WindowEvent::CloseRequested { .. } | WindowEvent::Destroyed => save(window.app_handle()),
        _ => {}
    }
}
