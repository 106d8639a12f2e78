//! The Models screen: the model library (`engine::api::models`). A download's progress reaches
//! the web view as [`Pushed::ModelDownload`] events (a waiting report is replaced by a newer
//! one); [`models_pause`] stops a download and keeps its part, which a new pull resumes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use engine::api::models::{self, CatalogView, ModelsView, Removal, RepoFile};
use engine::models::library::{HubRepo, InstalledModel, LibraryError, ProgressSink, PullProgress};
use tauri::State;
use tokio_util::sync::CancellationToken;

use crate::error::{AppError, ErrorCode};
use crate::events::{Outbox, Pushed, StatusChanged};
use crate::state::AppState;

/// The downloads running, by file name, so that [`models_pause`] can stop one.
#[derive(Default)]
pub struct Downloads(Mutex<HashMap<String, CancellationToken>>);

impl From<LibraryError> for AppError {
    fn from(e: LibraryError) -> Self {
        let code = match &e {
            LibraryError::Invalid(_) => ErrorCode::InvalidConfig,
            LibraryError::Io { .. } | LibraryError::NoSpace { .. } => ErrorCode::Io,
            _ => ErrorCode::Download,
        };
        AppError::new(code, e.to_string())
    }
}

/// The installed models, the downloads that have not finished, and this machine.
#[tauri::command]
#[specta::specta]
pub fn models_list(state: State<'_, AppState>) -> Result<ModelsView, AppError> {
    Ok(models::list(&state.engine()?.ctx)?)
}

/// The catalogue, each model with how it fits this machine.
#[tauri::command]
#[specta::specta]
pub fn models_catalog(state: State<'_, AppState>) -> Result<CatalogView, AppError> {
    Ok(models::catalog_view(&state.engine()?.ctx))
}

/// GGUF repositories of the Hugging Face Hub matching `query`.
#[tauri::command]
#[specta::specta]
pub async fn models_search(
    state: State<'_, AppState>,
    query: String,
) -> Result<Vec<HubRepo>, AppError> {
    let ctx = state.engine()?.ctx.clone();
    Ok(models::search(&models::hub(&ctx), &query).await?)
}

/// The GGUF files of a Hub repository, smallest first, with how each fits.
#[tauri::command]
#[specta::specta]
pub async fn models_files(
    state: State<'_, AppState>,
    repo: String,
) -> Result<Vec<RepoFile>, AppError> {
    let ctx = state.engine()?.ctx.clone();
    Ok(models::files(&ctx, &models::hub(&ctx), &repo, "main").await?)
}

/// Download a model: a catalogue id, `owner/name/file.gguf` or `owner/name:file.gguf`.
/// Resumes a part of it; progress comes as `model_download` events. Returns the installed
/// model; a pause ends it with an error whose code is `paused`.
#[tauri::command]
#[specta::specta]
pub async fn models_pull(
    state: State<'_, AppState>,
    downloads: State<'_, Downloads>,
    app: tauri::AppHandle,
    target: String,
) -> Result<InstalledModel, AppError> {
    let ctx = state.engine()?.ctx.clone();
    let request = models::pull_request(&target, "main")?;
    let file = engine::models::library::download::local_name(&request.file)?;
    let cancel = CancellationToken::new();
    {
        let mut running = downloads.0.lock().unwrap_or_else(|p| p.into_inner());
        if running.contains_key(&file) {
            return Err(AppError::new(
                ErrorCode::AlreadyRunning,
                format!("{file} is already downloading"),
            ));
        }
        running.insert(file.clone(), cancel.clone());
    }
    let shell = app.clone();
    let sink: ProgressSink = Arc::new(move |p: &PullProgress| {
        if let Some(outbox) = tauri::Manager::try_state::<Outbox>(&app) {
            outbox.push(Pushed::ModelDownload(p.clone()));
        }
    });
    let result = models::pull(&ctx, &models::hub(&ctx), &request, sink, &cancel).await;
    downloads
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&file);
    if result.is_ok() {
        announce_models_changed(&shell, state.engine()?);
    }
    result.map_err(|e| match e {
        LibraryError::Paused { .. } => AppError::new(ErrorCode::Paused, e.to_string()),
        e => e.into(),
    })
}

/// Pause the download of `file` (its part is kept; pulling it again resumes it).
#[tauri::command]
#[specta::specta]
pub fn models_pause(downloads: State<'_, Downloads>, file: String) -> Result<(), AppError> {
    if let Some(token) = downloads
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&file)
    {
        token.cancel();
    }
    Ok(())
}

/// Copy a `.gguf` file into the models folder after checking its header: `path`, or the file
/// the user picks in the open dialog. Returns null when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
pub async fn models_import(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    path: Option<String>,
) -> Result<Option<InstalledModel>, AppError> {
    let ctx = state.engine()?.ctx.clone();
    let path = match path {
        Some(p) => std::path::PathBuf::from(p),
        None => match pick_model_file(&app).await {
            Some(p) => p,
            None => return Ok(None),
        },
    };
    let model = tokio::task::spawn_blocking(move || models::import(&ctx, &path))
        .await
        .map_err(|e| AppError::new(ErrorCode::Io, format!("the import stopped: {e}")))??;
    announce_models_changed(&app, state.engine()?);
    Ok(Some(model))
}

/// Remove a model, or a download that has not finished, by name: the runs using the model end
/// (as failed, saying why), its runtime stops, then its files go. Returns what it did (the
/// profiles left without a model among it); the settings are announced as changed, so
/// Settings and the composer mark those profiles.
#[tauri::command]
#[specta::specta]
pub async fn models_remove(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    name: String,
) -> Result<Removal, AppError> {
    let engine = state.engine()?;
    let removal = models::stop_and_remove(engine, &name).await?;
    announce_models_changed(&app, engine);
    Ok(removal)
}

/// The models folder changed (a model came or went): announce the status as changed, so the
/// web view fetches the settings again, whose profiles say whether their model is there.
fn announce_models_changed(app: &tauri::AppHandle, engine: &engine::Engine) {
    if let Some(outbox) = tauri::Manager::try_state::<Outbox>(app) {
        let status = engine.ctx.status();
        outbox.push(Pushed::StatusChanged(StatusChanged { status }));
    }
}

/// Open the models folder in the system's file manager.
#[tauri::command]
#[specta::specta]
pub fn open_models_folder(state: State<'_, AppState>) -> Result<(), AppError> {
    super::open_folder(&state.engine()?.ctx.paths().models_dir(), true)
}

async fn pick_model_file(app: &tauri::AppHandle) -> Option<std::path::PathBuf> {
    use tauri_plugin_dialog::DialogExt;
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Import a model file")
        .add_filter("GGUF model", &["gguf"])
        .pick_file(move |picked| {
            let _ = tx.send(picked.and_then(|p| p.into_path().ok()));
        });
    rx.await.ok().flatten()
}
