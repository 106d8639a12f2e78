use std::sync::{Arc, Mutex};

use engine::artifacts::{persist_oversized, ArtifactSource, ArtifactStore};
use engine::tools::ToolResult;

use crate::support::env;

fn big(n: usize) -> String {
    (0..n).map(|i| format!("row {i:06}\n")).collect::<String>()
}

#[tokio::test]
async fn an_oversized_success_becomes_an_artifact_with_a_preview() {
    let e = env();
    let data = big(6000); // 66,000 chars
    let out = persist_oversized(
        &e.store,
        "web fetch!",
        Some(50_000),
        ToolResult::ok(data.clone()),
        "c1",
    );
    assert!(out.success);
    let id = out.metadata["persisted_artifact_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        id.starts_with("tool_web_fetch_") && id.len() == "tool_web_fetch_".len() + 12,
        "{id}"
    );
    assert_eq!(out.metadata["original_size_chars"], 66_000);
    assert!(out.data.starts_with(&format!("<artifact_slice id=\"{id}\" version=\"1\" content_type=\"text/plain\" total_lines=\"6000\"")), "{}", &out.data[..200]);
    assert!(out.data.contains(&format!("read_artifact(id='{id}')")));
    let body =
        &out.data[out.data.find(">\n").unwrap() + 2..out.data.find("</artifact_slice>").unwrap()];
    assert_eq!(
        body,
        format!("{}\n", &data[..1000]),
        "a newline closes a preview cut mid-line"
    );
    let (artifact, stored) = e.store.content("c1", &id, None).unwrap();
    assert_eq!(stored, data);
    assert_eq!(artifact.source, ArtifactSource::Tool);
    assert_eq!(artifact.content_type, "text/plain");

    // The model can follow the hint with the conversation's read_artifact.
    let r = e
        .call("read_artifact", &[("id", &id), ("offset", "5999")])
        .await;
    assert!(
        r.data
            .contains(">\nrow 005998\nrow 005999\n</artifact_slice>"),
        "{}",
        r.data
    );
}

#[test]
fn results_within_the_cap_failures_and_unbounded_tools_pass_through() {
    let e = env();
    let at_cap = ToolResult::ok("x".repeat(100));
    assert_eq!(
        persist_oversized(&e.store, "t", Some(100), at_cap.clone(), "c1"),
        at_cap
    );
    let failed = ToolResult {
        success: false,
        data: "y".repeat(500),
        error: Some("boom".into()),
        ..Default::default()
    };
    assert_eq!(
        persist_oversized(&e.store, "t", Some(100), failed.clone(), "c1"),
        failed
    );
    let unbounded = ToolResult::ok("z".repeat(500));
    assert_eq!(
        persist_oversized(&e.store, "read_artifact", None, unbounded.clone(), "c1"),
        unbounded
    );
    // Characters, not bytes: 80,000 bytes of 'é' is 40,000 characters.
    let wide = ToolResult::ok("é".repeat(40_000));
    assert_eq!(
        persist_oversized(&e.store, "t", Some(50_000), wide.clone(), "c1"),
        wide
    );
    assert_eq!(e.store.list(&Default::default(), 10, 0).unwrap().total, 0);
}

#[test]
fn a_store_failure_passes_the_full_result_through() {
    let broken = ArtifactStore::new(Arc::new(Mutex::new(
        rusqlite::Connection::open_in_memory().unwrap(),
    )));
    let result = ToolResult::ok("w".repeat(60_000)).with_meta("kept", true);
    let out = persist_oversized(&broken, "t", Some(50_000), result.clone(), "c1");
    assert_eq!(out, result);
}
