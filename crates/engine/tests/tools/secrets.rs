use std::path::Path;
use std::process::Command;

use engine::context::AppContext;
use engine::permissions::Answer;
use engine::secrets::{SecretResolver, SecretSource, SecretStore, MASK};

use crate::http_tool::params;
use crate::servers;

fn unique(prefix: &str) -> String {
    format!("{prefix}-{}-{}", std::process::id(), rand_suffix())
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

const NO_KEYRING: &str = "the OS keyring is not reachable: run the tests through scripts/test.sh \
     (or scripts/with-session.sh cargo test), which starts D-Bus and an unlocked gnome-keyring";

#[test]
fn the_os_keyring_is_used_for_real_and_wins_over_env_and_dotenv() {
    let tmp = tempfile::tempdir().unwrap();
    let service = unique("artifactflow-test");
    let store = SecretStore::new(&service, tmp.path().join("names.json"));
    let name = "AF_TEST_ORDER_KEY";
    store.set(name, "from-keyring").expect(NO_KEYRING);

    // Really in the Secret Service, not an in-memory mock: the desktop's own tool finds it.
    if cfg!(target_os = "linux") {
        let out = Command::new("secret-tool")
            .args(["lookup", "service", &service, "username", name])
            .output()
            .expect("secret-tool (libsecret-tools) is installed by scripts/setup.sh --test");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "from-keyring");
    }
    assert_eq!(store.names().into_iter().collect::<Vec<_>>(), [name]);

    let dotenv = tmp.path().join(".env");
    std::fs::write(&dotenv, format!("{name}=from-dotenv\n")).unwrap();
    std::env::set_var(name, "from-env");
    let resolver = SecretResolver::new(Some(store.clone()), Some(dotenv)).allow_env([name]);
    assert_eq!(
        resolver.resolve(name),
        Some(("from-keyring".into(), SecretSource::Keyring))
    );

    store.delete(name).unwrap();
    store.delete(name).expect("deleting twice is fine");
    assert!(store.names().is_empty());
    assert_eq!(
        resolver.resolve(name),
        Some(("from-env".into(), SecretSource::Environment))
    );
    std::env::remove_var(name);
    assert_eq!(
        resolver.resolve(name),
        Some(("from-dotenv".into(), SecretSource::DotEnv))
    );
    assert!(store
        .set("bad-name", "x")
        .unwrap_err()
        .to_string()
        .contains("not a valid secret name"));
}

/// A template is filled from the environment only when `ARTIFACTFLOW_SECRETS_FROM_ENV` names
/// the variable: any other variable of the app's environment stays unread, `.env` still works.
#[test]
fn only_listed_environment_variables_fill_templates() {
    std::env::set_var("AF_TEST_AMBIENT_TOKEN", "ambient-7c1f");
    std::env::set_var("AF_TEST_LISTED_TOKEN", "listed-2d9a");
    std::env::set_var(
        engine::secrets::ENV_ALLOW_ENV,
        "AF_TEST_LISTED_TOKEN, AF_TEST_NOT_SET_X",
    );
    let tmp = tempfile::tempdir().unwrap();
    let dotenv = tmp.path().join(".env");
    std::fs::write(&dotenv, "AF_TEST_DOTENV_TOKEN=from-dotenv\n").unwrap();
    let resolver = SecretResolver::new(None, Some(dotenv));
    let filled = resolver.fill(
        "{{AF_TEST_AMBIENT_TOKEN}} {{AF_TEST_LISTED_TOKEN}} {{AF_TEST_DOTENV_TOKEN}} {{PATH}}",
    );
    assert_eq!(
        filled.text,
        "{{AF_TEST_AMBIENT_TOKEN}} listed-2d9a from-dotenv {{PATH}}"
    );
    assert_eq!(filled.unresolved, ["AF_TEST_AMBIENT_TOKEN", "PATH"]);
    assert_eq!(
        resolver.resolve("AF_TEST_LISTED_TOKEN"),
        Some(("listed-2d9a".into(), SecretSource::Environment))
    );
    assert_eq!(resolver.resolve("AF_TEST_AMBIENT_TOKEN"), None);
}

