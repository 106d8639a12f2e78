//! The built-in tool-use check: how well a model calls tools, in each mode, scored by rules.
//!
//! `artifactflow-cli models check MODEL` (and the Models screen) asks a model about 200
//! offline items shipped with the app ([`items`]: one call with typed arguments, choosing
//! among tools, two calls, a value from earlier in the conversation, a question that needs no
//! tool, a request missing a required value), each as the run loop would ask it in the chosen
//! mode and guidance ([`runner`]), and scores the calls read from the answers by rules, with
//! no judge model ([`score`]). A [`CheckReport`] holds every item's verdict, the totals and a
//! breakdown by kind.
//!
//! # What a result is kept by
//!
//! A finished check is stored in the app's database (`tool_checks`, see
//! [`crate::db`], migration 14) by the model's content identity ([`ModelIdentity`]): the
//! sha256 of a model file (the one the model library verified on download or import, else
//! computed once per file and process), so a result survives removing the file and importing
//! it again, a rename, and the same file under another name; a profile's model on a server is
//! kept by a digest of its server's address and model name (never the address, which may
//! carry a token). The database rather than the library's metadata beside
//! the file: that metadata goes with `models rm` and is written afresh on import.
//! [`latest_checks`] reads the newest result of each mode and guidance, [`best_checked_mode`]
//! the best of them (what `tool_calls: auto` goes by).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::context::AppContext;
use crate::models::{Api, ModelProfile, ToolCallMode};

pub mod items;
pub mod runner;
pub mod score;

/// The stored rows of checks (the store crate's `checks`).
pub use artifactflow_store::checks as rows;
pub use items::{builtin, parse_items, spread, CheckItem, ItemKind, BUILTIN_SET};
pub use runner::{run_check, CheckOptions, CheckProgress, CheckTarget};
pub use score::{ItemScore, MadeCall, Verdict};

/// What a model's results are kept by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelIdentity {
    /// `sha256:HEX` of a model file; `server:HEX` (a digest of the server's address and the model
    /// name, see [`server_key`]) of a profile's model on a server.
    pub key: String,
    /// The name people know it by (the file's name, or the profile's).
    pub name: String,
}

/// Counts over a set of items.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Tally {
    /// Items asked.
    pub items: u32,
    /// Answered as asked.
    pub as_asked: u32,
    /// Whose calls named the right tools (no call where none was needed).
    pub right_tool: u32,
    /// Of the items that needed a call, those whose calls were all valid.
    pub valid_calls: u32,
    /// Items that needed a call.
    pub calls_expected: u32,
    /// Whose request failed.
    pub failed: u32,
}

impl Tally {
    fn add(&mut self, s: &ItemScore) {
        self.items += 1;
        self.as_asked += u32::from(s.as_asked);
        self.right_tool += u32::from(s.right_tool);
        self.valid_calls += u32::from(s.valid_call);
        self.calls_expected += u32::from(s.kind_needs_a_call());
        self.failed += u32::from(s.verdict == Verdict::Failed);
    }

    /// The share answered as asked (0 with no items).
    pub fn score(&self) -> f64 {
        if self.items == 0 {
            0.0
        } else {
            f64::from(self.as_asked) / f64::from(self.items)
        }
    }
}

impl ItemScore {
    fn kind_needs_a_call(&self) -> bool {
        !matches!(self.kind, ItemKind::NoTool | ItemKind::MissingValue)
    }
}

/// The counts of one kind of item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct KindTally {
    /// The kind.
    pub kind: ItemKind,
    /// Its counts.
    #[serde(flatten)]
    pub tally: Tally,
}

/// A whole check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CheckReport {
    /// The model.
    pub model: ModelIdentity,
    /// The profile it was asked through.
    pub profile: String,
    /// `text` or `native`.
    pub mode: ToolCallMode,
    /// Guided calls.
    pub guided: bool,
    /// [`BUILTIN_SET`] or the items file with its sha256.
    pub item_set: String,
    /// Every item's score, in the order asked.
    pub items: Vec<ItemScore>,
    /// Over all items.
    pub totals: Tally,
    /// By kind, in [`ItemKind::ALL`]'s order (kinds without items left out).
    pub by_kind: Vec<KindTally>,
    /// Items by verdict.
    pub by_verdict: Vec<(Verdict, u32)>,
    /// Wall time.
    pub seconds: f64,
    /// Stopped before every item was asked.
    pub cancelled: bool,
}

