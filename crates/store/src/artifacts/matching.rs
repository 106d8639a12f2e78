//! Finding `old_str` in an artifact for `update_artifact`: three layers, each of which must
//! find exactly one place.
//!
//! 1. **Exact** substring.
//! 2. **Normalised** (see [`normalize`](super::normalize)): both texts normalised, the span
//!    found there mapped back to the original so only that span changes.
//! 3. **Fuzzy**: the best approximate occurrence of the normalised `old_str` within an edit
//!    distance of [`FUZZY_RATIO`] of its length. Candidates come from a pigeonhole filter: the
//!    pattern is cut into pieces, and a match with `k` edits still contains all but `k` of them
//!    exactly, so only places where enough pieces line up are verified (Sellers' edit-distance
//!    DP over a small window). The work is bounded by a time budget; running out is an error
//!    that says so, never a guess.
//!
//! When nothing matches, the error lists the nearest lines with their line numbers; when several
//! places match, it lists them all (up to a few).

use std::time::{Duration, Instant};

use memchr::memmem;

use super::lines::line_of;
use super::normalize::{normalise, Normalised};

/// Fuzzy matches may differ from `old_str` by at most this fraction of its length.
pub const FUZZY_RATIO: f64 = 0.10;

/// Default time budget for the fuzzy layer.
pub const DEFAULT_FUZZY_BUDGET: Duration = Duration::from_secs(2);

/// How a match was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// Byte-for-byte.
    Exact,
    /// After normalisation.
    Normalised,
    /// Within a bounded edit distance.
    Fuzzy,
}

/// The one place `old_str` matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Byte range in the original text.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
    /// Which layer found it.
    pub kind: MatchKind,
    /// 1.0 for exact and normalised matches; `1 - distance / len(old_str)` for fuzzy ones.
    pub similarity: f64,
}

/// A place shown in an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// 1-based line number where it starts.
    pub line: usize,
    /// The start of that line's text (cut to a readable length).
    pub text: String,
    /// Similarity to `old_str` (or its first line), 0..=1.
    pub similarity: f64,
}

/// Why no single place was found.
#[derive(Debug, Clone, PartialEq)]
pub enum MatchError {
    /// `old_str` was empty.
    Empty,
    /// No layer found it; the nearest lines are given.
    NotFound {
        /// The nearest lines.
        nearest: Vec<Candidate>,
    },
    /// A layer found it in several places.
    Ambiguous {
        /// The layer.
        kind: MatchKind,
        /// How many places (at least 2).
        count: usize,
        /// Some of them.
        places: Vec<Candidate>,
    },
    /// The fuzzy search ran out of its time budget.
    GaveUp {
        /// The budget.
        budget: Duration,
    },
}

impl std::fmt::Display for MatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |f: &mut std::fmt::Formatter<'_>, places: &[Candidate]| -> std::fmt::Result {
            for c in places {
                write!(
                    f,
                    "\n  line {}: {} (similarity {:.0}%)",
                    c.line,
                    c.text,
                    c.similarity * 100.0
                )?;
            }
            Ok(())
        };
        match self {
            MatchError::Empty => write!(
                f,
                "old_str is empty; give the exact text to replace (use rewrite_artifact to replace everything)"
            ),
            MatchError::NotFound { nearest } => {
                write!(f, "old_str was not found in the artifact (not exactly, not after normalising quotes/dashes/whitespace, not within {:.0}% edits).", FUZZY_RATIO * 100.0)?;
                if nearest.is_empty() {
                    write!(f, " No similar lines either.")?;
                } else {
                    write!(f, " Nearest lines:")?;
                    list(f, nearest)?;
                }
                write!(f, "\nRead the artifact with read_artifact and copy old_str exactly from it.")
            }
            MatchError::Ambiguous {
                kind,
                count,
                places,
            } => {
                let how = match kind {
                    MatchKind::Exact => "exactly",
                    MatchKind::Normalised => "after normalisation",
                    MatchKind::Fuzzy => "approximately",
                };
                write!(f, "old_str matches {how} in {count} places:")?;
                list(f, places)?;
                write!(f, "\nInclude more surrounding text in old_str so it matches only one place.")
            }
            MatchError::GaveUp { budget } => write!(
                f,
                "old_str was not found exactly or after normalisation, and the approximate search gave up after {:.1}s on this large or repetitive artifact. Copy old_str exactly from read_artifact, or make it longer and more distinctive.",
                budget.as_secs_f64()
            ),
        }
    }
}

