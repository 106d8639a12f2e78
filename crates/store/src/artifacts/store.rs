//! [`ArtifactStore`]: artifacts and their immutable versions in the app's SQLite database.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction (artifact row, new version, full-text row),
//! so a killed process leaves either the whole change or none of it. A version's content is
//! stored as chunks of whole lines (see [`super::lines`]): a page read loads only the
//! chunks holding the page, so it costs what the page costs, not what the artifact costs, and
//! whole contents are read chunk by chunk straight into the caller's buffer
//! ([`ArtifactStore::for_each_latest_raw`]).

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::blob::Blob;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior, MAIN_DB};
use serde::{Deserialize, Serialize};

use super::lines::{self, CHUNK_TARGET_BYTES};
use crate::db::{self, DbError};

/// Who made an artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum ArtifactSource {
    /// Written by an agent through the artifact tools.
    Agent,
    /// An oversized tool result stored by the engine.
    Tool,
    /// Created or edited by the user.
    User,
}

impl ArtifactSource {
    /// The name stored in the database and shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactSource::Agent => "agent",
            ArtifactSource::Tool => "tool",
            ArtifactSource::User => "user",
        }
    }

    /// Parse a stored or typed name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "agent" => Some(ArtifactSource::Agent),
            "tool" => Some(ArtifactSource::Tool),
            "user" => Some(ArtifactSource::User),
            _ => None,
        }
    }
}

/// An artifact's metadata at one version (usually the latest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Artifact {
    /// The id the model uses, unique within its conversation.
    pub id: String,
    /// The conversation it belongs to.
    pub conversation_id: String,
    /// Human title.
    pub title: String,
    /// MIME type, e.g. `text/markdown`.
    pub content_type: String,
    /// Who made it.
    pub source: ArtifactSource,
    /// The version these facts describe (the latest unless a version was asked for).
    pub version: i64,
    /// When it was created (UTC, RFC 3339).
    pub created_at: String,
    /// When its latest version was made (UTC, RFC 3339).
    pub updated_at: String,
    /// Binary content (an image, audio…; see [`ArtifactStore::create_binary`]): one version of
    /// bytes, which the text tools refuse. `false` for text.
    pub binary: bool,
}

/// An artifact with the size of its latest version, as listed in the library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ArtifactSummary {
    /// The artifact.
    #[serde(flatten)]
    pub artifact: Artifact,
    /// Characters in the latest version.
    pub size_chars: i64,
    /// Lines in the latest version.
    pub line_count: i64,
    /// Bytes in the latest version (UTF-8 for text).
    pub size_bytes: i64,
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ArtifactPage {
    /// The artifacts on this page.
    pub items: Vec<ArtifactSummary>,
    /// How many match the filter in all.
    pub total: i64,
}

/// One version in an artifact's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct VersionInfo {
    /// 1 for the first version, then +1 per change.
    pub version: i64,
    /// Characters in this version.
    pub size_chars: i64,
    /// Lines in this version.
    pub line_count: i64,
    /// When it was made (UTC, RFC 3339).
    pub created_at: String,
}

/// What to list. Empty fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ListFilter {
    /// Only this conversation's artifacts.
    pub conversation_id: Option<String>,
    /// Only this content type.
    pub content_type: Option<String>,
    /// Only artifacts from this source.
    pub source: Option<ArtifactSource>,
    /// Full-text words over title and latest content (each word must occur; the last one may
    /// be a prefix). Results are then ranked by relevance instead of recency.
    pub query: Option<String>,
    /// Only artifacts last changed at or after this instant or date (RFC 3339 or `YYYY-MM-DD`,
    /// UTC).
    #[serde(default)]
    pub updated_from: Option<String>,
    /// Only artifacts last changed before this instant or date (a date means: before that day
    /// starts, so pass the day after the last day wanted).
    #[serde(default)]
    pub updated_before: Option<String>,
    /// The order; by default relevance when searching, else the newest change first.
    #[serde(default)]
    pub sort: Option<ListSort>,
}

/// Orders of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ListSort {
    /// Best full-text match first (the newest change first without a query).
    Relevance,
    /// Newest change first.
    Newest,
    /// Oldest change first.
    Oldest,
    /// By title, A to Z.
    Title,
    /// Largest latest version first.
    Largest,
}

/// A new artifact.
#[derive(Debug, Clone, Copy)]
pub struct NewArtifact<'a> {
    /// The conversation it belongs to.
    pub conversation_id: &'a str,
    /// Its id (unique within the conversation).
    pub id: &'a str,
    /// Human title.
    pub title: &'a str,
    /// MIME type.
    pub content_type: &'a str,
    /// Who made it.
    pub source: ArtifactSource,
    /// The first version's content.
    pub content: &'a str,
}

/// Why a page of lines stopped where it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Truncation {
    /// Nothing was left out after the page.
    None,
    /// The requested number of lines was reached.
    Limit,
    /// The character cap was reached.
    MaxChars,
}

impl Truncation {
    /// The name used in `<artifact_slice>`.
    pub fn as_str(self) -> &'static str {
        match self {
            Truncation::None => "none",
            Truncation::Limit => "limit",
            Truncation::MaxChars => "max_chars",
        }
    }
}

