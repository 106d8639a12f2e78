//! The About dialog: version and links, the update feed setting and "Check for updates"
//! (the Tauri updater plugin, pointed at the feed from `settings.yaml`'s `update_url`).

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, State};
use tauri_plugin_updater::{Update, UpdaterExt};

use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// The project's web pages (from the package's `homepage` and `repository`).
const HOMEPAGE: &str = env!("CARGO_PKG_HOMEPAGE");
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// What the About dialog shows.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppInfo {
    /// Product name.
    pub name: String,
    /// The app's version (the package version in Cargo.toml, the one place it is set).
    pub version: String,
    /// The bundle identifier.
    pub identifier: String,
    /// The Tauri runtime's version.
    pub tauri_version: String,
    /// SPDX license expression.
    pub license: String,
    /// The project's home page.
    pub homepage: String,
    /// Where releases are published (for downloading by hand).
    pub releases: String,
    /// Where to report a problem.
    pub issues: String,
    /// The update feed URL, or None when update checks are off.
    pub update_url: Option<String>,
    /// Can this build install an update it found? False when it was built without the
    /// updater's public key (then updates can be found, but must be downloaded by hand).
    pub can_install_updates: bool,
}

/// A page [`open_project_link`] may open. Only these: the window never opens arbitrary URLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ProjectLink {
    /// The home page.
    Homepage,
    /// The releases page.
    Releases,
    /// The issue tracker.
    Issues,
}

/// The result of "Check for updates".
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct UpdateCheck {
    /// The running version.
    pub current_version: String,
    /// The newer version the feed offers, if any.
    pub available: Option<AvailableUpdate>,
}

/// A newer version announced by the update feed.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AvailableUpdate {
    /// Its version.
    pub version: String,
    /// Its publication date (YYYY-MM-DD), when the feed gives one.
    pub date: Option<String>,
    /// Its release notes, when the feed gives them.
    pub notes: Option<String>,
}

/// The update found by the last check, kept for [`install_update`].
#[derive(Default)]
pub struct PendingUpdate(std::sync::Mutex<Option<Update>>);

fn releases_url() -> String {
    format!("{REPOSITORY}/releases")
}

fn issues_url() -> String {
    format!("{REPOSITORY}/issues")
}

