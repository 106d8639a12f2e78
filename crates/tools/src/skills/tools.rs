//! The skill tools: `load_skill` (a skill's instructions and the list of its files),
//! `read_skill_file` (one file: text as text, a binary file as an artifact) and
//! `run_skill_script` (one of its scripts, `confirm` by default, the exact command line in the
//! permission dialog). All three read the [`SkillShelf`] the engine swaps on every reload, and
//! an agent reaches only the skills its `skills:` gives it.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::json;

use super::script;
use super::{McpSkill, Skill, SkillChoice};
use crate::tool_spec::{ParamSpec, ParamType};
use crate::tools::{
    Attachment, Params, Permission, Tool, ToolContext, ToolRef, ToolResult, ToolSpec,
};

/// Names of the skill tools.
pub const SKILL_TOOL_NAMES: [&str; 3] = ["load_skill", "read_skill_file", "run_skill_script"];

/// The most bytes of a text file `read_skill_file` returns.
pub const MAX_TEXT_FILE_BYTES: u64 = 256 * 1024;
/// The largest binary file `read_skill_file` stores as an artifact.
pub const MAX_BINARY_FILE_BYTES: u64 = 20 * 1024 * 1024;

#[derive(Default)]
struct Shelf {
    /// The config folder's (and user folders') skills that loaded.
    local: Vec<Skill>,
    /// The skills MCP servers list.
    mcp: Vec<McpSkill>,
    /// Turned off in Settings.
    disabled: Vec<String>,
    /// Each agent's `skills:`.
    choices: BTreeMap<String, SkillChoice>,
}

/// A skill found by name: on this computer, or on an MCP server.
#[derive(Debug, Clone)]
pub enum Found {
    /// A skill folder.
    Local(Skill),
    /// A server's skill.
    Mcp(McpSkill),
}

impl Shelf {
    /// Every enabled skill: name, description, and why it cannot be used (an MCP server's
    /// skill whose listing cannot verify it), local first.
    fn enabled(&self) -> Vec<(String, String, Option<String>)> {
        let local = self
            .local
            .iter()
            .map(|s| (s.name.clone(), s.one_line_description(), None));
        let mcp = self.mcp.iter().map(|s| {
            let d = s
                .description()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            (s.name.clone(), d, s.unverifiable.clone())
        });
        local
            .chain(mcp)
            .filter(|(name, _, _)| !self.disabled.contains(name))
            .collect()
    }

    /// The enabled skills `agent` may reach (every one for a direct call: `agent` empty),
    /// usable or not, sorted.
    fn reachable(&self, agent: &str) -> Vec<(String, String, Option<String>)> {
        let mut mine: Vec<_> = if agent.is_empty() {
            self.enabled()
        } else {
            let Some(choice) = self.choices.get(agent) else {
                return Vec::new();
            };
            self.enabled()
                .into_iter()
                .filter(|(name, _, _)| choice.takes(name))
                .collect()
        };
        mine.sort();
        mine
    }

    /// The enabled skills `agent` may use: what its prompt lists (a skill that cannot be
    /// verified is left out).
    fn of(&self, agent: &str) -> Vec<(String, String)> {
        self.reachable(agent)
            .into_iter()
            .filter(|(_, _, refused)| refused.is_none())
            .map(|(name, description, _)| (name, description))
            .collect()
    }
}

/// The skills (local and from MCP servers), which are off, and which agent may use which; the
/// engine updates it on every config reload and whenever a server's skills change.
#[derive(Clone, Default)]
pub struct SkillShelf(Arc<RwLock<Shelf>>);

