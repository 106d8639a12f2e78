//! Users' own sources in the library: what each came from, its pages and passages, the
//! original bytes, and the jobs that add them.
//!
//! A source is an artifact with source `user` in the library scope (`conversation_id = ''`,
//! id `src_<12 hex>`); its extracted Markdown is an ordinary text version (chunks of whole
//! lines), so the artifact tools can read it. Migration 15's tables say the rest:
//! `source_versions` (the file each version came from: hash, name, path, size, MIME type,
//! pages, title, author, extractor, warnings), `source_pages`, `source_passages` with their
//! FTS5 index, `source_paths` (every path seen with that content) and `ingest_jobs` /
//! `ingest_items`.
//!
//! How a file is written ([`SourceStore`], on its own connection so the app's reads never wait
//! on it): [`SourceStore::begin`] adds the pending rows in one short transaction,
//! [`SourceStore::add_pages`] writes a batch of pages (Markdown chunk, pages, passages) per
//! transaction, and [`SourceStore::finish`] flips the source and version to `ready` and makes
//! the version current. Nothing lists or searches a `pending` row, so a reader never sees half
//! a file; a process killed midway leaves pending rows that [`SourceStore::open`] rolls back
//! (see [`jobs`]). The original bytes are files ([`blobs`]), one per distinct hash, removed with
//! the last version that names them; [`SourceStore::open`] sweeps away any file no row names.

pub mod blobs;
pub mod jobs;
pub mod pages;
pub mod search;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::{Deserialize, Serialize};

use crate::artifacts::lines::CHUNK_TARGET_BYTES;
use crate::db::{self, DbError};
use crate::owner::ProcessOwner;
pub use blobs::{BlobDir, StagedBlob};
pub use jobs::{ItemStatus, ItemUpdate, JobStatus, JobSummary};
pub use pages::{library_pk, library_title, PageSpan};
pub use search::{SearchHit, SearchScope};

/// The folder (inside the data folder) that holds sources' original files.
pub const SOURCES_DIR: &str = "sources";

/// The prefix of sources' artifact ids.
pub const SOURCE_ID_PREFIX: &str = "src_";

/// A failure of the sources store, in words for whoever reads it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The database could not be opened or migrated.
    #[error(transparent)]
    Open(#[from] DbError),
    /// A read or write of the database failed.
    #[error("the library's database failed: {0}")]
    Db(#[from] rusqlite::Error),
    /// The original files' folder could not be read or written.
    #[error("cannot {doing} in {folder}: {source}")]
    Files {
        /// What was being done.
        doing: String,
        /// The blob folder.
        folder: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// What was asked cannot be done as asked (a bad glob, the extraction worker missing):
    /// the message says what to do.
    #[error("{0}")]
    Invalid(String),
    /// No ready source has this id.
    #[error("no source '{0}' in the library (see `artifactflow-cli library list`)")]
    NotFound(String),
}

/// Metadata of the file a new version is made from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFacts {
    /// The absolute path it was added from.
    pub path: String,
    /// Its file name (the source's title when the file names none).
    pub file_name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time (ns since the epoch), when known.
    pub mtime_ns: Option<i64>,
    /// The detected format (`pdf`, `markdown`, `text`, `json`, …).
    pub kind: String,
    /// Its MIME type.
    pub mime: String,
    /// Its page count, for paged formats.
    pub page_count: Option<u32>,
    /// The title the file gives itself.
    pub title: Option<String>,
    /// The author the file names.
    pub author: Option<String>,
    /// Which reader made the text ("pdfium; artifactflow-extract 1").
    pub extractor: String,
}

/// A version being written: its artifact and number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingVersion {
    /// The artifact's internal key.
    pub artifact_pk: i64,
    /// The source's id (`src_…`).
    pub id: String,
    /// The version's number.
    pub version: i64,
    /// Whether this is a new version of a source that was already there (same path).
    pub is_new_version: bool,
    /// The blob's hash.
    pub sha256: String,
    next_chunk_line: u32,
}

