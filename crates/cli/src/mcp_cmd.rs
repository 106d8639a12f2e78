//! `artifactflow-cli mcp list|tools|call|login`: the MCP servers of `mcp.json`, through the same
//! engine (hub, registry, gate) as the app; `mcp login` signs in to a remote server (OAuth).

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use engine::mcp::client::{
    AcceptDefaults, ElicitationAnswer, ElicitationHandler, ElicitationRequest,
};
use engine::mcp::{McpServerView, ServerStatus};
use engine::Engine;

/// MCP subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// Every configured server with its status (waits for the servers to start).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Longest wait for a server to start, in seconds.
        #[arg(long, default_value_t = 30)]
        wait: u64,
    },
    /// One server's tools: parameters, annotations and the instructions the model sees.
    Tools {
        /// Server name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Longest wait for the server to start, in seconds.
        #[arg(long, default_value_t = 30)]
        wait: u64,
    },
    /// Call SERVER.TOOL through the permission decision, like `tools call`; prints the
    /// `<tool_result>` as the model would see it. Exit 0 on success, 1 on failure.
    Call {
        /// `SERVER.TOOL`.
        name: String,
        /// Parameters as key=value (objects and arrays as JSON text).
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Approve without prompting.
        #[arg(long)]
        yes: bool,
        /// Answer the server's questions (elicitation) with their defaults, without prompting.
        #[arg(long)]
        accept_defaults: bool,
        /// Conversation whose always-allowed tools apply.
        #[arg(long, default_value = "cli")]
        conversation: String,
        /// Longest wait for the server to start, in seconds.
        #[arg(long, default_value_t = 30)]
        wait: u64,
    },
    /// Sign in to a remote server (OAuth): prints the sign-in address and opens it in the
    /// browser, then keeps the tokens in the system keyring.
    Login {
        /// Server name.
        name: String,
        /// Do not open a browser: follow the authorization page's redirects without one (for
        /// tests, with an authorization server that approves without a login page).
        #[arg(long)]
        headless: bool,
    },
    /// Sign out of a remote server: forget its tokens (system keyring).
    Logout {
        /// Server name.
        name: String,
    },
}

pub fn run(paths: engine::paths::AppPaths, cmd: McpCommand) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    // Listening before the engine starts the servers: Ctrl+C or SIGTERM ends them with us.
    let signals = {
        let _in_runtime = runtime.enter();
        crate::signals::Signals::listen()?
    };
    let engine = Engine::open(paths, Arc::new(engine::events::discard()))?;
    {
        let _in_runtime = runtime.enter();
        signals.stop_servers_on_signal(engine.mcp(), None);
    }
    let code = runtime.block_on(async {
        match cmd {
            McpCommand::List { json, wait } => list(&engine, json, wait).await,
            McpCommand::Tools { name, json, wait } => tools(&engine, &name, json, wait).await,
            McpCommand::Call {
                name,
                params,
                yes,
                accept_defaults,
                conversation,
                wait,
            } => {
                let handler: Arc<dyn ElicitationHandler> = if accept_defaults {
                    Arc::new(AcceptDefaults)
                } else {
                    Arc::new(TerminalElicitation)
                };
                engine.mcp().set_elicitation_handler(handler);
                call(&engine, &name, &params, yes, &conversation, wait).await
            }
            McpCommand::Login { name, headless } => login(&engine, &name, headless).await,
            McpCommand::Logout { name } => {
                engine.mcp().sign_out(&name)?;
                println!("Signed out of `{name}`: its tokens are gone from the system keyring.");
                Ok(ExitCode::SUCCESS)
            }
        }
    });
    // Ends every server before the runtime goes (the engine may still be referenced).
    engine.mcp().shutdown(std::time::Duration::from_secs(2));
    drop(engine);
    code
}

