//! Where ArtifactFlow keeps its configuration, database and logs.
//!
//! By default the platform's folders are used (on Linux `~/.config/artifactflow` and
//! `~/.local/share/artifactflow`; on macOS `~/Library/Application Support/app.ArtifactFlow.ArtifactFlow`;
//! on Windows `%APPDATA%\ArtifactFlow\ArtifactFlow`). A home folder — given explicitly (the CLI's
//! `--home`) or through the `ARTIFACTFLOW_HOME` environment variable — puts everything under one
//! folder instead: `HOME/config`, `HOME/data/artifactflow.db`, `HOME/logs`.
//!
//! On first run the config folder is seeded from the bundled defaults (the repository's
//! `config/` folder): the installed app seeds from the copy its installer ships as resources
//! ([`seed_config_from`]), anything else from the copy embedded in the binary ([`seed_config`]).
//! Seeding never overwrites a file the user already has.

use std::io;
use std::path::{Path, PathBuf};

use include_dir::{include_dir, Dir};

/// The bundled default configuration (the repository's `config/` folder), embedded at build time.
pub static BUNDLED_CONFIG: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../config");

/// Environment variable that moves config, data and logs under one folder.
pub const HOME_ENV: &str = "ARTIFACTFLOW_HOME";

/// File name of the SQLite database inside the data folder.
pub const DATABASE_FILE: &str = "artifactflow.db";

/// Resolved runtime folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppPaths {
    /// Folder holding `tools/`, `agents/` and `models.yaml`.
    pub config_dir: PathBuf,
    /// Folder holding the database.
    pub data_dir: PathBuf,
    /// The SQLite database file.
    pub database: PathBuf,
    /// Folder holding the rotating log files.
    pub log_dir: PathBuf,
}

/// Errors while resolving or preparing the runtime folders.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathsError {
    /// The platform gave no home folder and no `ARTIFACTFLOW_HOME` was set.
    #[error("cannot find the platform's config/data folders (no home directory); set {HOME_ENV}=DIR to choose one")]
    NoPlatformDirs,
    /// A folder could not be created or a default could not be written.
    #[error("cannot prepare {path}: {source}")]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl AppPaths {
    /// Paths under one home folder: `HOME/config`, `HOME/data/artifactflow.db`, `HOME/logs`.
    pub fn under_home(home: &Path) -> Self {
        let data_dir = home.join("data");
        AppPaths {
            config_dir: home.join("config"),
            database: data_dir.join(DATABASE_FILE),
            data_dir,
            log_dir: home.join("logs"),
        }
    }

    /// Resolve the folders: an explicit home wins, then `ARTIFACTFLOW_HOME`, then the platform's.
    pub fn resolve(explicit_home: Option<&Path>) -> Result<Self, PathsError> {
        if let Some(home) = explicit_home {
            return Ok(Self::under_home(&absolute(home)));
        }
        if let Some(home) = std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
            return Ok(Self::under_home(&absolute(Path::new(&home))));
        }
        let dirs = directories::ProjectDirs::from("app", "ArtifactFlow", "ArtifactFlow")
            .ok_or(PathsError::NoPlatformDirs)?;
        let data_dir = dirs.data_dir().to_path_buf();
        Ok(AppPaths {
            config_dir: dirs.config_dir().to_path_buf(),
            database: data_dir.join(DATABASE_FILE),
            log_dir: data_dir.join("logs"),
            data_dir,
        })
    }

    /// Create the folders and seed the config folder from the bundled defaults if it is new.
    ///
    /// Returns `true` when the config folder was seeded by this call.
    pub fn prepare(&self) -> Result<bool, PathsError> {
        for dir in [&self.data_dir, &self.log_dir] {
            create_dir(dir)?;
        }
        seed_config(&self.config_dir)
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn create_dir(dir: &Path) -> Result<(), PathsError> {
    std::fs::create_dir_all(dir).map_err(|source| PathsError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Seed `config_dir` with the bundled defaults when it does not exist yet or is empty.
///
/// A config folder the user already has is left alone, even if they deleted a default file:
/// deleting `_example.md` or an agent must stick.
pub fn seed_config(config_dir: &Path) -> Result<bool, PathsError> {
    if !config_is_new(config_dir)? {
        return Ok(false);
    }
    create_dir(config_dir)?;
    write_dir(&BUNDLED_CONFIG, config_dir)?;
    tracing::info!(config_dir = %config_dir.display(), "seeded config folder from the defaults built into the binary");
    Ok(true)
}

/// Like [`seed_config`], from a folder of defaults on disk instead of the embedded copy: the
/// installed app ships `config/` as bundle resources and seeds from there, so a package can
/// update the defaults without a rebuild. The embedded copy stays the fallback when no such
/// folder exists (`cargo run`, tests, the CLI).
pub fn seed_config_from(config_dir: &Path, defaults: &Path) -> Result<bool, PathsError> {
    if !config_is_new(config_dir)? {
        return Ok(false);
    }
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| PathsError::Io { path, source }
    };
    // Read the whole tree first, so an unreadable defaults folder leaves nothing half-seeded.
    let mut files = Vec::new();
    let mut pending = vec![defaults.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io_err(&dir))? {
            let entry = entry.map_err(io_err(&dir))?;
            let path = entry.path();
            if entry.file_type().map_err(io_err(&path))?.is_dir() {
                pending.push(path);
            } else {
                let contents = std::fs::read(&path).map_err(io_err(&path))?;
                let relative = path.strip_prefix(defaults).unwrap_or(&path).to_path_buf();
                files.push((relative, contents));
            }
        }
    }
    create_dir(config_dir)?;
    for (relative, contents) in files {
        let target = config_dir.join(relative);
        if let Some(parent) = target.parent() {
            create_dir(parent)?;
        }
        if target.exists() {
            continue;
        }
        crate::config::write_atomically(&target, &contents).map_err(io_err(&target))?;
    }
    tracing::info!(config_dir = %config_dir.display(), defaults = %defaults.display(), "seeded config folder from the installed defaults");
    Ok(true)
}

/// Does `config_dir` still need seeding (missing or empty)?
fn config_is_new(config_dir: &Path) -> Result<bool, PathsError> {
    match std::fs::read_dir(config_dir) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(source) => Err(PathsError::Io {
            path: config_dir.to_path_buf(),
            source,
        }),
    }
}

