//! The model library: the GGUF files local models run from, in the models folder
//! (`DATA/models`), with what their headers say, where they came from, and the downloads on
//! their way in.
//!
//! ```text
//! models/
//!   SmolLM2-1.7B-Instruct-Q4_K_M.gguf      an installed model (listed, run by `api: local`)
//!   .library/<file>.json                   where it came from, its sha256, when it was last used
//!   .downloads/<file>.part                 a download on its way (resumed with HTTP Range)
//!   .downloads/<file>.json                 what that download is of (repository, size, sha256)
//! ```
//!
//! A file only becomes a model of the folder after its sha256 matched and its header read,
//! by an atomic rename: a failed, paused or killed download is never listed as a model.
//!
//! - [`gguf`]: the header reader (architecture, context, quantisation, template), with located
//!   errors for truncated or foreign files.
//! - [`hub`]: the Hugging Face Hub's HTTP API (tree, resolve, search), `HF_ENDPOINT` aware,
//!   with its answers read up to a cap and its token sent only where nobody on the way reads it.
//! - [`reach`]: why a request to the Hub got no answer (refused, name not found, timeout, TLS,
//!   proxy…), said in one sentence with what to check.
//! - [`download`]: resumable, verified downloads.
//! - [`catalog`]: the short list of small models that call tools, and which fit this machine.
//! - [`names`]: the file names a model may have: ones that work on every system (no `:`, no
//!   device names such as `CON` or `NUL.gguf`, …), since a models folder may be copied or
//!   synced from one system to another. Every new file of the folder (a pull, an import) is
//!   named through it; looking up or removing a file already there only needs a name of the
//!   folder itself (no path), so a file dropped in by hand can still be removed.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::profiles::ToolFamily;

pub mod catalog;
pub mod download;
pub mod gguf;
pub mod hub;
pub mod names;
pub mod reach;

pub use catalog::{catalog, CatalogEntry, CatalogMismatch, CheckScore, Fit, FitCheck, Machine};
pub use download::{pull, ProgressSink, PullOptions, PullPhase, PullProgress, PullRequest};
pub use gguf::{GgufError, GgufInfo};
pub use hub::{Hub, HubFile, HubRepo};
pub use names::{check_portable_name, NameProblem};
pub use reach::{HubFailure, Unreachable};

const META_DIR: &str = ".library";
pub(crate) const DOWNLOADS_DIR: &str = ".downloads";

/// What the library could not do, in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    /// A file could not be read or written.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a usable GGUF model.
    #[error(transparent)]
    Gguf(#[from] GgufError),
    /// The Hub answered with an error, or not as the Hub does.
    #[error("{0}")]
    Hub(String),
    /// A Hub answer was larger than the library reads of one ([`hub::MAX_ANSWER_BYTES`]).
    #[error("{url} sent more than {} MB for {what}, the most the model library reads of one Hub answer; nothing of it was kept. Check that HF_ENDPOINT ({endpoint}) names the Hugging Face Hub or a mirror of it", cap >> 20)]
    AnswerTooLarge {
        /// The endpoint.
        endpoint: String,
        /// The address asked.
        url: String,
        /// What was asked for ("the search", "the files of owner/name").
        what: String,
        /// The cap, in bytes.
        cap: usize,
    },
    /// The Hub could not be reached: one sentence naming its address, what failed and what to
    /// check (see [`reach`]).
    #[error("{}", .0.sentence())]
    Network(Unreachable),
    /// The Hub answered with an error status; the message says what was refused and what to do.
    #[error("{message}")]
    HubStatus {
        /// The HTTP status.
        status: u16,
        /// One sentence for the user.
        message: String,
    },
    /// The request itself is wrong (a bad repository or file name, an unknown model).
    #[error("{0}")]
    Invalid(String),
    /// The download was paused (cancelled); its partial file is kept and the next pull resumes it.
    #[error("download paused at {downloaded} of {total} bytes; pull it again to resume")]
    Paused {
        /// Bytes on disk.
        downloaded: u64,
        /// The file's size.
        total: u64,
    },
    /// The download failed in a way the next pull can resume from.
    #[error("{message}; {downloaded} of {total} bytes are kept, pull it again to resume")]
    Interrupted {
        /// What happened.
        message: String,
        /// Bytes on disk.
        downloaded: u64,
        /// The file's size.
        total: u64,
    },
    /// The downloaded file is not the one the Hub lists; it was removed.
    #[error("the downloaded {file} has sha256 {got}, but the Hub lists {expected}; the file was removed (a mirror serving a different file, or corruption on the way)")]
    HashMismatch {
        /// The file.
        file: String,
        /// What the Hub lists.
        expected: String,
        /// What arrived.
        got: String,
    },
    /// Not enough free disk.
    #[error("not enough free disk for {file}: it needs {needed} more bytes and {free} are free in {dir}")]
    NoSpace {
        /// The file.
        file: String,
        /// Bytes still to download.
        needed: u64,
        /// Bytes free.
        free: u64,
        /// The folder.
        dir: PathBuf,
    },
}

