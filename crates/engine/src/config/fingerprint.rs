//! What a loaded config snapshot was read from: the content hash of every config file. A
//! reload records it, so the watcher can tell a real change from the echo of a reload that
//! already happened (an in-app save reloads at once; the watcher then sees the same files).
//!
//! The walk is bounded: links to folders are not followed (so a link loop cannot hold it), it
//! goes at most [`MAX_DEPTH`] folders deep and looks at [`MAX_ENTRIES`] entries (a warning
//! names the folder where a cap was hit), and only regular files are read, streamed into the
//! hash: a named pipe called `notes.md` in a skill's folder is never opened.

use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Path and content hash of each config file, sorted.
pub type Fingerprint = Vec<(PathBuf, u64)>;

/// The deepest the fingerprint looks below the config folder (or a user-level skill folder).
pub const MAX_DEPTH: usize = 32;
/// The most entries the fingerprint looks at; changes past them are not noticed.
pub const MAX_ENTRIES: usize = 100_000;

/// Path and content hash of every config file that matters in `dir`, and in the user-level
/// skill folders (read when Settings turn them on), sorted.
pub fn fingerprint(dir: &Path) -> Fingerprint {
    let mut files = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    stack.extend(
        super::user_skill_folders()
            .into_iter()
            .filter(|f| f.is_dir())
            .map(|f| (f, 0)),
    );
    let mut seen = 0usize;
    'walk: while let Some((folder, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                tracing::warn!(
                    folder = %folder.display(),
                    "more than {MAX_ENTRIES} entries in the config folders: changes from here on \
                     are not noticed by the watcher"
                );
                break 'walk;
            }
            let path = entry.path();
            // The entry itself: a link to a folder is not followed.
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                if depth >= MAX_DEPTH {
                    tracing::warn!(
                        folder = %path.display(),
                        "more than {MAX_DEPTH} folders deep: changes in it are not noticed by \
                         the watcher"
                    );
                    continue;
                }
                stack.push((path, depth + 1));
            } else if is_relevant(&path) {
                if let Some(hash) = content_hash(&path) {
                    files.push((path, hash));
                }
            }
        }
    }
    files.sort();
    files
}

/// The hash of the regular file `path`'s content, streamed; `None` for anything else (a named
/// pipe is never opened) or a file that cannot be read.
fn content_hash(path: &Path) -> Option<u64> {
    let (mut file, _) = crate::skills::files::open_regular(path).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => return Some(hasher.finish()),
            Ok(n) => hasher.write(&buffer[..n]),
            Err(_) => return None,
        }
    }
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
