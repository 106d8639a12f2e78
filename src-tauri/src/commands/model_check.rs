//! The Models screen's tool-use check (`engine::check`): how well an installed model calls
//! tools, asked in the background with the built-in items.
//!
//! [`models_check_start`] asks one installed model the items in the mode and guidance asked
//! for (`auto` resolved as `tool_calls: auto` is) and answers when the check ends; meanwhile
//! each scored item reaches the web view as a [`Pushed::ModelCheck`] event (item i of n, its
//! verdict, the time left at the pace so far), and so do the start and the end, so a screen
//! opened while a check runs picks it up from [`models_checks`]. One check runs at a time:
//! each asks the model hundreds of requests, and two would share the same cores.
//! [`models_check_cancel`] stops it after the request in flight; a stopped check is not kept.
//! A finished one is kept by the model file's sha256, mode and guidance ([`check::store_report`]).
//! The end-to-end tests' build may ask a reduced item set instead ([`screen_items`]).

use std::path::Path;
use std::sync::Mutex;

use engine::check::{self, CheckItem, CheckProgress, CheckResult, CheckTarget, BUILTIN_SET};
use engine::context::AppContext;
use engine::models::{Api, ModelProfile};
use serde::Serialize;
use tauri::State;
use tokio_util::sync::CancellationToken;

use crate::error::{AppError, ErrorCode};
use crate::events::{CheckPhase, ModelCheckProgress, Outbox, Pushed};
use crate::state::AppState;

/// An installed model's stored checks, and the check running on it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct InstalledChecks {
    /// The installed model (its name).
    pub model: String,
    /// The newest check of each mode, guidance and item set, newest first.
    pub checks: Vec<CheckResult>,
    /// The check `tool_calls: auto` goes by: the best of them (see `check::best_of`).
    pub best: Option<CheckResult>,
    /// The check running on it now.
    pub running: Option<ModelCheckProgress>,
}

/// Every installed model's checks, for the Models screen.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ModelChecksView {
    /// Items a check from the screen asks (the built-in set's, see [`screen_items`]).
    pub item_count: u32,
    /// By installed model, in the library's order.
    pub models: Vec<InstalledChecks>,
}

/// The check running, if any: its model, its stop switch and its newest progress.
#[derive(Default)]
pub struct RunningCheck(Mutex<Option<(CancellationToken, ModelCheckProgress)>>);

impl RunningCheck {
    fn progress(&self) -> Option<ModelCheckProgress> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|(_, p)| p.clone())
    }

    fn update(&self, progress: &ModelCheckProgress) {
        if let Some((_, last)) = self.0.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            *last = progress.clone();
        }
    }
}

/// The stored checks of every installed model, and the one running.
#[tauri::command]
#[specta::specta]
pub async fn models_checks(
    state: State<'_, AppState>,
    running: State<'_, RunningCheck>,
) -> Result<ModelChecksView, AppError> {
    let ctx = state.engine()?.ctx.clone();
    let now = running.progress();
    // A model file put in the folder by hand has its sha256 computed once (see
    // `check::file_identity`): off the async threads.
    let models = tokio::task::spawn_blocking(move || installed_checks(&ctx))
        .await
        .map_err(|e| AppError::new(ErrorCode::Io, format!("reading the checks stopped: {e}")))??;
    let models = models
        .into_iter()
        .map(|mut m| {
            m.running = now.clone().filter(|p| p.model == m.model);
            m
        })
        .collect();
    Ok(ModelChecksView {
        item_count: screen_items()?.0.len() as u32,
        models,
    })
}

fn installed_checks(ctx: &AppContext) -> Result<Vec<InstalledChecks>, AppError> {
    let installed = engine::api::models::library(ctx).list()?;
    Ok(installed
        .into_iter()
        .map(|m| {
            let checks = check::file_identity(ctx, &m.path)
                .map(|identity| check::latest_of(ctx, &identity.key))
                .unwrap_or_default();
            let best = best_check(&checks);
            InstalledChecks {
                model: m.name,
                checks,
                best,
                running: None,
            }
        })
        .collect())
}

/// The check `check::best_of` picks among `checks`.
fn best_check(checks: &[CheckResult]) -> Option<CheckResult> {
    let (mode, guided) = check::best_of(checks)?;
    let builtin = checks.iter().any(|c| c.item_set == BUILTIN_SET);
    checks
        .iter()
        .find(|c| c.mode == mode && c.guided == guided && (!builtin || c.item_set == BUILTIN_SET))
        .cloned()
}

