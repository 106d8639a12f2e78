//! The HTTP tool editor's backend: check a draft exactly as the config loader and the registry
//! would (plus which `{{VAR}}` secrets it needs and whether they are set), and test-run a draft,
//! saved or not, through the real pipeline with its whole HTTP exchange recorded.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use serde::Serialize;

use super::direct::{call_tool, Asker};
use crate::config_error::ConfigError;
use crate::config_files::{self, ConfigFile, FileEntry, FileError, FileKind};
use crate::context::AppContext;
use crate::engine::Engine;
use crate::events::EventSink;
use crate::secrets::SecretSource;
use crate::tool_spec::Params;
use crate::tool_spec::Permission;
use crate::tools::http::{parse_definition, HttpExchange, HttpTool, HttpToolDef};
use crate::tools::ToolSource;

/// The conversation id test runs are recorded under (events, always-allow, oversized results).
pub const TEST_CONVERSATION: &str = "tool-editor";

/// A `{{VAR}}` the tool needs, and whether it is set. The value is never part of this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SecretRef {
    /// The variable's name.
    pub name: String,
    /// Where it was found: `keyring`, `environment` or `.env`; `None` when missing.
    pub found_in: Option<String>,
}

/// What the editor shows about a draft.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolCheck {
    /// The tool's name, when the draft parses.
    pub name: Option<String>,
    /// Problems, located (the same errors `artifactflow-cli check` prints).
    pub errors: Vec<ConfigError>,
    /// The instruction block the model will see, when the draft parses.
    pub instructions: Option<String>,
    /// Secrets the endpoint and headers use.
    pub secrets: Vec<SecretRef>,
    /// The default permission, when the draft parses.
    pub permission: Option<Permission>,
}

/// The outcome of a test run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolTest {
    /// Did the tool succeed?
    pub success: bool,
    /// The value the model gets (the extracted value, or the whole body), or the error.
    pub output: String,
    /// The result exactly as the model sees it.
    pub formatted: String,
    /// The parameters sent, typed as declared and with defaults filled in.
    pub params: Params,
    /// The HTTP exchange, when a request was sent.
    pub exchange: Option<HttpExchange>,
    /// Milliseconds for the whole call (permission excluded only when it auto-ran).
    pub duration_ms: u32,
}

impl ToolTest {
    /// The outcome of the test-run `call` with the typed `params`, the recorded `exchange`
    /// and its `started` time (the editor's HTTP tools and the MCP screen's tools alike).
    pub fn from_call(
        call: super::direct::DirectCall,
        params: Params,
        exchange: Option<HttpExchange>,
        started: std::time::Instant,
    ) -> ToolTest {
        ToolTest {
            success: call.result.success,
            output: if call.result.success {
                call.result.data
            } else {
                call.result.error.unwrap_or_default()
            },
            formatted: call.formatted,
            params,
            exchange,
            duration_ms: started.elapsed().as_millis().min(u32::MAX as u128) as u32,
        }
    }
}

/// Where errors of a draft are located: its file, or where a new file would go.
fn draft_path(ctx: &AppContext, path: Option<&Path>) -> PathBuf {
    path.map(Path::to_path_buf).unwrap_or_else(|| {
        config_files::folder(&ctx.paths().config_dir, FileKind::Tool).join("new tool.md")
    })
}

fn parse(ctx: &AppContext, path: Option<&Path>, text: &str) -> Result<HttpToolDef, ConfigError> {
    let located = draft_path(ctx, path);
    let def = parse_definition(&located, text)?;
    // The registry's rule: names are unique across built-in, artifact and HTTP tools.
    let registry = ctx.conversation_registry(TEST_CONVERSATION);
    if let Some(existing) = registry.get(&def.spec.name) {
        let message = match existing.source() {
            ToolSource::Http { file } if Some(file.as_path()) == path => None,
            ToolSource::Http { file } => Some(format!(
                "`{}` is already defined by {}; tool names must be unique",
                def.spec.name,
                file.display()
            )),
            _ => Some(format!(
                "`{}` is a built-in tool; choose another name",
                def.spec.name
            )),
        };
        if let Some(message) = message {
            return Err(ConfigError {
                line: text
                    .lines()
                    .position(|l| l.trim_start().starts_with("name:"))
                    .map(|i| i as u32 + 1),
                file: located,
                field: Some("name".into()),
                message,
            });
        }
    }
    Ok(def)
}

/// The checks a tool file must pass before it is saved: the loader's, and a name no other
/// tool (built-in, artifact, or another file) has.
pub fn check_before_save(
    ctx: &AppContext,
    path: Option<&Path>,
    text: &str,
) -> Result<(), ConfigError> {
    parse(ctx, path, text).map(|_| ())
}

