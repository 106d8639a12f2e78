//! The Markdown a source becomes: page markers, marked lines, and text that stays as written.
//!
//! A paged file's Markdown is one block per page:
//!
//! ```text
//! <!-- page 7 (vii) -->
//! <!-- running header: ACME Quarterly Report -->
//! The page's text, line by line, as it was read.
//! <!-- running footer: Page 7 of 40 -->
//!
//! ```
//!
//! The marker names the 1-based page and, in parentheses, the page's label when the file gives
//! one that is not its number. Lines that repeat on most pages are kept as comments, so the
//! Markdown still shows them but search and plain text leave them out. Each block ends with a
//! blank line. A presentation's markers name slides (`<!-- slide 3 -->`, [`Unit::Slide`]);
//! slide 3 is page 3 for citations. A file without pages has no markers.
//!
//! Text that is not Markdown (a PDF's text, a `.txt` file) is escaped line by line
//! ([`escape_text_line`]) so that a line starting "1." or "# " or holding `*stars*` reads back
//! as the same characters, not as a list, a heading or emphasis; and a text can never forge a
//! page marker. [`Assembler`] numbers the lines and cuts each page's text into passages.

use std::borrow::Cow;

use text_splitter::{ChunkConfig, MarkdownSplitter};

use crate::output::{Page, Passage};

/// The smallest and largest passage, in characters.
pub const PASSAGE_CHARS: std::ops::Range<usize> = 600..1200;

/// What a file's pages are called in its markers: a presentation's pages are its slides.
/// Either way slide 3 is page 3 for citations and [`Page::page`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// `<!-- page 7 -->`.
    #[default]
    Page,
    /// `<!-- slide 7 -->`.
    Slide,
    /// `<!-- sheet 2 (Budget) -->`: a workbook's sheet, labelled with its name.
    Sheet,
    /// `<!-- chapter 3 -->`: an item of a book's reading order.
    Chapter,
}

impl Unit {
    /// The marker's word for it.
    pub fn word(self) -> &'static str {
        match self {
            Unit::Page => "page",
            Unit::Slide => "slide",
            Unit::Sheet => "sheet",
            Unit::Chapter => "chapter",
        }
    }
}

/// The marker line that starts page `number`: `<!-- page 7 -->`, or `<!-- page 7 (vii) -->`
/// when the page's label is not its number.
pub fn page_marker(number: u32, label: Option<&str>) -> String {
    unit_marker(Unit::Page, number, label)
}

/// [`page_marker`] for a file whose pages are `unit`s: `<!-- slide 3 -->`.
pub fn unit_marker(unit: Unit, number: u32, label: Option<&str>) -> String {
    let word = unit.word();
    match label {
        Some(label) if label != number.to_string() => {
            format!("<!-- {word} {number} ({}) -->", comment_safe(label))
        }
        _ => format!("<!-- {word} {number} -->"),
    }
}

/// The page number and label of a [`page_marker`] or [`unit_marker`] line (slide N is page N),
/// or `None` for any other line.
pub fn parse_page_marker(line: &str) -> Option<(u32, Option<String>)> {
    let after = line.trim_end().strip_prefix("<!-- ")?;
    let inner = after
        .strip_prefix("page ")
        .or_else(|| after.strip_prefix("slide "))
        .or_else(|| after.strip_prefix("sheet "))
        .or_else(|| after.strip_prefix("chapter "))?
        .strip_suffix(" -->")?;
    let (number, label) = match inner.split_once(' ') {
        Some((number, rest)) => {
            let label = rest.strip_prefix('(')?.strip_suffix(')')?;
            (number, Some(label.to_string()))
        }
        None => (inner, None),
    };
    Some((number.parse().ok()?, label))
}

/// Where on the page a repeated line was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// At the top.
    Header,
    /// At the bottom.
    Footer,
}

/// The comment that keeps a repeated line: `<!-- running header: … -->`.
pub fn running_line(edge: Edge, text: &str) -> String {
    let what = match edge {
        Edge::Header => "header",
        Edge::Footer => "footer",
    };
    format!("<!-- running {what}: {} -->", comment_safe(text.trim()))
}

/// The comment that stands in for a page with no text on it.
pub fn no_text_line(scanned: bool) -> &'static str {
    if scanned {
        "<!-- no text on this page: scanned (an image of the page) -->"
    } else {
        "<!-- no text on this page: blank -->"
    }
}

/// `text` made safe inside an HTML comment on one line.
fn comment_safe(text: &str) -> String {
    text.replace(['\n', '\r'], " ").replace("-->", "-- >")
}

