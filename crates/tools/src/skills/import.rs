//! Importing a skill into a skills folder: from a folder, or from a `.zip` / `.skill`
//! archive (the skill's folder, or its files at the top). Nothing is written unless the whole
//! skill is valid: an archive entry whose path leaves the folder (`../`, an absolute path), a
//! link, an archive past the size limits, a skill that does not load, or a name already taken
//! is refused with what to do, and the skills folder is left as it was.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{load, Skill, SkillOrigin};

/// The most bytes a skill may unpack or copy to.
pub const MAX_SKILL_BYTES: u64 = 50 * 1024 * 1024;
/// The most files a skill may have.
pub const MAX_SKILL_FILES: usize = 2_000;

/// Import the skill at `source` (a folder, or a `.zip`/`.skill` file) into `skills_dir`.
pub fn import(source: &Path, skills_dir: &Path) -> Result<Skill, String> {
    let meta =
        std::fs::metadata(source).map_err(|e| format!("cannot open {}: {e}", source.display()))?;
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

/// Copy `from` to `to`, files and folders only: a link is refused, and so is a skill past the
/// size limits.
fn copy_folder(from: &Path, to: &Path) -> Result<(), String> {
    let mut files = 0usize;
    let mut bytes = 0u64;
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = stack.pop() {
        std::fs::create_dir_all(&dst)
            .map_err(|e| format!("cannot create {}: {e}", dst.display()))?;
        let entries =
            std::fs::read_dir(&src).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let target = dst.join(entry.file_name());
            if kind.is_symlink() {
                return Err(format!(
                    "{} is a link; a skill to import holds only its own files (copy what it \
                     points to into the skill)",
                    path.display()
                ));
            }
            if kind.is_dir() {
                stack.push((path, target));
                continue;
            }
            files += 1;
            bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
            check_limits(files, bytes)?;
            std::fs::copy(&path, &target)
                .map_err(|e| format!("cannot copy {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn check_limits(files: usize, bytes: u64) -> Result<(), String> {
    if files > MAX_SKILL_FILES {
        return Err(format!(
            "the skill has more than {MAX_SKILL_FILES} files; that is not a skill to import"
        ));
    }
    if bytes > MAX_SKILL_BYTES {
        return Err(format!(
            "the skill is larger than {} MiB unpacked; that is not a skill to import",
            MAX_SKILL_BYTES / (1024 * 1024)
        ));
    }
    Ok(())
}

/// Unpack the archive `file` into `to`: the skill's files at the top of `to` (an archive with
/// one top folder holding a SKILL.md is unpacked from inside it).
fn unpack(file: &Path, to: &Path) -> Result<(), String> {
    let reader =
        std::fs::File::open(file).map_err(|e| format!("cannot open {}: {e}", file.display()))?;
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| {
        format!(
            "{} is not a zip archive ({e}); import a skill's folder, or a .zip or .skill file",
            file.display()
        )
    })?;
    // Check every entry before writing anything.
    let mut names: Vec<PathBuf> = Vec::with_capacity(archive.len());
    let mut bytes = 0u64;
    for i in 0..archive.len() {
        let entry = archive
            .by_index(i)
            .map_err(|e| format!("{}: entry {i} cannot be read: {e}", file.display()))?;
        let Some(path) = entry.enclosed_name() else {
            return Err(format!(
                "{}: the entry `{}` would be written outside the skill's folder; the archive \
                 is refused",
                file.display(),
                entry_name(&entry)
            ));
        };
        if entry.is_symlink() {
            return Err(format!(
                "{}: the entry `{}` is a link; a skill to import holds only its own files",
                file.display(),
                entry_name(&entry)
            ));
        }
        bytes += entry.size();
        check_limits(i + 1, bytes)?;
        names.push(path);
    }
    let prefix = common_skill_folder(&names);
    for (i, name) in names.iter().enumerate() {
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