/// Ask installed model `model` the built-in items ([`screen_items`]), in `mode` (`text`,
/// `native` or `auto`, the default) with guided calls `guided` (default: the profile's, or what
/// `auto` chose).
/// Progress comes as `model_check` events; returns the kept result, or null when the check was
/// cancelled. One check runs at a time.
#[tauri::command]
#[specta::specta]
pub async fn models_check_start(
    state: State<'_, AppState>,
    running: State<'_, RunningCheck>,
    app: tauri::AppHandle,
    model: String,
    mode: Option<String>,
    guided: Option<bool>,
) -> Result<Option<CheckResult>, AppError> {
    let ctx = state.engine()?.ctx.clone();
    let mode = mode.unwrap_or_else(|| "auto".into());
    if !matches!(mode.as_str(), "text" | "native" | "auto") {
        return Err(AppError::new(
            ErrorCode::InvalidAnswer,
            format!("the check's mode is `{mode}`: it must be text, native or auto"),
        ));
    }
    let target = {
        let ctx = ctx.clone();
        let name = model.clone();
        tokio::task::spawn_blocking(move || installed_target(&ctx, &name))
            .await
            .map_err(|e| AppError::new(ErrorCode::Io, format!("the check stopped: {e}")))??
    };
    let options = check::resolve_options(&ctx, &target, Some(&mode), guided);
    let (items, item_set) = screen_items()?;
    let mut progress = ModelCheckProgress {
        model: model.clone(),
        mode: options.mode,
        guided: options.guided,
        phase: CheckPhase::Starting,
        done: 0,
        total: items.len() as u32,
        verdict: None,
        elapsed_secs: 0.0,
        eta_secs: None,
        error: None,
    };
    let cancel = CancellationToken::new();
    {
        let mut slot = running.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, other)) = slot.as_ref() {
            return Err(AppError::new(
                ErrorCode::AlreadyRunning,
                format!(
                    "the tool-use check of {} is running: wait for it to end, or cancel it",
                    other.model
                ),
            ));
        }
        *slot = Some((cancel.clone(), progress.clone()));
    }
    let report = {
        let push = |p: &ModelCheckProgress| {
            if let Some(outbox) = tauri::Manager::try_state::<Outbox>(&app) {
                outbox.push(Pushed::ModelCheck(p.clone()));
            }
            if let Some(running) = tauri::Manager::try_state::<RunningCheck>(&app) {
                running.update(p);
            }
        };
        push(&progress);
        let mut on_item = |p: &CheckProgress| {
            let now = ModelCheckProgress {
                phase: CheckPhase::Asking,
                done: p.done,
                total: p.total,
                verdict: Some(p.item.verdict),
                elapsed_secs: p.elapsed_secs,
                eta_secs: Some(p.eta_secs),
                ..progress.clone()
            };
            push(&now);
        };
        let result = check::run_check(
            &ctx,
            &target,
            &items,
            &item_set,
            options,
            &mut on_item,
            &cancel,
        )
        .await;
        *running.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let kept = result.and_then(|report| {
            let id = check::store_report(&ctx, &report)?;
            Ok((report, id))
        });
        match &kept {
            Ok((report, id)) => {
                progress.phase = if id.is_some() {
                    CheckPhase::Done
                } else {
                    CheckPhase::Cancelled
                };
                progress.done = report.items.len() as u32;
                progress.elapsed_secs = report.seconds;
                progress.eta_secs = Some(0.0);
            }
            Err(e) => {
                progress.phase = CheckPhase::Failed;
                progress.error = Some(e.clone());
            }
        }
        if let Some(outbox) = tauri::Manager::try_state::<Outbox>(&app) {
            outbox.push(Pushed::ModelCheck(progress.clone()));
        }
        kept.map_err(|e| AppError::new(ErrorCode::InvalidConfig, e))?
    };
    let (report, id) = report;
    let Some(id) = id else {
        return Ok(None);
    };
    Ok(check::latest_of(&ctx, &report.model.key)
        .into_iter()
        .find(|c| c.id == id))
}

/// Stop the running check of `model` after the request in flight (nothing is kept).
#[tauri::command]
#[specta::specta]
pub fn models_check_cancel(
    running: State<'_, RunningCheck>,
    model: String,
) -> Result<(), AppError> {
    if let Some((cancel, progress)) = running.0.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        if progress.model == model {
            cancel.cancel();
        }
    }
    Ok(())
}

/// The items a check from the Models screen asks, and the name its result is kept under: the
/// built-in set; in the end-to-end tests' build, the reduced set `seams::check_items` names
/// (kept under its file's name and digest, as `models check --items` keeps one, so
/// `tool_calls: auto` goes by it only while the model has no check with the built-in items).
fn screen_items() -> Result<(Vec<CheckItem>, String), AppError> {
    let Some(path) = crate::seams::check_items() else {
        return Ok((check::builtin(), BUILTIN_SET.to_string()));
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        AppError::new(
            ErrorCode::Io,
            format!("cannot read the check items {}: {e}", path.display()),
        )
    })?;
    let items = check::parse_items(&text, &path.display().to_string())
        .map_err(|e| AppError::new(ErrorCode::InvalidConfig, e))?;
    Ok((items, check::item_set_name(&path, &text)))
}

/// The check's model for installed model `name`: asked through the app's runtime as an
/// `api: local` profile of that name would be, kept by the file's sha256 (a profile of
/// models.yaml with the same name does not stand in for it).
fn installed_target(ctx: &AppContext, name: &str) -> Result<CheckTarget, AppError> {
    let installed = engine::api::models::library(ctx).get(name)?;
    let profile = ModelProfile::new(installed.name.clone(), Api::Local, "", installed.name);
    let resolved = ctx
        .client_profile(&profile)
        .map_err(|e| AppError::new(ErrorCode::InvalidConfig, e))?;
    let identity = check::file_identity(ctx, Path::new(&resolved.model))
        .map_err(|e| AppError::new(ErrorCode::Io, e))?;
    Ok(CheckTarget {
        profile: resolved,
        identity,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::models::ToolCallMode;

    fn result(id: i64, mode: ToolCallMode, guided: bool, as_asked: u32, set: &str) -> CheckResult {
        CheckResult {
            id,
            mode,
            guided,
            item_set: set.into(),
            totals: check::Tally {
                items: 10,
                as_asked,
                ..Default::default()
            },
            by_kind: Vec::new(),
            seconds: 20.0,
            finished_at: String::new(),
        }
    }

    #[test]
    fn the_best_check_is_the_one_best_of_picks_among_the_built_in_items() {
        let checks = [
            result(1, ToolCallMode::Text, true, 9, "small.jsonl (abc)"),
            result(2, ToolCallMode::Native, true, 7, BUILTIN_SET),
            result(3, ToolCallMode::Text, false, 4, BUILTIN_SET),
        ];
        assert_eq!(best_check(&checks).map(|c| c.id), Some(2));
        assert_eq!(best_check(&[]).map(|c| c.id), None);
    }
}
