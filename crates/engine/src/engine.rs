//! [`Engine`]: the engine of one app or CLI process, wired once: the opened [`AppContext`], a
//! runner with its models and permission broker, the runs in progress, the config watcher, and
//! where events go. The desktop shell, the CLI and the tests all open it this way.

use std::sync::Arc;

use crate::context::{AppContext, OpenError};
use crate::elicitation::{ElicitationBroker, DEFAULT_ELICITATION_TIMEOUT};
use crate::events::{EngineEvent, EventSink};
use crate::interrupts::PermissionBroker;
use crate::mcp::hub::{HubOptions, McpHub};
use crate::paths::AppPaths;
use crate::run::{ContextModels, RunManager, RunOptions, Runner};
use crate::status::Status;
use crate::watcher::{announce_reload, ConfigWatcher};

/// How an [`Engine`] is opened; the default is what the app uses.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Limits of every run.
    pub run: RunOptions,
    /// Watch the config folder and reload it on change (see [`ConfigWatcher`]).
    pub watch: bool,
    /// How the MCP servers of `mcp.json` are started (see [`McpHub`]).
    pub mcp: HubOptions,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            run: RunOptions::default(),
            watch: true,
            mcp: HubOptions::default(),
        }
    }
}

/// The running engine.
pub struct Engine {
    /// Folders, database, configuration.
    pub ctx: Arc<AppContext>,
    /// Runs in progress (and, through its runner, the permission broker).
    pub runs: RunManager,
    /// Where engine events go (the window, the terminal, a test's list).
    pub events: Arc<dyn EventSink>,
    watcher: Option<ConfigWatcher>,
    /// The forms MCP servers ask for, answered by the app (the hub's elicitation handler).
    elicitations: Arc<ElicitationBroker>,
    /// What the person has said to each view's tool calls (MCP Apps).
    view_standings: crate::gate::ViewStandings,
    /// Declared last: dropped after the runs and the watcher, it ends every server's process.
    mcp: Arc<McpHub>,
}

impl Engine {
    /// Open the engine at `paths` with the default options; its events go to `events`.
    pub fn open(paths: AppPaths, events: Arc<dyn EventSink>) -> Result<Self, OpenError> {
        Self::open_with(paths, events, EngineOptions::default())
    }

    /// Open the engine at `paths` with `options`. A watcher that cannot start only turns hot
    /// reload off (logged): the engine still works.
    pub fn open_with(
        paths: AppPaths,
        events: Arc<dyn EventSink>,
        options: EngineOptions,
    ) -> Result<Self, OpenError> {
        let ctx = Arc::new(AppContext::open_at(paths)?);
        let mcp = Arc::new(McpHub::new(
            {
                let events = events.clone();
                Arc::new(move |server: &str, status| {
                    events.emit(EngineEvent::McpServerStatus {
                        server: server.to_string(),
                        status,
                    })
                })
            },
            {
                let ctx = Arc::downgrade(&ctx);
                Arc::new(move |offer: crate::mcp::McpOffer| {
                    if let Some(ctx) = ctx.upgrade() {
                        ctx.skills().set_mcp(offer.skills);
                        ctx.set_mcp_tools(offer.tools)
                    }
                })
            },
            Some(ctx.secret_resolver()),
            options.mcp,
        ));
        // Every config reload (watcher or save) also brings the MCP servers in line with
        // mcp.json; the hub never blocks the caller.
        let events: Arc<dyn EventSink> = {
            let (ctx, hub, inner) = (Arc::downgrade(&ctx), Arc::downgrade(&mcp), events);
            Arc::new(move |event: EngineEvent| {
                if let EngineEvent::ConfigReloaded { .. } = &event {
                    if let (Some(ctx), Some(hub)) = (ctx.upgrade(), hub.upgrade()) {
                        let config = ctx.config().mcp.clone();
                        hub.apply(&config);
                    }
                }
                inner.emit(event)
            })
        };
        // A server's questions become forms in the app (the CLI sets its own handler).
        let elicitations = Arc::new(ElicitationBroker::new(
            events.clone(),
            DEFAULT_ELICITATION_TIMEOUT,
            Some(Arc::downgrade(&ctx)),
        ));
        mcp.set_elicitation_handler(elicitations.clone());
        mcp.apply(&ctx.config().mcp);
        let runner = Runner::new(
            ctx.clone(),
            Arc::new(ContextModels::new(ctx.clone())),
            Arc::new(PermissionBroker::new()),
            events.clone(),
            options.run,
        );
        let watcher = options
            .watch
            .then(|| {
                ConfigWatcher::start(ctx.clone(), events.clone())
                    .map_err(|e| tracing::warn!("hot reload is off: {e}"))
                    .ok()
            })
            .flatten();
        Ok(Engine {
            ctx,
            runs: RunManager::new(Arc::new(runner)),
            events,
            watcher,
            elicitations,
            view_standings: Default::default(),
            mcp,
        })
    }

    /// What the person has said to each view's tool calls (MCP Apps): which views are muted.
    pub fn view_standings(&self) -> &crate::gate::ViewStandings {
        &self.view_standings
    }

    /// The runner that runs are started with.
    pub fn runner(&self) -> &Arc<Runner> {
        self.runs.runner()
    }

    /// The broker that permission requests are answered through.
    pub fn broker(&self) -> &Arc<PermissionBroker> {
        self.runner().broker()
    }

    /// The broker the forms MCP servers ask for are answered through.
    pub fn elicitations(&self) -> &Arc<ElicitationBroker> {
        &self.elicitations
    }

    /// The window that answers questions is gone (the app's window closed): stop every run
    /// (its pending permission requests are denied) and answer every open MCP form "cancel",
    /// also one no run's call owns (a test call's), so no server is left waiting.
    pub fn window_closed(&self) {
        self.runs.cancel_all();
        self.elicitations.cancel_all(None);
    }

    /// The MCP servers of `mcp.json`.
    pub fn mcp(&self) -> &Arc<McpHub> {
        &self.mcp
    }

    /// The config watcher, if hot reload is on.
    pub fn watcher(&self) -> Option<&ConfigWatcher> {
        self.watcher.as_ref()
    }

    /// Re-read the config folder after the app changed it (a save) and announce it
    /// ([`EngineEvent::ConfigReloaded`](crate::events::EngineEvent::ConfigReloaded)). The
    /// watcher takes the same path, so whichever of the two comes first reloads and announces
    /// and the other finds no change: one save, one reload, one event. Returns the status.
    pub fn reload_config(&self) -> Status {
        if self.ctx.reload_config_if_changed() {
            announce_reload(&self.ctx, &*self.events);
        }
        self.ctx.status()
    }
}
