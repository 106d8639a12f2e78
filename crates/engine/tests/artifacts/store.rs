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

/// A schema-5 database (text artifacts with two versions, and a call row) migrates to binary
/// content: the text artifacts read back exactly, versions included, and take binary siblings.
#[test]
fn a_schema_5_database_keeps_its_text_artifacts_and_takes_binary_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v5.db");
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        engine::db::migrations().to_version(&mut conn, 5).unwrap();
        conn.execute_batch(
            "INSERT INTO conversations (id) VALUES ('c1');
             INSERT INTO tool_calls (call_id, conversation_id, tool, status)
                 VALUES ('k1', 'c1', 'echo', 'succeeded');
             INSERT INTO artifacts (pk, conversation_id, id, title, source, current_version)
                 VALUES (1, 'c1', 'notes', 'Notes', 'agent', 2);
             INSERT INTO artifact_versions (artifact_pk, version, size_chars, size_bytes, line_count)
                 VALUES (1, 1, 4, 4, 1), (1, 2, 8, 8, 2);
             INSERT INTO artifact_chunks (artifact_pk, version, first_line, content)
                 VALUES (1, 1, 1, 'one
'), (1, 2, 1, 'one
two
');
             INSERT INTO artifacts_fts (rowid, title, content) VALUES (1, 'Notes', 'one two');",
        )
        .unwrap();
    }
    let store = ArtifactStore::open(&path).unwrap();
    let (a, text) = store.content("c1", "notes", None).unwrap();
    assert_eq!(
        (a.version, a.binary, text.as_str()),
        (2, false, "one\ntwo\n")
    );
    assert_eq!(store.content("c1", "notes", Some(1)).unwrap().1, "one\n");
    let image = store
        .create_binary(
            "c1",
            "Chart of sales",
            "image/png",
            &[0x89, b'P', b'N', b'G', 0, 255],
        )
        .unwrap();
    assert!(image.binary && image.id.starts_with("image_"), "{image:?}");
    assert_eq!(
        (image.version, image.content_type.as_str()),
        (1, "image/png")
    );
    let (_, bytes) = store.bytes("c1", &image.id).unwrap();
    assert_eq!(bytes, [0x89, b'P', b'N', b'G', 0, 255]);
    // A text artifact reads as its UTF-8 bytes.
    assert_eq!(store.bytes("c1", "notes").unwrap().1, b"one\ntwo\n");
    let versions = store.versions("c1", &image.id).unwrap();
    assert_eq!(versions.len(), 1);
    // The library lists it with its size in bytes; the call row got the new column's default.
    let page = store.list(&ListFilter::default(), 10, 0).unwrap();
    let listed = page
        .items
        .iter()
        .find(|s| s.artifact.id == image.id)
        .unwrap();
    assert_eq!(
        (listed.size_bytes, listed.size_chars, listed.line_count),
        (6, 0, 0)
    );
    let conn = engine::db::open(&path).unwrap();
    let calls = engine::calls::store::list(&conn, "c1").unwrap();
    assert!(calls[0].attachments.is_empty());
}

#[test]
fn binary_content_is_found_by_title_only_and_deleted_with_its_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = engine::context::AppContext::open(Some(dir.path())).unwrap();
    ctx.with_db(|c| engine::conversations::ensure(c, "c1", ""))
        .unwrap();
    let store = ctx.artifact_store();
    let image = store
        .create_binary("c1", "Sunset photo", "Image/JPEG; q=1", b"sunrise bytes")
        .unwrap();
    assert_eq!(image.content_type, "image/jpeg", "normalised");
    let search = |q: &str| {
        let filter = ListFilter {
            query: Some(q.into()),
            ..Default::default()
        };
        ids(&store.list(&filter, 10, 0).unwrap()).join(",")
    };
    assert_eq!(search("sunset"), image.id);
    assert_eq!(search("sunrise"), "", "the bytes are not indexed");
    let largest = ListFilter {
        sort: Some(ListSort::Largest),
        ..Default::default()
    };
    add(
        &store,
        "c1",
        "t",
        "T",
        "text/plain",
        ArtifactSource::Agent,
        "abc",
    );
    assert_eq!(
        ids(&store.list(&largest, 10, 0).unwrap()),
        [image.id.as_str(), "t"]
    );
    ctx.with_db(|c| engine::conversations::delete(c, "c1"))
        .unwrap();
    let left: i64 = ctx.with_db(|c| {
        c.query_row(
            "SELECT (SELECT count(*) FROM artifact_blobs) + (SELECT count(*) FROM artifacts)",
            [],
            |r| r.get(0),
        )
        .unwrap()
    });
    assert_eq!(left, 0);
}

#[test]
fn binary_content_over_the_limit_or_with_a_bad_type_is_refused_clearly() {
    let e = env();
    let big = vec![1u8; engine::artifacts::MAX_BINARY_BYTES + 1];
    let err = e
        .store
        .create_binary("c1", "Big", "audio/wav", &big)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "'Big' (audio/wav, 25.0 MB) is over the 25.0 MB limit for binary artifacts; it was not stored"
    );
    let err = e.store.create_binary("c1", "X", "png", b"x").unwrap_err();
    assert!(
        err.to_string().contains("'png' is not a MIME type"),
        "{err}"
    );
    let a = e.store.create_binary("c1", "Blob", "", b"x").unwrap();
    assert_eq!(
        (a.content_type.as_str(), a.id.starts_with("file_")),
        ("application/octet-stream", true)
    );
    assert_eq!(
        e.store.list(&ListFilter::default(), 10, 0).unwrap().total,
        1
    );
}
