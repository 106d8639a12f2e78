//! Zip containers (DOCX, and the other Office and book formats built on zip), opened with
//! guards against archives made to exhaust the reader.
//!
//! [`Archive::open`] checks the central directory before any entry is read: at most
//! [`Limits::max_archive_entries`] entries, and the sizes the entries declare add up to at most
//! the archive's budget, max(100 × the file's size, [`Limits::min_unpacked_budget`]). Each entry
//! is then read through `take(declared + 1)`: an entry that unpacks to more than its header
//! says (a lying header) stops at once, and everything read from the archive counts against
//! the same budget. An entry that is itself an archive is never opened. Each of these fails as
//! a `limit` error that names the entry and what was over.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{human_bytes, ErrorKind, ExtractError};
use crate::limits::Limits;

/// How many times its own size an archive may unpack to (above the budget's floor).
pub const UNPACK_RATIO: u64 = 100;

/// A zip container read within its budget (see the module docs).
pub struct Archive {
    zip: zip::ZipArchive<BufReader<File>>,
    budget_left: u64,
    budget: u64,
    what: &'static str,
}

impl Archive {
    /// Opens the zip container at `path` (a `what`, "Word document", for messages) and checks
    /// its central directory against `limits`.
    pub fn open(path: &Path, what: &'static str, limits: &Limits) -> Result<Self, ExtractError> {
        let file = File::open(path).map_err(|e| ExtractError::io("open the file", &e))?;
        let size = file
            .metadata()
            .map_err(|e| ExtractError::io("read the file", &e))?
            .len();
        let zip = zip::ZipArchive::new(BufReader::new(file)).map_err(|e| damaged(what, e))?;
        if zip.len() > limits.max_archive_entries {
            return Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "the {what} holds {} parts, over the limit of {} for one file",
                    zip.len(),
                    limits.max_archive_entries
                ),
            ));
        }
        let budget = size
            .saturating_mul(UNPACK_RATIO)
            .max(limits.min_unpacked_budget);
        let mut archive = Self {
            zip,
            budget_left: budget,
            budget,
            what,
        };
        let mut declared = 0u64;
        for i in 0..archive.zip.len() {
            let entry_size = archive
                .zip
                .by_index_raw(i)
                .map(|entry| entry.size())
                .map_err(|e| damaged(what, e))?;
            declared = declared.saturating_add(entry_size);
        }
        if declared > budget {
            return Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "the {what} would unpack to {}, over the {} allowed for a {} file (a zip \
                     bomb?); it is not read",
                    human_bytes(declared),
                    human_bytes(budget),
                    human_bytes(size)
                ),
            ));
        }
        Ok(archive)
    }

    /// Whether the archive has an entry named `name`.
    pub fn has(&self, name: &str) -> bool {
        self.zip.index_for_name(name).is_some()
    }

    /// Reads the entry `name` through `read` (`None` when there is no such entry), within the
    /// entry's declared size and the archive's budget.
    pub fn with_entry<T>(
        &mut self,
        name: &str,
        read: impl FnOnce(&mut dyn BufRead) -> Result<T, ExtractError>,
    ) -> Result<Option<T>, ExtractError> {
        let Some(index) = self.zip.index_for_name(name) else {
            return Ok(None);
        };
        let what = self.what;
        let budget = self.budget;
        let budget_left = self.budget_left;
        let entry = self.zip.by_index(index).map_err(|e| {
            ExtractError::new(
                ErrorKind::Damaged,
                format!("the {what} is damaged: its part {name} cannot be read ({e})"),
            )
        })?;
        let declared = entry.size();
        let allowed = declared.min(budget_left);
        let mut guarded = BufReader::new(Guarded {
            inner: entry.take(allowed + 1),
            read: 0,
            allowed,
            declared,
            lied: false,
        });
        let head = guarded
            .fill_buf()
            .map_err(|e| entry_error(what, name, budget, e))?;
        if head.starts_with(b"PK\x03\x04") {
            return Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "the {what}'s part {name} is itself a zip archive; nested archives are not \
                     opened"
                ),
            ));
        }
        let result = read(&mut guarded);
        let used = guarded.get_ref().read;
        self.budget_left = self.budget_left.saturating_sub(used);
        match result {
            Err(mut error) if error.kind == ErrorKind::Damaged => {
                // A reader's error may come from the guard: say what it was.
                if let Some(over) = guarded.get_ref().over() {
                    error = entry_error(what, name, budget, over);
                }
                Err(error)
            }
            other => other.map(Some),
        }
    }

    /// Reads the entry `name` whole as UTF-8 text (`None` when there is no such entry).
    pub fn read_text(&mut self, name: &str) -> Result<Option<String>, ExtractError> {
        let what = self.what;
        self.with_entry(name, |reader| {
            let mut text = String::new();
            reader.read_to_string(&mut text).map_err(|e| {
                ExtractError::new(
                    ErrorKind::Damaged,
                    format!("the {what}'s part {name} cannot be read ({e})"),
                )
            })?;
            Ok(text)
        })
    }
}

