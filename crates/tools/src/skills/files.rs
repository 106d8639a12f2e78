//! A skill's files, confined to its folder: a path from the model is relative, has no `..`,
//! and does not lead out of the folder through a symlink.
//!
//! The listing is a bounded walk ([`super::walk`]): each real folder once (a link loop ends),
//! regular files only, with what was left out said ([`Listing::notes`]). A file is read only
//! when it is a regular file ([`read_regular`]): a named pipe, a socket or a device is refused
//! without being opened (opening a named pipe waits for a writer for ever), the file is opened
//! without waiting and checked again once open (a pipe swapped in after the check is refused
//! too), its size is checked before anything is read, and the read stops past the most allowed
//! (a file that grows meanwhile is refused as well).

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::walk::{self, Left, Links, WalkOptions, MAX_DEPTH, MAX_ENTRIES};

/// The most files a skill's listing names.
pub const MAX_LISTED_FILES: usize = 200;

/// `path` (inside `folder`) resolved, or why it is refused: it does not exist, or it leads
/// outside `folder` (a symlink out).
pub fn confine(folder: &Path, path: &Path) -> Result<PathBuf, String> {
    let root = folder
        .canonicalize()
        .map_err(|e| format!("cannot open the skill's folder {}: {e}", folder.display()))?;
    let real = path.canonicalize().map_err(|e| {
        format!(
            "{} cannot be opened: {e}",
            path.strip_prefix(folder).unwrap_or(path).display()
        )
    })?;
    if !real.starts_with(&root) {
        return Err(format!(
            "{} leads outside the skill's folder (a link to {}); skills may only use their own \
             files",
            path.strip_prefix(folder).unwrap_or(path).display(),
            real.display()
        ));
    }
    Ok(real)
}

