//! Reading `permission_rules:` lists (`settings.yaml`, an agent's frontmatter) into checked
//! rules, one entry at a time.
//!
//! A broken rule never breaks its file: the list is read as plain YAML data, every item is
//! checked on its own, and an item that is not a valid rule is kept as an [`RuleEntry`] with a
//! located error and no [`Rule`], so it is shown and reported but never matches (an ignored
//! rule can only make the decision stricter by its absence, never looser, except for an
//! ignored `deny`/`confirm`, which is why every ignored rule is reported as a config problem).
//!
//! Checking against the tools ([`check_against_tools`]) is a second step: the tool list is the
//! running registry's, which MCP servers fill in as they start.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::rules::{Rule, RuleOrigin, RuleSpec, DESTINATION_KEYS};
use crate::config_error::ConfigError;

/// The key in `settings.yaml` and in agent frontmatter.
pub const KEY: &str = "permission_rules";

/// One item of a `permission_rules` list, checked.
#[derive(Debug, Clone)]
pub struct RuleEntry {
    /// Where it is written.
    pub origin: RuleOrigin,
    /// The item as written, when it has the rule's shape.
    pub spec: Option<RuleSpec>,
    /// The checked rule; `None` when the item is ignored (see `error`).
    pub rule: Option<Rule>,
    /// Why the item is ignored, and what to do.
    pub error: Option<String>,
}

impl RuleEntry {
    /// The file the entry is in.
    pub fn file(&self) -> &str {
        match &self.origin {
            RuleOrigin::Global { file, .. } | RuleOrigin::Agent { file, .. } => file,
            RuleOrigin::Conversation { .. } => "",
        }
    }

    /// Its line in that file (0 when unknown).
    pub fn line(&self) -> u32 {
        match &self.origin {
            RuleOrigin::Global { line, .. } | RuleOrigin::Agent { line, .. } => *line,
            RuleOrigin::Conversation { .. } => 0,
        }
    }

    /// The error as a config problem, when the entry is ignored.
    pub fn problem(&self) -> Option<ConfigError> {
        self.error.as_ref().map(|message| ConfigError {
            file: self.file().into(),
            line: Some(self.line()).filter(|l| *l > 0),
            field: Some(KEY.into()),
            message: format!("{message}; this rule is ignored"),
        })
    }

    fn ignore(&mut self, error: String) {
        self.rule = None;
        self.error = Some(error);
    }
}

/// Where a `permission_rules` list and its items are in their file (1-based lines).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleLines {
    /// The `permission_rules:` key.
    pub key: Option<u32>,
    /// Each block-list item's `- ` line, in order.
    pub items: Vec<u32>,
}

impl RuleLines {
    /// Find them in YAML `text` that starts at file line `first_line`.
    pub fn find(text: &str, first_line: usize) -> RuleLines {
        let (key, items) = item_lines(text);
        let at = |l: usize| (l + first_line - 1) as u32;
        RuleLines {
            key: key.map(at),
            items: items.into_iter().map(at).collect(),
        }
    }
}

/// Parse one `permission_rules` value located by `lines`; `origin` builds an item's origin from
/// its line. A value that is not a list is one ignored entry at the key's line.
pub fn parse(
    value: Option<&Value>,
    lines: &RuleLines,
    origin: impl Fn(u32) -> RuleOrigin,
) -> Vec<RuleEntry> {
    let Some(value) = value else {
        return Vec::new();
    };
    let (key_line, item_lines) = (lines.key, &lines.items);
    let at = |line: Option<u32>| line.unwrap_or(0);
    let items = match value {
        Value::Null => return Vec::new(),
        Value::Array(items) => items,
        _ => {
            return vec![RuleEntry {
                origin: origin(at(key_line)),
                spec: None,
                rule: None,
                error: Some(format!(
                    "`{KEY}` must be a list of rules (`- tool: NAME` items with `action: allow|confirm|deny`)"
                )),
            }]
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let line = at(item_lines.get(i).copied().or(key_line));
            let origin = origin(line);
            match serde_json::from_value::<RuleSpec>(item.clone()) {
                Err(e) => RuleEntry {
                    origin,
                    spec: None,
                    rule: None,
                    error: Some(format!(
                        "not a rule ({e}): write `- tool: NAME`, optional `when: {{param: pattern}}` and `action: allow|confirm|deny`"
                    )),
                },
                Ok(spec) => match Rule::new(spec.clone(), origin.clone()) {
                    Ok(rule) => RuleEntry {
                        origin,
                        spec: Some(spec),
                        rule: Some(rule),
                        error: None,
                    },
                    Err(e) => RuleEntry {
                        origin,
                        spec: Some(spec),
                        rule: None,
                        error: Some(format!("{e}; fix the pattern (see README, Permission rules)")),
                    },
                },
            }
        })
        .collect()
}

