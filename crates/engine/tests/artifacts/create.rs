use crate::support::{env, err};

#[tokio::test]
async fn creates_with_default_content_type_and_a_snapshot() {
    let e = env();
    let r = e
        .call(
            "create_artifact",
            &[
                ("id", "report"),
                ("title", "Report"),
                ("content", "# Hi\nthere\n"),
            ],
        )
        .await;
    assert!(r.success, "{r:?}");
    assert!(r.data.contains("Created artifact 'report'"), "{}", r.data);
    let snap = &r.metadata["artifact_snapshot"];
    assert_eq!(snap["id"], "report");
    assert_eq!(snap["content_type"], "text/markdown");
    assert_eq!(snap["source"], "agent");
    assert_eq!(snap["version"], 1);
    assert_eq!(snap["content"], "# Hi\nthere\n");
    assert_eq!(snap["conversation_id"], "c1");
}

#[tokio::test]
async fn content_type_must_be_one_of_the_enum() {
    let e = env();
    let r = e
        .call(
            "create_artifact",
            &[
                ("id", "a"),
                ("title", "A"),
                ("content", "x"),
                ("content_type", "video/mp4"),
            ],
        )
        .await;
    assert!(err(&r).contains("content_type"), "{r:?}");
    let r = e
        .call(
            "create_artifact",
            &[
                ("id", "a"),
                ("title", "A"),
                ("content", "{}"),
                ("content_type", "application/json"),
            ],
        )
        .await;
    assert!(r.success);
    assert_eq!(
        r.metadata["artifact_snapshot"]["content_type"],
        "application/json"
    );
}

#[tokio::test]
async fn an_existing_id_is_a_clear_error_and_changes_nothing() {
    let e = env();
    e.create("notes", "first").await;
    let r = e
        .call(
            "create_artifact",
            &[("id", "notes"), ("title", "N"), ("content", "second")],
        )
        .await;
    let msg = err(&r);
    assert!(msg.contains("'notes' already exists"), "{msg}");
    assert!(msg.contains("update_artifact"), "{msg}");
    assert_eq!(e.content("notes"), "first");
}

#[tokio::test]
async fn the_same_id_may_exist_in_another_conversation() {
    let e = env();
    e.create("notes", "mine").await;
    let other = engine::artifacts::artifact_tools(e.store.clone(), "c2");
    let raw: indexmap::IndexMap<String, String> =
        [("id", "notes"), ("title", "t"), ("content", "theirs")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    let r = engine::tools::pipeline::run(other[0].as_ref(), &raw, &Default::default()).await;
    assert!(r.success, "{r:?}");
    assert_eq!(e.store.content("c2", "notes", None).unwrap().1, "theirs");
    assert_eq!(e.content("notes"), "mine");
}

#[tokio::test]
async fn bad_ids_and_missing_params_are_errors() {
    let e = env();
    let r = e
        .call(
            "create_artifact",
            &[("id", "my report"), ("title", "t"), ("content", "x")],
        )
        .await;
    assert!(err(&r).contains("letters, digits"), "{r:?}");
    let r = e
        .call("create_artifact", &[("id", "a"), ("title", "t")])
        .await;
    assert!(
        err(&r).contains("missing required parameter `content`"),
        "{r:?}"
    );
}
