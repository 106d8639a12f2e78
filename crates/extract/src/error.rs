//! Why a file could not be read, in words for the person who added it.
//!
//! Every failure is an [`ExtractError`]: a [`ErrorKind`] the caller can sort by (the library's
//! end-of-batch summary groups them), a message that says what is wrong with the file and, where
//! there is one, what to do, and the page where reading stopped when that is known. Messages do
//! not repeat the file's path: whoever reports them puts it in front ("report.pdf: encrypted:
//! needs a password").

use std::fmt;

use serde::{Deserialize, Serialize};

/// What kind of failure this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The file needs a password to be opened.
    Encrypted,
    /// The file has pages but no text on them: images of pages (a scan).
    Scanned,
    /// The file is corrupt or cut short.
    Damaged,
    /// Not a format the library reads.
    Unsupported,
    /// The file is over the size limit set for the library.
    TooLarge,
    /// The file is over another limit (pages, text per page, line length, total text).
    Limit,
    /// The file could not be opened or read at all (missing, no permission, an I/O error).
    Unreadable,
    /// The reader for this format could not start (the PDF engine's library is missing).
    Engine,
    /// The worker's request line was not a request.
    BadRequest,
    /// Reading the file took longer than allowed (given by the worker's supervisor).
    Timeout,
    /// The reader itself failed on this file (a panic in the worker, or given by the
    /// supervisor when the worker died).
    Crashed,
}

impl ErrorKind {
    /// The kind's name as the protocol and the summary write it (`too_large`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Encrypted => "encrypted",
            ErrorKind::Scanned => "scanned",
            ErrorKind::Damaged => "damaged",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::Limit => "limit",
            ErrorKind::Unreadable => "unreadable",
            ErrorKind::Engine => "engine",
            ErrorKind::BadRequest => "bad_request",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Crashed => "crashed",
        }
    }
}

/// A file that could not be read: its kind, a message for a person, and the page (1-based)
/// where reading stopped when that is known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// What is wrong, for the person who added the file.
    pub message: String,
    /// The 1-based page where reading stopped, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
}

impl ExtractError {
    /// An error of `kind` with `message`, at no particular page.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            page: None,
        }
    }

    /// The same error, located at `page`.
    pub fn at_page(mut self, page: u32) -> Self {
        self.page = Some(page);
        self
    }

    /// A file that cannot be opened or read: `reading` says what was being done.
    pub fn io(reading: &str, err: &std::io::Error) -> Self {
        let why = match err.kind() {
            std::io::ErrorKind::NotFound => "the file does not exist (moved or deleted?)".into(),
            std::io::ErrorKind::PermissionDenied => {
                "permission denied: this user may not read the file".into()
            }
            _ => err.to_string(),
        };
        Self::new(ErrorKind::Unreadable, format!("cannot {reading}: {why}"))
    }
}

impl fmt::Display for ExtractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExtractError {}

/// 1-based page numbers as ranges for a message: `[1, 2, 3, 7, 9, 10]` → "1–3, 7, 9–10".
pub fn page_ranges(pages: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut iter = pages.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end += 1;
            iter.next();
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}–{end}")
        });
    }
    parts.join(", ")
}

/// A byte count for a message: "250.3 MB", "12 KB", "512 bytes".
pub fn human_bytes(bytes: u64) -> String {
    const KB: f64 = 1000.0;
    let b = bytes as f64;
    if b >= KB * KB * KB {
        format!("{:.1} GB", b / (KB * KB * KB))
    } else if b >= KB * KB {
        format!("{:.1} MB", b / (KB * KB))
    } else if b >= KB {
        format!("{:.0} KB", b / KB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_ranges_join_runs_of_pages() {
        assert_eq!(page_ranges(&[1, 2, 3, 7, 9, 10]), "1–3, 7, 9–10");
        assert_eq!(page_ranges(&[4]), "4");
        assert_eq!(page_ranges(&[]), "");
    }

    #[test]
    fn sizes_read_as_a_person_says_them() {
        assert_eq!(human_bytes(250_300_000), "250.3 MB");
        assert_eq!(human_bytes(12_000), "12 KB");
        assert_eq!(human_bytes(512), "512 bytes");
    }
}