impl SkillShelf {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Shelf> {
        self.0.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Shelf> {
        self.0.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The config's part: the local skills, the ones turned off, each agent's `skills:`.
    pub fn set_config(
        &self,
        local: Vec<Skill>,
        disabled: Vec<String>,
        choices: BTreeMap<String, SkillChoice>,
    ) {
        let mut shelf = self.write();
        shelf.local = local;
        shelf.disabled = disabled;
        shelf.choices = choices;
    }

    /// The MCP servers' skills (a local skill's name always wins: theirs are `SERVER.NAME`).
    pub fn set_mcp(&self, mcp: Vec<McpSkill>) {
        self.write().mcp = mcp;
    }

    /// The MCP servers' skills now.
    pub fn mcp(&self) -> Vec<McpSkill> {
        self.read().mcp.clone()
    }

    /// Is any skill enabled (so the skill tools exist)? One that cannot be verified counts: a
    /// direct call to it is told why it cannot be used.
    pub fn has_any(&self) -> bool {
        !self.read().enabled().is_empty()
    }

    /// The enabled skills `agent` may use, each with its description, sorted by name.
    pub fn of_agent(&self, agent: &str) -> Vec<(String, String)> {
        self.read().of(agent)
    }

    /// The skill `name` as `agent` (empty for a direct call, which reaches every enabled
    /// skill) may use it, or what to tell the model.
    pub fn find(&self, name: &str, agent: &str) -> Result<Found, String> {
        let shelf = self.read();
        let name = name.trim();
        if let Some((_, _, Some(why))) =
            shelf.reachable(agent).into_iter().find(|(n, ..)| n == name)
        {
            return Err(format!(
                "the skill `{name}` cannot be used: {why}. Do the task without it"
            ));
        }
        let mine: Vec<String> = shelf.of(agent).into_iter().map(|(n, _)| n).collect();
        if !mine.iter().any(|n| n == name) {
            return Err(if mine.is_empty() {
                format!("there is no skill `{name}`: you have no skills; do the task without one")
            } else {
                format!(
                    "there is no skill `{name}` among yours; yours: {}",
                    mine.join(", ")
                )
            });
        }
        if let Some(skill) = shelf.local.iter().find(|s| s.name == name) {
            return Ok(Found::Local(skill.clone()));
        }
        shelf
            .mcp
            .iter()
            .find(|s| s.name == name)
            .map(|s| Found::Mcp(s.clone()))
            .ok_or_else(|| format!("there is no skill `{name}`"))
    }

    /// The local skill `name` as `agent` may use it (scripts run from folders only).
    pub fn skill_for(&self, name: &str, agent: &str) -> Result<Skill, String> {
        match self.find(name, agent)? {
            Found::Local(skill) => Ok(skill),
            Found::Mcp(skill) => Err(format!(
                "`{}` is a skill of the MCP server `{}`: its scripts do not run on this \
                 computer; read its files with read_skill_file",
                skill.name, skill.server
            )),
        }
    }
}

fn caller(ctx: &ToolContext) -> String {
    ctx.origin
        .as_ref()
        .map(|o| o.agent.clone())
        .unwrap_or_default()
}

/// The three skill tools over `shelf`.
pub fn skill_tools(shelf: &SkillShelf) -> Vec<ToolRef> {
    vec![
        Arc::new(LoadSkill::new(shelf.clone())),
        Arc::new(ReadSkillFile::new(shelf.clone())),
        Arc::new(RunSkillScript::new(shelf.clone())),
    ]
}

fn skill_param() -> ParamSpec {
    ParamSpec::new("skill", ParamType::String, "The skill's name, as listed")
}

fn text_param(params: &Params, name: &str) -> String {
    params
        .get(name)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

// ------------------------------------------------------------------------------------------

/// `load_skill`: a skill's instructions, with the list of its files.
pub struct LoadSkill {
    spec: ToolSpec,
    shelf: SkillShelf,
}

impl LoadSkill {
    /// The tool over `shelf`.
    pub fn new(shelf: SkillShelf) -> Self {
        LoadSkill {
            spec: ToolSpec {
                name: "load_skill".into(),
                description: "Load one of your skills: its instructions and the list of its \
                              files. Call it when the task matches a skill's description, \
                              before you start, then follow the instructions."
                    .into(),
                input_schema: None,
                params: vec![skill_param()],
            },
            shelf,
        }
    }
}

#[async_trait::async_trait]
impl Tool for LoadSkill {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        Permission::Auto
    }

    fn max_result_size_chars(&self) -> Option<usize> {
        // A SKILL.md is read whole (it is capped when loaded).
        Some(super::load::MAX_SKILL_MD_BYTES as usize + 16 * 1024)
    }

    async fn execute(&self, params: Params, ctx: &ToolContext) -> ToolResult {
        let skill = match self.shelf.find(&text_param(&params, "skill"), &caller(ctx)) {
            Ok(Found::Local(s)) => s,
            Ok(Found::Mcp(s)) => return load_mcp_skill(&s).await,
            Err(e) => return ToolResult::fail(e),
        };
        // Read again: the instructions as they are now (the watcher reloads on change anyway),
        // only from a regular file of at most the size a SKILL.md may have.
        let instructions =
            super::files::read_regular(&skill.source, super::load::MAX_SKILL_MD_BYTES)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .and_then(|t| super::parse_skill(&skill.source, &t).ok())
                .map(|s| s.instructions)
                .unwrap_or(skill.instructions.clone());
        // The walk behind the listing is bounded (each real folder once, capped) and opens
        // nothing, so a link loop or a named pipe in the folder cannot stop it.
        let skill_dir = skill.dir.clone();
        let listing = tokio::task::spawn_blocking(move || super::files::listing(&skill_dir))
            .await
            .unwrap_or_default();
        ToolResult::ok(loaded_text(
            &skill.name,
            &instructions,
            &listing.files,
            &listing.notes(),
        ))
        .with_meta("skill", skill.name.clone())
        .with_meta("skill_files", listing.files.len())
    }
}

/// What `load_skill` tells the model: the instructions, then the skill's files, then what the
/// listing left out.
fn loaded_text(name: &str, instructions: &str, files: &[String], left_out: &[String]) -> String {
    let mut text = format!("# Skill `{name}`\n\n{instructions}");
    if !files.is_empty() {
        text.push_str(
            "\n\n---\nThe skill's files (read one with read_skill_file; run a script with \
             run_skill_script):",
        );
        for f in files {
            text.push_str(&format!("\n- {f}"));
        }
    }
    if !left_out.is_empty() {
        text.push_str("\n\nLeft out of this list:");
        for note in left_out {
            text.push_str(&format!("\n* {note}"));
        }
    }
    text
}

/// Load a server's skill: its SKILL.md read now and verified against the listing (size,
/// digest, frontmatter); a skill that fails is not loaded.
async fn load_mcp_skill(skill: &McpSkill) -> ToolResult {
    if let Some(why) = &skill.unverifiable {
        return ToolResult::fail(format!(
            "the skill `{}` cannot be used: {why}. Do the task without it",
            skill.name
        ));
    }
    match skill.client.load_skill(&skill.entry).await {
        Ok(text) => {
            let body = crate::frontmatter::split(&text)
                .map(|d| d.body.to_string())
                .unwrap_or(text.clone());
            let files = skill.files();
            ToolResult::ok(loaded_text(&skill.name, &body, &files, &[]))
                .with_meta("skill", skill.name.clone())
                .with_meta("skill_server", skill.server.clone())
                .with_meta("skill_files", files.len())
        }
        Err(e) => ToolResult::fail(format!(
            "the skill `{}` was not loaded: {e}. Do the task without it",
            skill.name
        )),
    }
}

// ------------------------------------------------------------------------------------------

/// `read_skill_file`: one file of a skill.
pub struct ReadSkillFile {
    spec: ToolSpec,
    shelf: SkillShelf,
}

impl ReadSkillFile {
    /// The tool over `shelf`.
    pub fn new(shelf: SkillShelf) -> Self {
        ReadSkillFile {
            spec: ToolSpec {
                name: "read_skill_file".into(),
                description: "Read one file of a skill you loaded (a reference, a template, a \
                              script's source), by its path inside the skill."
                    .into(),
                input_schema: None,
                params: vec![
                    skill_param(),
                    ParamSpec::new(
                        "path",
                        ParamType::String,
                        "The file's path inside the skill, e.g. references/guide.md",
                    ),
                ],
            },
            shelf,
        }
    }
}

fn mime_of(path: &std::path::Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => "image/png",
        Some("jpg") | Some("jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        Some("wav") => "audio/wav",
        Some("mp3") => "audio/mpeg",
        _ => "application/octet-stream",
    }
}

#[async_trait::async_trait]
impl Tool for ReadSkillFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        Permission::Auto
    }

