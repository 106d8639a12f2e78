//! [`ProcessOwner`]: which ArtifactFlow process (the desktop app or a CLI command) owns a run.
//!
//! The app and the CLI share one database. A run left `running` is either still going in some
//! process or was cut short when its process died; only the second kind may be marked
//! `interrupted`, and only the first kind must stop another process from running the same
//! conversation. Process ids alone cannot tell them apart (they are reused), so each process
//! holds an OS file lock on its own file `DATA/owners/<owner id>.lock` for its whole life, and
//! every run records its owner's id. The OS releases the lock when the process ends, however it
//! ends (even SIGKILL), so "can the owner's lock be taken?" means "is the owner gone?".

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use fs4::FileExt;

/// Folder (inside the data folder) holding one lock file per live process.
pub const OWNERS_DIR: &str = "owners";

/// This process, as the owner of the runs it starts. Dropping it releases the lock and removes
/// the file.
#[derive(Debug)]
pub struct ProcessOwner {
    id: String,
    pid: u32,
    label: String,
    path: PathBuf,
    file: File,
}

impl ProcessOwner {
    /// Take a fresh owner id and hold its lock under `data_dir/owners/`.
    pub fn acquire(data_dir: &Path) -> io::Result<ProcessOwner> {
        let dir = data_dir.join(OWNERS_DIR);
        std::fs::create_dir_all(&dir)?;
        let id = random_id()?;
        let path = dir.join(format!("{id}.lock"));
        // Locked under a temporary name, then renamed (the lock stays with the file): a
        // `.lock` file is never seen unlocked while its process lives, so a sweep by another
        // process cannot take it for a dead one's.
        let fresh = dir.join(format!("{id}.new"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&fresh)?;
        FileExt::try_lock(&file).map_err(|e| match e {
            fs4::TryLockError::Error(e) => e,
            fs4::TryLockError::WouldBlock => io::Error::other("a new owner lock is already held"),
        })?;
        std::fs::rename(&fresh, &path)?;
        sweep_stale(&dir, &id);
        Ok(ProcessOwner {
            id,
            pid: std::process::id(),
            label: process_label(),
            path,
            file,
        })
    }

    /// The owner id stored with each run this process starts.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// This process's id (shown to the user, never used to decide liveness).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// What this process is, for messages: "the desktop app", "the CLI".
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Is the process that owns `owner_id` still running? This process is; another one is
    /// while its lock file is locked. A missing file or a lock that can be taken means it is
    /// gone (a stale file is then removed).
    pub fn is_alive(&self, owner_id: &str) -> bool {
        if owner_id == self.id {
            return true;
        }
        let Some(dir) = self.path.parent() else {
            return false;
        };
        owner_alive(dir, owner_id)
    }
}

impl Drop for ProcessOwner {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.file);
        let _ = std::fs::remove_file(&self.path);
    }
}

/// See [`ProcessOwner::is_alive`]. A shared try-lock is used, so several processes checking the
/// same dead owner at once all see it as gone.
fn owner_alive(dir: &Path, owner_id: &str) -> bool {
    if owner_id.is_empty() || !owner_id.chars().all(|c| c.is_ascii_hexdigit()) {
        return false;
    }
    let path = dir.join(format!("{owner_id}.lock"));
    let file = match OpenOptions::new().read(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return false,
        // Cannot tell: never interrupt a run that may still be going.
        Err(_) => return true,
    };
    match FileExt::try_lock_shared(&file) {
        Ok(()) => {
            let _ = FileExt::unlock(&file);
            drop(file);
            let _ = std::fs::remove_file(&path);
            false
        }
        Err(fs4::TryLockError::WouldBlock) => true,
        Err(fs4::TryLockError::Error(_)) => true,
    }
}

/// Remove the lock files of processes that are gone (killed ones leave theirs behind).
fn sweep_stale(dir: &Path, own_id: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".lock")) else {
            continue;
        };
        if id != own_id {
            // Removes the file when its owner is gone.
            owner_alive(dir, id);
        }
    }
}

fn random_id() -> io::Result<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// "the desktop app", "the CLI", or the executable's name.
fn process_label() -> String {
    let name = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    // `artifactflow-desktop` is the binary's name before the names were unified.
    if name == crate::paths::APP_NAME || name.starts_with("artifactflow-desktop") {
        "the desktop app".into()
    } else if name.contains("artifactflow-cli") {
        "the CLI".into()
    } else if name.is_empty() {
        "another program".into()
    } else {
        format!("`{name}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_alive_while_held_and_gone_once_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let a = ProcessOwner::acquire(tmp.path()).unwrap();
        let b = ProcessOwner::acquire(tmp.path()).unwrap();
        assert_ne!(a.id(), b.id());
        assert!(a.is_alive(b.id()), "another holder's lock cannot be taken");
        assert!(a.is_alive(a.id()));
        let b_id = b.id().to_string();
        drop(b);
        assert!(!a.is_alive(&b_id));
        assert!(!a.is_alive("0123456789abcdef"), "unknown owner");
        assert!(!a.is_alive("../x"), "not an owner id");
    }

    #[test]
    fn lock_files_of_gone_processes_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(OWNERS_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        // Left behind by a killed process: present, but nobody holds its lock.
        std::fs::write(dir.join("00112233aabbccdd.lock"), "").unwrap();
        let live = ProcessOwner::acquire(tmp.path()).unwrap();
        let _new = ProcessOwner::acquire(tmp.path()).unwrap();
        assert!(!dir.join("00112233aabbccdd.lock").exists());
        assert!(
            dir.join(format!("{}.lock", live.id())).exists(),
            "a live one stays"
        );
    }
}