/// The 1-based lines (within `text`) of the top-level `permission_rules:` key and of each of
/// its block-list items (`- ` at the items' indentation). A flow list (`[...]`) has no item
/// lines; its items are located at the key.
fn item_lines(text: &str) -> (Option<usize>, Vec<usize>) {
    let lines: Vec<&str> = text.lines().collect();
    let Some(key) = lines.iter().position(|l| {
        l.strip_prefix(KEY)
            .is_some_and(|r| r.trim_start().starts_with(':'))
    }) else {
        return (None, Vec::new());
    };
    let mut items = Vec::new();
    let mut indent: Option<usize> = None;
    for (i, line) in lines.iter().enumerate().skip(key + 1) {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let depth = line.len() - trimmed.len();
        if depth == 0 && !trimmed.starts_with('-') {
            break; // the next top-level key
        }
        if trimmed == "-" || trimmed.starts_with("- ") {
            match indent {
                None => {
                    indent = Some(depth);
                    items.push(i + 1);
                }
                Some(d) if d == depth => items.push(i + 1),
                Some(d) if depth < d => break,
                Some(_) => {}
            }
        } else if indent.is_some_and(|d| depth <= d) {
            break;
        }
    }
    (Some(key + 1), items)
}

/// What the loader knows about the tools a rule may name.
pub struct ToolFacts {
    /// Every loaded tool: its name, its parameter names, and whether it sends requests to a
    /// destination (so `$host`/`$url`/`$method` can match).
    pub tools: Vec<(String, Vec<String>, bool)>,
    /// The configured MCP servers' names: `SERVER.TOOL` counts as existing before the server
    /// has listed its tools.
    pub mcp_servers: Vec<String>,
}

/// Check every valid entry against the tool list: an exact tool name no tool has (and no
/// configured MCP server could have), or a `when` parameter none of the covered tools has, makes
/// the entry ignored with a located error.
pub fn check_against_tools(entries: &mut [RuleEntry], facts: &ToolFacts) {
    for entry in entries.iter_mut() {
        let Some(rule) = &entry.rule else { continue };
        if let Some(error) = tool_problem(rule, facts) {
            entry.ignore(error);
        }
    }
}

fn is_pattern(tool: &str) -> bool {
    tool.starts_with("re:") || tool.contains(['*', '?', '[', '{'])
}

fn tool_problem(rule: &Rule, facts: &ToolFacts) -> Option<String> {
    let name = &rule.spec.tool;
    let covered: Vec<&(String, Vec<String>, bool)> = facts
        .tools
        .iter()
        .filter(|(t, _, _)| rule.covers_tool(t))
        .collect();
    let pending_mcp = facts.mcp_servers.iter().any(|server| {
        let prefix = format!("{server}.");
        name.starts_with(&prefix) || (is_pattern(name) && rule.covers_tool(&format!("{prefix}x")))
    });
    if covered.is_empty() && !is_pattern(name) && !pending_mcp {
        let mut names: Vec<&str> = facts.tools.iter().map(|(t, _, _)| t.as_str()).collect();
        names.sort_unstable();
        return Some(format!(
            "there is no tool `{name}`: use one of {} or a glob such as `github.*`",
            names.join(", ")
        ));
    }
    for key in rule.spec.when.keys() {
        if DESTINATION_KEYS.contains(&key.as_str()) {
            if !covered.iter().any(|(_, _, dest)| *dest) && !pending_mcp {
                return Some(format!(
                    "`{key}` needs a tool that sends requests (an HTTP tool, web_search, web_fetch), but `{name}` covers none"
                ));
            }
        } else if !covered.iter().any(|(_, params, _)| params.contains(key)) && !pending_mcp {
            return Some(format!(
                "no tool that `{name}` covers has a parameter `{key}`: check the parameter's name on the Tools page or with `artifactflow-cli tools show`"
            ));
        }
    }
    None
}

