//! Models run on this computer: the app's own llama.cpp runtime (`artifactflow-runtime`, the
//! workspace's `crates/runtime`) in a process of its own, started on the first request.
//!
//! A profile with `api: local` names a GGUF file; the engine resolves a bare name against the
//! models folder before it builds the client ([`resolve_model`]). The client starts the runtime
//! for that file if it is not running (one model at a time: another file stops the one
//! running), waits for it to say it is ready, then speaks to it as to any OpenAI-compatible
//! server on 127.0.0.1, through the same streaming path (usage counts, cancellation, limits).
//!
//! Each start gets a key of its own (256 random bits, [`new_key`]), given through the
//! runtime's environment (never its command line) and sent with every request: the runtime
//! answers no other program of the computer, and no web page that points a name at 127.0.0.1.
//!
//! A runtime that crashes, runs out of memory or is killed costs its request only: the request
//! fails with an error saying so, and the next one starts a fresh runtime. A runtime left idle
//! for [`idle_unload`] is stopped, which returns all its memory. The runtime also exits by itself
//! when the process that started it ends (it watches its stdin).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::http::{HttpChatModel, RetryPolicy};
use crate::openai::OpenAi;
use crate::profiles::{Api, ModelProfile};
use crate::secrets::SecretResolver;
use crate::{ChatModel, ChatRequest, ChatResponse, ModelError, Streamed};

/// The environment variable that gives the runtime its per-launch key.
pub const RUNTIME_KEY_VARIABLE: &str = "ARTIFACTFLOW_RUNTIME_KEY";

/// The runtime's file name.
pub const RUNTIME_BIN: &str = if cfg!(windows) {
    "artifactflow-runtime.exe"
} else {
    "artifactflow-runtime"
};

/// How long loading a model may take before the request gives up.
const LOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// A local model's default idle timeout (reading a long prompt on a CPU takes a while before
/// the first token).
const LOCAL_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Default idle time before the runtime is stopped.
const DEFAULT_IDLE_UNLOAD: Duration = Duration::from_secs(300);

/// The idle time after which the runtime is stopped: `ARTIFACTFLOW_LOCAL_IDLE_SECS` when set
/// (tests), else five minutes.
pub fn idle_unload() -> Duration {
    std::env::var("ARTIFACTFLOW_LOCAL_IDLE_SECS")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .unwrap_or(DEFAULT_IDLE_UNLOAD)
}

/// `model` as a file: an existing path as it is, else a file of `models_dir` named `model` or
/// `model.gguf`. `None` when there is none (the error then names the folder).
pub fn resolve_model(model: &str, models_dir: &Path) -> Option<PathBuf> {
    let given = Path::new(model.trim());
    if given.is_absolute() || given.components().count() > 1 {
        return given.is_file().then(|| given.to_path_buf());
    }
    [
        models_dir.join(given),
        models_dir.join(format!("{}.gguf", model.trim())),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// Why a profile run on this computer has no model to run (see [`profile_model`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum MissingModel {
    /// Its `model` names no file of the models folder: the model was deleted, never installed,
    /// or the name is misspelt.
    NotInstalled,
    /// Its `model` is the path of a `.gguf` file, and there is no file there.
    FileNotFound,
}

/// The model of a profile run on this computer (`api: local`), as the disk has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProfileModel {
    /// The profile's name.
    pub profile: String,
    /// The file of the models folder it runs (`qwen3-1.7b-q8_0.gguf`), when it runs one of
    /// them (not a file elsewhere, not a missing one).
    pub file: Option<String>,
    /// Why it has no model to run; `None` when its model is there.
    pub missing: Option<MissingModel>,
}

/// `profile`'s model as the disk has it: the file of `models_dir` it runs, or why it has none.
/// `None` for a profile that does not run on this computer.
pub fn profile_model(profile: &ModelProfile, models_dir: &Path) -> Option<ProfileModel> {
    if profile.api != Api::Local {
        return None;
    }
    let found = resolve_model(&profile.model, models_dir);
    let file = found
        .as_deref()
        .filter(|path| path.parent().is_some_and(|dir| same_file(dir, models_dir)))
        .and_then(|path| path.file_name())
        .and_then(|name| name.to_str())
        .map(str::to_string);
    let given = Path::new(profile.model.trim());
    let missing = found.is_none().then(|| {
        if given.is_absolute() || given.components().count() > 1 {
            MissingModel::FileNotFound
        } else {
            MissingModel::NotInstalled
        }
    });
    Some(ProfileModel {
        profile: profile.name.clone(),
        file,
        missing,
    })
}