/// Check a draft. Looks secrets up in the keyring, so call it off the UI thread.
pub fn check_tool(ctx: &AppContext, path: Option<&Path>, text: &str) -> ToolCheck {
    match parse(ctx, path, text) {
        Err(e) => ToolCheck {
            name: None,
            errors: vec![e],
            instructions: None,
            secrets: Vec::new(),
            permission: None,
        },
        Ok(def) => {
            let resolver = ctx.secret_resolver();
            let mut names: Vec<String> = Vec::new();
            for template in std::iter::once(&def.endpoint).chain(def.headers.values()) {
                for name in crate::secrets::template_names(template) {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
            let secrets = names
                .into_iter()
                .map(|name| SecretRef {
                    found_in: resolver.resolve(&name).map(|(_, source)| {
                        match source {
                            SecretSource::Keyring => "keyring",
                            SecretSource::Environment => "environment",
                            SecretSource::DotEnv => ".env",
                        }
                        .to_string()
                    }),
                    name,
                })
                .collect();
            ToolCheck {
                name: Some(def.spec.name.clone()),
                errors: Vec::new(),
                instructions: Some(crate::parser::tool_instructions(std::slice::from_ref(
                    &def.spec,
                ))),
                secrets,
                permission: Some(def.permission),
            }
        }
    }
}

/// Test-run a draft with string `params` (as the model would write them) through the real
/// pipeline: coercion, defaults, validation, the permission decision (asked through `ask`),
/// execution. Errors when the draft does not load.
pub async fn test_tool(
    ctx: &AppContext,
    path: Option<&Path>,
    text: &str,
    params: &IndexMap<String, String>,
    ask: Asker<'_>,
    events: &dyn EventSink,
) -> Result<ToolTest, ConfigError> {
    let def = parse(ctx, path, text)?;
    let tool = HttpTool::new(def);
    let trace = Arc::new(Mutex::new(None));
    Ok(test_call(ctx, &tool, params, ask, events, Some(trace)).await)
}

/// Run `tool` once as a test in [`TEST_CONVERSATION`], through the gate like a run's call, and
/// report it (the HTTP exchange too, when `trace` records one). A test's "always allow" is
/// never kept: the tool may change before its next test.
pub(super) async fn test_call(
    ctx: &AppContext,
    tool: &dyn crate::tools::Tool,
    params: &IndexMap<String, String>,
    ask: Asker<'_>,
    events: &dyn EventSink,
    trace: Option<Arc<Mutex<Option<HttpExchange>>>>,
) -> ToolTest {
    let typed = crate::tools::pipeline::prepare(&tool.spec().params, params).unwrap_or_default();
    let mut tool_ctx = ctx.tool_context(Some(TEST_CONVERSATION));
    tool_ctx.http_trace = trace.clone();
    let started = std::time::Instant::now();
    let call = call_tool(
        ctx,
        tool,
        params,
        TEST_CONVERSATION,
        ask,
        false,
        &tool_ctx,
        events,
    )
    .await;
    let exchange = trace.and_then(|t| t.lock().unwrap_or_else(|p| p.into_inner()).take());
    ToolTest::from_call(call, typed, exchange, started)
}

/// An agent as it loads, for the Agents page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentView {
    /// Name (the id).
    pub name: String,
    /// The name people see, when the file gives one.
    pub display_name: Option<String>,
    /// Description.
    pub description: String,
    /// The model profile it asks for (`None`: `default`, else the first profile).
    pub model: Option<String>,
    /// Tools and the agent's permission for each, by name.
    pub tools: Vec<(String, Permission)>,
    /// Not reachable as a sub-agent.
    pub internal: bool,
    /// Tool rounds per run.
    pub max_tool_rounds: u32,
    /// Every enabled skill (`skills: all`)?
    pub all_skills: bool,
    /// The skills it names (`skills: [..]`), as written.
    pub skills: Vec<String>,
    /// The role prompt (Markdown).
    pub role_prompt: String,
}

/// An agent draft as the Agents page shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentCheck {
    /// Problems, located.
    pub errors: Vec<ConfigError>,
    /// What loads, when the loader accepts it (even with unknown tools or model).
    pub agent: Option<AgentView>,
}

