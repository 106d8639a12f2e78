//! Elicitation in the app: server-everything's `trigger-elicitation-request` (and its URL
//! variant) asks through the engine's broker during a call made through the gate; the answer
//! (accepted values, decline, the run's stop) reaches the server, and the events say who asked.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::calls::CallStatus;
use engine::engine::EngineOptions;
use engine::events::EngineEvent;
use engine::gate;
use engine::interrupts::Resolution;
use engine::mcp::elicitation::{
    ElicitationAnswerError, ElicitationOutcome, ElicitationReply, FieldKind,
};
use engine::mcp::ServerStatus;
use engine::parser::ToolCall;
use engine::paths::AppPaths;
use engine::Engine;
use indexmap::IndexMap;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use crate::support::*;

const CONVERSATION: &str = "conv-elicit";

struct Opened {
    engine: Arc<Engine>,
    events: Arc<Mutex<Vec<EngineEvent>>>,
    rx: UnboundedReceiver<EngineEvent>,
    _home: tempfile::TempDir,
}

/// An engine (the app's: its broker answers elicitation) with server-everything as `everything`
/// and tests/mcp/url-complete.mjs as `urls`.
async fn open() -> Opened {
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::resolve(Some(home.path())).unwrap();
    paths.prepare().unwrap();
    let mcp_json = json!({"mcpServers": {
        "everything": {"command": "node", "args": [everything_js(), "stdio"]},
        "urls": {"command": "node", "args": [test_servers_dir().join("url-complete.mjs")]},
    }});
    std::fs::write(paths.config_dir.join("mcp.json"), mcp_json.to_string()).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = {
        let events = events.clone();
        move |e: EngineEvent| {
            if matches!(e, EngineEvent::ElicitationRequest { .. }) {
                let _ = tx.send(e.clone());
            }
            events.lock().unwrap().push(e)
        }
    };
    let engine = Engine::open_with(
        paths,
        Arc::new(sink),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap();
    for server in ["everything", "urls"] {
        let status = engine
            .mcp()
            .wait_settled(server, Duration::from_secs(30))
            .await
            .unwrap();
        assert!(matches!(status, ServerStatus::Ready { .. }), "{status:?}");
    }
    Opened {
        engine: Arc::new(engine),
        events,
        rx,
        _home: home,
    }
}

fn call(name: &str, params: &[(&str, &str)]) -> ToolCall {
    ToolCall::new(
        name,
        params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<IndexMap<_, _>>(),
    )
}

/// Start `c` through the gate as a direct call in [`CONVERSATION`] (permission approved);
/// the outcome arrives on the returned task.
fn start(
    o: &Opened,
    c: ToolCall,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<gate::CallOutcome> {
    start_approved(o.engine.clone(), CONVERSATION, c, cancel)
}

struct Asked {
    request_id: String,
    form: Option<engine::mcp::ElicitationForm>,
    url: Option<String>,
    call_id: Option<String>,
    conversation: Option<String>,
}

async fn next_request(o: &mut Opened) -> Asked {
    next_request_from(o, "everything").await
}

async fn next_request_from(o: &mut Opened, asking: &str) -> Asked {
    let event = tokio::time::timeout(Duration::from_secs(30), o.rx.recv())
        .await
        .expect("the server asked within 30 s")
        .unwrap();
    let EngineEvent::ElicitationRequest {
        request_id,
        server,
        form,
        url,
        origin,
        ..
    } = event
    else {
        unreachable!()
    };
    assert_eq!(server, asking);
    Asked {
        request_id,
        form,
        url,
        call_id: origin.as_ref().map(|o| o.call_id.clone()),
        conversation: origin.map(|o| o.conversation_id),
    }
}

fn resolved(o: &Opened, request_id: &str) -> Vec<(ElicitationOutcome, Resolution)> {
    o.events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            EngineEvent::ElicitationResolved {
                request_id: r,
                outcome,
                resolution,
                ..
            } if r == request_id => Some((*outcome, *resolution)),
            _ => None,
        })
        .collect()
}

