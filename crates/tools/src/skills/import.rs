//! Importing a skill into a skills folder: from a folder, or from a `.zip` / `.skill`
//! archive (the skill's folder, or its files at the top). Nothing is written unless the whole
//! skill is valid, and the skills folder is left as it was when anything is refused, with what
//! to do:
//! - a folder is walked as [`super::walk`] does (at most [`walk::MAX_DEPTH`] folders deep and
//!   [`walk::MAX_ENTRIES`] entries); a link, a named pipe, a socket or a device in it is
//!   refused, never opened, and only regular files are read;
//! - an archive entry whose path leaves the folder (`../`) or is absolute (`/etc/x`, `C:\x`,
//!   `\\server\x`) is refused, not moved inside; so is an archive naming one file twice, or two
//!   names that differ only by case or Unicode form ([`collision_key`]), which macOS and
//!   Windows would write as one file, the last copy silently winning;
//! - so are a link entry, an archive past the size limits, a skill that does not load, and a
//!   name already taken.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use caseless::Caseless;
use unicode_normalization::UnicodeNormalization;

use super::walk::{self, Left, Links, WalkOptions};
use super::{files, load, Skill, SkillOrigin};

/// The most bytes a skill may unpack or copy to.
pub const MAX_SKILL_BYTES: u64 = 50 * 1024 * 1024;
/// The most files a skill may have.
pub const MAX_SKILL_FILES: usize = 2_000;

/// Import the skill at `source` (a folder, or a `.zip`/`.skill` file) into `skills_dir`.
pub fn import(source: &Path, skills_dir: &Path) -> Result<Skill, String> {
    let meta =
        std::fs::metadata(source).map_err(|e| format!("cannot open {}: {e}", source.display()))?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(format!(
            "{} is {}, not a folder or a file: import a skill's folder, or a .zip or .skill file",
            source.display(),
            walk::kind_of(&meta.file_type())
        ));
    }
    std::fs::create_dir_all(skills_dir)
        .map_err(|e| format!("cannot create {}: {e}", skills_dir.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".artifactflow-import-")
        .tempdir_in(skills_dir)
        .map_err(|e| format!("cannot prepare the import in {}: {e}", skills_dir.display()))?;
    let staged = staging.path().join("skill");
    if meta.is_dir() {
        copy_folder(source, &staged)?;
    } else {
        unpack(source, &staged)?;
    }
    // The skill's name decides its folder.
    let skill_md = load::skill_file(&staged).ok_or_else(|| {
        format!(
            "{} has no SKILL.md (at its top, or in its one folder): it is not a skill",
            source.display()
        )
    })?;
    let text = std::fs::read_to_string(&skill_md).unwrap_or_default();
    let named = load::parse_skill(&skill_md, &text).map_err(|e| {
        let mut e = e;
        e.file = source.join(skill_md.strip_prefix(&staged).unwrap_or(&skill_md));
        e.to_string()
    })?;
    let target = skills_dir.join(&named.name);
    if target.exists() {
        return Err(format!(
            "a skill `{}` is already in {}; remove or rename it first",
            named.name,
            skills_dir.display()
        ));
    }
    let renamed = staging.path().join(&named.name);
    std::fs::rename(&staged, &renamed).map_err(|e| format!("cannot stage the skill: {e}"))?;
    load::load_skill_folder(&renamed, &SkillOrigin::Config).map_err(|e| e.to_string())?;
    std::fs::rename(&renamed, &target)
        .map_err(|e| format!("cannot move the skill into {}: {e}", target.display()))?;
    load::load_skill_folder(&target, &SkillOrigin::Config).map_err(|e| e.to_string())
}

