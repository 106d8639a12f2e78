//! The app's editors for tool and agent files (`config/tools/*.md`, `config/agents/*.md`):
//! list, read, validate, save, enable/disable and delete.
//!
//! - Every save is validated by the same loader that reads the folder (the errors `check`
//!   prints), and written atomically, so the watcher only ever sees a whole, valid file.
//! - A save names the text the editor started from; when the file changed on disk since then,
//!   the save is refused with the disk's text ([`FileError::Conflict`]) so nothing is lost.
//! - A file is disabled by a leading `_` in its name (the loaders skip those files).
//! - Paths coming from the UI are confined to the kind's folder: a bare file name ending in
//!   `.md`, no separators, no `..`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

/// The template every new HTTP tool starts from.
pub const TOOL_TEMPLATE: &str = "_example.md";

/// Which kind of config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum FileKind {
    /// `config/tools/*.md`: declarative HTTP tools.
    Tool,
    /// `config/agents/*.md`: agents.
    Agent,
}

impl FileKind {
    /// The kind's folder inside the config folder.
    pub fn folder(self) -> &'static str {
        match self {
            FileKind::Tool => "tools",
            FileKind::Agent => "agents",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            FileKind::Tool => "tool",
            FileKind::Agent => "agent",
        }
    }
}

/// One file as an editor holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConfigFile {
    /// Full path.
    pub path: String,
    /// File name (`query_stock.md`, `_query_stock.md` when disabled).
    pub file_name: String,
    /// Loaded by the app (no leading `_`)?
    pub enabled: bool,
    /// The text on disk.
    pub text: String,
}

/// One file in a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FileEntry {
    /// Full path.
    pub path: String,
    /// File name.
    pub file_name: String,
    /// Loaded by the app (no leading `_`)?
    pub enabled: bool,
    /// The `name:` in its frontmatter, when it can be read.
    pub name: Option<String>,
    /// The `display_name:` in its frontmatter (agents), when it has one.
    pub display_name: Option<String>,
}

/// Why a file operation did not happen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The path is not a `.md` file directly inside the kind's folder.
    #[error("`{0}` is not a file in the config folder's {1}/ folder")]
    Outside(String, &'static str),
    /// The file does not exist (any more).
    #[error("{0} does not exist (was it renamed or deleted outside the app?)")]
    NotFound(String),
    /// The file changed on disk since the editor read it.
    #[error(
        "{path} was changed outside the editor since you opened it; reload it or overwrite it"
    )]
    Conflict {
        /// The file.
        path: String,
        /// What is on disk now.
        disk: String,
    },
    /// The target file name is taken.
    #[error("{0} already exists; choose another name")]
    Exists(String),
    /// The text does not load.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<ConfigError>),
    /// Reading or writing failed.
    #[error("{0}")]
    Io(String),
}

fn io_error(action: &str, path: &Path, e: std::io::Error) -> FileError {
    FileError::Io(format!("cannot {action} {}: {e}", path.display()))
}

/// The kind's folder.
pub fn folder(config_dir: &Path, kind: FileKind) -> PathBuf {
    config_dir.join(kind.folder())
}

/// Resolve a path from the UI to a file directly inside the kind's folder.
pub fn resolve(config_dir: &Path, kind: FileKind, path: &str) -> Result<PathBuf, FileError> {
    let outside = || FileError::Outside(path.to_string(), kind.folder());
    let given = Path::new(path);
    let name = given
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(outside)?;
    if !name.ends_with(".md") || name.starts_with('.') || name.len() <= 3 {
        return Err(outside());
    }
    let dir = folder(config_dir, kind);
    if let Some(parent) = given.parent().filter(|p| !p.as_os_str().is_empty()) {
        let same = match (parent.canonicalize(), dir.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => parent == dir,
        };
        if !same {
            return Err(outside());
        }
    }
    Ok(dir.join(name))
}

fn file_of(path: &Path, text: String) -> ConfigFile {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    ConfigFile {
        path: path.display().to_string(),
        enabled: !file_name.starts_with('_'),
        file_name,
        text,
    }
}

/// Every `.md` file of the kind, enabled or not (the tool template excluded), sorted by name.
pub fn list(config_dir: &Path, kind: FileKind) -> Vec<FileEntry> {
    let Ok(entries) = std::fs::read_dir(folder(config_dir, kind)) else {
        return Vec::new();
    };
    let mut files: Vec<FileEntry> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter_map(|p| {
            let file_name = p.file_name()?.to_str()?.to_string();
            if !file_name.ends_with(".md")
                || file_name.starts_with('.')
                || (kind == FileKind::Tool && file_name == TOOL_TEMPLATE)
            {
                return None;
            }
            let named = std::fs::read_to_string(&p)
                .ok()
                .and_then(|t| frontmatter_name(&t));
            let (name, display_name) = match named {
                Some(n) => (Some(n.name), n.display_name),
                None => (None, None),
            };
            Some(FileEntry {
                path: p.display().to_string(),
                enabled: !file_name.starts_with('_'),
                file_name,
                name,
                display_name,
            })
        })
        .collect();
    files.sort_by(|a, b| {
        a.file_name
            .trim_start_matches('_')
            .cmp(b.file_name.trim_start_matches('_'))
    });
    files
}