/// The form arrives with the schema's fields and defaults and names the call it came from;
/// an invalid answer is refused (nothing sent, the form still waits); the corrected one
/// reaches the server, which echoes the values.
#[tokio::test]
async fn accepted_values_reach_the_server_after_validation() {
    let mut o = open().await;
    let c = call("everything.trigger-elicitation-request", &[]);
    let call_id = c.id.clone();
    let outcome = start(&o, c, CancellationToken::new());
    let asked = next_request(&mut o).await;
    assert_eq!(asked.call_id.as_deref(), Some(call_id.as_str()));
    assert_eq!(asked.conversation.as_deref(), Some(CONVERSATION));
    let form = asked.form.expect("a form request");
    let field = |name: &str| form.fields.iter().find(|f| f.name == name).unwrap();
    assert!(field("name").required);
    assert!(matches!(
        field("integer").kind,
        FieldKind::Number { integer: true, default: Some(d), minimum: Some(_), .. } if d == 42.0
    ));
    let mut content: Map<String, Value> = form.defaults();
    assert_eq!(content["firstLine"], "It was a dark and stormy night.");
    assert_eq!(content["titledSingleSelectEnum"], "hero-1");
    assert_eq!(content["untitledMultipleSelectEnum"], json!(["Guitar"]));

    // Without the required name, and with a bad email: refused, still pending.
    content.insert("email".into(), json!("not an address"));
    let broker = o.engine.elicitations();
    let err = broker
        .answer(
            &asked.request_id,
            ElicitationReply::Accept {
                content: content.clone(),
            },
        )
        .unwrap_err();
    let ElicitationAnswerError::Invalid(errors) = &err else {
        panic!("{err}")
    };
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["name", "email"], "{err}");
    assert_eq!(broker.pending(), std::slice::from_ref(&asked.request_id));

    content.insert("name".into(), json!("Ada Lovelace"));
    content.insert("email".into(), json!("ada@example.com"));
    broker
        .answer(&asked.request_id, ElicitationReply::Accept { content })
        .unwrap();
    let outcome = outcome.await.unwrap();
    assert_eq!(
        outcome.status,
        CallStatus::Succeeded,
        "{:?}",
        outcome.result
    );
    let text = &outcome.result.data;
    assert!(text.contains("- Name: Ada Lovelace"), "{text}");
    assert!(text.contains("- Email: ada@example.com"), "{text}");
    assert!(text.contains("- Favorite Integer: 42"), "{text}");
    assert!(
        text.contains("\"firstLine\": \"It was a dark and stormy night.\""),
        "{text}"
    );
    assert_eq!(
        resolved(&o, &asked.request_id),
        [(ElicitationOutcome::Accepted, Resolution::Answered)]
    );
    assert!(broker.pending().is_empty());
}

/// Declining tells the server so; a URL request shows its page (never opened by the engine)
/// and accepting it sends no values.
#[tokio::test]
async fn decline_and_a_url_request() {
    let mut o = open().await;
    let outcome = start(
        &o,
        call("everything.trigger-elicitation-request", &[]),
        CancellationToken::new(),
    );
    let asked = next_request(&mut o).await;
    o.engine
        .elicitations()
        .answer(&asked.request_id, ElicitationReply::Decline)
        .unwrap();
    let outcome = outcome.await.unwrap();
    assert!(
        outcome.result.data.contains("User declined"),
        "{:?}",
        outcome.result
    );
    assert_eq!(
        resolved(&o, &asked.request_id),
        [(ElicitationOutcome::Declined, Resolution::Answered)]
    );

    let outcome = start(
        &o,
        call(
            "everything.trigger-url-elicitation",
            &[("url", "https://example.com/consent")],
        ),
        CancellationToken::new(),
    );
    let asked = next_request(&mut o).await;
    assert!(asked.form.is_none());
    assert_eq!(asked.url.as_deref(), Some("https://example.com/consent"));
    o.engine
        .elicitations()
        .answer(
            &asked.request_id,
            ElicitationReply::Accept {
                content: Map::new(),
            },
        )
        .unwrap();
    let outcome = outcome.await.unwrap();
    assert!(
        outcome
            .result
            .data
            .contains("completed the URL elicitation"),
        "{:?}",
        outcome.result
    );
}