/// Whether `profile` runs the model file `file` (by its name in `models_dir` or by a path).
pub fn runs_file(profile: &ModelProfile, file: &Path, models_dir: &Path) -> bool {
    profile.api == Api::Local
        && resolve_model(&profile.model, models_dir).is_some_and(|path| same_file(&path, file))
}

/// Whether two paths name the same file or folder: the same once links and `..` are resolved,
/// or the same as written when one of them cannot be resolved (it is gone).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The runtime built for x86-64 processors without AVX2 (`scripts/stage-runtime.sh release`
/// builds it beside the main one on x86-64 Linux and Windows).
pub const COMPAT_RUNTIME_BIN: &str = if cfg!(windows) {
    "artifactflow-runtime-compat.exe"
} else {
    "artifactflow-runtime-compat"
};

/// Which runtime this processor can run. The main runtime's llama.cpp is built for AVX, AVX2,
/// FMA and F16C (`.cargo/config.toml`) and BMI2 (llama.cpp's default); on a processor without
/// them it would stop with an illegal instruction on every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuLevel {
    /// Everything the main runtime uses (on x86-64; any other architecture is built for its
    /// own baseline).
    Full,
    /// x86-64 with SSE 4.2 but not all of those: the compatible runtime (slower).
    Compat,
    /// x86-64 without SSE 4.2: neither build runs.
    TooOld,
}

/// This processor's [`CpuLevel`].
pub fn cpu_level() -> CpuLevel {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx") && has!("avx2") && has!("fma") && has!("f16c") && has!("bmi2") {
            CpuLevel::Full
        } else if has!("sse4.2") {
            CpuLevel::Compat
        } else {
            CpuLevel::TooOld
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    CpuLevel::Full
}

/// Where the runtime binary is: `ARTIFACTFLOW_RUNTIME` when set, else the build for this
/// processor beside the running program (or one folder up, for test binaries under
/// `target/*/deps`).
fn runtime_path() -> Result<PathBuf, ModelError> {
    if let Some(path) = std::env::var_os("ARTIFACTFLOW_RUNTIME") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()
        .map_err(|e| ModelError::Config(format!("cannot find the local model runtime: {e}")))?;
    let dir = exe.parent().unwrap_or(Path::new(".")).to_path_buf();
    let dirs: Vec<&Path> = [Some(dir.as_path()), dir.parent()]
        .into_iter()
        .flatten()
        .collect();
    let level = cpu_level();
    let path = pick_runtime(&dirs, level)?;
    if level == CpuLevel::Compat {
        tracing::info!(
            runtime = %path.display(),
            "this processor lacks AVX2 (or FMA, F16C, BMI2): using the compatible local model runtime"
        );
    }
    Ok(path)
}

/// The runtime to start for a processor of `level`: the first of `dirs` holding its build.
fn pick_runtime(dirs: &[&Path], level: CpuLevel) -> Result<PathBuf, ModelError> {
    let find = |name: &str| dirs.iter().map(|d| d.join(name)).find(|p| p.is_file());
    let shown = dirs
        .first()
        .map_or(String::new(), |d| d.display().to_string());
    match level {
        CpuLevel::Full => find(RUNTIME_BIN).ok_or_else(|| {
            ModelError::Config(format!(
                "the local model runtime ({RUNTIME_BIN}) is not installed next to {shown}: \
                 reinstall ArtifactFlow (or build it with `cargo build -p artifactflow-runtime`)"
            ))
        }),
        CpuLevel::Compat => find(COMPAT_RUNTIME_BIN).ok_or_else(|| {
            ModelError::Config(format!(
                "this computer's processor lacks AVX2 (or FMA, F16C, BMI2), which the local model \
                 runtime installed here needs, and its build for such processors \
                 ({COMPAT_RUNTIME_BIN}) is not installed next to {shown}: install a release of \
                 ArtifactFlow that includes it, or use a model server (Ollama, LM Studio) or a \
                 cloud profile"
            ))
        }),
        CpuLevel::TooOld => Err(ModelError::Config(
            "this computer's processor lacks SSE 4.2, which the local model runtime needs: use a \
             model server on another computer or a cloud profile"
                .to_string(),
        )),
    }
}

