//! What the `artifactflow-extract` worker reads and writes: JSON, one value per line.
//!
//! The supervisor writes one [`Request`] per line on the worker's standard input:
//!
//! ```json
//! {"path": "/home/ann/Papers/report.pdf", "limits": {"max_file_bytes": 209715200}}
//! ```
//!
//! and reads [`Reply`] lines from its standard output, for each request in order:
//!
//! ```json
//! {"meta": {"kind": "pdf", "mime": "application/pdf", "size": 48213, "pages": 40, …}}
//! {"progress": {"page": 1, "pages": 40}}
//! {"page": 1, "label": "i", "first_line": 1, "line_count": 31, "has_text": true, "markdown": "…", "passages": […]}
//! {"done": {"pages": 40, "pages_with_text": 40, "lines": 1204, "passages": 88, "warnings": […]}}
//! ```
//!
//! or, instead of `done`, `{"error": {"kind": "encrypted", "message": "…", "page": 3}}`.
//! `meta` comes first when the file could be opened; `progress` lines come while the first pass
//! reads (at most about five a second, and for the last page); page lines follow in order; an
//! `error` may follow pages that were sent (a PDF with damaged pages sends the others first).
//! A worker that dies mid-file (a crash in pdfium) writes nothing more: the supervisor reports
//! the file as `crashed` and starts another worker. After a panic the worker writes an error of
//! kind `crashed` and exits, since pdfium's state can no longer be trusted.

use serde::{Deserialize, Serialize};

use crate::error::ExtractError;
use crate::limits::Limits;
use crate::output::{Page, SourceMeta, Summary};

/// One file to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// The file's path.
    pub path: String,
    /// The limits to read it within (defaults for any left out).
    #[serde(default)]
    pub limits: Limits,
}

/// Where reading is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// The page just read (1-based).
    pub page: u32,
    /// The number of pages, when known.
    pub pages: Option<u32>,
}

/// One line the worker writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Reply {
    /// The file's metadata.
    Meta {
        /// The metadata.
        meta: SourceMeta,
    },
    /// Reading has reached a page.
    Progress {
        /// Where reading is.
        progress: Progress,
    },
    /// The file was read.
    Done {
        /// How reading ended.
        done: Summary,
    },
    /// The file could not be read (or not all of it).
    Error {
        /// Why.
        error: ExtractError,
    },
    /// One page of the result.
    Page(Page),
}
