//! Artifact benchmarks: update_artifact on a 1 MB artifact (exact, normalised, fuzzy),
//! read_artifact of one page of a 100,000-line artifact (against 10,000- and 1,000,000-line
//! ones, to show a page does not cost the artifact's size), and grep across 1,000 artifacts
//! totalling 100 MB compared with `rg` over the same text as files, in the same run.
//!
//! Run: `cargo bench -p artifactflow-engine --bench artifacts`.

use std::cell::Cell;
use std::process::Command;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use engine::artifacts::matching::{find_unique, DEFAULT_FUZZY_BUDGET};
use engine::artifacts::{artifact_tools, ArtifactSource, ArtifactStore, NewArtifact};
use engine::tools::{pipeline, ToolContext, ToolRef, ToolResult};
use indexmap::IndexMap;

fn call(rt: &tokio::runtime::Runtime, tool: &ToolRef, params: &[(&str, &str)]) -> ToolResult {
    let raw: IndexMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    rt.block_on(pipeline::run(tool.as_ref(), &raw, &ToolContext::default()))
}

fn megabyte_doc() -> String {
    let mut s = String::with_capacity(1 << 20);
    let mut i = 0;
    while s.len() < (1 << 20) - 300 {
        s.push_str(&format!(
            "Paragraph {i}: the committee reviewed item {} and noted a budget of {} units.\n",
            i * 13,
            i * 7
        ));
        if i == 6000 {
            s.push_str("EXACT-TARGET line for the exact benchmark, state one.\n");
            s.push_str("She said \u{201C}alpha\u{201D} \u{2014} state one.\n");
            s.push_str(
                "The quick brown fox jumps over the lazy dog near the river bank, state one.\n",
            );
        }
        i += 1;
    }
    s
}

fn bench_update(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = ArtifactStore::open(&dir.path().join("bench.db")).unwrap();
    let tools = artifact_tools(store.clone(), "bench");
    let doc = megabyte_doc();
    let r = call(
        &rt,
        &tools[0],
        &[("id", "doc"), ("title", "1 MB"), ("content", &doc)],
    );
    assert!(r.success, "{r:?}");

    let mut g = c.benchmark_group("update_artifact_1MB");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    let state = Cell::new(0u32);
    let flip = |exact: &str, old: &dyn Fn(&str) -> String, new: &dyn Fn(&str) -> String| {
        let (from, to) = if state.get().is_multiple_of(2) {
            ("one", "two")
        } else {
            ("two", "one")
        };
        state.set(state.get() + 1);
        let r = call(
            &rt,
            &tools[1],
            &[
                ("id", "doc"),
                ("old_str", &old(from)),
                ("new_str", &new(to)),
            ],
        );
        assert!(r.success, "{r:?}");
        assert_eq!(r.metadata["match"], exact);
    };
    g.bench_function("exact", |b| {
        b.iter(|| {
            flip(
                "exact",
                &|s| format!("EXACT-TARGET line for the exact benchmark, state {s}."),
                &|s| format!("EXACT-TARGET line for the exact benchmark, state {s}."),
            )
        })
    });
    state.set(0);
    g.bench_function("normalised", |b| {
        b.iter(|| {
            flip(
                "normalised",
                &|s| format!("She said \"alpha\" - state {s}."),
                &|s| format!("She said \u{201C}alpha\u{201D} \u{2014} state {s}."),
            )
        })
    });
    state.set(0);
    g.bench_function("fuzzy", |b| {
        b.iter(|| {
            flip(
                "fuzzy",
                &|s| format!("The quikc brown fox jumped over the lazy dog near the river bank, state {s}."),
                &|s| format!("The quick brown fox jumps over the lazy dog near the river bank, state {s}."),
            )
        })
    });
    g.finish();

    // The matching alone, without the database write (from the original text: the flips
    // above leave each target in either state).
    store.rewrite("bench", "doc", &doc).unwrap();
    let mut g = c.benchmark_group("match_only_1MB");
    g.sample_size(10);
    let (_, text) = store.content("bench", "doc", None).unwrap();
    let fuzzy_old = "The quikc brown fox jumped over the lazy dog near the river bank, state one.";
    g.bench_function("fuzzy", |b| {
        b.iter(|| find_unique(&text, fuzzy_old, DEFAULT_FUZZY_BUDGET).unwrap())
    });
    g.bench_function("normalised", |b| {
        b.iter(|| {
            find_unique(
                &text,
                "She said \"alpha\" - state one.",
                DEFAULT_FUZZY_BUDGET,
            )
            .unwrap()
        })
    });
    g.finish();
}

fn bench_read(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = ArtifactStore::open(&dir.path().join("bench.db")).unwrap();
    let tools = artifact_tools(store, "bench");
    let mut g = c.benchmark_group("read_artifact_page");
    for lines in [10_000usize, 100_000, 1_000_000] {
        let id = format!("lines{lines}");
        let text: String = (1..=lines)
            .map(|i| format!("line {i}: some ordinary text of moderate length for a page\n"))
            .collect();
        let r = call(
            &rt,
            &tools[0],
            &[("id", &id), ("title", "t"), ("content", &text)],
        );
        assert!(r.success);
        let offset = (lines / 2).to_string();
        g.bench_function(format!("{lines}_lines_100_line_page"), |b| {
            b.iter(|| {
                let r = call(
                    &rt,
                    &tools[3],
                    &[("id", &id), ("offset", &offset), ("limit", "100")],
                );
                assert!(r.success && r.data.contains("has_more=\"true\""));
            })
        });
    }
    g.finish();
}