/// Whether the runtime would refuse to render `template` (a model file's chat template) with
/// tools: `Some(Err(why))` when it goes past the runtime's bounds (steps, output, memory, time;
/// checked by `artifactflow-runtime --check-template` in a watched process of its own),
/// `Some(Ok(()))` when it stays within them, `None` when it could not be checked (no runtime
/// installed for this processor).
pub fn check_template(template: &str) -> Option<Result<(), String>> {
    use std::io::{Read, Write};
    let program = runtime_path().ok()?;
    let mut child = std::process::Command::new(program)
        .arg("--check-template")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let text = template.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    // The runtime gives its check 10 s; this is a guard against a runtime that hangs.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let _ = writer.join();
    let mut out = String::new();
    child
        .stdout
        .take()?
        .take(64 * 1024)
        .read_to_string(&mut out)
        .ok()?;
    let verdict: serde_json::Value = serde_json::from_str(out.trim()).ok()?;
    if verdict.get("ok").and_then(serde_json::Value::as_bool) == Some(true) {
        return Some(Ok(()));
    }
    verdict
        .get("refused")
        .and_then(serde_json::Value::as_str)
        .map(|why| Err(why.to_string()))
}

/// What identifies a loaded runtime: the same file with the same settings is reused.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    model: PathBuf,
    ctx: Option<u32>,
}

struct Running {
    key: Key,
    child: Child,
    base_url: String,
    /// The per-launch key every request carries.
    secret: String,
    /// The context the runtime runs with (tokens).
    n_ctx: u32,
    last_used: Instant,
    /// Requests being served now: a runtime in use is never stopped as idle, however long its
    /// answer takes.
    busy: Arc<AtomicUsize>,
}

/// One request in flight on the runtime, for as long as it lives.
struct InUse(Arc<AtomicUsize>);