impl LibraryError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> LibraryError {
        LibraryError::Io {
            what: what.into(),
            source,
        }
    }

    /// What kept the Hub's answer away, when the Hub could not be reached.
    pub fn hub_failure(&self) -> Option<HubFailure> {
        match self {
            LibraryError::Network(unreachable) => Some(unreachable.failure),
            _ => None,
        }
    }
}

/// Where an installed model came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelSource {
    /// The Hub repository (`owner/name`).
    pub repo: String,
    /// The revision downloaded (a branch or a commit).
    pub revision: String,
    /// The file's path in the repository.
    pub file: String,
}

/// What the library keeps beside a model file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Meta {
    #[serde(default)]
    source: Option<ModelSource>,
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    installed_at: Option<u64>,
    #[serde(default)]
    last_used: Option<u64>,
    /// The header as read, with the size and modification time it was read at.
    #[serde(default)]
    header: Option<(u64, u64, GgufInfo)>,
    /// The runtime's check of the file's chat template (why it refuses it, if it does), with the
    /// size and modification time it was made at.
    #[serde(default)]
    template: Option<(u64, u64, Option<String>)>,
    /// The tool-call family of its chat template and whether the template takes tools, with
    /// the size and modification time they were read at.
    #[serde(default)]
    family: Option<(u64, u64, TemplateTools)>,
    /// The id of the catalogue entry it was pulled for.
    #[serde(default)]
    catalog_entry: Option<String>,
}

/// What a model file's chat template says about tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TemplateTools {
    /// The form the model was trained to write calls in (see [`ToolFamily::from_template`]);
    /// `unknown` without a template.
    pub family: ToolFamily,
    /// Whether the template renders a request's tools itself (it uses the `tools` variable):
    /// the runtime then offers them in the model's own form.
    pub takes_tools: bool,
}

impl TemplateTools {
    /// What `template` (a GGUF's `tokenizer.chat_template`) of a model of `architecture` says.
    pub fn of(template: &str, architecture: &str) -> TemplateTools {
        TemplateTools {
            family: ToolFamily::from_template(template, architecture),
            takes_tools: artifactflow_parser::template_takes_tools(template),
        }
    }
}

/// An installed model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct InstalledModel {
    /// The name a profile's `model:` uses: the file name without `.gguf`.
    pub name: String,
    /// The file name.
    pub file: String,
    /// The whole path.
    pub path: PathBuf,
    /// Its size in bytes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub size: u64,
    /// What its header says (`None` with [`Self::error`] when it cannot be read).
    pub info: Option<GgufInfo>,
    /// Why the header could not be read: the runtime will refuse this file.
    pub error: Option<String>,
    /// Why the runtime will not render the file's chat template with tools (it went past the
    /// runtime's bounds in steps, output, memory or time): native calls then offer the tools in
    /// the system message. `None` when it is used, or the file has none.
    pub template_refused: Option<String>,
    /// What its chat template says about tools (`None` when the header cannot be read).
    pub tools: Option<TemplateTools>,
    /// Where it came from, when the library downloaded it.
    pub source: Option<ModelSource>,
    /// How it differs from the catalogue entry it was pulled for (another architecture, another
    /// size), with a sentence saying what it really is; `None` when it is that entry's file, or
    /// was not pulled for one.
    pub catalog_mismatch: Option<CatalogMismatch>,
    /// Its sha256, when verified on download or import.
    pub sha256: Option<String>,
    /// When it was installed (seconds since 1970).
    #[cfg_attr(feature = "specta", specta(type = Option<f64>))]
    pub installed_at: Option<u64>,
    /// When a run last loaded it (seconds since 1970).
    #[cfg_attr(feature = "specta", specta(type = Option<f64>))]
    pub last_used: Option<u64>,
}

