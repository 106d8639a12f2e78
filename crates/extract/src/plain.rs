//! The text of a source without its markup, as an extraction benchmark compares it.
//!
//! [`plain_text`] reads the Markdown with pulldown-cmark and keeps only the words: no emphasis
//! marks, link syntax or escapes, and no HTML (so no page markers, running headers and footers
//! or other comments). Lines within a paragraph stay lines; blocks within a page are separated
//! by a blank line; pages follow each other with a single line break, as pages' texts are
//! joined for scoring.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// `markdown` as plain text: its words without markup, page markers or marked running lines.
pub fn plain_text(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut out = String::with_capacity(markdown.len());
    // Whether the last block was HTML (a page marker or a running line): the next block then
    // follows with no blank line between.
    let mut after_html = true;
    let mut in_table_row = false;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(Tag::HtmlBlock) => after_html = true,
            Event::Start(
                Tag::Paragraph
                | Tag::Heading { .. }
                | Tag::CodeBlock(_)
                | Tag::Table(_)
                | Tag::List(_),
            ) => {
                if !out.is_empty() {
                    end_line(&mut out);
                    if !after_html {
                        out.push('\n');
                    }
                }
                after_html = false;
            }
            Event::Start(Tag::Item) => {
                if !out.is_empty() {
                    end_line(&mut out);
                }
                after_html = false;
            }
            Event::Start(Tag::TableRow | Tag::TableHead) => {
                end_line(&mut out);
                in_table_row = true;
            }
            Event::End(TagEnd::TableCell) if in_table_row => out.push('\t'),
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => {
                if out.ends_with('\t') {
                    out.pop();
                }
                in_table_row = false;
            }
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::CodeBlock
                | TagEnd::Table
                | TagEnd::Item,
            ) => end_line(&mut out),
            Event::Text(text) | Event::Code(text) => out.push_str(&text),
            Event::SoftBreak | Event::HardBreak => out.push('\n'),
            _ => {}
        }
    }
    end_line(&mut out);
    if out == "\n" {
        out.clear();
    }
    out
}

/// Ends the current line unless it is already ended.
fn end_line(out: &mut String) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::escape_text_line;

    #[test]
    fn markup_markers_and_running_lines_are_left_out() {
        let markdown = "<!-- page 1 -->\n<!-- running header: ACME -->\nFirst *line*.\nSecond \
                        line with a [link](https://example.org).\n<!-- running footer: 1 -->\n\n\
                        <!-- page 2 (ii) -->\nPage two.\n\n";
        assert_eq!(
            plain_text(markdown),
            "First line.\nSecond line with a link.\nPage two.\n"
        );
    }

    #[test]
    fn escaped_text_reads_back_as_written() {
        let lines = [
            "1. not a list",
            "# not a heading",
            "a *b* c and snake_case, _x_",
            "AT&T &amp; <b>",
            "- dash",
            "<!-- page 9 -->",
        ];
        let markdown: String = lines
            .iter()
            .map(|l| format!("{}\n", escape_text_line(l)))
            .collect();
        assert_eq!(plain_text(&markdown), lines.join("\n") + "\n");
    }

    #[test]
    fn blocks_of_markdown_keep_a_blank_line_between_them() {
        let markdown = "# Title\n\nA paragraph\nof two lines.\n\n- one\n- two\n\n```\ncode\n```\n";
        assert_eq!(
            plain_text(markdown),
            "Title\n\nA paragraph\nof two lines.\n\none\ntwo\n\ncode\n"
        );
    }
}
