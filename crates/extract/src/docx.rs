//! Word documents (DOCX): `word/document.xml` read as a stream of XML events into Markdown.
//!
//! The container is opened through [`Archive`] (the zip guards). Then, in order:
//!
//! - `docProps/core.xml` gives the title (`dc:title`) and author (`dc:creator`);
//! - `word/numbering.xml` says which lists are numbered and which are bullets;
//! - `word/footnotes.xml` gives the footnotes' text, written after the body;
//! - `word/document.xml` is read event by event (never as a tree): each paragraph (`w:p`)
//!   collects its runs' text (`w:t`, `w:tab` as a space, `w:br` as a line break, footnote
//!   references as `[^N]`), then becomes a heading when its style (`w:pStyle`) is `Title` (`#`)
//!   or `Heading1`–`Heading6` (`#`–`######`), a list item when it has `w:numPr` (indented by
//!   its level), or a paragraph. A table (`w:tbl`) becomes a Markdown table whose first row is
//!   the header; a table inside a cell is flattened into the cell's text. `mc:Fallback`
//!   content (a second copy of a text box) is skipped.
//!
//! A DOCX has no fixed pages. Where Word recorded them, page breaks (`w:br w:type="page"`) and
//! the breaks of its last layout (`w:lastRenderedPageBreak`) start a new page, so citations can
//! name the page the person sees in Word; a document without them is one page. A break on a
//! page with nothing on it yet is ignored (Word often writes both kinds at the same place).
//! Text is escaped like any text that is not Markdown ([`escape_text_line`]).

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use quick_xml::events::Event;

use crate::archive::Archive;
use crate::detect::Kind;
use crate::error::{ErrorKind, ExtractError};
use crate::limits::Limits;
use crate::markdown::{escape_text_line, no_text_line, table_cell, Assembler, PageBody};
use crate::output::{Extractor, PageSink, SourceMeta, Summary};
use crate::xml::{attribute, each_event, event_text};
use crate::EXTRACTOR_VERSION;

/// What the messages call this format.
const WHAT: &str = "Word document";

/// Reads Word documents (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct DocxExtractor;

impl Extractor for DocxExtractor {
    fn extract(
        &self,
        file: &Path,
        limits: &Limits,
        out: &mut dyn PageSink,
    ) -> Result<Summary, ExtractError> {
        let size = crate::file_size(file)?;
        let mut archive = Archive::open(file, WHAT, limits)?;
        if !archive.has("word/document.xml") {
            return Err(ExtractError::new(
                ErrorKind::Damaged,
                "the Word document is damaged: it has no word/document.xml (the document's \
                 text)",
            ));
        }
        let (title, author) = archive
            .with_entry("docProps/core.xml", |r| {
                read_core_properties(r, WHAT, "docProps/core.xml")
            })?
            .unwrap_or_default();
        let numbering = archive
            .with_entry("word/numbering.xml", |r| {
                read_numbering(r, "word/numbering.xml")
            })?
            .unwrap_or_default();
        let footnotes = archive
            .with_entry("word/footnotes.xml", |r| {
                read_footnotes(r, "word/footnotes.xml")
            })?
            .unwrap_or_default();
        let kind = Kind::Docx;
        out.meta(&SourceMeta {
            mime: kind.mime().to_string(),
            kind,
            size,
            pages: None,
            title,
            author,
            extractor: format!("docx; artifactflow-extract {EXTRACTOR_VERSION}"),
        })?;
        let mut pages = Pages::new(limits, out);
        archive.with_entry("word/document.xml", |r| {
            read_body(r, &numbering, &mut pages)
        })?;
        pages.finish(&footnotes)
    }
}

/// Which list levels are numbered: `numId` → level → numbered (else bullets).
#[derive(Debug, Default)]
pub struct Numbering {
    numbered: HashMap<String, HashMap<u32, bool>>,
}

impl Numbering {
    fn is_numbered(&self, num_id: &str, level: u32) -> bool {
        self.numbered
            .get(num_id)
            .and_then(|levels| levels.get(&level))
            .copied()
            .unwrap_or(false)
    }
}

/// `dc:title` and `dc:creator` of `docProps/core.xml`.
pub(crate) fn read_core_properties(
    reader: &mut dyn BufRead,
    what: &str,
    part: &str,
) -> Result<(Option<String>, Option<String>), ExtractError> {
    let mut title = String::new();
    let mut author = String::new();
    let mut inside: Option<bool> = None; // Some(true) in the title, Some(false) in the creator
    each_event(reader, what, part, |event| {
        match event {
            Event::Start(e) => {
                inside = match e.local_name().as_ref() {
                    "title" => Some(true),
                    "creator" => Some(false),
                    _ => None,
                }
            }
            Event::End(_) => inside = None,
            other => {
                if let (Some(is_title), Some(text)) = (inside, event_text(other)) {
                    if is_title { &mut title } else { &mut author }.push_str(&text);
                }
            }
        }
        Ok(())
    })?;
    let clean = |s: String| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    Ok((clean(title), clean(author)))
}

