use engine::api::direct::call;
use engine::context::AppContext;
use engine::events::discard;
use engine::permissions::Answer;

use crate::http_tool::params;
use crate::servers;

#[tokio::test(flavor = "multi_thread")]
async fn artifact_tools_are_bound_to_the_conversation() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let never = |_: &_| -> Answer { panic!("artifact tools are auto") };
    let created = call(
        &ctx,
        "create_artifact",
        &params(&[
            ("id", "notes"),
            ("title", "Notes"),
            ("content", "alpha\nbeta\n"),
        ]),
        "conv-a",
        never,
        &discard(),
    )
    .await;
    assert!(created.result.success, "{:?}", created.result);
    let read = call(
        &ctx,
        "read_artifact",
        &params(&[("id", "notes")]),
        "conv-a",
        never,
        &discard(),
    )
    .await;
    assert!(read.formatted.contains("alpha\nbeta"), "{}", read.formatted);
    let other = call(
        &ctx,
        "read_artifact",
        &params(&[("id", "notes")]),
        "conv-b",
        never,
        &discard(),
    )
    .await;
    assert!(
        !other.result.success,
        "another conversation does not see it"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn markup_read_back_from_a_result_can_be_quoted_as_old_str() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let never = |_: &_| -> Answer { panic!("auto") };
    let content = "<p>Fish &amp; chips</p>\n<b>bold</b> & more";
    let created = call(
        &ctx,
        "create_artifact",
        &params(&[("id", "page"), ("title", "Page"), ("content", content)]),
        "c",
        never,
        &discard(),
    )
    .await;
    assert!(created.result.success);
    // What the model sees of line 2 is escaped inside the <tool_result> frame …
    let read = call(
        &ctx,
        "read_artifact",
        &params(&[("id", "page"), ("offset", "2")]),
        "c",
        never,
        &discard(),
    )
    .await;
    let quoted = "&lt;b>bold&lt;/b> & more";
    assert!(read.formatted.contains(quoted), "{}", read.formatted);
    // … and quoting it back still edits the right text, writing real markup.
    let updated = call(
        &ctx,
        "update_artifact",
        &params(&[
            ("id", "page"),
            ("old_str", quoted),
            ("new_str", "&lt;i>italic&lt;/i>"),
        ]),
        "c",
        never,
        &discard(),
    )
    .await;
    assert!(updated.result.success, "{:?}", updated.result);
    let (_, text) = ctx.artifact_store().content("c", "page", None).unwrap();
    assert_eq!(text, "<p>Fish &amp; chips</p>\n<i>italic</i>");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_result_is_stored_as_an_artifact_and_previewed() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let server = servers::json_api().await;
    for (name, path) in [("long_answer", "/long"), ("failing", "/fail")] {
        std::fs::write(
            ctx.paths().config_dir.join(format!("tools/{name}.md")),
            format!(
                "---\nname: {name}\npermission: auto\nendpoint: {}{path}\n---\n",
                server.base
            ),
        )
        .unwrap();
    }
    ctx.reload_config();
    let never = |_: &_| -> Answer { panic!("auto") };
    let out = call(
        &ctx,
        "long_answer",
        &params(&[]),
        "conv-1",
        never,
        &discard(),
    )
    .await;
    assert!(out.result.success);
    let id = out.result.metadata["persisted_artifact_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        id.starts_with("tool_long_answer_") && id.len() == "tool_long_answer_".len() + 12,
        "{id}"
    );
    assert_eq!(out.result.metadata["original_size_chars"], 3000 * 28);
    assert!(
        out.result.data.contains("<artifact_slice"),
        "{}",
        out.result.data
    );
    assert!(
        out.result
            .data
            .contains(&format!("read_artifact(id='{id}')")),
        "{}",
        out.result.data
    );
    assert!(
        out.result.data.len() < 3000,
        "the model gets a preview, not 84,000 characters"
    );

    // The full text is in the store, readable through read_artifact in the same conversation.
    let read = call(
        &ctx,
        "read_artifact",
        &params(&[("id", &id), ("offset", "2999"), ("limit", "2")]),
        "conv-1",
        never,
        &discard(),
    )
    .await;
    assert!(
        read.result.data.contains("line 02999 of a long answer"),
        "{}",
        read.result.data
    );

    // Failed results are never stored.
    let failed = call(&ctx, "failing", &params(&[]), "conv-1", never, &discard()).await;
    assert!(!failed.result.success);
    assert!(!failed.result.metadata.contains_key("persisted_artifact_id"));
}

/// `tools call` goes through the run's gate: a stop that arrives while the user is answering
/// the prompt means the approved tool does not run (the direct path once ran it anyway).
#[tokio::test(flavor = "multi_thread")]
async fn a_direct_call_stopped_at_the_prompt_is_not_run() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let server = servers::json_api().await;
    std::fs::write(
        ctx.paths().config_dir.join("tools/asker.md"),
        format!(
            "---\nname: asker\npermission: confirm\nendpoint: {}/long\n---\n",
            server.base
        ),
    )
    .unwrap();
    ctx.reload_config();
    let cancel = tokio_util::sync::CancellationToken::new();
    let stop_then_approve = |_: &_| {
        cancel.cancel();
        Answer::Approve
    };
    let out = engine::api::direct::call_cancellable(
        &ctx,
        "asker",
        &params(&[]),
        "conv-1",
        stop_then_approve,
        &cancel,
        &discard(),
    )
    .await;
    assert_eq!(out.status, engine::calls::CallStatus::NotRun, "{out:?}");
    assert!(!out.result.success);
    assert!(server.requests().is_empty(), "the tool must not run");
}

/// A direct call that changes an artifact announces its snapshot, like a run's call does.
#[tokio::test(flavor = "multi_thread")]
async fn a_direct_call_emits_the_artifact_snapshot() {
    use engine::events::EngineEvent;
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let seen = std::sync::Mutex::new(Vec::new());
    let sink = |e: EngineEvent| seen.lock().unwrap().push(e);
    let out = call(
        &ctx,
        "create_artifact",
        &params(&[("id", "notes"), ("title", "Notes"), ("content", "alpha")]),
        "conv-a",
        |_: &_| -> Answer { panic!("auto") },
        &sink,
    )
    .await;
    assert_eq!(out.status, engine::calls::CallStatus::Succeeded);
    let events = seen.into_inner().unwrap();
    let complete = events.iter().position(|e| {
        matches!(e, EngineEvent::ToolComplete { call_id, artifact_ids, .. }
            if *call_id == out.call_id && artifact_ids == &["notes".to_string()])
    });
    let snapshot = events.iter().position(|e| {
        matches!(e, EngineEvent::ArtifactSnapshot { snapshot, .. } if snapshot["id"] == "notes")
    });
    assert!(
        matches!((complete, snapshot), (Some(c), Some(s)) if c < s),
        "{events:#?}"
    );
}
