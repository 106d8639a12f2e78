//! [`AppContext`]: the opened engine state one process works with (paths, database, config).

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use rusqlite::Connection;

use crate::config::{self, ConfigSnapshot};
use crate::db::{self, DbError};
use crate::paths::{AppPaths, PathsError};
use crate::status::Status;

/// Errors opening the engine state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Folders could not be resolved or prepared.
    #[error(transparent)]
    Paths(#[from] PathsError),
    /// The database could not be opened or migrated.
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The engine state of one running app or CLI: resolved folders, the open database and the
/// loaded configuration.
pub struct AppContext {
    paths: AppPaths,
    db: Arc<Mutex<Connection>>,
    config: RwLock<ConfigSnapshot>,
}

impl AppContext {
    /// Resolve folders (see [`AppPaths::resolve`]), seed the config folder on first run, open and
    /// migrate the database and load the config folder.
    pub fn open(explicit_home: Option<&Path>) -> Result<Self, OpenError> {
        let paths = AppPaths::resolve(explicit_home)?;
        Self::open_at(paths)
    }

    /// Like [`AppContext::open`] with already resolved folders.
    pub fn open_at(paths: AppPaths) -> Result<Self, OpenError> {
        paths.prepare()?;
        let conn = db::open(&paths.database)?;
        let config = config::load(&paths.config_dir);
        for e in &config.errors {
            tracing::warn!(error = %e, "config file not loaded");
        }
        Ok(AppContext {
            paths,
            db: Arc::new(Mutex::new(conn)),
            config: RwLock::new(config),
        })
    }

    /// The resolved folders.
    pub fn paths(&self) -> &AppPaths {
        &self.paths
    }

    /// Run `f` with the database connection.
    pub fn with_db<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        let conn = self.db.lock().unwrap_or_else(|p| p.into_inner());
        f(&conn)
    }

    /// A shared handle to the database connection (for stores that live beside the context).
    pub fn db_handle(&self) -> Arc<Mutex<Connection>> {
        Arc::clone(&self.db)
    }

    /// Re-read the config folder.
    pub fn reload_config(&self) {
        let snap = config::load(&self.paths.config_dir);
        *self.config.write().unwrap_or_else(|p| p.into_inner()) = snap;
    }

    /// The facts for the status area.
    pub fn status(&self) -> Status {
        let config = self.config.read().unwrap_or_else(|p| p.into_inner());
        let schema_version = self.with_db(|c| db::schema_version(c).unwrap_or(0)) as u32;
        Status {
            app_version: crate::VERSION.to_string(),
            config_dir: self.paths.config_dir.clone(),
            database: self.paths.database.clone(),
            schema_version,
            log_dir: self.paths.log_dir.clone(),
            tools_loaded: config.tools.len() as u32,
            agents_loaded: config.agents.len() as u32,
            config_errors: config.errors.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_reports_what_was_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = AppContext::open(Some(tmp.path())).unwrap();
        let s = ctx.status();
        assert_eq!(s.config_dir, tmp.path().join("config"));
        assert_eq!(s.database, tmp.path().join("data/artifactflow.db"));
        assert!(s.database.is_file());
        assert_eq!(s.agents_loaded, 3);
        assert_eq!(s.tools_loaded, 0);
        assert_eq!(s.schema_version as usize, db::latest_version());

        std::fs::write(
            tmp.path().join("config/tools/echo.md"),
            "---\nname: echo\nendpoint: http://127.0.0.1:1/\n---\n",
        )
        .unwrap();
        ctx.reload_config();
        assert_eq!(ctx.status().tools_loaded, 1);
    }
}
