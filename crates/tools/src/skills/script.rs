//! Running a skill's script: the exact command line is known before it runs (the permission
//! dialog shows it), it runs in the skill's folder with a clean environment (what an MCP stdio
//! server gets: no app secrets), in its own process group, with a timeout and capped output.
//! It is not a sandbox: the script can do what the user's account can.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use std::io::Read;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::Skill;

/// The most bytes of stdout kept; the rest is counted and dropped. With stderr's, the whole
/// report stays under the size at which a result is stored as an artifact.
pub const STDOUT_CAP_BYTES: usize = 32 * 1024;
/// The most bytes of stderr kept.
pub const STDERR_CAP_BYTES: usize = 16 * 1024;
/// The timeout when the call gives none.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// The longest timeout a call may ask for.
pub const MAX_TIMEOUT_SECS: u64 = 600;

/// What will run, resolved before anything runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptPlan {
    /// The program started (the interpreter, or the script itself).
    pub program: PathBuf,
    /// Its arguments (the script's path first when an interpreter runs it).
    pub args: Vec<String>,
    /// The interpreter's name as chosen (`python3`), if one runs the script.
    pub interpreter: Option<String>,
    /// The script, relative to the skill's folder.
    pub script: String,
    /// The working folder: the skill's folder.
    pub cwd: PathBuf,
    /// The `PATH` the script gets.
    pub path_env: OsString,
}

impl ScriptPlan {
    /// The command line as a shell would take it (the interpreter by name).
    pub fn command_line(&self) -> String {
        let mut words: Vec<String> = Vec::new();
        match &self.interpreter {
            Some(name) => words.push(name.clone()),
            None => words.push(format!("./{}", self.script)),
        }
        words.extend(self.args.iter().cloned());
        shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "))
    }
}

/// The interpreter a script's extension (else its `#!` line) asks for; `None` runs it directly.
fn interpreter_for(script: &Path) -> Option<Vec<String>> {
    let ext = script
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let by_ext: Option<&[&str]> = match ext.as_deref() {
        Some("py") => Some(&["python3", "python"]),
        Some("sh") | Some("bash") => Some(&["bash", "sh"]),
        Some("js") | Some("mjs") | Some("cjs") => Some(&["node"]),
        Some("rb") => Some(&["ruby"]),
        Some("pl") => Some(&["perl"]),
        Some("ps1") => Some(&["pwsh", "powershell"]),
        _ => None,
    };
    if let Some(names) = by_ext {
        return Some(names.iter().map(|s| s.to_string()).collect());
    }
    // The first line only, of a regular file only (a named pipe is never opened).
    let (file, _) = super::files::open_regular(script).ok()?;
    let mut head = Vec::new();
    std::io::Read::take(file, 1024)
        .read_to_end(&mut head)
        .ok()?;
    let first = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(first).ok()?.strip_prefix("#!")?.trim();
    let mut words = line.split_whitespace();
    let prog = words.next()?;
    let name = if prog.ends_with("/env") {
        words.find(|w| !w.starts_with('-'))?
    } else {
        prog.rsplit('/').next()?
    };
    Some(vec![name.to_string()])
}

/// Resolve what running `script` (relative to the skill's folder) with `args` (one string,
/// split as a shell would, without expanding anything) starts.
pub fn plan(skill: &Skill, script: &str, args: &str) -> Result<ScriptPlan, String> {
    let path = super::files::resolve(&skill.dir, script)?;
    match super::files::open_regular(&path) {
        Ok(_) => {}
        Err(super::files::ReadRefusal::NotAFile(kind)) => {
            return Err(format!(
                "{script} is {kind}, not a script: a skill's scripts are regular files"
            ))
        }
        Err(refused) => return Err(refused.describe(script, 0)),
    }
    let cwd = skill
        .dir
        .canonicalize()
        .map_err(|e| format!("cannot open the skill's folder: {e}"))?;
    let script_rel = path
        .strip_prefix(&cwd)
        .unwrap_or(&path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    let words = shlex::split(args).ok_or_else(|| {
        format!("`{args}` cannot be split into arguments: close every quote you open")
    })?;
    let path_env = std::env::var_os("PATH").unwrap_or_default();
    let (program, interpreter, mut all_args) = match interpreter_for(&path) {
        Some(candidates) => {
            let found = candidates
                .iter()
                .find_map(|name| {
                    which::which_in(name, Some(&path_env), &cwd)
                        .ok()
                        .map(|p| (p, name))
                })
                .ok_or_else(|| {
                    format!(
                        "{script_rel} needs {}, which is not installed (not found on PATH)",
                        candidates.join(" or ")
                    )
                })?;
            (found.0, Some(found.1.clone()), vec![script_rel.clone()])
        }
        None => (path.clone(), None, Vec::new()),
    };
    all_args.extend(words);
    Ok(ScriptPlan {
        program,
        args: all_args,
        interpreter,
        script: script_rel,
        cwd,
        path_env,
    })
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptRun {
    /// Its exit code (`None` when a signal ended it, or it was stopped).
    pub code: Option<i32>,
    /// Did the timeout stop it?
    pub timed_out: bool,
    /// The first [`STDOUT_CAP_BYTES`] of stdout, as text.
    pub stdout: String,
    /// The first [`STDERR_CAP_BYTES`] of stderr, as text.
    pub stderr: String,
    /// Bytes of stdout and stderr that were dropped.
    pub dropped: (u64, u64),
    /// How long it ran.
    pub elapsed: Duration,
}

/// The child's process group, killed when this is dropped (the call was cancelled).
struct Group(Option<Box<dyn process_wrap::tokio::ChildWrapper>>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.start_kill();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = child.wait().await;
                });
            }
        }
    }
}

