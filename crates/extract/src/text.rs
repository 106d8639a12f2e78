//! Markdown, plain text and JSON: read line by line and kept as they are.
//!
//! - **Markdown** is already the library's format: its lines are kept unchanged (a byte-order
//!   mark dropped, `\r\n` read as `\n`). Its title is the front matter's `title:` or the first
//!   `# ` heading.
//! - **Plain text** keeps its characters: each line is escaped ([`escape_text_line`]) so that
//!   the Markdown shows what the file says rather than lists and emphasis it never meant.
//! - **JSON** goes in a fenced code block (`` ```json ``), so it reads back exactly; a file that
//!   is one line of more than 10 KB (minified) is first pretty-printed by `jsonxf`, which only
//!   re-indents: every value stays byte for byte as written.
//!
//! These files have no pages. They are sent in parts of about 64 KB, cut at a blank line outside
//! a code block where there is one (at most 1 MB each), so memory stays bounded for a file of
//! any size; passages never cross a part. Lines are read with a bound
//! ([`Limits::max_line_bytes`]): a file that is one endless line stops with a `limit` error
//! instead of filling memory.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek};
use std::path::Path;

use crate::detect::Kind;
use crate::error::{human_bytes, ErrorKind, ExtractError};
use crate::limits::Limits;
use crate::markdown::{escape_text_line, Assembler, PageBody};
use crate::output::{Extractor, PageSink, SourceMeta, Summary};
use crate::EXTRACTOR_VERSION;

/// A part is sent once it has this many bytes and reaches a blank line.
const PART_TARGET: usize = 64 * 1024;

/// A part is sent at this size even without a blank line.
const PART_MAX: usize = 1024 * 1024;

/// JSON on one line longer than this is pretty-printed.
const ONE_LINE_JSON: u64 = 10 * 1024;

/// Reads Markdown, text and JSON files (see the module docs).
#[derive(Debug, Clone)]
pub struct TextExtractor {
    kind: Kind,
}

impl TextExtractor {
    /// A reader for `kind`: [`Kind::Markdown`], [`Kind::Text`] or [`Kind::Json`].
    pub fn new(kind: Kind) -> Self {
        Self { kind }
    }
}

impl Extractor for TextExtractor {
    fn extract(
        &self,
        file: &Path,
        limits: &Limits,
        out: &mut dyn PageSink,
    ) -> Result<Summary, ExtractError> {
        let open = || File::open(file).map_err(|e| ExtractError::io("open the file", &e));
        let size = crate::file_size(file)?;
        let title = if self.kind == Kind::Markdown {
            let mut head = Vec::new();
            open()?
                .take(64 * 1024)
                .read_to_end(&mut head)
                .map_err(|e| ExtractError::io("read the file", &e))?;
            markdown_title(&String::from_utf8_lossy(&head))
        } else {
            None
        };
        out.meta(&SourceMeta {
            kind: self.kind.clone(),
            mime: self.kind.mime().to_string(),
            size,
            pages: None,
            title,
            author: None,
            extractor: format!("text; artifactflow-extract {EXTRACTOR_VERSION}"),
        })?;
        let reader: Box<dyn BufRead> =
            if self.kind == Kind::Json && is_one_long_line(open()?, size)? {
                let mut pretty = tempfile::tempfile()
                    .map_err(|e| ExtractError::io("make a temporary file", &e))?;
                match jsonxf::pretty_print_stream(&mut BufReader::new(open()?), &mut pretty) {
                    Ok(()) => {
                        pretty
                            .rewind()
                            .map_err(|e| ExtractError::io("read back the temporary file", &e))?;
                        Box::new(BufReader::new(pretty))
                    }
                    Err(_) => Box::new(BufReader::new(open()?)),
                }
            } else {
                Box::new(BufReader::new(open()?))
            };
        write_parts(reader, &self.kind, limits, out)
    }
}

