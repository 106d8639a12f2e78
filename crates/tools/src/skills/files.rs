//! A skill's files, confined to its folder: a path from the model is relative, has no `..`,
//! and does not lead out of the folder through a symlink.

use std::path::{Component, Path, PathBuf};

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

/// The skill's files (not `SKILL.md`), as `/`-separated paths relative to `folder`, sorted; at
/// most [`MAX_LISTED_FILES`]. Hidden files and folders are left out; symlinks are not followed
/// out of the folder.
pub fn list(folder: &Path) -> Vec<String> {
    let Ok(root) = folder.canonicalize() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Ok(real) = entry.path().canonicalize() else {
                continue;
            };
            if !real.starts_with(&root) {
                continue;
            }
            if real.is_dir() {
                if real != root && !stack.contains(&real) {
                    stack.push(real);
                }
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(&root).map(Path::to_path_buf) else {
                continue;
            };
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            if rel == "SKILL.md" || rel == "skill.md" {
                continue;
            }
            out.push(rel);
        }
    }
    out.sort();
    out.truncate(MAX_LISTED_FILES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(
                list(&skill),
                ["references/deep/a.md"],
                "links out are not listed"
            );
        }
    }
}
