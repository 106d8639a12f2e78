//! The five artifact tools, created per conversation by [`artifact_tools`].
//!
//! Parameters, types, defaults and permissions follow the built-in tool table exactly; every
//! change makes a new version and puts an `artifact_snapshot` (the artifact's metadata and full
//! content) in the result's metadata so the UI can update live.

use std::time::Duration;

use serde_json::{json, Value};

use super::grep::{Grep, GrepLimits, GrepOptions};
use super::lines::{count_lines, line_of};
use super::matching::{find_unique, MatchKind, DEFAULT_FUZZY_BUDGET};
use super::store::{Artifact, ArtifactSource, ArtifactStore, ModifyError, NewArtifact, StoreError};
use crate::tools::{
    ParamSpec, ParamType, Params, Permission, Tool, ToolContext, ToolRef, ToolResult, ToolSource,
    ToolSpec,
};

/// The content types `create_artifact` accepts.
pub const CONTENT_TYPES: [&str; 11] = [
    "text/markdown",
    "text/plain",
    "text/html",
    "text/csv",
    "application/json",
    "application/yaml",
    "text/x-python",
    "text/javascript",
    "text/x-rust",
    "image/svg+xml",
    "text/x-mermaid",
];

/// read_artifact never returns more than this many characters of content per call.
pub const READ_ARTIFACT_MAX_CHARS: usize = 50_000;

/// Longest artifact id `create_artifact` accepts.
pub const MAX_ID_CHARS: usize = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Create,
    Update,
    Rewrite,
    Read,
    Grep,
    Search,
}

/// One artifact tool bound to a store and a conversation.
struct ArtifactTool {
    kind: Kind,
    spec: ToolSpec,
    store: ArtifactStore,
    conversation_id: String,
    fuzzy_budget: Duration,
}

/// The artifact tools for `conversation_id`, bound to `store`: the five that write and read
/// artifacts, and `search_library` over the user's sources.
pub fn artifact_tools(store: ArtifactStore, conversation_id: &str) -> Vec<ToolRef> {
    [
        Kind::Create,
        Kind::Update,
        Kind::Rewrite,
        Kind::Read,
        Kind::Grep,
        Kind::Search,
    ]
    .into_iter()
    .map(|kind| {
        std::sync::Arc::new(ArtifactTool {
            kind,
            spec: spec(kind),
            store: store.clone(),
            conversation_id: conversation_id.to_string(),
            fuzzy_budget: DEFAULT_FUZZY_BUDGET,
        }) as ToolRef
    })
    .collect()
}

fn spec(kind: Kind) -> ToolSpec {
    let s = |name: &str, d: &str| ParamSpec::new(name, ParamType::String, d);
    let id = || s("id", "The artifact's id");
    let (name, description, params) = match kind {
        Kind::Create => (
            "create_artifact",
            "Create a new artifact (a document you and the user work on). Fails if the id is already used in this conversation.",
            vec![
                s("id", "A new id: letters, digits, '_', '-' or '.', e.g. 'report' or 'plan_v1'"),
                s("content_type", "The content's type")
                    .with_default(json!("text/markdown"))
                    .with_values(CONTENT_TYPES),
                s("title", "A short human title"),
                s("content", "The full initial content"),
            ],
        ),
        Kind::Update => (
            "update_artifact",
            "Replace one occurrence of old_str with new_str in an artifact. old_str must match exactly one place; small differences in quotes, dashes, whitespace or a few characters are tolerated and reported.",
            vec![
                id(),
                s("old_str", "The text to replace, copied from the artifact; include enough to be unique"),
                s("new_str", "The replacement text (may be empty to delete)"),
            ],
        ),
        Kind::Rewrite => (
            "rewrite_artifact",
            "Replace an artifact's whole content (a new version).",
            vec![id(), s("content", "The full new content")],
        ),
        Kind::Read => (
            "read_artifact",
            "Read an artifact by lines. Returns an <artifact_slice> with total_lines, shown_lines and has_more; follow its 'To continue' hint to read on.",
            vec![
                id(),
                ParamSpec::new("version", ParamType::Integer, "A past version to read (default: latest)").optional(),
                ParamSpec::new("offset", ParamType::Integer, "First line to show, 1-based").with_default(json!(1)),
                ParamSpec::new("limit", ParamType::Integer, "How many lines to show (default: as many as fit)").optional(),
                ParamSpec::new("page", ParamType::Integer, "A page of a source to read").optional(),
            ],
        ),
        Kind::Grep => (
            "grep_artifact",
            "Search artifacts with ripgrep semantics: one artifact when id is given, else all of this conversation's. Prints each artifact id, then 'N:line' for matches and 'N-line' for context.",
            vec![
                s("pattern", "A regex (Rust syntax), or a literal with fixed_strings=true"),
                s("id", "Only this artifact").optional(),
                ParamSpec::new("fixed_strings", ParamType::Boolean, "Treat pattern as a literal").with_default(json!(false)),
                ParamSpec::new("ignore_case", ParamType::Boolean, "Case-insensitive").with_default(json!(false)),
                ParamSpec::new("context", ParamType::Integer, "Lines of context around each match").with_default(json!(0)),
                ParamSpec::new("max_count", ParamType::Integer, "Most matching lines per artifact").with_default(json!(20)),
            ],
        ),
        Kind::Search => (
            "search_library",
            "Search the user's own sources (documents they added to the library) for passages. Each passage comes with its citation, e.g. [cite: src_3f2a9c1b7d4e, p. 7]; cite facts with it.",
            vec![
                s("query", "Words to look for"),
                s("scope", "'library' (all sources) or a folder the sources came from").with_default(json!("library")),
                ParamSpec::new("k", ParamType::Integer, "How many passages, 1 to 30").with_default(json!(super::sources::DEFAULT_HITS)),
            ],
        ),
    };
    ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: None,
        params,
    }
}

