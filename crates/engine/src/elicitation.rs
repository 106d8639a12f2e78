//! Elicitation in the app: a server's question becomes a form the user fills in.
//!
//! [`crate::mcp::elicitation`]: [`ElicitationForm::parse`] reads the requested schema (a flat object of primitive
//! properties, per the MCP spec: strings with lengths and formats, numbers and integers with
//! bounds, booleans, single-select enums untitled, titled (`oneOf`) or legacy (`enumNames`),
//! multi-select arrays of enums) into typed fields with their defaults, which the UI renders.
//! [`ElicitationForm::validate`] checks an answer before it goes back to the server: an
//! invalid one is an error for the UI and is not sent.
//!
//! [`ElicitationBroker`] is the app's [`ElicitationHandler`], modelled on the permission
//! broker: it announces [`EngineEvent::ElicitationRequest`] (with the conversation, call and
//! agent chain it came from when known) and waits for [`ElicitationBroker::answer`]. It only
//! sees questions asked during a call of the server: the client declines the others. A
//! timeout, the call ending (the run's stop drops the call), the server withdrawing its
//! request or the listener going away cancel it; every request ends with one
//! [`EngineEvent::ElicitationResolved`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Map;
use tokio::sync::oneshot;

use crate::context::AppContext;
use crate::events::{EngineEvent, EventSink};
use crate::ids::new_id;
use crate::interrupts::Resolution;
use crate::mcp::client::{ElicitationAnswer, ElicitationHandler, ElicitationRequest};

pub use crate::mcp::elicitation::{
    ChoiceOption, ElicitationAnswerError, ElicitationField, ElicitationForm, ElicitationOutcome,
    ElicitationReply, FieldError, FieldKind, TextFormat,
};

/// How long a form waits for the user before it is cancelled.
pub const DEFAULT_ELICITATION_TIMEOUT: Duration = Duration::from_secs(10 * 60);

struct Waiting {
    /// `None` for a URL request.
    form: Option<ElicitationForm>,
    conversation: Option<String>,
    /// The server asking, and a URL request's id (for its completion notification).
    server: String,
    elicitation_id: Option<String>,
    tx: oneshot::Sender<ElicitationAnswer>,
}

/// Pending elicitation requests of the app, answered through [`ElicitationBroker::answer`].
pub struct ElicitationBroker {
    pending: Mutex<HashMap<String, Waiting>>,
    events: Arc<dyn EventSink>,
    timeout: Duration,
    /// For the title of the conversation that asks.
    ctx: Option<Weak<AppContext>>,
}

impl ElicitationBroker {
    /// A broker announcing to `events`, waiting at most `timeout` per request; `ctx` names the
    /// conversation a request comes from.
    pub fn new(
        events: Arc<dyn EventSink>,
        timeout: Duration,
        ctx: Option<Weak<AppContext>>,
    ) -> Self {
        ElicitationBroker {
            pending: Mutex::new(HashMap::new()),
            events,
            timeout,
            ctx,
        }
    }

    /// Deliver the user's answer. An accepted form is checked first: invalid values are an
    /// error and the request keeps waiting for a corrected answer.
    pub fn answer(
        &self,
        request_id: &str,
        reply: ElicitationReply,
    ) -> Result<(), ElicitationAnswerError> {
        let mut pending = self.lock();
        let waiting = pending
            .get(request_id)
            .ok_or_else(|| ElicitationAnswerError::Unknown(request_id.to_string()))?;
        let answer = match reply {
            ElicitationReply::Accept { content } => match &waiting.form {
                Some(form) => ElicitationAnswer::Accept(
                    form.validate(&content)
                        .map_err(ElicitationAnswerError::Invalid)?,
                ),
                None => ElicitationAnswer::Accept(Map::new()),
            },
            ElicitationReply::Decline => ElicitationAnswer::Decline,
            ElicitationReply::Cancel => ElicitationAnswer::Cancel,
        };
        let waiting = pending.remove(request_id).expect("checked above");
        waiting
            .tx
            .send(answer)
            .map_err(|_| ElicitationAnswerError::Unknown(request_id.to_string()))
    }