/// The `name:` (and `display_name:`, blank = none) of a frontmatter.
struct Named {
    name: String,
    display_name: Option<String>,
}

/// The names in a frontmatter, best effort.
fn frontmatter_name(text: &str) -> Option<Named> {
    #[derive(Deserialize)]
    struct Raw {
        name: String,
        #[serde(default)]
        display_name: Option<String>,
    }
    let doc = crate::frontmatter::split(text).ok()?;
    let raw = crate::yaml::from_str::<Raw>(doc.yaml).ok()?;
    Some(Named {
        name: raw.name,
        display_name: raw
            .display_name
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty()),
    })
}

/// Read one file.
pub fn read(config_dir: &Path, kind: FileKind, path: &str) -> Result<ConfigFile, FileError> {
    let path = resolve(config_dir, kind, path)?;
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(file_of(&path, text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(FileError::NotFound(path.display().to_string()))
        }
        Err(e) => Err(io_error("read", &path, e)),
    }
}

/// Validate `text` as a file of the kind with the folder's own loader; `path` locates errors.
/// Returns the name it declares.
pub fn validate(kind: FileKind, path: &Path, text: &str) -> Result<String, Vec<ConfigError>> {
    match kind {
        FileKind::Tool => crate::tools::http::parse_definition(path, text)
            .map(|d| d.spec.name)
            .map_err(|e| vec![e]),
        FileKind::Agent => crate::config::parse_agent(path, text)
            .map(|a| a.name)
            .map_err(|e| vec![e]),
    }
}

/// Where a new file named after `name` goes: letters (any script), digits, `_` and `-` kept,
/// anything else `_`; a name with nothing usable becomes `tool.md` / `agent.md`. A taken name
/// (enabled or disabled, the tool template aside) gets a number: `x-2.md`, `x-3.md`, ….
pub fn new_file_path(config_dir: &Path, kind: FileKind, name: &str) -> PathBuf {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = stem.trim_start_matches(['_', '.', '-']);
    let stem = if stem.trim_matches('_').is_empty() {
        kind.noun()
    } else {
        stem
    };
    let dir = folder(config_dir, kind);
    (1..)
        .map(|n| {
            if n == 1 {
                format!("{stem}.md")
            } else {
                format!("{stem}-{n}.md")
            }
        })
        .find(|file| !taken(&dir, kind, file))
        .map(|file| dir.join(file))
        .unwrap_or_else(|| dir.join(format!("{stem}.md")))
}

/// Is `file` (or its disabled `_file`) already in `dir`? The tool template does not count.
fn taken(dir: &Path, kind: FileKind, file: &str) -> bool {
    let disabled = format!("_{file}");
    dir.join(file).exists()
        || (dir.join(&disabled).exists() && !(kind == FileKind::Tool && disabled == TOOL_TEMPLATE))
}

/// Save `text`. With `path` it replaces that file, provided the disk still holds `base` (the
/// text the editor started from; `None` overwrites); without, it creates `<name>.md`.
/// Nothing is written unless the text validates.
pub fn save(
    config_dir: &Path,
    kind: FileKind,
    path: Option<&str>,
    text: &str,
    base: Option<&str>,
) -> Result<ConfigFile, FileError> {
    let target = match path {
        Some(p) => resolve(config_dir, kind, p)?,
        None => PathBuf::new(),
    };
    let located = if path.is_some() {
        target.clone()
    } else {
        folder(config_dir, kind).join(format!("new {}.md", kind.noun()))
    };
    let name = validate(kind, &located, text).map_err(FileError::Invalid)?;
    let target = if path.is_some() {
        if let Some(base) = base {
            match std::fs::read_to_string(&target) {
                Ok(disk) if disk != base => {
                    return Err(FileError::Conflict {
                        path: target.display().to_string(),
                        disk,
                    })
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(FileError::NotFound(target.display().to_string()))
                }
                Err(e) => return Err(io_error("read", &target, e)),
            }
        }
        target
    } else {
        new_file_path(config_dir, kind, &name)
    };
    let dir = folder(config_dir, kind);
    std::fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, e))?;
    crate::util::fs::write_atomically(&target, text.as_bytes())
        .map_err(|e| io_error("write", &target, e))?;
    Ok(file_of(&target, text.to_string()))
}

