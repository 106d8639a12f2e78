//! Users' sources in a real SQLite file with real original files: migration 15 over existing
//! data, dedup, new versions, removal, visibility of what is being written, and the rollback of
//! a job whose process died.

use std::path::{Path, PathBuf};

use artifactflow_platform::owner::ProcessOwner;
use artifactflow_store::artifacts::{ArtifactStore, ListFilter};
use artifactflow_store::db;
use artifactflow_store::sources::{FileFacts, PageRecord, PassageRecord, SourceStore};
use rusqlite::Connection;

struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        Home { _dir: dir, root }
    }
    fn db(&self) -> PathBuf {
        self.root.join("artifactflow.db")
    }
    fn blobs(&self) -> PathBuf {
        self.root.join("sources")
    }
    fn owner(&self) -> ProcessOwner {
        ProcessOwner::acquire(&self.root).unwrap()
    }
    fn open(&self, owner: &ProcessOwner) -> (SourceStore, Vec<String>) {
        SourceStore::open(&self.db(), &self.blobs(), owner).unwrap()
    }
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.root.join("in").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }
    fn blob_files(&self) -> usize {
        walk(&self.blobs())
    }
}

fn walk(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| {
            let e = e.unwrap();
            if e.path().is_dir() {
                walk(&e.path())
            } else {
                1
            }
        })
        .sum()
}

fn facts(path: &Path, size: u64) -> FileFacts {
    FileFacts {
        path: path.display().to_string(),
        file_name: path.file_name().unwrap().to_string_lossy().into_owned(),
        size,
        mtime_ns: None,
        kind: "markdown".into(),
        mime: "text/markdown".into(),
        page_count: Some(2),
        title: None,
        author: None,
        extractor: "test".into(),
    }
}

/// Two pages: "alpha <word>" on page 1, "omega <word>" on page 2.
fn pages(word: &str) -> Vec<PageRecord> {
    (1..=2u32)
        .map(|n| {
            let first_line = 1 + (n - 1) * 3;
            let text = format!("{} {word}", if n == 1 { "alpha" } else { "omega" });
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
        .collect()
}

/// Adds `path` as a whole file through the store's steps; returns the source's id.
fn add(store: &mut SourceStore, job: &str, path: &Path, word: &str) -> String {
    let owner = ProcessOwner::acquire(path.parent().unwrap()).unwrap();
    let staged = store.stage(path, &owner).unwrap();
    let f = facts(path, staged.size);
    let mut pending = store.begin(job, &f, staged).unwrap();
    store.add_pages(&mut pending, &pages(word)).unwrap();
    store.finish(&pending, &f, &serde_json::json!([])).unwrap()
}

fn count(db: &Path, sql: &str) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

fn new_job(store: &mut SourceStore, owner: &ProcessOwner) -> String {
    store
        .create_job("cli", owner, &serde_json::json!({}), &[])
        .unwrap()
}

#[test]
fn migration_15_keeps_existing_artifacts_and_adds_the_sources_tables() {
    let home = Home::new();
    {
        let mut conn = Connection::open(home.db()).unwrap();
        db::migrations().to_version(&mut conn, 14).unwrap();
        conn.execute_batch(
            "INSERT INTO conversations (id, title) VALUES ('c1', 'kept');
             INSERT INTO artifacts (conversation_id, id, title, source) VALUES ('c1', 'notes', 'Notes', 'agent');
             INSERT INTO artifact_versions (artifact_pk, version, size_chars, size_bytes, line_count)
                VALUES (1, 1, 5, 5, 1);
             INSERT INTO artifact_chunks VALUES (1, 1, 1, 'hello');",
        )
        .unwrap();
    }
    let owner = home.owner();
    let (mut store, notices) = home.open(&owner);
    assert!(notices.is_empty());
    assert_eq!(
        db::schema_version(&Connection::open(home.db()).unwrap()).unwrap(),
        db::latest_version()
    );
    let artifacts = ArtifactStore::open(&home.db()).unwrap();
    assert_eq!(artifacts.content("c1", "notes", None).unwrap().1, "hello");
    let job = new_job(&mut store, &owner);
    let id = add(&mut store, &job, &home.file("a.md", b"a"), "zebra");
    assert!(id.starts_with("src_") && id.len() == 16, "{id}");
    assert_eq!(store.list().unwrap().len(), 1);
}

#[test]
fn migration_16_keeps_call_records_and_stores_what_a_call_retrieved() {
    use artifactflow_store::calls::store as calls;
    use artifactflow_store::citations::CitationHandle;
    let home = Home::new();
    let mut conn = Connection::open(home.db()).unwrap();
    db::migrations().to_version(&mut conn, 15).unwrap();
    conn.execute_batch(
        "INSERT INTO conversations (id, title) VALUES ('c1', 'kept');
         INSERT INTO tool_calls (call_id, conversation_id, tool, status, result)
            VALUES ('k1', 'c1', 'web_search', 'succeeded', 'old result');",
    )
    .unwrap();
    db::migrations().to_latest(&mut conn).unwrap();
    let mut rows = calls::list(&conn, "c1").unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].result, "old result");
    assert!(rows[0].citations.is_empty());

    let handle = CitationHandle {
        artifact_id: "src_0123456789ab".into(),
        title: "Field report".into(),
        page: Some(7),
        line_first: 40,
        line_last: 52,
    };
    let mut found = rows.remove(0);
    found.call_id = "k2".into();
    found.tool = "search_library".into();
    found.citations = vec![handle.clone()];
    calls::record(&conn, &found).unwrap();
    let kept = calls::list(&conn, "c1").unwrap();
    let kept = kept.iter().find(|r| r.call_id == "k2").unwrap();
    assert_eq!(kept.citations, vec![handle]);
}

