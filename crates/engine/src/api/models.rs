//! The model library as the Models screen and `artifactflow-cli models` use it: the installed
//! models and unfinished downloads, the catalogue with a fit for this machine, Hub search and a
//! repository's GGUF files, pulls with progress, import of a file, removal.
//!
//! Removing a model says which profiles ran it ([`profiles_using`], asked before, for the
//! confirmation): they keep naming it and are marked as missing their model (the settings
//! view's [`ProfileModel`](crate::models::local::ProfileModel)s) until another is picked. In
//! the app ([`stop_and_remove`]) the runs using it end first, as failed with the reason, and
//! the runtime that has it loaded stops.
//!
//! The Hub is `HF_ENDPOINT` when set, else huggingface.co; its token is the secret `HF_TOKEN`
//! (keyring, `.env` or the environment), sent only to the Hub, and only over https or to this
//! computer ([`Hub::warning`] says when it is kept back).

use std::path::{Path, PathBuf};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::context::AppContext;
use crate::engine::Engine;
use crate::models::library::{
    self, catalog, CatalogEntry, CheckScore, FitCheck, Hub, HubFile, HubRepo, InstalledModel,
    Library, LibraryError, Machine, PartialDownload, ProgressSink, PullOptions, PullRequest,
};

/// The secret holding a Hub token, for gated repositories.
pub const HUB_TOKEN_SECRET: &str = "HF_TOKEN";

/// The models folder, what is in it and what is on its way.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelsView {
    /// The folder.
    pub dir: PathBuf,
    /// The installed models.
    pub installed: Vec<InstalledModel>,
    /// Downloads that have not finished.
    pub downloads: Vec<PartialDownload>,
    /// This machine.
    pub machine: Machine,
}

/// A catalogue entry for this machine.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CatalogItem {
    /// The entry.
    #[serde(flatten)]
    pub entry: CatalogEntry,
    /// How it fits.
    pub fit: FitCheck,
    /// Whether a model of its file name is installed.
    pub installed: bool,
    /// The one to pick on this machine.
    pub recommended: bool,
    /// Its tool-use check: this computer's newest of its installed file (the best mode), else
    /// the one the catalogue publishes.
    pub check: Option<CatalogCheck>,
}

/// A catalogue entry's tool-use check, and where it comes from.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CatalogCheck {
    /// The result.
    #[serde(flatten)]
    pub score: CheckScore,
    /// Run on this computer (else published with the catalogue).
    pub here: bool,
}

/// The catalogue with this machine.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CatalogView {
    /// This machine.
    pub machine: Machine,
    /// The entries, in order of preference.
    pub items: Vec<CatalogItem>,
    /// Why the recommended entry is (none when nothing fits).
    pub recommendation: Option<String>,
}

/// A GGUF file of a Hub repository, with its fit.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RepoFile {
    /// The file.
    #[serde(flatten)]
    pub file: HubFile,
    /// How it fits (memory estimated from its size).
    pub fit: FitCheck,
}

/// The library of `ctx`'s models folder.
pub fn library(ctx: &AppContext) -> Library {
    Library::new(ctx.paths().models_dir())
}

/// The Hub: `HF_ENDPOINT` or huggingface.co, with the `HF_TOKEN` secret when set.
pub fn hub(ctx: &AppContext) -> Hub {
    let token = ctx
        .secret_resolver()
        .resolve(HUB_TOKEN_SECRET)
        .map(|(value, _)| value);
    Hub::from_env(token)
}

/// The installed models and unfinished downloads.
pub fn list(ctx: &AppContext) -> Result<ModelsView, LibraryError> {
    let lib = library(ctx);
    Ok(ModelsView {
        installed: lib.list()?,
        downloads: lib.partials(),
        machine: Machine::read(lib.dir()),
        dir: lib.dir().to_path_buf(),
    })
}

/// The catalogue, each entry with its fit here and its tool-use check.
pub fn catalog_view(ctx: &AppContext) -> CatalogView {
    catalog_for(ctx, Machine::read(&ctx.paths().models_dir()))
}

/// The best of this computer's newest checks of the installed model `file` (with the built-in
/// items), when it was checked.
fn checked_here(ctx: &AppContext, lib: &Library, file: &str) -> Option<CheckScore> {
    let identity = crate::check::file_identity(ctx, &lib.dir().join(file)).ok()?;
    let checks = crate::check::latest_of(ctx, &identity.key);
    let best = crate::check::best_result(&checks)?;
    (best.item_set == crate::check::BUILTIN_SET).then(|| CheckScore {
        as_asked: best.totals.as_asked,
        items: best.totals.items,
        mode: best.mode.as_str().to_string(),
        guided: best.guided,
        measured: String::new(),
    })
}