/// Enable (drop the leading `_`) or disable (add it) a file. Returns the file at its new path.
pub fn set_enabled(
    config_dir: &Path,
    kind: FileKind,
    path: &str,
    enabled: bool,
) -> Result<ConfigFile, FileError> {
    let from = resolve(config_dir, kind, path)?;
    let file = read(config_dir, kind, path)?;
    let bare = file.file_name.trim_start_matches('_');
    if kind == FileKind::Tool && file.file_name == TOOL_TEMPLATE {
        return Err(FileError::Outside(path.to_string(), kind.folder()));
    }
    let to_name = if enabled {
        bare.to_string()
    } else {
        format!("_{bare}")
    };
    if to_name == file.file_name {
        return Ok(file);
    }
    let to = from.with_file_name(&to_name);
    if to.exists() {
        return Err(FileError::Exists(to.display().to_string()));
    }
    std::fs::rename(&from, &to).map_err(|e| io_error("rename", &from, e))?;
    Ok(file_of(&to, file.text))
}

/// Delete a file.
pub fn delete(config_dir: &Path, kind: FileKind, path: &str) -> Result<(), FileError> {
    let path = resolve(config_dir, kind, path)?;
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(FileError::NotFound(path.display().to_string()))
        }
        Err(e) => Err(io_error("delete", &path, e)),
    }
}

/// The text a new HTTP tool starts from: the fields the loader needs, with placeholder values,
/// and nothing else. No comments and no Markdown body: everything the model reads (name,
/// description, parameters, usage notes) is what the user writes, never leftover example text.
/// The commented example stays in `tools/_example.md` for people who edit files by hand.
pub const NEW_TOOL: &str = "---\nname: new_tool\ndescription: \"\"\npermission: confirm\nendpoint: \"https://\"\nmethod: GET\n---\n";

