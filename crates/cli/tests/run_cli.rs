//! `artifactflow-cli run` against the scripted model server.

use std::process::Command;

use test_support::{ScriptedModel, Turn};

fn setup(home: &std::path::Path, model: &ScriptedModel) {
    let out = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"))
        .args(["status", "--home"])
        .arg(home)
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::write(home.join("config/models.yaml"), model.models_yaml()).unwrap();
    std::fs::write(
        home.join("config/agents/writer.md"),
        "---\nname: writer\nmodel: default\ntools:\n  create_artifact: confirm\n---\nYou write things down.\n",
    )
    .unwrap();
}

fn run(home: &std::path::Path, flag: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"))
        .args([
            "run",
            "--agent",
            "writer",
            flag,
            "--conversation",
            "c1",
            "--home",
        ])
        .arg(home)
        .arg("Note that tests pass.")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

const CALL: &str = "<tool_call><name>create_artifact</name><params><id><![CDATA[note]]></id><title><![CDATA[Note]]></title><content><![CDATA[Tests pass.]]></content></params></tool_call>";

#[tokio::test(flavor = "multi_thread")]
async fn run_streams_the_answer_and_reports_tools_and_artifacts() {
    let model = ScriptedModel::start(vec![Turn::text(CALL), Turn::text("Saved the note.")]).await;
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path(), &model);
    let out = tokio::task::spawn_blocking({
        let home = tmp.path().to_path_buf();
        move || run(&home, "--yes")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("Saved the note."), "{stdout}");
    assert!(
        stderr.contains("asks for permission") && stderr.contains("[✓ create_artifact"),
        "{stderr}"
    );
    assert!(
        stderr.contains("note (v1) Note"),
        "artifacts made are listed: {stderr}"
    );
    assert!(
        stderr.contains("[run completed · conversation c1]"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn run_with_no_denies_and_a_failed_model_exits_1() {
    let model = ScriptedModel::start(vec![Turn::text(CALL), Turn::text("Could not save.")]).await;
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path(), &model);
    let home = tmp.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || run(&home, "--no"))
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("[✗ create_artifact") && stderr.contains("did not allow"),
        "{stderr}"
    );
    // The script is exhausted now: the next run fails cleanly with exit 1.
    let home = tmp.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || run(&home, "--yes"))
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error: agent `writer`"));
}

/// A model (or a page it quotes) can put terminal escape sequences in its answer and in what it
/// stores. Human output shows them as text; `--json` keeps them exact.
#[tokio::test(flavor = "multi_thread")]
async fn escape_sequences_from_the_model_never_reach_the_terminal() {
    const OSC52: &str = "\x1b]52;c;ZXZpbA==\x07";
    const ERASE: &str = "\x1b[2K\r";
    let call = format!(
        "<tool_call><name>create_artifact</name><params><id><![CDATA[note]]></id><title><![CDATA[T{ERASE}itle]]></title><content><![CDATA[body {OSC52} end]]></content></params></tool_call>"
    );
    let model = ScriptedModel::start(vec![
        Turn::text(&call),
        Turn::text(format!("Done{OSC52}{ERASE}fake prompt$ ")),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path(), &model);
    let home = tmp.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || run(&home, "--yes"))
        .await
        .unwrap();
    assert!(out.status.success());
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !bytes.contains(&0x1b) && !bytes.contains(&0x07) && !bytes.contains(&b'\r'),
            "{name} carries raw control characters: {text:?}"
        );
        assert!(text.contains("\\x1b"), "{name} shows them as text: {text}");
    }
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("Done\\x1b]52;c;ZXZpbA==\\x07\\x1b[2K\\rfake"));

    let cli = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"))
            .args(args)
            .arg("--home")
            .arg(tmp.path())
            .output()
            .unwrap()
    };
    let shown = cli(&["artifacts", "show", "note"]);
    assert!(shown.status.success());
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout),
        "body \\x1b]52;c;ZXZpbA==\\x07 end"
    );
    let listed = cli(&["artifacts", "list"]);
    assert!(!listed.stdout.contains(&0x1b));
    let json: serde_json::Value =
        serde_json::from_slice(&cli(&["artifacts", "list", "--json"]).stdout).unwrap();
    assert_eq!(
        json["items"][0]["title"],
        format!("T{ERASE}itle"),
        "--json output stays exact"
    );
}

/// `run` prints one line when it condenses the model's view: the second run of a
/// conversation through a 512-token window condenses the first one into a note.
#[tokio::test(flavor = "multi_thread")]
async fn run_prints_a_line_when_it_condenses() {
    let model = ScriptedModel::start(vec![
        Turn::text(format!("{}{CALL}", "Let me think about it. ".repeat(60))),
        Turn::text("Saved the note."),
        Turn::text("Still saved."),
    ])
    .await;
    model.set_condensation_note(Some("The user asked to note that tests pass.".into()));
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path(), &model);
    std::fs::write(
        tmp.path().join("config/models.yaml"),
        format!("{}    context_window: 512\n", model.models_yaml()),
    )
    .unwrap();
    for expected in [false, true] {
        let home = tmp.path().to_path_buf();
        let out = tokio::task::spawn_blocking(move || run(&home, "--yes"))
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(
            stderr.matches("[context condensed: ").count(),
            usize::from(expected),
            "{stderr}"
        );
        if expected {
            assert!(
                stderr
                    .contains("messages condensed into a note (to fit the model's context window)"),
                "{stderr}"
            );
        }
    }
}

