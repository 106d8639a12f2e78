//! Keyword search over sources' passages: FTS5 (`unicode61`, diacritics removed) ranked by
//! bm25, over the current version of ready sources only.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{SourceError, SourceStore};
use crate::artifacts::store::fts_query;

/// One passage found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The source's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The passage's page, in paged files.
    pub page: Option<i64>,
    /// Its first line in the source's Markdown.
    pub line_first: i64,
    /// Its last line (inclusive).
    pub line_last: i64,
    /// bm25 relevance (higher is better).
    pub score: f64,
    /// The passage, as Markdown.
    pub passage: String,
}

impl SourceStore {
    /// The `k` passages that best match `words` (every word required, the last one also as a
    /// prefix), best first. Empty when `words` has none.
    pub fn search(&self, words: &str, k: usize) -> Result<Vec<SearchHit>, SourceError> {
        let Some(query) = fts_query(words) else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn().prepare_cached(
            "SELECT a.id, a.title, p.page, p.line_first, p.line_last,
                    -bm25(source_passages_fts) AS score, p.text
             FROM source_passages_fts f
             JOIN source_passages p ON p.id = f.rowid
             JOIN artifacts a ON a.pk = p.artifact_pk AND a.current_version = p.version
             JOIN sources s ON s.artifact_pk = a.pk AND s.state <> 'pending'
             JOIN source_versions sv ON sv.artifact_pk = p.artifact_pk AND sv.version = p.version
                AND sv.state = 'ready'
             WHERE source_passages_fts MATCH ?1
             ORDER BY bm25(source_passages_fts) LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![query, k.min(i64::MAX as usize) as i64], |r| {
            Ok(SearchHit {
                id: r.get(0)?,
                title: r.get(1)?,
                page: r.get(2)?,
                line_first: r.get(3)?,
                line_last: r.get(4)?,
                score: r.get(5)?,
                passage: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