/// A download that has not finished (paused, interrupted or killed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PartialDownload {
    /// The file name it will have.
    pub file: String,
    /// Where it comes from.
    pub source: ModelSource,
    /// Bytes on disk.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub downloaded: u64,
    /// The whole size.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub total: u64,
}

/// The models folder.
#[derive(Debug, Clone)]
pub struct Library {
    dir: PathBuf,
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn mtime(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `name` as a file name of the folder: `name.gguf` unless it ends with `.gguf` already.
fn with_extension(name: &str) -> String {
    if name.to_ascii_lowercase().ends_with(".gguf") {
        name.to_string()
    } else {
        format!("{name}.gguf")
    }
}

/// The file name a new model gets (`name` or `name.gguf`), when it works on every system (see
/// [`names`]); else the error, which says what is wrong, offers a name that works and ends with
/// `what_to_do` with that name (what the user can do about it).
pub(crate) fn new_file_name(
    name: &str,
    what_to_do: impl FnOnce(&str) -> String,
) -> Result<String, LibraryError> {
    let file = with_extension(name.trim());
    names::check_portable_name(&file).map_err(|problem| {
        LibraryError::Invalid(format!(
            "\"{file}\" cannot be a model's file name: {}. A models folder may be copied or \
             synced to Windows, macOS or Linux, so its names must work on every system; {}",
            problem.reason,
            what_to_do(&problem.suggestion)
        ))
    })?;
    Ok(file)
}

/// A model of the folder a user named (`name` or `name.gguf`), to look up or remove: only a file
/// of the folder itself (no folders, no leading dot). Not held to [`names`]: a file dropped into
/// the folder by hand, with any name, can still be removed.
pub(crate) fn existing_file_name(name: &str) -> Result<String, LibraryError> {
    let name = name.trim();
    // A drive (`C:x`) would take a path on Windows out of the folder.
    let separators: &[char] = if cfg!(windows) {
        &['/', '\\', '\0', ':']
    } else {
        &['/', '\\', '\0']
    };
    if name.is_empty() || name.starts_with('.') || name.contains(separators) {
        return Err(LibraryError::Invalid(format!(
            "\"{name}\" is not a model file name (no folders, no leading dot)"
        )));
    }
    Ok(with_extension(name))
}

impl Library {
    /// The library in `dir` (created when something is written to it).
    pub fn new(dir: impl Into<PathBuf>) -> Library {
        Library { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn downloads_dir(&self) -> PathBuf {
        self.dir.join(DOWNLOADS_DIR)
    }

    fn meta_path(&self, file: &str) -> PathBuf {
        self.dir.join(META_DIR).join(format!("{file}.json"))
    }

    fn read_meta(&self, file: &str) -> Meta {
        std::fs::read(self.meta_path(file))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn write_meta(&self, file: &str, meta: &Meta) -> Result<(), LibraryError> {
        let path = self.meta_path(file);
        let dir = self.dir.join(META_DIR);
        std::fs::create_dir_all(&dir)
            .map_err(|e| LibraryError::io(format!("cannot create {}", dir.display()), e))?;
        let bytes = serde_json::to_vec_pretty(meta).unwrap_or_default();
        crate::util::fs::write_atomically(&path, &bytes)
            .map_err(|e| LibraryError::io(format!("cannot write {}", path.display()), e))
    }

    /// Note a new model of the folder: where it came from, its hash, its header, and the
    /// catalogue entry it was pulled for.
    pub(crate) fn record_install(
        &self,
        file: &str,
        source: Option<ModelSource>,
        sha256: Option<String>,
        info: &GgufInfo,
        catalog_entry: Option<String>,
    ) -> Result<(), LibraryError> {
        let path = self.dir.join(file);
        let fs_meta = std::fs::metadata(&path)
            .map_err(|e| LibraryError::io(format!("cannot read {}", path.display()), e))?;
        let meta = Meta {
            source,
            sha256,
            installed_at: Some(now()),
            last_used: None,
            header: Some((fs_meta.len(), mtime(&fs_meta), info.clone())),
            template: None,
            family: None,
            catalog_entry,
        };
        self.write_meta(file, &meta)
    }

    /// Note that a run loaded `path` (a file of this folder; others are ignored).
    pub fn touch_last_used(&self, path: &Path) {
        let Some(file) = path
            .strip_prefix(&self.dir)
            .ok()
            .and_then(|p| p.to_str())
            .filter(|p| !p.contains(['/', '\\']))
        else {
            return;
        };
        let mut meta = self.read_meta(file);
        meta.last_used = Some(now());
        if let Err(e) = self.write_meta(file, &meta) {
            tracing::debug!("cannot note the model's last use: {e}");
        }
    }

    /// The installed models, by name. A file whose header cannot be read is listed with the
    /// reason, so the user sees why a run refuses it.
    pub fn list(&self) -> Result<Vec<InstalledModel>, LibraryError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(LibraryError::io(
                    format!("cannot read {}", self.dir.display()),
                    e,
                ))
            }
        };
        let mut models = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if file.starts_with('.') || !file.to_ascii_lowercase().ends_with(".gguf") {
                continue;
            }
            let Ok(fs_meta) = entry.metadata() else {
                continue;
            };
            if !fs_meta.is_file() {
                continue;
            }
            models.push(self.describe(&file, &fs_meta));
        }
        models.sort_by_key(|m| m.name.to_lowercase());
        Ok(models)
    }

    /// One installed model, by name (`name` or `name.gguf`).
    pub fn get(&self, name: &str) -> Result<InstalledModel, LibraryError> {
        let file = existing_file_name(name)?;
        let path = self.dir.join(&file);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(self.describe(&file, &m)),
            _ => Err(LibraryError::Invalid(format!(
                "no model named \"{}\" in {}",
                name.trim(),
                self.dir.display()
            ))),
        }
    }