impl CheckReport {
    /// The report of `items`' scores.
    pub fn new(
        target: &CheckTarget,
        options: CheckOptions,
        item_set: &str,
        items: Vec<ItemScore>,
        seconds: f64,
        cancelled: bool,
    ) -> CheckReport {
        let mut totals = Tally::default();
        let mut by_kind: Vec<KindTally> = ItemKind::ALL
            .iter()
            .map(|&kind| KindTally {
                kind,
                tally: Tally::default(),
            })
            .collect();
        let mut by_verdict: Vec<(Verdict, u32)> = Vec::new();
        for s in &items {
            totals.add(s);
            if let Some(k) = by_kind.iter_mut().find(|k| k.kind == s.kind) {
                k.tally.add(s);
            }
            match by_verdict.iter_mut().find(|(v, _)| *v == s.verdict) {
                Some((_, n)) => *n += 1,
                None => by_verdict.push((s.verdict, 1)),
            }
        }
        by_kind.retain(|k| k.tally.items > 0);
        CheckReport {
            model: target.identity.clone(),
            profile: target.profile.name.clone(),
            mode: options.mode,
            guided: options.guided,
            item_set: item_set.to_string(),
            items,
            totals,
            by_kind,
            by_verdict,
            seconds,
            cancelled,
        }
    }

    /// Seconds per item, as measured.
    pub fn seconds_per_item(&self) -> Option<f64> {
        (self.totals.items > 0).then(|| self.seconds / f64::from(self.totals.items))
    }
}

/// A stored check, as `latest_checks` gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CheckResult {
    /// The stored row's id.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub id: i64,
    /// The mode it ran in.
    pub mode: ToolCallMode,
    /// Guided calls.
    pub guided: bool,
    /// The item set.
    pub item_set: String,
    /// Its counts.
    pub totals: Tally,
    /// By kind.
    pub by_kind: Vec<KindTally>,
    /// Wall time.
    pub seconds: f64,
    /// When it finished (UTC, ISO 8601).
    pub finished_at: String,
}

impl CheckResult {
    /// Seconds per item, as measured (for "about N minutes" before the next check).
    pub fn seconds_per_item(&self) -> Option<f64> {
        (self.totals.items > 0).then(|| self.seconds / f64::from(self.totals.items))
    }
}

/// Which model `model` means, and the profile to ask it through: a profile of `models.yaml`
/// by name, else an installed model of the models folder (asked through the app's runtime as
/// an `api: local` profile of that name would be). The error names both places.
pub fn target(ctx: &AppContext, model: &str) -> Result<CheckTarget, String> {
    let config = ctx.config();
    let profile = match config.models.iter().find(|p| p.name == model) {
        Some(p) => p.clone(),
        None => {
            let library = crate::models::library::Library::new(ctx.paths().models_dir());
            let installed = library.get(model).map_err(|_| {
                let profiles: Vec<_> = config.models.iter().map(|p| p.name.as_str()).collect();
                let names: Vec<_> = library
                    .list()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|m| m.name)
                    .collect();
                format!(
                    "`{model}` is neither a model profile ({}) nor an installed model ({}); name one of them, or install the model first (artifactflow-cli models pull / import)",
                    if profiles.is_empty() { "none".into() } else { profiles.join(", ") },
                    if names.is_empty() { "none".into() } else { names.join(", ") },
                )
            })?;
            ModelProfile::new(installed.name.clone(), Api::Local, "", installed.name)
        }
    };
    let resolved = ctx.client_profile(&profile)?;
    let identity = identity(ctx, &resolved)?;
    Ok(CheckTarget {
        profile: resolved,
        identity,
    })
}

/// The identity of `profile`'s model (its `model` already resolved to a file for a local one).
pub fn identity(ctx: &AppContext, profile: &ModelProfile) -> Result<ModelIdentity, String> {
    if profile.api != Api::Local {
        return Ok(ModelIdentity {
            key: server_key(&profile.base_url, &profile.model),
            name: profile.name.clone(),
        });
    }
    file_identity(ctx, Path::new(&profile.model))
}