/// A model key from the process environment: a variable fills `{{NAME}}` when
/// `ARTIFACTFLOW_SECRETS_FROM_ENV` or `secrets_from_env` in settings.yaml lists it (the two
/// lists together), and never otherwise; the error for a variable neither lists says how to list
/// it, both ways. No value reaches the output, the logs or the database.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_is_read_from_the_environment_when_the_variable_or_the_settings_list_it() {
    const KEYS: [(&str, &str, &str); 3] = [
        ("by_variable", "AF_KEY_BY_VARIABLE", "key-by-variable-51c2"),
        ("by_settings", "AF_KEY_BY_SETTINGS", "key-by-settings-9e07"),
        ("unlisted", "AF_KEY_UNLISTED", "key-unlisted-3b8d"),
    ];
    let model = ScriptedModel::start(vec![
        Turn::text("Answered with the variable's key."),
        Turn::text("Answered with the settings' key."),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().to_path_buf();
    setup(&home, &model);
    let mut models = String::from("profiles:\n");
    for (profile, variable, _) in KEYS {
        models.push_str(&format!(
            "  - name: {profile}\n    api: openai\n    base_url: \"{}\"\n    model: scripted\n    \
             api_key: \"{{{{{variable}}}}}\"\n",
            model.openai_base_url()
        ));
        std::fs::write(
            home.join(format!("config/agents/{profile}.md")),
            format!("---\nname: {profile}\nmodel: {profile}\n---\nAnswer briefly.\n"),
        )
        .unwrap();
    }
    std::fs::write(home.join("config/models.yaml"), models).unwrap();
    let settings = home.join("config/settings.yaml");
    let mut text = std::fs::read_to_string(&settings).unwrap();
    text.push_str("\nsecrets_from_env: [AF_KEY_BY_SETTINGS]\n");
    std::fs::write(&settings, text).unwrap();

    let run_agent = |agent: &'static str| {
        let home = home.clone();
        tokio::task::spawn_blocking(move || {
            let mut command = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
            command
                .args(["run", "--agent", agent, "--yes", "--home"])
                .arg(&home)
                .arg("Say hello.")
                .env("ARTIFACTFLOW_SECRETS_FROM_ENV", "AF_KEY_BY_VARIABLE")
                .env(
                    "ARTIFACTFLOW_KEYRING_SERVICE",
                    format!("artifactflow-run-cli-test-{}", std::process::id()),
                )
                .stdin(std::process::Stdio::null());
            for (_, variable, value) in KEYS {
                command.env(variable, value);
            }
            command.output().unwrap()
        })
    };
    let mut printed = String::new();
    for (agent, answer) in [
        ("by_variable", "Answered with the variable's key."),
        ("by_settings", "Answered with the settings' key."),
    ] {
        let out = run_agent(agent).await.unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{agent}: {stdout}\n{stderr}");
        assert!(stdout.contains(answer), "{agent}: {stdout}");
        printed.push_str(&format!("{stdout}{stderr}"));
    }
    let keys_sent: Vec<String> = model
        .requests()
        .iter()
        .filter_map(|r| r.header("authorization").map(str::to_string))
        .collect();
    for expected in ["Bearer key-by-variable-51c2", "Bearer key-by-settings-9e07"] {
        assert!(
            keys_sent.iter().any(|k| k == expected),
            "{expected}: {keys_sent:?}"
        );
    }

    // Set in the environment but listed nowhere: not read, and the error says how to list it.
    let out = run_agent("unlisted").await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for expected in [
        "model profile `unlisted` needs the secret AF_KEY_UNLISTED",
        "Settings → Secrets",
        "`artifactflow-cli secrets set AF_KEY_UNLISTED`",
        "config/.env",
        "the environment variable AF_KEY_UNLISTED is read only when \
         ARTIFACTFLOW_SECRETS_FROM_ENV or `secrets_from_env` in settings.yaml lists it",
    ] {
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }
    printed.push_str(&stderr);
    printed.push_str(&String::from_utf8_lossy(&out.stdout));
    assert!(
        keys_sent.iter().all(|k| !k.contains("key-unlisted-3b8d")),
        "{keys_sent:?}"
    );

    let mut stored = String::new();
    for entry in std::fs::read_dir(home.join("logs")).unwrap() {
        stored.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    for entry in std::fs::read_dir(home.join("data")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            stored.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    for (_, _, value) in KEYS {
        assert!(!printed.contains(value), "{value} was printed: {printed}");
        assert!(!stored.contains(value), "{value} was logged or stored");
    }
}
