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