/// The identity of model `model` on the server at `base_url`: `server:` and a digest of both,
/// never the address itself (a base URL may carry a token in its query or user part, and the
/// database must not hold it).
pub fn server_key(base_url: &str, model: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("{base_url}\n{model}").as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("server:{hex}")
}

/// The identity of the model file at `path`: the sha256 the library verified on download or
/// import when the file is in the models folder, else computed (see [`file_sha256`]).
pub fn file_identity(ctx: &AppContext, path: &Path) -> Result<ModelIdentity, String> {
    let library = crate::models::library::Library::new(ctx.paths().models_dir());
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let verified = (path.parent() == Some(library.dir()))
        .then(|| path.file_name().and_then(|f| f.to_str()))
        .flatten()
        .and_then(|file| library.get(file).ok())
        .and_then(|m| m.sha256);
    let sha256 = match verified {
        Some(sha256) => sha256,
        None => file_sha256(path)?,
    };
    Ok(ModelIdentity {
        key: format!("sha256:{}", sha256.to_ascii_lowercase()),
        name,
    })
}

/// The sha256 of a model file the library has none for (one put in the folder by hand, or a
/// path), computed once per file, size and modification time in this process.
fn file_sha256(path: &Path) -> Result<String, String> {
    use sha2::Digest;
    use std::collections::HashMap;
    use std::io::Read;
    use std::sync::Mutex;
    type Seen = HashMap<(std::path::PathBuf, u64, Option<std::time::SystemTime>), String>;
    static SEEN: Mutex<Option<Seen>> = Mutex::new(None);
    let cannot = |e: std::io::Error| format!("cannot read the model file {}: {e}", path.display());
    let meta = std::fs::metadata(path).map_err(cannot)?;
    let key = (path.to_path_buf(), meta.len(), meta.modified().ok());
    if let Some(known) = SEEN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(&key)
    {
        return Ok(known.clone());
    }
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(cannot)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    SEEN.lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, hex.clone());
    Ok(hex)
}

/// How a check of `target` asks: `mode` (`text`, `native` or `auto`; `None`: the profile's
/// `tool_calls`) and `guided` (`None`: the profile's `guided_calls`, or what `auto` chose).
/// `auto` is resolved as the run loop resolves `tool_calls: auto` (see
/// [`crate::run::tool_mode`]): the best mode an earlier check of this model file found, else
/// the family's own form when the model's template takes tools, else text.
pub fn resolve_options(
    ctx: &AppContext,
    target: &CheckTarget,
    mode: Option<&str>,
    guided: Option<bool>,
) -> CheckOptions {
    let profile = &target.profile;
    let configured_guided = guided.unwrap_or_else(|| profile.guided_calls());
    let mode = mode.unwrap_or_else(|| profile.tool_call_mode().as_str());
    match mode {
        "text" => CheckOptions {
            mode: ToolCallMode::Text,
            guided: configured_guided,
        },
        "native" => CheckOptions {
            mode: ToolCallMode::Native,
            guided: configured_guided,
        },
        _ => {
            let mut auto = profile.clone();
            auto.tool_calls = Some(ToolCallMode::Auto);
            let tools = (profile.api == Api::Local)
                .then(|| {
                    crate::run::tool_mode::template_tools(
                        Path::new(&profile.model),
                        &ctx.paths().models_dir(),
                    )
                })
                .flatten();
            let choice = crate::run::tool_mode::resolve(&auto, tools, &StoredChecks::new(ctx));
            CheckOptions {
                mode: choice.mode,
                guided: guided.unwrap_or(choice.guided),
            }
        }
    }
}

/// The stored checks, as `tool_calls: auto` asks them (see
/// [`crate::run::tool_mode::CheckedModes`]): the best mode of a model file, by its identity.
pub struct StoredChecks<'a> {
    ctx: &'a AppContext,
}

impl<'a> StoredChecks<'a> {
    /// The checks kept in `ctx`'s database.
    pub fn new(ctx: &'a AppContext) -> Self {
        StoredChecks { ctx }
    }
}