    /// Cancel every pending request (of `conversation`, or all when `None`): the listener is
    /// gone (a window closed).
    pub fn cancel_all(&self, conversation: Option<&str>) {
        self.lock()
            .retain(|_, w| conversation.is_some_and(|c| w.conversation.as_deref() != Some(c)));
    }

    /// The URL request `elicitation_id` of `server` was completed out of band (the server's
    /// `notifications/elicitation/complete`): if its prompt is still open it is answered as
    /// accepted (the user did what the page asked) and closed, through the usual resolved
    /// event. Returns whether one was open.
    pub fn complete(&self, server: &str, elicitation_id: &str) -> bool {
        let mut pending = self.lock();
        let id = pending.iter().find_map(|(id, w)| {
            (w.server == server && w.elicitation_id.as_deref() == Some(elicitation_id))
                .then(|| id.clone())
        });
        let Some(waiting) = id.and_then(|id| pending.remove(&id)) else {
            return false;
        };
        waiting
            .tx
            .send(ElicitationAnswer::Accept(Map::new()))
            .is_ok()
    }

    /// Ids of the pending requests.
    pub fn pending(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn conversation_title(&self, conversation: &str) -> String {
        self.ctx
            .as_ref()
            .and_then(Weak::upgrade)
            .and_then(|ctx| {
                ctx.with_db(|c| crate::conversations::title(c, conversation))
                    .ok()
                    .flatten()
            })
            .unwrap_or_default()
    }
}

/// Removes a request and announces how it ended, also when the wait is dropped (the server's
/// session ended while the form was open).
struct Announced<'a> {
    broker: &'a ElicitationBroker,
    request_id: String,
    conversation: Option<String>,
    ended: Option<(ElicitationOutcome, Resolution)>,
}

impl Drop for Announced<'_> {
    fn drop(&mut self) {
        self.broker.lock().remove(&self.request_id);
        let (outcome, resolution) = self
            .ended
            .unwrap_or((ElicitationOutcome::Cancelled, Resolution::ListenerGone));
        self.broker.events.emit(EngineEvent::ElicitationResolved {
            conversation_id: self.conversation.clone(),
            request_id: self.request_id.clone(),
            outcome,
            resolution,
        });
    }
}

#[async_trait::async_trait]
impl ElicitationHandler for ElicitationBroker {
    fn completed(&self, server: &str, elicitation_id: &str) {
        if !self.complete(server, elicitation_id) {
            tracing::debug!(
                server,
                elicitation_id,
                "completion of a URL request no longer open"
            );
        }
    }

    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        let form = match &request.schema {
            Some(schema) => match ElicitationForm::parse(schema) {
                Ok(form) => Some(form),
                Err(why) => {
                    tracing::warn!(server = %request.server, "declined an elicitation: {why}");
                    return ElicitationAnswer::Decline;
                }
            },
            None if request.url.is_some() => None,
            None => return ElicitationAnswer::Decline,
        };
        let request_id = new_id("elicit");
        let conversation = request.origin.as_ref().map(|o| o.conversation_id.clone());
        let (tx, rx) = oneshot::channel();
        self.lock().insert(
            request_id.clone(),
            Waiting {
                form: form.clone(),
                conversation: conversation.clone(),
                server: request.server.clone(),
                elicitation_id: request.elicitation_id.clone(),
                tx,
            },
        );
        let mut announced = Announced {
            broker: self,
            request_id: request_id.clone(),
            conversation,
            ended: None,
        };
        let origin = request.origin.clone().map(|mut o| {
            if o.conversation_title.is_empty() {
                o.conversation_title = self.conversation_title(&o.conversation_id);
            }
            o
        });
        self.events.emit(EngineEvent::ElicitationRequest {
            request_id,
            server: request.server.clone(),
            message: request.message.clone(),
            form,
            url: request.url.clone(),
            origin,
            deadline_ms: deadline_ms(self.timeout),
        });
        let (answer, resolution) = tokio::select! {
            biased;
            _ = request.cancel.cancelled() => (ElicitationAnswer::Cancel, Resolution::Cancelled),
            answer = rx => match answer {
                Ok(answer) => (answer, Resolution::Answered),
                Err(_) => (ElicitationAnswer::Cancel, Resolution::ListenerGone),
            },
            _ = tokio::time::sleep(self.timeout) => (ElicitationAnswer::Cancel, Resolution::TimedOut),
        };
        let outcome = match answer {
            ElicitationAnswer::Accept(_) => ElicitationOutcome::Accepted,
            ElicitationAnswer::Decline => ElicitationOutcome::Declined,
            ElicitationAnswer::Cancel => ElicitationOutcome::Cancelled,
        };
        announced.ended = Some((outcome, resolution));
        answer
    }
}

