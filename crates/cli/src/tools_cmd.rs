//! `artifactflow-cli tools list|show|call|import-openapi`.

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
    /// The grammar of guided calls (GBNF, as the local runtime gets it) for an agent with
    /// exactly these tools, in this order, in the forms of a model family; its first lines
    /// (comments) give the patterns that turn it on, one per opening the family uses.
    Grammar {
        /// Tool names.
        #[arg(required = true)]
        names: Vec<String>,
        /// The grammar of native calls (`tool_calls: native`) instead of the XML format's.
        #[arg(long)]
        native: bool,
        /// The model's call family (as `tool_family:` names it: hermes, llama3, mistral, lfm2,
        /// function-gemma, granite, phi4-mini, unknown).
        #[arg(long, default_value = "hermes")]
        family: String,
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
    /// Import an OpenAPI 3.0/3.1 or Swagger 2.0 description (JSON or YAML, a file or an
    /// http(s) URL) as HTTP tool files, one per operation. Prints one line per tool written,
    /// then the operations skipped with the reason. Existing files are never overwritten.
    ImportOpenapi {
        /// The description: a file path or an http(s):// URL.
        #[arg(value_name = "FILE|URL")]
        source: String,
        /// Only this operationId (repeatable).
        #[arg(long = "operation", value_name = "ID")]
        operations: Vec<String>,
        /// Only operations with this tag.
        #[arg(long)]
        tag: Option<String>,
        /// Only operations whose id, path or summary contains this text.
        #[arg(long)]
        search: Option<String>,
        /// Folder to write into (default: the config folder's tools/).
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        /// Print the files that would be written instead of writing them.
        #[arg(long)]
        dry_run: bool,
    },
}

pub fn run(ctx: &AppContext, cmd: ToolsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ToolsCommand::List { json } => list(ctx, json),
        ToolsCommand::Show { name } => show(ctx, &name),
        ToolsCommand::Grammar {
            names,
            native,
            family,
        } => grammar(ctx, &names, native, &family),
        ToolsCommand::Call {
            name,
            params,
            yes,
            conversation,
        } => call(ctx, &name, &params, yes, &conversation),
        ToolsCommand::ImportOpenapi {
            source,
            operations,
            tag,
            search,
            out,
            dry_run,
        } => {
            let selection = engine::openapi::Selection {
                operations,
                tag,
                search,
            };
            let out = out.unwrap_or_else(|| ctx.paths().config_dir.join("tools"));
            import_openapi(ctx, &source, &selection, &out, dry_run)
        }
    }
}