const MAX_LISTED: usize = 5;

/// Find the one place `old` occurs in `text`, trying exact, then normalised, then fuzzy.
pub fn find_unique(text: &str, old: &str, budget: Duration) -> Result<Found, MatchError> {
    if old.is_empty() {
        return Err(MatchError::Empty);
    }
    // 1. Exact.
    let finder = memmem::Finder::new(old.as_bytes());
    let exact: Vec<usize> = finder.find_iter(text.as_bytes()).take(1000).collect();
    match exact.len() {
        1 => {
            return Ok(Found {
                start: exact[0],
                end: exact[0] + old.len(),
                kind: MatchKind::Exact,
                similarity: 1.0,
            })
        }
        0 => {}
        n => {
            return Err(ambiguous(
                text,
                MatchKind::Exact,
                n,
                exact.iter().map(|&s| (s, 1.0)),
            ))
        }
    }
    // 2. Normalised.
    let nt = normalise(text);
    let no = normalise(old).text;
    if !no.is_empty() && no.trim() != "" {
        let hits: Vec<usize> = memmem::find_iter(nt.text.as_bytes(), no.as_bytes())
            .take(1000)
            .collect();
        match hits.len() {
            1 => {
                let (start, end) = nt.original_span(hits[0], hits[0] + no.len());
                return Ok(Found {
                    start,
                    end,
                    kind: MatchKind::Normalised,
                    similarity: 1.0,
                });
            }
            0 => {}
            n => {
                let places = hits.iter().map(|&h| (nt.original_span(h, h + 1).0, 1.0));
                return Err(ambiguous(text, MatchKind::Normalised, n, places));
            }
        }
    }
    // 3. Fuzzy.
    let matches = fuzzy(&nt, &no, Instant::now() + budget).ok_or(MatchError::GaveUp { budget })?;
    match matches.len() {
        0 => Err(MatchError::NotFound {
            nearest: nearest_lines(text, old),
        }),
        1 => {
            let m = &matches[0];
            let (start, end) = nt.original_span(m.start, m.end);
            Ok(Found {
                start,
                end,
                kind: MatchKind::Fuzzy,
                similarity: m.similarity,
            })
        }
        n => {
            let places = matches
                .iter()
                .map(|m| (nt.original_span(m.start, m.start + 1).0, m.similarity));
            Err(ambiguous(text, MatchKind::Fuzzy, n, places))
        }
    }
}

fn ambiguous(
    text: &str,
    kind: MatchKind,
    count: usize,
    places: impl Iterator<Item = (usize, f64)>,
) -> MatchError {
    MatchError::Ambiguous {
        kind,
        count,
        places: places
            .take(MAX_LISTED)
            .map(|(pos, similarity)| candidate_at(text, pos, similarity))
            .collect(),
    }
}

fn candidate_at(text: &str, pos: usize, similarity: f64) -> Candidate {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
    Candidate {
        line: line_of(text, pos),
        text: shorten(&text[line_start..line_end]),
        similarity,
    }
}

fn shorten(line: &str) -> String {
    let line = line.trim_end();
    if line.chars().count() > 120 {
        let cut: String = line.chars().take(117).collect();
        format!("{cut}...")
    } else {
        line.to_string()
    }
}

/// A fuzzy match in normalised byte coordinates.
struct FuzzyMatch {
    start: usize,
    end: usize,
    similarity: f64,
}

