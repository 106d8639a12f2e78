//! The one SQLite database: conversations, messages (and, in later migrations, artifacts).
//!
//! Opened with bundled SQLite in WAL mode with `synchronous=NORMAL` (durable across an app
//! crash or kill; a power loss may lose only the last transactions), foreign keys on and a busy
//! timeout, so the desktop app and the CLI can use the same file at the same time.
//! The schema is versioned with `PRAGMA user_version` through [`rusqlite_migration`]: each entry
//! of [`MIGRATIONS_SQL`] is applied once, in order, inside a transaction.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;
use rusqlite_migration::{Migrations, M};

/// Every schema migration, oldest first. Never edit a shipped entry; append a new one.
pub const MIGRATIONS_SQL: &[&str] = &[
    // 1: conversations and their messages.
    "CREATE TABLE conversations (
        id TEXT PRIMARY KEY NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        agent TEXT NOT NULL DEFAULT '',
        always_allowed_tools TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    ) STRICT;
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('system','user','assistant','tool')),
        agent TEXT NOT NULL DEFAULT '',
        content TEXT NOT NULL,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    ) STRICT;
    CREATE INDEX messages_by_conversation ON messages(conversation_id, id);",
    // 2: artifacts, their immutable versions and a full-text index over title + latest content.
    // `pk` is internal; an artifact is named by (conversation_id, id). A version's content is
    // stored in chunks of about 64 KB cut at line boundaries, keyed by their first line number,
    // so one page of a long artifact is read from the chunk that holds it (a single TEXT value
    // would make SQLite walk its overflow pages from the start up to the page).
    "CREATE TABLE artifacts (
        pk INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        id TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        content_type TEXT NOT NULL DEFAULT 'text/markdown',
        source TEXT NOT NULL CHECK (source IN ('agent','tool','user')),
        current_version INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        UNIQUE (conversation_id, id)
    ) STRICT;
    CREATE INDEX artifacts_by_updated ON artifacts(updated_at);
    CREATE TABLE artifact_versions (
        artifact_pk INTEGER NOT NULL REFERENCES artifacts(pk) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        size_chars INTEGER NOT NULL,
        size_bytes INTEGER NOT NULL,
        line_count INTEGER NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        UNIQUE (artifact_pk, version)
    ) STRICT;
    -- Whole lines from line `first_line` (1-based) on; in `first_line` order the chunks of a
    -- version concatenate to its content. An empty content has no chunks.
    CREATE TABLE artifact_chunks (
        artifact_pk INTEGER NOT NULL,
        version INTEGER NOT NULL,
        first_line INTEGER NOT NULL,
        -- Last, so reading the key never walks its overflow pages.
        content TEXT NOT NULL,
        PRIMARY KEY (artifact_pk, version, first_line),
        FOREIGN KEY (artifact_pk, version) REFERENCES artifact_versions(artifact_pk, version)
            ON DELETE CASCADE
    ) STRICT;
    CREATE VIRTUAL TABLE artifacts_fts USING fts5(
        title, content, content='', contentless_delete=1, tokenize='unicode61'
    );
    CREATE TRIGGER conversations_delete_artifacts AFTER DELETE ON conversations BEGIN
        DELETE FROM artifacts_fts WHERE rowid IN
            (SELECT pk FROM artifacts WHERE conversation_id = OLD.id);
        DELETE FROM artifacts WHERE conversation_id = OLD.id;
    END;",
    // 3: agent runs (so a run cut short by a crash reopens as "interrupted"), and per-message
    // run id and nesting depth (sub-agent messages are kept, shown nested).
    "CREATE TABLE runs (
        id TEXT PRIMARY KEY NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        agent TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running','completed','cancelled','failed','interrupted')),
        error TEXT,
        started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        ended_at TEXT
    ) STRICT;
    CREATE INDEX runs_by_conversation ON runs(conversation_id, started_at);
    ALTER TABLE messages ADD COLUMN run_id TEXT;
    ALTER TABLE messages ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;",
    // 4: the process that owns a run (see `crate::owner`), so only runs whose process is gone
    // are marked interrupted, and at most one run per conversation is `running` (older
    // duplicates, left by crashes before this version, become `interrupted`).
    "ALTER TABLE runs ADD COLUMN owner TEXT;
    ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
    ALTER TABLE runs ADD COLUMN owner_label TEXT;
    UPDATE runs SET status = 'interrupted', ended_at = strftime('%Y-%m-%dT%H:%M:%fZ','now'),
        error = 'the app stopped while this run was in progress'
        WHERE status = 'running' AND rowid NOT IN
            (SELECT max(rowid) FROM runs WHERE status = 'running' GROUP BY conversation_id);
    CREATE UNIQUE INDEX one_running_run_per_conversation ON runs(conversation_id)
        WHERE status = 'running';",
    // 5: tool calls as records (see `crate::calls::CallRecord`): the history the UI shows and the
    // CLI prints is read from these rows; the `<tool_result>` text in `messages` stays what the
    // model is sent. `params`, `artifact_ids` and `handover` are JSON.
    "CREATE TABLE tool_calls (
        call_id TEXT PRIMARY KEY NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        run_id TEXT,
        message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
        position INTEGER NOT NULL DEFAULT 0,
        agent TEXT NOT NULL DEFAULT '',
        depth INTEGER NOT NULL DEFAULT 0,
        tool TEXT NOT NULL,
        params TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL
            CHECK (status IN ('succeeded','failed','denied','not_run','stopped')),
        reason TEXT,
        result TEXT NOT NULL DEFAULT '',
        artifact_ids TEXT NOT NULL DEFAULT '[]',
        handover TEXT,
        started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        ended_at TEXT
    ) STRICT;
    CREATE INDEX tool_calls_by_conversation ON tool_calls(conversation_id, message_id, position);",
    // 6: binary artifacts (a tool's images and audio). `binary` marks an artifact whose one
    // version holds bytes in `artifact_blobs` instead of text chunks (its MIME type is
    // `content_type`); text artifacts are untouched. Its full-text row has the title only. A
    // call's stored attachments (artifact id, MIME type, title, size) are JSON in
    // `tool_calls.attachments`, so the history shows them without reading the result text.
    "ALTER TABLE artifacts ADD COLUMN binary INTEGER NOT NULL DEFAULT 0 CHECK (binary IN (0, 1));
    CREATE TABLE artifact_blobs (
        artifact_pk INTEGER NOT NULL,
        version INTEGER NOT NULL,
        content BLOB NOT NULL,
        PRIMARY KEY (artifact_pk, version),
        FOREIGN KEY (artifact_pk, version) REFERENCES artifact_versions(artifact_pk, version)
            ON DELETE CASCADE
    ) STRICT;
    ALTER TABLE tool_calls ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';",
    // 7: a year of conversations: the list pages by `updated_at` through an index, and search
    // finds message text through a trigram full-text index (substring matches, any case, like
    // the `LIKE '%text%'` scan it replaces, which read every message). Messages are only ever
    // inserted and deleted (never updated), so two triggers keep it in step; existing messages
    // are indexed once, here.
    "CREATE INDEX conversations_by_updated ON conversations(updated_at);
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content='', contentless_delete=1, tokenize='trigram'
    );
    INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages;
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts (rowid, content) VALUES (NEW.id, NEW.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        DELETE FROM messages_fts WHERE rowid = OLD.id;
    END;",
    // 8: context management (see `crate::run::budget`). Messages may have the role `context`:
    // a "conversation so far" note the model sees instead of the older messages it condenses
    // (the hook below widens the role CHECK in place). `context_notes` says up to which
    // message a note covers, so the next run starts from it. `result_artifacts` names the
    // artifact holding a call's full result, so a result replaced by a reference is stored
    // once, never again on the next request or run.
    "CREATE TABLE context_notes (
        message_id INTEGER PRIMARY KEY NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        covers_through INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE result_artifacts (
        call_id TEXT PRIMARY KEY NOT NULL REFERENCES tool_calls(call_id) ON DELETE CASCADE,
        artifact_id TEXT NOT NULL
    ) STRICT;",
    // 9: the conversation's agent's share of its model's window at its latest request (the
    // chat's context meter), so a conversation opened again shows it before its next request.
    "CREATE TABLE context_usage (
        conversation_id TEXT PRIMARY KEY NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        estimated_tokens INTEGER NOT NULL,
        reserved_tokens INTEGER NOT NULL,
        window_tokens INTEGER NOT NULL
    ) STRICT;",
    // 10: conversation permission grants (see `crate::grants`), replacing the
    // `always_allowed_tools` JSON list. A grant is a whole tool (`rule_json` NULL) or a
    // "calls like this" rule, bound to what it was granted for (a host digest, an MCP
    // server's launch digest, or nothing). Each tool of the old list becomes a whole-tool
    // grant bound to nothing: it applies whatever the destination, as it did. The old column
    // stays (SQLite cannot drop it without rebuilding `conversations`) but is no longer read.
    "CREATE TABLE permission_grants (
        id TEXT PRIMARY KEY NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        tool TEXT NOT NULL,
        rule_json TEXT,
        binding_kind TEXT NOT NULL DEFAULT 'none' CHECK (binding_kind IN ('none','host','server')),
        binding_digest TEXT,
        binding_label TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    ) STRICT;
    CREATE INDEX permission_grants_by_conversation ON permission_grants(conversation_id, tool);
    INSERT INTO permission_grants (id, conversation_id, tool, created_at)
        SELECT 'grant_' || lower(hex(randomblob(8))), c.id, j.value, c.updated_at
        FROM conversations c, json_each(c.always_allowed_tools) j
        WHERE json_valid(c.always_allowed_tools) AND json_type(c.always_allowed_tools) = 'array'
            AND j.type = 'text';",
    // 11: the provider's id of a call made through native tool calling (`call_…`, `toolu_…`),
    // sent back with its result; NULL for calls written in the XML format.
    "ALTER TABLE tool_calls ADD COLUMN provider_call_id TEXT;",
    // 12: the call was written under the grammar of guided calls (the app's runtime said so).
    "ALTER TABLE tool_calls ADD COLUMN guided INTEGER NOT NULL DEFAULT 0;",
    // 13: interactive views of calls (MCP Apps). A call's view (its server, `ui://` URI, declared
    // needs, the call's input and result as the server sent them) is JSON in `call_views`,
    // written by the gate when the call ends (before the call's row, so the app can show it at
    // once); its HTML is in `view_documents` once per distinct document (a view is one file
    // with its scripts inlined, the same for every call of its tool), deleted with the last
    // view naming it; a view goes with its call's row (a conversation cut by edit-and-resend).
    // `tool_calls.view_of` names the server whose view made a call.
    "CREATE TABLE view_documents (
        sha256 TEXT PRIMARY KEY NOT NULL,
        html TEXT NOT NULL
    ) STRICT;
    CREATE TABLE call_views (
        call_id TEXT PRIMARY KEY NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        document TEXT NOT NULL REFERENCES view_documents(sha256),
        view TEXT NOT NULL
    ) STRICT;
    CREATE INDEX call_views_by_document ON call_views(document);
    CREATE TRIGGER view_documents_unused AFTER DELETE ON call_views
    BEGIN
        DELETE FROM view_documents WHERE sha256 = OLD.document
            AND NOT EXISTS (SELECT 1 FROM call_views WHERE document = OLD.document);
    END;
    CREATE TRIGGER view_documents_replaced AFTER UPDATE OF document ON call_views
        WHEN OLD.document <> NEW.document
    BEGIN
        DELETE FROM view_documents WHERE sha256 = OLD.document
            AND NOT EXISTS (SELECT 1 FROM call_views WHERE document = OLD.document);
    END;
    CREATE TRIGGER call_views_go_with_their_call AFTER DELETE ON tool_calls
    BEGIN
        DELETE FROM call_views WHERE call_id = OLD.call_id;
    END;
    ALTER TABLE tool_calls ADD COLUMN view_of TEXT;",
    // 14: the tool-use check's results (`artifactflow-cli models check`, the Models screen's
    // badge): one row per completed check, kept by the model's content identity (`sha256:…` of
    // a model file, so a result survives removing, renaming and importing the file again;
    // `server:…` for a profile's model on a server), the mode and guidance it ran in, and the
    // item set it used. `report` is the whole report as JSON (every item's verdict and calls).
    "CREATE TABLE tool_checks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        model_key TEXT NOT NULL,
        model_name TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('text','native')),
        guided INTEGER NOT NULL CHECK (guided IN (0, 1)),
        item_set TEXT NOT NULL,
        items INTEGER NOT NULL,
        as_asked INTEGER NOT NULL,
        right_tool INTEGER NOT NULL,
        valid_calls INTEGER NOT NULL,
        calls_expected INTEGER NOT NULL,
        failed INTEGER NOT NULL,
        seconds REAL NOT NULL,
        report TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    ) STRICT;
    CREATE INDEX tool_checks_by_model ON tool_checks(model_key, mode, guided, id);",
    // 15: users' own sources (see `crate::sources`). A source is an artifact with source
    // `user` in the library scope (`conversation_id = ''`), its extracted Markdown an ordinary
    // text version; `sources` and `source_versions` say what it came from and whether it is
    // complete (`pending` rows are being written and are seen by nothing). Original bytes are
    // content-addressed files `DATA/sources/ab/abcd…`, one per distinct sha256, named by
    // `source_blobs`. Passages (located by page and line) are indexed by FTS5 for search.
    // `ingest_jobs`/`ingest_items` record each add, so one cut short by a kill is rolled back
    // and reported at the next open.
    "CREATE TABLE source_blobs (
        sha256 TEXT PRIMARY KEY NOT NULL,
        size INTEGER NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    ) STRICT;
    CREATE TABLE sources (
        artifact_pk INTEGER PRIMARY KEY REFERENCES artifacts(pk) ON DELETE CASCADE,
        state TEXT NOT NULL CHECK (state IN ('pending','ready','missing')),
        kind TEXT NOT NULL
    ) STRICT;
    CREATE TABLE source_versions (
        artifact_pk INTEGER NOT NULL,
        version INTEGER NOT NULL,
        sha256 TEXT NOT NULL REFERENCES source_blobs(sha256),
        file_name TEXT NOT NULL,
        path TEXT,
        size INTEGER NOT NULL,
        mime TEXT NOT NULL,
        page_count INTEGER,
        title TEXT,
        author TEXT,
        extractor TEXT NOT NULL,
        warnings TEXT NOT NULL DEFAULT '[]',
        state TEXT NOT NULL CHECK (state IN ('pending','ready')),
        job_id TEXT,
        added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (artifact_pk, version),
        FOREIGN KEY (artifact_pk, version) REFERENCES artifact_versions(artifact_pk, version)
            ON DELETE CASCADE
    ) STRICT;
    CREATE INDEX source_versions_by_sha ON source_versions(sha256);
    CREATE INDEX source_versions_pending ON source_versions(state) WHERE state = 'pending';
    CREATE TABLE source_pages (
        artifact_pk INTEGER NOT NULL,
        version INTEGER NOT NULL,
        page INTEGER NOT NULL,
        label TEXT,
        first_line INTEGER NOT NULL,
        line_count INTEGER NOT NULL,
        has_text INTEGER NOT NULL CHECK (has_text IN (0, 1)),
        PRIMARY KEY (artifact_pk, version, page),
        FOREIGN KEY (artifact_pk, version) REFERENCES source_versions(artifact_pk, version)
            ON DELETE CASCADE
    ) STRICT;
    CREATE TABLE source_passages (
        id INTEGER PRIMARY KEY,
        artifact_pk INTEGER NOT NULL,
        version INTEGER NOT NULL,
        page INTEGER,
        line_first INTEGER NOT NULL,
        line_last INTEGER NOT NULL,
        text TEXT NOT NULL,
        FOREIGN KEY (artifact_pk, version) REFERENCES source_versions(artifact_pk, version)
            ON DELETE CASCADE
    ) STRICT;
    CREATE INDEX source_passages_by_version ON source_passages(artifact_pk, version, line_first);
    CREATE VIRTUAL TABLE source_passages_fts USING fts5(
        text, content='source_passages', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER source_passages_indexed AFTER INSERT ON source_passages BEGIN
        INSERT INTO source_passages_fts (rowid, text) VALUES (NEW.id, NEW.text);
    END;
    CREATE TRIGGER source_passages_unindexed AFTER DELETE ON source_passages BEGIN
        INSERT INTO source_passages_fts (source_passages_fts, rowid, text)
            VALUES ('delete', OLD.id, OLD.text);
    END;
    CREATE TABLE source_paths (
        path TEXT PRIMARY KEY NOT NULL,
        artifact_pk INTEGER NOT NULL REFERENCES artifacts(pk) ON DELETE CASCADE,
        size INTEGER,
        mtime_ns INTEGER,
        sha256 TEXT,
        status TEXT NOT NULL CHECK (status IN ('present','missing')),
        watch_id INTEGER,
        seen_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    ) STRICT;
    CREATE INDEX source_paths_by_artifact ON source_paths(artifact_pk);
    CREATE TABLE ingest_jobs (
        id TEXT PRIMARY KEY NOT NULL,
        origin TEXT NOT NULL CHECK (origin IN ('cli','app','watch','composer')),
        conversation_id TEXT,
        status TEXT NOT NULL CHECK (status IN ('running','done','cancelled','interrupted')),
        owner TEXT,
        owner_pid INTEGER,
        options TEXT NOT NULL DEFAULT '{}',
        files_total INTEGER NOT NULL DEFAULT 0,
        bytes_total INTEGER NOT NULL DEFAULT 0,
        notice TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        ended_at TEXT
    ) STRICT;
    CREATE TABLE ingest_items (
        job_id TEXT NOT NULL REFERENCES ingest_jobs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        path TEXT NOT NULL,
        size INTEGER,
        status TEXT NOT NULL CHECK (status IN ('queued','extracting','storing','added',
            'new_version','duplicate','unchanged','failed','skipped','cancelled')),
        error_kind TEXT,
        error TEXT,
        artifact_pk INTEGER,
        version INTEGER,
        pages INTEGER,
        started_at TEXT,
        ended_at TEXT,
        PRIMARY KEY (job_id, seq)
    ) STRICT;
    CREATE INDEX ingest_items_by_status ON ingest_items(job_id, status);",
    // 16: the passages of the user's sources a call read or found (`crate::citations`), so an
    // answer's citations are checked against what the agent really retrieved.
    "ALTER TABLE tool_calls ADD COLUMN citations TEXT NOT NULL DEFAULT '[]';",
];