/// A page of lines read from one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinePage {
    /// The artifact, with `version` set to the version read.
    pub artifact: Artifact,
    /// Lines in that version.
    pub total_lines: usize,
    /// First line shown (1-based); meaningful when `lines_shown > 0`.
    pub first_line: usize,
    /// How many lines are shown (a line cut by the character cap counts as shown).
    pub lines_shown: usize,
    /// The raw text of those lines, exactly as stored.
    pub text: String,
    /// Why the page ended.
    pub truncated_by: Truncation,
    /// The shown line that was cut because it alone exceeds the character cap, if any.
    pub cut_line: Option<usize>,
}

impl LinePage {
    /// Are there lines after this page?
    pub fn has_more(&self) -> bool {
        self.lines_shown > 0 && self.first_line + self.lines_shown - 1 < self.total_lines
    }

    /// The line to continue from.
    pub fn next_offset(&self) -> usize {
        self.first_line + self.lines_shown
    }
}

/// Errors from the store. Messages are written to be shown to a model or a user as they are.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database could not be opened.
    #[error(transparent)]
    Open(#[from] DbError),
    /// SQLite failed.
    #[error("artifact database error: {0}")]
    Db(#[from] crate::db::StoreFailure),
    /// Reading a stored version failed.
    #[error("cannot read artifact content: {0}")]
    Io(#[from] std::io::Error),
    /// No artifact with that id in that conversation.
    #[error("no artifact with id '{id}' in this conversation")]
    NotFound {
        /// The conversation searched.
        conversation_id: String,
        /// The id asked for.
        id: String,
    },
    /// The id is taken.
    #[error("an artifact with id '{id}' already exists in this conversation; choose another id, or change it with update_artifact / rewrite_artifact")]
    Exists {
        /// The conversation.
        conversation_id: String,
        /// The id.
        id: String,
    },
    /// A text tool or text read on a binary artifact.
    #[error("artifact '{id}' is {} ({mime}), not text: it cannot be read, searched or edited as text (the user sees it in the library)", kind_phrase(.mime))]
    NotText {
        /// The artifact.
        id: String,
        /// Its MIME type.
        mime: String,
    },
    /// Binary content over [`MAX_BINARY_BYTES`].
    #[error("'{title}' ({mime}, {}) is over the {} limit for binary artifacts; it was not stored", human_size(*.size as u64), human_size(MAX_BINARY_BYTES as u64))]
    TooLarge {
        /// The title it would have had.
        title: String,
        /// Its MIME type.
        mime: String,
        /// Its size in bytes.
        size: usize,
    },
    /// A MIME type that is not `type/subtype`.
    #[error("'{mime}' is not a MIME type (expected type/subtype, e.g. image/png); the content was not stored")]
    BadMime {
        /// What was given.
        mime: String,
    },
    /// A write to one of the user's sources, which agents only read.
    #[error("'{id}' is one of the user's sources, which agents can read but not change; keep your notes in an artifact of your own (create_artifact)")]
    ReadOnlySource {
        /// The source's id.
        id: String,
    },
    /// The artifact exists but not at that version.
    #[error("artifact '{id}' has no version {version}; its versions are 1 to {latest}")]
    VersionNotFound {
        /// The artifact.
        id: String,
        /// The version asked for.
        version: i64,
        /// Its latest version.
        latest: i64,
    },
}

/// The artifact store: a cheap, cloneable handle over a shared SQLite connection.
#[derive(Clone)]
pub struct ArtifactStore {
    conn: Arc<Mutex<Connection>>,
    /// Read-only connections to the same file for searches on several threads, opened on
    /// first use and kept for the next search.
    readers: Arc<Mutex<Vec<Connection>>>,
}

/// How much of the database file a reader connection maps into memory (its reads then copy
/// from the mapping instead of making a system call per page).
const READER_MMAP_BYTES: i64 = 1 << 30;

/// The columns [`meta_from_row`] reads; queries select their own columns after these, from
/// index [`META_LEN`] on.
const META_COLUMNS: &str =
    "a.id, a.conversation_id, a.title, a.content_type, a.source, a.current_version, a.created_at, a.updated_at, a.binary";
const META_LEN: usize = 9;

/// The most bytes one binary artifact may hold. Tools' images and audio are far smaller; the
/// cap keeps one runaway result from bloating the database (and the window that shows it).
pub const MAX_BINARY_BYTES: usize = 25 * 1024 * 1024;

fn meta_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Artifact> {
    let source: String = row.get(4)?;
    Ok(Artifact {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        title: row.get(2)?,
        content_type: row.get(3)?,
        source: ArtifactSource::parse(&source).unwrap_or(ArtifactSource::User),
        version: row.get(5)?,
        created_at: row.get(6)?,
        updated_at: row.get(7)?,
        binary: row.get(8)?,
    })
}

/// The outcome of [`ArtifactStore::modify`] when the change function declines.
#[derive(Debug)]
pub enum ModifyError<E> {
    /// The store failed (or the artifact does not exist).
    Store(StoreError),
    /// The change function returned this error; nothing was written.
    Rejected(E),
}

impl<E> From<StoreError> for ModifyError<E> {
    fn from(e: StoreError) -> Self {
        ModifyError::Store(e)
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Db(e.into())
    }
}

impl<E> From<rusqlite::Error> for ModifyError<E> {
    fn from(e: rusqlite::Error) -> Self {
        ModifyError::Store(StoreError::Db(e.into()))
    }
}

impl ArtifactStore {
    /// A store over an already opened and migrated connection (e.g.
    /// the engine's `AppContext::db_handle`).
    pub fn new(conn: Arc<Mutex<Connection>>) -> Self {
        ArtifactStore {
            conn,
            readers: Arc::default(),
        }
    }

    /// Open (creating and migrating if needed) the database file at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Ok(Self::new(Arc::new(Mutex::new(db::open(path)?))))
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Create an artifact at version 1.
    pub fn create(&self, new: &NewArtifact<'_>) -> Result<Artifact, StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if find_pk(&tx, new.conversation_id, new.id)?.is_some() {
            return Err(StoreError::Exists {
                conversation_id: new.conversation_id.to_string(),
                id: new.id.to_string(),
            });
        }
        tx.execute(
            "INSERT INTO artifacts (conversation_id, id, title, content_type, source) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![new.conversation_id, new.id, new.title, new.content_type, new.source.as_str()],
        )?;
        let pk = tx.last_insert_rowid();
        insert_version(&tx, pk, 1, new.content)?;
        tx.execute(
            "INSERT INTO artifacts_fts (rowid, title, content) VALUES (?1, ?2, ?3)",
            params![pk, new.title, new.content],
        )?;
        let artifact = load_meta(&tx, pk)?;
        tx.commit()?;
        Ok(artifact)
    }

    /// Store binary content (a tool's image or audio) as a new artifact of `conversation_id`
    /// with a fresh id (`image_…`, `audio_…`, `file_…` and 12 hex digits), source `tool` and
    /// one version. Only its title is indexed for search. Fails with
    /// [`StoreError::TooLarge`] over [`MAX_BINARY_BYTES`] and [`StoreError::BadMime`] when
    /// `mime` is not `type/subtype` (an empty one is stored as `application/octet-stream`).
    pub fn create_binary(
        &self,
        conversation_id: &str,
        title: &str,
        mime: &str,
        bytes: &[u8],
    ) -> Result<Artifact, StoreError> {
        let mime = normalize_mime(mime)?;
        if bytes.len() > MAX_BINARY_BYTES {
            return Err(StoreError::TooLarge {
                title: title.to_string(),
                mime,
                size: bytes.len(),
            });
        }
        let prefix = match mime.split('/').next() {
            Some("image") => "image",
            Some("audio") => "audio",
            _ => "file",
        };
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let id = loop {
            let id = format!("{prefix}_{}", crate::ids::random_hex12());
            if find_pk(&tx, conversation_id, &id)?.is_none() {
                break id;
            }
        };
        tx.execute(
            "INSERT INTO artifacts (conversation_id, id, title, content_type, source, binary)
             VALUES (?1, ?2, ?3, ?4, 'tool', 1)",
            params![conversation_id, id, title, mime],
        )?;
        let pk = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO artifact_versions (artifact_pk, version, size_chars, size_bytes, line_count)
             VALUES (?1, 1, 0, ?2, 0)",
            params![pk, bytes.len() as i64],
        )?;
        tx.execute(
            "INSERT INTO artifact_blobs (artifact_pk, version, content) VALUES (?1, 1, ?2)",
            params![pk, bytes],
        )?;
        tx.execute(
            "INSERT INTO artifacts_fts (rowid, title, content) VALUES (?1, ?2, '')",
            params![pk, title],
        )?;
        let artifact = load_meta(&tx, pk)?;
        tx.commit()?;
        Ok(artifact)
    }

    /// The latest content of an artifact as bytes, with its metadata (the MIME type is
    /// `content_type`): a binary artifact's bytes, or a text artifact's UTF-8 text.
    pub fn bytes(
        &self,
        conversation_id: &str,
        id: &str,
    ) -> Result<(Artifact, Vec<u8>), StoreError> {
        let conn = self.lock();
        let (artifact, pk) = require(&conn, conversation_id, id)?;
        let bytes = if artifact.binary {
            conn.prepare_cached(
                "SELECT content FROM artifact_blobs WHERE artifact_pk = ?1 AND version = ?2",
            )?
            .query_row(params![pk, artifact.version], |r| r.get(0))
            .optional()?
            .unwrap_or_default()
        } else {
            load_content(&conn, pk, artifact.version)?.into_bytes()
        };
        Ok((artifact, bytes))
    }

    /// Make a new version from the latest one, atomically: `change` gets the artifact and its
    /// latest content and returns the new content (plus anything the caller wants back), or
    /// an error that leaves the artifact untouched. Other writers wait meanwhile.
    pub fn modify<T, E>(
        &self,
        conversation_id: &str,
        id: &str,
        change: impl FnOnce(&Artifact, &str) -> Result<(String, T), E>,
    ) -> Result<(Artifact, String, T), ModifyError<E>> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let pk = match find_pk(&tx, conversation_id, id)? {
            Some(pk) => pk,
            None => return Err(not_writable(&tx, conversation_id, id).into()),
        };
        let current = load_meta(&tx, pk)?;
        require_text(&current)?;
        let content = load_content(&tx, pk, current.version)?;
        let (new_content, extra) = change(&current, &content).map_err(ModifyError::Rejected)?;
        drop(content);
        let version = current.version + 1;
        insert_version(&tx, pk, version, &new_content)?;
        tx.execute(
            "UPDATE artifacts SET current_version = ?1, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE pk = ?2",
            params![version, pk],
        )?;
        tx.execute("DELETE FROM artifacts_fts WHERE rowid = ?1", [pk])?;
        tx.execute(
            "INSERT INTO artifacts_fts (rowid, title, content) VALUES (?1, ?2, ?3)",
            params![pk, current.title, new_content],
        )?;
        let artifact = load_meta(&tx, pk)?;
        tx.commit()?;
        Ok((artifact, new_content, extra))
    }

    /// Replace the whole content (a new version).
    pub fn rewrite(
        &self,
        conversation_id: &str,
        id: &str,
        content: &str,
    ) -> Result<Artifact, StoreError> {
        self.modify::<(), StoreError>(conversation_id, id, |_, _| Ok((content.to_string(), ())))
            .map(|(a, _, _)| a)
            .map_err(|e| match e {
                ModifyError::Store(e) | ModifyError::Rejected(e) => e,
            })
    }

    /// The artifact's latest metadata, if it exists.
    pub fn get(&self, conversation_id: &str, id: &str) -> Result<Option<Artifact>, StoreError> {
        let conn = self.lock();
        match find_readable(&conn, conversation_id, id)? {
            Some(pk) => Ok(Some(load_meta(&conn, pk)?)),
            None => Ok(None),
        }
    }

    /// Every artifact with this id, in any conversation (for the CLI).
    pub fn find_by_id(&self, id: &str) -> Result<Vec<Artifact>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {META_COLUMNS} FROM artifacts a WHERE a.id = ?1 ORDER BY a.updated_at DESC"
        ))?;
        let rows = stmt.query_map([id], meta_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The content of one version (`None` = latest), with the metadata at that version.
    pub fn content(
        &self,
        conversation_id: &str,
        id: &str,
        version: Option<i64>,
    ) -> Result<(Artifact, String), StoreError> {
        let conn = self.lock();
        let (mut artifact, pk) = require(&conn, conversation_id, id)?;
        require_text(&artifact)?;
        let version = check_version(&artifact, version)?;
        let content = load_content(&conn, pk, version)?;
        artifact.version = version;
        Ok((artifact, content))
    }

    /// The artifact's history, oldest first.
    pub fn versions(
        &self,
        conversation_id: &str,
        id: &str,
    ) -> Result<Vec<VersionInfo>, StoreError> {
        let conn = self.lock();
        let (_, pk) = require(&conn, conversation_id, id)?;
        let mut stmt = conn.prepare(
            "SELECT version, size_chars, line_count, created_at FROM artifact_versions WHERE artifact_pk = ?1 ORDER BY version",
        )?;
        let rows = stmt.query_map([pk], |r| {
            Ok(VersionInfo {
                version: r.get(0)?,
                size_chars: r.get(1)?,
                line_count: r.get(2)?,
                created_at: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Delete an artifact and all its versions. `false` when there was none.
    pub fn delete(&self, conversation_id: &str, id: &str) -> Result<bool, StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let Some(pk) = find_pk(&tx, conversation_id, id)? else {
            return Ok(false);
        };
        tx.execute("DELETE FROM artifacts_fts WHERE rowid = ?1", [pk])?;
        tx.execute("DELETE FROM artifact_chunks WHERE artifact_pk = ?1", [pk])?;
        tx.execute("DELETE FROM artifact_versions WHERE artifact_pk = ?1", [pk])?;
        tx.execute("DELETE FROM artifacts WHERE pk = ?1", [pk])?;
        tx.commit()?;
        Ok(true)
    }

    /// One page of artifacts matching `filter`: most recently updated first, or by relevance
    /// when the filter has a query.
    pub fn list(
        &self,
        filter: &ListFilter,
        limit: usize,
        offset: usize,
    ) -> Result<ArtifactPage, StoreError> {
        let conn = self.lock();
        let mut clauses = Vec::new();
        let mut args: Vec<String> = Vec::new();
        let mut from = String::from(
            "artifacts a JOIN artifact_versions v ON v.artifact_pk = a.pk AND v.version = a.current_version",
        );
        // A user's source being added (see `crate::sources`) is not listed until complete.
        clauses.push(
            "NOT EXISTS (SELECT 1 FROM sources s WHERE s.artifact_pk = a.pk AND s.state = 'pending')"
                .to_string(),
        );
        let mut order = "a.updated_at DESC, a.pk DESC";
        if let Some(q) = filter.query.as_deref().and_then(crate::fts::all_words) {
            args.push(q);
            from.push_str(&format!(
                " JOIN (SELECT rowid, rank FROM artifacts_fts WHERE artifacts_fts MATCH ?{}) f ON f.rowid = a.pk",
                args.len()
            ));
            order = "f.rank, a.updated_at DESC";
        }
        if let Some(c) = &filter.conversation_id {
            args.push(c.clone());
            clauses.push(format!("a.conversation_id = ?{}", args.len()));
        }
        if let Some(t) = &filter.content_type {
            args.push(t.clone());
            clauses.push(format!("a.content_type = ?{}", args.len()));
        }
        if let Some(s) = filter.source {
            args.push(s.as_str().to_string());
            clauses.push(format!("a.source = ?{}", args.len()));
        }
        // Stored instants are `YYYY-MM-DDTHH:MM:SS.sssZ`, so text order is time order, and a
        // bare date compares as that day's start.
        if let Some(from) = filter.updated_from.as_deref().filter(|d| !d.is_empty()) {
            args.push(from.to_string());
            clauses.push(format!("a.updated_at >= ?{}", args.len()));
        }
        if let Some(before) = filter.updated_before.as_deref().filter(|d| !d.is_empty()) {
            args.push(before.to_string());
            clauses.push(format!("a.updated_at < ?{}", args.len()));
        }
        match filter.sort {
            None | Some(ListSort::Relevance) => {}
            Some(ListSort::Newest) => order = "a.updated_at DESC, a.pk DESC",
            Some(ListSort::Oldest) => order = "a.updated_at ASC, a.pk ASC",
            Some(ListSort::Title) => order = "a.title COLLATE NOCASE ASC, a.pk ASC",
            Some(ListSort::Largest) => {
                // Text by characters, binary content (which has none) by bytes.
                order = "CASE WHEN a.binary THEN v.size_bytes ELSE v.size_chars END DESC, a.pk DESC"
            }
        }
        let where_sql = if clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", clauses.join(" AND "))
        };
        let total: i64 = conn.query_row(
            &format!("SELECT count(*) FROM {from}{where_sql}"),
            rusqlite::params_from_iter(args.iter()),
            |r| r.get(0),
        )?;
        let sql = format!(
            "SELECT {META_COLUMNS}, v.size_chars, v.line_count, v.size_bytes FROM {from}{where_sql} ORDER BY {order} LIMIT {} OFFSET {}",
            limit.min(i64::MAX as usize),
            offset.min(i64::MAX as usize)
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
            Ok(ArtifactSummary {
                artifact: meta_from_row(r)?,
                size_chars: r.get(META_LEN)?,
                line_count: r.get(META_LEN + 1)?,
                size_bytes: r.get(META_LEN + 2)?,
            })
        })?;
        Ok(ArtifactPage {
            items: rows.collect::<Result<_, _>>()?,
            total,
        })
    }

    /// Visit the latest content of artifacts, ordered by conversation then id: one artifact
    /// when `id` is given, else every artifact of `conversation_id` (or of all conversations).
    /// `visit` returns `false` to stop early.
    pub fn for_each_latest(
        &self,
        conversation_id: Option<&str>,
        id: Option<&str>,
        mut visit: impl FnMut(&Artifact, &str) -> bool,
    ) -> Result<(), StoreError> {
        let mut buf = Vec::new();
        self.for_each_latest_raw(conversation_id, id, |artifact, content| {
            let n = content.read_into(&mut buf)?;
            let text = std::str::from_utf8(&buf[..n]).map_err(invalid_utf8)?;
            Ok(visit(artifact, text))
        })
    }

    /// The artifacts [`for_each_latest`](Self::for_each_latest) would visit, in its order,
    /// with what is needed to read their latest content later.
    pub(crate) fn latest_items(
        &self,
        conversation_id: Option<&str>,
        id: Option<&str>,
    ) -> Result<Vec<LatestItem>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {META_COLUMNS}, a.pk, v.size_bytes FROM artifacts a
             JOIN artifact_versions v ON v.artifact_pk = a.pk AND v.version = a.current_version
             WHERE (?1 IS NULL OR a.conversation_id = ?1) AND (?2 IS NULL OR a.id = ?2)
                 AND a.binary = 0
             ORDER BY a.conversation_id, a.id"
        ))?;
        let rows = stmt.query_map(params![conversation_id, id], |row| {
            let size: i64 = row.get(META_LEN + 1)?;
            Ok(LatestItem {
                artifact: meta_from_row(row)?,
                pk: row.get(META_LEN)?,
                size_bytes: size.max(0) as usize,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Run `f` with a reader over the shared connection (held locked meanwhile).
    pub(crate) fn with_reader<T>(&self, f: impl FnOnce(&mut ChunkReader<'_>) -> T) -> T {
        let conn = self.lock();
        let mut reader = ChunkReader::new(&conn);
        f(&mut reader)
    }

    /// Up to `n` read-only connections to the store's database file (pooled ones first).
    /// Fewer, possibly none, when the database is not a file or cannot be opened again. Hand
    /// them back with [`return_readers`](Self::return_readers).
    pub(crate) fn take_readers(&self, n: usize) -> Vec<Connection> {
        let mut readers = {
            let mut pool = self.readers.lock().unwrap_or_else(|p| p.into_inner());
            let keep = pool.len().saturating_sub(n);
            pool.split_off(keep)
        };
        if readers.len() < n {
            let path = self.lock().path().map(str::to_string).unwrap_or_default();
            if !path.is_empty() {
                while readers.len() < n {
                    match open_reader(Path::new(&path)) {
                        Ok(conn) => readers.push(conn),
                        Err(e) => {
                            tracing::debug!("no extra reader for artifact search: {e}");
                            break;
                        }
                    }
                }
            }
        }
        readers
    }

    /// Keep reader connections for the next search.
    pub(crate) fn return_readers(&self, readers: Vec<Connection>) {
        self.readers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(readers);
    }

    /// Like [`for_each_latest`](Self::for_each_latest), but `visit` gets a handle that reads
    /// the content as bytes straight from the database into a buffer of the caller's choice
    /// (or not at all). `visit` returns `Ok(false)` to stop early; its error ends the walk.
    pub fn for_each_latest_raw(
        &self,
        conversation_id: Option<&str>,
        id: Option<&str>,
        mut visit: impl FnMut(&Artifact, &mut LatestContent<'_, '_>) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {META_COLUMNS}, a.pk, v.size_bytes FROM artifacts a
             JOIN artifact_versions v ON v.artifact_pk = a.pk AND v.version = a.current_version
             WHERE (?1 IS NULL OR a.conversation_id = ?1) AND (?2 IS NULL OR a.id = ?2)
                 AND a.binary = 0
             ORDER BY a.conversation_id, a.id"
        ))?;
        let mut reader = ChunkReader::new(&conn);
        let mut rows = stmt.query(params![conversation_id, id])?;
        while let Some(row) = rows.next()? {
            let artifact = meta_from_row(row)?;
            let size_bytes: i64 = row.get(META_LEN + 1)?;
            let mut content = LatestContent {
                reader: &mut reader,
                pk: row.get(META_LEN)?,
                version: artifact.version,
                size_bytes: size_bytes.max(0) as usize,
            };
            if !visit(&artifact, &mut content)? {
                break;
            }
        }
        Ok(())
    }

    /// The `k` passages of the user's sources in `scope` that best match `words`, best first
    /// (see [`crate::sources::search::passages`]).
    pub fn search_sources(
        &self,
        words: &str,
        how: crate::sources::search::Match,
        scope: &crate::sources::SearchScope,
        k: usize,
    ) -> Result<Vec<crate::sources::SearchHit>, StoreError> {
        Ok(crate::sources::search::passages(
            &self.lock(),
            words,
            how,
            scope,
            k,
        )?)
    }

    /// The pages of the artifact `id` as `conversation_id` reads it (version `None` = latest):
    /// its artifact, the number of pages that version has and the page `page` (`None` when it
    /// has no such page). An artifact that is not a source has no pages.
    pub fn source_page(
        &self,
        conversation_id: &str,
        id: &str,
        version: Option<i64>,
        page: i64,
    ) -> Result<(Artifact, i64, Option<crate::sources::PageSpan>), StoreError> {
        let conn = self.lock();
        let (mut artifact, pk) = require(&conn, conversation_id, id)?;
        artifact.version = check_version(&artifact, version)?;
        let count = crate::sources::pages::page_count(&conn, pk, artifact.version)?;
        let span = crate::sources::pages::page(&conn, pk, artifact.version, page)?;
        Ok((artifact, count, span))
    }

    /// The pages of version `version` of the artifact `id` (as `conversation_id` reads it)
    /// that hold any of lines `first..=last`, at most `max`; none for an artifact that is not
    /// a paged source.
    pub fn source_pages_in(
        &self,
        conversation_id: &str,
        id: &str,
        version: i64,
        lines: (i64, i64),
        max: usize,
    ) -> Result<Vec<crate::sources::PageSpan>, StoreError> {
        let conn = self.lock();
        let (_, pk) = require(&conn, conversation_id, id)?;
        Ok(crate::sources::pages::pages_in(
            &conn, pk, version, lines.0, lines.1, max,
        )?)
    }

    /// Read lines `offset..` (1-based) of one version (`None` = latest): at most `limit`
    /// lines and at most `max_chars` characters, cut at a line boundary (a single line longer
    /// than `max_chars` is cut inside and reported in [`LinePage::cut_line`]).
    pub fn read_lines(
        &self,
        conversation_id: &str,
        id: &str,
        version: Option<i64>,
        offset: usize,
        limit: Option<usize>,
        max_chars: usize,
    ) -> Result<LinePage, StoreError> {
        let conn = self.lock();
        let (mut artifact, pk) = require(&conn, conversation_id, id)?;
        require_text(&artifact)?;
        let version = check_version(&artifact, version)?;
        artifact.version = version;
        let offset = offset.max(1);
        let total_lines: i64 = conn
            .prepare_cached(
                "SELECT line_count FROM artifact_versions WHERE artifact_pk = ?1 AND version = ?2",
            )?
            .query_row(params![pk, version], |r| r.get(0))?;
        let total_lines = total_lines.max(0) as usize;
        let mut page = LinePage {
            artifact,
            total_lines,
            first_line: offset,
            lines_shown: 0,
            text: String::new(),
            truncated_by: Truncation::None,
            cut_line: None,
        };
        if offset > total_lines || limit == Some(0) {
            if limit == Some(0) && offset <= total_lines {
                page.truncated_by = Truncation::Limit;
            }
            return Ok(page);
        }
        // The chunk holding line `offset`, then the ones after it, read only as far as the
        // page goes.
        let mut stmt = conn.prepare_cached(
            "SELECT first_line, content FROM artifact_chunks
             WHERE artifact_pk = ?1 AND version = ?2 AND first_line >= (
                 SELECT first_line FROM artifact_chunks
                 WHERE artifact_pk = ?1 AND version = ?2 AND first_line <= ?3
                 ORDER BY first_line DESC LIMIT 1)
             ORDER BY first_line",
        )?;
        let mut rows = stmt.query(params![pk, version, offset as i64])?;
        let mut chars = 0usize;
        'chunks: while let Some(row) = rows.next()? {
            let first_line: i64 = row.get(0)?;
            let bytes = row.get_ref(1)?.as_bytes().map_err(rusqlite::Error::from)?;
            let mut number = first_line.max(1) as usize;
            let mut pos = 0usize;
            while pos < bytes.len() {
                let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |p| pos + p + 1);
                let line = &bytes[pos..end];
                pos = end;
                if number < offset {
                    number += 1;
                    continue;
                }
                if limit.is_some_and(|l| page.lines_shown >= l) {
                    page.truncated_by = Truncation::Limit;
                    break 'chunks;
                }
                let text = String::from_utf8_lossy(line);
                let n = text.chars().count();
                if chars + n > max_chars {
                    page.truncated_by = Truncation::MaxChars;
                    if page.lines_shown == 0 {
                        let cut: String = text.chars().take(max_chars).collect();
                        page.text.push_str(&cut);
                        page.lines_shown = 1;
                        page.cut_line = Some(number);
                    }
                    break 'chunks;
                }
                chars += n;
                page.text.push_str(&text);
                page.lines_shown += 1;
                number += 1;
            }
        }
        if !page.has_more() && page.cut_line.is_none() {
            page.truncated_by = Truncation::None;
        }
        Ok(page)
    }
}

/// An artifact listed by [`ArtifactStore::latest_items`], to be read with a [`ChunkReader`].
pub(crate) struct LatestItem {
    /// The artifact at its latest version.
    pub artifact: Artifact,
    pk: i64,
    /// Bytes in the latest version.
    pub size_bytes: usize,
}

fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "mmap_size", READER_MMAP_BYTES)?;
    Ok(conn)
}

