use crate::support::{env, err};

#[tokio::test]
async fn searches_all_artifacts_with_headings_and_a_total() {
    let e = env();
    e.create("a", "apple pie\nbanana\n").await;
    e.create("b", "cherry\napple tart\n").await;
    let r = e.call("grep_artifact", &[("pattern", "apple")]).await;
    assert!(r.success, "{r:?}");
    assert_eq!(
        r.data,
        "a\n1:apple pie\n\nb\n2:apple tart\n\n2 matching lines in 2 artifacts (2 searched)"
    );
}

#[tokio::test]
async fn one_artifact_by_id_with_regex_and_context() {
    let e = env();
    e.create("a", "x1\nfoo 12\nx2\nx3\nx4\nx5\nfoo 34\nx6\n")
        .await;
    e.create("b", "foo 99\n").await;
    let r = e
        .call(
            "grep_artifact",
            &[("pattern", r"foo \d+"), ("id", "a"), ("context", "1")],
        )
        .await;
    assert_eq!(
        r.data,
        "a\n1-x1\n2:foo 12\n3-x2\n--\n6-x5\n7:foo 34\n8-x6\n\n2 matching lines in 1 artifact (1 searched)"
    );
}

#[tokio::test]
async fn overlapping_context_is_merged() {
    let e = env();
    e.create("a", "m\nc\nm\nc\nc\nc\n").await;
    let r = e
        .call("grep_artifact", &[("pattern", "m"), ("context", "2")])
        .await;
    assert!(
        r.data.starts_with("a\n1:m\n2-c\n3:m\n4-c\n5-c\n\n"),
        "{}",
        r.data
    );
    assert!(!r.data.contains("--"));
}

#[tokio::test]
async fn fixed_strings_and_ignore_case_are_coerced_from_text() {
    let e = env();
    e.create("a", "a.b\naXb\nA.B\n").await;
    let r = e
        .call(
            "grep_artifact",
            &[
                ("pattern", "a.b"),
                ("fixed_strings", "yes"),
                ("ignore_case", "true"),
            ],
        )
        .await;
    assert!(r.data.starts_with("a\n1:a.b\n3:A.B\n"), "{}", r.data);
    let r = e.call("grep_artifact", &[("pattern", "a.b")]).await;
    assert!(r.data.starts_with("a\n1:a.b\n2:aXb\n\n"), "{}", r.data);
}

#[tokio::test]
async fn max_count_limits_matching_lines_per_artifact_and_says_so() {
    let e = env();
    e.create("a", &"hit\n".repeat(50)).await;
    let r = e.call("grep_artifact", &[("pattern", "hit")]).await;
    assert_eq!(
        r.data.matches(":hit").count(),
        20,
        "default max_count is 20"
    );
    assert!(r.data.contains("max_count reached in: a"), "{}", r.data);
    let r = e
        .call("grep_artifact", &[("pattern", "hit"), ("max_count", "3")])
        .await;
    assert_eq!(r.data.matches(":hit").count(), 3);
}

#[tokio::test]
async fn no_matches_is_a_success() {
    let e = env();
    e.create("a", "nothing here\n").await;
    let r = e.call("grep_artifact", &[("pattern", "zebra")]).await;
    assert!(r.success);
    assert_eq!(r.data, "No matches for 'zebra'");
    let r = e
        .call("grep_artifact", &[("pattern", "zebra"), ("id", "a")])
        .await;
    assert_eq!(r.data, "No matches for 'zebra' in 'a'");
}

#[tokio::test]
async fn unsupported_patterns_and_unknown_ids_are_errors() {
    let e = env();
    e.create("a", "x\n").await;
    let r = e.call("grep_artifact", &[("pattern", r"(\w)\1")]).await;
    assert!(err(&r).contains("cannot be used"), "{r:?}");
    assert!(err(&r).contains("fixed_strings=true"));
    let r = e
        .call("grep_artifact", &[("pattern", "x"), ("id", "ghost")])
        .await;
    assert!(err(&r).contains("'ghost'"), "{r:?}");
    let r = e
        .call("grep_artifact", &[("pattern", "x"), ("context", "-1")])
        .await;
    assert!(err(&r).contains("context"), "{r:?}");
}

#[tokio::test]
async fn long_lines_are_cut_and_caps_say_the_search_is_incomplete() {
    let e = env();
    e.create("wide", &format!("needle {}\n", "z".repeat(2000)))
        .await;
    let r = e.call("grep_artifact", &[("pattern", "needle")]).await;
    assert!(
        r.data.contains("[… line cut: 2007 chars]"),
        "{}",
        &r.data[..200]
    );
    for i in 0..60 {
        e.create(&format!("n{i:02}"), &"needle\n".repeat(20)).await;
    }
    let r = e.call("grep_artifact", &[("pattern", "needle")]).await;
    assert!(r.success);
    assert!(r.data.contains("Search incomplete"), "{}", r.data);
    assert_eq!(r.metadata["complete"], false);
}

#[tokio::test]
async fn other_conversations_are_not_searched() {
    let e = env();
    e.create("a", "shared word\n").await;
    e.store
        .create(&engine::artifacts::NewArtifact {
            conversation_id: "c2",
            id: "b",
            title: "",
            content_type: "text/plain",
            source: engine::artifacts::ArtifactSource::User,
            content: "shared word\n",
        })
        .unwrap();
    let r = e.call("grep_artifact", &[("pattern", "shared")]).await;
    assert!(r.data.contains("in 1 artifact (1 searched)"), "{}", r.data);
}

/// Enough text for `grep_artifact` to search on worker threads; the result must be exactly
/// the one-by-one search's.
#[tokio::test]
async fn a_large_search_on_worker_threads_matches_the_sequential_one() {
    use engine::artifacts::grep::{Grep, GrepLimits, GrepOptions, PARALLEL_MIN_BYTES};
    let e = env();
    let mut total = 0u64;
    let mut a = 0usize;
    while total < PARALLEL_MIN_BYTES + 100_000 {
        let text: String = (0..3_000)
            .map(|i| {
                if (i * 7 + a * 13).is_multiple_of(997) {
                    format!("line {i} of {a}: TARGET-{} here\n", i % 5)
                } else {
                    format!("line {i} of {a}: ordinary words to fill the artifact out\n")
                }
            })
            .collect();
        total += text.len() as u64;
        e.store
            .create(&engine::artifacts::NewArtifact {
                conversation_id: "c1",
                id: &format!("a{a:03}"),
                title: "t",
                content_type: "text/plain",
                source: engine::artifacts::ArtifactSource::Tool,
                content: &text,
            })
            .unwrap();
        a += 1;
    }
    for (pattern, context, max_count) in [
        (r"TARGET-\d", "0", "20"),
        ("TARGET-[0-2]", "2", "1"),
        ("line", "0", "5"),
    ] {
        let r = e
            .call(
                "grep_artifact",
                &[
                    ("pattern", pattern),
                    ("context", context),
                    ("max_count", max_count),
                ],
            )
            .await;
        assert!(r.success, "{r:?}");
        let mut g = Grep::new(
            GrepOptions {
                pattern: pattern.into(),
                fixed_strings: false,
                ignore_case: false,
                context: context.parse().unwrap(),
                max_count: max_count.parse().unwrap(),
            },
            GrepLimits::default(),
        )
        .unwrap();
        e.store
            .for_each_latest(Some("c1"), None, |a, text| g.search(&a.id, text))
            .unwrap();
        assert_eq!(r.data, g.finish().render(pattern), "{pattern}");
    }
}
