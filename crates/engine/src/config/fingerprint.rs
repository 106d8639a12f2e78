//! What a loaded config snapshot was read from: the content hash of every config file. A
//! reload records it, so the watcher can tell a real change from the echo of a reload that
//! already happened (an in-app save reloads at once; the watcher then sees the same files).

use std::path::{Path, PathBuf};

/// Path and content hash of each config file, sorted.
pub type Fingerprint = Vec<(PathBuf, u64)>;

/// Path and content hash of every config file that matters in `dir`, and in the user-level
/// skill folders (read when Settings turn them on), sorted (config files are small).
pub fn fingerprint(dir: &Path) -> Fingerprint {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    stack.extend(
        super::user_skill_folders()
            .into_iter()
            .filter(|f| f.is_dir()),
    );
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(path);
            } else if is_relevant(&path) {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(&path).ok().hash(&mut hasher);
                files.push((path, hasher.finish()));
            }
        }
    }
    files.sort();
    files
}

/// Changes that matter: Markdown in tools/agents, the YAML files, `mcp.json` and `.env`; not our own
/// temporary files from atomic writes.
pub fn is_relevant(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.starts_with(".artifactflow-") {
        return false;
    }
    name.ends_with(".md")
        || name.ends_with(".yaml")
        || name.ends_with(".yml")
        || name == ".env"
        || name == crate::mcp::config::FILE
        || path.is_dir()
}
