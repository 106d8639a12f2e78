//! `artifactflow-cli tools list|show|call`.

use std::process::ExitCode;

use anyhow::{bail, Context};
use engine::context::AppContext;
use engine::permissions::{Answer, PermissionRequest};
use indexmap::IndexMap;

/// Tool subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ToolsCommand {
    /// Every tool: name, source, default permission and parameters.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The instruction block the model sees for one tool.
    Show {
        /// Tool name.
        name: String,
    },
    /// Call a tool through the whole pipeline and the permission decision; prints the
    /// `<tool_result>` exactly as the model would see it. Exit 0 on success, 1 on failure.
    Call {
        /// Tool name.
        name: String,
        /// Parameters as key=value (values are strings, as from the model).
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Approve a tool that asks for confirmation without prompting.
        #[arg(long)]
        yes: bool,
        /// Conversation whose always-allowed tools apply (and that artifact tools write to).
        #[arg(long, default_value = "cli")]
        conversation: String,
    },
}

pub fn run(ctx: &AppContext, cmd: ToolsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ToolsCommand::List { json } => list(ctx, json),
        ToolsCommand::Show { name } => show(ctx, &name),
        ToolsCommand::Call {
            name,
            params,
            yes,
            conversation,
        } => call(ctx, &name, &params, yes, &conversation),
    }
}

fn list(ctx: &AppContext, json: bool) -> anyhow::Result<ExitCode> {
    let registry = ctx.tool_registry();
    if json {
        let tools: Vec<_> = registry
            .iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.spec().name,
                    "source": t.source(),
                    "permission": t.permission(),
                    "parameters": t.spec().params,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&tools)?);
        return Ok(ExitCode::SUCCESS);
    }
    for t in registry.iter() {
        let source = match t.source() {
            engine::tools::ToolSource::Http { file } => file.display().to_string(),
            engine::tools::ToolSource::Builtin => "built-in".into(),
            engine::tools::ToolSource::Mcp { server } => format!("MCP server {server}"),
            engine::tools::ToolSource::Artifact => "artifact".into(),
        };
        let params: Vec<_> = t
            .spec()
            .params
            .iter()
            .map(|p| {
                format!(
                    "{}: {}{}",
                    p.name,
                    p.kind.as_str(),
                    if p.required { "" } else { "?" }
                )
            })
            .collect();
        println!(
            "{:<20} {:<8} {:<40} ({})",
            t.spec().name,
            serde_json::to_value(t.permission())?.as_str().unwrap_or(""),
            source,
            params.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn show(ctx: &AppContext, name: &str) -> anyhow::Result<ExitCode> {
    let registry = ctx.tool_registry();
    let Some(tool) = registry.get(name) else {
        bail!("there is no tool `{name}` (see `artifactflow-cli tools list`)");
    };
    let instructions = engine::parser::tool_instructions(std::slice::from_ref(tool.spec()));
    println!("{}", crate::term::clean(&instructions));
    Ok(ExitCode::SUCCESS)
}

/// `KEY=VALUE` arguments as the parser would give them.
pub(crate) fn parse_params(args: &[String]) -> anyhow::Result<IndexMap<String, String>> {
    args.iter()
        .map(|a| {
            let (k, v) = a
                .split_once('=')
                .with_context(|| format!("`{a}` is not KEY=VALUE"))?;
            Ok((k.to_string(), v.to_string()))
        })
        .collect()
}

fn call(
    ctx: &AppContext,
    name: &str,
    args: &[String],
    yes: bool,
    conversation: &str,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(call_directly(ctx, name, args, yes, conversation))
}

/// One direct call through the gate, asking at the terminal unless `yes`; prints what the
/// model would see (stored images and audio included, as their one line each).
pub(crate) async fn call_directly(
    ctx: &AppContext,
    name: &str,
    args: &[String],
    yes: bool,
    conversation: &str,
) -> anyhow::Result<ExitCode> {
    let params = parse_params(args)?;
    let outcome = engine::tools::direct::call(
        ctx,
        name,
        &params,
        conversation,
        |request| {
            if yes {
                Answer::Approve
            } else {
                ask_at_terminal(request)
            }
        },
        &engine::events::discard(),
    )
    .await;
    println!("{}", crate::term::clean(&outcome.formatted));
    Ok(if outcome.result.success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Show the request and ask at the terminal (no terminal and no `--yes` means no).
fn ask_at_terminal(request: &PermissionRequest) -> Answer {
    crate::prompt::show_request(request);
    crate::prompt::ask(&request.tool, "use --yes to approve")
}
