use engine::artifacts::{ArtifactSource, ArtifactStore, ListFilter, ListSort, NewArtifact};

use crate::support::env;

fn add(
    store: &ArtifactStore,
    conv: &str,
    id: &str,
    title: &str,
    ct: &str,
    source: ArtifactSource,
    content: &str,
) {
    store
        .create(&NewArtifact {
            conversation_id: conv,
            id,
            title,
            content_type: ct,
            source,
            content,
        })
        .unwrap();
}

fn ids(page: &engine::artifacts::ArtifactPage) -> Vec<&str> {
    page.items.iter().map(|s| s.artifact.id.as_str()).collect()
}

#[test]
fn list_filters_and_pages() {
    let e = env();
    let s = &e.store;
    add(
        s,
        "c1",
        "a",
        "Alpha notes",
        "text/markdown",
        ArtifactSource::Agent,
        "one\ntwo\n",
    );
    add(
        s,
        "c1",
        "b",
        "Beta data",
        "application/json",
        ArtifactSource::User,
        "{}",
    );
    add(
        s,
        "c2",
        "c",
        "Gamma",
        "text/markdown",
        ArtifactSource::Tool,
        "x",
    );
    let all = s.list(&ListFilter::default(), 10, 0).unwrap();
    assert_eq!(all.total, 3);
    assert_eq!(ids(&all).len(), 3);
    let c1 = ListFilter {
        conversation_id: Some("c1".into()),
        ..Default::default()
    };
    assert_eq!(s.list(&c1, 10, 0).unwrap().total, 2);
    let page1 = s.list(&c1, 1, 0).unwrap();
    let page2 = s.list(&c1, 1, 1).unwrap();
    assert_eq!((page1.total, page1.items.len()), (2, 1));
    assert_ne!(ids(&page1), ids(&page2));
    let md = ListFilter {
        content_type: Some("text/markdown".into()),
        ..Default::default()
    };
    let mut got = ids(&s.list(&md, 10, 0).unwrap())
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    got.sort();
    assert_eq!(got, vec!["a", "c"]);
    let tool = ListFilter {
        source: Some(ArtifactSource::Tool),
        ..Default::default()
    };
    assert_eq!(ids(&s.list(&tool, 10, 0).unwrap()), vec!["c"]);
    let a = &s
        .list(&c1, 10, 0)
        .unwrap()
        .items
        .into_iter()
        .find(|i| i.artifact.id == "a")
        .unwrap();
    assert_eq!((a.line_count, a.size_chars), (2, 8));
}

