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
//! expression instead (Rust `regex` syntax, `.` matching newlines too) that must match the
//! whole value. A tool pattern's `*` also matches `/`. `$host` compares without regard to case.
//! A parameter that is not a string is compared in its JSON form (`3`, `true`); a missing
//! parameter never matches.
//!
//! Values are compared as the call will really use them ([`views`]), so rewriting an argument
//! does not sidestep a rule: a URL in its canonical form (the one the request uses: lower-case
//! IDNA host, no user info, default port or trailing dot, normalised path), `$url`/`$host`
//! likewise, an e-mail address or a host name without regard to case (its domain in IDNA form),
//! JSON text parsed and written out again. A deny or confirm rule matches when the value as
//! written or any canonical form matches, and also when a value that looks like a URL, an
//! address or a host cannot be canonicalised (fail closed); an allow rule must match every
//! canonical form (the value as written only when it has none).
//!
//! Precedence ([`decide`]): a tool outside the calling agent's list is denied; otherwise, of the
//! global and agent rules that match, the strictest wins (deny, then confirm, then allow),
//! wherever each comes from, so an agent's rules can narrow but never loosen a global deny or
//! confirm. A sub-agent's call also meets the deny and confirm rules of the agents above it in
//! the chain (see `PermissionRules::for_chain`). Only when no rule matches does the default apply (the agent's permission for the
//! tool, else the tool's), and a conversation grant can turn that default's `confirm` into
//! `allow`.

use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;
use serde::Serialize;
use serde_json::Value;

use crate::tool_spec::Params;
use crate::tool_spec::Permission;

pub use crate::rule_spec::{RuleAction, RuleSpec};

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
                .dot_matches_new_line(true)
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
    when: Vec<When>,
}