async fn read_capped(mut from: impl AsyncRead + Unpin, cap: usize) -> (Vec<u8>, u64) {
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                let take = room.min(n);
                kept.extend_from_slice(&buf[..take]);
                dropped += (n - take) as u64;
            }
        }
    }
    (kept, dropped)
}

/// Run `plan`, stopping it (its whole process group) after `timeout`.
pub async fn run(plan: &ScriptPlan, timeout: Duration) -> Result<ScriptRun, String> {
    let mut cmd = tokio::process::Command::new(&plan.program);
    cmd.args(&plan.args)
        .env_clear()
        .envs(crate::mcp::client::child_env(&plan.path_env, &[]))
        .current_dir(&plan.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let started = Instant::now();
    let mut child = crate::mcp::client::in_own_group(cmd).spawn().map_err(|e| {
        format!(
            "cannot start `{}`: {e}{}",
            plan.command_line(),
            if plan.interpreter.is_none() {
                " (a script without a known extension must be executable and start with #!)"
            } else {
                ""
            }
        )
    })?;
    let stdout = child.stdout().take();
    let stderr = child.stderr().take();
    let mut group = Group(Some(child));
    let out = tokio::spawn(async move {
        match stdout {
            Some(s) => read_capped(s, STDOUT_CAP_BYTES).await,
            None => (Vec::new(), 0),
        }
    });
    let err = tokio::spawn(async move {
        match stderr {
            Some(s) => read_capped(s, STDERR_CAP_BYTES).await,
            None => (Vec::new(), 0),
        }
    });
    let waited = {
        let child = group.0.as_mut().expect("the child is held until the end");
        tokio::time::timeout(timeout, child.wait()).await
    };
    let (code, timed_out) = match waited {
        Ok(Ok(status)) => (status.code(), false),
        Ok(Err(e)) => return Err(format!("waiting for the script failed: {e}")),
        Err(_) => (None, true),
    };
    // Ends whatever the script left running in its group (or the script itself, timed out),
    // so the pipes close.
    drop(group);
    let (stdout, dropped_out) = out.await.unwrap_or_default();
    let (stderr, dropped_err) = err.await.unwrap_or_default();
    Ok(ScriptRun {
        code,
        timed_out,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        dropped: (dropped_out, dropped_err),
        elapsed: started.elapsed(),
    })
}

impl ScriptRun {
    /// The run as the model reads it: how it ended, then each stream that said something.
    pub fn report(&self, plan: &ScriptPlan, timeout: Duration) -> String {
        let mut text = if self.timed_out {
            format!(
                "`{}` did not finish within {} s and was stopped (with everything it started).",
                plan.command_line(),
                timeout.as_secs()
            )
        } else {
            match self.code {
                Some(code) => format!(
                    "`{}` exited with code {code} after {:.1} s.",
                    plan.command_line(),
                    self.elapsed.as_secs_f64()
                ),
                None => format!(
                    "`{}` was ended by a signal after {:.1} s.",
                    plan.command_line(),
                    self.elapsed.as_secs_f64()
                ),
            }
        };
        for (name, body, dropped, cap) in [
            ("stdout", &self.stdout, self.dropped.0, STDOUT_CAP_BYTES),
            ("stderr", &self.stderr, self.dropped.1, STDERR_CAP_BYTES),
        ] {
            if body.is_empty() && dropped == 0 {
                continue;
            }
            text.push_str(&format!("\n\n{name}:\n{}", body.trim_end()));
            if dropped > 0 {
                text.push_str(&format!(
                    "\n[{dropped} more bytes of {name} were not kept: only the first {} KiB are]",
                    cap / 1024
                ));
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_no_script_and_is_never_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("piped");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: piped\ndescription: x\n---\n",
        )
        .unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join("scripts/run"))
            .status()
            .unwrap();
        assert!(made.success());
        let skill = super::super::load::load_skill_folder(&dir, &super::super::SkillOrigin::Config)
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(plan(&skill, "scripts/run", ""));
        });
        let planned = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("planning a named pipe did not finish within 10 s");
        let error = planned.unwrap_err();
        assert!(error.contains("named pipe"), "{error}");
    }
}
