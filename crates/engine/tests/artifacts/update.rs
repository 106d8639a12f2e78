use crate::support::{env, err};

const DOC: &str = "# Plan\n\nStep one: gather the data.\nStep two: \u{201C}clean\u{201D} it \u{2014} carefully.   \n    Indented line with   gaps.\nStep three: publish the report to the team.\n";

#[tokio::test]
async fn exact_replacement_makes_version_two() {
    let e = env();
    e.create("plan", DOC).await;
    let r = e
        .call(
            "update_artifact",
            &[
                ("id", "plan"),
                ("old_str", "gather the data"),
                ("new_str", "collect data"),
            ],
        )
        .await;
    assert!(r.success, "{r:?}");
    assert!(
        r.data.contains("version 2") && r.data.contains("exact match at line 3"),
        "{}",
        r.data
    );
    assert_eq!(r.metadata["match"], "exact");
    assert_eq!(r.metadata["artifact_snapshot"]["version"], 2);
    assert_eq!(
        e.content("plan"),
        DOC.replace("gather the data", "collect data")
    );
}

#[tokio::test]
async fn normalised_match_replaces_only_the_original_span() {
    let e = env();
    e.create("plan", DOC).await;
    let r = e
        .call(
            "update_artifact",
            &[
                ("id", "plan"),
                ("old_str", "Step two: \"clean\" it - carefully."),
                ("new_str", "Step two: clean it."),
            ],
        )
        .await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.metadata["match"], "normalised");
    assert!(r.data.contains("normalising"), "{}", r.data);
    let expected = DOC.replace(
        "Step two: \u{201C}clean\u{201D} it \u{2014} carefully.",
        "Step two: clean it.",
    );
    assert_eq!(
        e.content("plan"),
        expected,
        "trailing spaces and other lines are untouched"
    );
}

#[tokio::test]
async fn indentation_and_whitespace_drift_is_tolerated() {
    let e = env();
    e.create("plan", DOC).await;
    let r = e
        .call(
            "update_artifact",
            &[
                ("id", "plan"),
                ("old_str", "Indented line with gaps."),
                ("new_str", "Fixed."),
            ],
        )
        .await;
    assert!(r.success, "{r:?}");
    assert!(e.content("plan").contains("\n    Fixed.\n"));
}

#[tokio::test]
async fn fuzzy_match_says_so_with_similarity() {
    let e = env();
    e.create("plan", DOC).await;
    let r = e
        .call(
            "update_artifact",
            &[
                ("id", "plan"),
                ("old_str", "Step three: publish teh report to the teams."),
                ("new_str", "Step three: ship it."),
            ],
        )
        .await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.metadata["match"], "fuzzy");
    let sim = r.metadata["similarity"].as_f64().unwrap();
    assert!((0.9..1.0).contains(&sim), "{sim}");
    assert!(
        r.data.contains("similarity") && r.data.contains("line 6"),
        "{}",
        r.data
    );
    assert!(e.content("plan").ends_with("Step three: ship it.\n"));
}

#[tokio::test]
async fn ambiguous_match_lists_places_and_changes_nothing() {
    let e = env();
    e.create("list", "- item\n- other\n- item\n").await;
    let r = e
        .call(
            "update_artifact",
            &[("id", "list"), ("old_str", "- item"), ("new_str", "- x")],
        )
        .await;
    let msg = err(&r);
    assert!(msg.contains("2 places"), "{msg}");
    assert!(msg.contains("line 1") && msg.contains("line 3"), "{msg}");
    assert_eq!(e.store.versions("c1", "list").unwrap().len(), 1);
}

#[tokio::test]
async fn missing_match_shows_nearest_lines() {
    let e = env();
    e.create("plan", DOC).await;
    let r = e
        .call(
            "update_artifact",
            &[
                ("id", "plan"),
                ("old_str", "Step two: wash everything thoroughly"),
                ("new_str", "x"),
            ],
        )
        .await;
    let msg = err(&r);
    assert!(msg.contains("not found"), "{msg}");
    assert!(msg.contains("line 4"), "nearest line listed: {msg}");
    assert!(msg.contains("read_artifact"), "{msg}");
}

#[tokio::test]
async fn empty_old_str_and_unknown_id_are_errors() {
    let e = env();
    e.create("plan", DOC).await;
    let r = e
        .call(
            "update_artifact",
            &[("id", "plan"), ("old_str", ""), ("new_str", "x")],
        )
        .await;
    assert!(err(&r).contains("old_str is empty"), "{r:?}");
    let r = e
        .call(
            "update_artifact",
            &[("id", "nope"), ("old_str", "a"), ("new_str", "b")],
        )
        .await;
    assert!(err(&r).contains("'nope'"), "{r:?}");
}

#[tokio::test]
async fn new_str_may_be_empty_to_delete() {
    let e = env();
    e.create("t", "keep remove keep").await;
    let r = e
        .call(
            "update_artifact",
            &[("id", "t"), ("old_str", " remove"), ("new_str", "")],
        )
        .await;
    assert!(r.success, "{r:?}");
    assert_eq!(e.content("t"), "keep keep");
}

#[tokio::test]
async fn fuzzy_search_on_a_large_artifact_finds_the_one_place() {
    let e = env();
    let mut text: String = (0..20_000)
        .map(|i| format!("line {i}: the value of item {i} is {}\n", i * 7))
        .collect();
    text.push_str("A unique closing paragraph that mentions the final accounting figures.\n");
    e.create("big", &text).await;
    let r = e
        .call(
            "update_artifact",
            &[
                ("id", "big"),
                (
                    "old_str",
                    "A unique closing paragraph that mentoins the final acounting figures.",
                ),
                ("new_str", "END."),
            ],
        )
        .await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.metadata["match"], "fuzzy");
    assert!(e.content("big").ends_with("is 139993\nEND.\n"));
}