/// One line of text made into Markdown that reads back as the same characters: the characters
/// that start Markdown syntax get a backslash (`\*`, `1\.`, `\#`, `\<`…), trailing white space
/// (a hard line break in Markdown) is dropped.
pub fn escape_text_line(line: &str) -> Cow<'_, str> {
    let line = line.trim_end();
    let needs = line.bytes().any(|b| {
        matches!(
            b,
            b'\\'
                | b'`'
                | b'*'
                | b'_'
                | b'['
                | b']'
                | b'<'
                | b'&'
                | b'~'
                | b'#'
                | b'>'
                | b'-'
                | b'+'
                | b'='
                | b'.'
                | b')'
                | b'|'
        )
    });
    if !needs {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    let indent = line.len() - line.trim_start().len();
    out.push_str(&line[..indent]);
    let body = &line[indent..];
    let mut rest = body;
    // Block syntax at the start of the line.
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=9).contains(&digits) && matches!(body.as_bytes().get(digits), Some(b'.' | b')')) {
        out.push_str(&body[..digits]);
        out.push('\\');
        rest = &body[digits..];
    } else if matches!(
        body.as_bytes().first(),
        Some(b'#' | b'>' | b'-' | b'+' | b'=' | b'|')
    ) {
        out.push('\\');
    }
    let chars: Vec<char> = rest.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let escape = match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '~' => true,
            // Inside a word (snake_case) an underscore is no emphasis.
            '_' => {
                let before = i.checked_sub(1).map(|j| chars[j]);
                let after = chars.get(i + 1).copied();
                !(before.is_some_and(char::is_alphanumeric)
                    && after.is_some_and(char::is_alphanumeric))
            }
            // Only "&name;" and "&#…;" would be read as an entity.
            '&' => {
                let name = chars[i + 1..]
                    .iter()
                    .take_while(|n| n.is_ascii_alphanumeric() || **n == '#')
                    .count();
                name > 0 && chars.get(i + 1 + name) == Some(&';')
            }
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// A table cell's text as Markdown: on one line, escaped, with `|` escaped everywhere.
pub fn table_cell(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let escaped = escape_text_line(&one_line);
    let mut cell = String::with_capacity(escaped.len());
    let mut previous = '\0';
    for c in escaped.chars() {
        if c == '|' && previous != '\\' {
            cell.push('\\');
        }
        cell.push(c);
        previous = c;
    }
    cell
}

/// A page's lines, split into what is marked (kept as comments, left out of passages) and its
/// content.
#[derive(Debug, Default, Clone)]
pub struct PageBody {
    /// Lines written before the content (already Markdown: comments, an opening fence).
    pub before: Vec<String>,
    /// The content lines (already Markdown).
    pub content: Vec<String>,
    /// Lines written after the content (already Markdown).
    pub after: Vec<String>,
}

/// Numbers the lines of the Markdown as pages are added, and cuts each page's content into
/// passages that never cross a page.
pub struct Assembler {
    unit: Unit,
    next_line: u32,
    splitter: MarkdownSplitter<text_splitter::Characters>,
    written: u64,
}

impl Default for Assembler {
    fn default() -> Self {
        Self::new()
    }
}

impl Assembler {
    /// An assembler at line 1.
    pub fn new() -> Self {
        Self::for_unit(Unit::Page)
    }

    /// An assembler at line 1 whose markers name `unit`s (`<!-- slide 3 -->`).
    pub fn for_unit(unit: Unit) -> Self {
        Self {
            unit,
            next_line: 1,
            splitter: MarkdownSplitter::new(ChunkConfig::new(PASSAGE_CHARS)),
            written: 0,
        }
    }

    /// Bytes of Markdown made so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The next line's number.
    pub fn next_line(&self) -> u32 {
        self.next_line
    }

    /// Page `number` (with its marker and a closing blank line) or, for `None`, a part of a file
    /// without pages (its lines only).
    pub fn page(
        &mut self,
        number: Option<u32>,
        label: Option<String>,
        has_text: bool,
        body: PageBody,
    ) -> Page {
        let first_line = self.next_line;
        let marker = number.map(|n| unit_marker(self.unit, n, label.as_deref()));
        let content_first_line =
            first_line + u32::from(marker.is_some()) + body.before.len() as u32;
        let closing_blank = number.map(|_| String::new());
        let content = body.content.join("\n");
        let lines: Vec<&String> = marker
            .iter()
            .chain(&body.before)
            .chain(&body.content)
            .chain(&body.after)
            .chain(&closing_blank)
            .collect();
        let mut markdown = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in &lines {
            markdown.push_str(line);
            markdown.push('\n');
        }
        let lines = lines.len() as u32;
        let passages = passages(&self.splitter, &content, content_first_line, number);
        self.next_line += lines;
        self.written += markdown.len() as u64;
        Page {
            page: number,
            label: label.filter(|l| number.is_none_or(|n| *l != n.to_string())),
            first_line,
            line_count: lines,
            has_text,
            markdown,
            passages,
        }
    }
}