#[test]
fn the_same_bytes_are_kept_once_and_a_changed_file_is_a_new_version() {
    let home = Home::new();
    let owner = home.owner();
    let (mut store, _) = home.open(&owner);
    let job = new_job(&mut store, &owner);
    let path = home.file("paper.md", b"first bytes");
    let id = add(&mut store, &job, &path, "zebra");
    let original = store.original_path(&id).unwrap();
    assert_eq!(std::fs::read(&original).unwrap(), b"first bytes");

    // The same bytes under another name: found as a duplicate before anything is written.
    let copy = home.file("copy.md", b"first bytes");
    let staged = store.stage(&copy, &owner).unwrap();
    let dup = store
        .find_by_sha(&staged.sha256)
        .unwrap()
        .expect("a duplicate");
    assert_eq!(dup.id, id);
    store
        .record_path(&dup.id, &facts(&copy, staged.size), &staged.sha256)
        .unwrap();
    drop(staged);
    assert_eq!(home.blob_files(), 1, "no second copy, no staged leftover");

    // The same path with new bytes: version 2 of the same source, searched instead of v1.
    std::fs::write(&path, b"second bytes").unwrap();
    let staged = store.stage(&path, &owner).unwrap();
    assert!(store.find_by_sha(&staged.sha256).unwrap().is_none());
    let f = facts(&path, staged.size);
    let mut pending = store.begin(&job, &f, staged).unwrap();
    assert!(pending.is_new_version);
    assert_eq!((pending.id.as_str(), pending.version), (id.as_str(), 2));
    store.add_pages(&mut pending, &pages("yak")).unwrap();
    store.finish(&pending, &f, &serde_json::json!([])).unwrap();
    let info = store.get(&id).unwrap();
    assert_eq!((info.version, info.line_count), (2, 6));
    assert_eq!(store.list().unwrap().len(), 1);
    assert!(store.search("zebra", 5).unwrap().is_empty());
    let hits = store.search("omega yak", 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].page, hits[0].line_first, hits[0].line_last),
        (Some(2), 6, 6)
    );
    assert_eq!(home.blob_files(), 2);
    let mut markdown = Vec::new();
    store.write_markdown(&id, &mut markdown).unwrap();
    assert_eq!(
        String::from_utf8(markdown).unwrap(),
        "<!-- page 1 -->\n\nalpha yak\n<!-- page 2 -->\n\nomega yak\n"
    );
    // The artifact tools read the text as any artifact's.
    let artifacts = ArtifactStore::open(&home.db()).unwrap();
    let page = artifacts
        .read_lines("", &id, None, 6, Some(1), 1000)
        .unwrap();
    assert_eq!(page.text, "omega yak\n");
}