/// [`catalog_view`] on a given machine (tests).
pub fn catalog_for(ctx: &AppContext, machine: Machine) -> CatalogView {
    let lib = library(ctx);
    let checks: Vec<Option<CatalogCheck>> = catalog::catalog()
        .iter()
        .map(|entry| {
            let installed = lib.dir().join(&entry.file).is_file();
            installed
                .then(|| checked_here(ctx, &lib, &entry.file))
                .flatten()
                .map(|score| CatalogCheck { score, here: true })
                .or_else(|| {
                    entry
                        .published_check
                        .clone()
                        .map(|score| CatalogCheck { score, here: false })
                })
        })
        .collect();
    let check_of = |e: &CatalogEntry| {
        catalog::catalog()
            .iter()
            .position(|c| c.id == e.id)
            .and_then(|i| checks[i].as_ref().map(|c| c.score.clone()))
    };
    let recommendation = catalog::recommend_by(&machine, check_of);
    let recommended = recommendation.as_ref().map(|r| r.entry.id.clone());
    let items = catalog::catalog()
        .iter()
        .zip(checks)
        .map(|(entry, check)| CatalogItem {
            fit: catalog::fit(entry.size, entry.min_memory, &machine),
            installed: lib.dir().join(&entry.file).is_file(),
            recommended: recommended.as_deref() == Some(entry.id.as_str()),
            check,
            entry: entry.clone(),
        })
        .collect();
    CatalogView {
        machine,
        items,
        recommendation: recommendation.map(|r| r.reason),
    }
}

/// GGUF repositories of the Hub matching `query`.
pub async fn search(hub: &Hub, query: &str) -> Result<Vec<HubRepo>, LibraryError> {
    if query.trim().is_empty() {
        return Err(LibraryError::Invalid(
            "type a few words of a model's name to search for".into(),
        ));
    }
    hub.search(query, 30).await
}

/// The GGUF files of `repo` at `revision` (`main` when empty), smallest first, each with its fit.
pub async fn files(
    ctx: &AppContext,
    hub: &Hub,
    repo: &str,
    revision: &str,
) -> Result<Vec<RepoFile>, LibraryError> {
    let revision = if revision.trim().is_empty() {
        "main"
    } else {
        revision.trim()
    };
    let machine = Machine::read(&ctx.paths().models_dir());
    let mut out: Vec<RepoFile> = hub
        .files(repo, revision)
        .await?
        .into_iter()
        .filter(|f| f.path.to_ascii_lowercase().ends_with(".gguf"))
        .map(|file| RepoFile {
            fit: catalog::fit(file.size, catalog::memory_for_file(file.size), &machine),
            file,
        })
        .collect();
    out.sort_by_key(|f| f.file.size);
    Ok(out)
}

/// What a pull names: a catalogue id (`qwen3-1.7b`), `owner/name/file.gguf` (a path inside the
/// repository may follow) or `owner/name:file.gguf`; with `revision` (`main` when empty). A
/// catalogue id, or the repository and file of a catalogue entry, is that entry's file: the
/// installed model says when it is not (another architecture or size).
pub fn pull_request(target: &str, revision: &str) -> Result<PullRequest, LibraryError> {
    let target = target.trim();
    let revision = if revision.trim().is_empty() {
        "main".to_string()
    } else {
        revision.trim().to_string()
    };
    if let Some(entry) = catalog::find(target) {
        return Ok(PullRequest {
            repo: entry.repo.clone(),
            revision,
            file: entry.file.clone(),
            sha256: entry.sha256.clone(),
            catalog_id: Some(entry.id.clone()),
        });
    }
    // `owner/name:file` only when a repository stands before the first `:` (a file path of the
    // slash form may hold a `:` itself, which the name check then refuses with its reason).
    let colon_form = target
        .split_once(':')
        .filter(|(repo, _)| repo.matches('/').count() == 1);
    let (repo, file) = if let Some((repo, file)) = colon_form {
        (repo.to_string(), file.to_string())
    } else {
        let mut parts = target.splitn(3, '/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(owner), Some(name), Some(file)) => (format!("{owner}/{name}"), file.to_string()),
            _ => {
                let ids: Vec<&str> = catalog::catalog().iter().map(|e| e.id.as_str()).collect();
                return Err(LibraryError::Invalid(format!(
                    "\"{target}\" is neither a catalogue model ({}) nor owner/name/file.gguf",
                    ids.join(", ")
                )));
            }
        }
    };
    let entry = catalog::catalog()
        .iter()
        .find(|e| e.repo.eq_ignore_ascii_case(&repo) && e.file == file);
    Ok(PullRequest {
        sha256: entry.and_then(|e| e.sha256.clone()),
        catalog_id: entry.map(|e| e.id.clone()),
        repo,
        revision,
        file,
    })
}

/// Download `request` into the models folder (resuming a part of it), reporting progress.
/// Cancelling pauses: the part is kept.
pub async fn pull(
    ctx: &AppContext,
    hub: &Hub,
    request: &PullRequest,
    progress: ProgressSink,
    cancel: &CancellationToken,
) -> Result<InstalledModel, LibraryError> {
    pull_with(ctx, hub, request, &PullOptions::default(), progress, cancel).await
}