impl crate::run::tool_mode::CheckedModes for StoredChecks<'_> {
    fn best_checked_mode(&self, path: &Path) -> Option<(ToolCallMode, bool)> {
        let identity = file_identity(self.ctx, path).ok()?;
        best_of(&latest_of(self.ctx, &identity.key))
    }
}

/// Keep a finished report (a cancelled one is not kept: it did not ask every item).
/// Returns the stored row's id.
pub fn store_report(ctx: &AppContext, report: &CheckReport) -> Result<Option<i64>, String> {
    if report.cancelled {
        return Ok(None);
    }
    let row = rows::StoredCheck {
        id: 0,
        model_key: report.model.key.clone(),
        model_name: report.model.name.clone(),
        mode: report.mode.as_str().to_string(),
        guided: report.guided,
        item_set: report.item_set.clone(),
        items: report.totals.items,
        as_asked: report.totals.as_asked,
        right_tool: report.totals.right_tool,
        valid_calls: report.totals.valid_calls,
        calls_expected: report.totals.calls_expected,
        failed: report.totals.failed,
        seconds: report.seconds,
        report: serde_json::to_string(report).unwrap_or_default(),
        created_at: String::new(),
    };
    ctx.with_db(|c| rows::insert(c, &row))
        .map(Some)
        .map_err(|e| format!("cannot store the check's result in the database: {e}"))
}

/// The newest stored check of `model` (a profile or an installed model, as [`target`] reads
/// it) in each mode, guidance and item set, newest first. Empty when it was never checked.
pub fn latest_checks(ctx: &AppContext, model: &str) -> Result<Vec<CheckResult>, String> {
    let target = target(ctx, model)?;
    Ok(latest_of(ctx, &target.identity.key))
}

/// The mode and guidance whose newest check of `model` answered the most items as asked (on
/// a tie: the most valid calls, then guided, then text); `None` before any check.
pub fn best_checked_mode(ctx: &AppContext, model: &str) -> Option<(ToolCallMode, bool)> {
    let target = target(ctx, model).ok()?;
    best_of(&latest_of(ctx, &target.identity.key))
}

/// The newest checks kept under `key`.
pub fn latest_of(ctx: &AppContext, key: &str) -> Vec<CheckResult> {
    let rows = match ctx.with_db(|c| rows::latest(c, key)) {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!("cannot read the tool-use checks of {key}: {e}");
            return Vec::new();
        }
    };
    rows.into_iter()
        .filter_map(|row| {
            let report: CheckReport = serde_json::from_str(&row.report).ok()?;
            Some(CheckResult {
                id: row.id,
                mode: report.mode,
                guided: row.guided,
                item_set: row.item_set,
                totals: report.totals,
                by_kind: report.by_kind,
                seconds: row.seconds,
                finished_at: row.created_at,
            })
        })
        .collect()
}

/// The mode and guidance of [`best_result`].
pub fn best_of(checks: &[CheckResult]) -> Option<(ToolCallMode, bool)> {
    best_result(checks).map(|c| (c.mode, c.guided))
}

/// The best of `checks` (see [`best_checked_mode`]): of the checks with the built-in items
/// when there are any (a check with a reduced set says less), else of all.
pub fn best_result(checks: &[CheckResult]) -> Option<&CheckResult> {
    let builtin = checks.iter().any(|c| c.item_set == BUILTIN_SET);
    checks
        .iter()
        .filter(|c| !builtin || c.item_set == BUILTIN_SET)
        .max_by(|a, b| {
            let rank = |c: &CheckResult| {
                (
                    c.totals.score(),
                    if c.totals.calls_expected == 0 {
                        0.0
                    } else {
                        f64::from(c.totals.valid_calls) / f64::from(c.totals.calls_expected)
                    },
                    c.guided,
                    c.mode == ToolCallMode::Text,
                )
            };
            let (a, b) = (rank(a), rank(b));
            a.0.total_cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        })
}

/// `--items FILE` as the item set's name: the file's name and the sha256 of its text.
pub fn item_set_name(path: &Path, text: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(text.as_bytes());
    let short: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    format!("{file} ({short})")
}
