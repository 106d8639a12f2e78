//! What a file is, from its content before its name.
//!
//! [`detect`] reads the first 64 KB and decides in three steps: the magic bytes (through
//! `infer`: `%PDF`, zip containers told apart by their entries, images…), then the file's
//! extension, then a text sniff (valid UTF-8 with no NUL byte is text). So a PDF named
//! `notes.md` is read as a PDF, and a README without an extension as text. Formats the library
//! does not read yet come back as [`Kind::Unsupported`] with a description a person recognises
//! ("a Word document (DOCX)").

use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ErrorKind, ExtractError};

/// How much of the file detection reads.
const SNIFF_BYTES: usize = 64 * 1024;

/// The formats the library reads, and a description of any other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A PDF document (read through pdfium, page by page).
    Pdf,
    /// A Markdown file (kept as it is).
    Markdown,
    /// Plain text (UTF-8).
    Text,
    /// A JSON document.
    Json,
    /// A Word document (DOCX).
    Docx,
    /// A web page (HTML).
    Html,
    /// A PowerPoint presentation (PPTX).
    Pptx,
    /// An Excel workbook (XLSX).
    Xlsx,
    /// An OpenDocument spreadsheet (ODS).
    Ods,
    /// A table of comma- (or tab-, semicolon-) separated values.
    Csv,
    /// An EPUB book.
    Epub,
    /// Anything else, described as a person would name it ("a Word document (DOCX)").
    Unsupported(String),
}

impl Kind {
    /// The MIME type stored with the source.
    pub fn mime(&self) -> &'static str {
        match self {
            Kind::Pdf => "application/pdf",
            Kind::Markdown => "text/markdown",
            Kind::Text => "text/plain",
            Kind::Json => "application/json",
            Kind::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            Kind::Html => "text/html",
            Kind::Xlsx => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            Kind::Ods => "application/vnd.oasis.opendocument.spreadsheet",
            Kind::Csv => "text/csv",
            Kind::Epub => "application/epub+zip",
            Kind::Pptx => {
                "application/vnd.openxmlformats-officedocument.presentationml.presentation"
            }
            Kind::Unsupported(_) => "application/octet-stream",
        }
    }

    /// The error for a file of this kind when it is not one the library reads.
    pub fn unsupported_error(&self) -> Option<ExtractError> {
        match self {
            Kind::Unsupported(what) => Some(ExtractError::new(
                ErrorKind::Unsupported,
                format!(
                    "unsupported format: {what}; the library reads PDF, Word (DOCX), \
                     PowerPoint (PPTX), Excel (XLSX), OpenDocument spreadsheets (ODS), CSV, \
                     EPUB, web pages (HTML), Markdown, plain text and JSON files"
                ),
            )),
            _ => None,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Pdf => f.write_str("PDF"),
            Kind::Markdown => f.write_str("Markdown"),
            Kind::Text => f.write_str("text"),
            Kind::Json => f.write_str("JSON"),
            Kind::Docx => f.write_str("Word document (DOCX)"),
            Kind::Html => f.write_str("web page (HTML)"),
            Kind::Pptx => f.write_str("PowerPoint presentation (PPTX)"),
            Kind::Xlsx => f.write_str("Excel workbook (XLSX)"),
            Kind::Ods => f.write_str("OpenDocument spreadsheet (ODS)"),
            Kind::Csv => f.write_str("table (CSV)"),
            Kind::Epub => f.write_str("EPUB book"),
            Kind::Unsupported(what) => f.write_str(what),
        }
    }
}

/// What the file at `path` is: magic bytes first, then the extension, then a text sniff.
pub fn detect(path: &Path) -> Result<Kind, ExtractError> {
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    std::fs::File::open(path)
        .and_then(|file| file.take(SNIFF_BYTES as u64).read_to_end(&mut head))
        .map_err(|e| ExtractError::io("open the file", &e))?;
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    Ok(detect_bytes(&head, &extension))
}

/// [`detect`] on the file's first bytes and its lower-case extension.
pub fn detect_bytes(head: &[u8], extension: &str) -> Kind {
    if let Some(kind) = zip_container(head) {
        return kind;
    }
    if let Some(found) = infer::get(head) {
        if let Some(kind) = from_magic(found.mime_type(), found.extension()) {
            return kind;
        }
    }
    if let Some(kind) = from_extension(extension) {
        return kind;
    }
    if head.starts_with(b"PK\x03\x04") {
        return Kind::Unsupported("a zip archive".to_string());
    }
    if looks_like_text(head) {
        Kind::Text
    } else {
        Kind::Unsupported(if extension.is_empty() {
            "binary data of an unknown kind".to_string()
        } else {
            format!("a .{extension} file of an unknown kind (not text)")
        })
    }
}

/// The kind for what `infer` recognised, or `None` to go on to the extension (XML is text).
fn from_magic(mime: &str, extension: &str) -> Option<Kind> {
    let described = |what: &str| Some(Kind::Unsupported(what.to_string()));
    match mime {
        "application/pdf" => Some(Kind::Pdf),
        "text/xml" => None,
        // A zip container whose first entries did not say what it holds: the extension
        // decides (a DOCX whose `[Content_Types].xml` is not among its first entries).
        "application/zip" => None,
        "text/html" => Some(Kind::Html),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => {
            Some(Kind::Docx)
        }
        "application/vnd.openxmlformats-officedocument.presentationml.presentation" => {
            Some(Kind::Pptx)
        }
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => Some(Kind::Xlsx),
        "application/msword" => described("a Word 97–2003 document (DOC)"),
        "application/vnd.ms-excel" => described("an Excel 97–2003 workbook (XLS)"),
        "application/vnd.ms-powerpoint" => described("a PowerPoint 97–2003 presentation (PPT)"),
        "application/vnd.oasis.opendocument.text" => described("an OpenDocument text (ODT)"),
        "application/vnd.oasis.opendocument.spreadsheet" => Some(Kind::Ods),
        "application/vnd.oasis.opendocument.presentation" => {
            described("an OpenDocument presentation (ODP)")
        }
        "application/epub+zip" => Some(Kind::Epub),
        _ if mime.starts_with("image/") => Some(Kind::Unsupported(format!(
            "an image ({})",
            extension.to_ascii_uppercase()
        ))),
        _ => Some(Kind::Unsupported(format!("a {mime} file (.{extension})"))),
    }
}