/// One page (or part) of extracted Markdown to store, with its passages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageRecord {
    /// The 1-based page number; `None` for a part of a file without pages.
    pub page: Option<u32>,
    /// The page's label, when the file gives one.
    pub label: Option<String>,
    /// The 1-based line where the part starts in the whole Markdown.
    pub first_line: u32,
    /// How many lines the part has.
    pub line_count: u32,
    /// Whether the page had text.
    pub has_text: bool,
    /// The part's Markdown, ending with a line break.
    pub markdown: String,
    /// The passages for search.
    pub passages: Vec<PassageRecord>,
}

/// A passage for search, located by page and line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassageRecord {
    /// Its page.
    pub page: Option<u32>,
    /// Its first line (1-based).
    pub line_first: u32,
    /// Its last line (inclusive).
    pub line_last: u32,
    /// Its text.
    pub text: String,
}

/// A ready source already holding some bytes: what a duplicate is reported against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRef {
    /// The source's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// When the version with these bytes was added.
    pub added_at: String,
}

/// A source as listed: its current version's facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SourceInfo {
    /// The source's id (`src_…`).
    pub id: String,
    /// Its title (the file's own, else its file name).
    pub title: String,
    /// The detected format.
    pub kind: String,
    /// `ready` or `missing` (its file is gone from the path it was added from).
    pub state: String,
    /// The current version.
    pub version: i64,
    /// The file name.
    pub file_name: String,
    /// The path it was added from.
    pub path: Option<String>,
    /// Its size in bytes.
    pub size: i64,
    /// The sha256 of the original bytes.
    pub sha256: String,
    /// Its MIME type.
    pub mime: String,
    /// Its page count, for paged formats.
    pub page_count: Option<i64>,
    /// The title the file gives itself.
    pub file_title: Option<String>,
    /// The author the file names.
    pub author: Option<String>,
    /// Which reader made the text.
    pub extractor: String,
    /// Warnings from reading it (JSON array).
    pub warnings: serde_json::Value,
    /// Lines of extracted Markdown.
    pub line_count: i64,
    /// When this version was added.
    pub added_at: String,
}

/// Users' sources over their own connection to the database, and the folder of originals.
pub struct SourceStore {
    conn: Connection,
    blobs: BlobDir,
}

impl SourceStore {
    /// Opens the database at `db_path` with the originals in `blob_root` (usually
    /// `DATA/sources`), rolls back what a killed process left half-written (jobs whose owner is
    /// gone; see [`jobs`]) and removes original files no version uses. Returns the store and a
    /// notice for each job rolled back.
    pub fn open(
        db_path: &Path,
        blob_root: &Path,
        owner: &ProcessOwner,
    ) -> Result<(Self, Vec<String>), SourceError> {
        let mut store = SourceStore {
            conn: db::open(db_path)?,
            blobs: BlobDir::new(blob_root),
        };
        let notices = store.recover(owner)?;
        store.sweep(owner)?;
        Ok((store, notices))
    }

    /// Another connection to a store opened (and recovered) with [`SourceStore::open`]: for
    /// a second thread of the same job, without running the recovery again.
    pub fn connect(db_path: &Path, blob_root: &Path) -> Result<Self, SourceError> {
        Ok(SourceStore {
            conn: db::open(db_path)?,
            blobs: BlobDir::new(blob_root),
        })
    }

    /// The folder of original files.
    pub fn blobs(&self) -> &BlobDir {
        &self.blobs
    }

    /// Removes `source_blobs` rows no version names, then files no row names and staged copies
    /// of processes that are gone (`owner` tells which live); returns how many files went.
    pub fn sweep(&self, owner: &ProcessOwner) -> Result<usize, SourceError> {
        self.conn.execute(
            "DELETE FROM source_blobs WHERE sha256 NOT IN (SELECT sha256 FROM source_versions)",
            [],
        )?;
        let known: HashSet<String> = self
            .conn
            .prepare("SELECT sha256 FROM source_blobs")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let alive = |id: &str| id == owner.id() || owner.is_alive(id);
        self.blobs
            .sweep(&known, &alive)
            .map_err(|e| self.files_err("remove unused files", e))
    }

