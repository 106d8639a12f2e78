//! A tool result's binary attachments (an MCP server's images and audio) go through the gate:
//! each is stored as a binary artifact of the conversation (real SQLite), the model gets one
//! line per attachment and never the bytes, the completion event and the call record carry
//! the artifact ids and MIME types as data, and the text tools refuse the stored artifacts.

use engine::api::direct::call;
use engine::calls::{store, CallRecord, CallStatus, StoredAttachment};
use engine::context::AppContext;
use engine::events::{discard, EngineEvent};
use engine::gate::{self, Asker, Caller, Subject};
use engine::permissions::Answer;
use engine::tools::{Attachment, Params, Permission, Tool, ToolContext, ToolResult, ToolSpec};
use indexmap::IndexMap;
use tokio_util::sync::CancellationToken;

use crate::http_tool::params;

/// A 1×1 PNG (a real image, 67 bytes).
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

/// Returns a text, an image and a sound (or fails with them, when `fail` is set).
struct Snapshot {
    spec: ToolSpec,
    attachments: Vec<Attachment>,
    fail: bool,
}

impl Snapshot {
    fn new(attachments: Vec<Attachment>, fail: bool) -> Self {
        Snapshot {
            spec: ToolSpec {
                name: "camera.snap".into(),
                description: "Take a picture".into(),
                input_schema: None,
                params: vec![],
            },
            attachments,
            fail,
        }
    }
}

#[async_trait::async_trait]
impl Tool for Snapshot {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn permission(&self) -> Permission {
        Permission::Auto
    }

    async fn execute(&self, _params: Params, _ctx: &ToolContext) -> ToolResult {
        let mut r = if self.fail {
            ToolResult::fail("the camera jammed")
        } else {
            ToolResult::ok("Here is the picture.")
        };
        r.attachments = self.attachments.clone();
        r
    }
}

fn image_and_sound() -> Vec<Attachment> {
    vec![
        Attachment {
            mime: "image/png".into(),
            title: "camera.snap: image 1".into(),
            bytes: PNG.to_vec(),
            resource_uri: None,
        },
        Attachment {
            mime: "audio/wav".into(),
            title: "camera.snap: audio 1".into(),
            bytes: vec![7u8; 3000],
            resource_uri: None,
        },
    ]
}

