//! Permission rules: allow, confirm or deny a call by what it does.
//!
//! One shape everywhere (`settings.yaml`, an agent's frontmatter, a conversation's "calls like
//! this" grant):
//!
//! ```yaml
//! permission_rules:
//!   - tool: web_fetch                     # a tool name or a glob: github.*, *
//!     when: {url: "https://docs.rs/**"}   # parameter patterns, all must match
//!     action: allow                       # allow | confirm | deny
//!   - tool: "*"
//!     when: {$host: "*.internal"}         # $host / $url / $method: where the call goes
//!     action: deny
//! ```
//!
//! Patterns are globs: `*` matches any run of characters except `/`, `**` any run including
//! `/`, `?` one character, `[abc]` / `[!abc]` a class, `{a,b}` either. `re:` starts a regular
//! expression instead (Rust `regex` syntax) that must match the whole value. A tool pattern's
//! `*` also matches `/`. `$host` compares without regard to case. A parameter that is not a
//! string is compared in its JSON form (`3`, `true`); a missing parameter never matches.
//!
//! Precedence ([`decide`]): a tool outside the calling agent's list is denied; otherwise, of the
//! global and agent rules that match, the strictest wins (deny, then confirm, then allow),
//! wherever each comes from, so an agent's rules can narrow but never loosen a global deny or
//! confirm. Only when no rule matches does the default apply (the agent's permission for the
//! tool, else the tool's), and a conversation grant can turn that default's `confirm` into
//! `allow`.

use globset::{GlobBuilder, GlobMatcher};
use indexmap::IndexMap;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::Permission;
use crate::tools::Params;

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
    pub when: IndexMap<String, String>,
    /// What happens to a matching call.
    pub action: RuleAction,
}

/// Where a rule comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum RuleOrigin {
    /// `settings.yaml`'s `permission_rules`, at this line (1-based).
    Global {
        /// The file, as shown to people.
        file: String,
        /// The rule's line.
        line: u32,
    },
    /// An agent's frontmatter `permission_rules`; it applies to that agent's calls only.
    Agent {
        /// The agent's name.
        agent: String,
        /// The file, as shown to people.
        file: String,
        /// The rule's line.
        line: u32,
    },
    /// A conversation's "calls like this" grant; it can only allow, and only in that
    /// conversation.
    Conversation {
        /// The conversation.
        conversation_id: String,
        /// The grant's id (to delete it).
        grant_id: String,
    },
}

/// The special parameter names: the call's resolved destination.
pub const DESTINATION_KEYS: [&str; 3] = ["$host", "$url", "$method"];

/// Where a call goes, as resolved just before it runs (secrets filled in). Never shown or
/// stored: a rule's verdict names the rule, not the value it matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// `GET`, `POST`, …
    pub method: String,
    /// The full URL (may contain secrets).
    pub url: String,
    /// The host, lower case, without port.
    pub host: String,
}

/// What a rule is matched against.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The call's parameters, typed and with defaults filled.
    pub params: &'a Params,
    /// Where it goes, for tools that send a request (HTTP tools, the web tools).
    pub destination: Option<&'a Destination>,
}

/// A checked pattern.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// A glob.
    Glob(GlobMatcher),
    /// A `re:` regular expression, anchored at both ends.
    Regex(Regex),
}

impl Pattern {
    /// Check one pattern. `path_like`: `*` stops at `/` (parameters); tool names have none.
    /// `ignore_case`: for hosts.
    pub fn new(text: &str, path_like: bool, ignore_case: bool) -> Result<Pattern, String> {
        if let Some(re) = text.strip_prefix("re:") {
            let anchored = format!("^(?:{re})$");
            return regex::RegexBuilder::new(&anchored)
                .case_insensitive(ignore_case)
                .build()
                .map(Pattern::Regex)
                .map_err(|e| {
                    format!(
                        "bad regular expression `{re}`: {}",
                        first_line(&e.to_string())
                    )
                });
        }
        GlobBuilder::new(text)
            .literal_separator(path_like)
            .case_insensitive(ignore_case)
            .backslash_escape(true)
            .build()
            .map(|g| Pattern::Glob(g.compile_matcher()))
            .map_err(|e| format!("bad glob `{text}`: {}", glob_error(&e)))
    }

