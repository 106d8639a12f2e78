//! Sign-in to a remote server through the engine's hub, against a small authorization server
//! and MCP server stand-in on 127.0.0.1: what the official conformance suite
//! (`scripts/mcp-conformance.sh`) does not cover — the hub's "needs sign-in" status and its
//! Sign in, the tokens in the keyring (and nowhere in the app's files), a refresh of an expired
//! token saved back to the keyring, and tokens never sent to another URL.
//! Needs the keyring: `scripts/with-session.sh cargo test -p artifactflow-engine --test mcp`.

use std::sync::Arc;
use std::time::Duration;

use engine::engine::EngineOptions;
use engine::mcp::{auth, McpError, ServerStatus};
use engine::paths::AppPaths;
use engine::secrets::SecretStore;
use engine::Engine;
use serde_json::json;
use test_support::oauth::{OAuthStandIn, CLIENT_SECRET, WRITE};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(30);

fn open(home: &std::path::Path, name: &str, url: &str) -> Engine {
    let paths = AppPaths::resolve(Some(home)).unwrap();
    paths.prepare().unwrap();
    std::fs::write(
        paths.config_dir.join("mcp.json"),
        json!({"mcpServers": {name: {"url": url}}}).to_string(),
    )
    .unwrap();
    Engine::open_with(
        paths,
        Arc::new(engine::events::discard()),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap()
}

/// Every file under `dir`, read as text (lossy).
fn all_text(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&all_text(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_through_the_hub_keeps_tokens_in_the_keyring_and_refreshes_them() {
    let stand = OAuthStandIn::start().await;
    let home = tempfile::tempdir().unwrap();
    let name = format!("remote-{}", std::process::id());
    let url = format!("{}/mcp", stand.base);
    let engine = open(home.path(), &name, &url);
    let store = SecretStore::for_data_dir(&engine.ctx.paths().data_dir);
    auth::sign_out(&store, &name).unwrap();

    // No token: the server's 401 makes the status "needs sign-in", saying how.
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    let ServerStatus::NeedsSignIn { reason } = status else {
        panic!("expected needs sign-in, got {status:?}")
    };
    assert!(reason.contains(&format!("mcp login {name}")), "{reason}");

    // Sign in (the browser replaced by the headless redirect follower): ready, one tool.
    let signed = engine
        .mcp()
        .sign_in(&name, auth::follow_redirects_headlessly())
        .await
        .expect("signed in");
    assert_eq!(signed.scopes, ["tools:read"]);
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert_eq!(status, ServerStatus::Ready { tool_count: 1 });
    {
        let seen = stand.seen();
        // The scope came from the server's challenge.
        assert_eq!(seen.scopes, ["tools:read"]);
        // The first token was born expired: its first use refreshed it.
        assert_eq!(seen.grants, ["authorization_code", "refresh_token"]);
        let sent: Vec<&str> = seen.bearers.iter().flatten().map(String::as_str).collect();
        assert!(sent.iter().all(|b| b.starts_with("access-2-")), "{sent:?}");
    }

    // The refreshed tokens are in the keyring (several entries: longer than one Windows
    // entry), without the id token; nothing of them is in the app's files.
    let kept = store
        .get_chunked(&format!("mcp-oauth/{name}"))
        .unwrap()
        .expect("tokens in the keyring");
    assert!(kept.contains("access-2-") && kept.contains("refresh-2"));
    assert!(!kept.contains("access-1-") && !kept.contains("id-token"));
    assert!(kept.chars().count() > engine::secrets::CHUNK_CHARS);
    let files = all_text(home.path());
    assert!(!files.contains("access-2-") && !files.contains("refresh-2"));
    drop(engine);

    // The same name at another URL: the tokens are not sent there.
    let other = format!("{}/other/mcp", stand.base);
    let engine = open(home.path(), &name, &other);
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert!(
        matches!(status, ServerStatus::NeedsSignIn { .. }),
        "{status:?}"
    );
    let last = stand.seen().bearers.last().cloned().flatten();
    assert_eq!(last, None, "a token was sent to another URL");
    drop(engine);
    auth::sign_out(&store, &name).unwrap();
}

/// An authorization server that registers the app as a confidential client (its dynamic
/// registration returns a client secret, and its token endpoint requires it): the secret is
/// kept in the keyring with the tokens, and the refresh, made from what the keyring holds as
/// after a restart, sends it. Sign-out forgets it with the tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_secret_from_registration_is_kept_and_used_to_refresh() {
    let stand = OAuthStandIn::start_confidential().await;
    let home = tempfile::tempdir().unwrap();
    let name = format!("confidential-{}", std::process::id());
    let engine = open(home.path(), &name, &format!("{}/mcp", stand.base));
    let store = SecretStore::for_data_dir(&engine.ctx.paths().data_dir);
    auth::sign_out(&store, &name).unwrap();
    engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    engine
        .mcp()
        .sign_in(&name, auth::follow_redirects_headlessly())
        .await
        .expect("signed in");
    // The sign-in restarts the server from the keyring; its born-expired token is refreshed,
    // which the stand-in allows only with the secret.
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert_eq!(status, ServerStatus::Ready { tool_count: 1 });
    let seen = stand.seen();
    assert_eq!(seen.grants, ["authorization_code", "refresh_token"]);
    assert_eq!(
        seen.secrets,
        [
            Some(CLIENT_SECRET.to_string()),
            Some(CLIENT_SECRET.to_string())
        ]
    );

    // Kept in the keyring with the (refreshed) tokens, under the server's key; in no file.
    let key = format!("mcp-oauth/{name}");
    let kept = store.get_chunked(&key).unwrap().expect("in the keyring");
    assert!(kept.contains(CLIENT_SECRET) && kept.contains("refresh-2"));
    assert!(!all_text(home.path()).contains(CLIENT_SECRET));
    drop(engine);

    engine_signs_out(home.path(), &name, &stand.base, &store, &key).await;
}

/// Sign out through the hub: the tokens and the client secret leave the keyring.
async fn engine_signs_out(
    home: &std::path::Path,
    name: &str,
    base: &str,
    store: &SecretStore,
    key: &str,
) {
    let engine = open(home, name, &format!("{base}/mcp"));
    let status = engine.mcp().wait_settled(name, WAIT).await.unwrap();
    assert_eq!(status, ServerStatus::Ready { tool_count: 1 });
    engine.mcp().sign_out(name).unwrap();
    assert_eq!(store.get_chunked(key).unwrap(), None);
    let status = engine.mcp().wait_settled(name, WAIT).await.unwrap();
    assert!(
        matches!(status, ServerStatus::NeedsSignIn { .. }),
        "{status:?}"
    );
}

/// A call the server refuses for lack of scope (403 `insufficient_scope`) fails saying to sign
/// in; the next Sign in asks for the old and the new scopes (step-up) and the call then works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_for_scope_is_granted_after_signing_in_again() {
    let stand = OAuthStandIn::start().await;
    let home = tempfile::tempdir().unwrap();
    let name = format!("stepup-{}", std::process::id());
    let engine = open(home.path(), &name, &format!("{}/mcp", stand.base));
    let store = SecretStore::for_data_dir(&engine.ctx.paths().data_dir);
    auth::sign_out(&store, &name).unwrap();
    engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    engine
        .mcp()
        .sign_in(&name, auth::follow_redirects_headlessly())
        .await
        .expect("signed in");
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert_eq!(status, ServerStatus::Ready { tool_count: 1 });

    let call = || async {
        let client = engine.mcp().client(&name).expect("running");
        client
            .call_tool(
                "whoami",
                Default::default(),
                &CancellationToken::new(),
                None,
            )
            .await
    };
    let refused = call().await.unwrap_err();
    assert!(
        matches!(refused, McpError::NeedsSignIn { .. }),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("sign in"), "{refused}");

    let signed = engine
        .mcp()
        .sign_in(&name, auth::follow_redirects_headlessly())
        .await
        .expect("signed in again");
    assert_eq!(signed.scopes, ["tools:read", WRITE]);
    assert_eq!(
        stand.seen().scopes,
        ["tools:read", &format!("tools:read {WRITE}")]
    );
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert_eq!(status, ServerStatus::Ready { tool_count: 1 });
    let result = call().await.expect("the call works with the new scope");
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        format!("scope tools:read {WRITE}")
    );
    drop(engine);
    auth::sign_out(&store, &name).unwrap();
}

/// Without a browser (`mcp login --headless`), an authorization page that needs a person
/// ends the sign-in at once, saying so (not after the five-minute wait for the browser).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_sign_in_at_a_login_page_fails_at_once_saying_why() {
    let stand = OAuthStandIn::start().await;
    stand.show_login_page();
    let home = tempfile::tempdir().unwrap();
    let name = format!("person-{}", std::process::id());
    let engine = open(home.path(), &name, &format!("{}/mcp", stand.base));
    let store = SecretStore::for_data_dir(&engine.ctx.paths().data_dir);
    auth::sign_out(&store, &name).unwrap();
    let err = engine
        .mcp()
        .sign_in(&name, auth::follow_redirects_headlessly())
        .await
        .unwrap_err();
    assert!(matches!(err, auth::SignInError::Refused(_)), "{err:?}");
    assert!(err.to_string().contains("it needs a person"), "{err}");
    let status = engine.mcp().wait_settled(&name, WAIT).await.unwrap();
    assert!(
        matches!(status, ServerStatus::NeedsSignIn { .. }),
        "{status:?}"
    );
}
