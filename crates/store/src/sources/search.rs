//! Keyword search over sources' passages: FTS5 (`unicode61`, diacritics removed) ranked by
//! bm25, over the current version of ready sources only.

use rusqlite::{params, Connection, OptionalExtension};
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
    /// Every word, the last one also as a prefix (words typed into a search field).
    All,
    /// Every word as written (an agent's query).
    Words,
    /// Any of the words, passages with more of the rarer ones first. Words in more than a
    /// quarter of the passages are left out while a rarer one remains: they hardly change the
    /// ranking and would make every passage a match to rank.
    Any,
}

/// Words in more than this share of the passages are left out of an any-word query.
const COMMON_SHARE: f64 = 0.25;

/// `words` without those in more than [`COMMON_SHARE`] of the passages, keeping the rarest one
/// when all are that common. Document counts come from FTS5's own vocabulary (`fts5vocab`).
fn without_common_words(conn: &Connection, words: &str) -> rusqlite::Result<String> {
    conn.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.source_vocab
         USING fts5vocab(main, source_passages_fts, row)",
    )?;
    let total: i64 = conn
        .prepare_cached("SELECT count(*) FROM source_passages")?
        .query_row([], |r| r.get(0))?;
    let mut doc = conn.prepare_cached("SELECT doc FROM temp.source_vocab WHERE term = ?1")?;
    let mut counted: Vec<(&str, i64)> = Vec::new();
    for word in words.split_whitespace() {
        let term = word.to_lowercase();
        let n: i64 = doc
            .query_row([term.trim_matches('"')], |r| r.get(0))
            .optional()?
            .unwrap_or(0);
        counted.push((word, n));
    }
    let limit = (total as f64 * COMMON_SHARE) as i64;
    let kept: Vec<&str> = counted
        .iter()
        .filter(|(_, n)| *n <= limit)
        .map(|(w, _)| *w)
        .collect();
    if !kept.is_empty() || counted.is_empty() {
        return Ok(kept.join(" "));
    }
    Ok(counted
        .iter()
        .min_by_key(|(_, n)| *n)
        .map(|(w, _)| w.to_string())
        .unwrap_or_default())
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
        Match::Words => fts::every_word(words),
        Match::Any => fts::any_word(&without_common_words(conn, words)?),
    };
    let Some(query) = query else {
        return Ok(Vec::new());
    };
    let folder = match scope {
        SearchScope::Library => None,
        SearchScope::Folder(folder) => Some(folder_prefix(folder)),
    };
    // FTS5 ranks the best `fetch` passages on its own (ORDER BY rank LIMIT, without a join per
    // match: joined, a query of common words over 100,000 passages took a second). Each is then
    // looked up, dropping passages of old, pending or out-of-scope versions; when that leaves
    // fewer than `k` of a full batch, the batch is doubled.
    let mut ranked = conn.prepare_cached(
        "SELECT rowid, rank FROM source_passages_fts WHERE source_passages_fts MATCH ?1
         ORDER BY rank LIMIT ?2 OFFSET ?3",
    )?;
    let mut passage = conn.prepare_cached(
        "SELECT a.id, a.title, p.page, p.line_first, p.line_last, p.text
         FROM source_passages p
         JOIN artifacts a ON a.pk = p.artifact_pk AND a.current_version = p.version
         JOIN sources s ON s.artifact_pk = a.pk AND s.state <> 'pending'
         JOIN source_versions sv ON sv.artifact_pk = p.artifact_pk AND sv.version = p.version
            AND sv.state = 'ready'
         WHERE p.id = ?1
           AND (?2 IS NULL OR EXISTS (SELECT 1 FROM source_paths sp
                WHERE sp.artifact_pk = a.pk AND substr(sp.path, 1, length(?2)) = ?2))",
    )?;
    let mut hits = Vec::with_capacity(k);
    let mut offset = 0usize;
    let mut batch = k.saturating_mul(4).saturating_add(32);
    while hits.len() < k {
        let rows: Vec<(i64, f64)> = ranked
            .query_map(params![query, batch as i64, offset as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<Result<_, _>>()?;
        for (rowid, rank) in &rows {
            let found = passage
                .query_row(params![rowid, folder], |r| {
                    Ok(SearchHit {
                        id: r.get(0)?,
                        title: r.get(1)?,
                        page: r.get(2)?,
                        line_first: r.get(3)?,
                        line_last: r.get(4)?,
                        score: -rank,
                        passage: r.get(5)?,
                    })
                })
                .optional()?;
            if let Some(hit) = found {
                hits.push(hit);
                if hits.len() == k {
                    break;
                }
            }
        }
        if rows.len() < batch {
            break;
        }
        offset += batch;
        batch = batch.saturating_mul(2).min(i64::MAX as usize / 2);
    }
    Ok(hits)
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