    fn files_err(&self, doing: &str, source: std::io::Error) -> SourceError {
        SourceError::Files {
            doing: doing.to_string(),
            folder: self.blobs.root().to_path_buf(),
            source,
        }
    }

    /// Copies `path` into the blob folder under a temporary name marked with `owner` (this
    /// process), hashing it.
    pub fn stage(&self, path: &Path, owner: &ProcessOwner) -> std::io::Result<StagedBlob> {
        self.blobs.stage(path, owner.id())
    }

    /// The ready source that holds these bytes already, if one does.
    pub fn find_by_sha(&self, sha256: &str) -> Result<Option<SourceRef>, SourceError> {
        Ok(self
            .conn
            .query_row(
                "SELECT a.id, a.title, sv.added_at FROM source_versions sv
                 JOIN sources s ON s.artifact_pk = sv.artifact_pk AND s.state <> 'pending'
                 JOIN artifacts a ON a.pk = sv.artifact_pk
                 WHERE sv.sha256 = ?1 AND sv.state = 'ready'
                 ORDER BY sv.added_at LIMIT 1",
                [sha256],
                |r| {
                    Ok(SourceRef {
                        id: r.get(0)?,
                        title: r.get(1)?,
                        added_at: r.get(2)?,
                    })
                },
            )
            .optional()?)
    }

    /// Records that `facts.path` holds the bytes of the ready source `id` (a duplicate).
    pub fn record_path(
        &self,
        id: &str,
        facts: &FileFacts,
        sha256: &str,
    ) -> Result<(), SourceError> {
        let pk = self.ready_pk(id)?;
        self.conn.execute(
            "INSERT INTO source_paths (path, artifact_pk, size, mtime_ns, sha256, status)
             VALUES (?1, ?2, ?3, ?4, ?5, 'present')
             ON CONFLICT (path) DO UPDATE SET artifact_pk = excluded.artifact_pk,
                size = excluded.size, mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256,
                status = 'present', seen_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')",
            params![facts.path, pk, facts.size as i64, facts.mtime_ns, sha256],
        )?;
        Ok(())
    }

