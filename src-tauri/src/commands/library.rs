//! The library's sources (`engine::api::library`): adding the user's files and folders, with
//! progress pushed as [`Pushed::LibraryIngest`] events and a cancel that stops the job within a
//! second (its workers are killed; what was added stays, what was being read is rolled back).
//! One add runs at a time.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use engine::api::library::{self, AddOptions, Added, Progress};
use engine::source_store::SourceError;
use tauri::State;
use tokio_util::sync::CancellationToken;

use crate::error::{AppError, ErrorCode};
use crate::events::{Outbox, Pushed};
use crate::state::AppState;

/// The add running, so that [`library_cancel`] can stop it.
#[derive(Default)]
pub struct Ingest(Mutex<Option<CancellationToken>>);

impl From<SourceError> for AppError {
    fn from(e: SourceError) -> Self {
        let code = match &e {
            SourceError::NotFound(_) => ErrorCode::NotFound,
            SourceError::Invalid(_) => ErrorCode::InvalidConfig,
            SourceError::Files { .. } => ErrorCode::Io,
            _ => ErrorCode::Database,
        };
        AppError::new(code, e.to_string())
    }
}

/// Add files or folders (recursively) to the library: `paths`, or what the user picks in the
/// open dialog (files, or one folder when `folder`). Progress comes as `library_ingest` events.
/// Returns the job's summary (every failure with its reason), or null when the dialog was
/// cancelled.
#[tauri::command]
#[specta::specta]
pub async fn library_add(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    ingest: State<'_, Ingest>,
    paths: Option<Vec<String>>,
    folder: bool,
) -> Result<Option<Added>, AppError> {
    let ctx = state.engine()?.ctx.clone();
    let paths: Vec<PathBuf> = match paths {
        Some(p) => p.into_iter().map(PathBuf::from).collect(),
        None => pick(&app, folder).await,
    };
    if paths.is_empty() {
        return Ok(None);
    }
    let cancel = CancellationToken::new();
    {
        let mut running = ingest.0.lock().unwrap_or_else(|p| p.into_inner());
        if running.as_ref().is_some_and(|c| !c.is_cancelled()) {
            return Err(AppError::new(
                ErrorCode::AlreadyRunning,
                "files are being added to the library already: wait for them, or cancel",
            ));
        }
        *running = Some(cancel.clone());
    }
    let outbox = app.clone();
    let report = Arc::new(move |p: &Progress| {
        if let Some(outbox) = tauri::Manager::try_state::<Outbox>(&outbox) {
            outbox.push(Pushed::LibraryIngest(p.clone()));
        }
    });
    let options = AddOptions {
        origin: "app".into(),
        ..AddOptions::default()
    };
    let job = cancel.clone();
    let result = tokio::task::spawn_blocking(move || {
        library::add(&ctx, &paths, &options, &job, &|p| report(p))
    })
    .await
    .map_err(|e| AppError::new(ErrorCode::Io, format!("adding the files stopped: {e}")));
    *ingest.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    Ok(Some(result??))
}

/// Stop the add that is running (nothing when none is).
#[tauri::command]
#[specta::specta]
pub fn library_cancel(ingest: State<'_, Ingest>) {
    if let Some(token) = ingest.0.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        token.cancel();
    }
}

/// Files or a folder from the open dialog (in an end-to-end test, the seam's paths).
async fn pick(app: &tauri::AppHandle, folder: bool) -> Vec<PathBuf> {
    if let Some(paths) = crate::seams::picked_paths() {
        return paths;
    }
    use tauri_plugin_dialog::DialogExt;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let dialog = app.dialog().file();
    if folder {
        dialog
            .set_title("Add a folder to the library")
            .pick_folder(move |picked| {
                let _ = tx.send(
                    picked
                        .and_then(|p| p.into_path().ok())
                        .into_iter()
                        .collect(),
                );
            });
    } else {
        dialog
            .set_title("Add files to the library")
            .pick_files(move |picked| {
                let _ = tx.send(
                    picked
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|p| p.into_path().ok())
                        .collect(),
                );
            });
    }
    rx.await.unwrap_or_default()
}