impl InUse {
    fn new(busy: &Arc<AtomicUsize>) -> InUse {
        busy.fetch_add(1, Ordering::SeqCst);
        InUse(Arc::clone(busy))
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The one runtime of this process (one loaded model at a time).
static RUNTIME: LazyLock<Arc<Mutex<Option<Running>>>> = LazyLock::new(Arc::default);

/// How to reach a runtime serving a model, and the mark that it is in use (it is not stopped
/// as idle while held).
struct Served {
    base_url: String,
    /// The runtime's per-launch key.
    secret: String,
    n_ctx: u32,
    _in_use: InUse,
}

impl Served {
    fn of(running: &Running) -> Served {
        Served {
            base_url: running.base_url.clone(),
            secret: running.secret.clone(),
            n_ctx: running.n_ctx,
            _in_use: InUse::new(&running.busy),
        }
    }
}

/// A runtime serving `key`, started (and the one running stopped) if needed.
async fn ensure(key: &Key, cancel: &CancellationToken) -> Result<Served, ModelError> {
    let mut slot = RUNTIME.lock().await;
    if let Some(running) = slot.as_mut() {
        let alive = matches!(running.child.try_wait(), Ok(None));
        if alive && running.key == *key {
            running.last_used = Instant::now();
            return Ok(Served::of(running));
        }
    }
    if let Some(mut old) = slot.take() {
        let _ = old.child.kill().await;
    }
    let running = start(key, cancel).await?;
    let answer = Served::of(&running);
    *slot = Some(running);
    drop(slot);
    watch_idle();
    Ok(answer)
}

/// Whether `profile`'s model is loaded now (its runtime running and ready). A runtime being
/// started counts as not loaded: the next request waits for the load.
pub fn is_loaded(profile: &ModelProfile) -> bool {
    let Ok(key) = key_of(profile) else {
        return false;
    };
    match RUNTIME.try_lock() {
        Ok(mut slot) => slot
            .as_mut()
            .is_some_and(|r| r.key == key && matches!(r.child.try_wait(), Ok(None))),
        Err(_) => false,
    }
}

/// The context `profile`'s model runs with, starting its runtime if needed (the engine's
/// window discovery).
pub async fn context_size(profile: &ModelProfile) -> Result<u32, ModelError> {
    let key = key_of(profile)?;
    Ok(ensure(&key, &CancellationToken::new()).await?.n_ctx)
}

/// A new per-launch key: 256 random bits as 64 hexadecimal digits.
fn new_key() -> Result<String, ModelError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        ModelError::Config(format!(
            "cannot make a key for the local model runtime (the system's random source failed: {e})"
        ))
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

async fn start(key: &Key, cancel: &CancellationToken) -> Result<Running, ModelError> {
    let program = runtime_path()?;
    let secret = new_key()?;
    let mut command = Command::new(&program);
    // The key goes in the environment, which other users cannot read (a command line they can).
    command.env(RUNTIME_KEY_VARIABLE, &secret);
    command.arg("--model").arg(&key.model);
    if let Some(ctx) = key.ctx {
        command.arg("--ctx").arg(ctx.to_string());
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| {
        ModelError::Config(format!(
            "cannot start the local model runtime {}: {e}",
            program.display()
        ))
    })?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut lines = BufReader::new(stdout).lines();
    let first = tokio::select! {
        line = tokio::time::timeout(LOAD_TIMEOUT, lines.next_line()) => line,
        _ = cancel.cancelled() => {
            let _ = child.kill().await;
            return Err(ModelError::Cancelled);
        }
    };
    let model = key.model.display();
    let line = match first {
        Ok(Ok(Some(line))) => line,
        Ok(Ok(None)) | Ok(Err(_)) => {
            let status = child
                .wait()
                .await
                .map(|s| s.to_string())
                .unwrap_or_default();
            return Err(ModelError::Config(format!(
                "the local model runtime stopped while loading {model} ({status}); the file may \
                 be damaged, or too large for this computer's memory"
            )));
        }
        Err(_) => {
            let _ = child.kill().await;
            return Err(ModelError::Timeout(format!(
                "loading {model} took more than {} s",
                LOAD_TIMEOUT.as_secs()
            )));
        }
    };
    let ready: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
    if let Some(error) = ready.get("error").and_then(|e| e.as_str()) {
        let _ = child.wait().await;
        return Err(ModelError::Config(format!(
            "the local model cannot run: {error}"
        )));
    }
    let Some(port) = ready.get("port").and_then(serde_json::Value::as_u64) else {
        let _ = child.kill().await;
        return Err(ModelError::Protocol(
            "the local model runtime did not say where it listens".into(),
        ));
    };
    let n_ctx = ready
        .get("n_ctx")
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0);
    // What the runtime had to settle for, in the log (the context size also reaches window
    // discovery, which the context meter shows).
    for key in ["template", "memory"] {
        if let Some(note) = ready.get(key).and_then(serde_json::Value::as_str) {
            tracing::warn!("local model {model}: {note}");
        }
    }
    // The runtime's stdout must keep draining (nothing more is written, but keep it open).
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Running {
        key: key.clone(),
        child,
        base_url: format!("http://127.0.0.1:{port}/v1"),
        secret,
        n_ctx,
        last_used: Instant::now(),
        busy: Arc::default(),
    })
}

/// Stop the runtime once it has been idle for [`idle_unload`]; one watcher per started runtime,
/// which ends with it.
fn watch_idle() {
    let slot = Arc::clone(&RUNTIME);
    let idle = idle_unload();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep((idle / 4).max(Duration::from_millis(100))).await;
            let mut slot = slot.lock().await;
            let Some(running) = slot.as_mut() else { return };
            if !matches!(running.child.try_wait(), Ok(None)) {
                *slot = None;
                return;
            }
            let in_use = running.busy.load(Ordering::SeqCst) > 0;
            if !in_use && running.last_used.elapsed() >= idle {
                let _ = running.child.kill().await;
                *slot = None;
                return;
            }
        }
    });
}

/// Mark the runtime as used now (a long answer keeps it loaded).
async fn touch() {
    if let Some(running) = RUNTIME.lock().await.as_mut() {
        running.last_used = Instant::now();
    }
}

/// Whether the runtime serving `key` has exited, and how.
async fn exit_of(key: &Key) -> Option<String> {
    let mut slot = RUNTIME.lock().await;
    let running = slot.as_mut().filter(|r| r.key == *key)?;
    match running.child.try_wait() {
        Ok(Some(status)) => {
            *slot = None;
            Some(status.to_string())
        }
        _ => None,
    }
}