/// settings.yaml's `secrets_from_env` lets the variables it names fill templates (an app
/// started from its menu has no shell to set `ARTIFACTFLOW_SECRETS_FROM_ENV` in). A reload
/// reaches the resolvers made before it too (the MCP servers' lives as long as the app), and a
/// name taken out of the list is no longer read.
#[test]
fn the_settings_list_environment_variables_and_a_reload_reaches_every_resolver() {
    std::env::set_var("AF_TEST_SETTINGS_TOKEN", "settings-41be");
    std::env::set_var("AF_TEST_SETTINGS_OTHER", "other-77f0");
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let made_before = ctx.secret_resolver();
    assert_eq!(made_before.resolve("AF_TEST_SETTINGS_TOKEN"), None);

    let settings = ctx.paths().config_dir.join("settings.yaml");
    let original = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(
        &settings,
        format!("{original}\nsecrets_from_env: [AF_TEST_SETTINGS_TOKEN]\n"),
    )
    .unwrap();
    ctx.reload_config();
    assert!(
        ctx.config_problems().is_empty(),
        "{:?}",
        ctx.config_problems()
    );
    for resolver in [&made_before, &ctx.secret_resolver()] {
        assert_eq!(
            resolver.resolve("AF_TEST_SETTINGS_TOKEN"),
            Some(("settings-41be".into(), SecretSource::Environment))
        );
        assert_eq!(resolver.resolve("AF_TEST_SETTINGS_OTHER"), None);
    }

    std::fs::write(&settings, original).unwrap();
    ctx.reload_config();
    assert_eq!(made_before.resolve("AF_TEST_SETTINGS_TOKEN"), None);
    assert_eq!(
        ctx.secret_resolver().resolve("AF_TEST_SETTINGS_TOKEN"),
        None
    );
}

fn file_contains(path: &Path, needle: &str) -> bool {
    std::fs::read(path)
        .map(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_value_never_reaches_the_model_the_logs_or_the_database() {
    let secret = "s3cr3t-value-Zq81";
    let home = tempfile::tempdir().unwrap();
    let service = unique("artifactflow-leak-test");
    std::env::set_var(engine::secrets::SERVICE_ENV, &service);
    std::env::set_var(engine::logging::LOG_ENV, "debug");
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let _logs = engine::logging::init(&ctx.paths().log_dir, "leak-test", false);
    ctx.secret_store()
        .set("LEAK_KEY", secret)
        .expect(NO_KEYRING);

    let server = servers::json_api().await;
    let tools = ctx.paths().config_dir.join("tools");
    // The secret goes in a header and in the URL; the servers echo what they receive.
    for (name, path) in [("leak_echo", "/echo"), ("leak_fail", "/fail")] {
        std::fs::write(
            tools.join(format!("{name}.md")),
            format!(
                "---\nname: {name}\npermission: confirm\nendpoint: \"{}{path}?key={{{{LEAK_KEY}}}}\"\nheaders:\n  Authorization: \"Bearer <<LEAK_KEY>>\"\nparameters:\n  - name: q\n    type: string\n---\nUses a key.\n",
                server.base
            ),
        )
        .unwrap();
    }
    std::fs::write(
        tools.join("leak_down.md"),
        "---\nname: leak_down\nendpoint: \"http://127.0.0.1:9/{{LEAK_KEY}}\"\n---\n",
    )
    .unwrap();
    ctx.reload_config();

    let mut seen_by_model = Vec::new();
    let events = std::sync::Mutex::new(Vec::new());
    let sink = |e: engine::events::EngineEvent| {
        events
            .lock()
            .unwrap()
            .push(serde_json::to_string(&e).unwrap())
    };
    let registry = ctx.tool_registry();
    for name in ["leak_echo", "leak_fail", "leak_down"] {
        let spec = registry.get(name).unwrap().spec().clone();
        seen_by_model.push(engine::parser::tool_instructions(&[spec]));
        let mut asked = None;
        let args = if name == "leak_down" {
            params(&[])
        } else {
            params(&[("q", "hi")])
        };
        let out = engine::api::direct::call(
            &ctx,
            name,
            &args,
            "conv-1",
            |req| {
                asked = Some(serde_json::to_string(req).unwrap());
                Answer::ApproveAlways
            },
            &sink,
        )
        .await;
        seen_by_model.push(out.formatted.clone());
        seen_by_model.push(serde_json::to_string(&out.result).unwrap());
        if let Some(request) = asked {
            assert!(
                request.contains("{{LEAK_KEY}}"),
                "the dialog shows the template: {request}"
            );
            seen_by_model.push(request);
        }
    }
    // The server did get the real value (the tool works) …
    assert!(server
        .requests()
        .iter()
        .any(|r| r.header("authorization") == Some(&format!("Bearer {secret}"))));
    // … but nothing the model, the dialog or the UI (events) sees contains it.
    let events = events.into_inner().unwrap();
    assert!(events
        .iter()
        .any(|e| e.contains("\"type\":\"tool_complete\"")));
    assert!(events
        .iter()
        .any(|e| e.contains("\"type\":\"permission_request\"")));
    seen_by_model.extend(events);
    let all = seen_by_model.join("\n");
    assert!(!all.contains(secret), "secret leaked into: {all}");
    assert!(all.contains(MASK), "the echoed values were masked: {all}");
    assert!(
        all.contains("could not reach GET http://127.0.0.1:9/{{LEAK_KEY}}"),
        "{all}"
    );

    drop(_logs);
    for entry in std::fs::read_dir(&ctx.paths().log_dir).unwrap() {
        let path = entry.unwrap().path();
        assert!(
            !file_contains(&path, secret),
            "secret in log {}",
            path.display()
        );
    }
    let db = &ctx.paths().database;
    for path in [db.clone(), db.with_extension("db-wal")] {
        assert!(
            !file_contains(&path, secret),
            "secret in {}",
            path.display()
        );
    }
    assert!(
        ctx.with_db(|c| engine::conversations::always_allowed(c, "conv-1"))
            .unwrap()
            .contains("leak_echo"),
        "approve-and-always-allow was persisted with the conversation"
    );
    ctx.secret_store().delete("LEAK_KEY").unwrap();
}

/// The raw keyring entry `account` of `service`, through the desktop's own tool.
fn secret_tool_lookup(service: &str, account: &str) -> Option<String> {
    let out = Command::new("secret-tool")
        .args(["lookup", "service", service, "username", account])
        .output()
        .expect("secret-tool (libsecret-tools) is installed by scripts/setup.sh --test");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).to_string())
}