#[test]
fn list_by_date_range_and_in_every_order() {
    let e = env();
    let s = &e.store;
    for (id, title, content) in [
        ("old", "beta", "x"),
        ("mid", "Alpha", "xxxxxxxxxx"),
        ("new", "gamma", "xxxxx"),
    ] {
        add(
            s,
            "c1",
            id,
            title,
            "text/plain",
            ArtifactSource::Agent,
            content,
        );
    }
    let conn = rusqlite::Connection::open(e.dir.path().join("app.db")).unwrap();
    for (id, at) in [
        ("old", "2026-10-31T23:59:59.000Z"),
        ("mid", "2026-11-15T12:00:00.000Z"),
        ("new", "2026-12-01T00:00:00.000Z"),
    ] {
        conn.execute(
            "UPDATE artifacts SET updated_at = ?1 WHERE id = ?2",
            rusqlite::params![at, id],
        )
        .unwrap();
    }
    let list = |f: ListFilter| {
        ids(&s.list(&f, 10, 0).unwrap())
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    // November only: from its first day, before December's.
    let november = ListFilter {
        updated_from: Some("2026-11-01".into()),
        updated_before: Some("2026-12-01".into()),
        ..Default::default()
    };
    assert_eq!(list(november.clone()), ["mid"]);
    assert_eq!(
        s.list(&november, 10, 0).unwrap().total,
        1,
        "the total counts the range too"
    );
    let from_nov = ListFilter {
        updated_from: Some("2026-11-01".into()),
        ..Default::default()
    };
    assert_eq!(list(from_nov), ["new", "mid"]);
    let sorted = |sort| {
        list(ListFilter {
            sort: Some(sort),
            ..Default::default()
        })
    };
    assert_eq!(sorted(ListSort::Newest), ["new", "mid", "old"]);
    assert_eq!(sorted(ListSort::Relevance), ["new", "mid", "old"]);
    assert_eq!(sorted(ListSort::Oldest), ["old", "mid", "new"]);
    assert_eq!(
        sorted(ListSort::Title),
        ["mid", "old", "new"],
        "case-insensitive"
    );
    assert_eq!(sorted(ListSort::Largest), ["mid", "new", "old"]);
    // A sort applies to search results too.
    let searched = list(ListFilter {
        query: Some("x".into()),
        sort: Some(ListSort::Oldest),
        ..Default::default()
    });
    assert_eq!(searched, ["old", "mid", "new"]);
}

#[test]
fn full_text_search_covers_title_and_latest_content_only() {
    let e = env();
    let s = &e.store;
    add(
        s,
        "c1",
        "a",
        "Quarterly report",
        "text/markdown",
        ArtifactSource::Agent,
        "revenue grew",
    );
    add(
        s,
        "c1",
        "b",
        "Shopping",
        "text/plain",
        ArtifactSource::User,
        "apples and pears",
    );
    let q = |text: &str| {
        let f = ListFilter {
            query: Some(text.into()),
            ..Default::default()
        };
        ids(&s.list(&f, 10, 0).unwrap())
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(q("quarterly"), vec!["a"]);
    assert_eq!(q("apple"), vec!["b"], "the last word is a prefix");
    assert_eq!(
        q("\"unbalanced"),
        Vec::<String>::new(),
        "user text cannot break the query"
    );
    s.rewrite("c1", "b", "bananas only").unwrap();
    assert!(q("pears").is_empty(), "old content leaves the index");
    assert_eq!(q("bananas"), vec!["b"]);
}

#[test]
fn delete_removes_versions_and_index_entries() {
    let e = env();
    let s = &e.store;
    add(
        s,
        "c1",
        "a",
        "Doomed",
        "text/plain",
        ArtifactSource::Agent,
        "v1",
    );
    s.rewrite("c1", "a", "v2 unique").unwrap();
    assert!(s.delete("c1", "a").unwrap());
    assert!(!s.delete("c1", "a").unwrap());
    assert!(s.get("c1", "a").unwrap().is_none());
    let f = ListFilter {
        query: Some("unique".into()),
        ..Default::default()
    };
    assert_eq!(s.list(&f, 10, 0).unwrap().total, 0);
    add(
        s,
        "c1",
        "a",
        "Reborn",
        "text/plain",
        ArtifactSource::Agent,
        "fresh",
    );
    assert_eq!(s.versions("c1", "a").unwrap().len(), 1, "no stale versions");
}

#[test]
fn versions_are_immutable_history() {
    let e = env();
    let s = &e.store;
    add(
        s,
        "c1",
        "a",
        "T",
        "text/plain",
        ArtifactSource::Agent,
        "one",
    );
    for i in 2..=5 {
        s.rewrite("c1", "a", &format!("v{i}")).unwrap();
    }
    let v = s.versions("c1", "a").unwrap();
    assert_eq!(
        v.iter().map(|v| v.version).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    assert_eq!(s.content("c1", "a", Some(1)).unwrap().1, "one");
    assert_eq!(s.content("c1", "a", Some(3)).unwrap().1, "v3");
    let (latest, text) = s.content("c1", "a", None).unwrap();
    assert_eq!((latest.version, text.as_str()), (5, "v5"));
    assert!(latest.updated_at >= latest.created_at);
}

#[test]
fn a_database_from_schema_v1_with_data_migrates_and_takes_artifacts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        engine::db::migrations().to_version(&mut conn, 1).unwrap();
        conn.execute(
            "INSERT INTO conversations (id, title) VALUES ('c1', 'kept')",
            [],
        )
        .unwrap();
    }
    let store = ArtifactStore::open(&path).unwrap();
    add(
        &store,
        "c1",
        "a",
        "T",
        "text/plain",
        ArtifactSource::Agent,
        "x",
    );
    drop(store);
    let conn = engine::db::open(&path).unwrap();
    let (title, n): (String, i64) = conn
        .query_row(
            "SELECT (SELECT title FROM conversations WHERE id='c1'), (SELECT count(*) FROM artifacts)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((title.as_str(), n), ("kept", 1));
}

#[test]
fn the_store_works_over_the_app_contexts_shared_connection() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = engine::context::AppContext::open(Some(dir.path())).unwrap();
    let store = ArtifactStore::new(ctx.db_handle());
    add(
        &store,
        "c9",
        "a",
        "T",
        "text/plain",
        ArtifactSource::User,
        "shared",
    );
    let n: i64 = ctx.with_db(|c| {
        c.query_row("SELECT count(*) FROM artifacts", [], |r| r.get(0))
            .unwrap()
    });
    assert_eq!(n, 1);
}

#[test]
fn registry_takes_the_artifact_tools_per_conversation() {
    let e = env();
    let registry = engine::tools::registry::Registry::default().with_tools(e.tools.clone());
    for name in engine::tools::registry::RESERVED_ARTIFACT_TOOLS {
        let tool = registry.get(name).unwrap();
        assert_eq!(tool.source(), engine::tools::ToolSource::Artifact);
    }
}