#[test]
fn removing_a_source_cascades_and_keeps_an_original_another_source_uses() {
    let home = Home::new();
    let owner = home.owner();
    let (mut store, _) = home.open(&owner);
    let job = new_job(&mut store, &owner);
    let shared = home.file("shared.md", b"shared bytes");
    let a = add(&mut store, &job, &shared, "zebra");
    // A second source whose version 1 has the shared bytes (added from another path before
    // dedup existed for it: the store allows it, the engine reports duplicates instead), then
    // its own version 2.
    let other = home.file("other.md", b"shared bytes");
    let b = add(&mut store, &job, &other, "zebra");
    std::fs::write(&other, b"own bytes").unwrap();
    assert_eq!(add(&mut store, &job, &other, "quokka"), b);
    assert_eq!(home.blob_files(), 2);

    assert!(store.remove(&b).unwrap());
    assert!(!store.remove(&b).unwrap(), "already gone");
    assert_eq!(
        home.blob_files(),
        1,
        "b's own bytes went, the shared ones stay"
    );
    assert!(store.original_path(&a).unwrap().is_file());
    assert_eq!(store.list().unwrap().len(), 1);
    assert!(store.search("quokka", 5).unwrap().is_empty());
    let db = home.db();
    assert_eq!(count(&db, "SELECT count(*) FROM source_passages"), 2);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM source_passages_fts WHERE source_passages_fts MATCH 'zebra'"
        ),
        2
    );
    assert_eq!(count(&db, "SELECT count(*) FROM source_pages"), 2);
    assert_eq!(count(&db, "SELECT count(*) FROM source_paths"), 1);
    assert_eq!(count(&db, "SELECT count(*) FROM artifact_chunks"), 1);

    assert!(store.remove(&a).unwrap());
    assert_eq!(home.blob_files(), 0);
    assert_eq!(count(&db, "SELECT count(*) FROM source_blobs"), 0);
    assert_eq!(count(&db, "SELECT count(*) FROM source_passages_fts"), 0);
}

#[test]
fn a_source_being_written_is_seen_by_nothing() {
    let home = Home::new();
    let owner = home.owner();
    let (mut store, _) = home.open(&owner);
    let job = new_job(&mut store, &owner);
    let path = home.file("big.md", b"big");
    let staged = store.stage(&path, &owner).unwrap();
    let f = facts(&path, staged.size);
    let mut pending = store.begin(&job, &f, staged).unwrap();
    store.add_pages(&mut pending, &pages("zebra")).unwrap();
    assert!(store.search("zebra", 5).unwrap().is_empty());
    assert!(store.list().unwrap().is_empty());
    assert!(store.get(&pending.id).is_err());
    assert!(store.find_by_sha(&pending.sha256).unwrap().is_none());
    let artifacts = ArtifactStore::open(&home.db()).unwrap();
    assert_eq!(
        artifacts.list(&ListFilter::default(), 10, 0).unwrap().total,
        0
    );
    store.finish(&pending, &f, &serde_json::json!([])).unwrap();
    assert_eq!(store.search("zebra", 5).unwrap().len(), 2);
    assert_eq!(
        artifacts.list(&ListFilter::default(), 10, 0).unwrap().total,
        1
    );
}

