//! Where ArtifactFlow keeps its configuration, database and logs.
//!
//! By default the platform's folders are used (on Linux `~/.config/artifactflow` and
//! `~/.local/share/artifactflow`, named like the binary and the package; on macOS
//! `~/Library/Application Support/app.artifactflow.desktop` and on Windows
//! `%APPDATA%\app.artifactflow.desktop\{config,data}`, named by the app's identifier like the
//! folders Tauri itself uses there). A home folder — given explicitly (the CLI's
//! `--home`) or through the `ARTIFACTFLOW_HOME` environment variable — puts everything under one
//! folder instead: `HOME/config`, `HOME/data/artifactflow.db`, `HOME/logs`.
//!
//! On first run the config folder is seeded from the bundled defaults (the repository's
//! `config/` folder): the installed app seeds from the copy its installer ships as resources
//! ([`seed_config_from`]), anything else from the copy embedded in the binary ([`seed_config`]).
//! Seeding never overwrites a file the user already has.
//!
//! Builds before the names were unified used `directories::ProjectDirs::from("app",
//! "ArtifactFlow", "ArtifactFlow")`, which on macOS and Windows gave other folders; the first
//! start of this build moves them ([`migrate_folder`]), so an existing user keeps everything.

use std::io;
use std::path::{Path, PathBuf};

use include_dir::{include_dir, Dir};

/// The bundled default configuration (the repository's `config/` folder), embedded at build time.
pub static BUNDLED_CONFIG: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../config");

/// Environment variable that moves config, data and logs under one folder.
pub const HOME_ENV: &str = "ARTIFACTFLOW_HOME";

/// The app's reverse-DNS identifier: `identifier` in `tauri.conf.json`, the keyring service,
/// and the name of the macOS and Windows folders (Tauri's own folders use it too).
pub const APP_IDENTIFIER: &str = "app.artifactflow.desktop";

/// The product's name as people see it: window title, menu entry, installers, macOS app.
pub const PRODUCT_NAME: &str = "ArtifactFlow";