/// The `artifact_snapshot` metadata entry: the artifact's facts and full content.
pub fn snapshot(artifact: &Artifact, content: &str) -> Value {
    let mut v = serde_json::to_value(artifact).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut v {
        map.insert("content".into(), Value::String(content.to_string()));
    }
    v
}

fn str_param<'a>(params: &'a Params, name: &str) -> &'a str {
    params.get(name).and_then(Value::as_str).unwrap_or("")
}

fn int_param(params: &Params, name: &str) -> Option<i64> {
    params.get(name).and_then(Value::as_i64)
}

fn bool_param(params: &Params, name: &str) -> bool {
    params.get(name).and_then(Value::as_bool).unwrap_or(false)
}

fn store_failure(e: StoreError) -> ToolResult {
    ToolResult::fail(e.to_string())
}

/// Run blocking store work off the async executor when there is a Tokio runtime.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.spawn_blocking(f).await {
            Ok(v) => v,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => panic!("artifact task did not finish: {e}"),
        },
        Err(_) => f(),
    }
}

fn valid_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.chars().count() > MAX_ID_CHARS {
        return Err(format!(
            "id must be 1 to {MAX_ID_CHARS} characters; you sent {} characters",
            id.chars().count()
        ));
    }
    if let Some(bad) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "id '{id}' contains '{bad}'; use only letters, digits, '_', '-' and '.' (e.g. 'report_draft')"
        ));
    }
    Ok(())
}

#[async_trait::async_trait]
impl Tool for ArtifactTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        Permission::Auto
    }

    fn max_result_size_chars(&self) -> Option<usize> {
        match self.kind {
            Kind::Read => None,
            _ => Some(crate::tools::DEFAULT_MAX_RESULT_SIZE_CHARS),
        }
    }

    fn source(&self) -> ToolSource {
        ToolSource::Artifact
    }

    async fn execute(&self, params: Params, _ctx: &ToolContext) -> ToolResult {
        let store = self.store.clone();
        let conv = self.conversation_id.clone();
        let kind = self.kind;
        let budget = self.fuzzy_budget;
        blocking(move || match kind {
            Kind::Create => create(&store, &conv, &params),
            Kind::Update => update(&store, &conv, &params, budget),
            Kind::Rewrite => rewrite(&store, &conv, &params),
            Kind::Read => read(&store, &conv, &params),
            Kind::Grep => grep(&store, &conv, &params),
            Kind::Search => super::sources::search(&store, &params),
        })
        .await
    }
}

fn create(store: &ArtifactStore, conv: &str, p: &Params) -> ToolResult {
    let id = str_param(p, "id");
    if let Err(e) = valid_id(id) {
        return ToolResult::fail(e);
    }
    let content = str_param(p, "content");
    let content_type = p
        .get("content_type")
        .and_then(Value::as_str)
        .unwrap_or("text/markdown");
    match store.create(&NewArtifact {
        conversation_id: conv,
        id,
        title: str_param(p, "title"),
        content_type,
        source: ArtifactSource::Agent,
        content,
    }) {
        Ok(a) => ToolResult::ok(format!(
            "Created artifact '{id}' ({content_type}, {} lines, version {}).",
            count_lines(content),
            a.version
        ))
        .with_meta("artifact_snapshot", snapshot(&a, content)),
        Err(e) => store_failure(e),
    }
}