/// [`pull`] with its retry and report settings (tests use short waits).
pub async fn pull_with(
    ctx: &AppContext,
    hub: &Hub,
    request: &PullRequest,
    options: &PullOptions,
    progress: ProgressSink,
    cancel: &CancellationToken,
) -> Result<InstalledModel, LibraryError> {
    library::pull(&library(ctx), hub, request, options, progress, cancel).await
}

/// Copy a `.gguf` file into the models folder after reading its header.
pub fn import(ctx: &AppContext, path: &Path) -> Result<InstalledModel, LibraryError> {
    library(ctx).import(path)
}

/// What a removal did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Removal {
    /// The files removed: the model, what the library kept of it, a download's part.
    pub removed: Vec<PathBuf>,
    /// The profiles that ran the model, by name: they have no model until another is picked
    /// (Settings and the composer say so).
    pub profiles: Vec<String>,
    /// The conversations whose run used the model: stopped, each ending as failed with the
    /// reason.
    pub stopped_runs: Vec<String>,
    /// The runtime had the model loaded and was stopped (its memory returned).
    pub runtime_stopped: bool,
}

/// The profiles (by name, in `models.yaml`'s order) that run the installed model `name` (its
/// file name, with or without `.gguf`): by its name, its file name or its path. None when it
/// is not installed.
pub fn profiles_using(ctx: &AppContext, name: &str) -> Result<Vec<String>, LibraryError> {
    let lib = library(ctx);
    let file = lib.path_of(name)?;
    if !file.is_file() {
        return Ok(Vec::new());
    }
    Ok(ctx
        .config()
        .models
        .iter()
        .filter(|p| crate::models::local::runs_file(p, &file, lib.dir()))
        .map(|p| p.name.clone())
        .collect())
}

/// `profiles` as people read a list: “Local”, or “Local”, “Coder”.
fn quoted(profiles: &[String]) -> String {
    profiles
        .iter()
        .map(|p| format!("“{p}”"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What removing a model means for the `profiles` that run it, before it is removed (the
/// confirmation's sentence); `None` when no profile runs it.
pub fn profiles_note(profiles: &[String]) -> Option<String> {
    match profiles {
        [] => None,
        [one] => Some(format!(
            "The profile “{one}” uses it; it will have no model until you pick another."
        )),
        many => Some(format!(
            "The profiles {} use it; they will have no model until you pick another.",
            quoted(many)
        )),
    }
}

/// What removing a model did to the `profiles` that ran it (said after the removal, with where
/// to pick another); `None` when no profile ran it.
pub fn profiles_left_note(profiles: &[String]) -> Option<String> {
    let who = match profiles {
        [] => return None,
        [one] => format!("The profile “{one}” used it; it has"),
        many => format!("The profiles {} used it; they have", quoted(many)),
    };
    Some(format!(
        "{who} no model until you pick another (Settings, or `model:` in models.yaml)."
    ))
}

/// Why a run ended when its model `file` was deleted, and what to do: pick another model for
/// `profiles` (the ones that ran it).
fn deleted_while_running(file: &str, profiles: &[String]) -> String {
    let pick = match profiles {
        [] => "pick another model in Settings".to_string(),
        [one] => format!("pick another model for the profile “{one}” in Settings"),
        many => format!(
            "pick another model for the profiles {} in Settings",
            quoted(many)
        ),
    };
    format!(
        "the model {file} was deleted while this run used it: {pick} (or get one in Models), \
         then send again"
    )
}

/// Remove a model, or an unfinished download, by name (its file name, with or without
/// `.gguf`). Says which profiles ran the model; what runs it in this process (a run, the
/// runtime) is [`stop_and_remove`]'s, which the app uses. The CLI uses this one: its process
/// runs nothing while it removes.
pub fn remove(ctx: &AppContext, name: &str) -> Result<Removal, LibraryError> {
    let profiles = profiles_using(ctx, name)?;
    let removed = library(ctx).remove(name)?;
    Ok(Removal {
        removed,
        profiles,
        stopped_runs: Vec::new(),
        runtime_stopped: false,
    })
}

/// Remove a model as the app does: first the runs using it end (as failed, saying the model
/// was deleted and what to do) through the engine's cancellation, and waited for; then the
/// runtime that has it loaded stops, which returns its memory (and lets the file go on
/// systems that keep an open file); then the files go, as [`remove`] does.
pub async fn stop_and_remove(engine: &Engine, name: &str) -> Result<Removal, LibraryError> {
    let ctx = &engine.ctx;
    let profiles = profiles_using(ctx, name)?;
    let file = library(ctx).path_of(name)?;
    let (stopped_runs, runtime_stopped) = if file.is_file() {
        let shown = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.trim().to_string());
        let reason = deleted_while_running(&shown, &profiles);
        let runs = engine.runs.stop_runs_using(&file, &reason).await;
        let stopped = crate::models::local::stop_serving(&file).await.is_some();
        (runs, stopped)
    } else {
        (Vec::new(), false)
    };
    let removed = library(ctx).remove(name)?;
    Ok(Removal {
        removed,
        profiles,
        stopped_runs,
        runtime_stopped,
    })
}
