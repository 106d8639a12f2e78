//! A permission rule as written: the tool it names, the parameter patterns it needs and what it
//! does. Plain data, below everything that stores, checks or matches rules (the permission
//! checker compiles a [`RuleSpec`] into a rule; a conversation's "calls like this" grant stores
//! one).

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// What a rule does with a call it matches, ordered from loosest to strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum RuleAction {
    /// Run without asking.
    Allow,
    /// Ask every time (a conversation's always-allow does not skip it).
    Confirm,
    /// Never run.
    Deny,
}

/// A rule as written, before it is checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RuleSpec {
    /// A tool name or a glob over tool names (`github.*`, `*`), or `re:` and a regex.
    pub tool: String,
    /// Parameter name (or `$host`, `$url`, `$method`) → pattern; all must match.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[cfg_attr(feature = "specta", specta(type = Option<std::collections::HashMap<String, String>>))]
    pub when: IndexMap<String, String>,
    /// What happens to a matching call.
    pub action: RuleAction,
}
