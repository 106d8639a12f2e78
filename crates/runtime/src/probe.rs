//! A model file's chat template tried in a process of its own before it is used.
//!
//! Rendering is bounded in steps, nesting and output (see `template`), but not in memory: one
//! step of a Jinja template may build a 100 MB string, and a few more double it. So before the
//! runtime renders a template with tools, it starts itself again as
//! `artifactflow-runtime --render-probe` with the template on stdin; that process renders a
//! probe conversation ([`template::check_bounded`]) and prints its verdict. The runtime watches
//! it ([`check`]): past [`MEMORY`] or [`TIME`] it is killed and the template refused. A refused
//! template is never rendered here; the tools then go in the system message, through llama.cpp's
//! own template handling, which runs no code of the file.
//!
//! `artifactflow-runtime --check-template` does the same for another program (the app's model
//! library, when a file is imported or downloaded): the template on stdin, the verdict on stdout
//! (`{"ok": true}` or `{"refused": "…"}`).

use std::io::{Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use crate::template;

/// The most memory the check may use.
pub const MEMORY: u64 = 512 * 1024 * 1024;
/// The longest the check may take.
pub const TIME: Duration = Duration::from_secs(10);
/// The largest template read.
const MAX_TEMPLATE: u64 = 4 * 1024 * 1024;

fn read_template() -> Result<String, String> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_TEMPLATE)
        .read_to_string(&mut text)
        .map_err(|e| format!("it is not text: {e}"))?;
    Ok(text)
}

fn print_verdict(verdict: Result<(), String>) -> ExitCode {
    let line = match verdict {
        Ok(()) => serde_json::json!({ "ok": true }),
        Err(why) => serde_json::json!({ "refused": why }),
    };
    println!("{line}");
    ExitCode::SUCCESS
}

/// `--render-probe`: render the probe conversation with the template on stdin (unwatched: the
/// process that started this one watches it).
pub fn render_probe() -> ExitCode {
    print_verdict(read_template().and_then(|text| template::check_bounded(&text)))
}

/// `--check-template`: the template on stdin, checked in a watched process ([`check`]).
pub fn serve() -> ExitCode {
    print_verdict(read_template().and_then(|text| check(&text)))
}

/// Try `source` in a process of its own: `Err` says why it is refused.
pub fn check(source: &str) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("it could not be checked ({e})"))?;
    let mut child = Command::new(exe)
        .arg("--render-probe")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("it could not be checked ({e})"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let text = source.to_string();
    // Written from a thread: a child that stops reading must not block us.
    std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let pid = sysinfo::Pid::from_u32(child.id());
    let mut sys = sysinfo::System::new();
    let started = Instant::now();
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        sys.refresh_processes(sysinfo::ProcessesToUpdate::Some(&[pid]), true);
        let memory = sys.process(pid).map_or(0, sysinfo::Process::memory);
        let over = if memory > MEMORY {
            Some(format!(
                "rendering it took more than {} MB of memory",
                MEMORY >> 20
            ))
        } else if started.elapsed() > TIME {
            Some(format!("rendering it took more than {} s", TIME.as_secs()))
        } else {
            None
        };
        if let Some(why) = over {
            let _ = child.kill();
            let _ = child.wait();
            return Err(why);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut out = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = stdout.take(64 * 1024).read_to_string(&mut out);
    }
    let verdict: serde_json::Value = serde_json::from_str(out.trim()).unwrap_or_default();
    if verdict.get("ok").and_then(serde_json::Value::as_bool) == Some(true) {
        return Ok(());
    }
    match verdict.get("refused").and_then(serde_json::Value::as_str) {
        Some(why) => Err(why.trim_start_matches("the chat template ").to_string()),
        None => Err(format!("rendering it stopped its check ({status})")),
    }
}
