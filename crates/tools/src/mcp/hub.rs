//! [`McpHub`]: the MCP servers of one engine, kept running in the background.
//!
//! The hub owns a small runtime of its own (one worker thread), so it works the same under
//! the desktop shell, the CLI and the tests, and opening the engine never waits for a server.
//! Each enabled server has a supervisor task: start → list tools → ready; when the session
//! ends (the server crashed or exited) its tools leave the registry, the status says failed
//! with the last lines of its stderr, and it is started again after a backoff (1 s, doubling
//! to 60 s); a command that cannot run (not found, a folder, not executable) fails once and
//! waits for its entry to change or a Restart. A config reload starts new servers, stops removed ones and restarts changed ones;
//! a broken `mcp.json` keeps the last good servers running. Every status change is an
//! update to the [`StatusSink`] (the engine makes it an `McpServerStatus` event). Dropping the hub kills every child's process group at
//! once (synchronously), so nothing outlives the engine. A process that exits without dropping
//! the engine (the CLI on Ctrl+C or SIGTERM, the app at its exit event, where the engine may
//! still be referenced) calls [`McpHub::shutdown`] first.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use indexmap::IndexMap;
use serde::Serialize;

use super::client::{
    connect, ConnectOptions, DeclineElicitation, ElicitationAnswer, ElicitationHandler,
    ElicitationRequest, McpClient, McpError, McpNotice,
};
use super::config::{McpConfig, McpServerConfig, McpTransport};
use super::tool::{tool_names, McpTool, McpToolInfo};
use crate::secrets::SecretResolver;
use crate::tools::ToolRef;

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ServerStatus {
    /// Being started (or restarted).
    Starting,
    /// Running, with this many tools.
    Ready {
        /// Tools it offers.
        tool_count: u32,
    },
    /// Not running: why, and the last lines of its stderr.
    Failed {
        /// What went wrong, and what to do.
        reason: String,
        /// The last lines the server wrote to stderr (secrets masked).
        stderr_tail: Vec<String>,
    },
    /// A remote server that needs the user to sign in.
    NeedsSignIn {
        /// What the server said.
        reason: String,
    },
    /// `"disabled": true` in mcp.json.
    Disabled,
}

/// One server as the status list shows it. No secret values: only the command line or URL.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpServerView {
    /// Its name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The command line (stdio) or URL (http), as configured.
    pub target: String,
    /// Where it is.
    pub status: ServerStatus,
    /// The program that was started (stdio), once resolved.
    pub command_path: Option<PathBuf>,
    /// The program was found through the login shell's PATH, not ours.
    pub command_from_login_shell: bool,
    /// The child's process id while it runs (stdio).
    pub pid: Option<u32>,
    /// The protocol version the session speaks while it runs (`2026-07-28`, or an older one
    /// such as `2025-11-25` for a server that does not know the newest).
    pub protocol_version: Option<String>,
    /// The last lines of its stderr (stdio, secrets masked).
    pub stderr_tail: Vec<String>,
}

/// How the hub starts servers.
#[derive(Clone, Default)]
pub struct HubOptions {
    /// Do not start servers at all (their status stays `starting` until started).
    pub no_start: bool,
    /// The PATH commands are looked up in (default: ours). For tests of the login shell lookup.
    pub path_env: Option<OsString>,
    /// The login shell asked for its PATH (default: `$SHELL`).
    pub login_shell: Option<PathBuf>,
}

impl std::fmt::Debug for HubOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubOptions")
            .field("no_start", &self.no_start)
            .finish_non_exhaustive()
    }
}

/// What the ready servers offer: their tools, and the skills of those that serve skills.
#[derive(Default)]
pub struct McpOffer {
    /// Every ready server's tools.
    pub tools: Vec<ToolRef>,
    /// Every ready server's skills (listed, no file read).
    pub skills: Vec<crate::skills::McpSkill>,
}

/// Publishes the ready servers' tools and skills (to the engine's registry and skills).
pub type ToolsSink = Arc<dyn Fn(McpOffer) + Send + Sync>;

