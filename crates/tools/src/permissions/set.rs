//! Every permission rule of the loaded config, compiled once ([`PermissionRules`]), and the one
//! decision every caller uses ([`PermissionRules::decide`]): the gate before a call runs, and
//! `artifactflow-cli permissions check` without running anything. Asking the person stays in
//! the gate; this returns data.

use std::collections::BTreeMap;

use super::load::RuleEntry;
use super::rules::{self, AgentSetting, CallFacts, DecisionInput, GrantCheck, Rule, RuleAction};
use crate::tool_spec::Permission;

/// Every permission rule, checked against the tools loaded when it was compiled (an ignored
/// rule keeps its located error). The engine compiles it when the config is reloaded or the
/// MCP tools change (see the engine's `AppContext::permission_rules`), never per call.
#[derive(Debug, Clone, Default)]
pub struct PermissionRules {
    /// `settings.yaml`'s, in file order.
    pub global: Vec<RuleEntry>,
    /// Each agent's, by agent name (sorted), in file order.
    pub agents: Vec<(String, Vec<RuleEntry>)>,
    /// The names of the tools loaded now (artifact tools included).
    pub tool_names: Vec<String>,
}

/// The calling agent, as a decision needs it.
#[derive(Debug, Clone, Copy)]
pub struct CallingAgent<'a> {
    /// Its name (whose own rules apply).
    pub name: &'a str,
    /// Its `tools:` map (whether it lists the tool, and with which permission).
    pub tools: &'a BTreeMap<String, Permission>,
}

/// One call to decide.
#[derive(Debug, Clone, Copy)]
pub struct Question<'a> {
    /// The call: tool, typed parameters, destination.
    pub facts: CallFacts<'a>,
    /// The tool's default permission.
    pub tool_default: Permission,
    /// The calling agent; `None` for a direct call (only the global rules apply).
    pub agent: Option<CallingAgent<'a>>,
    /// The agents from the conversation's agent down to the caller (their deny and confirm
    /// rules apply too); empty for a direct call or a top-level agent.
    pub chain: &'a [String],
    /// The conversation's grants for this tool, checked against this call.
    pub grants: &'a [GrantCheck],
}

impl PermissionRules {
    /// Every entry: global first, then each agent's.
    pub fn all(&self) -> impl Iterator<Item = &RuleEntry> {
        self.global
            .iter()
            .chain(self.agents.iter().flat_map(|(_, e)| e.iter()))
    }

    /// The rules that apply to calls of `agent` (`None`: a direct call): the valid global ones,
    /// then that agent's own.
    pub fn for_caller(&self, agent: Option<&str>) -> Vec<&Rule> {
        let own = agent
            .and_then(|name| self.agents.iter().find(|(a, _)| a == name))
            .map(|(_, e)| e.as_slice())
            .unwrap_or_default();
        self.global
            .iter()
            .chain(own)
            .filter_map(|e| e.rule.as_ref())
            .collect()
    }

    /// The rules that apply to a call of `agent` made for `chain` (the agents from the
    /// conversation's agent down to the caller): [`Self::for_caller`]'s, plus the deny and
    /// confirm rules of every other agent in the chain, so a lead's limits follow the work it
    /// hands over (the strictest rule still wins). A lead's allow rules do not widen what its
    /// sub-agent may do.
    pub fn for_chain(&self, chain: &[String], agent: Option<&str>) -> Vec<&Rule> {
        let mut rules = self.for_caller(agent);
        let mut seen: Vec<&str> = agent.into_iter().collect();
        for lead in chain {
            if seen.contains(&lead.as_str()) {
                continue;
            }
            seen.push(lead);
            let Some((_, entries)) = self.agents.iter().find(|(a, _)| a == lead) else {
                continue;
            };
            rules.extend(
                entries
                    .iter()
                    .filter_map(|e| e.rule.as_ref())
                    .filter(|r| r.spec.action != RuleAction::Allow),
            );
        }
        rules
    }

    /// Decide `question` (see [`rules::decide`] for the order): allow, confirm or deny, and
    /// why. Pure: nothing is asked, run or compiled.
    pub fn decide(&self, question: &Question<'_>) -> rules::Verdict {
        let rules = self.for_chain(question.chain, question.agent.map(|a| a.name));
        rules::decide(&DecisionInput {
            facts: question.facts,
            tool_default: question.tool_default,
            agent: question.agent.map(|a| {
                match super::agent_setting(a.tools, question.facts.tool) {
                    Some(p) => AgentSetting::Listed(p),
                    None => AgentSetting::NotListed,
                }
            }),
            rules: &rules,
            grants: question.grants,
        })
    }
}
