//! The permission decision: a small pure function ([`rules::decide`]), separate from how the
//! engine waits for an answer.
//!
//! Order (seed 000's flow chart, with rules): a tool the agent does not list is denied; then
//! the strictest matching permission rule; then the default (the agent's own setting for the
//! tool wins over the tool's), where `confirm` runs without asking only under a conversation
//! grant.

use crate::tool_spec::Permission;

pub mod grants;
pub mod load;
pub mod rules;
pub mod set;

pub use artifactflow_store::calls::denied_message;
pub use rules::AgentSetting;
pub use set::{CallingAgent, PermissionRules, Question};

/// Does an agent's tool entry `pattern` (`SERVER.TOOL` or `SERVER.*`) name the tool `name`?
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix(".*") {
        Some(server) => name
            .strip_prefix(server)
            .is_some_and(|rest| rest.starts_with('.') && rest.len() > 1),
        None => pattern == name,
    }
}

/// The permission an agent's `tools:` map gives the tool `name`: its own entry, else a
/// `SERVER.*` entry that covers it; `None` when the agent does not list it.
pub fn agent_setting(
    tools: &std::collections::BTreeMap<String, Permission>,
    name: &str,
) -> Option<Permission> {
    tools.get(name).copied().or_else(|| {
        tools
            .iter()
            .find(|(pattern, _)| pattern.ends_with(".*") && pattern_matches(pattern, name))
            .map(|(_, p)| *p)
    })
}

/// The user's answer to a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Answer {
    /// Run it this once.
    Approve,
    /// Run it, and don't ask again for this tool in this conversation.
    ApproveAlways,
    /// Don't run it.
    Deny,
}

/// What the user is asked: exactly what will run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PermissionRequest {
    /// Tool name.
    pub tool: String,
    /// The effective permission level (always `confirm` when asking).
    pub permission: Permission,
    /// Every parameter, coerced and with defaults filled.
    pub params: serde_json::Map<String, serde_json::Value>,
    /// For HTTP tools: method, URL, headers and body, secrets masked.
    pub request: Option<serde_json::Value>,
    /// Can the answer be remembered ("always allow")? False when a rule asks every time.
    pub grantable: bool,
    /// When not grantable: the rule that asks every time, in words.
    pub asking_rule: Option<String>,
    /// Grants of this tool in the conversation that no longer apply, and why (why it asks
    /// again).
    pub stale_grants: Vec<String>,
    /// The "calls like this" rule proposed for remembering (editable in the dialog).
    pub proposed_rule: Option<rules::RuleSpec>,
    /// A note on the proposal (a secret holds the host, so the proposal leaves it out).
    pub proposal_note: Option<String>,
    /// Set when the view of an MCP server (MCP Apps) asks, not an agent: that server's name
    /// (the dialog says "the view of <server>").
    #[serde(default)]
    pub view_of: Option<String>,
}

/// The failed-result message a permission rule's denial sends back to the model: not the
/// user's answer, and without the rule's pattern (it would say what to rewrite).
pub fn rule_denied_message(tool: &str) -> String {
    format!("`{tool}` was not run: denied by a permission rule; do not retry it unchanged — continue without it or ask the user")
}
