//! Original bytes of sources as content-addressed files: `DATA/sources/ab/abcd…` (the sha256 in
//! hex, its first two digits as a folder).
//!
//! A file is copied while it is hashed into a temporary file in the blob folder
//! ([`BlobDir::stage`]), so it is read once; the temporary file is fsynced, then renamed to its
//! final name ([`BlobDir::keep`]), so a killed process never leaves a half-written file under a
//! blob's name. A duplicate's staged copy is simply dropped (the temporary file goes with it).
//! Which blobs exist is said by the `source_blobs` rows; [`BlobDir::sweep`] removes files that no
//! row names (left by `rm` killed before it removed the file) and staged copies whose process
//! is gone (a temporary file is named after its process's owner id, `.incoming-<owner>-…`).

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Temporary files of the blob folder start with this, then their process's owner id and `-`.
const STAGING_PREFIX: &str = ".incoming-";

/// The folder of original files.
#[derive(Debug, Clone)]
pub struct BlobDir {
    root: PathBuf,
}

/// A file copied into the blob folder under a temporary name, with its hash.
#[derive(Debug)]
pub struct StagedBlob {
    /// The sha256 of the bytes, in lower-case hex.
    pub sha256: String,
    /// The number of bytes.
    pub size: u64,
    temp: tempfile::NamedTempFile,
}

impl BlobDir {
    /// The blob folder at `root` (created when first written).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        BlobDir { root: root.into() }
    }

    /// The folder's path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the blob with this hash is (or would be) kept.
    pub fn path_of(&self, sha256: &str) -> PathBuf {
        let prefix = sha256.get(..2).unwrap_or("00");
        self.root.join(prefix).join(sha256)
    }

    /// Copies `source` into the folder under a temporary name (marked with `owner`, the
    /// copying process's owner id) while hashing it; the copy is fsynced. Dropping the result
    /// removes the copy.
    pub fn stage(&self, source: &Path, owner: &str) -> io::Result<StagedBlob> {
        std::fs::create_dir_all(&self.root)?;
        let mut input = File::open(source)?;
        let mut temp = tempfile::Builder::new()
            .prefix(&format!("{STAGING_PREFIX}{owner}-"))
            .tempfile_in(&self.root)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut size = 0u64;
        loop {
            let n = input.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            temp.write_all(&buf[..n])?;
            size += n as u64;
        }
        temp.as_file().sync_all()?;
        Ok(StagedBlob {
            sha256: hex(&hasher.finalize()),
            size,
            temp,
        })
    }

    /// Gives a staged copy its final name (a no-op when a file of that hash is there already).
    pub fn keep(&self, staged: StagedBlob) -> io::Result<PathBuf> {
        let path = self.path_of(&staged.sha256);
        if path.is_file() {
            return Ok(path);
        }
        let dir = path.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir)?;
        staged.temp.persist(&path).map_err(|e| e.error)?;
        // The rename is durable once the folder is synced (where the platform allows opening
        // a folder; elsewhere the rename is already durable).
        if let Ok(folder) = File::open(dir) {
            let _ = folder.sync_all();
        }
        Ok(path)
    }

    /// Removes the blob file with this hash, if there is one.
    pub fn remove(&self, sha256: &str) -> io::Result<()> {
        match std::fs::remove_file(self.path_of(sha256)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Removes the files that are not in `known` (hashes of `source_blobs` rows) and staged
    /// copies of processes that are gone (`owner_alive` says which owner ids live); returns
    /// how many files were removed.
    pub fn sweep(
        &self,
        known: &HashSet<String>,
        owner_alive: &dyn Fn(&str) -> bool,
    ) -> io::Result<usize> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return Ok(0);
        };
        let mut removed = 0;
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if let Some(rest) = name.strip_prefix(STAGING_PREFIX) {
                let owner = rest.rsplit_once('-').map_or(rest, |(owner, _)| owner);
                if !owner_alive(owner) && std::fs::remove_file(&path).is_ok() {
                    removed += 1;
                }
                continue;
            }
            if !path.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(&path)? {
                let file = file?;
                let sha = file.file_name().to_string_lossy().into_owned();
                if !known.contains(&sha) && std::fs::remove_file(file.path()).is_ok() {
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
