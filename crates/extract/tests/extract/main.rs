//! Extraction of real files made by code: PDFs through the real pdfium (the library
//! `scripts/setup.sh` unpacks to `target/pdfium/`), Markdown, text and JSON, and the worker
//! binary as a child process for the hostile files (encrypted, truncated, cyclic and deep page
//! trees) so that a crash there could only end the worker, never this test process.

mod docx;
mod epub;
mod fixtures;
mod html;
mod ooxml;
mod pdf;
mod pptx;
mod sheet;
mod text;
mod worker;

use std::path::Path;

use artifactflow_extract::{extract, Collected, ExtractError, Limits};

/// Reads `path` in this process with the default limits, keeping everything.
pub fn read(path: &Path) -> Result<Collected, ExtractError> {
    read_within(path, &Limits::default())
}

/// Reads `path` in this process within `limits`, keeping everything.
pub fn read_within(path: &Path, limits: &Limits) -> Result<Collected, ExtractError> {
    let mut collected = Collected::default();
    extract(path, limits, &mut collected)?;
    Ok(collected)
}

/// The Markdown's lines, for line-number checks (line `n` is `lines[n - 1]`).
pub fn lines_of(markdown: &str) -> Vec<&str> {
    markdown.lines().collect()
}

/// Checks what every result must satisfy: the pages' parts join into the Markdown with no gap,
/// each page starts where the one before ended, and every passage's text stands in the lines
/// it names, within its own page, starting on its first line and ending on its last.
pub fn assert_consistent(collected: &Collected) {
    let markdown = collected.markdown();
    let lines = lines_of(&markdown);
    let mut next_line = 1;
    for page in &collected.pages {
        assert_eq!(
            page.first_line, next_line,
            "page {:?} starts where the last ended",
            page.page
        );
        assert_eq!(page.markdown.lines().count() as u32, page.line_count);
        next_line += page.line_count;
        let page_end = page.first_line + page.line_count - 1;
        for passage in &page.passages {
            assert_eq!(passage.page, page.page);
            assert!(
                passage.line_first >= page.first_line && passage.line_last <= page_end,
                "passage {passage:?} stays on page {:?} (lines {}–{page_end})",
                page.page,
                page.first_line
            );
            let first = lines[passage.line_first as usize - 1];
            let last = lines[passage.line_last as usize - 1];
            let spanned =
                lines[passage.line_first as usize - 1..passage.line_last as usize].join("\n");
            assert!(
                spanned.contains(&passage.text),
                "passage {passage:?} is in lines {spanned:?}"
            );
            let first_words: String = passage.text.lines().next().unwrap_or("").to_string();
            let last_words: String = passage.text.lines().last().unwrap_or("").to_string();
            assert!(
                first.contains(&first_words),
                "passage starts on line {}",
                passage.line_first
            );
            assert!(
                last.contains(&last_words),
                "passage ends on line {}",
                passage.line_last
            );
            assert!(
                !passage.text.lines().any(|l| l.starts_with("<!--")),
                "no marker or running line in {passage:?}"
            );
        }
    }
    assert_eq!(
        next_line - 1,
        lines.len() as u32,
        "the pages' lines are all the Markdown's"
    );
}