/// Check an agent draft: the agent loader's errors, then tools that do not exist and a model
/// profile that is not in `models.yaml` (the same problems the status area lists).
pub fn check_agent(ctx: &AppContext, path: Option<&Path>, text: &str) -> AgentCheck {
    let located = path.map(Path::to_path_buf).unwrap_or_else(|| {
        config_files::folder(&ctx.paths().config_dir, FileKind::Agent).join("new agent.md")
    });
    let agent = match crate::config::parse_agent(&located, text) {
        Ok(agent) => agent,
        Err(e) => {
            return AgentCheck {
                errors: vec![e],
                agent: None,
            }
        }
    };
    let line_of = |needle: &str| {
        text.lines()
            .position(|l| {
                let t = l.trim_start().trim_start_matches("- ").trim_start();
                t.strip_prefix(needle)
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
            })
            .map(|i| i as u32 + 1)
    };
    let registry = ctx.conversation_registry(TEST_CONVERSATION);
    let mut errors = Vec::new();
    let mcp = ctx.config().mcp.clone();
    for tool in agent.tools.keys() {
        // A configured MCP server's tools may not be loaded yet (it is starting or failed).
        if registry.get(tool).is_none() && crate::mcp::server_of(tool, &mcp).is_none() {
            errors.push(ConfigError {
                file: located.clone(),
                line: line_of(tool),
                field: Some(format!("tools.{tool}")),
                message: format!(
                    "there is no tool `{tool}` (or it failed to load); see the Tools page for the names"
                ),
            });
        }
    }
    if let crate::skills::SkillChoice::Named(names) = &agent.skills {
        let config = ctx.config();
        let mcp_skills = ctx.skills().mcp();
        for name in names {
            let known = config.skills.get(name).is_some()
                || mcp_skills.iter().any(|m| m.name == *name)
                || name
                    .split_once('.')
                    .is_some_and(|(server, _)| config.mcp.servers.contains_key(server));
            if !known {
                let mut local: Vec<_> = config
                    .skills
                    .skills
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect();
                local.sort();
                errors.push(ConfigError {
                    file: located.clone(),
                    line: line_of("skills").or_else(|| line_of(name)),
                    field: Some("skills".into()),
                    message: format!(
                        "there is no skill `{name}`; skills: {} (see the Skills page)",
                        if local.is_empty() {
                            "none".to_string()
                        } else {
                            local.join(", ")
                        }
                    ),
                });
            }
        }
    }
    if let Some(model) = &agent.model {
        let config = ctx.config();
        if !config.models.iter().any(|m| &m.name == model) {
            let known: Vec<_> = config.models.iter().map(|m| m.name.as_str()).collect();
            errors.push(ConfigError {
                file: located.clone(),
                line: line_of("model"),
                field: Some("model".into()),
                message: format!(
                    "there is no model profile `{model}`; profiles: {} (Settings → Models)",
                    known.join(", ")
                ),
            });
        }
    }
    AgentCheck {
        errors,
        agent: Some(AgentView {
            tools: agent.tools.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            name: agent.name,
            display_name: agent.display_name,
            description: agent.description,
            model: agent.model,
            internal: agent.internal,
            max_tool_rounds: agent.max_tool_rounds,
            all_skills: agent.skills == crate::skills::SkillChoice::All,
            skills: match &agent.skills {
                crate::skills::SkillChoice::Named(names) => names.clone(),
                _ => Vec::new(),
            },
            role_prompt: agent.role_prompt,
        }),
    }
}
/// Every tool or agent file of the config folder, enabled or disabled.
pub fn files(ctx: &AppContext, kind: FileKind) -> Vec<FileEntry> {
    config_files::list(&ctx.paths().config_dir, kind)
}

/// One config file's text, to edit.
pub fn read_file(ctx: &AppContext, kind: FileKind, path: &str) -> Result<ConfigFile, FileError> {
    config_files::read(&ctx.paths().config_dir, kind, path)
}

/// Save `text` to `path` (or a new `<name>.md`), provided the disk still holds `base`, then
/// reload so the change is live. A tool file is first checked against the other tools too
/// (unique names), which the file loader alone cannot see; a draft that does not load is
/// [`FileError::Invalid`], and nothing is written.
pub fn save_file(
    engine: &Engine,
    kind: FileKind,
    path: Option<&str>,
    text: &str,
    base: Option<&str>,
) -> Result<ConfigFile, FileError> {
    if kind == FileKind::Tool {
        check_before_save(&engine.ctx, path.map(Path::new), text)
            .map_err(|e| FileError::Invalid(vec![e]))?;
    }
    let saved = config_files::save(&engine.ctx.paths().config_dir, kind, path, text, base)?;
    engine.reload_config();
    Ok(saved)
}

/// Enable or disable a config file (its leading `_`), then reload.
pub fn set_file_enabled(
    engine: &Engine,
    kind: FileKind,
    path: &str,
    enabled: bool,
) -> Result<ConfigFile, FileError> {
    let file = config_files::set_enabled(&engine.ctx.paths().config_dir, kind, path, enabled)?;
    engine.reload_config();
    Ok(file)
}

/// Delete a config file, then reload.
pub fn delete_file(engine: &Engine, kind: FileKind, path: &str) -> Result<(), FileError> {
    config_files::delete(&engine.ctx.paths().config_dir, kind, path)?;
    engine.reload_config();
    Ok(())
}