/// `content` (lines joined by `\n`, its first line being line `first_line` of the Markdown)
/// cut into passages of [`PASSAGE_CHARS`] at Markdown's own boundaries (headings, paragraphs,
/// sentences), each with the lines it spans.
pub fn passages(
    splitter: &MarkdownSplitter<text_splitter::Characters>,
    content: &str,
    first_line: u32,
    page: Option<u32>,
) -> Vec<Passage> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(content.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |offset: usize| -> u32 {
        let index = line_starts.partition_point(|&start| start <= offset) - 1;
        first_line + index as u32
    };
    splitter
        .chunk_indices(content)
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(offset, text)| {
            let last_byte = offset + text.len() - 1;
            Passage {
                page,
                line_first: line_of(offset),
                line_last: line_of(last_byte),
                text: text.to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_name_the_page_and_a_label_that_is_not_its_number() {
        assert_eq!(page_marker(7, None), "<!-- page 7 -->");
        assert_eq!(page_marker(7, Some("7")), "<!-- page 7 -->");
        assert_eq!(page_marker(7, Some("vii")), "<!-- page 7 (vii) -->");
        assert_eq!(
            parse_page_marker("<!-- page 7 (vii) -->"),
            Some((7, Some("vii".into())))
        );
        assert_eq!(parse_page_marker("<!-- page 12 -->"), Some((12, None)));
        assert_eq!(unit_marker(Unit::Slide, 3, None), "<!-- slide 3 -->");
        assert_eq!(parse_page_marker("<!-- slide 3 -->"), Some((3, None)));
        assert_eq!(parse_page_marker("<!-- running header: x -->"), None);
        assert_eq!(parse_page_marker("page 7"), None);
    }

    #[test]
    fn text_that_looks_like_markdown_is_escaped() {
        assert_eq!(
            escape_text_line("Plain words, no syntax"),
            "Plain words, no syntax"
        );
        assert_eq!(escape_text_line("1. first item"), "1\\. first item");
        assert_eq!(escape_text_line("# not a heading"), "\\# not a heading");
        assert_eq!(escape_text_line("- not a list"), "\\- not a list");
        assert_eq!(escape_text_line("a *b* c"), "a \\*b\\* c");
        assert_eq!(
            escape_text_line("snake_case and _emph_"),
            "snake_case and \\_emph\\_"
        );
        assert_eq!(escape_text_line("AT&T &amp; co"), "AT&T \\&amp; co");
        assert_eq!(escape_text_line("<!-- page 3 -->"), "\\<!-- page 3 -->");
        assert_eq!(escape_text_line("trailing  "), "trailing");
    }

    #[test]
    fn passages_are_located_by_line_and_stay_on_their_page() {
        let mut assembler = Assembler::new();
        let long_line = "word ".repeat(300);
        let body = PageBody {
            before: vec![running_line(Edge::Header, "Header")],
            content: vec![
                "First.".into(),
                long_line.trim().into(),
                "Last line.".into(),
            ],
            after: vec![],
        };
        let page = assembler.page(Some(1), None, true, body);
        assert_eq!(page.first_line, 1);
        assert_eq!(page.line_count, 6);
        let lines: Vec<&str> = page.markdown.lines().collect();
        assert_eq!(lines[0], "<!-- page 1 -->");
        assert!(page.passages.len() >= 2, "{:?}", page.passages);
        for passage in &page.passages {
            let spanned =
                lines[passage.line_first as usize - 1..passage.line_last as usize].join("\n");
            assert!(spanned.contains(&passage.text), "{passage:?}");
            assert!(
                passage.line_first >= 3,
                "the header is not in a passage: {passage:?}"
            );
        }
        let next = assembler.page(Some(2), Some("ii".into()), true, PageBody::default());
        assert_eq!(next.first_line, 7);
        assert_eq!(next.label.as_deref(), Some("ii"));
        assert!(next.passages.is_empty());
    }
}