/// Copy the folder `from` to `to`: regular files and folders only, walked (bounded) and
/// checked whole before anything is copied. A link, a named pipe, a socket or a device is
/// refused (never opened), and so is a skill past the limits.
fn copy_folder(from: &Path, to: &Path) -> Result<(), String> {
    let walked = walk::walk(
        from,
        WalkOptions {
            links: Links::Refuse,
            hidden: true,
        },
    );
    if let Some(note) = walked.notes.first() {
        return Err(refusal(note));
    }
    let bytes: u64 = walked.files.iter().map(|f| f.len).sum();
    check_limits(walked.files.len(), bytes)?;
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    for folder in &walked.folders {
        let target = to.join(folder);
        std::fs::create_dir_all(&target)
            .map_err(|e| format!("cannot create {}: {e}", target.display()))?;
    }
    let mut copied = 0u64;
    for file in &walked.files {
        // Read as a regular file (a pipe swapped in meanwhile is refused, not waited on), at
        // most what the limit leaves (a file that grew meanwhile is refused).
        let room = MAX_SKILL_BYTES.saturating_sub(copied);
        let content = files::read_regular(&file.path, room).map_err(|refused| match refused {
            files::ReadRefusal::TooLarge(_) => too_large(),
            other => other.describe(&file.path.display().to_string(), room),
        })?;
        copied += content.len() as u64;
        let target = to.join(&file.relative);
        std::fs::write(&target, content)
            .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    }
    Ok(())
}

/// Why a folder is not imported, for what its walk found.
fn refusal(note: &walk::Note) -> String {
    let path = note.path.display();
    match &note.left {
        Left::Link | Left::LinkOut | Left::BrokenLink => format!(
            "{path} is a link; a skill to import holds only its own files (copy what it points \
             to into the skill)"
        ),
        Left::NotAFile(kind) => format!(
            "{path} is {kind}, not a regular file; a skill to import holds only files and \
             folders (remove it)"
        ),
        Left::TooDeep => format!(
            "{path} is more than {} folders deep; a skill to import keeps its files at most that \
             deep",
            walk::MAX_DEPTH
        ),
        Left::TooMany => format!(
            "{path}: the folder has more than {} entries; that is not a skill to import",
            walk::MAX_ENTRIES
        ),
        Left::Unreadable(e) => format!("cannot read {path}: {e}"),
    }
}

fn too_large() -> String {
    format!(
        "the skill is larger than {} MiB unpacked; that is not a skill to import",
        MAX_SKILL_BYTES / (1024 * 1024)
    )
}

fn check_limits(files: usize, bytes: u64) -> Result<(), String> {
    if files > MAX_SKILL_FILES {
        return Err(format!(
            "the skill has more than {MAX_SKILL_FILES} files; that is not a skill to import"
        ));
    }
    if bytes > MAX_SKILL_BYTES {
        return Err(too_large());
    }
    Ok(())
}

/// The name two archive entries share when macOS or Windows would write them as one file:
/// Unicode's compatibility caseless match (§3.13, D146: NFKD of the case folding of NFKD of
/// the case folding of NFD). It equates
/// - names that differ only by case, with full case folding (`Guide.md`/`guide.md`,
///   `straße`/`STRASSE`, final and medial sigma);
/// - canonically equivalent names (a composed `é` and `e` with a combining accent);
/// - compatibility equivalents (the ligature `ﬁ` and `fi`, full-width `ａ` and `a`,
///   superscript digits, the Kelvin sign and `K`).
///
/// Look-alikes from other scripts (Cyrillic `а` for Latin `a`) are different names on every
/// system, so they cannot overwrite each other, and are not equated.
pub fn collision_key(name: &str) -> String {
    name.chars()
        .nfd()
        .default_case_fold()
        .nfkd()
        .default_case_fold()
        .nfkd()
        .collect()
}

/// Is `name` an absolute path on some system: `/x`, `\x`, `\\server\share\x`, or a drive
/// (`C:\x`, `C:/x`, `C:x`)?
fn is_absolute_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    name.starts_with(['/', '\\'])
        || (bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':')
}

/// One archive entry's name, as written and as it would be unpacked.
struct EntryName {
    /// As the archive spells it.
    written: String,
    /// Where it would be unpacked, inside the skill.
    path: PathBuf,
}