/// The lower-case name of the binary, the Linux package and the Linux folders.
pub const APP_NAME: &str = "artifactflow";

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
    /// A folder of an earlier build could not be moved to its new place.
    #[error("cannot move your ArtifactFlow folder {from} to {to}: {source}; move it by hand (or set {HOME_ENV}=DIR to use another folder)")]
    Migrate {
        /// The old folder.
        from: PathBuf,
        /// The new folder.
        to: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
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
    /// The models folder: the GGUF files local models run from (`DATA/models`).
    pub fn models_dir(&self) -> PathBuf {
        self.data_dir.join("models")
    }

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
        let base = directories::BaseDirs::new().ok_or(PathsError::NoPlatformDirs)?;
        let (config_dir, data_dir) = platform_dirs(&base);
        // Move the folders of builds before the names were unified (a no-op on Linux, where
        // the names did not change, and once moved).
        if let Some(old) = directories::ProjectDirs::from("app", "ArtifactFlow", "ArtifactFlow") {
            migrate_folder(old.config_dir(), &config_dir)?;
            migrate_folder(old.data_dir(), &data_dir)?;
        }
        Ok(AppPaths {
            database: data_dir.join(DATABASE_FILE),
            log_dir: data_dir.join("logs"),
            config_dir,
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

/// The platform's config and data folders for the app (see the module docs).
fn platform_dirs(base: &directories::BaseDirs) -> (PathBuf, PathBuf) {
    if cfg!(target_os = "macos") {
        let root = base.data_dir().join(APP_IDENTIFIER);
        (root.clone(), root)
    } else if cfg!(windows) {
        let root = base.data_dir().join(APP_IDENTIFIER);
        (root.join("config"), root.join("data"))
    } else {
        (
            base.config_dir().join(APP_NAME),
            base.data_dir().join(APP_NAME),
        )
    }
}

/// What [`migrate_folder`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Migration {
    /// Nothing to move: no old folder, or it is the new one.
    NotNeeded,
    /// The old folder was renamed to the new one.
    Moved,
    /// The new folder already existed: the old folder's entries were moved into it one by one,
    /// except these, which the new folder already has (they stay in the old folder).
    Merged {
        /// Entries left in the old folder.
        kept: Vec<PathBuf>,
    },
}

/// Move an earlier build's folder `old` to `new` without losing anything: a rename when `new`
/// does not exist yet, otherwise entry by entry, never replacing what `new` already has (e.g.
/// a window-state file the new build wrote first). The emptied old folder and its empty
/// parents (Windows' `ArtifactFlow\ArtifactFlow`) are removed.
pub fn migrate_folder(old: &Path, new: &Path) -> Result<Migration, PathsError> {
    if old == new || !old.is_dir() {
        return Ok(Migration::NotNeeded);
    }
    let err = |source| PathsError::Migrate {
        from: old.to_path_buf(),
        to: new.to_path_buf(),
        source,
    };
    let outcome = if new.exists() {
        let mut kept = Vec::new();
        for entry in std::fs::read_dir(old).map_err(err)? {
            let entry = entry.map_err(err)?;
            let target = new.join(entry.file_name());
            if target.exists() {
                kept.push(entry.path());
            } else {
                std::fs::rename(entry.path(), &target).map_err(err)?;
            }
        }
        Migration::Merged { kept }
    } else {
        if let Some(parent) = new.parent() {
            std::fs::create_dir_all(parent).map_err(err)?;
        }
        std::fs::rename(old, new).map_err(err)?;
        Migration::Moved
    };
    // Tidy up: remove the old folder (if still there) and its parents while they are empty
    // (`remove_dir` fails on a folder that is not).
    let mut dir = if old.exists() {
        Some(old)
    } else {
        old.parent()
    };
    while let Some(d) = dir.filter(|d| std::fs::remove_dir(d).is_ok()) {
        dir = d.parent();
    }
    tracing::info!(from = %old.display(), to = %new.display(), ?outcome, "moved an earlier build's folder");
    Ok(outcome)
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
        crate::util::fs::write_atomically(&target, &contents).map_err(io_err(&target))?;
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
        crate::util::fs::write_atomically(&target, file.contents()).map_err(|source| {
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
    fn an_earlier_builds_folder_is_moved_with_everything_in_it() {
        let tmp = tempfile::tempdir().unwrap();
        // Windows' old layout: %APPDATA%\ArtifactFlow\ArtifactFlow\{config,data}.
        let old_root = tmp.path().join("ArtifactFlow/ArtifactFlow");
        let (old_config, old_data) = (old_root.join("config"), old_root.join("data"));
        std::fs::create_dir_all(old_config.join("tools")).unwrap();
        std::fs::create_dir_all(old_data.join("logs")).unwrap();
        std::fs::write(old_config.join("tools/mine.md"), "my tool").unwrap();
        std::fs::write(old_data.join(DATABASE_FILE), "db").unwrap();
        let new_root = tmp.path().join(APP_IDENTIFIER);
        let new = AppPaths {
            config_dir: new_root.join("config"),
            data_dir: new_root.join("data"),
            database: new_root.join("data").join(DATABASE_FILE),
            log_dir: new_root.join("data/logs"),
        };

        assert_eq!(
            migrate_folder(&old_config, &new.config_dir).unwrap(),
            Migration::Moved
        );
        assert_eq!(
            migrate_folder(&old_data, &new.data_dir).unwrap(),
            Migration::Moved
        );
        assert_eq!(
            std::fs::read_to_string(new.config_dir.join("tools/mine.md")).unwrap(),
            "my tool"
        );
        assert_eq!(std::fs::read_to_string(&new.database).unwrap(), "db");
        assert!(new.log_dir.is_dir());
        assert!(
            !tmp.path().join("ArtifactFlow").exists(),
            "the emptied old folders are removed"
        );
        // The moved config is the user's: starting does not seed over it.
        assert!(!new.prepare().unwrap());
        assert!(!new.config_dir.join("models.yaml").exists());
        // A second start finds nothing to move.
        assert_eq!(
            migrate_folder(&old_config, &new.config_dir).unwrap(),
            Migration::NotNeeded
        );
    }

    #[test]
    fn moving_into_an_existing_folder_keeps_both_sides() {
        let tmp = tempfile::tempdir().unwrap();
        // macOS: Tauri may have written its window state into the new folder first.
        let old = tmp.path().join("app.ArtifactFlow.ArtifactFlow");
        let new = tmp.path().join(APP_IDENTIFIER);
        std::fs::create_dir_all(old.join("agents")).unwrap();
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(old.join(DATABASE_FILE), "old db").unwrap();
        std::fs::write(old.join("agents/a.md"), "agent").unwrap();
        std::fs::write(old.join(".window-state.json"), "old").unwrap();
        std::fs::write(new.join(".window-state.json"), "new").unwrap();

        let outcome = migrate_folder(&old, &new).unwrap();
        assert_eq!(
            outcome,
            Migration::Merged {
                kept: vec![old.join(".window-state.json")]
            }
        );
        assert_eq!(
            std::fs::read_to_string(new.join(DATABASE_FILE)).unwrap(),
            "old db"
        );
        assert_eq!(
            std::fs::read_to_string(new.join("agents/a.md")).unwrap(),
            "agent"
        );
        assert_eq!(
            std::fs::read_to_string(new.join(".window-state.json")).unwrap(),
            "new",
            "what the new folder has is never replaced"
        );
        assert_eq!(
            std::fs::read_to_string(old.join(".window-state.json")).unwrap(),
            "old",
            "nor is the old copy deleted"
        );
    }

    /// One scheme everywhere (see the README's "Names and folders"): the files that name the
    /// app agree with these constants.
    #[test]
    fn every_file_uses_the_same_names() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap();
        let json = |f: &str| serde_json::from_str::<serde_json::Value>(&read(f)).unwrap();
        let conf = json("tauri.conf.json");
        assert_eq!(conf["productName"], PRODUCT_NAME);
        assert_eq!(conf["identifier"], APP_IDENTIFIER);
        assert_eq!(conf["mainBinaryName"], APP_NAME);
        assert_eq!(conf["app"]["windows"][0]["title"], PRODUCT_NAME);
        // The Linux packages are named after the product (kebab-cased), so on Linux it is the
        // lower-case name: package `artifactflow`, /usr/lib/artifactflow.
        assert_eq!(json("tauri.linux.conf.json")["productName"], APP_NAME);
        assert_eq!(crate::secrets::KEYRING_SERVICE, APP_IDENTIFIER);
        let cargo = read("Cargo.toml");
        assert!(cargo.contains(&format!("[[bin]]\nname = \"{APP_NAME}\"")));
        let desktop = read("src-tauri/linux/app.desktop");
        assert!(desktop.contains(&format!("Name={PRODUCT_NAME}\n")));
        let deb_test = read("tests/install/test_deb.sh");
        assert!(deb_test.contains(&format!("PACKAGE={APP_NAME}\n")));
        assert!(deb_test.contains(&format!("BINARY=/usr/bin/{APP_NAME}\n")));
        let readme = read("README.md");
        for command in [
            format!("sudo apt install ./{APP_NAME}_"),
            format!("sudo apt remove {APP_NAME}`"),
            format!("sudo dnf remove {APP_NAME}`"),
            format!("rm -rf ~/.config/{APP_NAME} ~/.local/share/{APP_NAME} ~/.config/{APP_IDENTIFIER} ~/.local/share/{APP_IDENTIFIER} ~/.cache/{APP_IDENTIFIER}`"),
            format!("~/Library/Application\\ Support/{APP_IDENTIFIER} ~/Library/Caches/{APP_IDENTIFIER} ~/Library/WebKit/{APP_IDENTIFIER}`"),
        ] {
            assert!(readme.contains(&command), "README lacks {command}");
        }
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