/// The updater's public key from tauri.conf.json (`plugins.updater.pubkey`); empty when this
/// build was made without one.
fn updater_pubkey(app: &AppHandle) -> String {
    app.config()
        .plugins
        .0
        .get("updater")
        .and_then(|c| c.get("pubkey"))
        .and_then(|k| k.as_str())
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn update_error(e: impl std::fmt::Display) -> AppError {
    AppError::new(ErrorCode::Update, format!("the update failed: {e}"))
}

/// Version, links and the update setting for the About dialog.
#[tauri::command]
#[specta::specta]
pub fn get_app_info(app: AppHandle, state: State<'_, AppState>) -> Result<AppInfo, AppError> {
    let update_url = state.engine()?.ctx.config().settings.update_url.clone();
    Ok(AppInfo {
        // The product's name, not `package_info().name`: that is the Linux package's lower-case
        // name on Linux (tauri.linux.conf.json).
        name: engine::paths::PRODUCT_NAME.to_string(),
        version: app.package_info().version.to_string(),
        identifier: app.config().identifier.clone(),
        tauri_version: tauri::VERSION.to_string(),
        license: env!("CARGO_PKG_LICENSE").to_string(),
        homepage: HOMEPAGE.to_string(),
        releases: releases_url(),
        issues: issues_url(),
        update_url,
        can_install_updates: !updater_pubkey(&app).is_empty(),
    })
}

/// Set (or, with a blank `url`, clear) the update feed in settings.yaml. Returns the stored
/// value: None means update checks are off.
#[tauri::command]
#[specta::specta]
pub fn save_update_url(
    state: State<'_, AppState>,
    url: String,
) -> Result<Option<String>, AppError> {
    engine::api::settings::save_update_url(state.engine()?, &url).map_err(AppError::form)
}

/// Ask the update feed whether a newer version exists.
#[tauri::command]
#[specta::specta]
pub async fn check_for_updates(
    app: AppHandle,
    state: State<'_, AppState>,
    pending: State<'_, PendingUpdate>,
) -> Result<UpdateCheck, AppError> {
    let Some(url) = state.engine()?.ctx.config().settings.update_url.clone() else {
        return Err(AppError::new(
            ErrorCode::InvalidConfig,
            "update checks are off: set an update feed URL first",
        ));
    };
    let url = url
        .parse()
        .map_err(|e| AppError::new(ErrorCode::InvalidConfig, format!("`{url}`: {e}")))?;
    let updater = app
        .updater_builder()
        .endpoints(vec![url])
        .and_then(|b| b.timeout(std::time::Duration::from_secs(30)).build())
        .map_err(update_error)?;
    let found = updater.check().await.map_err(update_error)?;
    tracing::info!(
        available = found.as_ref().map(|u| u.version.as_str()),
        "checked for updates"
    );
    let available = found.as_ref().map(|u| AvailableUpdate {
        version: u.version.clone(),
        date: u.date.map(|d| d.date().to_string()),
        notes: u.body.clone().filter(|b| !b.trim().is_empty()),
    });
    *pending.0.lock().unwrap_or_else(|p| p.into_inner()) = found;
    Ok(UpdateCheck {
        current_version: app.package_info().version.to_string(),
        available,
    })
}

/// Download, verify and install the update the last check found, then restart the app.
#[tauri::command]
#[specta::specta]
pub async fn install_update(
    app: AppHandle,
    pending: State<'_, PendingUpdate>,
) -> Result<(), AppError> {
    if updater_pubkey(&app).is_empty() {
        return Err(AppError::new(
            ErrorCode::Update,
            format!(
                "this build cannot verify updates (it has no update signing key): download the new version from {}",
                releases_url()
            ),
        ));
    }
    let update = pending
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .ok_or_else(|| AppError::new(ErrorCode::NotFound, "check for updates first"))?;
    tracing::info!(version = %update.version, "installing update");
    update
        .download_and_install(|_, _| {}, || {})
        .await
        .map_err(update_error)?;
    app.restart()
}

/// Open one of the project's pages in the default browser.
#[tauri::command]
#[specta::specta]
pub fn open_project_link(app: AppHandle, link: ProjectLink) -> Result<(), AppError> {
    use tauri_plugin_opener::OpenerExt;
    let url = match link {
        ProjectLink::Homepage => HOMEPAGE.to_string(),
        ProjectLink::Releases => releases_url(),
        ProjectLink::Issues => issues_url(),
    };
    app.opener()
        .open_url(&url, None::<&str>)
        .map_err(|e| AppError::open_failed(&url, e))
}

/// Seed a new config folder from the defaults the installer shipped as resources
/// (`$RESOURCE/config`, e.g. `/usr/lib/ArtifactFlow/config` from the .deb). When that folder
/// does not exist (a plain `cargo run`), the engine seeds from its embedded copy instead.
pub(crate) fn seed_config_from_resources(app: &AppHandle, config_dir: &std::path::Path) {
    let Ok(defaults) = app.path().resource_dir().map(|d| d.join("config")) else {
        return;
    };
    if !defaults.is_dir() {
        return;
    }
    if let Err(e) = engine::paths::seed_config_from(config_dir, &defaults) {
        tracing::warn!("cannot seed from {}: {e}", defaults.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_links_come_from_the_package() {
        assert!(HOMEPAGE.starts_with("https://"));
        assert!(releases_url().starts_with(REPOSITORY) && releases_url().ends_with("/releases"));
        assert!(issues_url().ends_with("/issues"));
        assert_eq!(
            serde_json::to_value(ProjectLink::Releases).unwrap(),
            "releases"
        );
    }
}
