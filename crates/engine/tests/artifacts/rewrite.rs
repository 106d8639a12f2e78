use crate::support::{env, err};

#[tokio::test]
async fn rewrite_makes_a_new_version_and_keeps_history() {
    let e = env();
    e.create("doc", "v1 text").await;
    let r = e
        .call(
            "rewrite_artifact",
            &[("id", "doc"), ("content", "v2\ntext\n")],
        )
        .await;
    assert!(r.success, "{r:?}");
    assert!(r.data.contains("version 2"), "{}", r.data);
    assert_eq!(r.metadata["artifact_snapshot"]["version"], 2);
    assert_eq!(r.metadata["artifact_snapshot"]["content"], "v2\ntext\n");
    let history = e.store.versions("c1", "doc").unwrap();
    assert_eq!(
        history.iter().map(|v| v.version).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(history[1].line_count, 2);
    assert_eq!(e.store.content("c1", "doc", Some(1)).unwrap().1, "v1 text");
}

#[tokio::test]
async fn rewriting_an_unknown_id_names_it() {
    let e = env();
    let r = e
        .call("rewrite_artifact", &[("id", "ghost"), ("content", "x")])
        .await;
    assert!(err(&r).contains("no artifact with id 'ghost'"), "{r:?}");
}