#[test]
fn a_job_whose_process_died_is_rolled_back_at_the_next_open_with_a_notice() {
    let home = Home::new();
    let kept_id;
    {
        let dead = home.owner();
        let (mut store, _) = home.open(&dead);
        let job = store
            .create_job(
                "cli",
                &dead,
                &serde_json::json!({}),
                &[
                    ("/x/kept.md".into(), 4),
                    ("/x/half.md".into(), 4),
                    ("/x/later.md".into(), 4),
                ],
            )
            .unwrap();
        kept_id = add(&mut store, &job, &home.file("kept.md", b"kept"), "zebra");
        store
            .update_item(
                &job,
                0,
                &artifactflow_store::sources::ItemUpdate {
                    status: artifactflow_store::sources::ItemStatus::Added,
                    error_kind: None,
                    error: None,
                    artifact_id: Some(&kept_id),
                    pages: Some(2),
                },
            )
            .unwrap();
        // The second file is half written when the process dies.
        let path = home.file("half.md", b"half");
        let staged = store.stage(&path, &dead).unwrap();
        let f = facts(&path, staged.size);
        let mut pending = store.begin(&job, &f, staged).unwrap();
        store.add_pages(&mut pending, &pages("yak")).unwrap();
        // The third is being copied in: its staged copy is left as a kill leaves it.
        let copying = store
            .stage(&home.file("later.md", b"later"), &dead)
            .unwrap();
        std::mem::forget(copying);
        // `dead` is dropped here with the store: its lock is released, as at a kill.
    }
    assert_eq!(home.blob_files(), 3);
    let owner = home.owner();
    let (store, notices) = home.open(&owner);
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("1 file(s) added before that are kept")
            && notices[0].contains("1 half-added file(s) rolled back")
            && notices[0].contains("2 file(s) not added"),
        "{}",
        notices[0]
    );
    let jobs = store.jobs(10).unwrap();
    assert_eq!(jobs[0].status, "interrupted");
    assert_eq!(jobs[0].notice.as_deref(), Some(notices[0].as_str()));
    let db = home.db();
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM source_versions WHERE state = 'pending'"
        ),
        0
    );
    assert_eq!(count(&db, "SELECT count(*) FROM artifacts"), 1);
    assert_eq!(count(&db, "SELECT count(*) FROM source_passages"), 2);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM source_passages_fts WHERE source_passages_fts MATCH 'yak'"
        ),
        0
    );
    assert_eq!(
        home.blob_files(),
        1,
        "the half-added file's original and the staged copy are swept"
    );
    assert_eq!(store.list().unwrap()[0].id, kept_id);
    let integrity: String = Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
}

#[test]
fn an_any_word_search_leaves_out_words_in_most_passages_and_an_agents_search_takes_words_whole() {
    use artifactflow_store::sources::search::{passages, Match};
    use artifactflow_store::sources::SearchScope;
    let home = Home::new();
    let owner = home.owner();
    let (mut store, _) = home.open(&owner);
    let job = new_job(&mut store, &owner);
    // Ten passages: "alpha <word>" and "omega <word>" in each of five sources.
    for (i, word) in ["zebra", "zebra", "quokka", "numbat", "wombat"]
        .iter()
        .enumerate()
    {
        add(
            &mut store,
            &job,
            &home.file(&format!("s{i}.md"), word.as_bytes()),
            word,
        );
    }
    let conn = Connection::open(home.db()).unwrap();
    let search = |words: &str, how| {
        passages(&conn, words, how, &SearchScope::Library, 30)
            .unwrap()
            .into_iter()
            .map(|h| h.passage)
            .collect::<Vec<_>>()
    };
    // "alpha" is in half the passages: left out while "zebra" (in 4 of 10) remains.
    let found = search("alpha zebra", Match::Any);
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(found.iter().all(|p| p.contains("zebra")), "{found:?}");
    // Every word common: the rarest one is kept, not all of them.
    assert_eq!(search("alpha omega", Match::Any).len(), 5);
    // The search field's prefix on the last word; an agent's words taken whole.
    assert_eq!(search("alpha zeb", Match::All).len(), 2);
    assert!(search("alpha zeb", Match::Words).is_empty());
    assert_eq!(search("alpha zebra", Match::Words).len(), 2);
}
