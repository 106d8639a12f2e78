//! Keyword search over sources' passages: FTS5 (`unicode61`, diacritics removed) ranked by
//! bm25, over the current version of ready sources only.

use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

use super::{SourceError, SourceStore};
use crate::fts;

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

/// Which sources a search looks in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SearchScope {
    /// The whole library.
    #[default]
    Library,
    /// Sources added from files under this folder (any of their paths).
    Folder(String),
}

/// How the words of a query must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// Every word (the last one also as a prefix).
    All,
    /// Any of the words, passages with more of the rarer ones first.
    Any,
}

impl SourceStore {
    /// The `k` passages that best match `words` (every word required, the last one also as a
    /// prefix), best first. Empty when `words` has none.
    pub fn search(&self, words: &str, k: usize) -> Result<Vec<SearchHit>, SourceError> {
        Ok(passages(
            self.conn(),
            words,
            Match::All,
            &SearchScope::Library,
            k,
        )?)
    }
}

/// The `k` passages in `scope` that best match `words` as `how` says, best first. Empty when
/// `words` has none.
pub fn passages(
    conn: &Connection,
    words: &str,
    how: Match,
    scope: &SearchScope,
    k: usize,
) -> rusqlite::Result<Vec<SearchHit>> {
    let query = match how {
        Match::All => fts::all_words(words),
        Match::Any => fts::any_word(words),
    };
    let Some(query) = query else {
        return Ok(Vec::new());
    };
    let folder = match scope {
        SearchScope::Library => None,
        SearchScope::Folder(folder) => Some(folder_prefix(folder)),
    };
    let mut stmt = conn.prepare_cached(
        "SELECT a.id, a.title, p.page, p.line_first, p.line_last,
                -bm25(source_passages_fts) AS score, p.text
         FROM source_passages_fts f
         JOIN source_passages p ON p.id = f.rowid
         JOIN artifacts a ON a.pk = p.artifact_pk AND a.current_version = p.version
         JOIN sources s ON s.artifact_pk = a.pk AND s.state <> 'pending'
         JOIN source_versions sv ON sv.artifact_pk = p.artifact_pk AND sv.version = p.version
            AND sv.state = 'ready'
         WHERE source_passages_fts MATCH ?1
           AND (?3 IS NULL OR EXISTS (SELECT 1 FROM source_paths sp
                WHERE sp.artifact_pk = a.pk AND substr(sp.path, 1, length(?3)) = ?3))
         ORDER BY bm25(source_passages_fts) LIMIT ?2",
    )?;
    let rows = stmt.query_map(
        params![query, k.min(i64::MAX as usize) as i64, folder],
        |r| {
            Ok(SearchHit {
                id: r.get(0)?,
                title: r.get(1)?,
                page: r.get(2)?,
                line_first: r.get(3)?,
                line_last: r.get(4)?,
                score: r.get(5)?,
                passage: r.get(6)?,
            })
        },
    )?;
    rows.collect()
}

/// `folder` as a prefix of the paths under it: with one separator at its end, so
/// `/papers` does not take in `/papers-old`.
fn folder_prefix(folder: &str) -> String {
    let sep = if folder.contains('\\') && !folder.contains('/') {
        '\\'
    } else {
        '/'
    };
    let trimmed = folder.trim_end_matches(['/', '\\']);
    format!("{trimmed}{sep}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_end_with_one_separator() {
        assert_eq!(folder_prefix("/home/a/papers"), "/home/a/papers/");
        assert_eq!(folder_prefix("/home/a/papers//"), "/home/a/papers/");
        assert_eq!(folder_prefix(r"C:\Users\a\papers\"), r"C:\Users\a\papers\");
    }
}