/// Check the archive's names together before anything is written: no name twice, and no two
/// names (or folders on their paths) that differ only by case or Unicode form.
fn check_names(file: &Path, names: &[EntryName]) -> Result<(), String> {
    let mut entries: HashSet<String> = HashSet::new();
    // The collision key of every path and folder named so far, with its spelling.
    let mut spelled: HashMap<String, (String, String)> = HashMap::new();
    for entry in names {
        let parts: Vec<String> = entry
            .path
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let whole = parts.join("/");
        if !entries.insert(whole.clone()) {
            return Err(format!(
                "{}: the archive holds `{whole}` twice (only one copy would be kept); the \
                 archive is refused",
                file.display()
            ));
        }
        for end in 1..=parts.len() {
            let path = parts[..end].join("/");
            let key = collision_key(&path);
            match spelled.get(&key) {
                Some((other, other_entry)) if *other != path => {
                    let folders = if end < parts.len() {
                        format!(" (in the folders `{path}` and `{other}`)")
                    } else {
                        String::new()
                    };
                    return Err(format!(
                        "{}: the entries `{other_entry}` and `{}`{folders} differ only by case \
                         or Unicode form{}: on macOS and Windows they are one file, so one would \
                         silently replace the other. The archive is refused; rename one of them",
                        file.display(),
                        entry.written,
                        code_points(other, &path)
                    ));
                }
                Some(_) => {}
                None => {
                    spelled.insert(key, (path, entry.written.clone()));
                }
            }
        }
    }
    Ok(())
}

/// The two names spelled out by code point when they are not plain ASCII (a composed `é`
/// and an `e` with a combining accent look the same on screen).
fn code_points(first: &str, second: &str) -> String {
    if first.is_ascii() && second.is_ascii() {
        return String::new();
    }
    let spelled = |name: &str| -> String {
        name.chars()
            .map(|c| {
                if c.is_ascii() {
                    c.to_string()
                } else {
                    format!("\\u{{{:x}}}", c as u32)
                }
            })
            .collect()
    };
    format!(" (`{}` and `{}`)", spelled(first), spelled(second))
}

/// A name the archive gives twice (its central directory lists it twice): found by reading
/// the entries' own headers in order.
fn name_given_twice(file: &Path) -> Option<String> {
    let (opened, _) = files::open_regular(file).ok()?;
    let mut reader = std::io::BufReader::new(opened);
    let mut seen = HashSet::new();
    for _ in 0..=MAX_SKILL_FILES {
        let entry = zip::read::read_zipfile_from_stream(&mut reader).ok()??;
        let name = entry.name().ok()?.into_owned();
        if !seen.insert(name.clone()) {
            return Some(name);
        }
    }
    None
}