/// The file `relative` (as the model wrote it, `/` or `\` separated) of the skill in `folder`.
pub fn resolve(folder: &Path, relative: &str) -> Result<PathBuf, String> {
    let cleaned = relative.trim().replace('\\', "/");
    let given = Path::new(&cleaned);
    if cleaned.is_empty() {
        return Err("give the file's path inside the skill, e.g. references/guide.md".into());
    }
    for part in given.components() {
        match part {
            Component::Normal(_) | Component::CurDir => {}
            _ => {
                return Err(format!(
                    "`{relative}` is not a path inside the skill: use a relative path without \
                     `..`, e.g. references/guide.md"
                ))
            }
        }
    }
    let path = folder.join(given);
    let real = confine(folder, &path)?;
    if real.is_dir() {
        return Err(format!(
            "`{relative}` is a folder; its files: {}",
            list(folder)
                .into_iter()
                .filter(|f| f.starts_with(cleaned.trim_end_matches('/')))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(real)
}

/// A skill's files as the model and `skills show` see them, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Paths inside the skill (not `SKILL.md`), `/`-separated, sorted; at most
    /// [`MAX_LISTED_FILES`].
    pub files: Vec<String>,
    /// How many files past [`MAX_LISTED_FILES`] are not named.
    pub unlisted: usize,
    /// What the walk left out (links out, named pipes, …) and where a cap stopped it.
    pub left_out: Vec<walk::Note>,
}

impl Listing {
    /// One line for each thing left out, naming it by its path inside the skill (and one for
    /// the files past [`MAX_LISTED_FILES`]).
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self.left_out.iter().map(listing_note).collect();
        if self.unlisted > 0 {
            notes.push(format!(
                "{} more files are not listed: a listing names at most {MAX_LISTED_FILES}",
                self.unlisted
            ));
        }
        notes
    }
}

/// What a listing says about an entry it left out.
pub fn listing_note(note: &walk::Note) -> String {
    let (shown, what) = (note.shown(), note.what());
    match &note.left {
        Left::LinkOut => format!(
            "{shown} {what}: not listed, and it cannot be read (a skill uses only its own files)"
        ),
        Left::NotAFile(_) => format!(
            "{shown} {what}: not listed, and never opened (a skill holds regular files only; \
             remove it)"
        ),
        Left::TooDeep => format!(
            "{shown} {what}: its files are not listed (keep a skill's files at most {MAX_DEPTH} \
             folders deep)"
        ),
        Left::TooMany => format!(
            "the listing stopped in {shown}: the skill's folder has more than {MAX_ENTRIES} \
             entries"
        ),
        Left::Link | Left::BrokenLink | Left::Unreadable(_) => {
            format!("{shown} {what}: not listed")
        }
    }
}

/// The skill's files in `folder` (see [`Listing`]): hidden files and folders are left out,
/// links are followed only inside the folder, each real folder is walked once.
pub fn listing(folder: &Path) -> Listing {
    let walked = walk::walk(
        folder,
        WalkOptions {
            links: Links::FollowInside,
            hidden: false,
        },
    );
    let mut files: Vec<String> = walked
        .files
        .iter()
        .map(|f| slashed(&f.relative))
        .filter(|rel| rel != "SKILL.md" && rel != "skill.md")
        .collect();
    files.sort();
    files.dedup();
    let unlisted = files.len().saturating_sub(MAX_LISTED_FILES);
    files.truncate(MAX_LISTED_FILES);
    Listing {
        files,
        unlisted,
        left_out: walked.notes,
    }
}

/// The skill's files (not `SKILL.md`), as `/`-separated paths relative to `folder`, sorted; at
/// most [`MAX_LISTED_FILES`] (see [`listing`], which also says what was left out).
pub fn list(folder: &Path) -> Vec<String> {
    listing(folder).files
}

fn slashed(relative: &Path) -> String {
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadRefusal {
    /// It is not a regular file: what it is (`a named pipe`, `a socket`, `a device`, `a
    /// folder`). It was not opened.
    NotAFile(&'static str),
    /// It is larger than the most read: its size in bytes (or the bytes it had when the read
    /// stopped, if it grew).
    TooLarge(u64),
    /// Opening or reading it failed.
    Io(std::io::Error),
}

impl ReadRefusal {
    /// Why the file `shown` was not read, for a person or the model to act on; `max` is the
    /// most that is read.
    pub fn describe(&self, shown: &str, max: u64) -> String {
        match self {
            ReadRefusal::NotAFile(kind) => format!(
                "{shown} is {kind}, not a regular file: it is not read (a skill's files are \
                 regular files)"
            ),
            ReadRefusal::TooLarge(size) => format!(
                "{shown} is {}; the most read is {}",
                in_units(*size),
                in_units(max)
            ),
            ReadRefusal::Io(e) => format!("cannot read {shown}: {e}"),
        }
    }
}

/// `bytes` in MiB from 1 MiB up, else in KiB.
fn in_units(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// Open `path` for reading, if it is a regular file, with its size as the opened file has it.
/// Anything else is refused without being opened; the file is opened without waiting and
/// checked again once open.
pub fn open_regular(path: &Path) -> Result<(std::fs::File, u64), ReadRefusal> {
    let before = std::fs::metadata(path).map_err(ReadRefusal::Io)?;
    if !before.is_file() {
        return Err(ReadRefusal::NotAFile(walk::kind_of(&before.file_type())));
    }
    let file = open_without_waiting(path).map_err(ReadRefusal::Io)?;
    let opened = file.metadata().map_err(ReadRefusal::Io)?;
    if !opened.is_file() {
        return Err(ReadRefusal::NotAFile(walk::kind_of(&opened.file_type())));
    }
    Ok((file, opened.len()))
}

/// Opening a named pipe for reading waits for a writer; `O_NONBLOCK` returns at once (and
/// changes nothing for a regular file).
#[cfg(unix)]
fn open_without_waiting(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_waiting(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// The bytes of the regular file `path`, at most `max` of them: its size is checked on the
/// opened file before anything is read, and the read stops past `max` (see the module docs).
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, ReadRefusal> {
    let (file, size) = open_regular(path)?;
    if size > max {
        return Err(ReadRefusal::TooLarge(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadRefusal::Io)?;
    if bytes.len() as u64 > max {
        return Err(ReadRefusal::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::testing::within_10s;

    #[cfg(unix)]
    #[test]
    fn a_link_loop_ends_and_each_real_folder_is_listed_once() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("s");
        std::fs::create_dir_all(skill.join("a/b")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "x").unwrap();
        std::fs::write(skill.join("a/one.md"), "1").unwrap();
        std::fs::write(skill.join("a/b/two.md"), "2").unwrap();
        // A link from deep inside back to a folder above it, and one to the skill itself.
        std::os::unix::fs::symlink(skill.join("a"), skill.join("a/b/back")).unwrap();
        std::os::unix::fs::symlink(&skill, skill.join("a/root")).unwrap();
        let listed = within_10s("listing a link loop", move || listing(&skill));
        assert_eq!(listed.files, ["a/b/two.md", "a/one.md"]);
        assert!(listed.notes().is_empty(), "{:?}", listed.notes());
    }

    #[test]
    fn a_walk_stops_at_the_depth_cap_and_says_where() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("s");
        let mut deep = skill.clone();
        for level in 0..40 {
            deep = deep.join(format!("d{level}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(skill.join("SKILL.md"), "x").unwrap();
        std::fs::write(skill.join("d0/near.md"), "near").unwrap();
        std::fs::write(deep.join("far.md"), "far").unwrap();
        let listed = listing(&skill);
        assert_eq!(listed.files, ["d0/near.md"], "nothing below the depth cap");
        let cut: Vec<String> = (0..=MAX_DEPTH).map(|l| format!("d{l}")).collect();
        assert_eq!(
            listed.notes(),
            [format!(
                "`{}` is more than {MAX_DEPTH} folders deep: its files are not listed (keep a \
                 skill's files at most {MAX_DEPTH} folders deep)",
                cut.join("/")
            )]
        );
        assert_eq!(listed.left_out[0].path, skill.join(cut.join("/")));
    }

    #[test]
    fn a_walk_stops_at_the_entry_cap() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("s");
        std::fs::create_dir_all(skill.join("many")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "x").unwrap();
        for i in 0..10_050 {
            std::fs::write(skill.join(format!("many/{i:05}.txt")), "").unwrap();
        }
        std::fs::create_dir_all(skill.join("zzz")).unwrap();
        std::fs::write(skill.join("zzz/after.md"), "after").unwrap();
        let listed = listing(&skill);
        assert_eq!(listed.files.len(), MAX_LISTED_FILES);
        assert!(
            !listed.files.contains(&"zzz/after.md".to_string()),
            "the walk stopped"
        );
        assert_eq!(
            listed.notes(),
            [
                format!(
                    "the listing stopped in `many`: the skill's folder has more than \
                     {MAX_ENTRIES} entries"
                ),
                format!(
                    "{} more files are not listed: a listing names at most {MAX_LISTED_FILES}",
                    // SKILL.md, many/ and zzz/ are looked at first.
                    MAX_ENTRIES - 3 - MAX_LISTED_FILES
                )
            ]
        );
        assert_eq!(listed.left_out[0].path, skill.join("many"));
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_not_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("s");
        std::fs::create_dir_all(skill.join("references")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "x").unwrap();
        std::fs::write(skill.join("references/a.md"), "a").unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(skill.join("references/pipe.md"))
            .status()
            .unwrap();
        assert!(made.success());
        let listed = listing(&skill);
        assert_eq!(listed.files, ["references/a.md"]);
        assert_eq!(
            listed.notes(),
            [
                "`references/pipe.md` is a named pipe, not a regular file: not listed, and never \
              opened (a skill holds regular files only; remove it)"
            ]
        );
        let refused = read_regular(&skill.join("references/pipe.md"), 1024).unwrap_err();
        assert!(matches!(refused, ReadRefusal::NotAFile("a named pipe")));
    }

    #[test]
    fn paths_stay_inside_the_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("s");
        std::fs::create_dir_all(skill.join("references/deep")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "x").unwrap();
        std::fs::write(skill.join("references/deep/a.md"), "a").unwrap();
        std::fs::write(tmp.path().join("outside.txt"), "secret").unwrap();
        assert!(resolve(&skill, "references/deep/a.md").is_ok());
        assert!(resolve(&skill, "references\\deep\\a.md").is_ok());
        assert!(resolve(&skill, "../outside.txt")
            .unwrap_err()
            .contains("`..`"));
        assert!(resolve(&skill, "/etc/passwd").unwrap_err().contains("`..`"));
        assert!(resolve(&skill, "missing.md")
            .unwrap_err()
            .contains("cannot be opened"));
        assert!(resolve(&skill, "references")
            .unwrap_err()
            .contains("references/deep/a.md"));
        assert_eq!(list(&skill), ["references/deep/a.md"]);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(tmp.path().join("outside.txt"), skill.join("link.txt"))
                .unwrap();
            std::os::unix::fs::symlink(tmp.path(), skill.join("up")).unwrap();
            assert!(resolve(&skill, "link.txt").unwrap_err().contains("outside"));
            assert!(resolve(&skill, "up/outside.txt")
                .unwrap_err()
                .contains("outside"));
            let listed = listing(&skill);
            assert_eq!(
                listed.files,
                ["references/deep/a.md"],
                "links out are not listed"
            );
            assert_eq!(
                listed.notes(),
                [
                    "`link.txt` is a link leading outside the skill's folder: not listed, and it \
                     cannot be read (a skill uses only its own files)",
                    "`up` is a link leading outside the skill's folder: not listed, and it \
                     cannot be read (a skill uses only its own files)",
                ]
            );
        }
    }
}