#[test]
fn long_values_are_split_into_entries_windows_credential_manager_can_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let service = unique("artifactflow-test-chunks");
    let store = SecretStore::new(&service, tmp.path().join("names.json"));
    let key = "mcp-oauth/remote";
    // A token set longer than one Windows entry (2,560 bytes of UTF-16), with characters
    // outside the BMP (two UTF-16 units each) at the chunk boundaries' mercy.
    let long: String = (0..3000)
        .map(|i| match i % 7 {
            0 => '😀',
            1 => 'é',
            _ => char::from(b'a' + (i % 26) as u8),
        })
        .collect();
    store.set_chunked(key, &long).expect(NO_KEYRING);
    assert_eq!(
        store.get_chunked(key).unwrap().as_deref(),
        Some(long.as_str())
    );

    if cfg!(target_os = "linux") {
        let mut entries = Vec::new();
        while let Some(v) = secret_tool_lookup(&service, &format!("{key}#{}", entries.len())) {
            entries.push(v);
        }
        assert!(entries.len() > 1, "a long value spans several entries");
        for e in &entries {
            let utf16_bytes = e.encode_utf16().count() * 2;
            assert!(utf16_bytes <= 2560, "an entry of {utf16_bytes} bytes");
        }
        assert_eq!(entries.concat(), long);
    }
    // App-internal entries are not user secrets: not in the names list.
    assert!(store.names().is_empty());

    // A shorter value leaves no stale pieces behind.
    store.set_chunked(key, "short").unwrap();
    assert_eq!(store.get_chunked(key).unwrap().as_deref(), Some("short"));
    if cfg!(target_os = "linux") {
        assert_eq!(secret_tool_lookup(&service, &format!("{key}#1")), None);
    }
    store.delete_chunked(key).unwrap();
    assert_eq!(store.get_chunked(key).unwrap(), None);
    store.delete_chunked(key).expect("deleting twice is fine");
}
