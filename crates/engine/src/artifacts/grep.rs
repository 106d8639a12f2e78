//! `grep_artifact`'s search, with ripgrep's own crates: `grep-regex` (Rust's linear-time regex
//! engine) and `grep-searcher` (line-oriented search with context and `max_count`).
//!
//! Output is heading-style: the artifact id on its own line, then `N:line` for matching lines
//! and `N-line` for context lines, `--` between non-adjacent groups (overlapping context is
//! merged because each line is printed once), a blank line between artifacts and a total at the
//! end. Work is bounded: long lines are cut with a note, and caps on matching lines and output
//! size end the search with a note saying it is incomplete.

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

/// What to search for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepOptions {
    /// A regex, or a literal when `fixed_strings`.
    pub pattern: String,
    /// Treat the pattern as a literal string.
    pub fixed_strings: bool,
    /// Match case-insensitively.
    pub ignore_case: bool,
    /// Lines of context before and after each match.
    pub context: usize,
    /// At most this many matching lines per artifact (0 = no limit).
    pub max_count: usize,
}

/// Caps that keep one search bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrepLimits {
    /// Longer lines are cut with a note.
    pub max_line_chars: usize,
    /// Stop after this many matching lines in all.
    pub max_total_matches: usize,
    /// Stop once the output reaches this many characters.
    pub max_output_chars: usize,
}

impl Default for GrepLimits {
    fn default() -> Self {
        GrepLimits {
            max_line_chars: 500,
            max_total_matches: 1_000,
            max_output_chars: 40_000,
        }
    }
}

/// The result of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepOutcome {
    /// The formatted output (without the total line).
    pub body: String,
    /// Matching lines printed.
    pub matches: usize,
    /// Artifacts with at least one match.
    pub artifacts_matched: usize,
    /// Artifacts searched.
    pub artifacts_searched: usize,
    /// Artifacts where `max_count` stopped the search early.
    pub max_count_reached: Vec<String>,
    /// Set when a cap ended the search early: the reason.
    pub incomplete: Option<String>,
}

impl GrepOutcome {
    /// The text for the model: the matches and a total, or "No matches for '…'".
    pub fn render(&self, pattern: &str) -> String {
        let mut out = String::new();
        if self.matches == 0 {
            out.push_str(&format!("No matches for '{pattern}'"));
            if self.artifacts_searched == 0 {
                out.push_str(" (there are no artifacts to search)");
            }
        } else {
            out.push_str(&self.body);
            out.push_str(&format!(
                "\n{} matching line{} in {} artifact{} ({} searched)",
                self.matches,
                if self.matches == 1 { "" } else { "s" },
                self.artifacts_matched,
                if self.artifacts_matched == 1 { "" } else { "s" },
                self.artifacts_searched
            ));
        }
        if !self.max_count_reached.is_empty() {
            out.push_str(&format!(
                "\nmax_count reached in: {} (there may be more matches there; raise max_count or narrow the pattern)",
                self.max_count_reached.join(", ")
            ));
        }
        if let Some(why) = &self.incomplete {
            out.push_str(&format!(
                "\nSearch incomplete: {why}. Narrow the pattern, pass id, or lower context."
            ));
        }
        out
    }
}

/// A search in progress over any number of texts.
pub struct Grep {
    matcher: RegexMatcher,
    searcher: Searcher,
    options: GrepOptions,
    limits: GrepLimits,
    outcome: GrepOutcome,
}

impl Grep {
    /// Compile the pattern. `Err` is a message for the model.
    pub fn new(options: GrepOptions, limits: GrepLimits) -> Result<Grep, String> {
        if options.pattern.is_empty() {
            return Err("pattern is empty; give a regex or a literal string to search for".into());
        }
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(options.ignore_case)
            .fixed_strings(options.fixed_strings)
            .line_terminator(Some(b'\n'))
            .build(&options.pattern)
            .map_err(|e| {
                format!(
                    "the pattern `{}` cannot be used: {}. The regex engine is linear-time (no look-around or backreferences) and matches within one line. Fix the pattern, or set fixed_strings=true to search for it literally.",
                    options.pattern,
                    e.to_string().trim()
                )
            })?;
        let searcher = SearcherBuilder::new()
            .line_number(true)
            .before_context(options.context)
            .after_context(options.context)
            .binary_detection(BinaryDetection::none())
            .max_matches((options.max_count > 0).then_some(options.max_count as u64))
            .build();
        Ok(Grep {
            matcher,
            searcher,
            options,
            limits,
            outcome: GrepOutcome {
                body: String::new(),
                matches: 0,
                artifacts_matched: 0,
                artifacts_searched: 0,
                max_count_reached: Vec::new(),
                incomplete: None,
            },
        })
    }

