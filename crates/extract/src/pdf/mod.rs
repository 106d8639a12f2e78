//! PDFs, read through pdfium page by page.
//!
//! pdfium (Chrome's PDF engine, fuzzed without pause) opens the file through its own file
//! access, reading only the parts it needs, so a 200 MB PDF is never in memory whole. Reading
//! takes two passes, and only the first one asks pdfium anything:
//!
//! 1. **Read.** Each page is loaded, its label and text taken (`FPDFText_GetBoundedText` over
//!    the page), the page dropped. The text is cleaned ([`clean::page_lines`]: line breaks,
//!    ligatures, hyphens) and written to an anonymous temporary file; only the page's first and
//!    last lines stay in memory, counted by [`clean::RunningLines`]. A page with no text is
//!    *scanned* when it holds an image and *blank* otherwise; a page pdfium cannot load is
//!    *unreadable*. Progress is reported after every page.
//! 2. **Write.** Once every page has been seen, the lines that repeat at the top or bottom are
//!    known; each page is read back from the temporary file, its running lines marked, its text
//!    escaped as Markdown and cut into passages, and sent on.
//!
//! How it ends: a PDF with no text on any page fails as `scanned` ("no text on pages 1–12:
//! scanned"); pages that could not be loaded make it fail as `damaged` after the others were
//! sent, located at the first of them; an encrypted PDF fails at once. pdfium itself is not
//! trusted with the app's process: this runs in the `artifactflow-extract` worker.

pub mod clean;
pub mod library;

use std::io::{BufRead, BufReader, BufWriter, Seek, Write};
use std::path::Path;

use pdfium_render::prelude::{
    PdfDocumentMetadataTagType, PdfPageObjectType, PdfPageObjectsCommon, PdfiumError,
    PdfiumInternalError,
};
use serde::{Deserialize, Serialize};

use crate::detect::Kind;
use crate::error::{page_ranges, ErrorKind, ExtractError};
use crate::limits::Limits;
use crate::markdown::{escape_text_line, no_text_line, running_line, Assembler, Edge, PageBody};
use crate::output::{Extractor, PageSink, SourceMeta, Summary, Warning};
use crate::EXTRACTOR_VERSION;

/// Reads PDFs through pdfium (see the module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct PdfExtractor;

/// What the first pass learned about a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum PageState {
    Text,
    Blank,
    Scanned,
    Unreadable,
}

/// A page as the first pass writes it to the temporary file.
#[derive(Serialize, Deserialize)]
struct SpooledPage {
    state: PageState,
    label: Option<String>,
    lines: Vec<String>,
}

impl SpooledPage {
    /// A page pdfium could not load or read.
    fn unreadable() -> Self {
        Self {
            state: PageState::Unreadable,
            label: None,
            lines: Vec::new(),
        }
    }
}