/// Stop the runtime if it serves the model file `model` (its model is being deleted): its
/// process is killed and waited for, which returns all its memory. A request it was answering
/// fails (the engine stops the runs using the model first). Returns the process id stopped;
/// `None` when no runtime served that file.
///
/// A runtime still loading a model holds the slot until its load ends or its request is
/// cancelled; this waits for that.
pub async fn stop_serving(model: &Path) -> Option<u32> {
    let mut slot = RUNTIME.lock().await;
    let running = slot.as_mut().filter(|r| same_file(&r.key.model, model))?;
    let pid = running.child.id();
    let _ = running.child.kill().await;
    *slot = None;
    pid
}

/// The process id of the running runtime, if one is running (for tests and status).
pub async fn runtime_pid() -> Option<u32> {
    RUNTIME.lock().await.as_ref().and_then(|r| r.child.id())
}

/// A chat model run by the local runtime.
pub(crate) struct LocalModel {
    profile: ModelProfile,
    secrets: Arc<SecretResolver>,
}

impl LocalModel {
    pub(crate) fn new(profile: ModelProfile, secrets: Arc<SecretResolver>) -> LocalModel {
        LocalModel { profile, secrets }
    }
}

/// What identifies `profile`'s runtime; its model must be a file (the engine resolves names).
fn key_of(profile: &ModelProfile) -> Result<Key, ModelError> {
    let model = PathBuf::from(profile.model.trim());
    if !model.is_file() {
        return Err(ModelError::Config(format!(
            "model profile `{}`: the model file `{}` is not there; download or import it \
             (Models), or fix `model` in models.yaml",
            profile.name, profile.model
        )));
    }
    Ok(Key {
        model,
        ctx: profile.context_window,
    })
}