    async fn execute(&self, params: Params, ctx: &ToolContext) -> ToolResult {
        let relative = text_param(&params, "path");
        let skill = match self.shelf.find(&text_param(&params, "skill"), &caller(ctx)) {
            Ok(Found::Local(s)) => s,
            Ok(Found::Mcp(s)) => return read_mcp_file(&s, &relative).await,
            Err(e) => return ToolResult::fail(e),
        };
        let shown = relative.trim().replace('\\', "/");
        let (dir, shown_in_read) = (skill.dir.clone(), shown.clone());
        // Resolving, listing and reading touch the disk: off the runtime's threads. Only a
        // regular file is opened (never a named pipe), its size checked on the opened file
        // before anything is read, and the read stops past the most allowed.
        let read = tokio::task::spawn_blocking(move || {
            let path = match super::files::resolve(&dir, &relative) {
                Ok(p) => p,
                Err(e) => {
                    let files = super::files::list(&dir);
                    return Err(format!(
                        "{e}. The skill's files: {}",
                        if files.is_empty() {
                            "none".to_string()
                        } else {
                            files.join(", ")
                        }
                    ));
                }
            };
            super::files::read_regular(&path, MAX_BINARY_FILE_BYTES)
                .map(|bytes| (path, bytes))
                .map_err(|refusal| refusal.describe(&shown_in_read, MAX_BINARY_FILE_BYTES))
        })
        .await;
        let (path, bytes) = match read {
            Ok(Ok(read)) => read,
            Ok(Err(e)) => return ToolResult::fail(e),
            Err(e) => return ToolResult::fail(format!("cannot read {shown}: {e}")),
        };
        let size = bytes.len() as u64;
        let meta = |r: ToolResult| {
            r.with_meta("skill", skill.name.clone())
                .with_meta("skill_file", shown.clone())
        };
        let is_text = !bytes.contains(&0);
        match String::from_utf8(bytes) {
            Ok(text) if is_text => {
                if size > MAX_TEXT_FILE_BYTES {
                    let mut end = MAX_TEXT_FILE_BYTES as usize;
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    return meta(ToolResult::ok(format!(
                        "{}\n\n[{shown} is {} KiB: only its first {} KiB are shown]",
                        &text[..end],
                        size / 1024,
                        MAX_TEXT_FILE_BYTES / 1024
                    )));
                }
                meta(ToolResult::ok(text))
            }
            Ok(text) => meta(binary(&skill.name, &shown, &path, text.into_bytes())),
            Err(e) => meta(binary(&skill.name, &shown, &path, e.into_bytes())),
        }
    }
}