/// One checked `when` entry: the pattern, and the same pattern ignoring case (for e-mail
/// addresses and host names).
#[derive(Debug, Clone)]
struct When {
    key: String,
    pattern: Pattern,
    any_case: Pattern,
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
            let written = url_pattern_case(pattern);
            let any_case =
                Pattern::new(&written, true, true).map_err(|e| format!("when.{key}: {e}"))?;
            let compiled = Pattern::new(&written, true, key == "$host" || key == "$method")
                .map_err(|e| format!("when.{key}: {e}"))?;
            when.push(When {
                key: key.clone(),
                pattern: compiled,
                any_case,
            });
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
    ///
    /// Each value is compared in every form it has ([`views`]): a deny or confirm rule matches
    /// when any form matches or a form cannot be worked out, an allow rule only when every form
    /// that counts matches (see the module docs).
    pub fn matches(&self, facts: &CallFacts<'_>) -> bool {
        let strict = self.spec.action != RuleAction::Allow;
        self.covers_tool(facts.tool)
            && self.when.iter().all(|w| {
                let value = match w.key.as_str() {
                    "$host" => facts.destination.map(|d| Views::of_host(&d.host)),
                    "$url" => facts.destination.map(|d| Views::of_url(&d.url)),
                    "$method" => facts.destination.map(|d| Views::plain(d.method.clone())),
                    name => facts.params.get(name).map(views),
                };
                value.is_some_and(|v| v.matched_by(w, strict))
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

/// The forms of one value a rule compares (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Views {
    /// The value as written.
    pub written: String,
    /// Its canonical forms, each with whether it is compared without regard to case. When
    /// there are any, an allow rule looks at them only.
    pub canonical: Vec<(String, bool)>,
    /// It looks like a URL, an address or a host but could not be canonicalised.
    pub unknown: bool,
}

impl Views {
    fn plain(written: String) -> Views {
        Views {
            written,
            canonical: Vec::new(),
            unknown: false,
        }
    }

    fn of_url(url: &str) -> Views {
        let mut v = Views::plain(url.to_string());
        match crate::util::url::canonical_url(url) {
            Ok(c) => v.canonical.push((c, false)),
            Err(_) => v.unknown = true,
        }
        v
    }

    fn of_host(host: &str) -> Views {
        let mut v = Views::plain(host.to_string());
        match crate::util::url::canonical_host(host) {
            Some(c) => v.canonical.push((c, true)),
            None => v.unknown = true,
        }
        v
    }

    /// Does `w` match? `strict`: for a deny or confirm rule.
    fn matched_by(&self, w: &When, strict: bool) -> bool {
        let canonical = || {
            self.canonical.iter().map(|(text, any_case)| {
                if *any_case {
                    w.any_case.is_match(text)
                } else {
                    w.pattern.is_match(text)
                }
            })
        };
        if strict {
            self.unknown || w.pattern.is_match(&self.written) || canonical().any(|m| m)
        } else {
            !self.unknown
                && if self.canonical.is_empty() {
                    w.pattern.is_match(&self.written)
                } else {
                    canonical().all(|m| m)
                }
        }
    }
}

/// The forms of a parameter's value rules compare: a string that looks like a URL (a scheme
/// and `//`, or http(s), ws(s), ftp or file and `:`) in canonical form; one with an `@` (e-mail
/// addresses) lower case with each domain after an `@` in IDNA form, compared ignoring case;
/// a host name (dotted labels, nothing else) likewise; JSON text (an object, array or string)
/// parsed and written out again (a string also as its text). Other values are compared as written only.
pub fn views(value: &Value) -> Views {
    let Value::String(text) = value else {
        return Views::plain(value_text(value));
    };
    // What a URL parser ignores: tabs and newlines anywhere, controls and spaces around it.
    let squeezed: String = text
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let squeezed = squeezed.trim_matches(|c: char| c <= ' ');
    if looks_like_url(squeezed) {
        return Views::of_url(text);
    }
    let trimmed = text.trim();
    if trimmed.starts_with(['{', '[', '"']) {
        if let Ok(parsed) = serde_json::from_str::<Value>(trimmed) {
            let mut v = Views::plain(text.clone());
            v.canonical.push((parsed.to_string(), false));
            if let Value::String(inner) = parsed {
                v.canonical.push((inner, false));
            }
            return v;
        }
    }
    if text.contains('@') {
        let mut v = Views::plain(text.clone());
        match address_forms(text) {
            Some(forms) => v.canonical.extend(forms.into_iter().map(|f| (f, true))),
            None => v.unknown = true,
        }
        return v;
    }
    if looks_like_host(trimmed) {
        if let Some(host) = crate::util::url::canonical_host(trimmed).filter(|h| h.contains('.')) {
            let mut v = Views::plain(text.clone());
            v.canonical.push((host, true));
            return v;
        }
    }
    Views::plain(text.clone())
}

/// A scheme followed by `//`, or a scheme the URL standard treats specially (where `\\` also
/// works as `/`) followed by `:`.
fn looks_like_url(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let special = ["http", "https", "ws", "wss", "ftp", "file"]
        .iter()
        .any(|s| scheme.eq_ignore_ascii_case(s));
    // One letter is a Windows drive (`C:\…`), not a scheme.
    is_scheme && scheme.len() > 1 && (special || rest.starts_with("//"))
}

/// Letters, digits, dots (any script's), `-` and `_` only, not all digits: with the canonical
/// form having a dot, a host name.
fn looks_like_host(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_') || !c.is_ascii())
        && !text.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// `text` (trimmed) lower case with every domain after an `@` (up to the first character a
/// host name cannot have) in canonical form, then each address in it (`local@domain`) alone, so
/// `Boss <boss@EVIL.com>, a@b.c` is also compared as `boss@evil.com` and `a@b.c`. `None` when a
/// domain is not valid.
fn address_forms(text: &str) -> Option<Vec<String>> {
    let host_char = |c: char| c.is_alphanumeric() || matches!(c, '.' | '-' | '_') || !c.is_ascii();
    let local_char = |c: char| {
        !(c.is_whitespace() || matches!(c, '<' | '>' | ',' | ';' | '"' | '(' | ')' | ':' | '@'))
    };
    let text = text.trim();
    let mut whole = String::with_capacity(text.len());
    let mut addresses = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let before = &rest[..at];
        let local_start = before
            .char_indices()
            .rev()
            .find(|(_, c)| !local_char(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let local = before[local_start..].to_lowercase();
        whole.push_str(&before.to_lowercase());
        whole.push('@');
        rest = &rest[at + 1..];
        let end = rest.find(|c: char| !host_char(c)).unwrap_or(rest.len());
        let domain = &rest[..end];
        if !domain.is_empty() {
            let domain = crate::util::url::canonical_host(domain)?;
            whole.push_str(&domain);
            if !local.is_empty() {
                addresses.push(format!("{local}@{domain}"));
            }
        }
        rest = &rest[end..];
    }
    whole.push_str(&rest.to_lowercase());
    let mut forms = vec![whole];
    forms.extend(addresses);
    forms.dedup();
    Some(forms)
}

/// A glob that starts like a URL has its scheme and host part in lower case, the case the
/// canonical form of a URL has.
fn url_pattern_case(pattern: &str) -> String {
    if pattern.starts_with("re:") {
        return pattern.to_string();
    }
    match pattern.find("://") {
        Some(i) if looks_like_url(pattern) => {
            let after = i + 3;
            let end = pattern[after..]
                .find('/')
                .map_or(pattern.len(), |j| after + j);
            format!("{}{}", pattern[..end].to_lowercase(), &pattern[end..])
        }
        _ => pattern.to_string(),
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
    pub rules: &'a [&'a Rule],
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
    for rule in input
        .rules
        .iter()
        .copied()
        .filter(|r| r.matches(&input.facts))
    {
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
            let rules: Vec<&Rule> = rules.iter().collect();
            decide(&DecisionInput {
                facts,
                tool_default: Permission::Confirm,
                agent,
                rules: &rules,
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