    /// Starts a version for the staged file: a new source, or a new version of the ready
    /// source last added from the same path. One transaction; the rows are `pending`. The
    /// staged copy gets its final name here, after its `source_blobs` row is written (so a
    /// sweep never removes it while this version is pending).
    pub fn begin(
        &mut self,
        job_id: &str,
        facts: &FileFacts,
        staged: StagedBlob,
    ) -> Result<PendingVersion, SourceError> {
        let sha256 = staged.sha256.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let existing: Option<(i64, String)> = tx
            .query_row(
                "SELECT a.pk, a.id FROM source_paths p
                 JOIN sources s ON s.artifact_pk = p.artifact_pk AND s.state <> 'pending'
                 JOIN artifacts a ON a.pk = p.artifact_pk
                 WHERE p.path = ?1",
                [&facts.path],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let title = facts
            .title
            .clone()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| facts.file_name.clone());
        let (pk, id, version, is_new_version) = match existing {
            Some((pk, id)) => {
                let version: i64 = tx.query_row(
                    "SELECT coalesce(max(version), 0) + 1 FROM artifact_versions WHERE artifact_pk = ?1",
                    [pk],
                    |r| r.get(0),
                )?;
                (pk, id, version, true)
            }
            None => {
                let id = loop {
                    let id = format!("{SOURCE_ID_PREFIX}{}", crate::ids::random_hex12());
                    let taken: bool = tx.query_row(
                        "SELECT EXISTS (SELECT 1 FROM artifacts WHERE conversation_id = '' AND id = ?1)",
                        [&id],
                        |r| r.get(0),
                    )?;
                    if !taken {
                        break id;
                    }
                };
                tx.execute(
                    "INSERT INTO artifacts (conversation_id, id, title, content_type, source)
                     VALUES ('', ?1, ?2, 'text/markdown', 'user')",
                    params![id, title],
                )?;
                let pk = tx.last_insert_rowid();
                tx.execute(
                    "INSERT INTO sources (artifact_pk, state, kind) VALUES (?1, 'pending', ?2)",
                    params![pk, facts.kind],
                )?;
                (pk, id, 1, false)
            }
        };
        tx.execute(
            "INSERT INTO artifact_versions (artifact_pk, version, size_chars, size_bytes, line_count)
             VALUES (?1, ?2, 0, 0, 0)",
            params![pk, version],
        )?;
        tx.execute(
            "INSERT INTO source_blobs (sha256, size) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![sha256, staged.size as i64],
        )?;
        tx.execute(
            "INSERT INTO source_versions (artifact_pk, version, sha256, file_name, path, size, mime,
                page_count, title, author, extractor, state, job_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'pending', ?12)",
            params![
                pk,
                version,
                sha256,
                facts.file_name,
                facts.path,
                facts.size as i64,
                facts.mime,
                facts.page_count,
                facts.title,
                facts.author,
                facts.extractor,
                job_id
            ],
        )?;
        tx.commit()?;
        self.blobs
            .keep(staged)
            .map_err(|e| self.files_err("keep the original file", e))?;
        Ok(PendingVersion {
            artifact_pk: pk,
            id,
            version,
            is_new_version,
            sha256,
            next_chunk_line: 1,
        })
    }

    /// Writes a batch of pages of a pending version in one transaction: their Markdown as one
    /// chunk of whole lines, their page rows and passages. Batches come in order.
    pub fn add_pages(
        &mut self,
        pending: &mut PendingVersion,
        pages: &[PageRecord],
    ) -> Result<(), SourceError> {
        if pages.is_empty() {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut chunk = String::new();
            let mut chunk_first = pending.next_chunk_line;
            let mut insert_chunk = tx.prepare_cached(
                "INSERT INTO artifact_chunks (artifact_pk, version, first_line, content) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut insert_page = tx.prepare_cached(
                "INSERT INTO source_pages (artifact_pk, version, page, label, first_line, line_count, has_text)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            let mut insert_passage = tx.prepare_cached(
                "INSERT INTO source_passages (artifact_pk, version, page, line_first, line_last, text)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for page in pages {
                if chunk.len() >= CHUNK_TARGET_BYTES {
                    insert_chunk.execute(params![
                        pending.artifact_pk,
                        pending.version,
                        chunk_first,
                        chunk
                    ])?;
                    chunk.clear();
                    chunk_first = page.first_line;
                }
                chunk.push_str(&page.markdown);
                if let Some(number) = page.page {
                    insert_page.execute(params![
                        pending.artifact_pk,
                        pending.version,
                        number,
                        page.label,
                        page.first_line,
                        page.line_count,
                        page.has_text
                    ])?;
                }
                for passage in &page.passages {
                    insert_passage.execute(params![
                        pending.artifact_pk,
                        pending.version,
                        passage.page,
                        passage.line_first,
                        passage.line_last,
                        passage.text
                    ])?;
                }
                pending.next_chunk_line = page.first_line + page.line_count;
            }
            if !chunk.is_empty() {
                insert_chunk.execute(params![
                    pending.artifact_pk,
                    pending.version,
                    chunk_first,
                    chunk
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Completes a pending version: its sizes and warnings, `ready`, current, indexed by title;
    /// its path recorded. One transaction. Returns the source's id.
    pub fn finish(
        &mut self,
        pending: &PendingVersion,
        facts: &FileFacts,
        warnings: &serde_json::Value,
    ) -> Result<String, SourceError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (chars, bytes): (i64, i64) = tx.query_row(
            "SELECT coalesce(sum(length(content)), 0), coalesce(sum(length(CAST(content AS BLOB))), 0)
             FROM artifact_chunks WHERE artifact_pk = ?1 AND version = ?2",
            params![pending.artifact_pk, pending.version],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let lines = i64::from(pending.next_chunk_line) - 1;
        tx.execute(
            "UPDATE artifact_versions SET size_chars = ?3, size_bytes = ?4, line_count = ?5
             WHERE artifact_pk = ?1 AND version = ?2",
            params![pending.artifact_pk, pending.version, chars, bytes, lines],
        )?;
        tx.execute(
            "UPDATE source_versions SET state = 'ready', warnings = ?3, job_id = NULL
             WHERE artifact_pk = ?1 AND version = ?2",
            params![pending.artifact_pk, pending.version, warnings.to_string()],
        )?;
        let title = facts
            .title
            .clone()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| facts.file_name.clone());
        tx.execute(
            "UPDATE artifacts SET current_version = ?2, title = ?3,
                updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE pk = ?1",
            params![pending.artifact_pk, pending.version, title],
        )?;
        tx.execute(
            "UPDATE sources SET state = 'ready', kind = ?2 WHERE artifact_pk = ?1",
            params![pending.artifact_pk, facts.kind],
        )?;
        // The library's search finds a source by its title, file name and author; its text is
        // searched through the passages.
        let indexed = [Some(facts.file_name.as_str()), facts.author.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        tx.execute(
            "DELETE FROM artifacts_fts WHERE rowid = ?1",
            [pending.artifact_pk],
        )?;
        tx.execute(
            "INSERT INTO artifacts_fts (rowid, title, content) VALUES (?1, ?2, ?3)",
            params![pending.artifact_pk, title, indexed],
        )?;
        tx.execute(
            "INSERT INTO source_paths (path, artifact_pk, size, mtime_ns, sha256, status)
             VALUES (?1, ?2, ?3, ?4, ?5, 'present')
             ON CONFLICT (path) DO UPDATE SET artifact_pk = excluded.artifact_pk,
                size = excluded.size, mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256,
                status = 'present', seen_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')",
            params![
                facts.path,
                pending.artifact_pk,
                facts.size as i64,
                facts.mtime_ns,
                pending.sha256
            ],
        )?;
        tx.commit()?;
        Ok(pending.id.clone())
    }

    /// Rolls back a pending version (its file failed): its rows, its artifact when it was a
    /// new source, and its original file when nothing else uses those bytes.
    pub fn abandon(&mut self, pending: &PendingVersion) -> Result<(), SourceError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let shas = jobs::delete_pending(&tx, pending.artifact_pk, pending.version)?;
        tx.commit()?;
        self.remove_unused(&shas)
    }

    /// Removes the blob rows and files of these hashes that no version names any more.
    fn remove_unused(&self, shas: &[String]) -> Result<(), SourceError> {
        for sha in shas {
            let used: bool = self.conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM source_versions WHERE sha256 = ?1)",
                [sha],
                |r| r.get(0),
            )?;
            if !used {
                self.conn
                    .execute("DELETE FROM source_blobs WHERE sha256 = ?1", [sha])?;
                self.blobs
                    .remove(sha)
                    .map_err(|e| self.files_err("remove an unused file", e))?;
            }
        }
        Ok(())
    }

    fn ready_pk(&self, id: &str) -> Result<i64, SourceError> {
        self.conn
            .query_row(
                "SELECT a.pk FROM artifacts a JOIN sources s ON s.artifact_pk = a.pk
                 WHERE a.conversation_id = '' AND a.id = ?1 AND s.state <> 'pending'",
                [id],
                |r| r.get(0),
            )
            .optional()?
            .ok_or_else(|| SourceError::NotFound(id.to_string()))
    }

    /// The ready sources, most recently updated first.
    pub fn list(&self) -> Result<Vec<SourceInfo>, SourceError> {
        self.query_info("", [])
    }

    /// One ready source.
    pub fn get(&self, id: &str) -> Result<SourceInfo, SourceError> {
        self.query_info("AND a.id = ?1", [id])?
            .pop()
            .ok_or_else(|| SourceError::NotFound(id.to_string()))
    }

    fn query_info<P: rusqlite::Params>(
        &self,
        filter: &str,
        args: P,
    ) -> Result<Vec<SourceInfo>, SourceError> {
        let sql = format!(
            "SELECT a.id, a.title, s.kind, s.state, a.current_version, sv.file_name, sv.path,
                sv.size, sv.sha256, sv.mime, sv.page_count, sv.title, sv.author, sv.extractor,
                sv.warnings, v.line_count, sv.added_at
             FROM artifacts a
             JOIN sources s ON s.artifact_pk = a.pk AND s.state <> 'pending'
             JOIN source_versions sv ON sv.artifact_pk = a.pk AND sv.version = a.current_version
             JOIN artifact_versions v ON v.artifact_pk = a.pk AND v.version = a.current_version
             WHERE a.conversation_id = '' {filter}
             ORDER BY a.updated_at DESC, a.pk DESC"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(args, |r| {
            let warnings: String = r.get(14)?;
            Ok(SourceInfo {
                id: r.get(0)?,
                title: r.get(1)?,
                kind: r.get(2)?,
                state: r.get(3)?,
                version: r.get(4)?,
                file_name: r.get(5)?,
                path: r.get(6)?,
                size: r.get(7)?,
                sha256: r.get(8)?,
                mime: r.get(9)?,
                page_count: r.get(10)?,
                file_title: r.get(11)?,
                author: r.get(12)?,
                extractor: r.get(13)?,
                warnings: serde_json::from_str(&warnings).unwrap_or(serde_json::Value::Null),
                line_count: r.get(15)?,
                added_at: r.get(16)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The current version's Markdown, written to `out` chunk by chunk.
    pub fn write_markdown(
        &self,
        id: &str,
        out: &mut dyn std::io::Write,
    ) -> Result<(), SourceError> {
        let pk = self.ready_pk(id)?;
        let mut stmt = self.conn.prepare(
            "SELECT c.content FROM artifact_chunks c JOIN artifacts a ON a.pk = c.artifact_pk
             WHERE c.artifact_pk = ?1 AND c.version = a.current_version ORDER BY c.first_line",
        )?;
        let mut rows = stmt.query([pk])?;
        while let Some(row) = rows.next()? {
            let text: String = row.get(0)?;
            out.write_all(text.as_bytes())
                .map_err(|e| self.files_err("write the text out", e))?;
        }
        Ok(())
    }

    /// Where the current version's original bytes are.
    pub fn original_path(&self, id: &str) -> Result<PathBuf, SourceError> {
        let info = self.get(id)?;
        Ok(self.blobs.path_of(&info.sha256))
    }

    /// Removes a source: its artifact and, by the foreign keys' cascades, every version, page,
    /// passage (and index entry) and path; then each original file no other version uses.
    /// `false` when there was no such source.
    pub fn remove(&mut self, id: &str) -> Result<bool, SourceError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let pk: Option<i64> = tx
            .query_row(
                "SELECT a.pk FROM artifacts a JOIN sources s ON s.artifact_pk = a.pk
                 WHERE a.conversation_id = '' AND a.id = ?1 AND s.state <> 'pending'",
                [id],
                |r| r.get(0),
            )
            .optional()?;
        let Some(pk) = pk else {
            return Ok(false);
        };
        let shas: Vec<String> = tx
            .prepare("SELECT DISTINCT sha256 FROM source_versions WHERE artifact_pk = ?1")?
            .query_map([pk], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        tx.execute("DELETE FROM artifacts_fts WHERE rowid = ?1", [pk])?;
        tx.execute("DELETE FROM artifacts WHERE pk = ?1", [pk])?;
        tx.commit()?;
        self.remove_unused(&shas)?;
        Ok(true)
    }

    /// The connection (for the modules of this one).
    fn conn(&self) -> &Connection {
        &self.conn
    }
}
