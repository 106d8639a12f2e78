//! `library search` / `search_library` over 100,000 passages: the goal is ≤ 50 ms per
//! query. The library is written through the sources store's own steps (stage, begin, pages,
//! finish) into a real SQLite file: 1,000 sources of 100 one-passage pages, each passage about
//! 120 words drawn from a 20,000-word vocabulary with Zipf-like frequencies (word rank r has
//! weight 1/r), so common words match most passages and rare ones a few. 200 queries of one
//! to three words, drawn the same way, run as the CLI runs them (every word, the last also as a
//! prefix), as `search_library` does (every word) and as its fallback does (any word). Prints
//! p50, p95 and the slowest query.
//!
//! `cargo bench -p artifactflow-engine --bench library_search` (PASSAGES=N to change the size).

use std::path::Path;
use std::time::Instant;

use artifactflow_store::sources::search::{passages, Match};
use artifactflow_store::sources::{FileFacts, PageRecord, PassageRecord, SearchScope, SourceStore};
use engine::owner::ProcessOwner;

const VOCABULARY: usize = 20_000;
const PAGES_PER_SOURCE: u32 = 100;
const WORDS_PER_PASSAGE: usize = 120;
const QUERIES: usize = 200;

/// A small deterministic generator (xorshift64*), so every run builds the same library.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Word ranks with weight 1/r, drawn by inverting the cumulative weights.
struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(n: usize) -> Self {
        let mut total = 0.0;
        let cumulative = (1..=n)
            .map(|r| {
                total += 1.0 / r as f64;
                total
            })
            .collect();
        Zipf { cumulative }
    }
    fn word(&self, rng: &mut Rng) -> String {
        let target = rng.unit() * self.cumulative.last().copied().unwrap_or(1.0);
        word(self.cumulative.partition_point(|&c| c < target))
    }
}

/// The word of rank `rank`: its digits in base 25 as letters other than `x`, then `x`. No
/// word is the beginning of another, as with real words, whose prefix expansions are small
/// (with `w0`, `w1`… the search field's prefix on the last word, `w1*`, matched thousands).
fn word(mut rank: usize) -> String {
    const DIGITS: &[u8] = b"abcdefghijklmnopqrstuvwyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[rank % 25]);
        rank /= 25;
        if rank == 0 {
            break;
        }
    }
    out.reverse();
    out.push(b'x');
    String::from_utf8(out).unwrap_or_default()
}

fn facts(path: &Path, size: u64) -> FileFacts {
    FileFacts {
        path: path.display().to_string(),
        file_name: path.file_name().unwrap().to_string_lossy().into_owned(),
        size,
        mtime_ns: None,
        kind: "markdown".into(),
        mime: "text/markdown".into(),
        page_count: Some(PAGES_PER_SOURCE),
        title: None,
        author: None,
        extractor: "bench".into(),
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let total: usize = std::env::var("PASSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let sources = total.div_ceil(PAGES_PER_SOURCE as usize);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("artifactflow.db");
    let owner = ProcessOwner::acquire(dir.path()).unwrap();
    let (mut store, _) = SourceStore::open(&db, &dir.path().join("sources"), &owner).unwrap();
    let job = store
        .create_job("cli", &owner, &serde_json::json!({}), &[])
        .unwrap();
    let zipf = Zipf::new(VOCABULARY);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);

    let started = Instant::now();
    for s in 0..sources {
        let path = dir.path().join(format!("in/source-{s}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("source {s}")).unwrap();
        let staged = store.stage(&path, &owner).unwrap();
        let f = facts(&path, staged.size);
        let mut pending = store.begin(&job, &f, staged).unwrap();
        let pages: Vec<PageRecord> = (1..=PAGES_PER_SOURCE)
            .map(|n| {
                let text: Vec<String> = (0..WORDS_PER_PASSAGE)
                    .map(|_| zipf.word(&mut rng))
                    .collect();
                let text = text.join(" ");
                let first_line = 1 + (n - 1) * 3;
                PageRecord {
                    page: Some(n),
                    label: None,
                    first_line,
                    line_count: 3,
                    has_text: true,
                    markdown: format!("<!-- page {n} -->\n\n{text}\n"),
                    passages: vec![PassageRecord {
                        page: Some(n),
                        line_first: first_line + 2,
                        line_last: first_line + 2,
                        text,
                    }],
                }
            })
            .collect();
        store.add_pages(&mut pending, &pages).unwrap();
        store.finish(&pending, &f, &serde_json::json!([])).unwrap();
    }
    let built = started.elapsed();
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    println!(
        "library: {} passages in {sources} sources, written in {:.1} s; database {:.0} MB",
        sources * PAGES_PER_SOURCE as usize,
        built.as_secs_f64(),
        size as f64 / 1e6
    );

    let conn = rusqlite::Connection::open(&db).unwrap();
    let queries: Vec<String> = (0..QUERIES)
        .map(|i| {
            let words = 1 + i % 3;
            (0..words)
                .map(|_| zipf.word(&mut rng))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    for (name, how) in [
        ("every word, the last as a prefix: the CLI", Match::All),
        ("every word: search_library", Match::Words),
        (
            "any word, common ones left out: search_library's fallback",
            Match::Any,
        ),
    ] {
        // One pass to warm the page cache, as a second search in a session would find it.
        for q in &queries {
            passages(&conn, q, how, &SearchScope::Library, 8).unwrap();
        }
        let mut times = Vec::with_capacity(QUERIES);
        let mut hits = 0usize;
        for q in &queries {
            let t = Instant::now();
            hits += passages(&conn, q, how, &SearchScope::Library, 8)
                .unwrap()
                .len();
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let slowest = times
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| queries[i].as_str())
            .unwrap_or("");
        println!(
            "search ({name}, k = 8, {QUERIES} queries of 1-3 words, {:.1} hits each): p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms ('{slowest}')",
            hits as f64 / QUERIES as f64,
            percentile(&sorted, 0.5),
            percentile(&sorted, 0.95),
            sorted.last().copied().unwrap_or(0.0),
        );
    }
}