struct Applied {
    kind: MatchKind,
    similarity: f64,
    first_line: usize,
    last_line: usize,
    replaced: String,
}

fn update(store: &ArtifactStore, conv: &str, p: &Params, budget: Duration) -> ToolResult {
    let id = str_param(p, "id");
    let old = str_param(p, "old_str");
    let new = str_param(p, "new_str");
    // Results reach the model with tag-like `<` escaped (see parser::format_result), so text
    // quoted from a read_artifact result may carry `&lt;`: when old_str is not in the artifact
    // as written but its un-escaped form differs, match and write the un-escaped pair.
    let restored_old = crate::parser::restore(old);
    let restored_new = crate::parser::restore(new);
    let outcome = store.modify(conv, id, |_, text| {
        let (old, new) = if restored_old != old && !text.contains(old) {
            (restored_old.as_str(), restored_new.as_str())
        } else {
            (old, new)
        };
        let found = find_unique(text, old, budget)?;
        let mut out = String::with_capacity(text.len() + new.len());
        out.push_str(&text[..found.start]);
        out.push_str(new);
        out.push_str(&text[found.end..]);
        let first_line = line_of(text, found.start);
        let last_line = line_of(text, found.end.saturating_sub(1).max(found.start));
        Ok::<_, super::matching::MatchError>((
            out,
            Applied {
                kind: found.kind,
                similarity: found.similarity,
                first_line,
                last_line,
                replaced: text[found.start..found.end].to_string(),
            },
        ))
    });
    match outcome {
        Ok((a, content, m)) => {
            let lines = if m.first_line == m.last_line {
                format!("line {}", m.first_line)
            } else {
                format!("lines {}-{}", m.first_line, m.last_line)
            };
            let how = match m.kind {
                MatchKind::Exact => format!("exact match at {lines}"),
                MatchKind::Normalised => format!(
                    "old_str matched only after normalising quotes, dashes and whitespace, at {lines}; the original text there was replaced:\n{}",
                    cut(&m.replaced, 2_000)
                ),
                MatchKind::Fuzzy => format!(
                    "old_str did not match exactly; the closest text (similarity {:.0}%) at {lines} was replaced. It was:\n{}",
                    m.similarity * 100.0,
                    cut(&m.replaced, 2_000)
                ),
            };
            let kind = match m.kind {
                MatchKind::Exact => "exact",
                MatchKind::Normalised => "normalised",
                MatchKind::Fuzzy => "fuzzy",
            };
            ToolResult::ok(format!("Updated '{id}' to version {} ({how}).", a.version))
                .with_meta("match", kind)
                .with_meta("similarity", m.similarity)
                .with_meta("artifact_snapshot", snapshot(&a, &content))
        }
        Err(ModifyError::Rejected(e)) => ToolResult::fail(format!("cannot update '{id}': {e}")),
        Err(ModifyError::Store(e)) => store_failure(e),
    }
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max).collect();
        format!("{head}…")
    }
}

fn rewrite(store: &ArtifactStore, conv: &str, p: &Params) -> ToolResult {
    let id = str_param(p, "id");
    let content = str_param(p, "content");
    match store.rewrite(conv, id, content) {
        Ok(a) => ToolResult::ok(format!(
            "Rewrote '{id}': version {}, {} lines.",
            a.version,
            count_lines(content)
        ))
        .with_meta("artifact_snapshot", snapshot(&a, content)),
        Err(e) => store_failure(e),
    }
}