/// A rule for people: shown by the CLI and the app.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RuleView {
    /// Where it is written.
    pub origin: RuleOrigin,
    /// As written, when it has the rule's shape.
    pub spec: Option<RuleSpec>,
    /// Why it is ignored (then it never applies).
    pub error: Option<String>,
    /// The loaded tools it covers.
    pub tools: Vec<String>,
}

impl RuleView {
    /// The view of `entry`, with the tools (of `names`) it covers.
    pub fn of(entry: &RuleEntry, names: &[String]) -> RuleView {
        RuleView {
            origin: entry.origin.clone(),
            spec: entry.spec.clone(),
            error: entry.error.clone(),
            tools: entry
                .rule
                .as_ref()
                .map(|r| names.iter().filter(|n| r.covers_tool(n)).cloned().collect())
                .unwrap_or_default(),
        }
    }
}

/// The file name as shown to people: relative to the config folder when inside it.
pub fn shown_path(config_dir: &Path, file: &Path) -> String {
    file.strip_prefix(config_dir)
        .unwrap_or(file)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(line: u32) -> RuleOrigin {
        RuleOrigin::Global {
            file: "settings.yaml".into(),
            line,
        }
    }

    fn parse_text(text: &str) -> Vec<RuleEntry> {
        let v: Value = crate::yaml::from_str(text).unwrap();
        parse(v.get(KEY), &RuleLines::find(text, 1), global)
    }

    #[test]
    fn items_are_located_and_a_bad_one_does_not_stop_the_others() {
        let text = "permission_timeout_secs: 5\n# rules\npermission_rules:\n  - tool: web_fetch\n    when:\n      url: \"https://docs.rs/**\"\n    action: allow\n\n  - tool: \"web_[\"\n    action: deny\n  - {tool: x, action: maybe}\n  - tool: \"*\"\n    when: {url: \"re:(\"}\n    action: deny\nupdate_url: null\n";
        let entries = parse_text(text);
        let lines: Vec<u32> = entries.iter().map(RuleEntry::line).collect();
        assert_eq!(lines, [4, 9, 11, 12]);
        assert!(entries[0].rule.is_some() && entries[0].error.is_none());
        assert!(entries[1].error.as_deref().unwrap().contains("bad glob"));
        assert!(entries[2].error.as_deref().unwrap().contains("not a rule"));
        assert!(entries[3]
            .error
            .as_deref()
            .unwrap()
            .contains("bad regular expression"));
        assert!(entries[1..].iter().all(|e| e.rule.is_none()));
    }

    #[test]
    fn a_value_that_is_not_a_list_is_one_located_error() {
        let entries = parse_text("a: 1\npermission_rules: yes\n");
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].line(), 2);
        assert!(entries[0]
            .error
            .as_deref()
            .unwrap()
            .contains("must be a list"));
    }

    #[test]
    fn tools_and_parameters_are_checked_mcp_servers_count_before_they_start() {
        let text = "permission_rules:\n  - {tool: nope, action: deny}\n  - {tool: web_fetch, when: {uri: x}, action: deny}\n  - {tool: call_subagent, when: {$host: x}, action: deny}\n  - {tool: gh.create_issue, when: {title: x}, action: deny}\n  - {tool: \"*\", when: {$host: x}, action: deny}\n  - {tool: \"web_*\", when: {url: x}, action: allow}\n";
        let mut entries = parse_text(text);
        let facts = ToolFacts {
            tools: vec![
                ("web_fetch".into(), vec!["url".into()], true),
                ("call_subagent".into(), vec!["agent".into()], false),
            ],
            mcp_servers: vec!["gh".into()],
        };
        check_against_tools(&mut entries, &facts);
        let errors: Vec<Option<&str>> = entries.iter().map(|e| e.error.as_deref()).collect();
        assert!(errors[0].unwrap().contains("there is no tool `nope`"));
        assert!(errors[1].unwrap().contains("parameter `uri`"));
        assert!(errors[2].unwrap().contains("sends requests"));
        assert_eq!(&errors[3..], [None, None, None]);
        let p = entries[0].problem().unwrap();
        assert_eq!(p.line, Some(2));
        assert!(p.message.ends_with("this rule is ignored"));
    }
}
