//! Conversation grants: "always allow" answers, scoped, and whether one applies to a call.
//!
//! A grant is either a whole tool in one conversation ("this tool in this conversation") or a
//! "calls like this" rule ([`RuleSpec`] with [`RuleOrigin::Conversation`], always `allow`). The
//! rows, with what each was granted for ([`Binding`]), are kept by the store
//! (`artifactflow_store::grants`, re-exported here); this module binds a call ([`binding_for`]),
//! checks the grants against it ([`check`]) and proposes the "calls like this" rule. When a
//! call's binding differs, the grant no longer applies ([`GrantCheck::Stale`]) and the
//! permission dialog says why. A grant only ever loosens the default's `confirm` (see
//! [`super::rules::decide`]): a confirm or deny rule is never loosened by one.
//!
//! Grants kept from before bindings existed (the old `always_allowed_tools` list, migration 10)
//! are bound to nothing: they apply whatever the destination, as they did.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use artifactflow_store::grants::{
    add, delete, delete_tool, for_conversation, list, whole_tools, Binding, BindingKind, Grant,
};

use super::rules::{CallFacts, Destination, GrantCheck, Rule, RuleAction, RuleOrigin, RuleSpec};
use crate::tool_spec::Params;
use crate::tools::{Tool, ToolSource};

fn sha256_hex(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// The binding of a call of `tool` going to `destination`: its host for a tool that sends a
/// request (labelled by the secret that holds it, if one does), its server for an MCP tool,
/// else nothing. An MCP tool's destination-less call is bound to its server; a request whose
/// destination cannot be resolved (a secret is not set) is bound to a host with no digest.
pub fn binding_for(tool: &dyn Tool, destination: Option<&Destination>) -> Binding {
    if let ToolSource::Mcp { server } = tool.source() {
        return Binding {
            kind: BindingKind::Server,
            digest: tool.server_launch_digest(),
            label: Some(server),
        };
    }
    let secret = tool.host_secret();
    match destination {
        Some(d) => Binding {
            kind: BindingKind::Host,
            digest: Some(sha256_hex(&d.host)),
            label: Some(match &secret {
                Some(name) => host_from(name),
                None => d.host.clone(),
            }),
        },
        None if secret.is_some() || matches!(tool.source(), ToolSource::Http { .. }) => Binding {
            kind: BindingKind::Host,
            digest: None,
            label: secret.as_deref().map(host_from),
        },
        None => Binding::none(),
    }
}

fn host_from(secret: &str) -> String {
    format!("the host from {secret}")
}

/// The user's choice of what an "always allow" answer remembers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum GrantChoice {
    /// This tool in this conversation.
    Tool,
    /// Calls like this one: the rule (as the user edited it) in this conversation. Its action
    /// is always `allow`, whatever was sent.
    Rule {
        /// The rule.
        rule: RuleSpec,
    },
}

impl GrantChoice {
    /// Check a rule choice's patterns: the error says which one is wrong and why. A grant's
    /// rule only allows, so the action is set to `allow`.
    pub fn checked(self) -> Result<GrantChoice, String> {
        match self {
            GrantChoice::Tool => Ok(GrantChoice::Tool),
            GrantChoice::Rule { mut rule } => {
                rule.action = RuleAction::Allow;
                rule.when.retain(|k, _| !k.trim().is_empty());
                Rule::new(rule.clone(), placeholder_origin())?;
                Ok(GrantChoice::Rule { rule })
            }
        }
    }
}

fn placeholder_origin() -> RuleOrigin {
    RuleOrigin::Conversation {
        conversation_id: String::new(),
        grant_id: String::new(),
    }
}

/// The conversation's grants checked against one call (`facts`, bound to `current`): each
/// whole-tool grant of the tool, and each rule grant whose rule matches the call, applies when
/// its binding is the call's (or it is bound to nothing), else is stale, with why.
pub fn check(grants: &[Grant], facts: &CallFacts<'_>, current: &Binding) -> Vec<GrantCheck> {
    grants
        .iter()
        .filter_map(|g| {
            let same_tool = g.tool == facts.tool;
            match &g.rule {
                None if !same_tool => return None,
                None => {}
                Some(spec) => {
                    let origin = RuleOrigin::Conversation {
                        conversation_id: g.conversation_id.clone(),
                        grant_id: g.id.clone(),
                    };
                    let rule = Rule::new(spec.clone(), origin).ok()?;
                    if spec.action != RuleAction::Allow || !rule.matches(facts) {
                        return None;
                    }
                    // A rule reaching other tools (a glob) is bound only for its own tool.
                    if !same_tool {
                        return Some(GrantCheck::Applies {
                            grant_id: g.id.clone(),
                        });
                    }
                }
            }
            Some(match stale_reason(facts.tool, &g.binding, current) {
                None => GrantCheck::Applies {
                    grant_id: g.id.clone(),
                },
                Some(why) => GrantCheck::Stale {
                    grant_id: g.id.clone(),
                    why,
                },
            })
        })
        .collect()
}

