//! The `<artifact_slice>` envelope that read_artifact and oversized-result previews return.
//!
//! ```text
//! <artifact_slice id="notes" version="2" content_type="text/markdown" total_lines="840" shown_lines="1-200" has_more="true" truncated_by="limit">
//! …raw lines, exactly as stored…
//! </artifact_slice>
//! To continue: read_artifact(id='notes', offset=201)
//! ```
//! The body is the raw text (not escaped, no line numbers) so the model can quote it back as
//! `old_str`. A newline is added before the closing tag only when the body does not end with one.

use super::store::LinePage;

/// Escape a value for an attribute.
fn attr(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// The attributes of one slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceHeader<'a> {
    /// Artifact id.
    pub id: &'a str,
    /// Version shown.
    pub version: i64,
    /// Its content type.
    pub content_type: &'a str,
    /// Lines in that version.
    pub total_lines: usize,
    /// `"a-b"`, or `"none"` when no line is shown.
    pub shown_lines: String,
    /// Are there lines after the slice?
    pub has_more: bool,
    /// `none`, `limit`, `max_chars` or `preview`.
    pub truncated_by: &'a str,
}

/// Wrap `body` in an `<artifact_slice>` element.
pub fn envelope(h: &SliceHeader<'_>, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 256);
    out.push_str(&format!(
        "<artifact_slice id=\"{}\" version=\"{}\" content_type=\"{}\" total_lines=\"{}\" shown_lines=\"{}\" has_more=\"{}\" truncated_by=\"{}\">\n",
        attr(h.id),
        h.version,
        attr(h.content_type),
        h.total_lines,
        h.shown_lines,
        h.has_more,
        h.truncated_by
    ));
    out.push_str(body);
    if !body.is_empty() && !body.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("</artifact_slice>");
    out
}

/// Where a read of one page of a source (`read_artifact` with `page`) stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageAt {
    /// The page read.
    pub page: i64,
    /// How many pages the source has.
    pub pages: i64,
    /// The page's last line.
    pub last_line: usize,
}

/// read_artifact's output for one page, with the continue hint when there is more.
pub fn render_page(page: &LinePage, explicit_version: bool) -> String {
    render(page, explicit_version, None)
}

/// read_artifact's output for lines of one page of a source: the slice says which page of how
/// many, and the hint reads on in the page, then the next page.
pub fn render_source_page(page: &LinePage, explicit_version: bool, at: PageAt) -> String {
    render(page, explicit_version, Some(at))
}

fn render(page: &LinePage, explicit_version: bool, at: Option<PageAt>) -> String {
    let a = &page.artifact;
    let shown = if page.lines_shown == 0 {
        "none".to_string()
    } else {
        format!(
            "{}-{}",
            page.first_line,
            page.first_line + page.lines_shown - 1
        )
    };
    let mut out = envelope(
        &SliceHeader {
            id: &a.id,
            version: a.version,
            content_type: &a.content_type,
            total_lines: page.total_lines,
            shown_lines: shown,
            has_more: page.has_more(),
            truncated_by: page.truncated_by.as_str(),
        },
        &page.text,
    );
    if let Some(at) = at {
        // The opening tag ends at the first `">` (attribute values have `"` escaped).
        if let Some(end) = out.find("\">") {
            out.insert_str(
                end + 1,
                &format!(" page=\"{}\" pages=\"{}\"", at.page, at.pages),
            );
        }
    }
    if let Some(line) = page.cut_line {
        out.push_str(&format!(
            "\nLine {line} alone is longer than the read cap and was cut; use grep_artifact to find text inside it."
        ));
    }
    let version = if explicit_version {
        format!(", version={}", a.version)
    } else {
        String::new()
    };
    let rest_of_page =
        at.is_some_and(|at| page.lines_shown > 0 && page.next_offset() <= at.last_line);
    match at {
        Some(at) if !rest_of_page => {
            if at.page < at.pages {
                out.push_str(&format!(
                    "\nNext page: read_artifact(id='{}'{version}, page={})",
                    a.id,
                    at.page + 1
                ));
            }
            return out;
        }
        _ => {}
    }
    if page.has_more() {
        out.push_str(&format!(
            "\nTo continue: read_artifact(id='{}'{version}, offset={})",
            a.id,
            page.next_offset()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_escapes_attributes_and_keeps_the_body_raw() {
        let s = envelope(
            &SliceHeader {
                id: "a\"b",
                version: 1,
                content_type: "text/plain",
                total_lines: 1,
                shown_lines: "1-1".into(),
                has_more: false,
                truncated_by: "none",
            },
            "x < \"y\"",
        );
        assert_eq!(
            s,
            "<artifact_slice id=\"a&quot;b\" version=\"1\" content_type=\"text/plain\" total_lines=\"1\" shown_lines=\"1-1\" has_more=\"false\" truncated_by=\"none\">\nx < \"y\"\n</artifact_slice>"
        );
    }
}
