//! Ingest jobs: one row per `library add` (or app add), one item per file, and the recovery of
//! jobs cut short.
//!
//! A job records the process that runs it (its [`ProcessOwner`] id and pid, as runs do). When
//! the store opens, every job still `running` whose owner's lock can be taken (its process is
//! gone: killed, crashed, quit) is rolled back: its pending versions (with their pages,
//! passages and, for new sources, the artifact) are deleted, its unfinished items become
//! `cancelled`, and the job becomes `interrupted` with a notice that says what was kept and
//! what was rolled back. Files finished before the kill stay: each was completed by its own
//! transaction.

use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};
use serde::{Deserialize, Serialize};

use super::{SourceError, SourceStore};
use crate::owner::ProcessOwner;

/// A job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// Adding files.
    Running,
    /// Every file was handled.
    Done,
    /// Stopped by the user.
    Cancelled,
    /// Its process ended midway; rolled back at a later open.
    Interrupted,
}

impl JobStatus {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Done => "done",
            JobStatus::Cancelled => "cancelled",
            JobStatus::Interrupted => "interrupted",
        }
    }
}

/// What became of one file of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    /// Not started.
    Queued,
    /// Being read.
    Extracting,
    /// Added as a new source.
    Added,
    /// Added as a new version of the source from the same path.
    NewVersion,
    /// The same bytes are in the library already.
    Duplicate,
    /// Could not be added (see its error).
    Failed,
    /// Left out (over a limit set for the add, or not matching its globs).
    Skipped,
    /// Not finished: the job was cancelled or interrupted.
    Cancelled,
}

impl ItemStatus {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Queued => "queued",
            ItemStatus::Extracting => "extracting",
            ItemStatus::Added => "added",
            ItemStatus::NewVersion => "new_version",
            ItemStatus::Duplicate => "duplicate",
            ItemStatus::Failed => "failed",
            ItemStatus::Skipped => "skipped",
            ItemStatus::Cancelled => "cancelled",
        }
    }
}

/// A change to one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemUpdate<'a> {
    /// Its new status.
    pub status: ItemStatus,
    /// The failure's kind (`encrypted`, `timeout`, …).
    pub error_kind: Option<&'a str>,
    /// The failure, for a person.
    pub error: Option<&'a str>,
    /// The source it became (or duplicates).
    pub artifact_id: Option<&'a str>,
    /// Pages read.
    pub pages: Option<u32>,
}

/// A job as `library jobs` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSummary {
    /// The job's id (`job_…`).
    pub id: String,
    /// Who started it (`cli`, `app`, …).
    pub origin: String,
    /// `running`, `done`, `cancelled` or `interrupted`.
    pub status: String,
    /// Files found.
    pub files_total: i64,
    /// Their bytes.
    pub bytes_total: i64,
    /// Items by status: `{"added": 3, "failed": 1, …}`.
    pub counts: serde_json::Map<String, serde_json::Value>,
    /// What happened to it, when it did not end normally.
    pub notice: Option<String>,
    /// When it started.
    pub created_at: String,
    /// When it ended.
    pub ended_at: Option<String>,
}