/// The text a new HTTP tool starts from ([`NEW_TOOL`]).
pub fn tool_template() -> &'static str {
    NEW_TOOL
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOL: &str =
        "---\nname: echo_tool\nendpoint: \"http://127.0.0.1:9/echo\"\n---\nEchoes.\n";

    fn setup() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("tools")).unwrap();
        std::fs::create_dir_all(tmp.path().join("agents")).unwrap();
        tmp
    }

    #[test]
    fn paths_are_confined_to_the_kind_folder() {
        let tmp = setup();
        let dir = tmp.path();
        let ok = dir.join("tools/a.md");
        assert_eq!(
            resolve(dir, FileKind::Tool, &ok.display().to_string()).unwrap(),
            ok
        );
        assert_eq!(resolve(dir, FileKind::Tool, "a.md").unwrap(), ok);
        for bad in [
            dir.join("agents/a.md").display().to_string(),
            dir.join("tools/../models.yaml").display().to_string(),
            dir.join("tools/../agents/x.md").display().to_string(),
            "/etc/passwd".into(),
            "tools/a.txt".into(),
            ".md".into(),
        ] {
            assert!(
                matches!(
                    resolve(dir, FileKind::Tool, &bad),
                    Err(FileError::Outside(..))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn new_files_are_validated_named_after_the_tool_and_never_overwrite() {
        let tmp = setup();
        let dir = tmp.path();
        let saved = save(dir, FileKind::Tool, None, TOOL, None).unwrap();
        assert_eq!(saved.file_name, "echo_tool.md");
        assert!(saved.enabled);
        assert_eq!(
            std::fs::read_to_string(dir.join("tools/echo_tool.md")).unwrap(),
            TOOL
        );
        // Never over another file: the same name again gets a number.
        let second = save(dir, FileKind::Tool, None, TOOL, None).unwrap();
        assert_eq!(second.file_name, "echo_tool-2.md");
        assert_eq!(
            std::fs::read_to_string(dir.join("tools/echo_tool.md")).unwrap(),
            TOOL
        );
        std::fs::remove_file(&second.path).unwrap();
        let broken = TOOL.replace("endpoint", "endpont");
        let Err(FileError::Invalid(errors)) = save(dir, FileKind::Tool, None, &broken, None) else {
            panic!("a broken tool was saved");
        };
        assert!(errors[0].message.contains("endpont"), "{errors:?}");
        assert_eq!(std::fs::read_dir(dir.join("tools")).unwrap().count(), 1);
    }

    #[test]
    fn saving_over_an_external_edit_is_refused_with_the_disk_text() {
        let tmp = setup();
        let dir = tmp.path();
        let saved = save(dir, FileKind::Tool, None, TOOL, None).unwrap();
        let edited = TOOL.replace("Echoes.", "Echoes, edited outside.");
        std::fs::write(&saved.path, &edited).unwrap();
        let mine = TOOL.replace("Echoes.", "Echoes, edited in the app.");
        match save(dir, FileKind::Tool, Some(&saved.path), &mine, Some(TOOL)) {
            Err(FileError::Conflict { disk, .. }) => assert_eq!(disk, edited),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&saved.path).unwrap(), edited);
        // From the disk's text it saves; with no base it overwrites.
        save(dir, FileKind::Tool, Some(&saved.path), &mine, Some(&edited)).unwrap();
        assert_eq!(std::fs::read_to_string(&saved.path).unwrap(), mine);
        save(dir, FileKind::Tool, Some(&saved.path), TOOL, None).unwrap();
        assert_eq!(std::fs::read_to_string(&saved.path).unwrap(), TOOL);
    }

    #[test]
    fn disable_enable_list_and_delete() {
        let tmp = setup();
        let dir = tmp.path();
        std::fs::write(dir.join("tools").join(TOOL_TEMPLATE), TOOL).unwrap();
        let saved = save(dir, FileKind::Tool, None, TOOL, None).unwrap();
        let off = set_enabled(dir, FileKind::Tool, &saved.path, false).unwrap();
        assert_eq!(off.file_name, "_echo_tool.md");
        assert!(!off.enabled);
        assert!(!Path::new(&saved.path).exists());
        assert!(crate::tools::http::load_dir(&dir.join("tools"))
            .0
            .is_empty());
        let listed = list(dir, FileKind::Tool);
        assert_eq!(listed.len(), 1, "the template is not listed: {listed:?}");
        assert_eq!(listed[0].name.as_deref(), Some("echo_tool"));
        assert!(!listed[0].enabled);

        let on = set_enabled(dir, FileKind::Tool, &off.path, true).unwrap();
        assert_eq!(on.path, saved.path);
        assert_eq!(crate::tools::http::load_dir(&dir.join("tools")).0.len(), 1);
        assert!(set_enabled(dir, FileKind::Tool, TOOL_TEMPLATE, true).is_err());

        delete(dir, FileKind::Tool, &on.path).unwrap();
        assert!(matches!(
            delete(dir, FileKind::Tool, &on.path),
            Err(FileError::NotFound(_))
        ));
        assert!(list(dir, FileKind::Tool).is_empty());
    }

    #[test]
    fn agents_validate_with_the_agent_loader() {
        let tmp = setup();
        let dir = tmp.path();
        let agent = "---\nname: writer\ntools: {web_search: auto}\n---\nYou write.\n";
        let saved = save(dir, FileKind::Agent, None, agent, None).unwrap();
        assert_eq!(saved.file_name, "writer.md");
        let bad = agent.replace("auto", "sometimes");
        let Err(FileError::Invalid(errors)) =
            save(dir, FileKind::Agent, Some(&saved.path), &bad, Some(agent))
        else {
            panic!("saved an invalid agent");
        };
        assert_eq!(errors[0].line, Some(3), "{errors:?}");
    }

    #[test]
    fn file_names_for_any_name() {
        let tmp = setup();
        let dir = tmp.path();
        let name = |n: &str| {
            new_file_path(dir, FileKind::Agent, n)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        };
        assert_eq!(name("研究员"), "研究员.md");
        assert_eq!(name("my agent!"), "my_agent_.md");
        assert_eq!(name("..."), "agent.md");
        assert_eq!(name("_x"), "x.md");
        std::fs::write(dir.join("agents/_x.md"), "").unwrap();
        assert_eq!(name("x"), "x-2.md", "a disabled file counts as taken");
        // The tool template is not a disabled `example` tool.
        std::fs::write(dir.join("tools").join(TOOL_TEMPLATE), TOOL).unwrap();
        let example = new_file_path(dir, FileKind::Tool, "example");
        assert_eq!(example.file_name().unwrap(), "example.md");
        // A saved non-ASCII agent is listed and can be read back.
        let saved = save(
            dir,
            FileKind::Agent,
            None,
            "---\nname: 研究员\n---\nHi\n",
            None,
        )
        .unwrap();
        assert!(list(dir, FileKind::Agent)
            .iter()
            .any(|f| f.name.as_deref() == Some("研究员") && f.enabled));
        assert!(read(dir, FileKind::Agent, &saved.path).is_ok());
    }

    #[test]
    fn a_new_tool_starts_clean_with_placeholders_only() {
        let text = tool_template();
        let doc = crate::frontmatter::split(text).unwrap();
        assert!(
            doc.body.trim().is_empty(),
            "no body the model would read: {text:?}"
        );
        assert!(!text.contains('#'), "no template comments: {text:?}");
        assert!(!text.contains("stock"), "{text:?}");
        // It loads as far as its placeholders: the name is the placeholder, nothing else is said.
        let raw: serde_json::Value = crate::yaml::from_str(doc.yaml).unwrap();
        assert_eq!(raw["name"], "new_tool");
        assert_eq!(raw["description"], "");
        assert!(raw.get("parameters").is_none());
    }
}