/// Every non-overlapping approximate occurrence of `pattern` in `n.text`, best first within
/// overlaps. `None` when the deadline passed.
fn fuzzy(n: &Normalised, pattern: &str, deadline: Instant) -> Option<Vec<FuzzyMatch>> {
    let p: Vec<char> = pattern.chars().collect();
    let m = p.len();
    let k = (m as f64 * FUZZY_RATIO).floor() as usize;
    if k == 0 || n.text.is_empty() {
        return Some(Vec::new());
    }
    let text = n.text.as_bytes();
    // Byte offset of every char of the normalised text, to move between byte and char space.
    let char_bytes: Vec<u32> = n.text.char_indices().map(|(i, _)| i as u32).collect();
    let to_char = |byte: usize| char_bytes.partition_point(|&b| (b as usize) < byte);

    // Pieces: as many as 2k+1 while each keeps at least 4 chars, never fewer than k+1.
    let pieces = (2 * k + 1).min(m / 4).max(k + 1);
    let piece_len = m / pieces;
    let mut starts: Vec<i64> = Vec::new();
    let mut skipped = 0usize;
    const MAX_HITS_PER_PIECE: usize = 50_000;
    for i in 0..pieces {
        let from = i * piece_len;
        let to = if i + 1 == pieces { m } else { from + piece_len };
        let piece: String = p[from..to].iter().collect();
        if piece.trim().is_empty() {
            skipped += 1;
            continue;
        }
        let hits: Vec<usize> = memmem::find_iter(text, piece.as_bytes())
            .take(MAX_HITS_PER_PIECE + 1)
            .collect();
        if hits.len() > MAX_HITS_PER_PIECE {
            skipped += 1;
            continue;
        }
        starts.extend(hits.into_iter().map(|h| to_char(h) as i64 - from as i64));
        if Instant::now() > deadline {
            return None;
        }
    }
    // A match with d ≤ k edits keeps at least pieces − k pieces intact.
    let needed = (pieces - k).saturating_sub(skipped);
    if needed == 0 {
        return None;
    }
    starts.sort_unstable();
    // Windows of aligned starts (within ±k) with enough votes become regions to verify.
    let mut regions: Vec<(usize, usize)> = Vec::new();
    let mut lo = 0usize;
    let total_chars = char_bytes.len();
    for hi in 0..starts.len() {
        while starts[hi] - starts[lo] > 2 * k as i64 {
            lo += 1;
        }
        if hi - lo + 1 >= needed {
            let a = (starts[lo] - k as i64).max(0) as usize;
            let b = ((starts[hi] + (m + k) as i64).max(0) as usize).min(total_chars);
            match regions.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => regions.push((a, b)),
            }
        }
    }
    let chars: Vec<char> = n.text.chars().collect();
    let mut found: Vec<(usize, usize, usize)> = Vec::new(); // (start char, end char, distance)
    for (a, b) in regions {
        if Instant::now() > deadline {
            return None;
        }
        let window = &chars[a..b];
        let ends = sellers(&p, window);
        let mut j = 1;
        while j < ends.len() {
            if ends[j] > k {
                j += 1;
                continue;
            }
            // A cluster of ends within k: keep its best.
            let mut best = j;
            while j < ends.len() && ends[j] <= k {
                if ends[j] < ends[best] {
                    best = j;
                }
                j += 1;
            }
            let from = best.saturating_sub(m + k);
            let rev_p: Vec<char> = p.iter().rev().copied().collect();
            let rev_t: Vec<char> = window[from..best].iter().rev().copied().collect();
            let back = sellers(&rev_p, &rev_t);
            let (len, _) = back
                .iter()
                .enumerate()
                .min_by_key(|&(len, &d)| (d, len))
                .unwrap_or((0, &0));
            found.push((a + best - len, a + best, ends[best]));
        }
    }
    // Drop overlapping matches, keeping the closer one.
    found.sort_by_key(|&(s, e, d)| (d, s, e));
    let mut kept: Vec<(usize, usize, usize)> = Vec::new();
    for f in found {
        if kept.iter().all(|k| f.1 <= k.0 || f.0 >= k.1) {
            kept.push(f);
        }
    }
    kept.sort_by_key(|&(_, _, d)| d);
    let byte = |c: usize| {
        if c >= total_chars {
            n.text.len()
        } else {
            char_bytes[c] as usize
        }
    };
    Some(
        kept.into_iter()
            .filter(|&(s, e, _)| e > s)
            .map(|(s, e, d)| FuzzyMatch {
                start: byte(s),
                end: byte(e),
                similarity: 1.0 - d as f64 / m as f64,
            })
            .collect(),
    )
}