    fn describe(&self, file: &str, fs_meta: &std::fs::Metadata) -> InstalledModel {
        let path = self.dir.join(file);
        let mut meta = self.read_meta(file);
        let (size, modified) = (fs_meta.len(), mtime(fs_meta));
        let cached = meta
            .header
            .as_ref()
            .filter(|(s, m, _)| *s == size && *m == modified)
            .map(|(_, _, info)| info.clone());
        let (info, error) = match cached {
            Some(info) => (Some(info), None),
            None => match gguf::read(&path) {
                Ok(info) => {
                    meta.header = Some((size, modified, info.clone()));
                    // A cache only: a folder that cannot be written still lists.
                    let _ = self.write_meta(file, &meta);
                    (Some(info), None)
                }
                Err(e) => (None, Some(e.to_string())),
            },
        };
        let template_refused = match &meta.template {
            Some((s, m, refused)) if *s == size && *m == modified => refused.clone(),
            _ => self.check_template(file, &path, info.as_ref(), &mut meta, (size, modified)),
        };
        let tools = match &meta.family {
            Some((s, m, tools)) if *s == size && *m == modified => Some(*tools),
            _ => info.as_ref().and_then(|info| {
                let (_, template) = gguf::read_with_template(&path).ok()?;
                let tools = TemplateTools::of(
                    template.as_deref().unwrap_or(""),
                    info.architecture.as_deref().unwrap_or(""),
                );
                meta.family = Some((size, modified, tools));
                // A cache only, as the header.
                let _ = self.write_meta(file, &meta);
                Some(tools)
            }),
        };
        let catalog_mismatch = meta
            .catalog_entry
            .as_deref()
            .and_then(catalog::find)
            .and_then(|entry| {
                let architecture = info.as_ref().and_then(|i| i.architecture.as_deref());
                catalog::mismatch(entry, size, architecture)
            });
        InstalledModel {
            name: file
                .strip_suffix(".gguf")
                .or_else(|| file.strip_suffix(".GGUF"))
                .unwrap_or(file)
                .to_string(),
            file: file.to_string(),
            path,
            size,
            info,
            error,
            template_refused,
            tools,
            source: meta.source,
            catalog_mismatch,
            sha256: meta.sha256,
            installed_at: meta.installed_at,
            last_used: meta.last_used,
        }
    }

