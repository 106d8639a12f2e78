//! Settings: model profiles, secrets, permission timeout, the config folder.

use engine::api::settings::SettingsView;
use engine::config_edit::ConnectionTest;
use engine::models::ModelProfile;
use serde::Serialize;
use tauri::State;

use crate::error::{AppError, ErrorCode};
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
    Ok(engine::api::settings::view(&state.engine()?.ctx))
}

/// Replace every model profile (validated by the models.yaml loader; nothing is written when
/// invalid).
#[tauri::command]
#[specta::specta]
pub fn save_profiles(
    state: State<'_, AppState>,
    profiles: Vec<ModelProfile>,
) -> Result<(), AppError> {
    let ctx = &state.engine()?.ctx;
    engine::config_edit::save_profiles(&ctx.paths().config_dir, &profiles).map_err(|e| {
        // The form shows each problem beside its field, so the lines name the field, not the
        // file (which the user never sees here).
        let lines: Vec<String> = e
            .errors()
            .iter()
            .map(|e| match &e.field {
                Some(f) => format!("{f}: {}", e.message),
                None => e.message.clone(),
            })
            .collect();
        AppError {
            message: lines.join("\n"),
            ..AppError::from(e)
        }
    })?;
    state.engine()?.reload_config();
    Ok(())
}

/// Send a tiny request through `profile`.
#[tauri::command]
#[specta::specta]
pub async fn test_profile(
    state: State<'_, AppState>,
    profile: ModelProfile,
) -> Result<ConnectionTest, AppError> {
    let secrets = state.engine()?.ctx.secret_resolver();
    Ok(engine::config_edit::test_profile(&profile, secrets).await)
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
    let secrets = state.engine()?.ctx.secret_resolver();
    Ok(engine::models::list_models(&profile, key, secrets).await)
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
    let secrets = state.engine()?.ctx.secret_resolver();
    Ok(engine::models::window::discover(&profile, key, secrets).await)
}

/// Store a secret in the OS keyring (the value is never returned by any command).
#[tauri::command]
#[specta::specta]
pub async fn set_secret(
    state: State<'_, AppState>,
    name: String,
    value: String,
) -> Result<(), AppError> {
    Ok(state.engine()?.ctx.secret_store().set(&name, &value)?)
}

/// Delete a secret from the OS keyring.
#[tauri::command]
#[specta::specta]
pub async fn delete_secret(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    Ok(state.engine()?.ctx.secret_store().delete(&name)?)
}

/// Change how long a permission request waits (applies to runs started afterwards and to the
/// running app after the reload).
#[tauri::command]
#[specta::specta]
pub fn save_permission_timeout(state: State<'_, AppState>, seconds: u32) -> Result<(), AppError> {
    if !(5..=3600).contains(&seconds) {
        return Err(AppError::new(
            ErrorCode::InvalidConfig,
            "the permission timeout must be between 5 and 3600 seconds",
        ));
    }
    let ctx = &state.engine()?.ctx;
    let mut settings = ctx.config().settings.clone();
    settings.permission_timeout_secs = u64::from(seconds);
    engine::config_edit::save_settings(&ctx.paths().config_dir, &settings)?;
    state.engine()?.reload_config();
    Ok(())
}

/// Open the config folder in the system's file manager.
#[tauri::command]
#[specta::specta]
pub fn open_config_folder(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
) -> Result<(), AppError> {
    use tauri_plugin_opener::OpenerExt;
    let dir = state.engine()?.ctx.paths().config_dir.clone();
    app.opener()
        .open_path(dir.display().to_string(), None::<&str>)
        .map_err(|e| AppError::open_failed(dir.display(), e))
}

/// One agent's permission rules, for the Settings list.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AgentRules {
    /// The agent's name.
    pub agent: String,
    /// Its file (absolute), to open it in the editor.
    pub path: String,
    /// Its rules, in file order.
    pub rules: Vec<engine::permissions::load::RuleView>,
}

/// Every permission rule with where it comes from, why it is ignored (if it is) and the
/// loaded tools it covers.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct PermissionRulesView {
    /// `settings.yaml`'s, in file order.
    pub global: Vec<engine::permissions::load::RuleView>,
    /// Each agent's.
    pub agents: Vec<AgentRules>,
}

/// The permission rules (Settings → Permission rules, and the Tools page).
#[tauri::command]
#[specta::specta]
pub fn list_permission_rules(state: State<'_, AppState>) -> Result<PermissionRulesView, AppError> {
    use engine::permissions::load::RuleView;
    let ctx = &state.engine()?.ctx;
    let rules = ctx.permission_rules();
    let config = ctx.config();
    let view = |entries: &[engine::permissions::load::RuleEntry]| -> Vec<RuleView> {
        entries
            .iter()
            .map(|e| RuleView::of(e, &rules.tool_names))
            .collect()
    };
    Ok(PermissionRulesView {
        global: view(&rules.global),
        agents: rules
            .agents
            .iter()
            .filter(|(_, entries)| !entries.is_empty())
            .map(|(agent, entries)| AgentRules {
                agent: agent.clone(),
                path: config
                    .agents
                    .iter()
                    .find(|a| &a.name == agent)
                    .map(|a| a.source.display().to_string())
                    .unwrap_or_default(),
                rules: view(entries),
            })
            .collect(),
    })
}

/// Replace `settings.yaml`'s permission rules (other keys and comments stay). A rule that does
/// not check is refused with its error, and nothing is written.
#[tauri::command]
#[specta::specta]
pub fn save_global_permission_rules(
    state: State<'_, AppState>,
    rules: Vec<engine::permissions::rules::RuleSpec>,
) -> Result<(), AppError> {
    let engine = state.engine()?;
    engine.ctx.save_global_permission_rules(&rules)?;
    engine.reload_config();
    Ok(())
}