/// Told each server's new status, by name (the engine turns it into its
/// `McpServerStatus` event).
pub type StatusSink = Arc<dyn Fn(&str, ServerStatus) + Send + Sync>;

struct Slot {
    config: McpServerConfig,
    status: ServerStatus,
    client: Option<Arc<McpClient>>,
    tools: Vec<Arc<McpTool>>,
    skills: Vec<crate::skills::McpSkill>,
    resolved: Option<super::client::ResolvedCommand>,
    stderr_tail: Vec<String>,
    supervisor: Option<tokio::task::JoinHandle<()>>,
    /// Bumped on every (re)start, so a stale supervisor's updates are ignored.
    generation: u64,
}

struct Inner {
    servers: Mutex<IndexMap<String, Slot>>,
    status_sink: StatusSink,
    tools_sink: ToolsSink,
    secrets: Option<Arc<SecretResolver>>,
    elicitation: RwLock<Arc<dyn ElicitationHandler>>,
    options: HubOptions,
    changed: tokio::sync::watch::Sender<u64>,
}

/// The MCP servers of one engine.
pub struct McpHub {
    inner: Arc<Inner>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// Forwards to whatever handler the hub has now (the CLI sets one after the engine opened).
struct CurrentElicitation(Arc<Inner>);

#[async_trait::async_trait]
impl ElicitationHandler for CurrentElicitation {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        let handler = self
            .0
            .elicitation
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        handler.elicit(request).await
    }

    fn completed(&self, server: &str, elicitation_id: &str) {
        let handler = self
            .0
            .elicitation
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        handler.completed(server, elicitation_id);
    }
}

/// No server of that name.
#[derive(Debug, Clone, thiserror::Error)]
#[error("there is no MCP server `{0}` in mcp.json")]
pub struct UnknownServer(pub String);