/// Unpack the archive `file` into `to`: the skill's files at the top of `to` (an archive with
/// one top folder holding a SKILL.md is unpacked from inside it).
fn unpack(file: &Path, to: &Path) -> Result<(), String> {
    let (reader, _) = files::open_regular(file)
        .map_err(|refused| refused.describe(&file.display().to_string(), u64::MAX))?;
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| {
        format!(
            "{} is not a zip archive ({e}); import a skill's folder, or a .zip or .skill file",
            file.display()
        )
    })?;
    // The archive lists one name twice: the reader keeps only the last copy.
    if archive.has_duplicate_names() {
        return Err(format!(
            "{}: the archive holds `{}` twice (only one copy would be kept); the archive is \
             refused",
            file.display(),
            name_given_twice(file).unwrap_or_else(|| "an entry".into())
        ));
    }
    // Check every entry before writing anything.
    let mut names: Vec<EntryName> = Vec::with_capacity(archive.len());
    let mut bytes = 0u64;
    for i in 0..archive.len() {
        let entry = archive
            .by_index(i)
            .map_err(|e| format!("{}: entry {i} cannot be read: {e}", file.display()))?;
        let written = entry_name(&entry);
        if is_absolute_name(&written) {
            return Err(format!(
                "{}: the entry `{written}` is an absolute path; a skill's archive holds paths \
                 inside the skill only, so the archive is refused",
                file.display()
            ));
        }
        let Some(path) = entry.enclosed_name() else {
            return Err(format!(
                "{}: the entry `{written}` would be written outside the skill's folder; the \
                 archive is refused",
                file.display()
            ));
        };
        if entry.is_symlink() {
            return Err(format!(
                "{}: the entry `{written}` is a link; a skill to import holds only its own files",
                file.display()
            ));
        }
        bytes += entry.size();
        check_limits(i + 1, bytes)?;
        names.push(EntryName { written, path });
    }
    check_names(file, &names)?;
    let paths: Vec<PathBuf> = names.into_iter().map(|n| n.path).collect();
    let prefix = common_skill_folder(&paths);
    for (i, name) in paths.iter().enumerate() {
        let Ok(relative) = name.strip_prefix(&prefix) else {
            continue;
        };
        if relative.as_os_str().is_empty() {
            continue;
        }
        let target = to.join(relative);
        let mut entry = archive
            .by_index(i)
            .map_err(|e| format!("{}: entry {i} cannot be read: {e}", file.display()))?;
        if entry.is_dir() {
            std::fs::create_dir_all(&target)
                .map_err(|e| format!("cannot create {}: {e}", target.display()))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        // Read at most what the entry declared (a lying header cannot fill the disk).
        let mut content = Vec::new();
        (&mut entry)
            .take(MAX_SKILL_BYTES + 1)
            .read_to_end(&mut content)
            .map_err(|e| {
                format!(
                    "{}: `{}` cannot be unpacked: {e}",
                    file.display(),
                    name.display()
                )
            })?;
        check_limits(0, content.len() as u64)?;
        std::fs::write(&target, content)
            .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    }
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    Ok(())
}

fn entry_name(entry: &zip::read::ZipFile<'_, std::fs::File>) -> String {
    entry
        .name()
        .map(|n| n.into_owned())
        .unwrap_or_else(|_| "(a name that is not text)".into())
}

