//! Walking a skill's folder, bounded, for the listing `load_skill` and `skills show` give and
//! for an import from a folder:
//! - each real folder is entered once (folders are compared by their canonical path), so a
//!   link back to a folder above (a link loop) or a second link to the same folder ends there;
//! - at most [`MAX_DEPTH`] folders deep and [`MAX_ENTRIES`] entries looked at; a cap hit is a
//!   [`Note`] naming the folder where it was hit;
//! - only regular files are listed. A named pipe, a socket or a device is noted and never
//!   opened (opening a named pipe for reading waits for a writer for ever);
//! - a link is followed only when it leads inside the walked folder ([`Links::FollowInside`])
//!   or not at all ([`Links::Refuse`]); either way a link left out is noted.
//!
//! Nothing is read: the walk looks at names and metadata only. Reading a file is
//! [`super::files::read_regular`]'s job.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

/// The deepest a walk goes: a folder more than this many levels below the walked one is not
/// entered.
pub const MAX_DEPTH: usize = 16;
/// The most entries (files, folders, links, anything else) a walk looks at before it stops.
pub const MAX_ENTRIES: usize = 10_000;

/// What a walk does with a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Follow it when it leads somewhere inside the walked folder; one leading out is left
    /// out (noted).
    FollowInside,
    /// Leave every link out (noted): an import copies only the skill's own files.
    Refuse,
}

/// How to walk.
#[derive(Debug, Clone, Copy)]
pub struct WalkOptions {
    /// What to do with links.
    pub links: Links,
    /// Look at names starting with `.` too (a listing leaves them out; an import copies them).
    pub hidden: bool,
}

/// A regular file the walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    /// Its path inside the walked folder, as found (through the links followed).
    pub relative: PathBuf,
    /// Its path on disk, as found.
    pub path: PathBuf,
    /// Its length when the walk saw it.
    pub len: u64,
}

/// Why an entry was left out, or a walk stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Left {
    /// A link that leads outside the walked folder.
    LinkOut,
    /// A link, and links are refused.
    Link,
    /// A link to nothing that exists.
    BrokenLink,
    /// Not a regular file: what it is (`a named pipe`, `a socket`, `a device`).
    NotAFile(&'static str),
    /// A folder more than [`MAX_DEPTH`] levels down: not entered.
    TooDeep,
    /// The walk had looked at [`MAX_ENTRIES`] entries when it reached this folder: it stopped.
    TooMany,
    /// The system would not say what it is, or list it.
    Unreadable(String),
}

/// Something a walk left out, or where it stopped, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The entry (or folder), as found on disk.
    pub path: PathBuf,
    /// Its path inside the walked folder, `/`-separated (empty: the walked folder itself).
    pub relative: String,
    /// Why.
    pub left: Left,
}

impl Note {
    /// What it is, after its name: `is a named pipe, not a regular file`.
    pub fn what(&self) -> String {
        match &self.left {
            Left::LinkOut => "is a link leading outside the skill's folder".into(),
            Left::Link => "is a link".into(),
            Left::BrokenLink => "is a link to nothing".into(),
            Left::NotAFile(kind) => format!("is {kind}, not a regular file"),
            Left::TooDeep => format!("is more than {MAX_DEPTH} folders deep"),
            Left::TooMany => format!(
                "is where the walk stopped: the skill's folder has more than {MAX_ENTRIES} entries"
            ),
            Left::Unreadable(e) => format!("cannot be read ({e})"),
        }
    }

    /// The entry as the model or a listing names it: its path inside the skill.
    pub fn shown(&self) -> String {
        if self.relative.is_empty() {
            "the skill's folder".into()
        } else {
            format!("`{}`", self.relative)
        }
    }
}

/// What a walk found.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    /// The regular files, in the order found (each folder's entries by name).
    pub files: Vec<FoundFile>,
    /// The folders entered, as paths inside the walked folder.
    pub folders: Vec<PathBuf>,
    /// What was left out, and where a cap stopped the walk.
    pub notes: Vec<Note>,
}

/// What a non-regular file is, in words.
pub fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a named pipe";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    if file_type.is_dir() {
        return "a folder";
    }
    if file_type.is_symlink() {
        return "a link";
    }
    "a special file"
}