fn read(store: &ArtifactStore, conv: &str, p: &Params) -> ToolResult {
    let id = str_param(p, "id");
    let offset = int_param(p, "offset").unwrap_or(1);
    if offset < 1 {
        return ToolResult::fail(format!(
            "offset is a 1-based line number; you sent {offset}. Use offset=1 for the start."
        ));
    }
    let limit = int_param(p, "limit");
    if let Some(l) = limit {
        if l < 1 {
            return ToolResult::fail(format!(
                "limit must be at least 1 line; you sent {l}. Leave it out to read as much as fits."
            ));
        }
    }
    let version = int_param(p, "version");
    if let Some(page) = int_param(p, "page") {
        if page < 1 {
            return ToolResult::fail(format!(
                "page is 1-based; you sent {page}. Use page=1 for the first page."
            ));
        }
        return super::sources::read_page(
            store,
            conv,
            id,
            version,
            page,
            limit.map(|l| l as usize),
            READ_ARTIFACT_MAX_CHARS,
        );
    }
    match store.read_lines(
        conv,
        id,
        version,
        offset as usize,
        limit.map(|l| l as usize),
        READ_ARTIFACT_MAX_CHARS,
    ) {
        Ok(page) => super::sources::read_lines_result(store, conv, page, version.is_some()),
        Err(e) => store_failure(e),
    }
}

fn grep(store: &ArtifactStore, conv: &str, p: &Params) -> ToolResult {
    let pattern = str_param(p, "pattern");
    let context = int_param(p, "context").unwrap_or(0);
    if !(0..=50).contains(&context) {
        return ToolResult::fail(format!(
            "context must be between 0 and 50 lines; you sent {context}"
        ));
    }
    let max_count = int_param(p, "max_count").unwrap_or(20);
    if max_count < 1 {
        return ToolResult::fail(format!(
            "max_count must be at least 1 (matching lines per artifact); you sent {max_count}"
        ));
    }
    let id = p
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let mut g = match Grep::new(
        GrepOptions {
            pattern: pattern.to_string(),
            fixed_strings: bool_param(p, "fixed_strings"),
            ignore_case: bool_param(p, "ignore_case"),
            context: context as usize,
            max_count: max_count as usize,
        },
        GrepLimits::default(),
    ) {
        Ok(g) => g,
        Err(e) => return ToolResult::fail(e),
    };
    // A library source is searched where it lives (any conversation may read it).
    let mut scope = conv.to_string();
    if let Some(id) = id {
        match store.get(conv, id) {
            Ok(Some(a)) if a.binary => {
                return store_failure(StoreError::NotText {
                    id: a.id,
                    mime: a.content_type,
                })
            }
            Ok(Some(a)) => scope = a.conversation_id,
            Ok(None) => {
                return store_failure(StoreError::NotFound {
                    conversation_id: conv.into(),
                    id: id.into(),
                })
            }
            Err(e) => return store_failure(e),
        }
    }
    if let Err(e) = g.search_store(store, Some(&scope), id, |a| a.id.clone()) {
        return store_failure(e);
    }
    let outcome = g.finish();
    let mut text = outcome.render(pattern);
    if outcome.matches == 0 {
        if let Some(id) = id {
            text = text.replacen(
                &format!("No matches for '{pattern}'"),
                &format!("No matches for '{pattern}' in '{id}'"),
                1,
            );
        }
    }
    ToolResult::ok(text)
        .with_meta("matches", outcome.matches as u64)
        .with_meta("complete", outcome.incomplete.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_follow_the_built_in_tool_table() {
        let tmp = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(&tmp.path().join("a.db")).unwrap();
        let tools = artifact_tools(store, "c");
        let names: Vec<_> = tools.iter().map(|t| t.spec().name.clone()).collect();
        assert_eq!(
            names,
            crate::tools::registry::RESERVED_ARTIFACT_TOOLS.to_vec()
        );
        for t in &tools {
            assert_eq!(t.permission(), Permission::Auto);
            assert_eq!(t.source(), ToolSource::Artifact);
        }
        let grep = tools[4].spec();
        let summary: Vec<_> = grep
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.kind, p.required, p.default.clone()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("pattern", ParamType::String, true, None),
                ("id", ParamType::String, false, None),
                (
                    "fixed_strings",
                    ParamType::Boolean,
                    false,
                    Some(json!(false))
                ),
                ("ignore_case", ParamType::Boolean, false, Some(json!(false))),
                ("context", ParamType::Integer, false, Some(json!(0))),
                ("max_count", ParamType::Integer, false, Some(json!(20))),
            ]
        );
        assert_eq!(tools[3].max_result_size_chars(), None);
        assert_eq!(tools[0].max_result_size_chars(), Some(50_000));
    }

    #[test]
    fn ids_are_checked() {
        assert!(valid_id("report_v1.2-x").is_ok());
        assert!(valid_id("").is_err());
        assert!(valid_id("a b").unwrap_err().contains("' '"));
    }
}