/// Sellers' DP: entry `j` is the least edit distance between `p` and any substring of `t`
/// ending at char `j`.
fn sellers(p: &[char], t: &[char]) -> Vec<usize> {
    let m = p.len();
    let mut col: Vec<usize> = (0..=m).collect();
    let mut out = Vec::with_capacity(t.len() + 1);
    out.push(m);
    for &tc in t {
        let mut diag = col[0];
        col[0] = 0;
        for i in 1..=m {
            let up = col[i];
            let v = (diag + usize::from(p[i - 1] != tc))
                .min(up + 1)
                .min(col[i - 1] + 1);
            diag = up;
            col[i] = v;
        }
        out.push(col[m]);
    }
    out
}

/// The lines most like `old`'s first non-blank line (bigram similarity), best first.
fn nearest_lines(text: &str, old: &str) -> Vec<Candidate> {
    let Some(first) = old
        .lines()
        .map(|l| normalise(l).text)
        .find(|l| !l.is_empty())
    else {
        return Vec::new();
    };
    let want = bigrams(&first);
    let len = first.chars().count();
    let mut best: Vec<Candidate> = Vec::new();
    for (i, line) in text.split('\n').enumerate().take(500_000) {
        let l = line.trim();
        let n = l.chars().count();
        if n == 0 || n * 3 < len || n > len * 3 + 10 {
            continue;
        }
        let got = bigrams(&normalise(l).text);
        let common = want.iter().filter(|b| got.binary_search(b).is_ok()).count();
        let score = 2.0 * common as f64 / (want.len() + got.len()).max(1) as f64;
        if score >= 0.3 {
            best.push(Candidate {
                line: i + 1,
                text: shorten(line),
                similarity: score,
            });
        }
    }
    best.sort_by(|a, b| {
        b.similarity
            .total_cmp(&a.similarity)
            .then(a.line.cmp(&b.line))
    });
    best.truncate(3);
    best
}

fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().flat_map(char::to_lowercase).collect();
    let mut v: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Duration = DEFAULT_FUZZY_BUDGET;

    #[test]
    fn exact_match_is_found_first() {
        let f = find_unique("alpha beta gamma", "beta", B).unwrap();
        assert_eq!((f.start, f.end, f.kind), (6, 10, MatchKind::Exact));
    }

    #[test]
    fn repeated_exact_text_is_ambiguous_with_line_numbers() {
        let e = find_unique("x = 1\ny = 2\nx = 1\n", "x = 1", B).unwrap_err();
        let MatchError::Ambiguous { count, places, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(*count, 2);
        assert_eq!(
            places.iter().map(|p| p.line).collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert!(e.to_string().contains("line 3"));
    }

    #[test]
    fn normalised_match_maps_back_to_the_original_span() {
        let text = "Intro\n    He said \u{201C}stop\u{201D} \u{2014} then left.   \nEnd";
        let f = find_unique(text, "He said \"stop\" - then left.", B).unwrap();
        assert_eq!(f.kind, MatchKind::Normalised);
        assert_eq!(
            &text[f.start..f.end],
            "He said \u{201C}stop\u{201D} \u{2014} then left."
        );
    }

    #[test]
    fn fuzzy_match_reports_similarity() {
        let text = "one\nThe quick brown fox jumps over the lazy dog near the river bank.\ntwo";
        let f = find_unique(
            text,
            "The quick brown fox jumped over the lazy dog near the river bank.",
            B,
        )
        .unwrap();
        assert_eq!(f.kind, MatchKind::Fuzzy);
        assert!(f.similarity > 0.9 && f.similarity < 1.0, "{}", f.similarity);
        assert!(text[f.start..f.end].starts_with("The quick"));
        assert!(text[f.start..f.end].ends_with("bank."));
    }

    #[test]
    fn no_match_lists_nearest_lines() {
        let text = "fn main() {\n    println!(\"hello world\");\n}\n";
        let e = find_unique(text, "println!(\"goodbye cruel world\");", B).unwrap_err();
        let MatchError::NotFound { nearest } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(nearest[0].line, 2);
    }

    #[test]
    fn empty_old_str_is_an_error() {
        assert_eq!(find_unique("abc", "", B).unwrap_err(), MatchError::Empty);
    }

    #[test]
    fn sellers_finds_best_end() {
        let p: Vec<char> = "abc".chars().collect();
        let t: Vec<char> = "xxabdxx".chars().collect();
        let d = sellers(&p, &t);
        assert_eq!(d.iter().min(), Some(&1));
    }
}