impl McpHub {
    /// A hub with no servers yet; [`McpHub::apply`] gives it its config. Its servers' status
    /// changes go to `status_sink`, the ready servers' tools to `tools_sink`.
    pub fn new(
        status_sink: StatusSink,
        tools_sink: ToolsSink,
        secrets: Option<Arc<SecretResolver>>,
        options: HubOptions,
    ) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("mcp-hub")
            .enable_all()
            .build()
            .expect("the MCP hub's runtime starts");
        McpHub {
            inner: Arc::new(Inner {
                servers: Mutex::new(IndexMap::new()),
                status_sink,
                tools_sink,
                secrets,
                elicitation: RwLock::new(Arc::new(DeclineElicitation)),
                options,
                changed: tokio::sync::watch::channel(0).0,
            }),
            runtime: Some(runtime),
        }
    }

    fn handle(&self) -> tokio::runtime::Handle {
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as the hub")
            .handle()
            .clone()
    }

    /// Who answers servers' elicitation requests from now on (default: decline).
    pub fn set_elicitation_handler(&self, handler: Arc<dyn ElicitationHandler>) {
        *self
            .inner
            .elicitation
            .write()
            .unwrap_or_else(|p| p.into_inner()) = handler;
    }

    /// Bring the servers in line with `config`: start new ones, stop removed ones, restart
    /// changed ones. A broken file changes nothing; a server whose entry is broken keeps its
    /// last good version. Never waits for a server.
    pub fn apply(&self, config: &McpConfig) {
        if config.file_broken {
            tracing::warn!("mcp.json does not load; keeping the last good MCP servers");
            return;
        }
        let broken: Vec<&str> = config
            .errors
            .iter()
            .filter_map(|e| e.field.as_deref()?.strip_prefix("mcpServers."))
            .collect();
        let mut announcements = Vec::new();
        let mut servers = self.lock();
        let mut desired: IndexMap<String, McpServerConfig> = config.servers.clone();
        for name in broken {
            if let Some(slot) = servers.get(name) {
                tracing::warn!(
                    server = name,
                    "mcp.json entry does not load; keeping its last good version"
                );
                desired.insert(name.to_string(), slot.config.clone());
            }
        }
        let removed: Vec<String> = servers
            .keys()
            .filter(|n| !desired.contains_key(*n))
            .cloned()
            .collect();
        for name in removed {
            if let Some(slot) = servers.shift_remove(&name) {
                stop_slot(slot);
                tracing::info!(server = %name, "MCP server removed");
            }
        }
        for (name, cfg) in desired {
            let same = servers.get(&name).is_some_and(|s| s.config == cfg);
            if same {
                continue;
            }
            if let Some(old) = servers.shift_remove(&name) {
                stop_slot(old);
            }
            let slot = Slot {
                status: if cfg.disabled {
                    ServerStatus::Disabled
                } else {
                    ServerStatus::Starting
                },
                config: cfg.clone(),
                client: None,
                tools: Vec::new(),
                skills: Vec::new(),
                resolved: None,
                stderr_tail: Vec::new(),
                supervisor: None,
                generation: 0,
            };
            servers.insert(name.clone(), slot);
            if !cfg.disabled {
                self.start_locked(&mut servers, &name);
            }
            announcements.push((name.clone(), servers[&name].status.clone()));
        }
        // Keep the file's order.
        let order: Vec<String> = config.servers.keys().cloned().collect();
        servers.sort_by(|a, _, b, _| {
            let pos = |n: &str| order.iter().position(|o| o == n).unwrap_or(usize::MAX);
            pos(a).cmp(&pos(b))
        });
        self.inner.publish_locked(&servers);
        drop(servers);
        for (name, status) in announcements {
            self.inner.announce(&name, status);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, IndexMap<String, Slot>> {
        self.inner.lock()
    }

    fn start_locked(&self, servers: &mut IndexMap<String, Slot>, name: &str) {
        if self.inner.options.no_start {
            return;
        }
        let Some(slot) = servers.get_mut(name) else {
            return;
        };
        slot.generation += 1;
        let generation = slot.generation;
        let inner = self.inner.clone();
        let name = name.to_string();
        slot.supervisor = Some(self.handle().spawn(supervise(inner, name, generation)));
    }

    /// Stop and start the server `name` again (also a failed or signed-out one).
    pub fn restart(&self, name: &str) -> Result<(), UnknownServer> {
        let mut servers = self.lock();
        let slot = servers
            .get_mut(name)
            .ok_or_else(|| UnknownServer(name.to_string()))?;
        if let Some(task) = slot.supervisor.take() {
            task.abort();
        }
        if let Some(client) = slot.client.take() {
            client.kill();
        }
        slot.tools.clear();
        slot.skills.clear();
        if slot.config.disabled {
            return Ok(());
        }
        slot.status = ServerStatus::Starting;
        self.start_locked(&mut servers, name);
        self.inner.publish_locked(&servers);
        drop(servers);
        self.inner.announce(name, ServerStatus::Starting);
        Ok(())
    }

    /// Sign in to remote server `name` ([`super::auth::sign_in`]: `open` shows the
    /// authorization page), then restart it with its new tokens.
    pub async fn sign_in(
        &self,
        name: &str,
        open: super::auth::BrowserOpener,
    ) -> Result<super::auth::SignedIn, super::auth::SignInError> {
        use super::auth::SignInError;
        let cfg = self
            .lock()
            .get(name)
            .map(|s| s.config.clone())
            .ok_or_else(|| SignInError::UnknownServer(name.to_string()))?;
        let secrets = self.inner.secrets.clone().ok_or(SignInError::NoKeyring)?;
        let signed = super::auth::sign_in(&cfg, &secrets, None, open).await?;
        let _ = self.restart(name);
        Ok(signed)
    }

    /// Sign out of the server `name`: forget its tokens (keyring) and restart it, so its
    /// status says it needs sign-in again.
    pub fn sign_out(&self, name: &str) -> Result<(), super::auth::SignInError> {
        use super::auth::SignInError;
        if self.lock().get(name).is_none() {
            return Err(SignInError::UnknownServer(name.to_string()));
        }
        let secrets = self.inner.secrets.clone().ok_or(SignInError::NoKeyring)?;
        let store = secrets.store().ok_or(SignInError::NoKeyring)?;
        super::auth::sign_out(store, name)?;
        let _ = self.restart(name);
        Ok(())
    }

    /// Every configured server, in file order.
    pub fn servers(&self) -> Vec<McpServerView> {
        self.lock()
            .iter()
            .map(|(name, slot)| view(name, slot))
            .collect()
    }

    /// One server's view.
    pub fn server(&self, name: &str) -> Option<McpServerView> {
        self.lock().get(name).map(|slot| view(name, slot))
    }

    /// The tool its views call `tool` (its real name) on the server `server`: one views may
    /// call (its `visibility` has `"app"`, or it has none), those only views may call included.
    /// `None` when the server is not ready or has no such tool for views.
    pub fn view_tool(&self, server: &str, tool: &str) -> Option<Arc<McpTool>> {
        let servers = self.lock();
        let slot = servers.get(server)?;
        slot.tools
            .iter()
            .find(|t| t.remote_name() == tool && t.app_visible())
            .cloned()
    }

    /// How the server `name` is launched now (see [`super::tool::launch_digest`]); `None` when
    /// `mcp.json` has no such server.
    pub fn launch_digest(&self, name: &str) -> Option<String> {
        let servers = self.lock();
        servers
            .get(name)
            .map(|slot| super::tool::launch_digest(&slot.config))
    }

    /// The tools of the server `name` (empty until it is ready).
    pub fn tools(&self, name: &str) -> Result<Vec<McpToolInfo>, UnknownServer> {
        self.lock()
            .get(name)
            .map(|slot| slot.tools.iter().map(|t| t.info().clone()).collect())
            .ok_or_else(|| UnknownServer(name.to_string()))
    }

    /// The live client of the server `name`, when it is ready.
    pub fn client(&self, name: &str) -> Option<Arc<McpClient>> {
        self.lock().get(name)?.client.clone()
    }

    /// Wait until the server `name` is no longer starting (ready, failed, needs sign-in,
    /// disabled), at most `timeout`; its status then (still `Starting` after the timeout).
    pub async fn wait_settled(
        &self,
        name: &str,
        timeout: Duration,
    ) -> Result<ServerStatus, UnknownServer> {
        let mut rx = self.inner.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let status = self
                .server(name)
                .ok_or_else(|| UnknownServer(name.to_string()))?
                .status;
            if status != ServerStatus::Starting {
                return Ok(status);
            }
            if tokio::time::timeout_at(deadline, rx.changed())
                .await
                .is_err()
            {
                return Ok(status);
            }
        }
    }

    /// Stop every server now (their process groups are killed).
    pub fn stop_all(&self) {
        self.stop_all_tasks();
    }

    /// [`McpHub::stop_all`], returning the aborted supervisors.
    fn stop_all_tasks(&self) -> Vec<tokio::task::JoinHandle<()>> {
        let slots: Vec<Slot> = self.lock().drain(..).map(|(_, s)| s).collect();
        let tasks = slots.into_iter().filter_map(stop_slot).collect();
        self.inner.publish();
        tasks
    }

    /// Stop every server before the process exits: the ready ones' process groups are killed
    /// at once, and this waits (at most `wait`) until the supervisors of servers still starting
    /// have dropped their children too (which kills their groups), since nothing runs after
    /// the process exits. Blocks the calling thread; the hub's own runtime does the work.
    pub fn shutdown(&self, wait: Duration) {
        let tasks = self.stop_all_tasks();
        let deadline = std::time::Instant::now() + wait;
        while tasks.iter().any(|t| !t.is_finished()) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        tracing::info!("MCP servers stopped");
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.stop_all();
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// Stop a slot's server: abort its supervisor (which drops a connection still starting, and
/// with it the child) and kill its running child. Returns the aborted supervisor.
fn stop_slot(mut slot: Slot) -> Option<tokio::task::JoinHandle<()>> {
    let task = slot.supervisor.take();
    if let Some(task) = &task {
        task.abort();
    }
    if let Some(client) = slot.client.take() {
        client.kill();
    }
    task
}

fn view(name: &str, slot: &Slot) -> McpServerView {
    let (transport, target) = match &slot.config.transport {
        McpTransport::Stdio { command, args, .. } => {
            let mut line = vec![command.clone()];
            line.extend(args.iter().cloned());
            ("stdio", line.join(" "))
        }
        McpTransport::Http { url, .. } => ("http", url.clone()),
    };
    let client = slot.client.as_ref();
    McpServerView {
        name: name.to_string(),
        transport: transport.to_string(),
        target,
        status: slot.status.clone(),
        command_path: slot.resolved.as_ref().map(|r| r.path.clone()),
        command_from_login_shell: slot.resolved.as_ref().is_some_and(|r| r.from_login_shell),
        pid: client.and_then(|c| c.pid()),
        protocol_version: client.and_then(|c| c.protocol_version()),
        stderr_tail: client
            .map(|c| c.stderr_tail())
            .unwrap_or_else(|| slot.stderr_tail.clone()),
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, IndexMap<String, Slot>> {
        self.servers.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn announce(&self, server: &str, status: ServerStatus) {
        tracing::info!(server, ?status, "MCP server status");
        self.changed.send_modify(|n| *n += 1);
        (self.status_sink)(server, status);
    }

    /// Send every ready server's tools to the registry.
    fn publish(&self) {
        let servers = self.lock();
        self.publish_locked(&servers);
    }

    /// [`Inner::publish`] with the servers already locked, so a status and the registry
    /// change together (the sink only swaps a list; it never calls back into the hub).
    fn publish_locked(&self, servers: &IndexMap<String, Slot>) {
        let tools: Vec<ToolRef> = servers
            .values()
            .flat_map(|s| {
                s.tools
                    .iter()
                    .filter(|t| !t.app_only())
                    .map(|t| t.clone() as ToolRef)
            })
            .collect();
        let skills = servers.values().flat_map(|s| s.skills.clone()).collect();
        (self.tools_sink)(McpOffer { tools, skills });
    }

    /// Update the slot `name` if it still belongs to `generation` (false when it does not),
    /// publish the tools, then announce the status (outside the lock: listeners may ask the
    /// hub for its views).
    fn update(&self, name: &str, generation: u64, f: impl FnOnce(&mut Slot)) -> bool {
        let status = {
            let mut servers = self.lock();
            let Some(slot) = servers.get_mut(name).filter(|s| s.generation == generation) else {
                return false;
            };
            f(slot);
            let status = slot.status.clone();
            self.publish_locked(&servers);
            status
        };
        self.announce(name, status);
        true
    }
}

const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Keep one server running until its slot moves on to another generation.
async fn supervise(inner: Arc<Inner>, name: String, generation: u64) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        let Some(cfg) = inner
            .lock()
            .get(&name)
            .filter(|s| s.generation == generation)
            .map(|s| s.config.clone())
        else {
            return;
        };
        if !inner.update(&name, generation, |s| s.status = ServerStatus::Starting) {
            return;
        }
        let (tools_changed_tx, mut tools_changed) = tokio::sync::mpsc::unbounded_channel();
        let opts = ConnectOptions {
            secrets: inner.secrets.clone(),
            elicitation: Arc::new(CurrentElicitation(inner.clone())),
            notices: Arc::new(move |notice| {
                if let McpNotice::ToolsChanged { .. } = notice {
                    let _ = tools_changed_tx.send(());
                }
            }),
            path_env: inner.options.path_env.clone(),
            login_shell: inner.options.login_shell.clone(),
            ..Default::default()
        };
        let started = tokio::time::Instant::now();
        match connect(&cfg, &opts).await {
            Ok(client) => {
                let client = Arc::new(client);
                let tools = match load_tools(&client, &cfg).await {
                    Ok(tools) => tools,
                    Err(e) => {
                        client.kill();
                        fail(
                            &inner,
                            &name,
                            generation,
                            e.to_string(),
                            client.stderr_tail(),
                        );
                        if !sleep_backoff(&mut backoff).await {
                            return;
                        }
                        continue;
                    }
                };
                let skills = load_skills(&client, &name).await;
                let ok = inner.update(&name, generation, |s| {
                    s.resolved = client.resolved_command().cloned();
                    s.status = ServerStatus::Ready {
                        tool_count: tools.len() as u32,
                    };
                    s.tools = tools;
                    s.skills = skills;
                    s.client = Some(client.clone());
                });
                if !ok {
                    client.kill();
                    return;
                }
                loop {
                    tokio::select! {
                        _ = client.closed() => break,
                        Some(()) = tools_changed.recv() => {
                            if let Ok(tools) = load_tools(&client, &cfg).await {
                                inner.update(&name, generation, |s| {
                                    s.status = ServerStatus::Ready { tool_count: tools.len() as u32 };
                                    s.tools = tools;
                                });
                            }
                        }
                    }
                }
                let tail = client.stderr_tail();
                client.kill();
                if started.elapsed() > Duration::from_secs(30) {
                    backoff = FIRST_BACKOFF;
                }
                fail(
                    &inner,
                    &name,
                    generation,
                    format!(
                        "the server stopped (restarting in {} s; calls in flight failed)",
                        backoff.as_secs()
                    ),
                    tail,
                );
            }
            Err(McpError::NeedsSignIn { .. }) => {
                // Its challenge is asked again at sign-in (McpHub::sign_in).
                inner.update(&name, generation, |s| {
                    s.status = ServerStatus::NeedsSignIn {
                        reason: format!(
                            "the server needs you to sign in: use Sign in, or run `artifactflow-cli mcp login {name}`"
                        ),
                    };
                });
                return;
            }
            // A command that does not exist or cannot be run (a misspelt name, a folder, no
            // execute permission) will not start by waiting: it fails once, with the reason,
            // until its entry changes (a new generation supervises it then).
            Err(e @ (McpError::CommandNotFound { .. } | McpError::Spawn { .. })) => {
                fail(
                    &inner,
                    &name,
                    generation,
                    format!("{e} (not retried until its entry in mcp.json changes)"),
                    Vec::new(),
                );
                return;
            }
            Err(e) => {
                let tail = match &e {
                    McpError::Handshake { stderr_tail, .. } => stderr_tail.clone(),
                    _ => Vec::new(),
                };
                fail(&inner, &name, generation, e.to_string(), tail);
            }
        }
        if !sleep_backoff(&mut backoff).await {
            return;
        }
    }
}

fn fail(inner: &Inner, name: &str, generation: u64, reason: String, stderr_tail: Vec<String>) {
    tracing::warn!(server = name, "MCP server failed: {reason}");
    inner.update(name, generation, |s| {
        s.client = None;
        s.tools.clear();
        s.skills.clear();
        s.stderr_tail = stderr_tail.clone();
        s.status = ServerStatus::Failed {
            reason,
            stderr_tail,
        };
    });
}

async fn sleep_backoff(backoff: &mut Duration) -> bool {
    tokio::time::sleep(*backoff).await;
    *backoff = (*backoff * 2).min(MAX_BACKOFF);
    true
}

/// The skills of a server that serves them (the skills extension): listed only, no file read.
/// A listing that fails costs the skills, never the server's tools (a warning says why).
async fn load_skills(client: &Arc<McpClient>, server: &str) -> Vec<crate::skills::McpSkill> {
    if !client.offers_skills() {
        return Vec::new();
    }
    match client.list_skills().await {
        Ok(entries) => crate::skills::McpSkill::from_listing(server, client, entries),
        Err(e) => {
            tracing::warn!(
                server,
                "skills/list failed: {e}; its skills are not offered"
            );
            Vec::new()
        }
    }
}

async fn load_tools(
    client: &Arc<McpClient>,
    cfg: &McpServerConfig,
) -> Result<Vec<Arc<McpTool>>, McpError> {
    let listed = client.list_tools().await?;
    let names = tool_names(&cfg.name, listed.iter().map(|t| t.name.as_ref()));
    Ok(listed
        .iter()
        .zip(names)
        .map(|(tool, (name, _))| Arc::new(McpTool::new(name, tool, cfg, client.clone())))
        .collect())
}