/// Deletes the pending version `(pk, version)` and, when the source has no other version,
/// its artifact; returns the hashes it named (for the caller to remove unused files).
pub(super) fn delete_pending(
    tx: &Transaction<'_>,
    pk: i64,
    version: i64,
) -> rusqlite::Result<Vec<String>> {
    let sha: Option<String> = tx
        .query_row(
            "SELECT sha256 FROM source_versions WHERE artifact_pk = ?1 AND version = ?2 AND state = 'pending'",
            params![pk, version],
            |r| r.get(0),
        )
        .optional()?;
    let Some(sha) = sha else {
        return Ok(Vec::new());
    };
    let source_pending: bool = tx
        .query_row(
            "SELECT state = 'pending' FROM sources WHERE artifact_pk = ?1",
            [pk],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(false);
    if source_pending {
        tx.execute("DELETE FROM artifacts_fts WHERE rowid = ?1", [pk])?;
        tx.execute("DELETE FROM artifacts WHERE pk = ?1", [pk])?;
    } else {
        tx.execute(
            "DELETE FROM artifact_versions WHERE artifact_pk = ?1 AND version = ?2",
            params![pk, version],
        )?;
    }
    Ok(vec![sha])
}

impl SourceStore {
    /// Starts a job owned by `owner` for these files (`(path, size)` each, in order).
    pub fn create_job(
        &mut self,
        origin: &str,
        owner: &ProcessOwner,
        options: &serde_json::Value,
        files: &[(String, u64)],
    ) -> Result<String, SourceError> {
        let id = format!("job_{}", crate::ids::random_hex12());
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO ingest_jobs (id, origin, status, owner, owner_pid, options, files_total, bytes_total)
             VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7)",
            params![
                id,
                origin,
                owner.id(),
                owner.pid(),
                options.to_string(),
                files.len() as i64,
                files.iter().map(|(_, size)| *size as i64).sum::<i64>()
            ],
        )?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO ingest_items (job_id, seq, path, size, status) VALUES (?1, ?2, ?3, ?4, 'queued')",
            )?;
            for (seq, (path, size)) in files.iter().enumerate() {
                insert.execute(params![id, seq as i64, path, *size as i64])?;
            }
        }
        tx.commit()?;
        Ok(id)
    }

    /// Records what became of item `seq` of `job`.
    pub fn update_item(
        &self,
        job: &str,
        seq: usize,
        update: &ItemUpdate<'_>,
    ) -> Result<(), SourceError> {
        let started = matches!(update.status, ItemStatus::Extracting);
        self.conn().execute(
            "UPDATE ingest_items SET status = ?3, error_kind = ?4, error = ?5,
                artifact_pk = (SELECT pk FROM artifacts WHERE conversation_id = '' AND id = ?6),
                pages = ?7,
                started_at = CASE WHEN ?8 THEN strftime('%Y-%m-%dT%H:%M:%fZ','now') ELSE started_at END,
                ended_at = CASE WHEN ?8 THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%fZ','now') END
             WHERE job_id = ?1 AND seq = ?2",
            params![
                job,
                seq as i64,
                update.status.as_str(),
                update.error_kind,
                update.error,
                update.artifact_id,
                update.pages,
                started
            ],
        )?;
        Ok(())
    }

    /// Ends a job: `done` or `cancelled` (its unfinished items become `cancelled`).
    pub fn end_job(
        &self,
        job: &str,
        status: JobStatus,
        notice: Option<&str>,
    ) -> Result<(), SourceError> {
        self.conn().execute(
            "UPDATE ingest_items SET status = 'cancelled' WHERE job_id = ?1
                AND status IN ('queued','extracting','storing')",
            [job],
        )?;
        self.conn().execute(
            "UPDATE ingest_jobs SET status = ?2, notice = ?3,
                ended_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1",
            params![job, status.as_str(), notice],
        )?;
        Ok(())
    }

    /// The most recent jobs, newest first.
    pub fn jobs(&self, limit: usize) -> Result<Vec<JobSummary>, SourceError> {
        let mut stmt = self.conn().prepare(
            "SELECT j.id, j.origin, j.status, j.files_total, j.bytes_total, j.notice, j.created_at,
                j.ended_at,
                (SELECT json_group_object(status, n) FROM
                    (SELECT status, count(*) AS n FROM ingest_items WHERE job_id = j.id GROUP BY status))
             FROM ingest_jobs j ORDER BY j.created_at DESC, j.rowid DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit.min(i64::MAX as usize) as i64], |r| {
            let counts: String = r.get(8)?;
            Ok(JobSummary {
                id: r.get(0)?,
                origin: r.get(1)?,
                status: r.get(2)?,
                files_total: r.get(3)?,
                bytes_total: r.get(4)?,
                notice: r.get(5)?,
                created_at: r.get(6)?,
                ended_at: r.get(7)?,
                counts: serde_json::from_str(&counts).unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Rolls back the jobs whose process is gone (see the module docs) and any pending version
    /// no running job owns; returns a notice per job rolled back.
    pub fn recover(&mut self, owner: &ProcessOwner) -> Result<Vec<String>, SourceError> {
        let running: Vec<(String, Option<String>, String)> = self
            .conn()
            .prepare("SELECT id, owner, created_at FROM ingest_jobs WHERE status = 'running'")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let mut notices = Vec::new();
        let mut live_jobs = Vec::new();
        for (job, job_owner, created_at) in running {
            let alive = job_owner
                .as_deref()
                .is_some_and(|o| o == owner.id() || owner.is_alive(o));
            if alive {
                live_jobs.push(job);
                continue;
            }
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let pending: Vec<(i64, i64)> = tx
                .prepare(
                    "SELECT artifact_pk, version FROM source_versions
                     WHERE state = 'pending' AND job_id = ?1",
                )?
                .query_map([&job], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            for (pk, version) in &pending {
                delete_pending(&tx, *pk, *version)?;
            }
            let (kept, unfinished): (i64, i64) = tx.query_row(
                "SELECT count(*) FILTER (WHERE status IN ('added','new_version','duplicate')),
                        count(*) FILTER (WHERE status IN ('queued','extracting','storing'))
                 FROM ingest_items WHERE job_id = ?1",
                [&job],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let notice = format!(
                "adding files (job {job}, started {created_at}) stopped when its process ended; \
                 {kept} file(s) added before that are kept, {} half-added file(s) rolled back, \
                 {unfinished} file(s) not added (run `library add` again to add them)",
                pending.len()
            );
            tx.execute(
                "UPDATE ingest_items SET status = 'cancelled' WHERE job_id = ?1
                    AND status IN ('queued','extracting','storing')",
                [&job],
            )?;
            tx.execute(
                "UPDATE ingest_jobs SET status = 'interrupted', notice = ?2,
                    ended_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1",
                params![job, notice],
            )?;
            tx.commit()?;
            notices.push(notice);
        }
        // Pending versions that no live job owns (none should exist; a job row lost with them
        // would otherwise leave them for ever).
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let orphans: Vec<(i64, i64, Option<String>)> = tx
            .prepare(
                "SELECT artifact_pk, version, job_id FROM source_versions WHERE state = 'pending'",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        for (pk, version, job) in orphans {
            if job.is_some_and(|j| live_jobs.contains(&j)) {
                continue;
            }
            delete_pending(&tx, pk, version)?;
        }
        tx.commit()?;
        Ok(notices)
    }
}