/// The error for a zip container that cannot be read.
fn damaged(what: &str, e: zip::result::ZipError) -> ExtractError {
    ExtractError::new(
        ErrorKind::Damaged,
        format!("the {what} is damaged: its zip container cannot be read ({e})"),
    )
}

/// The error for a failure while reading entry `name`: a `limit` error when the guard
/// stopped it, else `damaged`.
fn entry_error(what: &str, name: &str, budget: u64, e: std::io::Error) -> ExtractError {
    match e.get_ref().and_then(|inner| inner.downcast_ref::<Over>()) {
        Some(Over::Declared(declared)) => ExtractError::new(
            ErrorKind::Limit,
            format!(
                "the {what}'s part {name} unpacks to more than the {} its header declares (a \
                 forged zip); it is not read",
                human_bytes(*declared)
            ),
        ),
        Some(Over::Budget) => ExtractError::new(
            ErrorKind::Limit,
            format!(
                "the {what} unpacks to more than the {} allowed for it (a zip bomb?); it is \
                 not read",
                human_bytes(budget)
            ),
        ),
        None => ExtractError::new(
            ErrorKind::Damaged,
            format!("the {what} is damaged: its part {name} cannot be read ({e})"),
        ),
    }
}

/// Whether `e` is the zip reader's own finding that an entry unpacks to more than its header
/// declares (it has no error kind of its own: an `InvalidData` with this message).
fn is_larger_than_declared(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::InvalidData
        && e.to_string()
            .contains("larger than its declared uncompressed size")
}

/// Why the guard stopped an entry.
#[derive(Debug, Clone, Copy)]
enum Over {
    /// It unpacked to more than its header declared (the size is in the value).
    Declared(u64),
    /// The archive's budget ran out.
    Budget,
}

impl std::fmt::Display for Over {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Over::Declared(size) => write!(f, "more than the declared {size} bytes"),
            Over::Budget => f.write_str("over the archive's budget"),
        }
    }
}

impl std::error::Error for Over {}

/// An entry's reader that fails once more than `allowed` bytes come out of it.
struct Guarded<R> {
    inner: R,
    read: u64,
    allowed: u64,
    declared: u64,
    /// The zip reader itself found the entry larger than declared (it checks too).
    lied: bool,
}

impl<R> Guarded<R> {
    fn over(&self) -> Option<std::io::Error> {
        (self.read > self.allowed || self.lied).then(|| self.over_error())
    }

    fn over_error(&self) -> std::io::Error {
        let why = if self.read > self.declared || self.lied {
            Over::Declared(self.declared)
        } else {
            Over::Budget
        };
        std::io::Error::other(why)
    }
}

impl<R: Read> Read for Guarded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read > self.allowed {
            return Err(self.over_error());
        }
        let n = match self.inner.read(buf) {
            Ok(n) => n,
            Err(e) if is_larger_than_declared(&e) => {
                self.lied = true;
                return Err(self.over_error());
            }
            Err(e) => return Err(e),
        };
        self.read += n as u64;
        if self.read > self.allowed {
            return Err(self.over_error());
        }
        Ok(n)
    }
}