/// The one top folder holding a SKILL.md, when the archive has no SKILL.md at its top.
fn common_skill_folder(names: &[PathBuf]) -> PathBuf {
    let at_top = names
        .iter()
        .any(|n| n == Path::new("SKILL.md") || n == Path::new("skill.md"));
    if at_top {
        return PathBuf::new();
    }
    let tops: std::collections::BTreeSet<_> = names
        .iter()
        .filter_map(|n| n.components().next())
        .map(|c| PathBuf::from(c.as_os_str()))
        .collect();
    match tops.into_iter().collect::<Vec<_>>().as_slice() {
        [one] => one.clone(),
        _ => PathBuf::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::testing::within_10s;
    use std::io::Write;

    fn zip_of(path: &Path, entries: &[(&str, &[u8])]) {
        let mut w = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        for (name, content) in entries {
            w.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            w.write_all(content).unwrap();
        }
        w.finish().unwrap();
    }

    const SKILL: &[u8] = b"---\nname: tidy\ndescription: Tidy things.\n---\nDo it.\n";

    /// Every path under `dir` with its content (folders end with `/`), sorted.
    fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                let shown = path.strip_prefix(dir).unwrap().display().to_string();
                if path.is_dir() {
                    out.push((format!("{shown}/"), Vec::new()));
                    stack.push(path);
                } else {
                    out.push((shown, std::fs::read(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    /// A skills folder holding the skill `tidy`, and what it holds.
    fn skills_with_one(root: &Path) -> (PathBuf, Vec<(String, Vec<u8>)>) {
        let skills = root.join("skills");
        let first = root.join("first.zip");
        zip_of(&first, &[("SKILL.md", SKILL), ("references/r.md", b"ref")]);
        import(&first, &skills).unwrap();
        let before = snapshot(&skills);
        (skills, before)
    }

    /// `archive` is refused with an error naming `entry`, and `skills` is as it was.
    fn refused(archive: &Path, skills: &Path, before: &[(String, Vec<u8>)], entry: &str) {
        let err = import(archive, skills).unwrap_err();
        assert!(err.contains(entry), "the error names `{entry}`: {err}");
        assert_eq!(snapshot(skills), before, "nothing written: {err}");
    }

    const OTHER: &[u8] = b"---\nname: other\ndescription: Other.\n---\nx\n";

    #[test]
    fn an_archive_naming_one_file_twice_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (skills, before) = skills_with_one(tmp.path());
        // The zip writer refuses a name twice, so the second name is changed in the bytes
        // written (it is in the local header and in the central directory).
        let twice = tmp.path().join("twice.zip");
        zip_of(
            &twice,
            &[
                ("SKILL.md", OTHER),
                ("references/a.md", b"first copy"),
                ("references/b.md", b"second copy"),
            ],
        );
        let bytes = std::fs::read(&twice).unwrap();
        let from = b"references/b.md";
        let mut patched = bytes.clone();
        let mut at = 0;
        while let Some(i) = patched[at..].windows(from.len()).position(|w| w == from) {
            patched[at + i..at + i + from.len()].copy_from_slice(b"references/a.md");
            at += i + from.len();
        }
        assert_ne!(patched, bytes);
        std::fs::write(&twice, patched).unwrap();
        refused(&twice, &skills, &before, "references/a.md");
    }

    #[test]
    fn names_that_collide_on_other_systems_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (skills, before) = skills_with_one(tmp.path());
        for (first, second) in [
            // Case only (one file on macOS and Windows).
            ("references/Guide.md", "references/guide.md"),
            ("SKILL.md", "skill.md"),
            ("Refs/a.md", "refs/b.md"),
            // Composed and decomposed é (one file on macOS).
            ("caf\u{e9}.md", "cafe\u{301}.md"),
            // A ligature and a full-width letter, the same after compatibility normalisation.
            ("\u{fb01}le.md", "file.md"),
            ("\u{ff41}.md", "a.md"),
            // Case folding beyond ASCII: final and medial sigma, sharp s.
            ("\u{3c3}.md", "\u{3c2}.md"),
            ("stra\u{df}e.md", "STRASSE.md"),
        ] {
            let archive = tmp.path().join("twins.zip");
            if first == "SKILL.md" {
                zip_of(&archive, &[(first, OTHER), (second, OTHER)]);
            } else {
                zip_of(
                    &archive,
                    &[
                        ("SKILL.md", OTHER),
                        (first, b"one" as &[u8]),
                        (second, b"two"),
                    ],
                );
            }
            refused(&archive, &skills, &before, second);
        }
    }

    #[test]
    fn absolute_entries_are_refused_not_moved_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let (skills, before) = skills_with_one(tmp.path());
        for absolute in [
            "/etc/x",
            "C:\\x",
            "c:/x",
            "\\\\server\\share\\x",
            "//server/share/x",
        ] {
            let archive = tmp.path().join("absolute.zip");
            zip_of(&archive, &[("SKILL.md", OTHER), (absolute, b"x" as &[u8])]);
            refused(&archive, &skills, &before, absolute);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_in_a_folder_or_as_the_source_is_refused_unopened() {
        let tmp = tempfile::tempdir().unwrap();
        let (skills, before) = skills_with_one(tmp.path());
        let folder = tmp.path().join("src/piped");
        std::fs::create_dir_all(folder.join("references")).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            "---\nname: piped\ndescription: Has a pipe.\n---\n",
        )
        .unwrap();
        let mkfifo = |path: &Path| {
            let made = std::process::Command::new("mkfifo")
                .arg(path)
                .status()
                .unwrap();
            assert!(made.success(), "mkfifo {}", path.display());
        };
        mkfifo(&folder.join("references/pipe.md"));
        let err = {
            let (folder, skills) = (folder.clone(), skills.clone());
            within_10s("importing a folder with a named pipe", move || {
                import(&folder, &skills)
            })
        }
        .unwrap_err();
        assert!(err.contains("pipe.md"), "{err}");
        assert!(err.contains("named pipe"), "{err}");
        assert_eq!(snapshot(&skills), before);

        let source = tmp.path().join("skill.zip");
        mkfifo(&source);
        let err = {
            let skills = skills.clone();
            within_10s("importing a named pipe", move || import(&source, &skills))
        }
        .unwrap_err();
        assert!(err.contains("named pipe"), "{err}");
        assert_eq!(snapshot(&skills), before);
    }

    #[test]
    fn a_folder_past_the_depth_cap_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (skills, before) = skills_with_one(tmp.path());
        let folder = tmp.path().join("src/deep");
        let mut deep = folder.clone();
        for level in 0..40 {
            deep = deep.join(format!("d{level}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            "---\nname: deep\ndescription: Deep.\n---\n",
        )
        .unwrap();
        std::fs::write(deep.join("far.md"), "far").unwrap();
        let err = import(&folder, &skills).unwrap_err();
        assert!(err.contains("deep"), "{err}");
        assert!(err.contains("folders deep"), "{err}");
        assert_eq!(snapshot(&skills), before);
    }

    #[test]
    fn archives_and_folders_import_and_bad_ones_leave_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let skills = tmp.path().join("skills");
        // A folder inside the archive.
        let a = tmp.path().join("tidy.skill");
        zip_of(
            &a,
            &[("tidy/SKILL.md", SKILL), ("tidy/references/r.md", b"ref")],
        );
        let skill = import(&a, &skills).unwrap();
        assert_eq!(skill.name, "tidy");
        assert!(skills.join("tidy/references/r.md").is_file());
        // The same name again is refused.
        assert!(import(&a, &skills).unwrap_err().contains("already in"));

        // Files at the archive's top, named by the frontmatter.
        let b = tmp.path().join("other.zip");
        zip_of(
            &b,
            &[(
                "SKILL.md",
                b"---\nname: other\ndescription: Other.\n---\n" as &[u8],
            )],
        );
        assert_eq!(import(&b, &skills).unwrap().name, "other");

        // A path out of the folder, a broken skill, not an archive: refused, nothing written.
        let evil = tmp.path().join("evil.zip");
        zip_of(&evil, &[("SKILL.md", SKILL), ("../../escaped.txt", b"x")]);
        assert!(import(&evil, &skills)
            .unwrap_err()
            .contains("outside the skill's folder"));
        assert!(!tmp.path().join("escaped.txt").exists());
        let broken = tmp.path().join("broken.zip");
        zip_of(&broken, &[("SKILL.md", b"no frontmatter" as &[u8])]);
        assert!(import(&broken, &skills).unwrap_err().contains("---"));
        let text = tmp.path().join("notes.zip");
        std::fs::write(&text, "hello").unwrap();
        assert!(import(&text, &skills)
            .unwrap_err()
            .contains("not a zip archive"));
        let mut left: Vec<_> = std::fs::read_dir(&skills)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["other", "tidy"], "no staging folders left behind");

        // A folder.
        let folder = tmp.path().join("src/copy-me");
        std::fs::create_dir_all(folder.join("scripts")).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            "---\nname: copy-me\ndescription: Copied.\n---\n",
        )
        .unwrap();
        std::fs::write(folder.join("scripts/run.sh"), "echo hi").unwrap();
        import(&folder, &skills).unwrap();
        assert!(skills.join("copy-me/scripts/run.sh").is_file());
    }

    #[test]
    fn an_oversized_archive_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let big = tmp.path().join("big.zip");
        let mut w = zip::ZipWriter::new(std::fs::File::create(&big).unwrap());
        w.start_file("SKILL.md", zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(SKILL).unwrap();
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(true);
        w.start_file("assets/zeros.bin", options).unwrap();
        let chunk = vec![0u8; 1024 * 1024];
        for _ in 0..51 {
            w.write_all(&chunk).unwrap();
        }
        w.finish().unwrap();
        let err = import(&big, &tmp.path().join("skills")).unwrap_err();
        assert!(err.contains("larger than 50 MiB"), "{err}");
    }
}