    /// Does `value` match?
    pub fn is_match(&self, value: &str) -> bool {
        match self {
            Pattern::Glob(g) => g.is_match(value),
            Pattern::Regex(r) => r.is_match(value),
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or(text)
        .to_string()
}

fn glob_error(e: &globset::Error) -> String {
    e.kind().to_string()
}

/// A checked rule, ready to match.
#[derive(Debug, Clone)]
pub struct Rule {
    /// As written.
    pub spec: RuleSpec,
    /// Where it comes from.
    pub origin: RuleOrigin,
    tool: Pattern,
    when: Vec<(String, Pattern)>,
}

impl Rule {
    /// Check a rule's patterns (not whether its tool and parameters exist: that needs the tool
    /// list, see the loader). The error says which pattern is wrong and why.
    pub fn new(spec: RuleSpec, origin: RuleOrigin) -> Result<Rule, String> {
        if spec.tool.trim().is_empty() {
            return Err("`tool` is empty: name a tool or use `*` for every tool".into());
        }
        let tool = Pattern::new(&spec.tool, false, false).map_err(|e| format!("tool: {e}"))?;
        let mut when = Vec::with_capacity(spec.when.len());
        for (key, pattern) in &spec.when {
            if key.starts_with('$') && !DESTINATION_KEYS.contains(&key.as_str()) {
                return Err(format!(
                    "`{key}` is not a destination key: use $host, $url or $method"
                ));
            }
            let compiled = Pattern::new(pattern, true, key == "$host" || key == "$method")
                .map_err(|e| format!("when.{key}: {e}"))?;
            when.push((key.clone(), compiled));
        }
        Ok(Rule {
            spec,
            origin,
            tool,
            when,
        })
    }

    /// Does the rule's tool pattern cover `tool`?
    pub fn covers_tool(&self, tool: &str) -> bool {
        self.tool.is_match(tool)
    }

    /// Does the rule apply to this call? Every `when` entry must match; a parameter the call
    /// does not have, or a destination key for a call without a destination, does not match.
    pub fn matches(&self, facts: &CallFacts<'_>) -> bool {
        self.covers_tool(facts.tool)
            && self.when.iter().all(|(key, pattern)| {
                let value = match key.as_str() {
                    "$host" => facts.destination.map(|d| d.host.clone()),
                    "$url" => facts.destination.map(|d| d.url.clone()),
                    "$method" => facts.destination.map(|d| d.method.clone()),
                    name => facts.params.get(name).map(value_text),
                };
                value.is_some_and(|v| pattern.is_match(&v))
            })
    }
}

/// A parameter as rules see it: strings as they are, anything else as JSON.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The calling agent's view of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentSetting {
    /// The agent's `tools:` map does not list the tool.
    NotListed,
    /// The agent lists it with this permission.
    Listed(Permission),
}

/// A conversation grant that may turn the default's `confirm` into `allow`.
#[derive(Debug, Clone)]
pub enum GrantCheck {
    /// It applies to this call.
    Applies {
        /// The grant's id.
        grant_id: String,
    },
    /// It was for this tool but no longer applies (its destination or server changed): why,
    /// in words for the permission dialog, never naming a secret.
    Stale {
        /// The grant's id.
        grant_id: String,
        /// Why it no longer applies.
        why: String,
    },
}

/// Everything a decision looks at.
pub struct DecisionInput<'a> {
    /// The call.
    pub facts: CallFacts<'a>,
    /// The tool's default permission.
    pub tool_default: Permission,
    /// `None` for a direct call (CLI `tools call`, the editor's test-run); otherwise whether the
    /// agent lists the tool, and with which permission.
    pub agent: Option<AgentSetting>,
    /// Global rules, then the calling agent's (already filtered to that agent), in file order.
    pub rules: &'a [Rule],
    /// The conversation's grants for this tool, checked against this call.
    pub grants: &'a [GrantCheck],
}

/// Why a call got its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Because {
    /// The calling agent does not list the tool.
    NotListed,
    /// This rule matched (the first of the strictest that matched).
    Rule {
        /// The rule.
        rule: RuleSpec,
        /// Where it comes from.
        origin: RuleOrigin,
    },
    /// A conversation grant allowed it.
    Grant {
        /// The grant's id.
        grant_id: String,
    },
    /// No rule matched: the default permission (the agent's for the tool, else the tool's).
    Default {
        /// The default.
        permission: Permission,
        /// True when the agent's `tools:` entry set it.
        from_agent: bool,
    },
}