/// Why a grant bound to `then` does not apply to a call bound to `now`; `None` when it does.
/// The words name hosts only through their labels (never a secret-held host).
pub fn stale_reason(tool: &str, then: &Binding, now: &Binding) -> Option<String> {
    if then.kind == BindingKind::None {
        return None;
    }
    if then.kind == now.kind && then.digest.is_some() && then.digest == now.digest {
        return None;
    }
    let was = then.label.as_deref().unwrap_or("an unknown host");
    Some(match then.kind {
        BindingKind::Server => format!(
            "You allowed {tool} in this conversation when server {was} was launched differently; \
             its command, arguments or URL have changed since"
        ),
        _ => match (&now.label, &now.digest) {
            (_, None) => format!(
                "You allowed {tool} in this conversation when it went to {was}; where it goes \
                 now cannot be told (a secret is not set)"
            ),
            (Some(label), Some(_)) if label != was => format!(
                "You allowed {tool} in this conversation when it went to {was}; it now goes to \
                 {label}"
            ),
            _ => format!(
                "You allowed {tool} in this conversation when it went to {was}; it now goes to a \
                 different host"
            ),
        },
    })
}

/// The "calls like this" rule the dialog proposes for a call, and a note on it: the same tool,
/// plus its host for a tool that sends a request (not when a secret holds the host: then the
/// tool only, and the note says so); for the built-in `web_fetch`, whose destination is always
/// its reader service, the page's site instead: the canonical URL's scheme and host (and port)
/// followed by `/**`.
pub fn propose(
    tool: &dyn Tool,
    name: &str,
    params: &Params,
    destination: Option<&Destination>,
) -> (RuleSpec, Option<String>) {
    let mut rule = RuleSpec {
        tool: name.to_string(),
        when: Default::default(),
        action: RuleAction::Allow,
    };
    let mut note = None;
    if name == "web_fetch" && matches!(tool.source(), ToolSource::Builtin) {
        // The reader service is always the destination: the page's site is what varies.
        if let Some(url) = params
            .get("url")
            .and_then(|v| v.as_str())
            .and_then(|u| crate::util::url::canonical_url(u).ok())
            .and_then(|u| reqwest::Url::parse(&u).ok())
        {
            if let Some(host) = url.host_str() {
                let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
                rule.when.insert(
                    "url".into(),
                    format!("{}://{}{port}/**", url.scheme(), glob_literal(host)),
                );
            }
        }
    } else if let Some(secret) = tool.host_secret() {
        note = Some(format!(
            "The host comes from the secret {secret}, so it is not part of the proposal: this \
             rule allows {name} wherever it goes"
        ));
    } else if let Some(d) = destination {
        rule.when.insert("$host".into(), glob_literal(&d.host));
    }
    (rule, note)
}

/// `text` as a glob matching exactly it (special characters escaped).
fn glob_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(label: &str, host: &str) -> Binding {
        Binding {
            kind: BindingKind::Host,
            digest: Some(sha256_hex(host)),
            label: Some(label.into()),
        }
    }

    #[test]
    fn stale_reasons_name_labels_never_secret_hosts() {
        let a = host("api.a.com", "api.a.com");
        let b = host("api.b.com", "api.b.com");
        assert_eq!(stale_reason("stock_price", &a, &a), None);
        assert_eq!(
            stale_reason("stock_price", &a, &b).unwrap(),
            "You allowed stock_price in this conversation when it went to api.a.com; it now goes to api.b.com"
        );
        let s1 = host("the host from API_BASE", "one.internal");
        let s2 = host("the host from API_BASE", "two.internal");
        let why = stale_reason("quote", &s1, &s2).unwrap();
        assert!(why.contains("the host from API_BASE"), "{why}");
        assert!(!why.contains("internal"), "{why}");
        assert_eq!(stale_reason("x", &Binding::none(), &b), None);
    }

    #[test]
    fn a_rule_choice_is_checked_and_only_allows() {
        let bad = GrantChoice::Rule {
            rule: RuleSpec {
                tool: "web_fetch".into(),
                when: [("url".to_string(), "re:(".to_string())]
                    .into_iter()
                    .collect(),
                action: RuleAction::Allow,
            },
        };
        assert!(bad
            .checked()
            .unwrap_err()
            .starts_with("when.url: bad regular expression"));
        let deny = GrantChoice::Rule {
            rule: RuleSpec {
                tool: "web_fetch".into(),
                when: Default::default(),
                action: RuleAction::Deny,
            },
        };
        let GrantChoice::Rule { rule } = deny.checked().unwrap() else {
            panic!()
        };
        assert_eq!(rule.action, RuleAction::Allow);
    }

    #[test]
    fn globs_escape_hosts() {
        assert_eq!(glob_literal("a.b.com"), "a.b.com");
        assert_eq!(glob_literal("x[1]"), "x\\[1\\]");
    }
}