async fn login(engine: &Engine, name: &str, headless: bool) -> anyhow::Result<ExitCode> {
    let open: engine::mcp::auth::BrowserOpener = if headless {
        let follow = engine::mcp::auth::follow_redirects_headlessly();
        Box::new(move |url: String| {
            println!("Signing in without a browser: {url}");
            follow(url)
        })
    } else {
        Box::new(|url: String| {
            println!("Opening the sign-in page in your browser (or open it yourself):\n  {url}");
            // The page is still printed above if no browser can be started.
            if let Err(e) = open::that_detached(&url) {
                eprintln!("could not start a browser: {e}");
            }
            Ok(())
        })
    };
    let signed = engine.mcp().sign_in(name, open).await?;
    let scopes = if signed.scopes.is_empty() {
        String::new()
    } else {
        format!(" (scopes: {})", signed.scopes.join(" "))
    };
    println!("Signed in to `{name}`{scopes}; the tokens are in the system keyring.");
    let status = settle(engine, name, 30).await?;
    println!("{name}: {}", status_text(&status));
    Ok(match status {
        ServerStatus::Ready { .. } => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}

async fn settle(engine: &Engine, name: &str, wait: u64) -> anyhow::Result<ServerStatus> {
    Ok(engine
        .mcp()
        .wait_settled(name, Duration::from_secs(wait))
        .await?)
}

fn status_text(status: &ServerStatus) -> String {
    match status {
        ServerStatus::Starting => "starting".into(),
        ServerStatus::Ready { tool_count } => format!("ready ({tool_count} tools)"),
        ServerStatus::Failed { reason, .. } => format!("failed: {reason}"),
        ServerStatus::NeedsSignIn { .. } => "needs sign-in (artifactflow-cli mcp login)".into(),
        ServerStatus::Disabled => "disabled".into(),
    }
}

async fn list(engine: &Engine, json: bool, wait: u64) -> anyhow::Result<ExitCode> {
    let names: Vec<String> = engine.mcp().servers().into_iter().map(|s| s.name).collect();
    for name in &names {
        settle(engine, name, wait).await?;
    }
    let servers = engine.mcp().servers();
    if json {
        println!("{}", serde_json::to_string_pretty(&servers)?);
        return Ok(ExitCode::SUCCESS);
    }
    if servers.is_empty() {
        println!(
            "no MCP servers: add them to {}",
            engine
                .ctx
                .paths()
                .config_dir
                .join(engine::mcp::config::FILE)
                .display()
        );
    }
    for s in &servers {
        print_server(s);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_server(s: &McpServerView) {
    let clean = crate::term::clean;
    println!(
        "{:<20} {:<6} {}",
        clean(&s.name),
        s.transport,
        clean(&status_text(&s.status))
    );
    println!("    {}", clean(&s.target));
    if let Some(version) = &s.protocol_version {
        let older = if engine::mcp::client::lifecycle::is_legacy(version) {
            " (an older version: the server does not know 2026-07-28)"
        } else {
            ""
        };
        println!("    protocol: MCP {}{older}", clean(version));
    }
    if let Some(path) = &s.command_path {
        let via = if s.command_from_login_shell {
            " (found through the login shell's PATH)"
        } else {
            ""
        };
        println!("    command: {}{via}", clean(&path.display().to_string()));
    }
    if let ServerStatus::Failed { stderr_tail, .. } = &s.status {
        for line in stderr_tail.iter().rev().take(5).rev() {
            println!("    stderr: {}", clean(line));
        }
    }
}

async fn tools(engine: &Engine, name: &str, json: bool, wait: u64) -> anyhow::Result<ExitCode> {
    let status = settle(engine, name, wait).await?;
    let tools = engine.mcp().tools(name)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&tools)?);
        return Ok(ExitCode::SUCCESS);
    }
    if !matches!(status, ServerStatus::Ready { .. }) {
        bail!("server `{name}` is not ready: {}", status_text(&status));
    }
    for t in &tools {
        let mut hints = Vec::new();
        if t.read_only_hint == Some(true) {
            hints.push("read-only");
        }
        if t.destructive_hint == Some(true) {
            hints.push("destructive");
        }
        println!(
            "{}  [{}{}]",
            crate::term::clean(&t.name),
            serde_json::to_value(t.permission)?.as_str().unwrap_or(""),
            if hints.is_empty() {
                String::new()
            } else {
                format!(", server says: {}", hints.join(", "))
            }
        );
        if let Some(view) = &t.view {
            println!(
                "view: {} (shown in the app's tool card)",
                crate::term::clean(view)
            );
        }
        if t.app_only {
            println!("only for the server's views: agents do not get this tool");
        }
        println!("{}\n", crate::term::clean(&t.instructions));
    }
    Ok(ExitCode::SUCCESS)
}

async fn call(
    engine: &Engine,
    name: &str,
    args: &[String],
    yes: bool,
    conversation: &str,
    wait: u64,
) -> anyhow::Result<ExitCode> {
    let Some((server, _)) = name.split_once('.') else {
        bail!("give the tool as SERVER.TOOL (see `artifactflow-cli mcp tools SERVER`)");
    };
    let status = settle(engine, server, wait).await?;
    if !matches!(status, ServerStatus::Ready { .. }) {
        bail!("server `{server}` is not ready: {}", status_text(&status));
    }
    crate::tools_cmd::call_directly(&engine.ctx, name, args, yes, conversation).await
}

/// Asks a server's questions at the terminal, one field at a time (Enter keeps the default);
/// with no terminal it declines.
struct TerminalElicitation;

#[async_trait::async_trait]
impl ElicitationHandler for TerminalElicitation {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        tokio::task::spawn_blocking(move || ask_form(&request))
            .await
            .unwrap_or(ElicitationAnswer::Cancel)
    }
}

fn ask_form(request: &ElicitationRequest) -> ElicitationAnswer {
    let clean = crate::term::clean;
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "`{}` asks: {} — declined: no terminal to ask at (use --accept-defaults)",
            clean(&request.server),
            clean(&request.message)
        );
        return ElicitationAnswer::Decline;
    }
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "\n`{}` asks: {}",
        clean(&request.server),
        clean(&request.message)
    );
    let Some(schema) = &request.schema else {
        if let Some(url) = &request.url {
            let _ = writeln!(err, "open {} to continue", clean(url));
        }
        return ElicitationAnswer::Decline;
    };
    let mut values = engine::mcp::client::schema_defaults(schema);
    let props = schema
        .get("properties")
        .and_then(|p| p.as_object())
        .cloned()
        .unwrap_or_default();
    let stdin = std::io::stdin();
    for (key, prop) in props {
        let kind = prop
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("string");
        let default = values
            .get(&key)
            .map(engine::tools::pipeline::value_text)
            .unwrap_or_default();
        let _ = write!(err, "  {} ({kind}) [{}]: ", clean(&key), clean(&default));
        let _ = err.flush();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
            return ElicitationAnswer::Cancel;
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let value = match kind {
            "integer" | "number" | "boolean" => serde_json::from_str(line)
                .unwrap_or_else(|_| serde_json::Value::String(line.into())),
            _ => serde_json::Value::String(line.into()),
        };
        values.insert(key, value);
    }
    ElicitationAnswer::Accept(values)
}
