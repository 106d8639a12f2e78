// Tell the process that the page has rendered, as the app's UI does with its first command.
window.__TAURI_INTERNALS__.invoke("ready");