/// A file of a server's skill, read now and verified against the listing.
async fn read_mcp_file(skill: &McpSkill, relative: &str) -> ToolResult {
    if let Some(why) = &skill.unverifiable {
        return ToolResult::fail(format!(
            "the skill `{}` cannot be used: {why}. Do the task without it",
            skill.name
        ));
    }
    let shown = relative.trim().replace('\\', "/");
    let Some(uri) = skill.uri_of(&shown) else {
        let files = skill.files();
        return ToolResult::fail(format!(
            "the skill `{}` lists no file `{shown}`; its files: {}",
            skill.name,
            if files.is_empty() {
                "none".to_string()
            } else {
                files.join(", ")
            }
        ));
    };
    let meta = |r: ToolResult| {
        r.with_meta("skill", skill.name.clone())
            .with_meta("skill_file", shown.clone())
            .with_meta("skill_server", skill.server.clone())
    };
    let path = std::path::Path::new(&shown);
    match skill.client.read_skill_file(&skill.entry, &uri).await {
        Ok(bytes) if !bytes.contains(&0) => match String::from_utf8(bytes) {
            Ok(text) => meta(ToolResult::ok(text)),
            Err(e) => meta(binary(&skill.name, &shown, path, e.into_bytes())),
        },
        Ok(bytes) => meta(binary(&skill.name, &shown, path, bytes)),
        Err(e) => meta(ToolResult::fail(e.to_string())),
    }
}