impl Extractor for PdfExtractor {
    fn extract(
        &self,
        file: &Path,
        limits: &Limits,
        out: &mut dyn PageSink,
    ) -> Result<Summary, ExtractError> {
        let size = crate::file_size(file)?;
        let pdfium = library::pdfium()?;
        let document = pdfium.load_pdf_from_file(file, None).map_err(open_error)?;
        let pages = document.pages();
        let count = u32::try_from(pages.len()).unwrap_or(0);
        if count > limits.max_pages {
            return Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "the PDF has {count} pages, over the limit of {} pages for one source",
                    limits.max_pages
                ),
            ));
        }
        let metadata = document.metadata();
        let tag = |which| {
            metadata
                .get(which)
                .map(|t| t.value().trim().to_string())
                .filter(|v| !v.is_empty())
        };
        out.meta(&SourceMeta {
            kind: Kind::Pdf,
            mime: Kind::Pdf.mime().to_string(),
            size,
            pages: Some(count),
            title: tag(PdfDocumentMetadataTagType::Title),
            author: tag(PdfDocumentMetadataTagType::Author),
            extractor: format!("pdfium; artifactflow-extract {EXTRACTOR_VERSION}"),
        })?;
        if count == 0 {
            return Err(ExtractError::new(
                ErrorKind::Damaged,
                "damaged: the PDF has no pages (its page tree is missing or broken)",
            ));
        }

        // Pass 1: read every page once, keep its lines on disk and its edges in memory.
        let spool_file = tempfile::tempfile()
            .map_err(|e| ExtractError::io("make a temporary file for the pages", &e))?;
        let mut spool = BufWriter::new(spool_file);
        let mut running = clean::RunningLines::default();
        let mut states = Vec::with_capacity(count as usize);
        for index in 0..count {
            let number = index + 1;
            let spooled = match pages.get(index as i32) {
                Err(_) => SpooledPage::unreadable(),
                Ok(page) => {
                    let label = page.label().map(str::to_string).filter(|l| !l.is_empty());
                    let Ok(text) = page.text() else {
                        states.push(PageState::Unreadable);
                        spool_page(&mut spool, &SpooledPage::unreadable())?;
                        out.progress(number, Some(count))?;
                        continue;
                    };
                    if usize::try_from(text.len()).unwrap_or(0) > limits.max_page_chars {
                        return Err(ExtractError::new(
                            ErrorKind::Limit,
                            format!(
                                "page {number} holds {} characters of text, over the limit of \
                                 {} for one page",
                                text.len(),
                                limits.max_page_chars
                            ),
                        )
                        .at_page(number));
                    }
                    let lines = clean::page_lines(&text.all());
                    let state = if lines.iter().any(|l| !l.trim().is_empty()) {
                        running.observe(&lines);
                        PageState::Text
                    } else if page.objects().iter().any(|o| {
                        matches!(
                            o.object_type(),
                            PdfPageObjectType::Image | PdfPageObjectType::XObjectForm
                        )
                    }) {
                        PageState::Scanned
                    } else {
                        PageState::Blank
                    };
                    SpooledPage {
                        state,
                        label,
                        lines,
                    }
                }
            };
            states.push(spooled.state);
            spool_page(&mut spool, &spooled)?;
            out.progress(number, Some(count))?;
        }
        let numbers_in = |state: PageState| -> Vec<u32> {
            (1..=count)
                .filter(|n| states[*n as usize - 1] == state)
                .collect()
        };
        let (scanned, unreadable) = (
            numbers_in(PageState::Scanned),
            numbers_in(PageState::Unreadable),
        );
        let with_text = numbers_in(PageState::Text).len() as u32;
        if with_text == 0 && !scanned.is_empty() && unreadable.is_empty() {
            return Err(ExtractError::new(
                ErrorKind::Scanned,
                format!("no text on {}: scanned", pages_phrase(&scanned)),
            ));
        }

        // Pass 2: mark the running lines, write the Markdown, cut the passages.
        let running = running.finish();
        let mut spool = spool
            .into_inner()
            .map_err(|e| ExtractError::io("write the pages to a temporary file", e.error()))?;
        spool
            .rewind()
            .map_err(|e| ExtractError::io("read back the temporary file", &e))?;
        let mut assembler = Assembler::new();
        let mut summary = Summary::default();
        let mut marked_running = 0u32;
        for (index, line) in BufReader::new(spool).lines().enumerate() {
            let number = index as u32 + 1;
            let line = line.map_err(|e| ExtractError::io("read back the temporary file", &e))?;
            let page: SpooledPage = serde_json::from_str(&line).map_err(|e| {
                ExtractError::io("read back the temporary file", &std::io::Error::other(e))
            })?;
            if page.state == PageState::Unreadable {
                continue;
            }
            let body = match page.state {
                PageState::Text => {
                    let (top, bottom) = running.edges(&page.lines, number, page.label.as_deref());
                    if top + bottom > 0 {
                        marked_running += 1;
                    }
                    let end = page.lines.len() - bottom;
                    let marked = |lines: &[String], edge| {
                        lines
                            .iter()
                            .filter(|l| !l.trim().is_empty())
                            .map(|l| running_line(edge, l))
                            .collect()
                    };
                    PageBody {
                        before: marked(&page.lines[..top], Edge::Header),
                        content: page.lines[top..end]
                            .iter()
                            .map(|l| escape_text_line(l).into_owned())
                            .collect(),
                        after: marked(&page.lines[end..], Edge::Footer),
                    }
                }
                state => PageBody {
                    before: vec![no_text_line(state == PageState::Scanned).to_string()],
                    ..PageBody::default()
                },
            };
            let page = assembler.page(
                Some(number),
                page.label,
                page.state == PageState::Text,
                body,
            );
            limits.check_text_size(assembler.written())?;
            summary.count_page(&page, assembler.next_line() - 1);
            out.page(page)?;
        }
        if !scanned.is_empty() {
            summary.warnings.push(Warning {
                kind: "scanned".into(),
                message: format!(
                    "no text on {}: scanned (images of pages; their text cannot be searched)",
                    pages_phrase(&scanned)
                ),
                pages: scanned,
            });
        }
        if marked_running > 0 && !running.is_empty() {
            summary.warnings.push(Warning {
                kind: "running_lines".into(),
                message: format!(
                    "lines repeated at the top or bottom of {marked_running} pages were marked \
                     as running headers or footers and left out of search"
                ),
                pages: Vec::new(),
            });
        }
        if let Some(&first) = unreadable.first() {
            let message = if unreadable.len() as u32 == count {
                format!("damaged or truncated: none of its {count} pages could be read")
            } else {
                format!(
                    "damaged or truncated: {} of {count} could not be read (the other pages were)",
                    pages_phrase(&unreadable)
                )
            };
            return Err(ExtractError::new(ErrorKind::Damaged, message).at_page(first));
        }
        Ok(summary)
    }
}

/// "page 3" or "pages 1–12, 15".
fn pages_phrase(pages: &[u32]) -> String {
    if pages.len() == 1 {
        format!("page {}", pages[0])
    } else {
        format!("pages {}", page_ranges(pages))
    }
}

/// Why pdfium would not open the document, for a person.
fn open_error(err: PdfiumError) -> ExtractError {
    match err {
        PdfiumError::IoError(e) => ExtractError::io("open the file", &e),
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PasswordError) => {
            ExtractError::new(
                ErrorKind::Encrypted,
                "encrypted: needs a password (save a copy without the password to add it)",
            )
        }
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::SecurityError) => {
            ExtractError::new(
                ErrorKind::Encrypted,
                "encrypted with a security handler the PDF engine does not support",
            )
        }
        PdfiumError::PdfiumLibraryInternalError(
            PdfiumInternalError::FormatError | PdfiumInternalError::FileError,
        ) => ExtractError::new(
            ErrorKind::Damaged,
            "damaged or truncated: not a readable PDF (its structure is broken or the file \
             was cut short)",
        ),
        other => ExtractError::new(
            ErrorKind::Damaged,
            format!("damaged: the PDF engine could not open it ({other:?})"),
        ),
    }
}

/// Writes a page to the temporary file of the first pass, one JSON line.
fn spool_page(spool: &mut impl Write, page: &SpooledPage) -> Result<(), ExtractError> {
    serde_json::to_writer(&mut *spool, page)
        .map_err(std::io::Error::from)
        .and_then(|()| spool.write_all(b"\n"))
        .map_err(|e| ExtractError::io("write the pages to a temporary file", &e))
}