/// The latest content of one artifact during [`ArtifactStore::for_each_latest_raw`].
pub struct LatestContent<'r, 'c> {
    reader: &'r mut ChunkReader<'c>,
    pk: i64,
    version: i64,
    size_bytes: usize,
}

impl LatestContent<'_, '_> {
    /// The content's size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.size_bytes
    }

    /// Read the content into `buf[..n]` and return `n`. `buf` is only grown, never shrunk
    /// (so a buffer reused across artifacts is not cleared each time); bytes past `n` are
    /// left over from earlier use.
    pub fn read_into(&mut self, buf: &mut Vec<u8>) -> Result<usize, StoreError> {
        self.reader
            .read_into(self.pk, self.version, self.size_bytes, buf)
    }
}

/// Reads a version's chunks in order, each straight from its database pages into the
/// destination (SQLite's incremental blob I/O, one handle moved from row to row). While the
/// handle is open the connection stays in one read transaction, so everything read through
/// one reader comes from one snapshot.
pub(crate) struct ChunkReader<'c> {
    conn: &'c Connection,
    blob: Option<Blob<'c>>,
}

impl<'c> ChunkReader<'c> {
    pub(crate) fn new(conn: &'c Connection) -> Self {
        ChunkReader { conn, blob: None }
    }

    /// Read an item's content into `buf[..n]` and return `n` (see
    /// [`LatestContent::read_into`]). An artifact deleted since it was listed reads as empty.
    pub(crate) fn read_item(
        &mut self,
        item: &LatestItem,
        buf: &mut Vec<u8>,
    ) -> Result<usize, StoreError> {
        self.read_into(item.pk, item.artifact.version, item.size_bytes, buf)
    }

