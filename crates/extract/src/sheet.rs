//! Tables: spreadsheets (XLSX, ODS) and CSV files, as Markdown tables.
//!
//! Every table becomes a Markdown table whose first row is the header, and the header row is
//! repeated every [`HEADER_EVERY`] rows (a new table starts there), so that a passage cut from
//! the middle of a long table still says what its columns are.
//!
//! - **Workbooks** are read by `calamine`, after the zip guards of [`Archive`] checked the
//!   container. Each sheet is one page with its marker naming the sheet,
//!   `<!-- sheet 2 (Budget) -->`: sheet 2 is page 2 for citations. Empty sheets are kept as
//!   pages with no text, so the numbers stay the workbook's.
//! - **CSV** (and TSV) files are read as a stream by the `csv` crate, decoded on the way
//!   (`encoding_rs_io`) from the encoding found in their first 64 KB ([`charset::decode`]'s
//!   steps without `<meta>`). The delimiter is a tab for `.tsv`, else whichever of `,` `;` and
//!   tab is most frequent in the first line. They have no pages: the table is sent in parts
//!   of about 64 KB, each starting with the header.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use calamine::{Data, Reader};

use crate::archive::Archive;
use crate::charset;
use crate::detect::Kind;
use crate::error::{ErrorKind, ExtractError};
use crate::limits::Limits;
use crate::markdown::{no_text_line, table_cell, Assembler, PageBody, Unit};
use crate::output::{Extractor, PageSink, SourceMeta, Summary};
use crate::EXTRACTOR_VERSION;

/// The header row is repeated after this many rows.
pub const HEADER_EVERY: usize = 50;

/// A CSV part is sent once it has this many bytes (at a block of rows' end).
const PART_TARGET: usize = 64 * 1024;

/// Markdown tables of rows, the header repeated every [`HEADER_EVERY`] rows.
struct TableLines {
    header: Option<Vec<String>>,
    columns: usize,
    rows_since_header: usize,
}

impl TableLines {
    fn new() -> Self {
        Self {
            header: None,
            columns: 0,
            rows_since_header: 0,
        }
    }

    fn line(&self, row: &[String]) -> String {
        let mut line = String::from("|");
        for i in 0..self.columns {
            line.push(' ');
            line.push_str(&table_cell(row.get(i).map_or("", String::as_str)));
            line.push_str(" |");
        }
        line
    }

    fn header_lines(&self, into: &mut Vec<String>) {
        if let Some(header) = &self.header {
            if !into.is_empty() {
                into.push(String::new());
            }
            into.push(self.line(header));
            into.push(format!("|{}", " --- |".repeat(self.columns)));
        }
    }

    /// Adds `row` to `into`: the first row is the header; every [`HEADER_EVERY`] rows the
    /// header starts a new table. Returns whether a block of rows just ended.
    fn push(&mut self, row: Vec<String>, into: &mut Vec<String>) -> bool {
        if self.header.is_none() {
            self.columns = row.len().max(1);
            self.header = Some(row);
            self.header_lines(into);
            return false;
        }
        if self.rows_since_header == HEADER_EVERY {
            self.header_lines(into);
            self.rows_since_header = 0;
        }
        into.push(self.line(&row));
        self.rows_since_header += 1;
        self.rows_since_header == HEADER_EVERY
    }
}

/// Reads XLSX and ODS workbooks (see the module docs).
#[derive(Debug, Clone)]
pub struct WorkbookExtractor {
    kind: Kind,
}

impl WorkbookExtractor {
    /// A reader for `kind`: [`Kind::Xlsx`] or [`Kind::Ods`].
    pub fn new(kind: Kind) -> Self {
        Self { kind }
    }
}