/// The `messages.role` CHECK before and after migration 8.
const ROLE_CHECK: (&str, &str) = (
    "CHECK (role IN ('system','user','assistant','tool'))",
    "CHECK (role IN ('system','user','assistant','tool','context'))",
);

/// Migration 8's hook: allow the role `context` in `messages`.
///
/// SQLite cannot alter a CHECK constraint, and rebuilding `messages` would fire its foreign
/// key actions (call records lose their message) and full-text triggers. Widening a CHECK
/// that every existing row satisfies does not change the file's content, the case SQLite's
/// documentation gives for editing `sqlite_schema` directly ("ALTER TABLE", section 7); the
/// schema version is bumped so every connection reloads the schema.
fn allow_context_role(tx: &rusqlite::Transaction) -> rusqlite_migration::HookResult {
    let version: i64 = tx.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    tx.pragma_update(None, "writable_schema", "ON")?;
    let changed = tx.execute(
        "UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) WHERE type = 'table' AND name = 'messages'",
        [ROLE_CHECK.0, ROLE_CHECK.1],
    )?;
    tx.pragma_update(None, "schema_version", version + 1)?;
    tx.pragma_update(None, "writable_schema", "OFF")?;
    let widened: bool = tx.query_row(
        "SELECT instr(sql, ?1) > 0 FROM sqlite_schema WHERE type = 'table' AND name = 'messages'",
        [ROLE_CHECK.1],
        |r| r.get(0),
    )?;
    if changed != 1 || !widened {
        return Err(rusqlite_migration::HookError::Hook(
            "migration 8: the messages table's role CHECK is not the expected one".into(),
        ));
    }
    Ok(())
}

