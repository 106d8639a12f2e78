//! "What would happen to this call?": the decision for a tool and parameters, without running
//! anything (`artifactflow-cli permissions check`).

use indexmap::IndexMap;

use crate::context::AppContext;
use crate::permissions::rules::{self, Because, CallFacts, Verdict};
use crate::permissions::set::{CallingAgent, Question};

/// Decide a call of `tool` with `raw` parameters (strings, as from the model) made by `agent`
/// (`None`: a direct call, which only the global rules apply to). No conversation grant is
/// assumed. The error says what is wrong with the question (an unknown tool or agent).
pub async fn check(
    ctx: &AppContext,
    tool: &str,
    raw: &IndexMap<String, String>,
    agent: Option<&str>,
) -> Result<Verdict, String> {
    let registry = ctx.conversation_registry("");
    let Some(found) = registry.get(tool).cloned() else {
        let mut names: Vec<_> = registry.iter().map(|t| t.spec().name.clone()).collect();
        names.sort();
        return Err(format!(
            "there is no tool `{tool}`; available: {}",
            names.join(", ")
        ));
    };
    let calling = match agent {
        None => None,
        Some(name) => {
            let config = ctx.config();
            let def = config
                .agents
                .iter()
                .find(|a| a.name == name)
                .ok_or_else(|| {
                    let names: Vec<_> = config.agents.iter().map(|a| a.name.as_str()).collect();
                    format!("there is no agent `{name}`; agents: {}", names.join(", "))
                })?;
            Some((def.name.clone(), def.tools.clone()))
        }
    };
    let specs = &found.spec().params;
    let mut params = crate::tools::pipeline::coerce(specs, raw);
    crate::tools::pipeline::apply_defaults(specs, &mut params);
    let destination = found
        .call_destination(&params, &ctx.tool_context(None))
        .await;
    Ok(ctx.permission_rules().decide(&Question {
        facts: CallFacts {
            tool,
            params: &params,
            destination: destination.as_ref(),
        },
        tool_default: found.permission(),
        agent: calling
            .as_ref()
            .map(|(name, tools)| CallingAgent { name, tools }),
        chain: &[],
        grants: &[],
    }))
}

/// Why, in words: the rule and where it is, or the default and whose it is.
pub fn explain(verdict: &Verdict) -> String {
    match &verdict.because {
        Because::NotListed => "the agent does not list the tool".into(),
        Because::Rule { rule, origin } => rules::describe_rule(rule, origin),
        Because::Grant { grant_id } => format!("conversation grant {grant_id}"),
        Because::Default {
            permission,
            from_agent,
        } => {
            let whose = if *from_agent {
                "the agent's"
            } else {
                "the tool's"
            };
            let level = match permission {
                crate::tool_spec::Permission::Auto => "auto",
                crate::tool_spec::Permission::Confirm => "confirm",
            };
            format!("no rule matched: {whose} default permission `{level}`")
        }
    }
}
