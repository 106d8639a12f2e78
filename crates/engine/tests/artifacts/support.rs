//! Shared helpers: a store in a temp dir and calls through the real tool pipeline.

use engine::artifacts::{artifact_tools, ArtifactStore};
use engine::tools::{pipeline, ToolContext, ToolRef, ToolResult};
use indexmap::IndexMap;

/// A store in a fresh temp dir with the tools of conversation `c1`.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub store: ArtifactStore,
    pub tools: Vec<ToolRef>,
}

pub fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let store = ArtifactStore::open(&dir.path().join("app.db")).unwrap();
    let tools = artifact_tools(store.clone(), "c1");
    Env { dir, store, tools }
}

impl Env {
    /// Call tool `name` with string params, as the parser hands them over.
    pub async fn call(&self, name: &str, params: &[(&str, &str)]) -> ToolResult {
        let tool = self
            .tools
            .iter()
            .find(|t| t.spec().name == name)
            .unwrap_or_else(|| panic!("no tool {name}"));
        let raw: IndexMap<String, String> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        pipeline::run(tool.as_ref(), &raw, &ToolContext::default()).await
    }

    /// Create an artifact through the tool, asserting success.
    pub async fn create(&self, id: &str, content: &str) {
        let r = self
            .call(
                "create_artifact",
                &[("id", id), ("title", id), ("content", content)],
            )
            .await;
        assert!(r.success, "{r:?}");
    }

    /// The latest content.
    pub fn content(&self, id: &str) -> String {
        self.store.content("c1", id, None).unwrap().1
    }
}

/// The error text of a failed result.
pub fn err(r: &ToolResult) -> &str {
    assert!(!r.success, "expected a failure, got {r:?}");
    r.error.as_deref().unwrap_or("")
}
