//! A bare Tauri 2 window that logs `startup_ms` the way the app does (into
//! `$ARTIFACTFLOW_HOME/logs/app.bare.log`), so `scripts/measure_app.sh` measures both alike.

use std::io::Write;
use std::sync::OnceLock;
use std::time::Instant;

static STARTED: OnceLock<Instant> = OnceLock::new();

#[tauri::command]
fn ready() {
    let Some(home) = std::env::var_os("ARTIFACTFLOW_HOME") else {
        return;
    };
    let logs = std::path::Path::new(&home).join("logs");
    let ms = STARTED.get().map_or(0, |s| s.elapsed().as_millis());
    let written = std::fs::create_dir_all(&logs).and_then(|()| {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(logs.join("app.bare.log"))?;
        writeln!(file, "UI ready startup_ms={ms}")
    });
    if let Err(err) = written {
        eprintln!("bare-window: cannot write the startup log: {err}");
    }
}

fn main() {
    STARTED.get_or_init(Instant::now);
    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![ready])
        .run(tauri::generate_context!())
        .expect("the bare window failed to start");
}