    fn read_into(
        &mut self,
        pk: i64,
        version: i64,
        size_hint: usize,
        buf: &mut Vec<u8>,
    ) -> Result<usize, StoreError> {
        if buf.len() < size_hint {
            buf.resize(size_hint, 0);
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT rowid FROM artifact_chunks WHERE artifact_pk = ?1 AND version = ?2 ORDER BY first_line",
        )?;
        let mut rows = stmt.query(params![pk, version])?;
        let mut n = 0usize;
        while let Some(row) = rows.next()? {
            let rowid: i64 = row.get(0)?;
            let blob = match &mut self.blob {
                Some(blob) => {
                    blob.reopen(rowid)?;
                    blob
                }
                slot => slot.insert(self.conn.blob_open(
                    MAIN_DB,
                    c"artifact_chunks",
                    c"content",
                    rowid,
                    true,
                )?),
            };
            let len = blob.len();
            if buf.len() < n + len {
                buf.resize(n + len, 0);
            }
            blob.read_at_exact(&mut buf[n..n + len], 0)?;
            n += len;
        }
        Ok(n)
    }
}

fn invalid_utf8(e: std::str::Utf8Error) -> StoreError {
    StoreError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The whole content of one version.
fn load_content(conn: &Connection, pk: i64, version: i64) -> Result<String, StoreError> {
    let size: i64 = conn
        .prepare_cached(
            "SELECT size_bytes FROM artifact_versions WHERE artifact_pk = ?1 AND version = ?2",
        )?
        .query_row(params![pk, version], |r| r.get(0))?;
    let mut buf = Vec::new();
    let n = ChunkReader::new(conn).read_into(pk, version, size.max(0) as usize, &mut buf)?;
    buf.truncate(n);
    String::from_utf8(buf).map_err(|e| invalid_utf8(e.utf8_error()))
}

/// "an image", "audio", "a video", "a PDF" or "a binary file", for messages about `mime`.
pub fn kind_phrase(mime: &str) -> &'static str {
    match mime.split('/').next().unwrap_or("") {
        "image" => "an image",
        "audio" => "audio",
        "video" => "a video",
        _ if mime == "application/pdf" => "a PDF",
        _ => "a binary file",
    }
}

