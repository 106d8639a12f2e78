//! The model picker's list, from a real server on 127.0.0.1: the scripted model server's
//! `/v1/models`, a server without the list, one that is not there, and a key not set yet.

use engine::models::{list_models, Api};
use test_support::ScriptedModel;

use crate::common::{profile, secrets};

#[tokio::test]
async fn a_servers_models_are_listed_for_both_dialects() {
    let server = ScriptedModel::start(vec![]).await;
    let (_dir, secrets) = secrets(&[("DISCOVER_KEY_1", "sk-discover-1")]);
    let openai = profile(
        Api::Openai,
        &server.openai_base_url(),
        Some("DISCOVER_KEY_1"),
    );
    let list = list_models(&openai, None, secrets.clone()).await;
    assert_eq!(list.models, ["scripted", "scripted-large"]);
    assert_eq!(list.note, None);
    // Anthropic's list is at {base_url}/v1/models.
    let anthropic = profile(Api::Anthropic, &server.base_url, None);
    let list = list_models(&anthropic, None, secrets).await;
    assert_eq!(list.models, ["scripted", "scripted-large"]);
    // Asking for the list is not a chat request.
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn no_list_falls_back_to_free_text_with_a_short_note() {
    let server = ScriptedModel::start(vec![]).await;
    let (_dir, secrets) = secrets(&[("DISCOVER_KEY_2", "sk-discover-secret-2")]);
    // A server without the route (here: the base URL misses /v1).
    let missing = profile(Api::Openai, &server.base_url, Some("DISCOVER_KEY_2"));
    let list = list_models(&missing, None, secrets.clone()).await;
    assert!(list.models.is_empty());
    let note = list.note.unwrap();
    assert!(
        note.contains("404") && note.contains("Type the model name."),
        "{note}"
    );
    assert!(!note.contains("sk-discover-secret-2"), "{note}");

    // Nothing listens there.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let gone = profile(Api::Openai, &format!("http://{closed}/v1"), None);
    let note = list_models(&gone, None, secrets.clone())
        .await
        .note
        .unwrap();
    assert!(note.contains("cannot connect"), "{note}");

    // A key not set yet: no request, and the note says why.
    let unset = profile(
        Api::Openai,
        &server.openai_base_url(),
        Some("DISCOVER_NOT_SET"),
    );
    let note = list_models(&unset, None, secrets.clone())
        .await
        .note
        .unwrap();
    assert!(note.contains("API key is not set"), "{note}");
    // A key typed into the form (not saved yet) is used instead.
    let list = list_models(&unset, Some("sk-typed".into()), secrets).await;
    assert_eq!(list.models, ["scripted", "scripted-large"]);
}
