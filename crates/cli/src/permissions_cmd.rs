//! `artifactflow-cli permissions list|check`: the permission rules as loaded, and the decision
//! for one call with the rule (or default) that made it.

use std::process::ExitCode;

use engine::context::AppContext;
use engine::permissions::load::RuleView;
use engine::permissions::rules::{RuleAction, RuleOrigin};

/// Permission subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum PermissionsCommand {
    /// Every rule (settings.yaml's, then each agent's) with its file:line and action; ignored
    /// rules with their error.
    List {
        /// Print JSON: an array of {origin, spec, error, tools}.
        #[arg(long)]
        json: bool,
    },
    /// The decision for a call of TOOL with these parameters, and the rule (or default) that
    /// made it. Nothing runs. Exit 0 whatever the decision.
    Check {
        /// Tool name.
        tool: String,
        /// Parameters as key=value (values are strings, as from the model).
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// The calling agent (its tool list and rules apply); without it, a direct call.
        #[arg(long)]
        agent: Option<String>,
        /// Print JSON: {action, because, explanation}.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(ctx: &AppContext, cmd: PermissionsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        PermissionsCommand::List { json } => list(ctx, json),
        PermissionsCommand::Check {
            tool,
            params,
            agent,
            json,
        } => check(ctx, &tool, &params, agent.as_deref(), json),
    }
}

fn action_word(action: RuleAction) -> &'static str {
    match action {
        RuleAction::Allow => "allow",
        RuleAction::Confirm => "confirm",
        RuleAction::Deny => "deny",
    }
}

fn list(ctx: &AppContext, json: bool) -> anyhow::Result<ExitCode> {
    let rules = engine::api::settings::permission_rules(ctx);
    let views: Vec<&RuleView> = rules.all().collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&views)?);
        return Ok(ExitCode::SUCCESS);
    }
    if views.is_empty() {
        println!("no permission rules (add `permission_rules:` to settings.yaml or an agent)");
    }
    for v in views {
        let place = match &v.origin {
            RuleOrigin::Global { file, line } => format!("{file}:{line}"),
            RuleOrigin::Agent { agent, file, line } => format!("{file}:{line} (agent {agent})"),
            RuleOrigin::Conversation {
                conversation_id, ..
            } => {
                format!("conversation {conversation_id}")
            }
        };
        let rule = match &v.spec {
            Some(s) => {
                let when: Vec<String> = s.when.iter().map(|(k, p)| format!("{k}={p}")).collect();
                format!(
                    "{:<7} {}{}{}",
                    action_word(s.action),
                    s.tool,
                    if when.is_empty() { "" } else { " when " },
                    when.join(" ")
                )
            }
            None => "(not a rule)".into(),
        };
        let line = match &v.error {
            Some(e) => format!("{place}  IGNORED {rule}: {e}"),
            None => format!("{place}  {rule}"),
        };
        println!("{}", crate::term::clean(&line));
    }
    Ok(ExitCode::SUCCESS)
}

fn check(
    ctx: &AppContext,
    tool: &str,
    args: &[String],
    agent: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let params = crate::tools_cmd::parse_params(args)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let verdict = runtime
        .block_on(engine::api::check::check(ctx, tool, &params, agent))
        .map_err(anyhow::Error::msg)?;
    let explanation = engine::api::check::explain(&verdict);
    if json {
        println!(
            "{}",
            serde_json::json!({
                "action": verdict.action,
                "because": verdict.because,
                "explanation": explanation,
            })
        );
    } else {
        println!(
            "{}: {explanation}",
            crate::term::clean(action_word(verdict.action))
        );
    }
    Ok(ExitCode::SUCCESS)
}
