//! Reading a source as the agents' tools do, over any connection: which library source an id
//! names, its title, and its pages as line ranges of its Markdown (what `read_artifact` reads
//! by page and what a citation's page points at). Only sources that are not `pending` are
//! seen.

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::SOURCE_ID_PREFIX;

/// One page of a source's version, as lines of its Markdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageSpan {
    /// The 1-based page (slide, sheet, chapter).
    pub page: i64,
    /// The page's own label (`vii`), when the file gives one.
    pub label: Option<String>,
    /// Its first line.
    pub first_line: i64,
    /// How many lines it has.
    pub line_count: i64,
}

impl PageSpan {
    /// Its last line (inclusive; `first_line - 1` for a page of no lines).
    pub fn last_line(&self) -> i64 {
        self.first_line + self.line_count - 1
    }
}

/// The internal key of the library source `id`, when it is one (and not being written).
pub fn library_pk(conn: &Connection, id: &str) -> rusqlite::Result<Option<i64>> {
    if !id.starts_with(SOURCE_ID_PREFIX) {
        return Ok(None);
    }
    conn.prepare_cached(
        "SELECT a.pk FROM artifacts a JOIN sources s ON s.artifact_pk = a.pk
         WHERE a.conversation_id = '' AND a.id = ?1 AND s.state <> 'pending'",
    )?
    .query_row([id], |r| r.get(0))
    .optional()
}

/// The title of the library source `id`; `None` when there is none (or it cannot be read).
pub fn library_title(conn: &Connection, id: &str) -> Option<String> {
    let pk = library_pk(conn, id).ok()??;
    conn.query_row("SELECT title FROM artifacts WHERE pk = ?1", [pk], |r| {
        r.get(0)
    })
    .ok()
}

/// How many pages version `version` of the source `pk` has (0 for a file without pages).
pub fn page_count(conn: &Connection, pk: i64, version: i64) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "SELECT count(*) FROM source_pages WHERE artifact_pk = ?1 AND version = ?2",
    )?
    .query_row(params![pk, version], |r| r.get(0))
}

/// Page `page` of version `version` of the source `pk`.
pub fn page(
    conn: &Connection,
    pk: i64,
    version: i64,
    page: i64,
) -> rusqlite::Result<Option<PageSpan>> {
    conn.prepare_cached(
        "SELECT page, label, first_line, line_count FROM source_pages
         WHERE artifact_pk = ?1 AND version = ?2 AND page = ?3",
    )?
    .query_row(params![pk, version, page], span)
    .optional()
}

/// The pages of version `version` of the source `pk` that hold any of lines
/// `first..=last`, in order; at most `max` of them.
pub fn pages_in(
    conn: &Connection,
    pk: i64,
    version: i64,
    first: i64,
    last: i64,
    max: usize,
) -> rusqlite::Result<Vec<PageSpan>> {
    let mut stmt = conn.prepare_cached(
        "SELECT page, label, first_line, line_count FROM source_pages
         WHERE artifact_pk = ?1 AND version = ?2 AND line_count > 0
           AND first_line <= ?4 AND first_line + line_count - 1 >= ?3
         ORDER BY page LIMIT ?5",
    )?;
    let rows = stmt.query_map(
        params![pk, version, first, last, max.min(i64::MAX as usize) as i64],
        span,
    )?;
    rows.collect()
}

fn span(r: &rusqlite::Row<'_>) -> rusqlite::Result<PageSpan> {
    Ok(PageSpan {
        page: r.get(0)?,
        label: r.get(1)?,
        first_line: r.get(2)?,
        line_count: r.get(3)?,
    })
}