/// The list formats of `word/numbering.xml`.
fn read_numbering(reader: &mut dyn BufRead, part: &str) -> Result<Numbering, ExtractError> {
    let mut abstract_levels: HashMap<String, HashMap<u32, bool>> = HashMap::new();
    let mut num_to_abstract: HashMap<String, String> = HashMap::new();
    let mut abstract_id: Option<String> = None;
    let mut level: Option<u32> = None;
    let mut num_id: Option<String> = None;
    each_event(reader, WHAT, part, |event| {
        match event {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                "abstractNum" => abstract_id = attribute(e, "w:abstractNumId"),
                "lvl" => level = attribute(e, "w:ilvl").and_then(|l| l.parse().ok()),
                "numFmt" => {
                    if let (Some(id), Some(level), Some(format)) =
                        (&abstract_id, level, attribute(e, "w:val"))
                    {
                        abstract_levels
                            .entry(id.clone())
                            .or_default()
                            .insert(level, format != "bullet" && format != "none");
                    }
                }
                "num" => num_id = attribute(e, "w:numId"),
                "abstractNumId" => {
                    if let (Some(num), Some(id)) = (&num_id, attribute(e, "w:val")) {
                        num_to_abstract.insert(num.clone(), id);
                    }
                }
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                "abstractNum" => abstract_id = None,
                "lvl" => level = None,
                "num" => num_id = None,
                _ => {}
            },
            _ => {}
        }
        Ok(())
    })?;
    let numbered = num_to_abstract
        .into_iter()
        .filter_map(|(num, id)| Some((num, abstract_levels.get(&id)?.clone())))
        .collect();
    Ok(Numbering { numbered })
}