/// A decision and its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Verdict {
    /// Allow (run), confirm (ask) or deny (never run).
    pub action: RuleAction,
    /// Why.
    pub because: Because,
    /// Grants for this tool in the conversation that no longer apply, and why (the dialog says
    /// so when it asks again).
    pub stale_grants: Vec<String>,
}

impl Verdict {
    /// Can the permission dialog offer to remember an approval? Not when a rule asks every
    /// time: a grant could not loosen it.
    pub fn grantable(&self) -> bool {
        self.action == RuleAction::Confirm && matches!(self.because, Because::Default { .. })
    }
}

/// Decide what to do with one call (see the module docs for the order).
pub fn decide(input: &DecisionInput<'_>) -> Verdict {
    let stale_grants = input
        .grants
        .iter()
        .filter_map(|g| match g {
            GrantCheck::Stale { why, .. } => Some(why.clone()),
            GrantCheck::Applies { .. } => None,
        })
        .collect();
    let verdict = |action, because| Verdict {
        action,
        because,
        stale_grants,
    };
    let agent_permission = match input.agent {
        Some(AgentSetting::NotListed) => {
            return verdict(RuleAction::Deny, Because::NotListed);
        }
        Some(AgentSetting::Listed(p)) => Some(p),
        None => None,
    };
    let mut strictest: Option<&Rule> = None;
    for rule in input.rules.iter().filter(|r| r.matches(&input.facts)) {
        if strictest.is_none_or(|s| rule.spec.action > s.spec.action) {
            strictest = Some(rule);
        }
    }
    if let Some(rule) = strictest {
        return verdict(
            rule.spec.action,
            Because::Rule {
                rule: rule.spec.clone(),
                origin: rule.origin.clone(),
            },
        );
    }
    let permission = agent_permission.unwrap_or(input.tool_default);
    let default = Because::Default {
        permission,
        from_agent: agent_permission.is_some(),
    };
    match permission {
        Permission::Auto => verdict(RuleAction::Allow, default),
        Permission::Confirm => {
            let granted = input.grants.iter().find_map(|g| match g {
                GrantCheck::Applies { grant_id } => Some(grant_id.clone()),
                GrantCheck::Stale { .. } => None,
            });
            match granted {
                Some(grant_id) => verdict(RuleAction::Allow, Because::Grant { grant_id }),
                None => verdict(RuleAction::Confirm, default),
            }
        }
    }
}

