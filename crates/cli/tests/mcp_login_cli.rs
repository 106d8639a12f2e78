//! `artifactflow-cli mcp login NAME` against a stand-in authorization server and MCP server on
//! 127.0.0.1 (test-support's `OAuthStandIn`), with `--headless` in place of the browser. Needs
//! the keyring: `scripts/with-session.sh cargo test -p artifactflow-cli --test mcp_login_cli`.

use std::path::Path;
use std::process::Command;

use test_support::oauth::OAuthStandIn;

fn cli(home: &Path, service: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"))
        .env_remove("ARTIFACTFLOW_HOME")
        .env("ARTIFACTFLOW_KEYRING_SERVICE", service)
        .arg("--home")
        .arg(home)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_signs_in_and_the_server_becomes_ready() {
    let stand = OAuthStandIn::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(
        home.path().join("config/mcp.json"),
        serde_json::json!({"mcpServers": {"remote": {"url": format!("{}/mcp", stand.base)}}})
            .to_string(),
    )
    .unwrap();
    let service = format!("artifactflow-test-login-{}", std::process::id());
    let store = engine::secrets::SecretStore::new(&service, home.path().join("secret-names.json"));
    let home_path = home.path().to_path_buf();
    let run = move |args: &'static [&'static str]| {
        let (home, service) = (home_path.clone(), service.clone());
        tokio::task::spawn_blocking(move || cli(&home, &service, args))
    };

    let (ok, out, err) = run(&["mcp", "list"]).await.unwrap();
    assert!(ok, "{out}{err}");
    assert!(out.contains("needs sign-in"), "{out}");

    let (ok, out, err) = run(&["mcp", "login", "remote", "--headless"])
        .await
        .unwrap();
    assert!(ok, "{out}{err}");
    assert!(out.contains(&format!("{}/authorize?", stand.base)), "{out}");
    assert!(
        out.contains("Signed in to `remote` (scopes: tools:read)"),
        "{out}"
    );
    assert!(out.contains("remote: ready (1 tools)"), "{out}");
    // The tokens never reach the terminal.
    assert!(
        !out.contains("access-") && !err.contains("access-"),
        "{out}{err}"
    );

    // A later run uses the kept tokens.
    let (ok, out, err) = run(&["mcp", "tools", "remote"]).await.unwrap();
    assert!(ok, "{out}{err}");
    assert!(out.contains("remote.whoami"), "{out}");
    assert_eq!(stand.seen().scopes.len(), 1, "signed in once");

    // Signing out forgets the tokens: the server needs sign-in again.
    let (ok, out, err) = run(&["mcp", "logout", "remote"]).await.unwrap();
    assert!(ok, "{out}{err}");
    assert!(out.contains("Signed out of `remote`"), "{out}");
    let (ok, out, err) = run(&["mcp", "list"]).await.unwrap();
    assert!(ok, "{out}{err}");
    assert!(out.contains("needs sign-in"), "{out}");
    assert!(
        store.get_chunked("mcp-oauth/remote").unwrap().is_none(),
        "no token left in the keyring"
    );
}