/// The footnotes of `word/footnotes.xml` by id, their paragraphs joined by spaces (the
/// separators Word keeps there left out).
fn read_footnotes(
    reader: &mut dyn BufRead,
    part: &str,
) -> Result<BTreeMap<u32, String>, ExtractError> {
    let mut footnotes = BTreeMap::new();
    let mut current: Option<(u32, String)> = None;
    let mut in_text = false;
    each_event(reader, WHAT, part, |event| {
        match event {
            Event::Start(e) if e.local_name().as_ref() == "footnote" => {
                let separator = attribute(e, "w:type").is_some_and(|t| t != "normal");
                current = attribute(e, "w:id")
                    .and_then(|id| id.parse().ok())
                    .filter(|_| !separator)
                    .map(|id| (id, String::new()));
            }
            Event::Start(e) if e.local_name().as_ref() == "t" => in_text = true,
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => {
                    if let Some((_, text)) = &mut current {
                        text.push(' ');
                    }
                }
                "footnote" => {
                    if let Some((id, text)) = current.take() {
                        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                        if !text.is_empty() {
                            footnotes.insert(id, text);
                        }
                    }
                }
                _ => {}
            },
            Event::Empty(e) if matches!(e.local_name().as_ref(), "tab" | "br") => {
                if let Some((_, text)) = &mut current {
                    text.push(' ');
                }
            }
            other if in_text => {
                if let (Some((_, text)), Some(more)) = (&mut current, event_text(other)) {
                    text.push_str(&more);
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(footnotes)
}

/// The paragraph being read.
#[derive(Debug, Default)]
struct Paragraph {
    heading: Option<usize>,
    list_id: Option<String>,
    list_level: u32,
    text: String,
}

/// The table being read: rows of cells.
#[derive(Debug, Default)]
struct Table {
    rows: Vec<Vec<String>>,
}

/// The heading level a paragraph style names: `Title` 1, `Heading1`–`Heading6` 1–6.
fn heading_level(style: &str) -> Option<usize> {
    let style = style.to_ascii_lowercase();
    if style == "title" {
        return Some(1);
    }
    let level: usize = style
        .strip_prefix("heading")?
        .trim_start_matches(' ')
        .parse()
        .ok()?;
    (1..=6).contains(&level).then_some(level)
}

/// Reads `word/document.xml` into `pages`.
fn read_body(
    reader: &mut dyn BufRead,
    numbering: &Numbering,
    pages: &mut Pages<'_>,
) -> Result<(), ExtractError> {
    let part = "word/document.xml";
    let mut paragraph = Paragraph::default();
    let mut in_paragraph_properties = false;
    let mut in_text = false;
    let mut skip_depth = 0usize;
    let mut table_depth = 0usize;
    let mut table = Table::default();
    each_event(reader, WHAT, part, |event| {
        if skip_depth > 0 {
            match event {
                Event::Start(_) => skip_depth += 1,
                Event::End(_) => skip_depth -= 1,
                _ => {}
            }
            return Ok(());
        }
        match event {
            Event::Start(e) | Event::Empty(e) => {
                let empty = matches!(event, Event::Empty(_));
                match e.local_name().as_ref() {
                    "Fallback" if !empty => skip_depth = 1,
                    "p" if !empty => paragraph = Paragraph::default(),
                    "pPr" if !empty => in_paragraph_properties = true,
                    "pStyle" if in_paragraph_properties => {
                        paragraph.heading = attribute(e, "w:val").and_then(|s| heading_level(&s));
                    }
                    "ilvl" if in_paragraph_properties => {
                        paragraph.list_level = attribute(e, "w:val")
                            .and_then(|l| l.parse().ok())
                            .unwrap_or(0);
                    }
                    "numId" if in_paragraph_properties => {
                        paragraph.list_id = attribute(e, "w:val").filter(|id| id != "0");
                    }
                    "t" if !empty => in_text = true,
                    "tab" if !in_paragraph_properties => paragraph.text.push(' '),
                    "br" | "cr" => {
                        if attribute(e, "w:type").as_deref() == Some("page") {
                            if table_depth == 0 {
                                pages.page_break(&mut paragraph, numbering)?;
                            }
                        } else {
                            paragraph.text.push('\n');
                        }
                    }
                    "lastRenderedPageBreak" if table_depth == 0 => {
                        pages.page_break(&mut paragraph, numbering)?;
                    }
                    "footnoteReference" => {
                        if let Some(id) = attribute(e, "w:id") {
                            paragraph.text.push_str(&format!("[^{id}]"));
                        }
                    }
                    "tbl" if !empty => {
                        if table_depth == 0 {
                            table = Table::default();
                        }
                        table_depth += 1;
                    }
                    "tr" if !empty && table_depth == 1 => table.rows.push(Vec::new()),
                    "tc" if !empty && table_depth == 1 => {
                        if let Some(row) = table.rows.last_mut() {
                            row.push(String::new());
                        }
                    }
                    _ => {}
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                "pPr" => in_paragraph_properties = false,
                "t" => in_text = false,
                "p" => {
                    let done = std::mem::take(&mut paragraph);
                    if table_depth > 0 {
                        if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                            let text = done.text.split_whitespace().collect::<Vec<_>>().join(" ");
                            if !text.is_empty() {
                                if !cell.is_empty() {
                                    cell.push(' ');
                                }
                                cell.push_str(&text);
                            }
                        }
                    } else {
                        pages.paragraph(done, numbering)?;
                    }
                }
                "tbl" => {
                    table_depth = table_depth.saturating_sub(1);
                    if table_depth == 0 {
                        pages.table(std::mem::take(&mut table))?;
                    }
                }
                _ => {}
            },
            other if in_text => {
                if let Some(text) = event_text(other) {
                    paragraph.text.push_str(&text);
                    pages.check_paragraph(&paragraph)?;
                }
            }
            _ => {}
        }
        Ok(())
    })
}

/// Blocks of Markdown collected into pages and sent as each page ends.
struct Pages<'a> {
    limits: &'a Limits,
    out: &'a mut dyn PageSink,
    assembler: Assembler,
    summary: Summary,
    number: u32,
    lines: Vec<String>,
    bytes: usize,
    last_was_list_item: bool,
}

impl<'a> Pages<'a> {
    fn new(limits: &'a Limits, out: &'a mut dyn PageSink) -> Self {
        Self {
            limits,
            out,
            assembler: Assembler::new(),
            summary: Summary::default(),
            number: 1,
            lines: Vec::new(),
            bytes: 0,
            last_was_list_item: false,
        }
    }

    /// Stops a paragraph that alone is over the page's limit.
    fn check_paragraph(&self, paragraph: &Paragraph) -> Result<(), ExtractError> {
        self.check_page_size(self.bytes + paragraph.text.len())
    }

    fn check_page_size(&self, bytes: usize) -> Result<(), ExtractError> {
        if bytes > self.limits.max_page_chars {
            return Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "page {} holds more than {} characters of text, over the limit for one page",
                    self.number, self.limits.max_page_chars
                ),
            )
            .at_page(self.number));
        }
        Ok(())
    }

    /// Adds a block's lines, after a blank line unless it continues a list.
    fn block(&mut self, block: Vec<String>, list_item: bool) -> Result<(), ExtractError> {
        if block.is_empty() {
            return Ok(());
        }
        let continues_list = list_item && self.last_was_list_item;
        if !self.lines.is_empty() && !continues_list {
            self.lines.push(String::new());
        }
        self.last_was_list_item = list_item;
        for line in block {
            self.bytes += line.len() + 1;
            self.lines.push(line);
        }
        self.check_page_size(self.bytes)
    }

    /// Adds a finished paragraph as a heading, a list item or a paragraph.
    fn paragraph(
        &mut self,
        paragraph: Paragraph,
        numbering: &Numbering,
    ) -> Result<(), ExtractError> {
        let lines: Vec<String> = paragraph
            .text
            .split('\n')
            .map(|l| escape_text_line(l.trim()).into_owned())
            .filter(|l| !l.is_empty())
            .collect();
        if lines.is_empty() {
            return Ok(());
        }
        if let Some(level) = paragraph.heading {
            let heading = format!("{} {}", "#".repeat(level), lines.join(" "));
            return self.block(vec![heading], false);
        }
        if let Some(id) = &paragraph.list_id {
            let level = paragraph.list_level.min(8);
            let indent = "   ".repeat(level as usize);
            let marker = if numbering.is_numbered(id, level) {
                "1. "
            } else {
                "- "
            };
            let block = lines
                .iter()
                .enumerate()
                .map(|(i, line)| {
                    if i == 0 {
                        format!("{indent}{marker}{line}")
                    } else {
                        format!("{indent}{}{line}", " ".repeat(marker.len()))
                    }
                })
                .collect();
            return self.block(block, true);
        }
        self.block(lines, false)
    }

    /// Adds a table: its first row is the header.
    fn table(&mut self, table: Table) -> Result<(), ExtractError> {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return Ok(());
        }
        let row_line = |row: &[String]| {
            let mut line = String::from("|");
            for i in 0..columns {
                let cell = row.get(i).map(|c| table_cell(c)).unwrap_or_default();
                line.push(' ');
                line.push_str(&cell);
                line.push_str(" |");
            }
            line
        };
        let mut block = vec![row_line(&table.rows[0])];
        block.push(format!("|{}", " --- |".repeat(columns)));
        block.extend(table.rows[1..].iter().map(|r| row_line(r)));
        self.block(block, false)
    }

    /// A page break: what is read so far of `paragraph` ends this page (a break on a page with
    /// nothing on it is ignored).
    fn page_break(
        &mut self,
        paragraph: &mut Paragraph,
        numbering: &Numbering,
    ) -> Result<(), ExtractError> {
        if !paragraph.text.trim().is_empty() {
            let before = Paragraph {
                heading: paragraph.heading,
                list_id: paragraph.list_id.clone(),
                list_level: paragraph.list_level,
                text: std::mem::take(&mut paragraph.text),
            };
            self.paragraph(before, numbering)?;
        }
        if self.lines.is_empty() {
            return Ok(());
        }
        self.send(Vec::new())?;
        if self.number >= self.limits.max_pages {
            return Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "the document has more than {} pages, over the limit for one source",
                    self.limits.max_pages
                ),
            ));
        }
        self.number += 1;
        Ok(())
    }

    /// Sends the page read so far, with `after` lines at its end.
    fn send(&mut self, after: Vec<String>) -> Result<(), ExtractError> {
        let content = std::mem::take(&mut self.lines);
        let has_text = !content.is_empty();
        let before = if has_text || !after.is_empty() {
            Vec::new()
        } else {
            vec![no_text_line(false).to_string()]
        };
        self.bytes = 0;
        self.last_was_list_item = false;
        let mut content = content;
        if !after.is_empty() {
            if !content.is_empty() {
                content.push(String::new());
            }
            content.extend(after);
        }
        let page = self.assembler.page(
            Some(self.number),
            None,
            has_text,
            PageBody {
                before,
                content,
                after: Vec::new(),
            },
        );
        self.limits.check_text_size(self.assembler.written())?;
        self.summary
            .count_page(&page, self.assembler.next_line() - 1);
        self.out.progress(self.number, None)?;
        self.out.page(page)
    }

    /// Sends the last page, with the footnotes at its end.
    fn finish(mut self, footnotes: &BTreeMap<u32, String>) -> Result<Summary, ExtractError> {
        let notes: Vec<String> = footnotes
            .iter()
            .map(|(id, text)| escape_text_line(&format!("[^{id}]: {text}")).into_owned())
            .collect();
        self.send(notes)?;
        Ok(self.summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_styles_name_their_level() {
        assert_eq!(heading_level("Title"), Some(1));
        assert_eq!(heading_level("Heading2"), Some(2));
        assert_eq!(heading_level("heading 6"), Some(6));
        assert_eq!(heading_level("Heading7"), None);
        assert_eq!(heading_level("Normal"), None);
    }

    #[test]
    fn table_cells_escape_their_bars() {
        assert_eq!(table_cell("a | b"), "a \\| b");
        assert_eq!(table_cell("| lead"), "\\| lead");
    }
}
