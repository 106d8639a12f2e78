//! The artifact tools' side of the user's sources: `search_library` (passages with citation
//! handles) and `read_artifact` by page. Every passage a call returns is kept in its result's
//! `citations` metadata ([`CitationHandle`]s), which the gate stores with the call, so the
//! answer's citations can be checked against what the agent really read.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::slice::{render_page, render_source_page, PageAt};
use super::store::{Artifact, ArtifactSource, ArtifactStore, LinePage};
use crate::tools::{Params, ToolResult};
use artifactflow_store::citations::CitationHandle;
use artifactflow_store::sources::search::Match;
use artifactflow_store::sources::{SearchHit, SearchScope, SOURCE_ID_PREFIX};

/// Passages `search_library` returns by default.
pub const DEFAULT_HITS: i64 = 8;
/// The most it returns.
pub const MAX_HITS: i64 = 30;
/// The most pages one read names as retrieved.
const MAX_PAGES_PER_READ: usize = 64;

/// The metadata key holding a result's handles.
pub const CITATIONS_KEY: &str = "citations";

/// Is `artifact` one of the user's library sources?
fn is_source(artifact: &Artifact) -> bool {
    artifact.conversation_id.is_empty()
        && artifact.source == ArtifactSource::User
        && artifact.id.starts_with(SOURCE_ID_PREFIX)
}

fn handles_meta(handles: &[CitationHandle]) -> Value {
    serde_json::to_value(handles).unwrap_or_else(|_| json!([]))
}

/// `scope` as the model wrote it: empty or `library` for the whole library, else a folder
/// (`~` is the home folder; a folder that exists is taken as the system spells it).
fn scope_of(scope: &str) -> SearchScope {
    let scope = scope.trim();
    if scope.is_empty() || scope.eq_ignore_ascii_case("library") || scope == "all" {
        return SearchScope::Library;
    }
    let mut folder = PathBuf::from(scope);
    if let Some(rest) = scope.strip_prefix("~/").or(scope.strip_prefix("~\\")) {
        if let Some(home) = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")) {
            folder = PathBuf::from(home).join(rest);
        }
    }
    let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
    SearchScope::Folder(folder.to_string_lossy().into_owned())
}