/// The words for a person (and the model, on a denial) of why a rule decided: the rule as
/// written and where it is, never the value it matched.
pub fn describe_rule(spec: &RuleSpec, origin: &RuleOrigin) -> String {
    let when = if spec.when.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = spec.when.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        format!(" when {{{}}}", parts.join(", "))
    };
    let place = match origin {
        RuleOrigin::Global { file, line } => format!("{file}:{line}"),
        RuleOrigin::Agent { agent, file, line } => format!("agent {agent}, {file}:{line}"),
        RuleOrigin::Conversation { .. } => "this conversation's grant".to_string(),
    };
    let action = match spec.action {
        RuleAction::Allow => "allow",
        RuleAction::Confirm => "confirm",
        RuleAction::Deny => "deny",
    };
    format!("rule `{action} {}{when}` ({place})", spec.tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(tool: &str, when: &[(&str, &str)], action: RuleAction, line: u32) -> Rule {
        Rule::new(
            RuleSpec {
                tool: tool.into(),
                when: when
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                action,
            },
            RuleOrigin::Global {
                file: "settings.yaml".into(),
                line,
            },
        )
        .unwrap()
    }

    fn params(v: Value) -> Params {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn globs_follow_the_documented_syntax() {
        let docs = rule(
            "web_fetch",
            &[("url", "https://docs.rs/**")],
            RuleAction::Allow,
            1,
        );
        let p = params(json!({"url": "https://docs.rs/serde/latest/serde/"}));
        let facts = CallFacts {
            tool: "web_fetch",
            params: &p,
            destination: None,
        };
        assert!(docs.matches(&facts));
        let other = params(json!({"url": "https://evil.example/?q=https://docs.rs/x"}));
        assert!(!docs.matches(&CallFacts {
            params: &other,
            ..facts
        }));
        // `*` stays inside one path segment.
        let one = rule(
            "web_fetch",
            &[("url", "https://docs.rs/*")],
            RuleAction::Allow,
            1,
        );
        assert!(!one.matches(&facts));
        // A tool glob, a missing parameter, a non-string parameter.
        let gh = rule("github.*", &[("count", "3")], RuleAction::Deny, 1);
        let n = params(json!({"count": 3}));
        assert!(gh.matches(&CallFacts {
            tool: "github.list_issues",
            params: &n,
            destination: None
        }));
        assert!(!gh.matches(&CallFacts {
            tool: "github.list_issues",
            params: &p,
            destination: None
        }));
        assert!(!gh.matches(&CallFacts {
            tool: "gitlab.list_issues",
            params: &n,
            destination: None
        }));
    }

    #[test]
    fn destination_keys_and_regexes() {
        let dest = Destination {
            method: "POST".into(),
            url: "https://API.corp.internal/v1?key=s3cret".into(),
            host: "api.corp.internal".into(),
        };
        let p = Params::new();
        let facts = CallFacts {
            tool: "stock_price",
            params: &p,
            destination: Some(&dest),
        };
        assert!(rule("*", &[("$host", "*.INTERNAL")], RuleAction::Deny, 1).matches(&facts));
        assert!(rule("*", &[("$method", "post")], RuleAction::Deny, 1).matches(&facts));
        assert!(rule(
            "*",
            &[("$host", "re:api\\.(corp|lab)\\.internal")],
            RuleAction::Deny,
            1
        )
        .matches(&facts));
        // A regex must match the whole value.
        assert!(!rule("*", &[("$host", "re:corp")], RuleAction::Deny, 1).matches(&facts));
        // No destination: destination keys never match.
        assert!(
            !rule("*", &[("$host", "*")], RuleAction::Deny, 1).matches(&CallFacts {
                destination: None,
                ..facts
            })
        );
    }

    #[test]
    fn bad_patterns_are_errors_that_say_where() {
        let bad = |tool: &str, when: &[(&str, &str)]| {
            Rule::new(
                RuleSpec {
                    tool: tool.into(),
                    when: when
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                    action: RuleAction::Allow,
                },
                RuleOrigin::Global {
                    file: "settings.yaml".into(),
                    line: 4,
                },
            )
            .unwrap_err()
        };
        assert!(bad("web_[fetch", &[]).starts_with("tool: bad glob"));
        assert!(bad("*", &[("url", "re:(")]).starts_with("when.url: bad regular expression"));
        assert!(bad("*", &[("$hots", "x")]).contains("$host, $url or $method"));
        assert!(bad(" ", &[]).contains("`tool` is empty"));
    }

    #[test]
    fn strictest_matching_rule_wins_then_default_then_grant() {
        let p = params(json!({"url": "https://docs.rs/x"}));
        let facts = CallFacts {
            tool: "web_fetch",
            params: &p,
            destination: None,
        };
        let allow = rule(
            "web_fetch",
            &[("url", "https://docs.rs/**")],
            RuleAction::Allow,
            1,
        );
        let confirm = rule("*", &[], RuleAction::Confirm, 2);
        let deny = rule("web_*", &[], RuleAction::Deny, 3);
        let grant = [GrantCheck::Applies {
            grant_id: "g1".into(),
        }];
        let run = |rules: &[Rule], agent, grants: &[GrantCheck]| {
            decide(&DecisionInput {
                facts,
                tool_default: Permission::Confirm,
                agent,
                rules,
                grants,
            })
        };
        let listed = Some(AgentSetting::Listed(Permission::Confirm));
        assert_eq!(
            run(std::slice::from_ref(&allow), listed, &[]).action,
            RuleAction::Allow
        );
        assert_eq!(
            run(&[allow.clone(), confirm.clone()], listed, &grant).action,
            RuleAction::Confirm
        );
        let v = run(
            &[deny.clone(), allow.clone(), confirm.clone()],
            listed,
            &grant,
        );
        assert_eq!(v.action, RuleAction::Deny);
        assert!(matches!(v.because, Because::Rule { ref rule, .. } if rule.tool == "web_*"));
        assert!(!v.grantable());
        // No rule: the default, which a grant can loosen.
        assert_eq!(run(&[], listed, &[]).action, RuleAction::Confirm);
        assert!(run(&[], listed, &[]).grantable());
        assert_eq!(run(&[], listed, &grant).action, RuleAction::Allow);
        // Not listed beats everything.
        assert_eq!(
            run(&[allow], Some(AgentSetting::NotListed), &grant).because,
            Because::NotListed
        );
    }
}