#[async_trait::async_trait]
impl ChatModel for LocalModel {
    async fn stream_events(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_event: &mut (dyn for<'a> FnMut(Streamed<'a>) + Send),
    ) -> Result<ChatResponse, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let key = key_of(&self.profile)?;
        // Held until the answer is complete: the idle timer never stops a runtime mid-answer.
        let runtime = ensure(&key, cancel).await?;
        let mut served = self.profile.clone();
        served.api = Api::Openai;
        served.base_url = runtime.base_url.clone();
        served.api_key = None;
        if served.timeout.is_none() {
            served.timeout = Some(LOCAL_IDLE_TIMEOUT.as_secs_f64());
        }
        // No retries: a runtime that failed is started again by the next request, not this one.
        let policy = RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        };
        let client = HttpChatModel::new(served, Arc::clone(&self.secrets), policy, OpenAi)
            .with_key(runtime.secret.clone());
        let result = client.stream_events(request, cancel, on_event).await;
        touch().await;
        drop(runtime);
        match result {
            Err(
                e @ (ModelError::Connection(_) | ModelError::Protocol(_) | ModelError::Timeout(_)),
            ) => {
                // Give a crashed runtime a moment to be reaped, then say so.
                tokio::time::sleep(Duration::from_millis(50)).await;
                match exit_of(&key).await {
                    Some(status) => Err(ModelError::Connection(format!(
                        "the local model runtime stopped during the answer ({status}); send again \
                         to start it anew"
                    ))),
                    None => Err(e),
                }
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::resolve_model;

    #[test]
    fn a_model_is_a_path_or_a_file_of_the_models_folder() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tiny.Q4.gguf");
        std::fs::write(&file, b"GGUF").unwrap();
        assert_eq!(resolve_model("tiny.Q4", dir.path()), Some(file.clone()));
        assert_eq!(
            resolve_model("tiny.Q4.gguf", dir.path()),
            Some(file.clone())
        );
        assert_eq!(
            resolve_model(file.to_str().unwrap(), Path::new("/elsewhere")),
            Some(file.clone())
        );
        assert_eq!(resolve_model("missing", dir.path()), None);
        assert_eq!(resolve_model("/no/such/file.gguf", dir.path()), None);
    }

    /// The build for the processor is chosen; a missing one is named with what to do, never
    /// a start that would die of an illegal instruction.
    #[test]
    fn the_runtime_is_the_build_this_processor_can_run() {
        use super::{pick_runtime, CpuLevel, COMPAT_RUNTIME_BIN, RUNTIME_BIN};
        let app = tempfile::tempdir().unwrap();
        let up = tempfile::tempdir().unwrap();
        let dirs = [app.path(), up.path()];
        std::fs::write(app.path().join(RUNTIME_BIN), b"").unwrap();
        assert_eq!(
            pick_runtime(&dirs, CpuLevel::Full).unwrap(),
            app.path().join(RUNTIME_BIN)
        );
        let lacking = pick_runtime(&dirs, CpuLevel::Compat)
            .unwrap_err()
            .to_string();
        assert!(
            lacking.contains("lacks AVX2") && lacking.contains(COMPAT_RUNTIME_BIN),
            "{lacking}"
        );
        std::fs::write(up.path().join(COMPAT_RUNTIME_BIN), b"").unwrap();
        assert_eq!(
            pick_runtime(&dirs, CpuLevel::Compat).unwrap(),
            up.path().join(COMPAT_RUNTIME_BIN)
        );
        assert_eq!(
            pick_runtime(&dirs, CpuLevel::Full).unwrap(),
            app.path().join(RUNTIME_BIN),
            "the main build wherever it runs"
        );
        let old = pick_runtime(&dirs, CpuLevel::TooOld)
            .unwrap_err()
            .to_string();
        assert!(old.contains("SSE 4.2"), "{old}");
        std::fs::remove_file(app.path().join(RUNTIME_BIN)).unwrap();
        let missing = pick_runtime(&dirs, CpuLevel::Full).unwrap_err().to_string();
        assert!(missing.contains("reinstall"), "{missing}");
    }

    /// A local profile's model is a file of the models folder, a path, or missing with a typed
    /// reason; a deleted file turns its profile's model into a missing one.
    #[test]
    fn a_profile_s_model_is_found_or_missing_with_its_reason() {
        use super::{profile_model, runs_file, MissingModel, ProfileModel};
        use crate::profiles::{Api, ModelProfile};
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let file = dir.path().join("qwen.gguf");
        std::fs::write(&file, b"GGUF").unwrap();
        let outside = elsewhere.path().join("mine.gguf");
        std::fs::write(&outside, b"GGUF").unwrap();
        let local = |name: &str, model: &str| ModelProfile::new(name, Api::Local, "", model);

        let by_name = local("Local", "qwen");
        let by_file = local("Coder", "qwen.gguf");
        let by_path = local("Path", file.to_str().unwrap());
        let other = local("Mine", outside.to_str().unwrap());
        let cloud = ModelProfile::new("cloud", Api::Openai, "https://x/v1", "qwen");
        for p in [&by_name, &by_file, &by_path] {
            assert!(runs_file(p, &file, dir.path()), "{}", p.name);
            assert_eq!(
                profile_model(p, dir.path()),
                Some(ProfileModel {
                    profile: p.name.clone(),
                    file: Some("qwen.gguf".into()),
                    missing: None
                })
            );
        }
        assert!(!runs_file(&other, &file, dir.path()));
        assert!(
            !runs_file(&cloud, &file, dir.path()),
            "a server's model is no file"
        );
        assert_eq!(profile_model(&cloud, dir.path()), None);
        let mine = profile_model(&other, dir.path()).unwrap();
        assert_eq!(
            (mine.file, mine.missing),
            (None, None),
            "a file elsewhere runs"
        );

        std::fs::remove_file(&file).unwrap();
        std::fs::remove_file(&outside).unwrap();
        for p in [&by_name, &by_file] {
            let state = profile_model(p, dir.path()).unwrap();
            assert_eq!(
                state.missing,
                Some(MissingModel::NotInstalled),
                "{}",
                p.name
            );
            assert_eq!(state.file, None);
        }
        assert_eq!(
            profile_model(&by_path, dir.path()).unwrap().missing,
            Some(MissingModel::FileNotFound)
        );
        assert!(
            !runs_file(&by_name, &file, dir.path()),
            "nothing runs a gone file"
        );
    }

    #[test]
    fn each_launch_gets_a_key_of_256_random_bits() {
        let (a, b) = (super::new_key().unwrap(), super::new_key().unwrap());
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }

    use std::path::Path;
}
