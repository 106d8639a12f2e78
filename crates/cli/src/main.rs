//! `artifactflow-cli`: a thin terminal shell over the ArtifactFlow engine.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use engine::context::AppContext;

mod artifacts_cmd;
mod check_cmd;
mod conversations_cmd;
mod library_cmd;
mod mcp_cmd;
mod models_check_cmd;
mod models_cmd;
mod parse_cmd;
mod permissions_cmd;
mod pipe;
mod prompt;
mod run_cmd;
mod secrets_cmd;
mod signals;
mod skills_cmd;
mod status_cmd;
mod term;
mod tools_cmd;

/// Headless ArtifactFlow: the same engine, config folder and database as the desktop app.
#[derive(Debug, Parser)]
#[command(name = "artifactflow-cli", version, about, long_about = None)]
struct Cli {
    /// Put config, data and logs under DIR (default: $ARTIFACTFLOW_HOME, else the platform's folders).
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show version, folders, database and how many tools and agents loaded.
    Status {
        /// Print JSON (keys: app_version, config_dir, database, schema_version, log_dir, tools_loaded, agents_loaded, config_errors).
        #[arg(long)]
        json: bool,
    },
    /// Run an agent on a task: the answer streams to stdout, tool activity to stderr.
    Run(run_cmd::RunArgs),
    /// List, show and call tools.
    #[command(subcommand)]
    Tools(tools_cmd::ToolsCommand),
    /// Validate the whole config folder; exit 1 listing every problem with file and line.
    Check,
    /// Manage secrets in the OS keyring (names only are ever shown).
    #[command(subcommand)]
    Secrets(secrets_cmd::SecretsCommand),
    /// List, show, search and export artifacts.
    #[command(subcommand)]
    Artifacts(artifacts_cmd::ArtifactsCommand),
    /// Your own sources: add files and folders, list, show, search, export, remove.
    #[command(subcommand)]
    Library(library_cmd::LibraryCommand),
    /// List, show and export conversations with their tool calls.
    #[command(subcommand)]
    Conversations(conversations_cmd::ConversationsCommand),
    /// MCP servers from mcp.json: status, tools, calls.
    #[command(subcommand)]
    Mcp(mcp_cmd::McpCommand),
    /// Models that run on this computer: list, catalogue, Hub search, download, import, remove.
    #[command(subcommand)]
    Models(models_cmd::ModelsCommand),
    /// Agent Skills (SKILL.md folders): list, show, check, import.
    #[command(subcommand)]
    Skills(skills_cmd::SkillsCommand),
    /// Permission rules: list them, or check what a call would get and why.
    #[command(subcommand)]
    Permissions(permissions_cmd::PermissionsCommand),
    /// Parse one model response from stdin and print its tool calls as JSON.
    ///
    /// Prints {"tool_calls":[{"name":..,"params":{..}}, {"name":"__malformed__","params":{},"error":".."}]}.
    Parse {
        /// Read JSON lines {"input": ".."} and print one result object per line.
        #[arg(long)]
        jsonl: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    pipe::quiet_on_closed_stdout(|| match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", term::clean(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    })
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Status { json } => {
            let ctx = open(cli.home)?;
            status_cmd::run(&ctx, json)
        }
        Command::Parse { jsonl } => parse_cmd::run(jsonl),
        Command::Run(args) => run_cmd::run(prepare(cli.home)?, args),
        Command::Tools(cmd) => {
            let ctx = open(cli.home)?;
            tools_cmd::run(&ctx, cmd)
        }
        Command::Check => {
            let ctx = open(cli.home)?;
            check_cmd::run(&ctx)
        }
        Command::Secrets(cmd) => {
            let ctx = open(cli.home)?;
            secrets_cmd::run(&ctx, cmd)
        }
        Command::Artifacts(cmd) => {
            let ctx = open(cli.home)?;
            artifacts_cmd::run(&ctx, cmd)
        }
        Command::Library(cmd) => {
            let ctx = open(cli.home)?;
            library_cmd::run(&ctx, cmd)
        }
        Command::Conversations(cmd) => {
            let ctx = open(cli.home)?;
            conversations_cmd::run(&ctx, cmd)
        }
        Command::Mcp(cmd) => mcp_cmd::run(prepare(cli.home)?, cmd),
        Command::Models(cmd) => {
            let ctx = open(cli.home)?;
            models_cmd::run(ctx, cmd)
        }
        Command::Skills(cmd) => {
            let ctx = open(cli.home)?;
            skills_cmd::run(&ctx, cmd)
        }
        Command::Permissions(cmd) => {
            let ctx = open(cli.home)?;
            permissions_cmd::run(&ctx, cmd)
        }
    }
}

/// Open the engine state (no runner: only `run` needs one, and opens the whole [`Engine`]
/// itself, with its event sink).
///
/// [`Engine`]: engine::Engine
fn open(home: Option<PathBuf>) -> anyhow::Result<AppContext> {
    Ok(AppContext::open_at(prepare(home)?)?)
}

/// Resolve and prepare the folders and start logging into the log folder.
fn prepare(home: Option<PathBuf>) -> anyhow::Result<engine::paths::AppPaths> {
    let paths = engine::paths::AppPaths::resolve(home.as_deref())?;
    paths.prepare()?;
    // The guard lives for the whole process: the CLI is short-lived.
    std::mem::forget(engine::logging::init(&paths.log_dir, "cli", false));
    Ok(paths)
}
