//! pdfium's page text made into clean lines, as py-pdf's benchmark post-processes pdfium's
//! output, with two changes that keep more of what the author wrote.
//!
//! 1. Line breaks (pdfium writes `\r\n`) become `\n`.
//! 2. Ligature characters (`ﬁ`, `ﬂ`, `ﬀ`, `ﬃ`, `ﬄ`, `ﬅ`, `ﬆ`, `ꜳ`) are spelled out. (The pdfium
//!    build the app ships already does this for the `ﬀ`–`ﬆ` block; the table covers other
//!    builds and `ꜳ`.)
//! 3. Hyphens at line ends are joined *conservatively*: pdfium marks a hyphen it thinks breaks a
//!    word (U+0002 in the build shipped, U+FFFE in others) and drops the line break after it;
//!    the two halves are joined only when the next character is a lower-case letter
//!    ("extrac-/tion" → "extraction"), else the hyphen and the line break are put back
//!    ("Smith-/Jones" stays). An unmarked hyphen at a line end followed by a line that starts
//!    with a lower-case letter is joined the same way, moving the next line's first word up.
//!    Soft hyphens (U+00AD) are dropped.
//! 4. Lines that repeat at the top or at the bottom of the pages ([`RunningLines`]) become
//!    running headers and footers when they are on at least 60 % of the pages with text, and on
//!    at least 3. Only the two lines at each edge are looked at: either when it repeats exactly,
//!    the one at the very edge also when it repeats with its numbers changed (every run of
//!    digits taken as the same, so "Page 3 of 40" repeats). A line at the very edge that is
//!    just the page's number or label is one too (py-pdf strips those), and so is a short one
//!    that starts or ends with the page's label ("4.4. Debian changelog 21" on the page labelled
//!    21) when the file gives labels.

use std::collections::{HashMap, HashSet};

/// Ligatures and their letters, as py-pdf's post-processing replaces them.
const LIGATURES: [(char, &str); 8] = [
    ('\u{FB00}', "ff"),
    ('\u{FB01}', "fi"),
    ('\u{FB02}', "fl"),
    ('\u{FB03}', "ffi"),
    ('\u{FB04}', "ffl"),
    ('\u{FB05}', "ft"),
    ('\u{FB06}', "st"),
    ('\u{A733}', "aa"),
];

/// The characters pdfium puts where a hyphen breaks a word at a line end.
const HYPHEN_MARKS: [char; 2] = ['\u{2}', '\u{FFFE}'];

/// How many lines at each edge of a page may be running lines.
const EDGE_LINES: usize = 2;

/// Lines longer than this are never running lines.
const MAX_RUNNING_CHARS: usize = 200;

/// pdfium's text of one page as clean lines (steps 1–3 of the module docs).
pub fn page_lines(raw: &str) -> Vec<String> {
    let text = replace_ligatures(&raw.replace("\r\n", "\n").replace('\r', "\n"));
    let text = join_marked_hyphens(&text);
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    join_line_end_hyphens(&mut lines);
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// `text` with ligature characters spelled out and soft hyphens dropped.
pub fn replace_ligatures(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match LIGATURES.iter().find(|(lig, _)| *lig == c) {
            Some((_, letters)) => out.push_str(letters),
            None if c == '\u{AD}' => {}
            None => out.push(c),
        }
    }
    out
}