fn bench_grep(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let store = ArtifactStore::open(&dir.path().join("bench.db")).unwrap();
    let tools = artifact_tools(store.clone(), "bench");
    for a in 0..1000usize {
        let mut text = String::with_capacity(100_100);
        let mut i = 0;
        while text.len() < 100_000 {
            text.push_str(&format!(
                "doc {a} line {i}: words about shipping, invoices and quarterly numbers {}\n",
                (a * 31 + i * 17) % 9973
            ));
            if i == 700 && a % 10 == 0 {
                text.push_str(&format!("ERROR code E{a:04} raised by the billing job\n"));
            }
            i += 1;
        }
        let id = format!("doc{a:04}");
        store
            .create(&NewArtifact {
                conversation_id: "bench",
                id: &id,
                title: "grep bench",
                content_type: "text/plain",
                source: ArtifactSource::Tool,
                content: &text,
            })
            .unwrap();
        std::fs::write(files.join(&id), &text).unwrap();
    }
    let have_rg = Command::new("rg").arg("--version").output().is_ok();
    let mut g = c.benchmark_group("grep_1000_artifacts_100MB");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for (name, pattern, fixed) in [
        ("regex_rare", r"ERROR code E\d+", "false"),
        ("literal_rare", "raised by the billing job", "true"),
    ] {
        g.bench_function(format!("grep_artifact_{name}"), |b| {
            b.iter(|| {
                let r = call(
                    &rt,
                    &tools[4],
                    &[
                        ("pattern", pattern),
                        ("fixed_strings", fixed),
                        ("max_count", "20"),
                    ],
                );
                assert!(
                    r.success
                        && r.data
                            .contains("100 matching lines in 100 artifacts (1000 searched)"),
                    "{}",
                    &r.data[r.data.len().saturating_sub(300)..]
                );
            })
        });
        if have_rg {
            for threads in ["1", "2"] {
                g.bench_function(format!("rg_j{threads}_{name}"), |b| {
                    b.iter(|| {
                        let mut cmd = Command::new("rg");
                        cmd.args(["--heading", "-n", "-m", "20", "-j", threads]);
                        if fixed == "true" {
                            cmd.arg("-F");
                        }
                        let out = cmd.arg(pattern).arg(&files).output().unwrap();
                        assert!(out.status.success());
                    })
                });
            }
        }
    }
    g.finish();
}

/// The artifact library's queries over 10,000 artifacts in 50 conversations: what the Artifacts
/// screen asks for as it opens, searches, filters, sorts and scrolls (pages of 100).
fn bench_library(c: &mut Criterion) {
    use engine::artifacts::{ArtifactSource, ListFilter, ListSort, NewArtifact};
    let dir = tempfile::tempdir().unwrap();
    let store = ArtifactStore::open(&dir.path().join("library.db")).unwrap();
    let words = [
        "market", "report", "climate", "python", "survey", "budget", "plan",
    ];
    for i in 0..10_000usize {
        let topic = words[i % words.len()];
        let content = format!(
            "# {topic} notes {i}\n\n{}\n",
            format!("Line about {topic} and item {i}. ").repeat(20)
        );
        store
            .create(&NewArtifact {
                conversation_id: &format!("conv-{}", i % 50),
                id: &format!("a{i}"),
                title: &format!("{topic} {i}"),
                content_type: if i % 3 == 0 {
                    "application/json"
                } else {
                    "text/markdown"
                },
                source: ArtifactSource::Agent,
                content: &content,
            })
            .unwrap();
    }
    let mut g = c.benchmark_group("library_10000_artifacts");
    let cases: [(&str, ListFilter, usize); 6] = [
        ("first_page_newest", ListFilter::default(), 0),
        ("page_at_offset_9900", ListFilter::default(), 9_900),
        (
            "search_fts",
            ListFilter {
                query: Some("climate item".into()),
                ..Default::default()
            },
            0,
        ),
        (
            "conversation_type_and_dates",
            ListFilter {
                conversation_id: Some("conv-7".into()),
                content_type: Some("text/markdown".into()),
                updated_from: Some("2000-01-01".into()),
                updated_before: Some("2999-01-01".into()),
                ..Default::default()
            },
            0,
        ),
        (
            "sorted_by_title",
            ListFilter {
                sort: Some(ListSort::Title),
                ..Default::default()
            },
            0,
        ),
        (
            "sorted_largest",
            ListFilter {
                sort: Some(ListSort::Largest),
                ..Default::default()
            },
            0,
        ),
    ];
    for (name, filter, offset) in cases {
        assert!(!store.list(&filter, 100, offset).unwrap().items.is_empty());
        g.bench_function(name, |b| {
            b.iter(|| store.list(&filter, 100, offset).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench_update, bench_read, bench_grep, bench_library);
criterion_main!(benches);