impl Extractor for WorkbookExtractor {
    fn extract(
        &self,
        file: &Path,
        limits: &Limits,
        out: &mut dyn PageSink,
    ) -> Result<Summary, ExtractError> {
        let what = if self.kind == Kind::Ods {
            "OpenDocument spreadsheet"
        } else {
            "Excel workbook"
        };
        let size = crate::file_size(file)?;
        drop(Archive::open(file, what, limits)?);
        let damaged = |e: calamine::Error| {
            ExtractError::new(
                ErrorKind::Damaged,
                format!("the {what} cannot be read ({e})"),
            )
        };
        let mut workbook = calamine::open_workbook_auto(file).map_err(damaged)?;
        let names = workbook.sheet_names();
        out.meta(&SourceMeta {
            mime: self.kind.mime().to_string(),
            kind: self.kind.clone(),
            size,
            pages: Some(names.len() as u32),
            title: None,
            author: None,
            extractor: format!("calamine; artifactflow-extract {EXTRACTOR_VERSION}"),
        })?;
        let mut assembler = Assembler::for_unit(Unit::Sheet);
        let mut summary = Summary::default();
        for (index, name) in names.iter().enumerate() {
            let number = index as u32 + 1;
            out.progress(number, Some(names.len() as u32))?;
            let range = workbook.worksheet_range(name).map_err(damaged)?;
            let mut table = TableLines::new();
            let mut content = Vec::new();
            let mut chars = 0usize;
            for row in range.rows() {
                let cells: Vec<String> = row.iter().map(cell_text).collect();
                let before = content.len();
                table.push(cells, &mut content);
                chars += content[before..].iter().map(String::len).sum::<usize>();
                if chars > limits.max_page_chars {
                    return Err(ExtractError::new(
                        ErrorKind::Limit,
                        format!(
                            "sheet {number} ({name}) holds more than {} characters of text, over \
                             the limit for one page",
                            limits.max_page_chars
                        ),
                    )
                    .at_page(number));
                }
            }
            let has_text = !content.is_empty();
            let before = if has_text {
                Vec::new()
            } else {
                vec![no_text_line(false).to_string()]
            };
            let page = assembler.page(
                Some(number),
                Some(name.clone()),
                has_text,
                PageBody {
                    before,
                    content,
                    after: Vec::new(),
                },
            );
            limits.check_text_size(assembler.written())?;
            summary.count_page(&page, assembler.next_line() - 1);
            out.page(page)?;
        }
        Ok(summary)
    }
}

/// A cell's text: numbers as written, empty cells empty, errors as `#DIV/0!`.
fn cell_text(cell: &Data) -> String {
    match cell {
        Data::Empty => String::new(),
        other => other.to_string(),
    }
}

/// Reads CSV and TSV files (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExtractor;

impl Extractor for CsvExtractor {
    fn extract(
        &self,
        file: &Path,
        limits: &Limits,
        out: &mut dyn PageSink,
    ) -> Result<Summary, ExtractError> {
        let open = || File::open(file).map_err(|e| ExtractError::io("open the file", &e));
        let size = crate::file_size(file)?;
        let mut head = Vec::new();
        open()?
            .take(64 * 1024)
            .read_to_end(&mut head)
            .map_err(|e| ExtractError::io("read the file", &e))?;
        let (sample, encoding) = charset::decode(&head, false);
        let tsv = file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("tsv"));
        let delimiter = if tsv {
            b'\t'
        } else {
            let first_line = sample.lines().next().unwrap_or("");
            [b',', b';', b'\t']
                .into_iter()
                .max_by_key(|d| first_line.matches(*d as char).count())
                .unwrap_or(b',')
        };
        out.meta(&SourceMeta {
            mime: Kind::Csv.mime().to_string(),
            kind: Kind::Csv,
            size,
            pages: None,
            title: None,
            author: None,
            extractor: format!("csv; artifactflow-extract {EXTRACTOR_VERSION}"),
        })?;
        let decoded = encoding_rs_io::DecodeReaderBytesBuilder::new()
            .encoding(encoding_rs::Encoding::for_label(encoding.as_bytes()))
            .build(BufReader::new(open()?));
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .from_reader(decoded);
        let mut assembler = Assembler::new();
        let mut summary = Summary::default();
        let mut table = TableLines::new();
        let mut part: Vec<String> = Vec::new();
        let mut part_bytes = 0usize;
        let mut send = |part: &mut Vec<String>, summary: &mut Summary| {
            let page = assembler.page(
                None,
                None,
                true,
                PageBody {
                    before: Vec::new(),
                    content: std::mem::take(part),
                    after: Vec::new(),
                },
            );
            limits.check_text_size(assembler.written())?;
            summary.count_page(&page, assembler.next_line() - 1);
            out.page(page)
        };
        for (index, record) in reader.records().enumerate() {
            let record = record.map_err(|e| {
                ExtractError::new(
                    ErrorKind::Damaged,
                    format!("row {} of the table cannot be read ({e})", index + 1),
                )
            })?;
            let row: Vec<String> = record.iter().map(str::to_string).collect();
            let before = part.len();
            let block_ended = table.push(row, &mut part);
            part_bytes += part[before..].iter().map(|l| l.len() + 1).sum::<usize>();
            if part_bytes > limits.max_page_chars {
                return Err(ExtractError::new(
                    ErrorKind::Limit,
                    format!(
                        "row {} holds more than {} characters of text, over the limit for one \
                         part",
                        index + 1,
                        limits.max_page_chars
                    ),
                ));
            }
            if block_ended && part_bytes >= PART_TARGET {
                send(&mut part, &mut summary)?;
                // The next row starts a block: `push` puts the header before it.
                part_bytes = 0;
            }
        }
        if !part.is_empty() {
            send(&mut part, &mut summary)?;
        }
        Ok(summary)
    }
}
