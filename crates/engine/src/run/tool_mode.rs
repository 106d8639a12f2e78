//! How a profile's model calls tools, resolved before each request: `tool_calls: text` and
//! `native` are taken as they are; `auto` (the default of `api: local`) becomes a mode and a
//! guidance setting per model file, with the reason as data so the profile page can say which
//! and why:
//!
//! 1. the best result of the model file's tool-use check, when it has one
//!    ([`CheckedModes::best_checked_mode`]);
//! 2. else the model's own (native) form, guided, when its chat template takes tools and its
//!    family is known;
//! 3. else the XML text format, guided.
//!
//! The family (which openings calls are guided from, see `parser::family`) is the profile's
//! `tool_family:`, else read from the local model file's template and architecture (kept in the
//! library's metadata), else Hermes (`<tool_call>`, the form OpenAI-compatible servers for open
//! models read).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::models::library::{gguf, Library, TemplateTools};
use crate::models::{Api, ModelProfile, ToolCallMode, ToolFamily};

/// Why a profile's calls are made the way they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum AutoReason {
    /// The profile says `tool_calls: text` or `native`.
    Configured,
    /// The model's tool-use check found this mode and guidance best.
    Checked,
    /// No check yet: the model's template takes tools and its family is known, so its own
    /// form.
    NativeFamily,
    /// No check yet: the model's template takes no tools (or has none), so the text format.
    TemplateTakesNoTools,
    /// No check yet: the template takes tools but its family is not one the app knows, so the
    /// text format.
    UnknownFamily,
    /// The model file could not be read (or the profile is not local): the text format.
    NoModelFile,
}

/// The resolved way a profile's model calls tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AutoChoice {
    /// `text` or `native` (never `auto`).
    pub mode: ToolCallMode,
    /// Whether the calls are guided by a grammar.
    pub guided: bool,
    /// The family the calls are guided in.
    pub family: ToolFamily,
    /// Why.
    pub reason: AutoReason,
}

/// Where `tool_calls: auto` finds the results of a model file's tool-use check. The check's
/// store implements it (`models check`); until a file was checked it answers `None`.
pub trait CheckedModes: Send + Sync {
    /// The mode and guidance (`true`: guided) that scored best on the model file at `path`,
    /// if it was checked.
    fn best_checked_mode(&self, path: &Path) -> Option<(ToolCallMode, bool)>;
}

/// No check results (a model never checked).
pub struct NoChecks;

impl CheckedModes for NoChecks {
    fn best_checked_mode(&self, _path: &Path) -> Option<(ToolCallMode, bool)> {
        None
    }
}

/// What the template of the local model file at `path` says about tools: from the library's
/// metadata when the file is in `models_dir` (read once per file), else read from the file.
pub fn template_tools(path: &Path, models_dir: &Path) -> Option<TemplateTools> {
    let name = path.file_name()?.to_str()?;
    if path.parent() == Some(models_dir) {
        if let Ok(model) = Library::new(models_dir).get(name) {
            return model.tools;
        }
    }
    let (info, template) = gguf::read_with_template(path).ok()?;
    Some(TemplateTools::of(
        template.as_deref().unwrap_or(""),
        info.architecture.as_deref().unwrap_or(""),
    ))
}

/// How `profile` (as a client uses it: a local model's `model` is the path of its file) calls
/// tools. `tools` is what its model file's template says (see [`template_tools`]).
pub fn resolve(
    profile: &ModelProfile,
    tools: Option<TemplateTools>,
    checked: &dyn CheckedModes,
) -> AutoChoice {
    let family = profile
        .tool_family
        .or(tools.map(|t| t.family))
        .unwrap_or(ToolFamily::Hermes);
    let configured = |mode| AutoChoice {
        mode,
        guided: profile.guided_calls(),
        family,
        reason: AutoReason::Configured,
    };
    match profile.tool_call_mode() {
        mode @ (ToolCallMode::Text | ToolCallMode::Native) => return configured(mode),
        ToolCallMode::Auto => {}
    }
    let text = |reason| AutoChoice {
        mode: ToolCallMode::Text,
        guided: profile.guided_calls(),
        family,
        reason,
    };
    let path = PathBuf::from(&profile.model);
    if profile.api != Api::Local {
        return text(AutoReason::NoModelFile);
    }
    if let Some((mode, guided)) = checked.best_checked_mode(&path) {
        if mode != ToolCallMode::Auto {
            return AutoChoice {
                mode,
                guided,
                family,
                reason: AutoReason::Checked,
            };
        }
    }
    match tools {
        None => text(AutoReason::NoModelFile),
        Some(t) if !t.takes_tools => text(AutoReason::TemplateTakesNoTools),
        Some(_) if family == ToolFamily::Unknown => text(AutoReason::UnknownFamily),
        Some(_) => AutoChoice {
            mode: ToolCallMode::Native,
            guided: profile.guided_calls(),
            family,
            reason: AutoReason::NativeFamily,
        },
    }
}