    /// The runtime's verdict on the chat template of `path` (once per file: kept in its
    /// metadata). Unknown (not kept) when the runtime could not check it.
    fn check_template(
        &self,
        file: &str,
        path: &Path,
        info: Option<&GgufInfo>,
        meta: &mut Meta,
        (size, modified): (u64, u64),
    ) -> Option<String> {
        if !info.is_some_and(|i| i.has_chat_template) {
            return None;
        }
        let (_, text) = gguf::read_with_template(path).ok()?;
        let verdict = crate::local::check_template(&text?)?;
        let refused = verdict.err();
        meta.template = Some((size, modified, refused.clone()));
        // A cache only, as the header.
        let _ = self.write_meta(file, meta);
        refused
    }

    /// The downloads that have not finished.
    pub fn partials(&self) -> Vec<PartialDownload> {
        let Ok(entries) = std::fs::read_dir(self.downloads_dir()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(file) = name.strip_suffix(".json") else {
                continue;
            };
            let Some(state) = download::read_state(&entry.path()) else {
                continue;
            };
            let downloaded = std::fs::metadata(self.downloads_dir().join(format!("{file}.part")))
                .map(|m| m.len())
                .unwrap_or(0);
            out.push(PartialDownload {
                file: file.to_string(),
                source: state.source,
                downloaded,
                total: state.size,
            });
        }
        out.sort_by(|a, b| a.file.cmp(&b.file));
        out
    }

    /// Where the model named `name` (its file name, with or without `.gguf`) is in the folder,
    /// whether or not it is there; a name with a folder in it is refused.
    pub fn path_of(&self, name: &str) -> Result<PathBuf, LibraryError> {
        Ok(self.dir.join(existing_file_name(name)?))
    }

    /// Remove a model (its file and what the library kept of it), or a download that has not
    /// finished of that name. Returns what was removed.
    pub fn remove(&self, name: &str) -> Result<Vec<PathBuf>, LibraryError> {
        let file = existing_file_name(name)?;
        let candidates = [
            self.dir.join(&file),
            self.meta_path(&file),
            self.downloads_dir().join(format!("{file}.part")),
            self.downloads_dir().join(format!("{file}.json")),
        ];
        let mut removed = Vec::new();
        for path in candidates {
            match std::fs::remove_file(&path) {
                Ok(()) => removed.push(path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(LibraryError::io(
                        format!("cannot remove {}", path.display()),
                        e,
                    ))
                }
            }
        }
        if removed.is_empty() {
            return Err(LibraryError::Invalid(format!(
                "no model or download named \"{}\" in {}",
                name.trim(),
                self.dir.display()
            )));
        }
        Ok(removed)
    }

    /// Copy a GGUF file into the folder after checking its name (it must work on every system,
    /// see [`names`]) and reading its header (a truncated, corrupt or foreign file is refused
    /// with the reason); a refused file writes nothing. The copy goes through a temporary file
    /// and a rename; its sha256 is computed on the way.
    pub fn import(&self, source: &Path) -> Result<InstalledModel, LibraryError> {
        let file = source
            .file_name()
            .and_then(|f| f.to_str())
            .ok_or_else(|| {
                LibraryError::Invalid(format!(
                    "{} has no usable file name: rename it (letters, digits, - and _) and import \
                     it again",
                    source.display()
                ))
            })
            .and_then(|name| {
                new_file_name(name, |fixed| {
                    format!("rename the file to a name that does, such as \"{fixed}\", and import it again")
                })
            })?;
        let info = gguf::read(source)?;
        let dest = self.dir.join(&file);
        if dest.exists() {
            return Err(LibraryError::Invalid(format!(
                "a model named \"{}\" is already installed; remove it first or rename the file",
                file.trim_end_matches(".gguf")
            )));
        }
        std::fs::create_dir_all(self.downloads_dir())
            .map_err(|e| LibraryError::io(format!("cannot create {}", self.dir.display()), e))?;
        let tmp = self.downloads_dir().join(format!("{file}.import"));
        let sha256 = (|| -> std::io::Result<String> {
            let mut output = std::fs::File::create(&tmp)?;
            let sha256 = download::hash_file(source, Some(&mut output))?;
            output.sync_all()?;
            Ok(sha256)
        })()
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            LibraryError::io(
                format!(
                    "cannot copy {} into {}",
                    source.display(),
                    self.dir.display()
                ),
                e,
            )
        })?;
        std::fs::rename(&tmp, &dest).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            LibraryError::io(format!("cannot move the copy to {}", dest.display()), e)
        })?;
        self.record_install(&file, None, Some(sha256), &info, None)?;
        self.get(&file)
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
