//! # ArtifactFlow extraction
//!
//! Turns a user's own files into what the library keeps of them: Markdown with page markers,
//! passages for search located by page and line, and metadata. It uses none of the other
//! workspace crates; the engine runs it, in worker processes, when sources are added.
//!
//! How a file is read:
//!
//! 1. [`detect()`] decides what it is (magic bytes, then the extension, then a text sniff).
//! 2. [`extract`] checks the size limit and hands it to the [`Extractor`] for its kind:
//!    [`pdf::PdfExtractor`] (pdfium, page by page, with [`pdf::clean`]'s post-processing),
//!    [`docx::DocxExtractor`] (Word documents, streamed from their XML through the zip guards
//!    of [`archive`]), [`pptx::PptxExtractor`] (slides in the deck's order, with their notes),
//!    [`sheet`] (XLSX, ODS and CSV as Markdown tables), [`epub::EpubExtractor`] (a book's
//!    chapters in reading order), [`html::HtmlExtractor`] (a web page's main content, through
//!    readability and htmd) or [`text::TextExtractor`] (Markdown, text, JSON). Formats not read yet fail as
//!    `unsupported`, saying what the file is.
//! 3. The extractor streams to a [`PageSink`]: the [`SourceMeta`], progress, then each
//!    [`Page`] with its part of the Markdown ([`markdown`]: page markers `<!-- page 7 (vii) -->`,
//!    running headers and footers kept as comments, text escaped so it reads back as written)
//!    and its [`Passage`]s (text-splitter's `MarkdownSplitter`, 600–1,200 characters, never
//!    across a page). Memory stays bounded whatever the file's size.
//! 4. [`plain_text`] gives the Markdown's words without markup, markers or running lines.
//!
//! The `artifactflow-extract` binary ([`protocol`]) runs this for one file per request line,
//! so that a crash or a hang inside pdfium on a hostile file ends that process only. Failures
//! are [`ExtractError`]s with a kind and a message for the person who added the file.
#![warn(missing_docs)]

pub mod archive;
pub mod charset;
pub mod detect;
pub mod docx;
pub mod epub;
pub mod error;
pub mod html;
pub mod limits;
pub mod markdown;
pub mod output;
pub mod pdf;
pub mod plain;
pub mod pptx;
pub mod protocol;
pub mod sheet;
pub mod text;
pub mod xml;

use std::path::Path;

pub use detect::{detect, Kind};
pub use error::{ErrorKind, ExtractError};
pub use limits::Limits;
pub use output::{Collected, Extractor, Page, PageSink, Passage, SourceMeta, Summary, Warning};
pub use plain::plain_text;

/// The version of what this crate makes of a file: raised when the same file would now give
/// different Markdown or passages, so sources read by an older version can be read again.
pub const EXTRACTOR_VERSION: u32 = 1;

/// The size of the file at `path`, or the error that says it cannot be read.
pub(crate) fn file_size(path: &Path) -> Result<u64, ExtractError> {
    Ok(std::fs::metadata(path)
        .map_err(|e| ExtractError::io("read the file", &e))?
        .len())
}

/// Reads the file at `path` within `limits`, streaming to `out` (see the crate docs).
pub fn extract(
    path: &Path,
    limits: &Limits,
    out: &mut dyn PageSink,
) -> Result<Summary, ExtractError> {
    limits.check_file_size(file_size(path)?)?;
    let kind = detect(path)?;
    if let Some(err) = kind.unsupported_error() {
        return Err(err);
    }
    match kind {
        Kind::Pdf => pdf::PdfExtractor.extract(path, limits, out),
        Kind::Docx => docx::DocxExtractor.extract(path, limits, out),
        Kind::Html => html::HtmlExtractor.extract(path, limits, out),
        Kind::Pptx => pptx::PptxExtractor.extract(path, limits, out),
        Kind::Xlsx | Kind::Ods => sheet::WorkbookExtractor::new(kind).extract(path, limits, out),
        Kind::Csv => sheet::CsvExtractor.extract(path, limits, out),
        Kind::Epub => epub::EpubExtractor.extract(path, limits, out),
        kind => text::TextExtractor::new(kind).extract(path, limits, out),
    }
}