fn import_openapi(
    ctx: &AppContext,
    source: &str,
    selection: &engine::openapi::Selection,
    out: &std::path::Path,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    let text = if source.starts_with("http://") || source.starts_with("https://") {
        None
    } else {
        Some(std::fs::read_to_string(source).with_context(|| format!("cannot read {source}"))?)
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let imported = runtime.block_on(engine::api::openapi::read(
        ctx,
        source,
        text,
        selection,
        &tokio_util::sync::CancellationToken::new(),
    ))?;
    if !dry_run {
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    }
    let (mut written, mut existing) = (0, 0);
    let mut secrets = std::collections::BTreeSet::new();
    for tool in &imported.tools {
        let path = out.join(&tool.file_name);
        if path.exists() {
            println!(
                "exists, not overwritten: {} ({})",
                path.display(),
                tool.operation
            );
            existing += 1;
            continue;
        }
        secrets.extend(tool.secrets.iter().cloned());
        if dry_run {
            println!("would write {} ({})", path.display(), tool.operation);
            for line in tool.text.lines() {
                println!("    {line}");
            }
            written += 1;
            continue;
        }
        let result = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, tool.text.as_bytes()));
        match result {
            Ok(()) => {
                println!("wrote {} ({})", path.display(), tool.operation);
                written += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                println!(
                    "exists, not overwritten: {} ({})",
                    path.display(),
                    tool.operation
                );
                existing += 1;
            }
            Err(e) => bail!("cannot write {}: {e}", path.display()),
        }
    }
    for skipped in &imported.skipped {
        println!("skipped {}: {}", skipped.operation, skipped.reason);
    }
    let verb = if dry_run { "would write" } else { "wrote" };
    println!(
        "{verb} {written} tool(s), {existing} already there, {} skipped, of {} operation(s) in {}",
        imported.skipped.len(),
        imported.total,
        if imported.title.is_empty() {
            source
        } else {
            &imported.title
        },
    );
    if !secrets.is_empty() {
        let names: Vec<_> = secrets.into_iter().collect();
        println!(
            "secrets used: {} (set each with `artifactflow-cli secrets set NAME`)",
            names.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn list(ctx: &AppContext, json: bool) -> anyhow::Result<ExitCode> {
    // The tools a run may call, as the app's Tools page lists them; the per-conversation
    // artifact tools are left out, as they are no file or server of the user's.
    let tools: Vec<_> = engine::api::catalog::tools(ctx)
        .into_iter()
        .filter(|t| t.source != "artifact")
        .collect();
    if json {
        let tools: Vec<_> = tools
            .iter()
            .map(|t| {
                let mut source = serde_json::json!({ "kind": t.source });
                if let Some(file) = &t.file {
                    source["file"] = file.as_str().into();
                }
                if let Some(server) = &t.server {
                    source["server"] = server.as_str().into();
                }
                serde_json::json!({
                    "name": t.name,
                    "source": source,
                    "permission": t.permission,
                    "parameters": t.params,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&tools)?);
        return Ok(ExitCode::SUCCESS);
    }
    for t in &tools {
        let source = match (t.source.as_str(), &t.file, &t.server) {
            (_, Some(file), _) => file.clone(),
            (_, _, Some(server)) => format!("MCP server {server}"),
            ("builtin", ..) => "built-in".into(),
            (other, ..) => other.to_string(),
        };
        let params: Vec<_> = t
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
            t.name,
            serde_json::to_value(t.permission)?.as_str().unwrap_or(""),
            source,
            params.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn show(ctx: &AppContext, name: &str) -> anyhow::Result<ExitCode> {
    // The artifact tools too (every conversation has them).
    let registry = ctx.conversation_registry("");
    let Some(tool) = registry.get(name) else {
        bail!("there is no tool `{name}` (see `artifactflow-cli tools list`)");
    };
    let instructions = engine::parser::tool_instructions(std::slice::from_ref(tool.spec()));
    println!("{}", crate::term::clean(&instructions));
    Ok(ExitCode::SUCCESS)
}

fn grammar(
    ctx: &AppContext,
    names: &[String],
    native: bool,
    family: &str,
) -> anyhow::Result<ExitCode> {
    use engine::models::ToolFamily;
    use engine::parser::grammar::{guided_calls, CallFormat};
    let Some(family) = ToolFamily::ALL
        .into_iter()
        .find(|f| f.as_str().eq_ignore_ascii_case(family.trim()))
    else {
        let known: Vec<&str> = ToolFamily::ALL.iter().map(|f| f.as_str()).collect();
        bail!(
            "`{family}` is not a call family; name one of {}",
            known.join(", ")
        );
    };
    // The artifact tools too (every conversation has them).
    let registry = ctx.conversation_registry("");
    let specs = names
        .iter()
        .map(|name| match registry.get(name) {
            Some(tool) => Ok(tool.spec().clone()),
            None => bail!("there is no tool `{name}` (see `artifactflow-cli tools list`)"),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let guided = if native {
        // Under the names native calls use (see `wire_tool_name`).
        let offered: Vec<_> = specs
            .into_iter()
            .map(|mut s| {
                s.name = engine::models::wire_tool_name(&s.name).into_owned();
                s
            })
            .collect();
        guided_calls(&offered, family, CallFormat::Native)
    } else {
        guided_calls(&specs, family, CallFormat::Xml)
    };
    let Some(guided) = guided.map_err(|mut too_large| {
        // Named as given (not as offered natively), with its MCP server.
        if let Some(name) = names
            .iter()
            .find(|n| native && engine::models::wire_tool_name(n) == too_large.tool)
        {
            too_large.tool = name.clone();
        }
        too_large.server =
            engine::mcp::server_of(&too_large.tool, &ctx.config().mcp).map(str::to_string);
        anyhow::anyhow!("no grammar: {too_large}")
    })?
    else {
        bail!("no grammar: none of these tools has a name");
    };
    println!(
        "# {} calls in the forms of the {family} family; on once the answer matches one of:",
        if native { "native" } else { "XML" }
    );
    for trigger in &guided.triggers {
        println!("#   {trigger}");
    }
    print!("{}", guided.grammar.gbnf());
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
    let outcome = engine::api::direct::call(
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
    if let Some(view) = outcome
        .result
        .metadata
        .get("mcp_view")
        .and_then(|v| v.as_str())
    {
        eprintln!(
            "(this tool has a view, {}: the app shows it when an agent calls the tool)",
            crate::term::clean(view)
        );
    }
    // The model is told only that a rule denied the call; the person sees which rule.
    if outcome.status == engine::calls::CallStatus::Denied {
        if let Some(reason) = &outcome.reason {
            eprintln!("{}", crate::term::clean(reason));
        }
    }
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