/// A URL request's prompt closes when the server says its interaction is complete
/// (`notifications/elicitation/complete`, here sent by the server's `finish` tool while the
/// prompt is open): the request is answered as accepted, the UI is told it is resolved, and
/// nothing stays pending.
#[tokio::test]
async fn a_url_requests_completion_closes_its_prompt() {
    let mut o = open().await;
    let sign_up = start(&o, call("urls.sign-up", &[]), CancellationToken::new());
    let asked = next_request_from(&mut o, "urls").await;
    assert_eq!(asked.url.as_deref(), Some("https://example.com/sign-up"));
    assert_eq!(
        o.engine.elicitations().pending(),
        std::slice::from_ref(&asked.request_id)
    );

    let finish = start(&o, call("urls.finish", &[]), CancellationToken::new());
    assert_eq!(finish.await.unwrap().status, CallStatus::Succeeded);
    let outcome = sign_up.await.unwrap();
    assert_eq!(
        outcome.result.data, "the client answered accept",
        "{:?}",
        outcome.result
    );
    assert_eq!(
        resolved(&o, &asked.request_id),
        [(ElicitationOutcome::Accepted, Resolution::Answered)]
    );
    assert!(o.engine.elicitations().pending().is_empty());
}

/// Closing the app's window answers an open form "cancel" even when no run owns the call (a
/// direct call, like the Tools page's test panel): the server hears it at once.
#[tokio::test]
async fn closing_the_window_cancels_an_open_form() {
    let mut o = open().await;
    let outcome = start(
        &o,
        call("everything.trigger-elicitation-request", &[]),
        CancellationToken::new(),
    );
    let asked = next_request(&mut o).await;
    o.engine.window_closed();
    let outcome = tokio::time::timeout(Duration::from_secs(30), outcome)
        .await
        .expect("the server was answered, not left waiting")
        .unwrap();
    assert!(
        outcome.result.data.contains("User cancelled"),
        "{:?}",
        outcome.result
    );
    assert_eq!(
        resolved(&o, &asked.request_id),
        [(ElicitationOutcome::Cancelled, Resolution::ListenerGone)]
    );
    assert!(o.engine.elicitations().pending().is_empty());
}

/// The run's stop while the form is open ends the call and cancels the form: it leaves the
/// broker, the UI is told (cancelled), and a late answer is refused.
#[tokio::test]
async fn the_runs_stop_cancels_an_open_form() {
    let mut o = open().await;
    let cancel = CancellationToken::new();
    let outcome = start(
        &o,
        call("everything.trigger-elicitation-request", &[]),
        cancel.clone(),
    );
    let asked = next_request(&mut o).await;
    cancel.cancel();
    let outcome = outcome.await.unwrap();
    assert_eq!(outcome.status, CallStatus::Stopped);
    assert!(
        eventually(10, || !resolved(&o, &asked.request_id).is_empty()).await,
        "the form was resolved"
    );
    assert_eq!(
        resolved(&o, &asked.request_id),
        [(ElicitationOutcome::Cancelled, Resolution::Cancelled)]
    );
    assert!(o.engine.elicitations().pending().is_empty());
    assert!(matches!(
        o.engine
            .elicitations()
            .answer(&asked.request_id, ElicitationReply::Decline),
        Err(ElicitationAnswerError::Unknown(_))
    ));
}

/// A server that asks with no call of it in flight (here: as soon as its session starts) is
/// declined by the client: no form reaches the user and the broker holds nothing.
#[tokio::test]
async fn a_question_with_no_call_in_flight_is_declined() {
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::resolve(Some(home.path())).unwrap();
    paths.prepare().unwrap();
    let reply_file = home.path().join("reply.json");
    let mcp_json = json!({"mcpServers": {
        "unprompted": {"command": "node", "args": [test_servers_dir().join("ask-unprompted.mjs"), &reply_file]},
    }});
    std::fs::write(paths.config_dir.join("mcp.json"), mcp_json.to_string()).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |e: EngineEvent| events.lock().unwrap().push(e)
    };
    let engine = Engine::open_with(
        paths,
        Arc::new(sink),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap();
    let status = engine
        .mcp()
        .wait_settled("unprompted", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(matches!(status, ServerStatus::Ready { .. }), "{status:?}");

    assert!(
        eventually(30, || reply_file.is_file()).await,
        "the server got no answer: the question waits for the user ({} pending)",
        engine.elicitations().pending().len()
    );
    let reply: Value = serde_json::from_slice(&std::fs::read(&reply_file).unwrap()).unwrap();
    assert_eq!(reply["action"], "decline", "{reply}");
    assert!(reply.get("content").is_none(), "{reply}");
    let asked: Vec<_> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| {
            matches!(
                e,
                EngineEvent::ElicitationRequest { .. } | EngineEvent::ElicitationResolved { .. }
            )
        })
        .cloned()
        .collect();
    assert!(asked.is_empty(), "the user was asked: {asked:?}");
    assert!(engine.elicitations().pending().is_empty());
}