/// Milliseconds since the Unix epoch, `after` from now.
fn deadline_ms(after: Duration) -> u64 {
    (SystemTime::now() + after)
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use tokio_util::sync::CancellationToken;

    /// The kinds of the spec, as server-everything sends them.
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
                "line": {"type": "string", "default": "It was a dark night."},
                "email": {"type": "string", "format": "email"},
                "site": {"type": "string", "format": "uri"},
                "born": {"type": "string", "format": "date"},
                "at": {"type": "string", "format": "date-time"},
                "count": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
                "ratio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
                "agree": {"type": "boolean", "default": false},
                "friend": {"type": "string", "enum": ["Monica", "Joey"], "default": "Joey"},
                "hero": {"type": "string", "oneOf": [
                    {"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Wonder Woman"}
                ], "default": "h2"},
                "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]},
                "tools": {"type": "array", "minItems": 1, "maxItems": 2,
                    "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]},
                    "default": ["Piano"]},
                "fish": {"type": "array", "items": {"anyOf": [
                    {"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}
                ]}},
                "bad_default": {"type": "string", "enum": ["a"], "default": "zzz"},
            },
            "required": ["name"]
        })
    }

    fn form() -> ElicitationForm {
        ElicitationForm::parse(&schema()).unwrap()
    }

    fn kind(form: &ElicitationForm, name: &str) -> FieldKind {
        form.fields
            .iter()
            .find(|f| f.name == name)
            .unwrap()
            .kind
            .clone()
    }

    fn titles(kind: FieldKind) -> Vec<String> {
        match kind {
            FieldKind::Choice { options, .. } | FieldKind::MultiChoice { options, .. } => {
                options.into_iter().map(|o| o.title).collect()
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_schema_becomes_typed_fields_in_order() {
        let form = form();
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names[..3], ["name", "line", "email"]);
        assert_eq!(form.fields[0].title, "Name");
        assert_eq!(form.fields[1].title, "line", "no title: the name");
        assert!(form.fields[0].required && !form.fields[1].required);
        assert_eq!(
            kind(&form, "name"),
            FieldKind::Text {
                min_length: Some(2),
                max_length: Some(5),
                format: None,
                default: None
            }
        );
        assert!(matches!(
            kind(&form, "at"),
            FieldKind::Text {
                format: Some(TextFormat::DateTime),
                ..
            }
        ));
        assert_eq!(titles(kind(&form, "hero")), ["Superman", "Wonder Woman"]);
        assert_eq!(titles(kind(&form, "pet")), ["Cats", "Dogs"]);
        assert_eq!(titles(kind(&form, "friend")), ["Monica", "Joey"]);
        assert_eq!(titles(kind(&form, "fish")), ["Tuna", "Trout"]);
        let err =
            ElicitationForm::parse(&json!({"properties": {"o": {"type": "object"}}})).unwrap_err();
        assert!(err.contains("`o`") && err.contains("`object`"), "{err}");
    }

    #[test]
    fn defaults_are_applied_and_ones_that_do_not_fit_are_dropped() {
        let defaults = form().defaults();
        assert_eq!(
            Value::Object(defaults),
            json!({
                "line": "It was a dark night.",
                "count": 42,
                "ratio": 0.5,
                "agree": false,
                "friend": "Joey",
                "hero": "h2",
                "tools": ["Piano"],
            })
        );
        // The integer default goes out as an integer, not 42.0.
        assert!(form().defaults()["count"].is_i64());
    }

    #[test]
    fn validation_accepts_a_good_answer_and_names_every_bad_field() {
        let form = form();
        let mut good = form.defaults();
        good.insert("name".into(), json!("Ada"));
        good.insert("email".into(), json!("ada@example.com"));
        good.insert("site".into(), json!("https://ada.example"));
        good.insert("born".into(), json!("1815-12-10"));
        good.insert("at".into(), json!("2026-01-02T03:04:05Z"));
        good.insert("count".into(), json!(7.0));
        good.insert("fish".into(), json!(["f2"]));
        let sent = form.validate(&good).unwrap();
        assert!(
            sent["count"].is_i64(),
            "whole floats of integer fields as integers"
        );

        let bad = json!({
            "email": "ada at example",
            "site": "not a uri",
            "born": "10/12/1815",
            "at": "yesterday",
            "count": 4.5,
            "ratio": 2,
            "agree": "yes",
            "friend": "Ross",
            "tools": ["Piano", "Guitar", "Drums"],
            "fish": [],
            "extra": 1,
        });
        let errors = form.validate(bad.as_object().unwrap()).unwrap_err();
        let by_field: Vec<(&str, &str)> = errors
            .iter()
            .map(|e| (e.field.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(
            by_field,
            [
                ("extra", "the form has no such field"),
                ("name", "required"),
                ("email", "must be an email address (name@example.com)"),
                ("site", "must be a full address with its scheme (https://…)"),
                ("born", "must be a date (YYYY-MM-DD)"),
                ("at", "must be a date and time (YYYY-MM-DDThh:mm:ssZ)"),
                ("count", "must be a whole number"),
                ("ratio", "must be at most 1"),
                ("agree", "must be true or false"),
                ("friend", "`Ross` is not one of the options"),
                ("tools", "choose at most 2"),
            ]
        );
        let short = json!({"name": "A", "tools": []});
        let errors = form.validate(short.as_object().unwrap()).unwrap_err();
        assert_eq!(errors[0].message, "must be at least 2 characters");
        assert_eq!(errors[1].message, "choose at least 1");
    }

    fn request(schema: Option<Value>, cancel: &CancellationToken) -> ElicitationRequest {
        ElicitationRequest {
            server: "srv".into(),
            message: "Who are you?".into(),
            url: schema
                .is_none()
                .then(|| "https://example.com/go".to_string()),
            elicitation_id: schema.is_none().then(|| "e-1".to_string()),
            schema,
            origin: None,
            cancel: cancel.clone(),
        }
    }

    type Seen = Arc<Mutex<Vec<EngineEvent>>>;

    fn broker(timeout: Duration) -> (Arc<ElicitationBroker>, Seen) {
        let seen: Seen = Arc::default();
        let sink = {
            let seen = seen.clone();
            move |e: EngineEvent| seen.lock().unwrap().push(e)
        };
        (
            Arc::new(ElicitationBroker::new(Arc::new(sink), timeout, None)),
            seen,
        )
    }

    async fn wait_pending(b: &ElicitationBroker) -> String {
        loop {
            if let Some(id) = b.pending().pop() {
                return id;
            }
            tokio::task::yield_now().await;
        }
    }

    fn resolutions(seen: &Seen) -> Vec<(ElicitationOutcome, Resolution)> {
        seen.lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                EngineEvent::ElicitationResolved {
                    outcome,
                    resolution,
                    ..
                } => Some((*outcome, *resolution)),
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn an_invalid_answer_is_refused_and_the_form_keeps_waiting() {
        let (b, seen) = broker(Duration::from_secs(60));
        let cancel = CancellationToken::new();
        let waiter = {
            let (b, r) = (b.clone(), request(Some(schema()), &cancel));
            tokio::spawn(async move { b.elicit(r).await })
        };
        let id = wait_pending(&b).await;
        let announced = seen.lock().unwrap()[0].clone();
        let EngineEvent::ElicitationRequest { form, url, .. } = announced else {
            panic!("{announced:?}")
        };
        assert_eq!(form, Some(self::form()));
        assert_eq!(url, None);

        let err = b
            .answer(
                &id,
                ElicitationReply::Accept {
                    content: Map::new(),
                },
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the answer does not fit the form, nothing was sent: `name` required"
        );
        assert_eq!(b.pending(), std::slice::from_ref(&id));
        assert!(matches!(
            b.answer("nope", ElicitationReply::Decline),
            Err(ElicitationAnswerError::Unknown(_))
        ));
        let content = json!({"name": "Ada", "count": 3})
            .as_object()
            .unwrap()
            .clone();
        b.answer(&id, ElicitationReply::Accept { content }).unwrap();
        assert_eq!(
            waiter.await.unwrap(),
            ElicitationAnswer::Accept(
                json!({"name": "Ada", "count": 3})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
        assert_eq!(
            resolutions(&seen),
            [(ElicitationOutcome::Accepted, Resolution::Answered)]
        );
    }

    /// The server's `notifications/elicitation/complete` for an open URL request answers it as
    /// accepted and closes it; one naming another request, or another server's, changes nothing.
    #[tokio::test]
    async fn a_url_requests_completion_answers_it() {
        let (b, seen) = broker(Duration::from_secs(60));
        let cancel = CancellationToken::new();
        let waiter = {
            let (b, r) = (b.clone(), request(None, &cancel));
            tokio::spawn(async move { b.elicit(r).await })
        };
        let id = wait_pending(&b).await;
        assert!(!b.complete("srv", "e-2"), "another request");
        assert!(!b.complete("other", "e-1"), "another server's");
        assert_eq!(b.pending(), std::slice::from_ref(&id));
        assert!(b.complete("srv", "e-1"));
        assert_eq!(waiter.await.unwrap(), ElicitationAnswer::Accept(Map::new()));
        assert!(b.pending().is_empty());
        assert_eq!(
            resolutions(&seen),
            [(ElicitationOutcome::Accepted, Resolution::Answered)]
        );
        assert!(!b.complete("srv", "e-1"), "already closed");
    }

    #[tokio::test(start_paused = true)]
    async fn timeout_stop_and_a_gone_listener_cancel_the_form() {
        let (b, seen) = broker(Duration::from_secs(600));
        let cancel = CancellationToken::new();
        // Nobody answers: cancelled after the timeout.
        assert_eq!(
            b.elicit(request(Some(schema()), &cancel)).await,
            ElicitationAnswer::Cancel
        );
        // The call ends (the run's stop): cancelled.
        let waiter = {
            let (b, r) = (b.clone(), request(None, &cancel));
            tokio::spawn(async move { b.elicit(r).await })
        };
        wait_pending(&b).await;
        cancel.cancel();
        assert_eq!(waiter.await.unwrap(), ElicitationAnswer::Cancel);
        // The window closes: cancelled.
        let cancel = CancellationToken::new();
        let waiter = {
            let (b, r) = (b.clone(), request(None, &cancel));
            tokio::spawn(async move { b.elicit(r).await })
        };
        wait_pending(&b).await;
        b.cancel_all(None);
        assert_eq!(waiter.await.unwrap(), ElicitationAnswer::Cancel);
        // The wait itself is dropped (the server's session ended): still announced.
        let waiter = {
            let (b, r) = (b.clone(), request(None, &cancel));
            tokio::spawn(async move { b.elicit(r).await })
        };
        wait_pending(&b).await;
        waiter.abort();
        let _ = waiter.await;
        assert!(b.pending().is_empty());
        assert_eq!(
            resolutions(&seen),
            [
                (ElicitationOutcome::Cancelled, Resolution::TimedOut),
                (ElicitationOutcome::Cancelled, Resolution::Cancelled),
                (ElicitationOutcome::Cancelled, Resolution::ListenerGone),
                (ElicitationOutcome::Cancelled, Resolution::ListenerGone),
            ]
        );
    }
}