/// `search_library`: the passages that best match `query`, each with its citation.
pub(super) fn search(store: &ArtifactStore, p: &Params) -> ToolResult {
    let query = p.get("query").and_then(Value::as_str).unwrap_or("").trim();
    if query.is_empty() {
        return ToolResult::fail(
            "query is empty: give the words to look for, e.g. query='quarterly revenue 2023'",
        );
    }
    let k = p.get("k").and_then(Value::as_i64).unwrap_or(DEFAULT_HITS);
    if !(1..=MAX_HITS).contains(&k) {
        return ToolResult::fail(format!(
            "k is how many passages to return, 1 to {MAX_HITS}; you sent {k}"
        ));
    }
    let scope = scope_of(p.get("scope").and_then(Value::as_str).unwrap_or(""));
    let where_ = match &scope {
        SearchScope::Library => "the library".to_string(),
        SearchScope::Folder(f) => format!("the sources from {f}"),
    };
    let found = store
        .search_sources(query, Match::Words, &scope, k as usize)
        .and_then(|hits| {
            if hits.is_empty() {
                Ok((
                    store.search_sources(query, Match::Any, &scope, k as usize)?,
                    false,
                ))
            } else {
                Ok((hits, true))
            }
        });
    let (hits, every_word) = match found {
        Ok(found) => found,
        Err(e) => return ToolResult::fail(e.to_string()),
    };
    if hits.is_empty() {
        return ToolResult::ok(format!(
            "No passage in {where_} has any of the words '{query}'. Try other words (a name, a \
             number, a term the document would use), or a wider scope."
        ))
        .with_meta("hits", 0u64)
        .with_meta(CITATIONS_KEY, json!([]));
    }
    let handles: Vec<CitationHandle> = hits.iter().map(handle).collect();
    let mut out = format!(
        "{} passage{} in {where_} for '{query}'{}. Cite each fact you use with its handle, \
         exactly as written, e.g. {}.\n",
        hits.len(),
        if hits.len() == 1 { "" } else { "s" },
        if every_word {
            ""
        } else {
            " (none has every word; these have some)"
        },
        handles[0].marker()
    );
    for (hit, h) in hits.iter().zip(&handles) {
        out.push_str(&format!(
            "\n{} {} (lines {}-{})\n{}\n",
            h.marker(),
            one_line(&hit.title),
            hit.line_first,
            hit.line_last,
            hit.passage.trim_end()
        ));
    }
    let first = &handles[0];
    out.push_str(&match first.page {
        Some(page) => format!(
            "\nRead around a passage with read_artifact(id='{}', page={page}).",
            first.artifact_id
        ),
        None => format!(
            "\nRead around a passage with read_artifact(id='{}', offset={}).",
            first.artifact_id, first.line_first
        ),
    });
    ToolResult::ok(out)
        .with_meta("hits", hits.len() as u64)
        .with_meta(CITATIONS_KEY, handles_meta(&handles))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn handle(hit: &SearchHit) -> CitationHandle {
    CitationHandle {
        artifact_id: hit.id.clone(),
        title: hit.title.clone(),
        page: hit.page,
        line_first: hit.line_first,
        line_last: hit.line_last,
    }
}

/// `read_artifact` with `page`: that page's lines (at most `limit` lines and `max_chars`
/// characters), of a paged source.
pub(super) fn read_page(
    store: &ArtifactStore,
    conv: &str,
    id: &str,
    version: Option<i64>,
    page: i64,
    limit: Option<usize>,
    max_chars: usize,
) -> ToolResult {
    let (artifact, pages, span) = match store.source_page(conv, id, version, page) {
        Ok(found) => found,
        Err(e) => return ToolResult::fail(e.to_string()),
    };
    if pages == 0 {
        return ToolResult::fail(format!(
            "'{id}' has no pages; read it by lines with offset (1-based), e.g. read_artifact(id='{id}', offset=1)"
        ));
    }
    let Some(span) = span else {
        return ToolResult::fail(format!(
            "'{id}' has pages 1 to {pages}; you asked for page {page}"
        ));
    };
    if span.line_count <= 0 {
        return ToolResult::ok(format!(
            "Page {page} of '{id}' has no text (a scanned page or an image).{}",
            if page < pages {
                format!(" Next page: read_artifact(id='{id}', page={})", page + 1)
            } else {
                String::new()
            }
        ))
        .with_meta(CITATIONS_KEY, json!([]));
    }
    let limit = limit.map_or(span.line_count as usize, |l| {
        l.min(span.line_count as usize)
    });
    let read = store.read_lines(
        conv,
        id,
        Some(artifact.version),
        span.first_line as usize,
        Some(limit),
        max_chars,
    );
    match read {
        Ok(lines) => {
            let at = PageAt {
                page,
                pages,
                last_line: span.last_line().max(0) as usize,
            };
            let handles = vec![CitationHandle {
                artifact_id: artifact.id.clone(),
                title: artifact.title.clone(),
                page: Some(page),
                line_first: span.first_line,
                line_last: shown_last(&lines).unwrap_or(span.first_line),
            }];
            ToolResult::ok(render_source_page(&lines, version.is_some(), at))
                .with_meta("total_lines", lines.total_lines as u64)
                .with_meta("has_more", lines.has_more())
                .with_meta("page", page)
                .with_meta(CITATIONS_KEY, handles_meta(&handles))
        }
        Err(e) => ToolResult::fail(e.to_string()),
    }
}

fn shown_last(lines: &LinePage) -> Option<i64> {
    (lines.lines_shown > 0).then(|| (lines.first_line + lines.lines_shown - 1) as i64)
}

/// `read_artifact` by lines: the page as usual; for a source, the passages shown are kept as
/// handles (one per page they cross, or the lines of a source without pages).
pub(super) fn read_lines_result(
    store: &ArtifactStore,
    conv: &str,
    lines: LinePage,
    explicit_version: bool,
) -> ToolResult {
    let result = ToolResult::ok(render_page(&lines, explicit_version))
        .with_meta("total_lines", lines.total_lines as u64)
        .with_meta("has_more", lines.has_more());
    let a = &lines.artifact;
    let Some(last) = shown_last(&lines).filter(|_| is_source(a)) else {
        return result;
    };
    let first = lines.first_line as i64;
    let pages =
        match store.source_pages_in(conv, &a.id, a.version, (first, last), MAX_PAGES_PER_READ) {
            Ok(pages) => pages,
            Err(e) => {
                tracing::warn!("cannot read the pages of {}: {e}", a.id);
                return result;
            }
        };
    let handles: Vec<CitationHandle> = if pages.is_empty() {
        vec![CitationHandle {
            artifact_id: a.id.clone(),
            title: a.title.clone(),
            page: None,
            line_first: first,
            line_last: last,
        }]
    } else {
        pages
            .iter()
            .map(|s| CitationHandle {
                artifact_id: a.id.clone(),
                title: a.title.clone(),
                page: Some(s.page),
                line_first: s.first_line.max(first),
                line_last: s.last_line().min(last),
            })
            .collect()
    };
    result.with_meta(CITATIONS_KEY, handles_meta(&handles))
}
