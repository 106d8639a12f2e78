//! What reading a file produces, and where it goes as it is produced.
//!
//! An [`Extractor`] streams to a [`PageSink`]: first the file's [`SourceMeta`], then progress
//! while it reads, then one [`Page`] at a time, and it returns a [`Summary`] at the end. A page
//! carries its part of the Markdown and the line where that part starts, so the Markdown of the
//! whole file is the pages' `markdown` joined in order, and the page's [`Passage`]s are located
//! by line in it. Nothing requires the whole file or its whole text in memory; [`Collected`]
//! keeps everything, for tests and small files.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::detect::Kind;
use crate::error::ExtractError;
use crate::limits::Limits;

/// What the file says about itself, known before its pages are read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceMeta {
    /// The detected format.
    pub kind: Kind,
    /// Its MIME type.
    pub mime: String,
    /// The file's size in bytes.
    pub size: u64,
    /// The number of pages, for paged formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// The title the file gives itself, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The author the file names, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Which reader made the text, and its version (so text made by an older one can be made
    /// again): "pdfium; artifactflow-extract 1".
    pub extractor: String,
}

/// One part of the Markdown: a page of a paged file, or a stretch of lines of a file without
/// pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// The 1-based page number; `None` for a part of a file without pages.
    pub page: Option<u32>,
    /// The page's label when the file gives one that is not its number ("vii").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The 1-based line of the whole Markdown where this part starts (its page marker).
    pub first_line: u32,
    /// How many lines this part has (`markdown` ends with a line break).
    pub line_count: u32,
    /// Whether the page had any text (false for blank and scanned pages).
    pub has_text: bool,
    /// This part of the Markdown, ending with a line break.
    pub markdown: String,
    /// The page's passages for search, in order.
    pub passages: Vec<Passage>,
}

/// A stretch of a page's text for search, located by line in the Markdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passage {
    /// The page it is on (`None` in files without pages).
    pub page: Option<u32>,
    /// Its first line in the whole Markdown (1-based).
    pub line_first: u32,
    /// Its last line in the whole Markdown (1-based, inclusive).
    pub line_last: u32,
    /// Its text, as Markdown.
    pub text: String,
}

/// Something worth telling about a file that was read (not a failure).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// What it is about: `scanned` (some pages are images without text), `blank` (pages with
    /// nothing on them), `running_lines` (lines repeated on the pages were marked).
    pub kind: String,
    /// What it means, for a person.
    pub message: String,
    /// The pages it is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<u32>,
}

/// How reading ended when it succeeded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Pages (or parts) written.
    pub pages: u32,
    /// Pages with text.
    pub pages_with_text: u32,
    /// Lines of Markdown written.
    pub lines: u32,
    /// Passages made.
    pub passages: u32,
    /// What a person may want to know about the result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

impl Summary {
    /// Count a page about to be sent: its text, its passages, and the Markdown's lines so far
    /// (`last_line`, 1-based).
    pub fn count_page(&mut self, page: &Page, last_line: u32) {
        self.pages += 1;
        self.pages_with_text += u32::from(page.has_text);
        self.passages += page.passages.len() as u32;
        self.lines = last_line;
    }
}

/// Where an extractor sends what it reads, as it reads it.
pub trait PageSink {
    /// The file's metadata, once, before anything else.
    fn meta(&mut self, meta: &SourceMeta) -> Result<(), ExtractError>;
    /// Reading has reached page `page` of `pages` (sent while a first pass reads the file, so a
    /// supervisor sees it moving).
    fn progress(&mut self, page: u32, pages: Option<u32>) -> Result<(), ExtractError> {
        let _ = (page, pages);
        Ok(())
    }
    /// One page (or part) of the result, in order.
    fn page(&mut self, page: Page) -> Result<(), ExtractError>;
}

/// A reader for one format.
pub trait Extractor {
    /// Reads `file` within `limits`, sending its metadata and pages to `out`.
    fn extract(
        &self,
        file: &Path,
        limits: &Limits,
        out: &mut dyn PageSink,
    ) -> Result<Summary, ExtractError>;
}

/// A sink that keeps everything: metadata and pages.
#[derive(Debug, Default)]
pub struct Collected {
    /// The metadata, once sent.
    pub meta: Option<SourceMeta>,
    /// The pages, in order.
    pub pages: Vec<Page>,
    /// How many progress reports came.
    pub progress_reports: u32,
}

impl Collected {
    /// The whole Markdown: the pages' parts joined.
    pub fn markdown(&self) -> String {
        self.pages.iter().map(|p| p.markdown.as_str()).collect()
    }

    /// Every page's passages, in order.
    pub fn passages(&self) -> impl Iterator<Item = &Passage> {
        self.pages.iter().flat_map(|p| p.passages.iter())
    }
}

impl PageSink for Collected {
    fn meta(&mut self, meta: &SourceMeta) -> Result<(), ExtractError> {
        self.meta = Some(meta.clone());
        Ok(())
    }

    fn progress(&mut self, _page: u32, _pages: Option<u32>) -> Result<(), ExtractError> {
        self.progress_reports += 1;
        Ok(())
    }

    fn page(&mut self, page: Page) -> Result<(), ExtractError> {
        self.pages.push(page);
        Ok(())
    }
}