fn slashed(relative: &Path) -> String {
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Walk `root` as `options` say (see the module docs). A `root` that cannot be opened gives
/// one note and nothing else. Folders reached through links are walked after every real
/// folder, so a file is listed under its real path when it has one.
pub fn walk(root: &Path, options: WalkOptions) -> Walk {
    let mut walk = Walk::default();
    let real_root = match root.canonicalize() {
        Ok(r) => r,
        Err(e) => {
            walk.notes.push(Note::new(
                root,
                Path::new(""),
                Left::Unreadable(e.to_string()),
            ));
            return walk;
        }
    };
    let mut entered: HashSet<PathBuf> = HashSet::new();
    let mut seen = 0usize;
    let top = Folder {
        path: root.to_path_buf(),
        relative: PathBuf::new(),
        real: real_root.clone(),
        depth: 0,
    };
    let mut real_folders = vec![top];
    let mut linked_folders: VecDeque<Folder> = VecDeque::new();
    while let Some(folder) = real_folders.pop().or_else(|| linked_folders.pop_front()) {
        // Entered once: a link back to a folder already walked (a loop) ends here.
        if entered.contains(&folder.real) {
            continue;
        }
        if folder.depth > MAX_DEPTH {
            walk.notes
                .push(Note::new(&folder.path, &folder.relative, Left::TooDeep));
            continue;
        }
        entered.insert(folder.real.clone());
        if folder.depth > 0 {
            walk.folders.push(folder.relative.clone());
        }
        let mut entries: Vec<std::fs::DirEntry> = match std::fs::read_dir(&folder.path) {
            Ok(entries) => entries.flatten().collect(),
            Err(e) => {
                walk.notes.push(Note::new(
                    &folder.path,
                    &folder.relative,
                    Left::Unreadable(e.to_string()),
                ));
                continue;
            }
        };
        entries.sort_by_key(|e| e.file_name());
        let (mut real_below, mut linked_below) = (Vec::new(), Vec::new());
        for entry in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                walk.notes
                    .push(Note::new(&folder.path, &folder.relative, Left::TooMany));
                return walk;
            }
            let name = entry.file_name();
            if !options.hidden && name.to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            let relative = folder.relative.join(&name);
            let left = |left: Left| Note::new(&path, &relative, left);
            let Ok(file_type) = entry.file_type() else {
                walk.notes
                    .push(left(Left::Unreadable("its type is unknown".into())));
                continue;
            };
            let linked = file_type.is_symlink();
            // What the entry is: through a link only when it leads inside the root.
            let metadata = if linked {
                if options.links == Links::Refuse {
                    walk.notes.push(left(Left::Link));
                    continue;
                }
                let Ok(real) = path.canonicalize() else {
                    walk.notes.push(left(Left::BrokenLink));
                    continue;
                };
                if !real.starts_with(&real_root) {
                    walk.notes.push(left(Left::LinkOut));
                    continue;
                }
                std::fs::metadata(&real)
            } else {
                entry.metadata()
            };
            let metadata = match metadata {
                Ok(m) => m,
                Err(e) => {
                    walk.notes.push(left(Left::Unreadable(e.to_string())));
                    continue;
                }
            };
            if metadata.is_dir() {
                let real = match path.canonicalize() {
                    Ok(r) => r,
                    Err(e) => {
                        walk.notes.push(left(Left::Unreadable(e.to_string())));
                        continue;
                    }
                };
                let below = Folder {
                    path,
                    relative,
                    real,
                    depth: folder.depth + 1,
                };
                if linked {
                    linked_below.push(below);
                } else {
                    real_below.push(below);
                }
            } else if metadata.is_file() {
                walk.files.push(FoundFile {
                    relative,
                    path,
                    len: metadata.len(),
                });
            } else {
                walk.notes
                    .push(left(Left::NotAFile(kind_of(&metadata.file_type()))));
            }
        }
        // In name order (the stack pops the last first); folders reached through a link wait
        // until every real folder is walked.
        real_folders.extend(real_below.into_iter().rev());
        linked_folders.extend(linked_below);
    }
    walk
}

/// A folder to walk.
struct Folder {
    /// As found.
    path: PathBuf,
    /// Inside the root.
    relative: PathBuf,
    /// Canonical: what "entered once" compares.
    real: PathBuf,
    /// Levels below the root.
    depth: usize,
}

impl Note {
    fn new(path: &Path, relative: &Path, left: Left) -> Note {
        Note {
            path: path.to_path_buf(),
            relative: slashed(relative),
            left,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> WalkOptions {
        WalkOptions {
            links: Links::FollowInside,
            hidden: false,
        }
    }

    #[cfg(unix)]
    #[test]
    fn each_real_folder_is_entered_once() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("s");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f.md"), "f").unwrap();
        // Two links to the same folder, and one back to the top.
        std::os::unix::fs::symlink(root.join("a/b"), root.join("one")).unwrap();
        std::os::unix::fs::symlink(root.join("a/b"), root.join("two")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("a/b/top")).unwrap();
        let walked = walk(&root, options());
        assert_eq!(walked.files.len(), 1, "{walked:?}");
        assert!(walked.notes.is_empty(), "{:?}", walked.notes);
        let refused = walk(
            &root,
            WalkOptions {
                links: Links::Refuse,
                hidden: true,
            },
        );
        let links: Vec<_> = refused.notes.iter().map(|n| n.relative.as_str()).collect();
        assert_eq!(links, ["one", "two", "a/b/top"]);
        assert!(refused.notes.iter().all(|n| n.left == Left::Link));
    }
}