fn write_dir(dir: &Dir<'_>, target_root: &Path) -> Result<(), PathsError> {
    for file in dir.files() {
        let target = target_root.join(file.path());
        if let Some(parent) = target.parent() {
            create_dir(parent)?;
        }
        if target.exists() {
            continue;
        }
        crate::config::write_atomically(&target, file.contents()).map_err(|source| {
            PathsError::Io {
                path: target.clone(),
                source,
            }
        })?;
    }
    for sub in dir.dirs() {
        create_dir(&target_root.join(sub.path()))?;
        write_dir(sub, target_root)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_puts_everything_under_one_folder() {
        let p = AppPaths::under_home(Path::new("/x/home"));
        assert_eq!(p.config_dir, Path::new("/x/home/config"));
        assert_eq!(p.database, Path::new("/x/home/data/artifactflow.db"));
        assert_eq!(p.log_dir, Path::new("/x/home/logs"));
    }

    #[test]
    fn explicit_home_wins_and_is_made_absolute() {
        let p = AppPaths::resolve(Some(Path::new("rel/home"))).unwrap();
        assert!(p.config_dir.is_absolute());
        assert!(p.config_dir.ends_with("rel/home/config"));
    }

    #[test]
    fn seeding_writes_bundled_defaults_once_and_keeps_user_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = AppPaths::under_home(tmp.path());
        assert!(paths.prepare().unwrap(), "first run seeds");
        let example = paths.config_dir.join("tools/_example.md");
        assert!(example.is_file());
        assert!(paths.config_dir.join("models.yaml").is_file());
        assert!(paths.config_dir.join("agents/lead_agent.md").is_file());
        assert!(paths.database.parent().unwrap().is_dir());
        assert!(paths.log_dir.is_dir());

        std::fs::remove_file(&example).unwrap();
        std::fs::write(paths.config_dir.join("models.yaml"), "profiles: []\n").unwrap();
        assert!(!paths.prepare().unwrap(), "second run does not seed");
        assert!(!example.exists(), "a deleted default stays deleted");
        assert_eq!(
            std::fs::read_to_string(paths.config_dir.join("models.yaml")).unwrap(),
            "profiles: []\n"
        );
    }

    #[test]
    fn seeding_from_a_defaults_folder_copies_it_once() {
        let tmp = tempfile::tempdir().unwrap();
        let defaults = tmp.path().join("defaults");
        std::fs::create_dir_all(defaults.join("agents")).unwrap();
        std::fs::write(defaults.join("models.yaml"), "profiles: []\n").unwrap();
        std::fs::write(
            defaults.join("agents/only_agent.md"),
            "---\nname: only_agent\n---\n",
        )
        .unwrap();
        let config = tmp.path().join("home/config");

        assert!(
            seed_config_from(&config, &defaults).unwrap(),
            "a new config folder is seeded"
        );
        assert_eq!(
            std::fs::read_to_string(config.join("models.yaml")).unwrap(),
            "profiles: []\n"
        );
        assert!(config.join("agents/only_agent.md").is_file());
        assert!(
            !config.join("tools/_example.md").exists(),
            "the folder's defaults, not the embedded ones"
        );

        std::fs::remove_file(config.join("models.yaml")).unwrap();
        assert!(
            !seed_config_from(&config, &defaults).unwrap(),
            "an existing folder is left alone"
        );
        assert!(
            !config.join("models.yaml").exists(),
            "a deleted default stays deleted"
        );
        // prepare() afterwards finds the folder seeded and does not add the embedded defaults.
        assert!(!AppPaths::under_home(&tmp.path().join("home"))
            .prepare()
            .unwrap());
        assert!(!config.join("tools/_example.md").exists());
    }

    #[test]
    fn a_missing_defaults_folder_is_an_error_and_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let config = tmp.path().join("config");
        assert!(seed_config_from(&config, &tmp.path().join("nope")).is_err());
        assert!(!config.exists());
    }

    #[test]
    fn the_repository_config_folder_matches_the_embedded_copy() {
        // The installers ship ../../config as resources; seeding from it gives the same files
        // as the embedded fallback.
        let tmp = tempfile::tempdir().unwrap();
        let repo_config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
        seed_config_from(&tmp.path().join("a"), &repo_config).unwrap();
        seed_config(&tmp.path().join("b")).unwrap();
        for file in [
            "models.yaml",
            "settings.yaml",
            "tools/_example.md",
            "agents/lead_agent.md",
        ] {
            assert_eq!(
                std::fs::read(tmp.path().join("a").join(file)).unwrap(),
                std::fs::read(tmp.path().join("b").join(file)).unwrap(),
                "{file}"
            );
        }
    }
}
