//! The main window, created here (not from the config) so that it starts with the conversation
//! list's first page already in the page.
//!
//! The list is what the window shows first. Asked for over IPC, its page waited for the main
//! thread, which at start is busy showing the window and serving the page's files: at 5,000
//! conversations the answer came 250 ms after the question, while the query takes under 1 ms.
//! Read here, before the window exists, the page is in an initialization script
//! (`window.__ARTIFACTFLOW_FIRST_PAGE__`) when the UI's first module runs. The UI takes it on
//! the first load only (`ui/src/screens/chat/firstPage.ts`): a reload asks the engine again.

use crate::state::AppState;

/// Rows in the first page: `PAGE` in `ui/src/screens/chat/firstPage.ts`.
pub const FIRST_PAGE_ROWS: u32 = 60;

/// The global the UI reads the first page from.
const GLOBAL: &str = "__ARTIFACTFLOW_FIRST_PAGE__";

/// The initialization script that hands the UI the first page (`{rows, page}`), or an empty
/// script when the engine is unavailable or the query failed: the UI then asks as usual and
/// shows the error.
pub fn script(state: &AppState) -> String {
    let page = state.engine().ok().and_then(|engine| {
        engine::api::conversations::page(&engine.ctx, None, FIRST_PAGE_ROWS, 0)
            .map_err(|e| tracing::warn!("first conversation page: {e}"))
            .ok()
    });
    let value = page.map(|page| serde_json::json!({ "rows": FIRST_PAGE_ROWS, "page": page }));
    match value {
        // JSON is a JavaScript expression (ES2019 allows U+2028/9 in strings).
        Some(json) => format!(
            "Object.defineProperty(window, \"{GLOBAL}\", {{ value: {json}, configurable: true }});"
        ),
        None => String::new(),
    }
}

/// Create the main window from its config entry (`"create": false` in tauri.conf.json), with
/// the first page's script.
pub fn open_main_window(app: &tauri::App, script: &str) -> tauri::Result<()> {
    let config = app
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == "main")
        .cloned()
        .unwrap_or_default();
    let mut builder = tauri::WebviewWindowBuilder::from_config(app.handle(), &config)?;
    if !script.is_empty() {
        builder = builder.initialization_script(script);
    }
    builder.build()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_script_carries_the_engines_first_page_and_nothing_without_an_engine() {
        let dir = tempfile::tempdir().unwrap();
        let paths = engine::paths::AppPaths::under_home(dir.path());
        let state = AppState::open(Ok(paths), Arc::new(|_| {}));
        let engine = state.engine().unwrap();
        engine::api::conversations::ensure(&engine.ctx, "c1", "First </script> title").unwrap();
        let script = script(&state);
        let json = script
            .split_once("value: ")
            .and_then(|(_, rest)| rest.rsplit_once(", configurable"))
            .map(|(v, _)| v)
            .unwrap();
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(value["rows"], FIRST_PAGE_ROWS);
        assert_eq!(value["page"]["total"], 1);
        assert_eq!(value["page"]["items"][0]["id"], "c1");

        let broken = AppState::open(
            Err(engine::paths::PathsError::NoPlatformDirs),
            Arc::new(|_| {}),
        );
        assert_eq!(super::script(&broken), "");
    }
}
