//! Ctrl+C and SIGTERM: the MCP servers a command started are ended (their whole process
//! groups, with whatever they started) before the CLI exits, so none outlives it. The servers
//! run in process groups of their own, which the terminal's Ctrl+C does not reach.

use std::sync::{Arc, Weak};
use std::time::Duration;

use engine::mcp::hub::McpHub;
use tokio_util::sync::CancellationToken;

/// Exit code after SIGINT (Ctrl+C).
pub const INTERRUPTED: i32 = 130;
/// Exit code after SIGTERM.
pub const TERMINATED: i32 = 143;

/// Longest wait for servers still starting to be ended.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// The signals that end the CLI, listened for from the moment this is made (call it before
/// the engine starts its servers). Needs a Tokio runtime context.
pub struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    /// Start listening.
    pub fn listen() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Signals {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// The next signal, as the exit code it gives.
    async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => INTERRUPTED,
                _ = self.terminate.recv() => TERMINATED,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            INTERRUPTED
        }
    }

    /// On the spawned task: the first Ctrl+C cancels `graceful` when given (a run stops and
    /// stores what it did, then ends its servers itself); any other signal ends every server of
    /// `hub` now and exits with [`INTERRUPTED`] or [`TERMINATED`]. Holds the hub weakly, so a
    /// command that ends normally still drops it.
    pub fn stop_servers_on_signal(
        mut self,
        hub: &Arc<McpHub>,
        graceful: Option<CancellationToken>,
    ) {
        let hub: Weak<McpHub> = Arc::downgrade(hub);
        let mut graceful = graceful;
        tokio::spawn(async move {
            loop {
                let code = self.next().await;
                match graceful.take() {
                    Some(cancel) if code == INTERRUPTED => {
                        eprintln!("\n[cancelling…]");
                        cancel.cancel();
                    }
                    _ => {
                        if let Some(hub) = hub.upgrade() {
                            // Blocking, briefly: the hub's own runtime does the work.
                            tokio::task::block_in_place(|| hub.shutdown(SHUTDOWN_WAIT));
                        }
                        tracing::info!(code, "stopped by a signal");
                        std::process::exit(code);
                    }
                }
            }
        });
    }
}
