//! Starting a stdio server: the command looked up (in the login shell's PATH too), a clean
//! environment with the configured `env`, its own process group, and its stderr kept.

#![allow(deprecated)]

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::handler::{clean_server_text, MAX_LOG_CHARS};
use super::{fill, handler, handshake, ConnectOptions, McpClient, McpError, MAX_MESSAGE_BYTES};
use crate::mcp::config::{McpServerConfig, McpTransport};
use crate::secrets::Redactor;

/// Lines of a server's stderr kept for its status.
pub const STDERR_LINES: usize = 40;

/// Where a stdio server's command was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCommand {
    /// The program that runs.
    pub path: PathBuf,
    /// The PATH the child gets (ours, or the login shell's when that is where it was found).
    pub path_env: OsString,
    /// Found through the login shell's PATH rather than ours.
    pub from_login_shell: bool,
}

/// Find `command`: a path is used as is; a bare name is looked up in `path_env`, then in the
/// PATH printed by `login_shell -l -c` (macOS GUI apps do not inherit the shell's PATH).
pub fn resolve_command(
    command: &str,
    path_env: &OsStr,
    login_shell: Option<&Path>,
    cwd: &Path,
) -> Result<ResolvedCommand, McpError> {
    if Path::new(command).components().count() > 1 {
        return Ok(ResolvedCommand {
            path: cwd.join(command),
            path_env: path_env.to_os_string(),
            from_login_shell: false,
        });
    }
    if let Ok(path) = which::which_in(command, Some(path_env), cwd) {
        return Ok(ResolvedCommand {
            path,
            path_env: path_env.to_os_string(),
            from_login_shell: false,
        });
    }
    let shell_path = login_shell.and_then(login_shell_path);
    if let Some(shell_path) = &shell_path {
        if let Ok(path) = which::which_in(command, Some(shell_path), cwd) {
            return Ok(ResolvedCommand {
                path,
                path_env: shell_path.clone(),
                from_login_shell: true,
            });
        }
    }
    Err(McpError::CommandNotFound {
        command: command.to_string(),
        searched: match (&shell_path, login_shell) {
            (Some(_), Some(shell)) => format!("ours and {}'s login PATH", shell.display()),
            _ => "ours".to_string(),
        },
    })
}

/// The PATH a login shell sets up (`$SHELL -l -c 'printf %s "$PATH"'`), at most 5 s.
pub(super) fn login_shell_path(shell: &Path) -> Option<OsString> {
    if cfg!(windows) {
        return None;
    }
    let mut child = std::process::Command::new(shell)
        .args(["-l", "-c", "printf %s \"$PATH\""])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::warn!(shell = %shell.display(), "the login shell did not print its PATH in time");
                return None;
            }
        }
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(child.stdout.as_mut()?, &mut out).ok()?;
    let text = String::from_utf8(out).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| OsString::from(text))
}

/// Variables a stdio server gets from our environment; everything else (API keys in the
/// user's shell, our own settings) stays out. `LC_*` is added by prefix.
pub const INHERITED_ENV: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "XDG_RUNTIME_DIR",
    // Windows: programs fail without these.
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "HOMEDRIVE",
    "HOMEPATH",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
];

/// `cmd` set to start in its own process group (Unix) / job object (Windows), so ending it
/// ends whatever it started too.
pub fn in_own_group(cmd: tokio::process::Command) -> process_wrap::tokio::CommandWrap {
    let mut wrap = process_wrap::tokio::CommandWrap::from(cmd);
    #[cfg(unix)]
    wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    wrap.wrap(process_wrap::tokio::JobObject);
    wrap
}

/// The environment of a stdio child: [`INHERITED_ENV`] and `LC_*` from ours, `PATH`, then the
/// configured `env` (already resolved).
pub fn child_env(path_env: &OsStr, configured: &[(String, String)]) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            k.starts_with("LC_") || INHERITED_ENV.iter().any(|n| n.eq_ignore_ascii_case(&k))
        })
        .collect();
    env.push(("PATH".into(), path_env.to_os_string()));
    for (k, v) in configured {
        env.retain(|(ek, _)| ek != k.as_str());
        env.push((k.into(), v.into()));
    }
    env
}