fn binary(skill: &str, shown: &str, path: &std::path::Path, bytes: Vec<u8>) -> ToolResult {
    let mime = mime_of(path);

    let mut result = ToolResult::ok(format!(
        "{shown} is a binary file ({mime}, {} bytes), not text.",
        bytes.len()
    ));
    result.attachments.push(Attachment {
        mime: mime.into(),
        title: format!("{skill}: {shown}"),
        bytes,
        resource_uri: None,
    });
    result
}

// ------------------------------------------------------------------------------------------

/// `run_skill_script`: one of a skill's scripts.
pub struct RunSkillScript {
    spec: ToolSpec,
    shelf: SkillShelf,
}

impl RunSkillScript {
    /// The tool over `shelf`.
    pub fn new(shelf: SkillShelf) -> Self {
        RunSkillScript {
            spec: ToolSpec {
                name: "run_skill_script".into(),
                description: "Run one of a skill's scripts, in the skill's folder, when its \
                              instructions say to. Returns its exit code and output. The user \
                              approves each run."
                    .into(),
                input_schema: None,
                params: vec![
                    skill_param(),
                    ParamSpec::new(
                        "script",
                        ParamType::String,
                        "The script's path inside the skill, e.g. scripts/convert.py",
                    ),
                    ParamSpec::new(
                        "args",
                        ParamType::String,
                        "Its arguments, written as on a command line (quote one with spaces)",
                    )
                    .with_default(json!("")),
                    ParamSpec::new(
                        "timeout_secs",
                        ParamType::Integer,
                        "Seconds before it is stopped (at most 600)",
                    )
                    .with_default(json!(script::DEFAULT_TIMEOUT_SECS)),
                ],
            },
            shelf,
        }
    }

    fn plan(&self, params: &Params, ctx: &ToolContext) -> Result<script::ScriptPlan, String> {
        let skill = self
            .shelf
            .skill_for(&text_param(params, "skill"), &caller(ctx))?;
        script::plan(
            &skill,
            &text_param(params, "script"),
            &text_param(params, "args"),
        )
    }
}

fn timeout_of(params: &Params) -> Duration {
    let secs = params
        .get("timeout_secs")
        .and_then(|v| v.as_u64())
        .unwrap_or(script::DEFAULT_TIMEOUT_SECS)
        .clamp(1, script::MAX_TIMEOUT_SECS);
    Duration::from_secs(secs)
}

#[async_trait::async_trait]
impl Tool for RunSkillScript {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        Permission::Confirm
    }

    async fn request_preview(
        &self,
        params: &Params,
        ctx: &ToolContext,
    ) -> Option<serde_json::Value> {
        let plan = self.plan(params, ctx).ok()?;
        Some(json!({
            "script_command": plan.command_line(),
            "program": plan.program.display().to_string(),
            "working_folder": plan.cwd.display().to_string(),
            "environment": "clean: PATH, HOME, locale and temp folders only; no app secrets",
            "timeout_secs": timeout_of(params).as_secs(),
        }))
    }

    async fn execute(&self, params: Params, ctx: &ToolContext) -> ToolResult {
        let plan = match self.plan(&params, ctx) {
            Ok(p) => p,
            Err(e) => return ToolResult::fail(e),
        };
        let timeout = timeout_of(&params);
        let run = match script::run(&plan, timeout).await {
            Ok(r) => r,
            Err(e) => return ToolResult::fail(e),
        };
        // The script may print what it can read (a `.env`, a file with a key): every secret
        // the app knows is masked before the model, the events or the database see it.
        let secrets = ctx.secrets.clone();
        let known = match secrets {
            Some(r) => tokio::task::spawn_blocking(move || r.known_values())
                .await
                .unwrap_or_default(),
            None => Vec::new(),
        };
        let report = crate::secrets::Redactor::new(known).redact(&run.report(&plan, timeout));
        let result = if run.code == Some(0) && !run.timed_out {
            ToolResult::ok(report)
        } else {
            ToolResult::fail(report)
        };
        result
            .with_meta("skill", text_param(&params, "skill"))
            .with_meta("script_command", plan.command_line())
            .with_meta("exit_code", run.code)
            .with_meta("timed_out", run.timed_out)
    }
}