/// The migration set built from [`MIGRATIONS_SQL`].
///
/// Migration 5 also backfills `tool_calls` from the calls older versions stored only as text
/// ([`crate::calls_backfill`]), inside its transaction: once per database, never again.
pub fn migrations() -> Migrations<'static> {
    Migrations::new(
        MIGRATIONS_SQL
            .iter()
            .enumerate()
            .map(|(i, sql)| match i + 1 {
                5 => M::up_with_hook(sql, |tx: &rusqlite::Transaction| {
                    crate::calls_backfill::backfill(tx)?;
                    Ok(())
                }),
                8 => M::up_with_hook(sql, allow_context_role),
                _ => M::up(sql),
            })
            .collect(),
    )
}

/// The schema version a fully migrated database has.
pub fn latest_version() -> usize {
    MIGRATIONS_SQL.len()
}

/// Errors opening or migrating the database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    /// SQLite refused to open or configure the file.
    #[error("cannot open database {path}: {source}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// A migration failed; the database is left at its previous version.
    #[error("cannot migrate database {path}: {source}")]
    Migrate {
        /// The database file.
        path: PathBuf,
        /// The migration error.
        #[source]
        source: rusqlite_migration::Error,
    },
    /// The lock that serialises opening a new database between processes could not be taken.
    #[error("cannot lock {path}.lock while opening the database: {source}")]
    Lock {
        /// The database file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file was written by a newer ArtifactFlow whose schema this build does not know.
    #[error("database {path} has schema version {found}, newer than this build's {supported}; update ArtifactFlow")]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// Version found in the file.
        found: usize,
        /// Newest version this build knows.
        supported: usize,
    },
}