/// A size for people: `812 B`, `12 KB`, `3.4 MB` (1 KB = 1024 bytes).
pub fn human_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = KB * 1024;
    if bytes < KB {
        format!("{bytes} B")
    } else if bytes < MB {
        format!("{} KB", bytes.div_ceil(KB))
    } else {
        format!("{:.1} MB", bytes as f64 / MB as f64)
    }
}

/// A MIME type as stored: lower-cased, parameters dropped, `application/octet-stream` when
/// none is given; an error when it is not `type/subtype`.
fn normalize_mime(mime: &str) -> Result<String, StoreError> {
    let base = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if base.is_empty() {
        return Ok("application/octet-stream".into());
    }
    let token = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    match base.split_once('/') {
        Some((t, sub)) if token(t) && token(sub) => Ok(base),
        _ => Err(StoreError::BadMime {
            mime: mime.chars().take(100).collect(),
        }),
    }
}

/// Refuse text access to a binary artifact.
fn require_text(artifact: &Artifact) -> Result<(), StoreError> {
    if artifact.binary {
        return Err(StoreError::NotText {
            id: artifact.id.clone(),
            mime: artifact.content_type.clone(),
        });
    }
    Ok(())
}

/// The artifact `id` as a reader sees it from `conversation_id`: the conversation's own, else
/// the user's library source of that id (`src_…`), which every conversation may read.
fn find_readable(
    conn: &Connection,
    conversation_id: &str,
    id: &str,
) -> rusqlite::Result<Option<i64>> {
    match find_pk(conn, conversation_id, id)? {
        Some(pk) => Ok(Some(pk)),
        None => crate::sources::library_pk(conn, id),
    }
}

