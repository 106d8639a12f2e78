//! Citations of the user's sources: the handles a call retrieved, and the citations an answer
//! makes, checked against them.
//!
//! One documented form, which `search_library` prints beside each passage and the lead agent
//! is told to copy: `[cite: src_3f2a9c1b7d4e, p. 7]`, optionally with `, lines 120-134`; a
//! source without pages is cited by lines alone (`[cite: src_…, lines 4-9]`). Readers are
//! lenient about spacing, `page 7` for `p. 7` and an en dash in the line range, since models
//! copy loosely; anything else is left as prose.
//!
//! A call that read or found passages of a source keeps their handles in its record
//! (`tool_calls.citations`). A citation is **verified** when a call of the same conversation,
//! made before the answer, retrieved that source at that page (and those lines, when it names
//! lines); otherwise the answer cites something the agent never read, and the chat says so.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// A passage a call retrieved: what a citation of it points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CitationHandle {
    /// The source's id (`src_…`).
    pub artifact_id: String,
    /// Its title.
    pub title: String,
    /// The page, in paged files.
    pub page: Option<i64>,
    /// The passage's first line in the source's Markdown.
    pub line_first: i64,
    /// Its last line (inclusive).
    pub line_last: i64,
}

impl CitationHandle {
    /// The citation to write for this passage, in the documented form.
    pub fn marker(&self) -> String {
        match self.page {
            Some(page) => format!("[cite: {}, p. {page}]", self.artifact_id),
            None => format!(
                "[cite: {}, lines {}-{}]",
                self.artifact_id, self.line_first, self.line_last
            ),
        }
    }
}

/// A citation an answer makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Citation {
    /// Its text exactly as written in the answer (the chat shows a chip in its place).
    pub marker: String,
    /// The source it names.
    pub artifact_id: String,
    /// The source's title, when the source is known (retrieved, or in the library).
    pub title: Option<String>,
    /// The page it names.
    pub page: Option<i64>,
    /// The first line it names; with `page`, the retrieved passage's lines on that page.
    pub line_first: Option<i64>,
    /// The last line it names (inclusive).
    pub line_last: Option<i64>,
    /// A call of this conversation, made before the answer, retrieved that passage.
    pub verified: bool,
}

static CITE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\[\s*cite:\s*([A-Za-z0-9_.\-]+)\s*(?:,\s*(?:p\.|pp\.|page)\s*(\d{1,7}))?\s*(?:,\s*(?:lines?|l\.|ll\.)\s*(\d{1,9})(?:\s*[-–]\s*(\d{1,9}))?)?\s*\]",
    )
    .expect("citation pattern")
});

/// Whether `text` holds anything in the citation form (a cheap test before reading calls).
pub fn may_cite(text: &str) -> bool {
    CITE.is_match(text)
}