/// pdfium's hyphen marks: joined before a lower-case letter, else a hyphen and a line break.
fn join_marked_hyphens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if HYPHEN_MARKS.contains(&c) {
            match chars.peek() {
                Some(next) if next.is_lowercase() => {}
                Some('\n') | None => out.push('-'),
                Some(_) => out.push_str("-\n"),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Unmarked hyphens at line ends: "exam-" + "ple text" → "example" + "text", when the hyphen
/// follows a letter and the next line starts with a lower-case letter.
fn join_line_end_hyphens(lines: &mut [String]) {
    for i in 0..lines.len().saturating_sub(1) {
        let line = &lines[i];
        let Some(stem) = line.strip_suffix('-') else {
            continue;
        };
        if !stem.chars().last().is_some_and(char::is_alphabetic) {
            continue;
        }
        let next = lines[i + 1].trim_start();
        if !next.chars().next().is_some_and(char::is_lowercase) {
            continue;
        }
        let word_end = next.find(char::is_whitespace).unwrap_or(next.len());
        let (word, rest) = next.split_at(word_end);
        let joined = format!("{stem}{word}");
        let rest = rest.trim_start().to_string();
        lines[i] = joined;
        lines[i + 1] = rest;
    }
}

/// A line as compared for repetition: trimmed, inner white space collapsed, every run of
/// digits as `#`.
pub fn repeat_key(line: &str) -> String {
    let mut key = String::with_capacity(line.len());
    let mut in_digits = false;
    for word in line.split_whitespace() {
        if !key.is_empty() {
            key.push(' ');
            in_digits = false;
        }
        for c in word.chars() {
            if c.is_ascii_digit() {
                if !in_digits {
                    key.push('#');
                }
                in_digits = true;
            } else {
                key.push(c);
                in_digits = false;
            }
        }
    }
    key
}

/// A line as compared for exact repetition: trimmed, inner white space collapsed.
fn exact_key(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether an edge line is the page's number: the number or label alone, or a short running
/// title that starts or ends with the page's label as a word ("4.4. Debian changelog 21", "xii
/// Preface"), when the file gives page labels (a PDF's page index is too often a chapter's
/// number to be trusted inside a line).
fn is_page_number_line(line: &str, number: u32, label: Option<&str>) -> bool {
    let line = line.trim();
    let label = label.filter(|l| !l.trim().is_empty()).map(str::trim);
    if line == number.to_string() || label == Some(line) {
        return true;
    }
    let Some(label) = label else {
        return false;
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    words.len() > 1
        && words.len() <= MAX_TITLE_WORDS
        && (words.first() == Some(&label) || words.last() == Some(&label))
}

/// A running title with its page label has at most this many words.
const MAX_TITLE_WORDS: usize = 12;

/// Counts, over all pages, the lines at the top and bottom of each page, to find the running
/// headers and footers. Either of the two lines at an edge counts when it repeats exactly; the
/// line at the very edge also counts when it repeats with its numbers changed ("Page 3 of 40"),
/// so that a body line that differs from page to page only in its numbers is not taken for one.
#[derive(Debug, Default)]
pub struct RunningLines {
    top: EdgeCounts,
    bottom: EdgeCounts,
    pages_with_text: u32,
}

#[derive(Debug, Default)]
struct EdgeCounts {
    exact: HashMap<String, u32>,
    numbered: HashMap<String, u32>,
}

/// The running headers and footers found by [`RunningLines`].
#[derive(Debug, Default)]
pub struct RunningSet {
    top: EdgeSet,
    bottom: EdgeSet,
}

#[derive(Debug, Default)]
struct EdgeSet {
    exact: HashSet<String>,
    numbered: HashSet<String>,
}

impl EdgeCounts {
    /// Counts the edge lines of one page, `edge` being its non-blank lines from that edge in.
    fn observe<'a>(&mut self, edge: impl Iterator<Item = &'a String>) {
        let mut seen = HashSet::new();
        for (position, line) in edge.take(EDGE_LINES).enumerate() {
            if line.chars().count() > MAX_RUNNING_CHARS {
                break;
            }
            let key = exact_key(line);
            if seen.insert(key.clone()) {
                *self.exact.entry(key).or_default() += 1;
            }
            if position == 0 {
                *self.numbered.entry(repeat_key(line)).or_default() += 1;
            }
        }
    }

    fn finish(self, needed: u32) -> EdgeSet {
        let pick = |map: HashMap<String, u32>| {
            map.into_iter()
                .filter(|(_, n)| *n >= needed)
                .map(|(k, _)| k)
                .collect()
        };
        EdgeSet {
            exact: pick(self.exact),
            numbered: pick(self.numbered),
        }
    }
}

impl EdgeSet {
    /// How many lines, from this edge in (`edge` yields `(index, line)` in that order), are
    /// running lines; returned as the count of lines of the page to mark, blank ones included.
    fn marked<'a>(
        &self,
        edge: impl Iterator<Item = (usize, &'a String)>,
        is_page_number: impl Fn(&str) -> bool,
        len: usize,
        from_top: bool,
    ) -> usize {
        let mut marked = 0;
        let mut position = 0;
        for (index, line) in edge {
            if line.trim().is_empty() {
                continue;
            }
            let running = position < EDGE_LINES
                && (self.exact.contains(&exact_key(line))
                    || (position == 0
                        && (self.numbered.contains(&repeat_key(line)) || is_page_number(line))));
            if !running {
                break;
            }
            position += 1;
            marked = if from_top { index + 1 } else { len - index };
        }
        marked
    }
}

impl RunningLines {
    /// Notes the edge lines of a page with text.
    pub fn observe(&mut self, lines: &[String]) {
        let content: Vec<&String> = lines.iter().filter(|l| !l.trim().is_empty()).collect();
        if content.is_empty() {
            return;
        }
        self.pages_with_text += 1;
        self.top.observe(content.iter().copied());
        self.bottom.observe(content.iter().rev().copied());
    }

    /// The lines on at least 60 % of the pages with text, and on at least 3.
    pub fn finish(self) -> RunningSet {
        let needed = (self.pages_with_text as f64 * 0.6).ceil().max(3.0) as u32;
        RunningSet {
            top: self.top.finish(needed),
            bottom: self.bottom.finish(needed),
        }
    }
}

impl RunningSet {
    /// How many of the page's first and last lines are running lines: `(top, bottom)`, counted
    /// in `lines` (blank lines at the edges included). `number` and `label` are the page's, for
    /// an edge line that is only the page number.
    pub fn edges(&self, lines: &[String], number: u32, label: Option<&str>) -> (usize, usize) {
        let is_page_number = |line: &str| is_page_number_line(line, number, label);
        let top = self
            .top
            .marked(lines.iter().enumerate(), is_page_number, lines.len(), true);
        let bottom = self.bottom.marked(
            lines
                .iter()
                .enumerate()
                .rev()
                .take_while(|(i, _)| *i >= top),
            is_page_number,
            lines.len(),
            false,
        );
        (top, bottom)
    }

    /// Whether any running line was found.
    pub fn is_empty(&self) -> bool {
        [&self.top, &self.bottom]
            .iter()
            .all(|e| e.exact.is_empty() && e.numbered.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    #[test]
    fn ligatures_are_spelled_out() {
        assert_eq!(
            replace_ligatures("\u{FB01}nd the \u{FB02}ow, e\u{FB00}ort, \u{FB03}x, ba\u{A733}"),
            "find the flow, effort, ffix, baaa"
        );
        assert_eq!(replace_ligatures("co\u{AD}operate"), "cooperate");
    }

    #[test]
    fn marked_hyphens_join_only_before_lower_case() {
        assert_eq!(
            page_lines("The extrac\u{2}tion of words, Smith\u{2}Jones said.\r\nNext"),
            lines("The extraction of words, Smith-\nJones said.\nNext")
        );
        assert_eq!(page_lines("in\u{FFFE}formation"), lines("information"));
    }

    #[test]
    fn unmarked_line_end_hyphens_join_only_before_lower_case() {
        assert_eq!(
            page_lines("an exam-\nple of text\nSmith-\nJones\n2 -\n4"),
            lines("an example\nof text\nSmith-\nJones\n2 -\n4")
        );
    }

    #[test]
    fn repeated_edge_lines_are_found_with_digits_as_one() {
        let mut running = RunningLines::default();
        let words = ["alpha", "beta", "gamma", "delta", "epsilon"];
        let pages: Vec<Vec<String>> = (1..=5)
            .map(|n| {
                let w = words[n - 1];
                let middle = if n == 3 { "ACME Report" } else { "goes on" };
                lines(&format!(
                    "ACME Report\n{w} opens the page\n{middle}\n{w} ends it\nPage {n} of 5"
                ))
            })
            .collect();
        for page in &pages {
            running.observe(page);
        }
        let set = running.finish();
        assert_eq!(set.edges(&pages[0], 1, None), (1, 1));
        // On page 3 "ACME Report" also stands in the body: only the top one is marked.
        assert_eq!(set.edges(&pages[2], 3, None), (1, 1));
        assert_eq!(repeat_key("  Page 12   of 40 "), "Page # of #");
    }

    #[test]
    fn a_second_line_that_differs_only_in_its_numbers_is_content() {
        let mut running = RunningLines::default();
        let pages: Vec<Vec<String>> = (1..=6)
            .map(|n| {
                lines(&format!(
                    "Header\nItem {n} costs {} dollars\nwords {n}0 words",
                    n * 3
                ))
            })
            .collect();
        for page in &pages {
            running.observe(page);
        }
        let set = running.finish();
        // "Header" repeats exactly; "Item # costs # dollars" only with its numbers changed, as
        // the second line: content. The last line is at the very edge: a footer.
        assert_eq!(set.edges(&pages[3], 4, None), (1, 1));
    }

    #[test]
    fn a_running_title_with_the_page_label_is_a_page_number_line() {
        assert!(is_page_number_line(
            "4.4. Debian changelog: debian/changelog 21",
            31,
            Some("21")
        ));
        assert!(is_page_number_line("xii Preface", 12, Some("xii")));
        assert!(is_page_number_line(" 7 ", 7, None));
        // Without labels the page index is not looked for inside a line: "Chapter 1" on page 1
        // is a heading.
        assert!(!is_page_number_line("Chapter 1", 1, None));
        assert!(!is_page_number_line("Costs rose by 21", 31, Some("20")));
        let sentence = "a long sentence that goes on and on and on and on and on and ends on 21";
        assert!(!is_page_number_line(sentence, 31, Some("21")));
    }

    #[test]
    fn two_pages_are_too_few_for_running_lines_but_page_numbers_still_count() {
        let mut running = RunningLines::default();
        let pages = [lines("Same\nA\n1"), lines("Same\nB\n2")];
        for page in &pages {
            running.observe(page);
        }
        let set = running.finish();
        assert_eq!(set.edges(&pages[0], 1, None), (0, 1));
        assert_eq!(set.edges(&pages[1], 2, Some("ii")), (0, 1));
    }

    #[test]
    fn lines_on_fewer_than_60_percent_of_pages_stay() {
        let mut running = RunningLines::default();
        let pages: Vec<Vec<String>> = (0..10)
            .map(|n| {
                let top = if n < 5 { "Chapter One" } else { "Other" };
                let word = ["alpha", "beta", "gamma", "delta", "epsilon"][n % 5];
                lines(&format!("{top}\n{word} body\nthe end of {word}, {n}th"))
            })
            .collect();
        for page in &pages {
            running.observe(page);
        }
        let set = running.finish();
        assert!(set.is_empty(), "{set:?}");
        assert_eq!(set.edges(&pages[0], 1, None), (0, 0));
    }
}