    /// Search one text under `heading`. Returns `false` once a cap has ended the search.
    pub fn search(&mut self, heading: &str, text: &str) -> bool {
        if self.outcome.incomplete.is_some() {
            return false;
        }
        self.outcome.artifacts_searched += 1;
        let mut sink = Collect {
            lines: Vec::new(),
            matches: 0,
            budget: self
                .limits
                .max_total_matches
                .saturating_sub(self.outcome.matches),
            capped: false,
        };
        if let Err(e) = self
            .searcher
            .search_slice(&self.matcher, text.as_bytes(), &mut sink)
        {
            self.outcome.incomplete = Some(format!("searching '{heading}' failed: {e}"));
            return false;
        }
        if sink.matches == 0 {
            if sink.capped {
                self.outcome.incomplete = Some(format!(
                    "{} matching lines were found, the most one search shows",
                    self.limits.max_total_matches
                ));
                return false;
            }
            return true;
        }
        if self.options.max_count > 0 && sink.matches >= self.options.max_count && !sink.capped {
            self.outcome.max_count_reached.push(heading.to_string());
        }
        let out = &mut self.outcome;
        if !out.body.is_empty() {
            out.body.push('\n');
        }
        out.body.push_str(heading);
        out.body.push('\n');
        let mut last: Option<u64> = None;
        for (number, is_match, line) in &sink.lines {
            if self.options.context > 0 && last.is_some_and(|l| *number > l + 1) {
                out.body.push_str("--\n");
            }
            last = Some(*number);
            out.body.push_str(&number.to_string());
            out.body.push(if *is_match { ':' } else { '-' });
            push_line(&mut out.body, line, self.limits.max_line_chars);
            if out.body.len() > self.limits.max_output_chars {
                out.incomplete = Some(format!(
                    "the output reached {} characters",
                    self.limits.max_output_chars
                ));
                break;
            }
        }
        out.matches += sink.matches;
        out.artifacts_matched += 1;
        if sink.capped && out.incomplete.is_none() {
            out.incomplete = Some(format!(
                "{} matching lines were found, the most one search shows",
                self.limits.max_total_matches
            ));
        }
        out.incomplete.is_none()
    }

    /// The result so far.
    pub fn finish(self) -> GrepOutcome {
        self.outcome
    }
}

fn push_line(out: &mut String, line: &[u8], max_chars: usize) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\n', '\r']);
    let n = text.chars().count();
    if n > max_chars {
        out.extend(text.chars().take(max_chars));
        out.push_str(&format!(" [… line cut: {n} chars]"));
    } else {
        out.push_str(text);
    }
    out.push('\n');
}

struct Collect {
    lines: Vec<(u64, bool, Vec<u8>)>,
    matches: usize,
    budget: usize,
    capped: bool,
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.matches >= self.budget {
            self.capped = true;
            return Ok(false);
        }
        self.matches += 1;
        self.lines
            .push((mat.line_number().unwrap_or(0), true, mat.bytes().to_vec()));
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.lines
            .push((ctx.line_number().unwrap_or(0), false, ctx.bytes().to_vec()));
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pattern: &str) -> GrepOptions {
        GrepOptions {
            pattern: pattern.into(),
            fixed_strings: false,
            ignore_case: false,
            context: 0,
            max_count: 20,
        }
    }

    fn run(o: GrepOptions, texts: &[(&str, &str)]) -> GrepOutcome {
        let mut g = Grep::new(o, GrepLimits::default()).unwrap();
        for (h, t) in texts {
            if !g.search(h, t) {
                break;
            }
        }
        g.finish()
    }

    #[test]
    fn heading_style_with_merged_context() {
        let text = "a\nb\nhit1\nc\nhit2\nd\ne\nf\ng\nhit3\n";
        let o = GrepOptions {
            context: 1,
            ..opts("hit")
        };
        let out = run(o, &[("doc", text)]);
        assert_eq!(
            out.body,
            "doc\n2-b\n3:hit1\n4-c\n5:hit2\n6-d\n--\n9-g\n10:hit3\n"
        );
        assert_eq!(out.matches, 3);
    }

    #[test]
    fn max_count_limits_lines_per_artifact() {
        let out = run(
            GrepOptions {
                max_count: 2,
                ..opts("x")
            },
            &[("a", "x\nx\nx\n"), ("b", "x\n")],
        );
        assert_eq!(out.body, "a\n1:x\n2:x\n\nb\n1:x\n");
        assert_eq!(out.max_count_reached, vec!["a".to_string()]);
    }

    #[test]
    fn unsupported_regex_is_a_clear_error() {
        let e = Grep::new(opts("(?=x)"), GrepLimits::default())
            .err()
            .unwrap();
        assert!(e.contains("look-around"), "{e}");
    }

    #[test]
    fn fixed_strings_and_ignore_case() {
        let o = GrepOptions {
            fixed_strings: true,
            ignore_case: true,
            ..opts("A.B")
        };
        let out = run(o, &[("t", "a.b\naxb\n")]);
        assert_eq!(out.body, "t\n1:a.b\n");
    }
}
