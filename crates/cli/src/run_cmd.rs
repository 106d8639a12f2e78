//! `artifactflow-cli run --agent NAME [--yes | --no] [--conversation ID] "task"`: run an agent
//! in the terminal. The answer streams to stdout; tool activity and permission prompts go to
//! stderr. Exit 0 when the run completed, 1 when it failed, 130 when cancelled (Ctrl+C).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use engine::conversations::RunStatus;
use engine::events::EngineEvent;
use engine::paths::AppPaths;
use engine::permissions::Answer;
use engine::run::RunRequest;
use engine::Engine;
use tokio_util::sync::CancellationToken;

use crate::term::clean;

/// Options of `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The agent to run (see config/agents).
    #[arg(long)]
    agent: String,
    /// Approve every permission request.
    #[arg(long, conflicts_with = "no")]
    yes: bool,
    /// Deny every permission request.
    #[arg(long)]
    no: bool,
    /// Continue this conversation (default: a new one).
    #[arg(long)]
    conversation: Option<String>,
    /// The task.
    task: String,
}

enum Policy {
    Yes,
    No,
    Ask,
}

/// Open the engine at `paths` and run `args`' task.
pub fn run(paths: AppPaths, args: RunArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run_async(paths, args))
}

async fn run_async(paths: AppPaths, args: RunArgs) -> anyhow::Result<ExitCode> {
    let policy = match (args.yes, args.no) {
        (true, _) => Policy::Yes,
        (_, true) => Policy::No,
        _ => Policy::Ask,
    };
    let conversation = args
        .conversation
        .clone()
        .unwrap_or_else(|| engine::ids::new_id("cli"));
    let (requests_tx, mut requests_rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = move |e: EngineEvent| print_event(&e, &requests_tx);
    // Listening before the engine starts the servers: the first Ctrl+C stops the run, a
    // second one or SIGTERM ends the servers and exits at once.
    let signals = crate::signals::Signals::listen()?;
    let engine = Engine::open(paths, Arc::new(sink))?;
    let cancel = CancellationToken::new();
    signals.stop_servers_on_signal(engine.mcp(), Some(cancel.clone()));
    // Nobody fills in a server's form during a terminal run: declined at once, as before.
    engine
        .mcp()
        .set_elicitation_handler(Arc::new(engine::mcp::client::DeclineElicitation));
    // The app starts MCP servers in the background; a one-shot run waits for them (at most
    // 30 s each) so their tools are in the agent's instructions from the first answer.
    for server in engine.mcp().servers() {
        let _ = engine
            .mcp()
            .wait_settled(&server.name, std::time::Duration::from_secs(30))
            .await;
    }

    // Permission requests are answered from the policy or at the terminal, off the run's task.
    let answerer = {
        let broker = engine.broker().clone();
        tokio::spawn(async move {
            while let Some((id, tool)) = requests_rx.recv().await {
                let answer = match policy {
                    Policy::Yes => Answer::Approve,
                    Policy::No => Answer::Deny,
                    Policy::Ask => tokio::task::spawn_blocking(move || {
                        crate::prompt::ask(&tool, "use --yes or --no")
                    })
                    .await
                    .unwrap_or(Answer::Deny),
                };
                let _ = broker.answer(&id, answer);
            }
        })
    };

    let outcome = engine
        .runner()
        .run(
            RunRequest {
                conversation_id: conversation.clone(),
                agent: args.agent.clone(),
                task: args.task.clone(),
            },
            cancel,
        )
        .await;
    answerer.abort();
    // The run is over: its servers end now, whatever still holds the engine.
    engine.mcp().shutdown(std::time::Duration::from_secs(2));
    println!();
    let artifacts = engine
        .ctx
        .artifact_store()
        .list(
            &engine::artifacts::ListFilter {
                conversation_id: Some(conversation.clone()),
                ..Default::default()
            },
            100,
            0,
        )
        .map(|page| page.items)
        .unwrap_or_default();
    if !artifacts.is_empty() {
        eprintln!("artifacts in conversation {conversation}:");
        for a in artifacts {
            let a = a.artifact;
            eprintln!("  {} (v{}) {}", a.id, a.version, clean(&a.title));
        }
    }
    Ok(match outcome.status {
        RunStatus::Completed => {
            eprintln!("[run completed · conversation {conversation}]");
            ExitCode::SUCCESS
        }
        RunStatus::Cancelled => {
            eprintln!("[run cancelled · conversation {conversation}]");
            ExitCode::from(130)
        }
        _ => {
            eprintln!(
                "error: {}",
                clean(&outcome.error.unwrap_or_else(|| "the run failed".into()))
            );
            ExitCode::FAILURE
        }
    })
}

fn print_event(e: &EngineEvent, requests: &tokio::sync::mpsc::UnboundedSender<(String, String)>) {
    let mut err = std::io::stderr();
    match e {
        EngineEvent::Token { text, depth: 0, .. } => {
            print!("{}", clean(text));
            let _ = std::io::stdout().flush();
        }
        EngineEvent::ToolStart { tool, params, .. } => {
            let _ = writeln!(
                err,
                "\n[→ {tool} {}]",
                serde_json::Value::Object(params.clone())
            );
        }
        EngineEvent::ToolProgress {
            progress,
            total,
            message,
            ..
        } => {
            let of = total.map(|t| format!("/{t}")).unwrap_or_default();
            let what = message
                .as_deref()
                .map(|m| format!(" {}", clean(m)))
                .unwrap_or_default();
            let _ = writeln!(err, "[… {progress}{of}{what}]");
        }
        EngineEvent::ToolComplete {
            tool,
            success,
            result,
            duration_ms,
            guided,
            view,
            ..
        } => {
            let first = result.lines().next().unwrap_or("");
            let mark = if *success { "✓" } else { "✗" };
            let guided = if *guided { " · guided" } else { "" };
            // A view cannot be shown in a terminal: say there is one, and where to see it.
            let view = view
                .as_ref()
                .map(|v| {
                    format!(
                        " · has a view ({}): open the conversation in the app",
                        clean(&v.resource_uri)
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                err,
                "[{mark} {tool} · {duration_ms} ms{guided}{view}] {}",
                clean(first)
            );
        }
        EngineEvent::ContextCondensed {
            results_referenced,
            results_cut,
            messages_condensed,
            reason,
            ..
        } => {
            let why = if reason == "server" {
                "the model server refused the request as too long; retrying once"
            } else {
                "to fit the model's context window"
            };
            let cut = if *results_cut > 0 {
                format!(", {results_cut} latest results cut to their beginning")
            } else {
                String::new()
            };
            let _ = writeln!(
                err,
                "\n[context condensed: {results_referenced} results replaced by artifact references, {messages_condensed} messages condensed into a note{cut} ({why})]"
            );
        }
        EngineEvent::ModelLoading { model, .. } => {
            let _ = writeln!(err, "[loading {} on this computer…]", clean(model));
        }
        EngineEvent::AgentSwitch { from, to, .. } => {
            let _ = writeln!(err, "\n[{from} → {to}]");
        }
        EngineEvent::AgentReturn { from, to, .. } => {
            let _ = writeln!(err, "[{from} → back to {to}]");
        }
        EngineEvent::PermissionRequest {
            request_id,
            request,
            ..
        } => {
            crate::prompt::show_request(request);
            let _ = requests.send((request_id.clone(), request.tool.clone()));
        }
        EngineEvent::McpServerStatus {
            server,
            status: engine::mcp::ServerStatus::Failed { reason, .. },
        } => {
            eprintln!("MCP server `{}` failed: {}", clean(server), clean(reason));
        }
        EngineEvent::RunEnded {
            error: Some(error), ..
        } => {
            let _ = writeln!(err, "\n[run failed] {}", clean(error));
        }
        _ => {}
    }
}