/// Open (creating if needed) and migrate the database at `path`.
///
/// Several processes may open a brand-new file at once (the app and a CLI command): switching
/// to WAL and migrating happen while holding an OS lock on `PATH.lock`, so the second process
/// waits, then finds the schema up to date (without it, the second one's migration failed on
/// tables the first had just created).
pub fn open(path: &Path) -> Result<Connection, DbError> {
    let open_err = |source| DbError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut conn = Connection::open(path).map_err(open_err)?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(open_err)?;
    let _setup = SetupLock::take(path).map_err(|e| DbError::Lock {
        path: path.to_path_buf(),
        source: e,
    })?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(open_err)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(open_err)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(open_err)?;
    let found = schema_version(&conn).map_err(open_err)?;
    if found > latest_version() {
        return Err(DbError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: latest_version(),
        });
    }
    migrations()
        .to_latest(&mut conn)
        .map_err(|source| DbError::Migrate {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(conn)
}

/// An exclusive OS lock on `DB.lock` (beside the database), released on drop. The file is
/// left in place: removing a lock file others may be waiting on would let two holders in.
struct SetupLock(std::fs::File);

impl SetupLock {
    fn take(db: &Path) -> std::io::Result<SetupLock> {
        let mut name = db.as_os_str().to_os_string();
        name.push(".lock");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(PathBuf::from(name))?;
        fs4::FileExt::lock(&file)?;
        Ok(SetupLock(file))
    }
}

impl Drop for SetupLock {
    fn drop(&mut self) {
        let _ = fs4::FileExt::unlock(&self.0);
    }
}

/// The schema version stored in the database (`PRAGMA user_version`).
pub fn schema_version(conn: &Connection) -> rusqlite::Result<usize> {
    conn.query_row("PRAGMA user_version", [], |row| row.get::<_, i64>(0))
        .map(|v| v.max(0) as usize)
}

/// A read or write of the database that failed, as the front ends see it (no database type
/// crosses the engine's API). Every write is one statement or one
/// transaction, so a failure leaves what was stored as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StoreFailure {
    message: String,
}