/// The kind of a zip container whose first entries say what it is: an Office Open XML package
/// (`[Content_Types].xml`) with `word/document.xml` is a Word document, with
/// `ppt/presentation.xml` a PowerPoint presentation, with `xl/workbook.xml` an Excel
/// workbook; an OpenDocument file starts with its `mimetype` entry, stored uncompressed. Entry names are stored
/// uncompressed in the local headers, so the first 64 KB show them.
fn zip_container(head: &[u8]) -> Option<Kind> {
    if !head.starts_with(b"PK\x03\x04") {
        return None;
    }
    let holds = |name: &[u8]| head.windows(name.len()).any(|w| w == name);
    if holds(b"mimetypeapplication/vnd.oasis.opendocument.spreadsheet") {
        return Some(Kind::Ods);
    }
    if holds(b"mimetypeapplication/epub+zip") {
        return Some(Kind::Epub);
    }
    if !holds(b"[Content_Types].xml") {
        return None;
    }
    if holds(b"word/document.xml") {
        Some(Kind::Docx)
    } else if holds(b"ppt/presentation.xml") {
        Some(Kind::Pptx)
    } else if holds(b"xl/workbook.xml") {
        Some(Kind::Xlsx)
    } else {
        None
    }
}

/// The kind a file's extension names, or `None` when it names nothing known.
fn from_extension(extension: &str) -> Option<Kind> {
    let described = |what: &str| Some(Kind::Unsupported(what.to_string()));
    match extension {
        "pdf" => Some(Kind::Pdf),
        "md" | "markdown" | "mdown" | "mkd" | "mkdn" => Some(Kind::Markdown),
        "json" | "jsonl" | "ndjson" | "geojson" => Some(Kind::Json),
        "txt" | "text" => Some(Kind::Text),
        "html" | "htm" | "xhtml" => Some(Kind::Html),
        "docx" => Some(Kind::Docx),
        "pptx" => Some(Kind::Pptx),
        "xlsx" => Some(Kind::Xlsx),
        "odt" => described("an OpenDocument text (ODT)"),
        "ods" => Some(Kind::Ods),
        "epub" => Some(Kind::Epub),
        "csv" | "tsv" => Some(Kind::Csv),
        _ => None,
    }
}

/// Valid UTF-8 (a character cut by the end of the sample counts as valid) with no NUL byte.
fn looks_like_text(head: &[u8]) -> bool {
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() >= SNIFF_BYTES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes_win_over_the_name() {
        assert_eq!(detect_bytes(b"%PDF-1.7\n%\xe2\xe3", "md"), Kind::Pdf);
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(
            detect_bytes(png, "txt"),
            Kind::Unsupported("an image (PNG)".into())
        );
    }

    #[test]
    fn the_extension_decides_for_text_formats() {
        assert_eq!(detect_bytes(b"# Title\n", "md"), Kind::Markdown);
        assert_eq!(detect_bytes(b"{\"a\": 1}", "json"), Kind::Json);
        assert_eq!(detect_bytes(b"plain", "txt"), Kind::Text);
        assert_eq!(detect_bytes(b"<p>hi</p>", "html"), Kind::Html);
    }

    #[test]
    fn zip_containers_are_told_apart_by_their_entries_then_their_name() {
        let docx = b"PK\x03\x04....[Content_Types].xml....PK\x03\x04..word/document.xml";
        assert_eq!(detect_bytes(docx, "zip"), Kind::Docx);
        let bare = b"PK\x03\x04....other.xml";
        assert_eq!(detect_bytes(bare, "docx"), Kind::Docx);
        assert_eq!(
            detect_bytes(bare, ""),
            Kind::Unsupported("a zip archive".into())
        );
    }

    #[test]
    fn unknown_names_are_sniffed() {
        assert_eq!(
            detect_bytes("fn main() {} // é".as_bytes(), "rs"),
            Kind::Text
        );
        assert_eq!(detect_bytes(b"", ""), Kind::Text);
        assert!(matches!(
            detect_bytes(b"\x00\x01\x02binary", "bin"),
            Kind::Unsupported(what) if what.contains(".bin")
        ));
        // Latin-1 bytes are not UTF-8: not read as text (yet).
        assert!(matches!(
            detect_bytes(b"caf\xe9 au lait", ""),
            Kind::Unsupported(_)
        ));
    }

    #[test]
    fn unsupported_files_say_what_they_are_and_what_is_read() {
        let err = Kind::Unsupported("an OpenDocument text (ODT)".into())
            .unsupported_error()
            .expect("an error");
        assert_eq!(err.kind, ErrorKind::Unsupported);
        assert_eq!(
            err.message,
            "unsupported format: an OpenDocument text (ODT); the library reads PDF, Word (DOCX), \
             PowerPoint (PPTX), Excel (XLSX), OpenDocument spreadsheets (ODS), CSV, EPUB, web \
             pages (HTML), Markdown, plain text and JSON files"
        );
    }
}
