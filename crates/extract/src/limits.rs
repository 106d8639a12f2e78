//! The bounds a file is read within.
//!
//! None of them is a small cap on ordinary files: a 200 MB, 5,000-page PDF is well inside the
//! defaults. They stop hostile or broken files from making the worker produce without end: a
//! page with millions of characters, a line of hundreds of megabytes, more text than any book.
//! The file size limit is off unless the user sets one. What the worker may cost in time and
//! memory is the supervisor's to watch (it kills the process), not these.

use serde::{Deserialize, Serialize};

use crate::error::{human_bytes, ErrorKind, ExtractError};

/// Limits for reading one file. Every field has a default, so `{}` is a valid value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Files larger than this are refused (`too_large`); `None` for no limit.
    pub max_file_bytes: Option<u64>,
    /// Documents with more pages than this are refused (`limit`).
    pub max_pages: u32,
    /// A page with more characters of text than this stops reading (`limit`).
    pub max_page_chars: usize,
    /// A line of a text file longer than this stops reading (`limit`).
    pub max_line_bytes: usize,
    /// More Markdown than this, for the whole file, stops reading (`limit`).
    pub max_text_bytes: u64,
    /// A zip container (DOCX…) with more entries than this is refused (`limit`).
    pub max_archive_entries: usize,
    /// A zip container may unpack to max(100 × its size, this many bytes); more is refused
    /// (`limit`).
    pub min_unpacked_budget: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: None,
            max_pages: 100_000,
            max_page_chars: 2_000_000,
            max_line_bytes: 16 << 20,
            max_text_bytes: 1 << 30,
            max_archive_entries: 10_000,
            min_unpacked_budget: 256 << 20,
        }
    }
}

impl Limits {
    /// `Err(too_large)` when a file of `size` bytes is over [`Limits::max_file_bytes`].
    pub fn check_file_size(&self, size: u64) -> Result<(), ExtractError> {
        match self.max_file_bytes {
            Some(max) if size > max => Err(ExtractError::new(
                ErrorKind::TooLarge,
                format!(
                    "the file is {}, over the {} limit set for the library (raise the limit \
                     to add it)",
                    human_bytes(size),
                    human_bytes(max)
                ),
            )),
            _ => Ok(()),
        }
    }

    /// `Err(limit)` when the Markdown written so far, `written` bytes, is over
    /// [`Limits::max_text_bytes`].
    pub fn check_text_size(&self, written: u64) -> Result<(), ExtractError> {
        if written > self.max_text_bytes {
            Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "the file holds more than {} of text, over the limit for one source",
                    human_bytes(self.max_text_bytes)
                ),
            ))
        } else {
            Ok(())
        }
    }
}