impl StoreFailure {
    /// A failure described by `message` (what failed, in words).
    pub fn new(message: impl Into<String>) -> Self {
        StoreFailure {
            message: message.into(),
        }
    }
}

impl From<rusqlite::Error> for StoreFailure {
    fn from(e: rusqlite::Error) -> Self {
        StoreFailure::new(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        migrations().validate().unwrap();
    }

    #[test]
    fn opens_a_new_file_in_wal_mode_at_the_latest_version() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.db");
        let conn = open(&path).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        assert_eq!(schema_version(&conn).unwrap(), latest_version());
        let fk: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(fk, 1);
    }

    #[test]
    fn reopening_keeps_data_and_migrates_from_every_earlier_version() {
        let tmp = tempfile::tempdir().unwrap();
        for start in 0..latest_version() {
            let path = tmp.path().join(format!("v{start}.db"));
            {
                let mut conn = Connection::open(&path).unwrap();
                migrations().to_version(&mut conn, start).unwrap();
                assert_eq!(schema_version(&conn).unwrap(), start);
            }
            let conn = open(&path).unwrap();
            assert_eq!(schema_version(&conn).unwrap(), latest_version());
        }
        let path = tmp.path().join("keep.db");
        open(&path)
            .unwrap()
            .execute(
                "INSERT INTO conversations (id, title) VALUES ('c1', 'kept')",
                [],
            )
            .unwrap();
        let title: String = open(&path)
            .unwrap()
            .query_row("SELECT title FROM conversations WHERE id='c1'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(title, "kept");
    }

    #[test]
    fn migrating_from_v1_with_data_keeps_conversations_and_adds_artifacts() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v1.db");
        {
            let mut conn = Connection::open(&path).unwrap();
            migrations().to_version(&mut conn, 1).unwrap();
            conn.execute_batch(
                "INSERT INTO conversations (id, title) VALUES ('c1', 'old chat');
                 INSERT INTO messages (conversation_id, role, content) VALUES ('c1', 'user', 'hi');",
            )
            .unwrap();
        }
        let conn = open(&path).unwrap();
        assert_eq!(schema_version(&conn).unwrap(), latest_version());
        let (title, content): (String, String) = conn
            .query_row(
                "SELECT c.title, m.content FROM conversations c JOIN messages m ON m.conversation_id = c.id",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((title.as_str(), content.as_str()), ("old chat", "hi"));
        conn.execute_batch(
            "INSERT INTO artifacts (conversation_id, id, source) VALUES ('c1', 'a', 'agent');
             INSERT INTO artifact_versions (artifact_pk, version, size_chars, size_bytes, line_count)
                 VALUES (1, 1, 1, 1, 1);
             INSERT INTO artifact_chunks (artifact_pk, version, first_line, content)
                 VALUES (1, 1, 1, 'x');
             INSERT INTO artifacts_fts (rowid, title, content) VALUES (1, '', 'x');",
        )
        .unwrap();
        let orphan = conn.execute(
            "INSERT INTO artifact_chunks (artifact_pk, version, first_line, content) VALUES (1, 2, 1, 'y')",
            [],
        );
        assert!(orphan.is_err(), "a chunk needs its version");
        conn.execute("DELETE FROM conversations WHERE id = 'c1'", [])
            .unwrap();
        let left: i64 = conn
            .query_row(
                "SELECT (SELECT count(*) FROM artifacts) + (SELECT count(*) FROM artifact_versions)
                      + (SELECT count(*) FROM artifact_chunks)
                      + (SELECT count(*) FROM artifacts_fts WHERE artifacts_fts MATCH 'x')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0, "deleting a conversation deletes its artifacts");
    }

    /// Connections opening one brand-new file at the same moment all get a migrated database
    /// (before, all but the first failed with "table conversations already exists"). Threads
    /// stand in for processes here; `crates/cli/tests/shared_db.rs` does it with processes.
    #[test]
    fn opening_a_new_file_from_several_connections_at_once_works_for_all() {
        for _ in 0..20 {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("new.db");
            let start = std::sync::Barrier::new(4);
            std::thread::scope(|s| {
                let opened: Vec<_> = (0..4)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            open(&path).map(|c| schema_version(&c).unwrap())
                        })
                    })
                    .collect();
                for handle in opened {
                    assert_eq!(handle.join().unwrap().unwrap(), latest_version());
                }
            });
        }
    }

    #[test]
    fn migration_4_keeps_one_running_run_per_conversation() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v3.db");
        {
            let mut conn = Connection::open(&path).unwrap();
            migrations().to_version(&mut conn, 3).unwrap();
            conn.execute_batch(
                "INSERT INTO conversations (id) VALUES ('c');
                 INSERT INTO runs (id, conversation_id, agent, status) VALUES ('old', 'c', 'a', 'running');
                 INSERT INTO runs (id, conversation_id, agent, status) VALUES ('new', 'c', 'a', 'running');",
            )
            .unwrap();
        }
        let conn = open(&path).unwrap();
        let statuses: Vec<String> = conn
            .prepare("SELECT status FROM runs ORDER BY rowid")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(statuses, ["interrupted", "running"]);
        assert!(
            conn.execute(
                "INSERT INTO runs (id, conversation_id, agent, status) VALUES ('x', 'c', 'a', 'running')",
                [],
            )
            .is_err(),
            "a second running run of one conversation is refused"
        );
    }

    #[test]
    fn migration_8_allows_context_notes_and_keeps_messages_calls_and_search() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v7.db");
        {
            let mut conn = Connection::open(&path).unwrap();
            migrations().to_version(&mut conn, 7).unwrap();
            conn.execute_batch(
                "INSERT INTO conversations (id) VALUES ('c');
                 INSERT INTO messages (conversation_id, role, content) VALUES ('c', 'assistant', 'findable answer');
                 INSERT INTO tool_calls (call_id, conversation_id, message_id, tool, status) VALUES ('k', 'c', 1, 't', 'succeeded');",
            )
            .unwrap();
            assert!(conn
                .execute("INSERT INTO messages (conversation_id, role, content) VALUES ('c', 'context', 'n')", [])
                .is_err());
        }
        let conn = open(&path).unwrap();
        conn.execute(
            "INSERT INTO messages (conversation_id, role, content) VALUES ('c', 'context', 'so far')",
            [],
        )
        .unwrap();
        assert!(
            conn.execute(
                "INSERT INTO messages (conversation_id, role, content) VALUES ('c', 'other', 'x')",
                []
            )
            .is_err(),
            "other roles are still refused"
        );
        let (message, found): (Option<i64>, i64) = conn
            .query_row(
                "SELECT (SELECT message_id FROM tool_calls WHERE call_id = 'k'),
                        (SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '\"findable\"')",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((message, found), (Some(1), 1));
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
    }

    #[test]
    fn refuses_a_database_from_a_newer_build() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("new.db");
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", 999)
            .unwrap();
        let err = open(&path).unwrap_err();
        assert!(matches!(err, DbError::TooNew { found: 999, .. }), "{err}");
        assert!(err.to_string().contains("update ArtifactFlow"));
    }
}