/// The last lines of a child's stderr, secrets masked.
#[derive(Default)]
pub(super) struct StderrTail {
    lines: Mutex<VecDeque<String>>,
}

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    pub(super) fn get(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

/// The child process of a stdio server: killed (its whole process group) when dropped.
pub(super) struct Child {
    inner: Mutex<Option<Box<dyn process_wrap::tokio::ChildWrapper>>>,
    pub(super) pid: Option<u32>,
}

impl Child {
    pub(super) fn kill(&self) {
        if let Some(mut child) = self.inner.lock().unwrap_or_else(|p| p.into_inner()).take() {
            // Synchronous: SIGKILL to the group (Unix) / terminate the job (Windows).
            if let Err(e) = child.start_kill() {
                tracing::debug!("killing an MCP server: {e}");
            }
            // Reap it (and the group) without blocking the caller.
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = child.wait().await;
                });
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

pub(super) async fn connect_stdio(
    cfg: &McpServerConfig,
    opts: &ConnectOptions,
) -> Result<McpClient, McpError> {
    let McpTransport::Stdio {
        command,
        args,
        env,
        cwd,
    } = &cfg.transport
    else {
        unreachable!("connect_stdio is only called for stdio servers")
    };
    let our_path = opts
        .path_env
        .clone()
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    let shell = opts.login_shell.clone().or_else(|| {
        Some(std::env::var_os("SHELL").map_or_else(|| PathBuf::from("/bin/sh"), PathBuf::from))
    });
    let dir = cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let (command_s, shell_c) = (command.clone(), shell.clone());
    let (our_path_c, dir_c) = (our_path.clone(), dir.clone());
    let resolved = tokio::task::spawn_blocking(move || {
        resolve_command(&command_s, &our_path_c, shell_c.as_deref(), &dir_c)
    })
    .await
    .map_err(|e| McpError::Other(e.to_string()))??;
    let (configured, secret_values) = fill(opts, env).await;
    let redactor = Redactor::new(secret_values);

    let mut cmd = tokio::process::Command::new(&resolved.path);
    cmd.args(args)
        .env_clear()
        .envs(child_env(&resolved.path_env, &configured))
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = in_own_group(cmd).spawn().map_err(|e| McpError::Spawn {
        command: resolved.path.display().to_string(),
        message: if resolved.path.is_dir() {
            "it is a folder, not a program; give the program's path in mcp.json".into()
        } else {
            e.to_string()
        },
    })?;
    let pid = child.id();
    let stdin = child.stdin().take();
    let stdout = child.stdout().take();
    let stderr = child.stderr().take();
    let child = Arc::new(Child {
        inner: Mutex::new(Some(child)),
        pid,
    });
    let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
        return Err(McpError::Spawn {
            command: resolved.path.display().to_string(),
            message: "its stdin/stdout could not be opened".into(),
        });
    };
    let tail = Arc::new(StderrTail::default());
    if let Some(stderr) = stderr {
        spawn_stderr_reader(cfg.name.clone(), stderr, tail.clone(), redactor.clone());
    }
    tracing::info!(server = %cfg.name, command = %resolved.path.display(), login_shell = resolved.from_login_shell, pid, "starting MCP server");
    let oversized = Arc::new(tokio::sync::Notify::new());
    let stdout = LineWatch {
        inner: stdout,
        since_newline: 0,
        oversized: oversized.clone(),
    };
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin)
        .with_max_line_length(MAX_MESSAGE_BYTES);
    let h = handler(cfg, opts, &redactor);
    let handler_copy = h.clone();
    let service = match handshake(
        opts.connect_timeout,
        h,
        transport,
        super::lifecycle::lifecycle(),
    )
    .await
    {
        Ok(s) => s,
        Err(e) => {
            // Give stderr a moment to arrive: it usually says why.
            tokio::time::sleep(Duration::from_millis(100)).await;
            child.kill();
            return Err(McpError::Handshake {
                message: redactor.redact(&e.to_string()),
                stderr_tail: tail.get(),
            });
        }
    };
    let mut client = McpClient::new(
        cfg,
        service,
        handler_copy,
        tail,
        Some(child),
        Some(resolved),
        redactor,
    );
    client.oversized = oversized;
    Ok(client)
}

/// A server's stdout, watched for a line over [`MAX_MESSAGE_BYTES`]: rmcp drops such a line
/// with only a log entry, so the call it answered would wait for its timeout. The watch tells
/// the calls in flight at once.
pub(super) struct LineWatch<R> {
    inner: R,
    since_newline: usize,
    oversized: Arc<tokio::sync::Notify>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for LineWatch<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = &buf.filled()[before..];
        if !read.is_empty() {
            let was = self.since_newline;
            self.since_newline = match read.iter().rposition(|&b| b == b'\n') {
                Some(at) => read.len() - at - 1,
                None => was.saturating_add(read.len()),
            };
            // Once per line: when this read takes the line that ended here, or the one still
            // open, over the limit.
            let crossed = match read.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    (was <= MAX_MESSAGE_BYTES && was + at > MAX_MESSAGE_BYTES)
                        || self.since_newline > MAX_MESSAGE_BYTES
                }
                None => was <= MAX_MESSAGE_BYTES && self.since_newline > MAX_MESSAGE_BYTES,
            };
            if crossed {
                self.oversized.notify_waiters();
            }
        }
        polled
    }
}

pub(super) fn spawn_stderr_reader(
    server: String,
    stderr: tokio::process::ChildStderr,
    tail: Arc<StderrTail>,
    redactor: Redactor,
) {
    use tokio::io::AsyncBufReadExt;
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let line = clean_server_text(&redactor, &line, MAX_LOG_CHARS);
            tracing::debug!(server = %server, "stderr: {line}");
            tail.push(line);
        }
    });
}