/// Reads `reader` line by line and sends it in parts (see the module docs).
pub(crate) fn write_parts(
    mut reader: Box<dyn BufRead>,
    kind: &Kind,
    limits: &Limits,
    out: &mut dyn PageSink,
) -> Result<Summary, ExtractError> {
    let json = *kind == Kind::Json;
    let mut assembler = Assembler::new();
    let mut summary = Summary::default();
    let mut part: Vec<String> = Vec::new();
    let mut part_bytes = 0usize;
    let mut in_fence = false;
    let mut line_number = 0u64;
    let mut buf = Vec::new();
    let mut send = |part: &mut Vec<String>, last: bool, summary: &mut Summary| {
        let first = summary.pages == 0;
        if part.is_empty() && !(json && first && last) {
            return Ok(());
        }
        let has_text = part.iter().any(|l| !l.trim().is_empty());
        let body = PageBody {
            before: if json && first {
                vec!["```json".into()]
            } else {
                Vec::new()
            },
            content: std::mem::take(part),
            after: if json && last {
                vec!["```".into()]
            } else {
                Vec::new()
            },
        };
        let page = assembler.page(None, None, has_text, body);
        limits.check_text_size(assembler.written())?;
        summary.count_page(&page, assembler.next_line() - 1);
        out.page(page)
    };
    loop {
        buf.clear();
        let read = (&mut reader)
            .take(limits.max_line_bytes as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| ExtractError::io("read the file", &e))?;
        if read == 0 {
            break;
        }
        line_number += 1;
        if buf.len() > limits.max_line_bytes && !buf.ends_with(b"\n") {
            return Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "line {line_number} is longer than {}, over the limit for one line",
                    human_bytes(limits.max_line_bytes as u64)
                ),
            ));
        }
        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            buf.pop();
        }
        let mut text = String::from_utf8_lossy(&buf).into_owned();
        if line_number == 1 {
            if let Some(rest) = text.strip_prefix('\u{FEFF}') {
                text = rest.to_string();
            }
        }
        let line = if *kind == Kind::Text {
            escape_text_line(&text).into_owned()
        } else {
            text
        };
        if *kind == Kind::Markdown {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
            }
        }
        let blank = line.trim().is_empty();
        part_bytes += line.len() + 1;
        part.push(line);
        let full =
            part_bytes >= PART_MAX || (part_bytes >= PART_TARGET && (json || (blank && !in_fence)));
        if full {
            let at_end = reader
                .fill_buf()
                .map_err(|e| ExtractError::io("read the file", &e))?
                .is_empty();
            if !at_end {
                send(&mut part, false, &mut summary)?;
                part_bytes = 0;
            }
        }
    }
    send(&mut part, true, &mut summary)?;
    Ok(summary)
}

/// Whether a file of `size` bytes is one line longer than [`ONE_LINE_JSON`] (a line break at
/// its very end aside).
fn is_one_long_line(file: File, size: u64) -> Result<bool, ExtractError> {
    if size <= ONE_LINE_JSON {
        return Ok(false);
    }
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut offset = 0u64;
    loop {
        let chunk = reader
            .fill_buf()
            .map_err(|e| ExtractError::io("read the file", &e))?;
        if chunk.is_empty() {
            return Ok(true);
        }
        if let Some(at) = chunk.iter().position(|b| *b == b'\n') {
            return Ok(offset + at as u64 + 2 >= size);
        }
        let len = chunk.len();
        offset += len as u64;
        reader.consume(len);
    }
}

/// A Markdown file's title: its front matter's `title:`, else its first `# ` heading.
pub fn markdown_title(head: &str) -> Option<String> {
    let unquote = |s: &str| s.trim().trim_matches(['"', '\'']).trim().to_string();
    let mut lines = head.lines();
    if head.starts_with("---") {
        lines.next();
        for line in lines.by_ref() {
            if line.trim_end() == "---" || line.trim_end() == "..." {
                break;
            }
            if let Some(title) = line.strip_prefix("title:") {
                return Some(unquote(title)).filter(|t| !t.is_empty());
            }
        }
    }
    let mut in_fence = false;
    for line in lines.take(200) {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        } else if !in_fence {
            if let Some(title) = trimmed.strip_prefix("# ") {
                return Some(title.trim().trim_end_matches('#').trim().to_string())
                    .filter(|t| !t.is_empty());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_titles_come_from_front_matter_or_the_first_heading() {
        assert_eq!(
            markdown_title("---\ntitle: \"Field notes\"\n---\n# Other\n"),
            Some("Field notes".into())
        );
        assert_eq!(
            markdown_title("Intro\n```\n# not this\n```\n# Real title #\n"),
            Some("Real title".into())
        );
        assert_eq!(markdown_title("no heading\n## second level\n"), None);
    }
}