/// The error for writing `id` where it cannot be found: a library source is read-only.
fn not_writable(conn: &Connection, conversation_id: &str, id: &str) -> StoreError {
    match crate::sources::library_pk(conn, id) {
        Ok(Some(_)) if !conversation_id.is_empty() => StoreError::ReadOnlySource { id: id.into() },
        _ => StoreError::NotFound {
            conversation_id: conversation_id.to_string(),
            id: id.to_string(),
        },
    }
}

fn find_pk(conn: &Connection, conversation_id: &str, id: &str) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT pk FROM artifacts WHERE conversation_id = ?1 AND id = ?2",
        params![conversation_id, id],
        |r| r.get(0),
    )
    .optional()
}

fn load_meta(conn: &Connection, pk: i64) -> rusqlite::Result<Artifact> {
    conn.query_row(
        &format!("SELECT {META_COLUMNS} FROM artifacts a WHERE a.pk = ?1"),
        [pk],
        meta_from_row,
    )
}

fn require(
    conn: &Connection,
    conversation_id: &str,
    id: &str,
) -> Result<(Artifact, i64), StoreError> {
    let pk = find_readable(conn, conversation_id, id)?.ok_or_else(|| StoreError::NotFound {
        conversation_id: conversation_id.to_string(),
        id: id.to_string(),
    })?;
    Ok((load_meta(conn, pk)?, pk))
}

fn check_version(artifact: &Artifact, version: Option<i64>) -> Result<i64, StoreError> {
    match version {
        None => Ok(artifact.version),
        Some(v) if (1..=artifact.version).contains(&v) => Ok(v),
        Some(v) => Err(StoreError::VersionNotFound {
            id: artifact.id.clone(),
            version: v,
            latest: artifact.version,
        }),
    }
}

fn insert_version(conn: &Connection, pk: i64, version: i64, content: &str) -> rusqlite::Result<()> {
    let (line_count, chunks) = lines::split_chunks(content, CHUNK_TARGET_BYTES);
    conn.prepare_cached(
        "INSERT INTO artifact_versions (artifact_pk, version, size_chars, size_bytes, line_count)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        pk,
        version,
        content.chars().count() as i64,
        content.len() as i64,
        line_count as i64
    ])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO artifact_chunks (artifact_pk, version, first_line, content) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for chunk in chunks {
        insert.execute(params![pk, version, chunk.first_line as i64, chunk.text])?;
    }
    Ok(())
}
