//! The Skills page: the Agent Skills (`engine::api::skills`) listed with their problems, one
//! opened with its files, imported from a folder or an archive, turned on or off, and the
//! user-level folders read or not. Each write reloads the config.

use engine::api::skills::{self, SkillDetail, SkillsView};
use tauri::State;

use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// Every skill, with where it comes from, whether it is on, its agents, and the problems.
#[tauri::command]
#[specta::specta]
pub fn skills_list(state: State<'_, AppState>) -> Result<SkillsView, AppError> {
    Ok(skills::list(&state.engine()?.ctx))
}

/// One skill: its listing, instructions and files.
#[tauri::command]
#[specta::specta]
pub fn skills_show(state: State<'_, AppState>, name: String) -> Result<SkillDetail, AppError> {
    skills::show(&state.engine()?.ctx, &name).ok_or_else(|| {
        AppError::new(
            ErrorCode::NotFound,
            format!("there is no skill `{name}` (was it removed?)"),
        )
    })
}

/// The text of one of a skill's files.
#[tauri::command]
#[specta::specta]
pub fn skills_read_file(
    state: State<'_, AppState>,
    name: String,
    path: String,
) -> Result<String, AppError> {
    skills::read_file(&state.engine()?.ctx, &name, &path)
        .map_err(|e| AppError::new(ErrorCode::Io, e))
}

/// Import a skill: `path`, or what the user picks (a folder when `archive` is false, else a
/// `.zip`/`.skill` file). Returns its name; null when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
pub async fn skills_import(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    path: Option<String>,
    archive: bool,
) -> Result<Option<String>, AppError> {
    let path = match path {
        Some(p) => std::path::PathBuf::from(p),
        None => match pick(&app, archive).await {
            Some(p) => p,
            None => return Ok(None),
        },
    };
    let running = state.engine()?;
    let dir = skills::skills_dir(&running.ctx);
    // Copying or unpacking may take a moment: off the async workers.
    let skill = tokio::task::spawn_blocking(move || engine::skills::import::import(&path, &dir))
        .await
        .map_err(|e| AppError::new(ErrorCode::Io, format!("the import stopped: {e}")))?
        .map_err(|e| AppError::new(ErrorCode::InvalidConfig, e))?;
    running.reload_config();
    Ok(Some(skill.name))
}

async fn pick(app: &tauri::AppHandle, archive: bool) -> Option<std::path::PathBuf> {
    use tauri_plugin_dialog::DialogExt;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let dialog = app.dialog().file();
    let send = move |picked: Option<tauri_plugin_dialog::FilePath>| {
        let _ = tx.send(picked.and_then(|p| p.into_path().ok()));
    };
    if archive {
        dialog
            .set_title("Import a skill archive")
            .add_filter("Skill archive", &["zip", "skill"])
            .pick_file(send);
    } else {
        dialog
            .set_title("Import a skill's folder")
            .pick_folder(send);
    }
    rx.await.ok().flatten()
}

/// Turn a skill on or off (for every agent).
#[tauri::command]
#[specta::specta]
pub fn skills_set_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> Result<(), AppError> {
    skills::set_enabled(state.engine()?, &name, enabled).map_err(AppError::form)
}

/// Read (or stop reading) the skills other apps keep in the user's home folder.
#[tauri::command]
#[specta::specta]
pub fn skills_set_user_folders(state: State<'_, AppState>, on: bool) -> Result<(), AppError> {
    skills::set_user_folders(state.engine()?, on).map_err(AppError::form)
}

/// Open the config folder's skills/ in the file manager (created when missing).
#[tauri::command]
#[specta::specta]
pub fn open_skills_folder(state: State<'_, AppState>) -> Result<(), AppError> {
    super::open_folder(&skills::skills_dir(&state.engine()?.ctx), true)
}
