//! `grep_artifact`'s search, with ripgrep's own crates: `grep-regex` (Rust's linear-time regex
//! engine) and `grep-searcher` (line-oriented search with context and `max_count`).
//!
//! Output is heading-style: the artifact id on its own line, then `N:line` for matching lines
//! and `N-line` for context lines, `--` between non-adjacent groups (overlapping context is
//! merged because each line is printed once), a blank line between artifacts and a total at the
//! end. Work is bounded: long lines are cut with a note, and caps on matching lines and output
//! size end the search with a note saying it is incomplete.
//!
//! [`Grep::search_store`] searches a store's artifacts, on worker threads when there is enough
//! text: each worker has its own read-only database connection, searcher and matcher, takes
//! the next unsearched artifact, reads its content straight from SQLite into its buffer and
//! searches it; the calling thread takes the results back in artifact order, so the outcome
//! is exactly that of searching the artifacts one by one.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use super::store::{Artifact, ArtifactStore, ChunkReader, LatestItem, StoreError};

/// Below this many bytes in all, [`Grep::search_store`] searches on the calling thread.
pub const PARALLEL_MIN_BYTES: u64 = 4 << 20;

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
        self.search_bytes(heading, text.as_bytes())
    }

    /// [`search`](Self::search) over bytes (invalid UTF-8 is shown lossily).
    pub fn search_bytes(&mut self, heading: &str, text: &[u8]) -> bool {
        if self.outcome.incomplete.is_some() {
            return false;
        }
        let budget = self
            .limits
            .max_total_matches
            .saturating_sub(self.outcome.matches);
        let found = collect(&mut self.searcher, &self.matcher, text, budget);
        self.absorb(heading, found)
    }

    /// Search the latest content of the artifacts [`ArtifactStore::for_each_latest`] selects,
    /// each under `heading(artifact)`, with the same outcome as calling
    /// [`search`](Self::search) on them in order. With more than one artifact and at least
    /// [`PARALLEL_MIN_BYTES`] of text in a database file, the search runs on worker threads
    /// (one per core, at most four).
    pub fn search_store(
        &mut self,
        store: &ArtifactStore,
        conversation_id: Option<&str>,
        id: Option<&str>,
        heading: impl Fn(&Artifact) -> String,
    ) -> Result<(), StoreError> {
        let items = store.latest_items(conversation_id, id)?;
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let bytes: u64 = items.iter().map(|i| i.size_bytes as u64).sum();
        if workers >= 2 && items.len() >= 2 && bytes >= PARALLEL_MIN_BYTES {
            let readers = store.take_readers(workers.min(items.len()));
            if readers.len() >= 2 {
                let (result, readers) = self.search_parallel(&items, readers, &heading);
                store.return_readers(readers);
                return result;
            }
            store.return_readers(readers);
        }
        store.with_reader(|reader| {
            let mut buf = Vec::new();
            for item in &items {
                let n = reader.read_item(item, &mut buf)?;
                if !self.search_bytes(&heading(&item.artifact), &buf[..n]) {
                    break;
                }
            }
            Ok(())
        })
    }

    /// Search `items` on one thread per reader connection; hands the connections back.
    fn search_parallel(
        &mut self,
        items: &[LatestItem],
        readers: Vec<rusqlite::Connection>,
        heading: &dyn Fn(&Artifact) -> String,
    ) -> (Result<(), StoreError>, Vec<rusqlite::Connection>) {
        if self.outcome.incomplete.is_some() {
            return (Ok(()), readers);
        }
        // A worker collects up to the whole cap; `absorb` cuts that down to what is left of
        // it when the result's turn comes.
        let budget = self.limits.max_total_matches;
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let (done_tx, done_rx) = mpsc::channel::<(usize, Result<Found, StoreError>)>();
        std::thread::scope(|scope| {
            let handles: Vec<_> = readers
                .into_iter()
                .map(|conn| {
                    let mut searcher = self.searcher.clone();
                    let matcher = self.matcher.clone();
                    let (next, stop, done_tx) = (&next, &stop, done_tx.clone());
                    scope.spawn(move || {
                        {
                            let mut reader = ChunkReader::new(&conn);
                            let mut buf = Vec::new();
                            while !stop.load(Ordering::Relaxed) {
                                let index = next.fetch_add(1, Ordering::Relaxed);
                                let Some(item) = items.get(index) else { break };
                                let found = reader
                                    .read_item(item, &mut buf)
                                    .map(|n| collect(&mut searcher, &matcher, &buf[..n], budget));
                                if done_tx.send((index, found)).is_err() {
                                    break;
                                }
                            }
                        }
                        conn
                    })
                })
                .collect();
            drop(done_tx);
            let mut pending = BTreeMap::new();
            let mut turn = 0usize;
            let mut result = Ok(());
            // Ends when every worker has finished (and dropped its sender).
            for (index, found) in done_rx.iter() {
                pending.insert(index, found);
                while let Some(found) = pending.remove(&turn) {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let item = &items[turn];
                    turn += 1;
                    let more = match found {
                        Ok(found) => self.absorb(&heading(&item.artifact), found),
                        Err(e) => {
                            result = Err(e);
                            false
                        }
                    };
                    if !more {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            let readers = handles.into_iter().filter_map(|h| h.join().ok()).collect();
            (result, readers)
        })
    }

    /// Fold one text's search result into the outcome, as [`search`](Self::search) does.
    fn absorb(&mut self, heading: &str, mut sink: Found) -> bool {
        if self.outcome.incomplete.is_some() {
            return false;
        }
        self.outcome.artifacts_searched += 1;
        if let Some(e) = sink.error {
            self.outcome.incomplete = Some(format!("searching '{heading}' failed: {e}"));
            return false;
        }
        // What the search would have kept with only the rest of the cap: everything before
        // the first matching line past it.
        let budget = self
            .limits
            .max_total_matches
            .saturating_sub(self.outcome.matches);
        if sink.matches > budget {
            let cut = sink
                .lines
                .iter()
                .enumerate()
                .filter(|(_, (_, is_match, _))| *is_match)
                .nth(budget)
                .map_or(sink.lines.len(), |(i, _)| i);
            sink.lines.truncate(cut);
            sink.matches = budget;
            sink.capped = true;
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

/// What searching one text found.
struct Found {
    lines: Vec<(u64, bool, Vec<u8>)>,
    matches: usize,
    /// A matching line past the budget was found (and not kept).
    capped: bool,
    error: Option<String>,
}

fn collect(searcher: &mut Searcher, matcher: &RegexMatcher, text: &[u8], budget: usize) -> Found {
    let mut sink = Collect {
        lines: Vec::new(),
        matches: 0,
        budget,
        capped: false,
    };
    let error = searcher
        .search_slice(matcher, text, &mut sink)
        .err()
        .map(|e| e.to_string());
    Found {
        lines: sink.lines,
        matches: sink.matches,
        capped: sink.capped,
        error,
    }
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

    /// The worker-thread search, forced on small inputs, against the one-by-one search, with
    /// caps that end the search at every kind of place.
    #[test]
    fn parallel_search_equals_the_sequential_one() {
        use crate::artifacts::{ArtifactSource, NewArtifact};
        let tmp = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(&tmp.path().join("a.db")).unwrap();
        for a in 0..40usize {
            let text: String = (0..(50 + a * 37 % 200))
                .map(|i| match (i * 31 + a * 17) % 23 {
                    0 => format!("hit {i} in {a}\n"),
                    1 => format!("HIT twice {i} hit\n"),
                    _ => format!("filler {i} {}\n", "x".repeat((i * a) % 40)),
                })
                .collect();
            store
                .create(&NewArtifact {
                    conversation_id: if a % 3 == 0 { "other" } else { "c" },
                    id: &format!("a{a:02}"),
                    title: "t",
                    content_type: "text/plain",
                    source: ArtifactSource::Tool,
                    content: &text,
                })
                .unwrap();
        }
        let limits = [
            GrepLimits::default(),
            GrepLimits {
                max_total_matches: 7,
                ..GrepLimits::default()
            },
            GrepLimits {
                max_total_matches: 40,
                ..GrepLimits::default()
            },
            GrepLimits {
                max_output_chars: 300,
                max_line_chars: 10,
                ..GrepLimits::default()
            },
        ];
        for conversation in [Some("c"), None] {
            for limits in limits {
                for (pattern, ignore_case, context, max_count) in [
                    ("hit", false, 0, 20),
                    ("hit", true, 2, 3),
                    ("nothing", false, 1, 20),
                    (r"filler \d+ x{30}", false, 0, 0),
                ] {
                    let options = GrepOptions {
                        ignore_case,
                        context,
                        max_count,
                        ..opts(pattern)
                    };
                    let mut one_by_one = Grep::new(options.clone(), limits).unwrap();
                    store
                        .for_each_latest(conversation, None, |a, t| one_by_one.search(&a.id, t))
                        .unwrap();
                    let expected = one_by_one.finish();
                    for workers in [2, 3] {
                        let mut parallel = Grep::new(options.clone(), limits).unwrap();
                        let items = store.latest_items(conversation, None).unwrap();
                        let readers = store.take_readers(workers);
                        assert_eq!(readers.len(), workers);
                        let (result, readers) =
                            parallel.search_parallel(&items, readers, &|a| a.id.clone());
                        result.unwrap();
                        assert_eq!(readers.len(), workers, "connections come back");
                        store.return_readers(readers);
                        assert_eq!(
                            parallel.finish(),
                            expected,
                            "{pattern} {limits:?} {conversation:?}"
                        );
                    }
                }
            }
        }
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
