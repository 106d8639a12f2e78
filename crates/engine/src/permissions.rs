//! The permission decision: a small pure function, separate from how the engine waits for an
//! answer.
//!
//! Order (seed 000's flow chart): a tool the agent does not list is denied; otherwise the
//! agent's own setting for the tool wins over the tool's default; `auto` runs; `confirm` runs
//! only if the tool is in the conversation's always-allowed set, else the user is asked.

use crate::config::Permission;

/// What to do with one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask the user first; run only on a yes.
    Ask,
    /// Do not run it; the reason goes back to the model.
    Deny(String),
}

/// What the decision looks at.
#[derive(Debug, Clone, Copy)]
pub struct PermissionInput<'a> {
    /// The tool's name (for messages).
    pub tool: &'a str,
    /// The tool's default permission.
    pub tool_default: Permission,
    /// `None` when there is no agent (a direct call from the CLI or the tool editor's test
    /// panel); otherwise whether the agent lists the tool and with which permission.
    pub agent: Option<AgentSetting>,
    /// Is the tool in the conversation's always-allowed set?
    pub always_allowed: bool,
}

/// The calling agent's view of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentSetting {
    /// The agent's `tools:` map does not list the tool.
    NotListed,
    /// The agent lists it with this permission.
    Listed(Permission),
}

/// Decide what to do with one call.
pub fn decide(input: PermissionInput<'_>) -> Decision {
    let effective = match input.agent {
        Some(AgentSetting::NotListed) => {
            return Decision::Deny(format!(
                "tool `{}` is not available to this agent; use only the tools listed in your instructions",
                input.tool
            ))
        }
        Some(AgentSetting::Listed(p)) => p,
        None => input.tool_default,
    };
    match effective {
        Permission::Auto => Decision::Allow,
        Permission::Confirm if input.always_allowed => Decision::Allow,
        Permission::Confirm => Decision::Ask,
    }
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
}

/// The failed-result message a denial sends back to the model.
pub fn denied_message(tool: &str, why: &str) -> String {
    format!("the user did not allow `{tool}` to run ({why}); do not retry it unchanged — continue without it or ask the user")
}

#[cfg(test)]
mod tests {
    use super::*;
    use AgentSetting::*;
    use Permission::*;

    fn d(tool_default: Permission, agent: Option<AgentSetting>, always_allowed: bool) -> Decision {
        decide(PermissionInput {
            tool: "t",
            tool_default,
            agent,
            always_allowed,
        })
    }

    #[test]
    fn every_combination() {
        for default in [Auto, Confirm] {
            for always in [false, true] {
                // Not listed: always denied, whatever the rest says.
                assert!(matches!(
                    d(default, Some(NotListed), always),
                    Decision::Deny(_)
                ));
                // The agent's setting wins over the tool's default.
                assert_eq!(d(default, Some(Listed(Auto)), always), Decision::Allow);
                assert_eq!(
                    d(default, Some(Listed(Confirm)), always),
                    if always {
                        Decision::Allow
                    } else {
                        Decision::Ask
                    }
                );
            }
        }
        // No agent: the tool's default.
        assert_eq!(d(Auto, None, false), Decision::Allow);
        assert_eq!(d(Confirm, None, false), Decision::Ask);
        assert_eq!(d(Confirm, None, true), Decision::Allow);
    }
}