/// The citations in `text`, each once (the first time it is written), checked against the
/// handles `retrieved` before it. `title_of` names a source that was not retrieved.
pub fn cited(
    text: &str,
    retrieved: &[CitationHandle],
    title_of: &mut dyn FnMut(&str) -> Option<String>,
) -> Vec<Citation> {
    let mut out: Vec<Citation> = Vec::new();
    for caps in CITE.captures_iter(text) {
        let marker = caps[0].to_string();
        if out.iter().any(|c| c.marker == marker) {
            continue;
        }
        let number = |i: usize| caps.get(i).and_then(|m| m.as_str().parse::<i64>().ok());
        let artifact_id = caps[1].to_string();
        let page = number(2);
        let mut line_first = number(3);
        let mut line_last = number(4).or(line_first);
        if let (Some(a), Some(b)) = (line_first, line_last) {
            if b < a {
                (line_first, line_last) = (Some(b), Some(a));
            }
        }
        let matching = retrieved.iter().find(|h| {
            h.artifact_id == artifact_id
                && (page.is_none() || h.page == page)
                && match (line_first, line_last) {
                    (Some(a), Some(b)) => a <= h.line_last && h.line_first <= b,
                    _ => page.is_some() || h.page.is_none(),
                }
        });
        let title =
            match matching.or_else(|| retrieved.iter().find(|h| h.artifact_id == artifact_id)) {
                Some(h) => Some(h.title.clone()),
                None => title_of(&artifact_id),
            };
        // A page citation points at the passage retrieved there, so the library can highlight
        // it; a citation by lines keeps its own.
        if line_first.is_none() {
            if let Some(h) = matching {
                line_first = Some(h.line_first);
                line_last = Some(h.line_last);
            }
        }
        out.push(Citation {
            marker,
            artifact_id,
            title,
            page,
            line_first,
            line_last,
            verified: matching.is_some(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(id: &str, page: Option<i64>, lines: (i64, i64)) -> CitationHandle {
        CitationHandle {
            artifact_id: id.into(),
            title: format!("Title of {id}"),
            page,
            line_first: lines.0,
            line_last: lines.1,
        }
    }

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_retrieved_page_is_verified_and_points_at_its_passage() {
        let got = handle("src_aaaaaaaaaaaa", Some(7), (120, 134));
        let text = "Revenue rose 12% [cite: src_aaaaaaaaaaaa, p. 7], see also [cite: src_aaaaaaaaaaaa, p. 9].";
        let c = cited(text, std::slice::from_ref(&got), &mut none);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].marker, got.marker());
        assert!(c[0].verified);
        assert_eq!(c[0].title.as_deref(), Some("Title of src_aaaaaaaaaaaa"));
        assert_eq!((c[0].line_first, c[0].line_last), (Some(120), Some(134)));
        assert_eq!(c[1].page, Some(9));
        assert!(!c[1].verified, "page 9 was never retrieved");
        assert_eq!(c[1].title.as_deref(), Some("Title of src_aaaaaaaaaaaa"));
    }

    #[test]
    fn loose_spellings_are_read_and_repeats_are_listed_once() {
        let got = [
            handle("src_b", Some(3), (10, 20)),
            handle("src_c", None, (4, 9)),
        ];
        let text = "A [Cite: src_b, page 3] B [cite:src_b,page 3] C [cite: src_c, lines 5–6] D [cite: src_b, p. 3] E [cite: src_b, p. 3]";
        let c = cited(text, &got, &mut none);
        let markers: Vec<_> = c.iter().map(|c| c.marker.as_str()).collect();
        assert_eq!(
            markers,
            [
                "[Cite: src_b, page 3]",
                "[cite:src_b,page 3]",
                "[cite: src_c, lines 5–6]",
                "[cite: src_b, p. 3]"
            ]
        );
        assert!(c.iter().all(|c| c.verified), "{c:?}");
        assert_eq!((c[2].line_first, c[2].line_last), (Some(5), Some(6)));
    }

    #[test]
    fn lines_outside_what_was_read_and_unknown_sources_are_unverified() {
        let got = [handle("src_c", None, (4, 9))];
        let mut titles = |id: &str| (id == "src_d").then(|| "Contract".to_string());
        let c = cited(
            "[cite: src_c, lines 40-41] [cite: src_d, p. 2] [cite: src_e] [cite src_x] [see: src_c]",
            &got,
            &mut titles,
        );
        assert_eq!(c.len(), 3);
        assert!(c.iter().all(|c| !c.verified));
        assert_eq!(c[1].title.as_deref(), Some("Contract"));
        assert_eq!(c[2].title, None);
    }

    #[test]
    fn markers_follow_the_documented_form() {
        assert_eq!(
            handle("src_a", Some(7), (1, 2)).marker(),
            "[cite: src_a, p. 7]"
        );
        assert_eq!(
            handle("src_a", None, (4, 9)).marker(),
            "[cite: src_a, lines 4-9]"
        );
    }
}
