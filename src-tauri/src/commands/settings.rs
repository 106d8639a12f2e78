//! Settings: model profiles, secrets, permission timeout, the config folder.

use engine::api::settings::{self, PermissionRulesView, SettingsView};
use engine::config_edit::ConnectionTest;
use engine::models::ModelProfile;
use tauri::State;

use crate::error::AppError;
use crate::state::AppState;

/// Everything the Settings screen shows. (Async, like every command that touches the OS
/// keyring: keyring calls block, and sync commands run on the window's main thread.)
#[tauri::command]
#[specta::specta]
pub async fn get_settings(state: State<'_, AppState>) -> Result<SettingsView, AppError> {
    if let Some(gate) = crate::seams::settings_gate() {
        while !gate.exists() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    Ok(settings::view(&state.engine()?.ctx))
}

/// Replace every model profile (validated by the models.yaml loader; nothing is written when
/// invalid).
#[tauri::command]
#[specta::specta]
pub fn save_profiles(
    state: State<'_, AppState>,
    profiles: Vec<ModelProfile>,
) -> Result<(), AppError> {
    settings::save_profiles(state.engine()?, &profiles).map_err(AppError::form)
}

/// Send a tiny request through `profile`.
#[tauri::command]
#[specta::specta]
pub async fn test_profile(
    state: State<'_, AppState>,
    profile: ModelProfile,
) -> Result<ConnectionTest, AppError> {
    Ok(settings::test_profile(&state.engine()?.ctx, &profile).await)
}

/// The models `profile`'s server lists, for the profile form's picker. `key` is a key typed
/// into the form and not saved yet (used for this one request); without it the profile's own
/// key is resolved. A server without a list comes back as a note (the form keeps free text).
#[tauri::command]
#[specta::specta]
pub async fn list_models(
    state: State<'_, AppState>,
    profile: ModelProfile,
    key: Option<String>,
) -> Result<engine::models::ModelList, AppError> {
    Ok(settings::list_models(&state.engine()?.ctx, &profile, key).await)
}

/// What the engine would use as `profile`'s context window if its `context_window` field were
/// empty (the server's report, a known model's default, or the conservative default), for the
/// hint beside the profile form's field. The server is asked now, not from the run loop's
/// cache, since the form may point it elsewhere. `key` is a key typed into the form and not
/// saved yet; without it the profile's own key is resolved.
#[tauri::command]
#[specta::specta]
pub async fn discover_context_window(
    state: State<'_, AppState>,
    profile: ModelProfile,
    key: Option<String>,
) -> Result<engine::models::window::WindowHint, AppError> {
    Ok(settings::discover_context_window(&state.engine()?.ctx, &profile, key).await)
}

/// How `profile` (the profile form's draft) calls tools and why: `tool_calls: auto` resolved for
/// its model as a run would resolve it, for the line under the form's Tool calls field. (Async:
/// it may read a model file's header and the database.)
#[tauri::command]
#[specta::specta]
pub async fn profile_tool_mode(
    state: State<'_, AppState>,
    profile: ModelProfile,
) -> Result<engine::run::tool_mode::AutoChoice, AppError> {
    Ok(settings::profile_tool_mode(&state.engine()?.ctx, &profile))
}

/// Store a secret in the OS keyring (the value is never returned by any command).
#[tauri::command]
#[specta::specta]
pub async fn set_secret(
    state: State<'_, AppState>,
    name: String,
    value: String,
) -> Result<(), AppError> {
    Ok(settings::set_secret(&state.engine()?.ctx, &name, &value)?)
}

/// Delete a secret from the OS keyring.
#[tauri::command]
#[specta::specta]
pub async fn delete_secret(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    Ok(settings::delete_secret(&state.engine()?.ctx, &name)?)
}

/// Change how long a permission request waits (applies to runs started afterwards and to the
/// running app after the reload).
#[tauri::command]
#[specta::specta]
pub fn save_permission_timeout(state: State<'_, AppState>, seconds: u32) -> Result<(), AppError> {
    settings::save_permission_timeout(state.engine()?, seconds).map_err(AppError::form)
}

/// Open the config folder in the system's file manager.
#[tauri::command]
#[specta::specta]
pub fn open_config_folder(state: State<'_, AppState>) -> Result<(), AppError> {
    super::open_folder(&state.engine()?.ctx.paths().config_dir, false)
}

/// The permission rules (Settings → Permission rules, and the Tools page).
#[tauri::command]
#[specta::specta]
pub fn list_permission_rules(state: State<'_, AppState>) -> Result<PermissionRulesView, AppError> {
    Ok(settings::permission_rules(&state.engine()?.ctx))
}

/// Replace `settings.yaml`'s permission rules (other keys and comments stay). A rule that does
/// not check is refused with its error, and nothing is written.
#[tauri::command]
#[specta::specta]
pub fn save_global_permission_rules(
    state: State<'_, AppState>,
    rules: Vec<engine::rule_spec::RuleSpec>,
) -> Result<(), AppError> {
    Ok(settings::save_permission_rules(state.engine()?, &rules)?)
}