async fn run(
    ctx: &AppContext,
    tool: &Snapshot,
    events: &dyn engine::events::EventSink,
) -> gate::CallOutcome {
    let cancel = CancellationToken::new();
    let caller = Caller::direct(ctx, events, "conv", &cancel, false, None);
    let never = Asker::Now(Box::new(|_: &_| -> Answer { panic!("auto") }));
    gate::run(
        &caller,
        never,
        "call-1".into(),
        Subject::Tool(tool, &IndexMap::new()),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn attachments_become_artifacts_and_one_line_each_for_the_model() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let seen = std::sync::Mutex::new(Vec::new());
    let sink = |e: EngineEvent| seen.lock().unwrap().push(e);
    let tool = Snapshot::new(image_and_sound(), false);
    let out = run(&ctx, &tool, &sink).await;

    assert_eq!(out.status, CallStatus::Succeeded, "{out:?}");
    assert_eq!(out.attachments.len(), 2);
    let [image, sound] = [&out.attachments[0], &out.attachments[1]];
    assert!(image.artifact_id.starts_with("image_"), "{image:?}");
    assert!(sound.artifact_id.starts_with("audio_"), "{sound:?}");
    assert_eq!(
        (image.mime.as_str(), image.size_bytes, image.title.as_str()),
        ("image/png", 67, "camera.snap: image 1")
    );
    assert_eq!((sound.mime.as_str(), sound.size_bytes), ("audio/wav", 3000));
    assert_eq!(
        out.artifact_ids,
        [image.artifact_id.clone(), sound.artifact_id.clone()]
    );
    // The model: the tool's text, then one line per attachment; never the bytes.
    let expected = format!(
        "Here is the picture.\n[image/png, 67 B, stored as artifact {} \"camera.snap: image 1\"]\n[audio/wav, 3 KB, stored as artifact {} \"camera.snap: audio 1\"]",
        image.artifact_id, sound.artifact_id
    );
    assert_eq!(out.result_text(), expected);
    assert!(out.text.contains(&expected), "{}", out.text);
    assert!(out.result.attachments.is_empty(), "the bytes are dropped");
    assert!(!out.text.contains("PNG") && !out.text.contains("iVBOR"));

    // The bytes and MIME types are in the store.
    let store = ctx.artifact_store();
    let (a, bytes) = store.bytes("conv", &image.artifact_id).unwrap();
    assert_eq!((a.content_type.as_str(), a.binary), ("image/png", true));
    assert_eq!(bytes, PNG);
    let (a, bytes) = store.bytes("conv", &sound.artifact_id).unwrap();
    assert_eq!(
        (a.content_type.as_str(), bytes),
        ("audio/wav", vec![7u8; 3000])
    );

    // The completion event carries them as data.
    let events = seen.into_inner().unwrap();
    let carried = events.iter().find_map(|e| match e {
        EngineEvent::ToolComplete {
            attachments,
            artifact_ids,
            ..
        } => Some((attachments.clone(), artifact_ids.clone())),
        _ => None,
    });
    assert_eq!(
        carried,
        Some((out.attachments.clone(), out.artifact_ids.clone()))
    );

    // The call record keeps them (as the run loop stores it) and reads them back.
    let record = CallRecord {
        call_id: out.call_id.clone(),
        provider_call_id: None,
        conversation_id: "conv".into(),
        run_id: None,
        message_id: None,
        position: 0,
        agent: String::new(),
        depth: 0,
        tool: out.tool.clone(),
        params: out.params.clone(),
        status: out.status,
        reason: None,
        result: out.result_text().into(),
        artifact_ids: out.artifact_ids.clone(),
        attachments: out.attachments.clone(),
        citations: Vec::new(),
        handover: None,
        started_at: out.started_at.clone(),
        ended_at: None,
        guided: false,
        view: None,
        view_of: None,
    };
    ctx.with_db(|c| {
        engine::conversations::ensure(c, "conv", "")?;
        store::record(c, &record)
    })
    .unwrap();
    let rows = ctx.with_db(|c| store::list(c, "conv")).unwrap();
    assert_eq!(rows, [record]);
}

#[tokio::test(flavor = "multi_thread")]
async fn text_tools_refuse_a_binary_artifact_and_search_skips_it() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let tool = Snapshot::new(image_and_sound()[..1].to_vec(), false);
    let out = run(&ctx, &tool, &discard()).await;
    let id = out.attachments[0].artifact_id.clone();
    let never = |_: &_| -> Answer { panic!("auto") };
    let expected = format!("artifact '{id}' is an image (image/png), not text: it cannot be read, searched or edited as text");
    for (tool, p) in [
        ("read_artifact", vec![("id", id.as_str())]),
        (
            "grep_artifact",
            vec![("id", id.as_str()), ("pattern", "PNG")],
        ),
        (
            "update_artifact",
            vec![("id", id.as_str()), ("old_str", "PNG"), ("new_str", "JPG")],
        ),
        (
            "rewrite_artifact",
            vec![("id", id.as_str()), ("content", "x")],
        ),
    ] {
        let r = call(&ctx, tool, &params(&p), "conv", never, &discard()).await;
        assert_eq!(r.status, CallStatus::Failed, "{tool}: {r:?}");
        let error = r.result.error.unwrap_or_default();
        assert!(error.contains(&expected), "{tool}: {error}");
    }
    // Untouched: still one version holding the image.
    let store = ctx.artifact_store();
    assert_eq!(store.versions("conv", &id).unwrap().len(), 1);
    assert_eq!(store.bytes("conv", &id).unwrap().1, PNG);
    // A search over the whole conversation finds text artifacts and skips the image.
    let made = call(
        &ctx,
        "create_artifact",
        &params(&[
            ("id", "notes"),
            ("title", "Notes"),
            ("content", "PNG notes"),
        ]),
        "conv",
        never,
        &discard(),
    )
    .await;
    assert!(made.result.success);
    let r = call(
        &ctx,
        "grep_artifact",
        &params(&[("pattern", "PNG")]),
        "conv",
        never,
        &discard(),
    )
    .await;
    assert!(r.result.success, "{r:?}");
    assert!(
        r.result.data.contains("notes") && !r.result.data.contains(&id),
        "{}",
        r.result.data
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_result_keeps_its_attachments_and_an_oversized_one_is_refused_clearly() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let huge = Attachment {
        mime: "image/png".into(),
        title: "huge".into(),
        bytes: vec![0u8; 30 * 1024 * 1024],
        resource_uri: None,
    };
    let mut attachments = image_and_sound()[..1].to_vec();
    attachments.push(huge);
    let tool = Snapshot::new(attachments, true);
    let out = run(&ctx, &tool, &discard()).await;
    assert_eq!(out.status, CallStatus::Failed);
    let stored: Vec<&StoredAttachment> = out.attachments.iter().collect();
    assert_eq!(stored.len(), 1, "the oversized one is not stored");
    let error = out.result_text();
    assert!(
        error.starts_with("the camera jammed\n[image/png, 67 B, stored as artifact image_"),
        "{error}"
    );
    assert!(
        error.ends_with("[image/png, 30.0 MB, not stored: 'huge' (image/png, 30.0 MB) is over the 25.0 MB limit for binary artifacts; it was not stored]"),
        "{error}"
    );
    let page = ctx
        .artifact_store()
        .list(&Default::default(), 10, 0)
        .unwrap();
    assert_eq!(page.total, 1);
}

/// An embedded text resource as an MCP result gives it: stored by its URI.
fn text_resource(uri: &str, mime: &str, text: &str) -> Attachment {
    Attachment {
        mime: mime.into(),
        title: uri.into(),
        bytes: text.as_bytes().to_vec(),
        resource_uri: Some(uri.into()),
    }
}

/// Each embedded text resource becomes a text artifact of its own, titled by its URI, that the
/// artifact tools read; the model gets one line per resource (URI, MIME type, size, artifact
/// id), with the text under it only when it is short (at most `INLINE_RESOURCE_CHARS`).
#[tokio::test(flavor = "multi_thread")]
async fn text_resources_become_text_artifacts_with_one_line_each() {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let short = "name,qty\npears,3\n";
    let long = "line of a long log\n".repeat(300); // 5,700 characters
    assert!(long.len() > gate::INLINE_RESOURCE_CHARS);
    let tool = Snapshot::new(
        vec![
            text_resource("file:///tmp/stock.csv", "text/csv", short),
            text_resource("demo://log", "text/plain", &long),
        ],
        false,
    );
    let seen = std::sync::Mutex::new(Vec::new());
    let sink = |e: EngineEvent| seen.lock().unwrap().push(e);
    let out = run(&ctx, &tool, &sink).await;
    assert_eq!(out.status, CallStatus::Succeeded, "{out:?}");

    let [csv, log] = [&out.attachments[0], &out.attachments[1]];
    assert!(csv.artifact_id.starts_with("resource_"), "{csv:?}");
    assert!(log.artifact_id.starts_with("resource_"), "{log:?}");
    assert_eq!(
        (
            csv.mime.as_str(),
            csv.title.as_str(),
            csv.size_bytes,
            csv.text
        ),
        (
            "text/csv",
            "file:///tmp/stock.csv",
            short.len() as u32,
            true
        )
    );
    assert_eq!((log.mime.as_str(), log.text), ("text/plain", true));
    assert_eq!(
        out.artifact_ids,
        [csv.artifact_id.clone(), log.artifact_id.clone()]
    );

    // The model: one line per resource; the short one's text under its line, the long one's
    // never (it is read through the artifact tools).
    let expected = format!(
        "Here is the picture.\n[resource file:///tmp/stock.csv, text/csv, 17 B, stored as artifact {csv_id}]\n{short}[resource demo://log, text/plain, 6 KB, stored as artifact {log_id}] (too long to show here: read it with read_artifact(id='{log_id}'))",
        csv_id = csv.artifact_id,
        log_id = log.artifact_id,
    );
    assert_eq!(out.result_text(), expected);

    // Stored as text: the artifact tools read it, with the MIME type and the URI as title.
    let store = ctx.artifact_store();
    let (a, text) = store.content("conv", &log.artifact_id, None).unwrap();
    assert_eq!(
        (a.title.as_str(), a.content_type.as_str(), a.binary),
        ("demo://log", "text/plain", false)
    );
    assert_eq!(text, long);
    let never = |_: &_| -> Answer { panic!("auto") };
    let read = call(
        &ctx,
        "read_artifact",
        &params(&[("id", log.artifact_id.as_str())]),
        "conv",
        never,
        &discard(),
    )
    .await;
    assert!(read.result.success, "{read:?}");
    assert!(read.result.data.contains("line of a long log"));

    // The card gets them as data, like images.
    let events = seen.into_inner().unwrap();
    let carried = events.iter().find_map(|e| match e {
        EngineEvent::ToolComplete { attachments, .. } => Some(attachments.clone()),
        _ => None,
    });
    assert_eq!(carried, Some(out.attachments.clone()));
}
