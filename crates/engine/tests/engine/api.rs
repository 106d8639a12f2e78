//! The conversation API the desktop's commands and the CLI call (`engine::api::conversations`),
//! after a real run: the list, a page, one conversation opened with its call records, rename,
//! the transcript, and the permission grants, on the run's own SQLite file; and the prose of
//! each answer (its text without its calls) as stored and as streamed.

use engine::api::conversations;
use engine::permissions::Answer;
use engine::run::RunOptions;
use test_support::Turn;

use super::harness::{call, Harness, Policy};

#[tokio::test(flavor = "multi_thread")]
async fn the_front_ends_read_and_change_conversations_through_one_api() {
    let h = Harness::new(
        vec![
            Turn::text(format!("Echoing.{}", call("echo", &[("text", "hi")]))),
            Turn::text("Done: the echo said hi."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    // "Always allow" in this conversation: the grant the API lists below.
    h.answer_with(Policy::Answer(Answer::ApproveAlways));
    let outcome = h.run("tester", "Say hi through echo").await;
    assert_eq!(
        outcome.final_answer.as_deref(),
        Some("Done: the echo said hi.")
    );
    let ctx = &h.ctx;

    let all = conversations::list(ctx, None).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].id, "conv");
    assert!(conversations::list(ctx, Some("no such words"))
        .unwrap()
        .is_empty());
    let page = conversations::page(ctx, None, 10, 0).unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.items[0].id, "conv");

    let opened = conversations::open(ctx, "conv")
        .unwrap()
        .expect("the conversation opens");
    assert_eq!(opened.summary.id, "conv");
    let calls: Vec<_> = opened
        .messages
        .iter()
        .flat_map(|m| m.calls.iter())
        .collect();
    assert_eq!(
        calls.len(),
        1,
        "the echo call is read as a record: {:?}",
        opened.messages
    );
    assert_eq!(calls[0].name, "echo");
    assert_eq!(
        opened.messages.last().map(|m| m.message.content.as_str()),
        Some("Done: the echo said hi.")
    );
    assert!(
        opened.context_usage.is_some(),
        "the run's requests set the meter"
    );
    assert_eq!(conversations::open(ctx, "missing").unwrap(), None);

    assert!(conversations::rename(ctx, "conv", "Greetings").unwrap());
    assert!(!conversations::rename(ctx, "missing", "x").unwrap());
    let renamed = conversations::open(ctx, "conv").unwrap().unwrap();
    assert_eq!(renamed.summary.title, "Greetings");

    let transcript = conversations::transcript(ctx, "conv").unwrap().unwrap();
    assert!(transcript.to_markdown().contains("Greetings"));
    assert!(transcript.to_markdown().contains("Done: the echo said hi."));
    assert_eq!(conversations::transcript(ctx, "missing").unwrap(), None);

    conversations::ensure(ctx, "second", "Second").unwrap();
    assert_eq!(conversations::page(ctx, None, 1, 0).unwrap().total, 2);

    let grants = conversations::grants(ctx).unwrap();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(
        (grants[0].tool.as_str(), grants[0].conversation_id.as_str()),
        ("echo", "conv")
    );
    assert_eq!(grants[0].conversation_title, "Greetings");
    let grant = grants[0].id.clone();
    assert!(conversations::delete_grant(ctx, &grant).unwrap());
    assert!(!conversations::delete_grant(ctx, &grant).unwrap());
    assert!(conversations::grants(ctx).unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_front_ends_list_agents_and_tools_from_one_catalog() {
    let h = Harness::new(vec![], "openai", RunOptions::default()).await;
    let agents = engine::api::catalog::agents(&h.ctx);
    let tester = agents
        .iter()
        .find(|a| a.name == "tester")
        .expect("the test agent");
    assert_eq!(tester.description, "Test agent");
    assert_eq!(tester.model.as_deref(), Some("default"));
    assert!(!tester.internal);

    let tools = engine::api::catalog::tools(&h.ctx);
    let echo = tools
        .iter()
        .find(|t| t.name == "echo")
        .expect("the HTTP tool");
    assert_eq!(echo.source, "http");
    assert!(
        echo.file.as_deref().is_some_and(|f| f.ends_with("echo.md")),
        "{echo:?}"
    );
    assert_eq!(echo.server, None);
    assert_eq!(
        serde_json::to_value(echo.permission).unwrap(),
        serde_json::json!("confirm")
    );
    let users: Vec<_> = echo
        .used_by
        .iter()
        .map(|u| {
            (
                u.agent.as_str(),
                serde_json::to_value(u.permission).unwrap(),
            )
        })
        .collect();
    assert!(
        users.contains(&("tester", serde_json::json!("confirm"))),
        "{users:?}"
    );
    assert!(
        echo.instructions.contains("<tool name=\"echo\">"),
        "{}",
        echo.instructions
    );
    // The per-conversation artifact tools and the built-ins are listed too.
    let source_of = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.source.clone())
    };
    assert_eq!(source_of("create_artifact").as_deref(), Some("artifact"));
    assert_eq!(source_of("web_fetch").as_deref(), Some("builtin"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_settings_view_names_the_secrets_the_config_needs_and_never_their_values() {
    let h = Harness::new(vec![], "openai", RunOptions::default()).await;
    let dir = h.ctx.paths().config_dir.clone();
    super::harness::write(
        &dir.join("tools/keyed.md"),
        "---\nname: keyed\nendpoint: https://api.example/{{KEYED_TOKEN}}/x\nheaders:\n  X-Other: \"{{OTHER_TOKEN}}\"\n---\nKeyed.\n",
    );
    std::fs::write(dir.join(".env"), "OTHER_TOKEN=set-in-env\n").unwrap();
    h.ctx.reload_config();
    let view = engine::api::settings::view(&h.ctx);
    assert!(
        view.missing_secrets.contains(&"KEYED_TOKEN".to_string()),
        "{view:?}"
    );
    assert!(
        !view.missing_secrets.contains(&"OTHER_TOKEN".to_string()),
        "{view:?}"
    );
    assert_eq!(view.config_dir, dir.display().to_string());
    assert!(!view.profiles.is_empty());
    assert!(
        !format!("{view:?}").contains("set-in-env"),
        "no secret value is shown"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_library_is_read_deleted_and_exported_through_the_api() {
    use engine::api::artifacts::{self, ExportError, LibraryQuery};
    use engine::artifacts::{ArtifactSource, NewArtifact, StoreError};
    let h = Harness::new(vec![], "openai", RunOptions::default()).await;
    let ctx = &h.ctx;
    let store = ctx.artifact_store();
    for (conversation, id, content) in [("a", "plan", "step one\n"), ("b", "notes", "x\n")] {
        store
            .create(&NewArtifact {
                conversation_id: conversation,
                id,
                title: id,
                content_type: "text/markdown",
                source: ArtifactSource::Agent,
                content,
            })
            .unwrap();
    }
    store.rewrite("a", "plan", "step two\n").unwrap();

    // Blank search words do not filter; a conversation does.
    let blank = LibraryQuery {
        query: Some("   ".into()),
        ..Default::default()
    };
    assert_eq!(artifacts::list(ctx, blank, 10, 0).unwrap().total, 2);
    let only_a = LibraryQuery {
        conversation_id: Some("a".into()),
        ..Default::default()
    };
    let page = artifacts::list(ctx, only_a, 10, 0).unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].artifact.id, "plan");

    assert_eq!(artifacts::versions(ctx, "a", "plan").unwrap().len(), 2);
    assert_eq!(
        artifacts::view(ctx, "a", "plan", Some(1)).unwrap().content,
        "step one\n"
    );
    let bytes = artifacts::bytes(ctx, "a", "plan").unwrap();
    assert_eq!((bytes.binary, bytes.size_bytes), (false, 9));
    let file = artifacts::export(ctx, "a", "plan", None).unwrap();
    assert_eq!(
        (file.file_name.as_str(), file.version, file.bytes.as_slice()),
        ("plan.md", 2, &b"step two\n"[..])
    );
    assert!(matches!(
        artifacts::export(ctx, "a", "plan", Some(9)),
        Err(ExportError::Store(StoreError::VersionNotFound { .. }))
    ));

    artifacts::delete(ctx, "b", "notes").unwrap();
    assert!(matches!(
        artifacts::delete(ctx, "b", "notes"),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(
        artifacts::list(ctx, LibraryQuery::default(), 10, 0)
            .unwrap()
            .total,
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openapi_import_marks_the_tools_the_config_folder_already_has() {
    use engine::api::openapi::{read, ImportError};
    use tokio_util::sync::CancellationToken;
    let h = Harness::new(vec![], "openai", RunOptions::default()).await;
    let spec = r#"{"openapi": "3.0.0", "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": "https://pets.example"}],
        "paths": {
          "/echo": {"get": {"operationId": "echo", "summary": "Echo"}},
          "/pets": {"get": {"operationId": "list_pets", "summary": "List pets"}}
        }}"#;
    let selection = Default::default();
    let import = read(
        &h.ctx,
        " pets.json ",
        Some(spec.into()),
        &selection,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!((import.title.as_str(), import.total), ("Pets", 2));
    let exists: Vec<_> = import
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.exists))
        .collect();
    assert_eq!(exists, [("echo", true), ("list_pets", false)]);

    let err = read(
        &h.ctx,
        "pets.json",
        None,
        &selection,
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ImportError::NotAUrl(_)), "{err}");
    assert!(err.to_string().contains("choose a file instead"), "{err}");

    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let err = read(
        &h.ctx,
        "pets.json",
        Some(spec.into()),
        &selection,
        &cancelled,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ImportError::Cancelled), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_writes_reload_the_config_and_refuse_bad_values_without_writing() {
    use engine::api::settings;
    let h = Harness::new(vec![], "openai", RunOptions::default()).await;
    let engine = &h._engine;
    let file = h.ctx.paths().config_dir.join("settings.yaml");
    let before = std::fs::read_to_string(&file).ok();

    let err = settings::save_permission_timeout(engine, 2).unwrap_err();
    assert!(
        err.to_string().contains("between 5 and 3600 seconds"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).ok(),
        before,
        "nothing written"
    );
    settings::save_permission_timeout(engine, 90).unwrap();
    assert_eq!(h.ctx.config().settings.permission_timeout_secs, 90);

    assert!(settings::save_update_url(engine, "ftp://feed.example/latest.json").is_err());
    assert_eq!(h.ctx.config().settings.update_url, None);
    let url = settings::save_update_url(engine, " https://feed.example/latest.json ").unwrap();
    assert_eq!(url.as_deref(), Some("https://feed.example/latest.json"));
    assert_eq!(h.ctx.config().settings.update_url, url);
    assert_eq!(settings::save_update_url(engine, "  ").unwrap(), None);
    assert_eq!(h.ctx.config().settings.update_url, None);
    assert_eq!(
        h.ctx.config().settings.permission_timeout_secs,
        90,
        "other settings stay"
    );

    // Global rules: a bad one is refused; good ones are compiled and listed with an agent's.
    let rule = |tool: &str, pattern: &str| engine::rule_spec::RuleSpec {
        tool: tool.into(),
        when: [("$url".to_string(), pattern.to_string())]
            .into_iter()
            .collect(),
        action: engine::rule_spec::RuleAction::Deny,
    };
    let err = settings::save_permission_rules(engine, &[rule("echo", "re:(")]).unwrap_err();
    assert!(err.to_string().contains("bad regular expression"), "{err}");
    assert!(settings::permission_rules(&h.ctx).global.is_empty());
    settings::save_permission_rules(engine, &[rule("echo", "https://x.example/**")]).unwrap();
    let agent_file = h.ctx.paths().config_dir.join("agents/ruled.md");
    super::harness::write(
        &agent_file,
        "---\nname: ruled\ndescription: Ruled\nmodel: default\ntools:\n  echo: confirm\npermission_rules:\n  - tool: echo\n    action: allow\n---\nRuled.\n",
    );
    engine.reload_config();
    let view = settings::permission_rules(&h.ctx);
    assert_eq!(view.global.len(), 1);
    assert_eq!(
        view.global[0].spec.as_ref().map(|s| s.tool.as_str()),
        Some("echo")
    );
    let ruled: Vec<_> = view
        .agents
        .iter()
        .map(|a| (a.agent.as_str(), a.rules.len()))
        .collect();
    assert_eq!(ruled, [("ruled", 1)]);
    assert_eq!(view.agents[0].path, agent_file.display().to_string());
    assert_eq!(view.all().count(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn config_files_and_mcp_servers_are_edited_through_the_api_and_reloaded() {
    use engine::api::{editor, mcp};
    use engine::config_files::{FileError, FileKind};
    use engine::mcp::config::EditError;
    let h = Harness::new(vec![], "openai", RunOptions::default()).await;
    let engine = &h._engine;
    let tool = |name: &str| {
        format!("---\nname: {name}\nendpoint: http://127.0.0.1:9/x\n---\nA tool called {name}.\n")
    };

    // A second tool called `echo` would clash with the loaded one: refused, nothing written.
    let err = editor::save_file(engine, FileKind::Tool, None, &tool("echo"), None).unwrap_err();
    assert!(matches!(err, FileError::Invalid(_)), "{err}");
    let count = editor::files(&h.ctx, FileKind::Tool).len();
    let saved = editor::save_file(engine, FileKind::Tool, None, &tool("pinger"), None).unwrap();
    assert_eq!(editor::files(&h.ctx, FileKind::Tool).len(), count + 1);
    assert!(h.ctx.config().tools.iter().any(|t| t.spec.name == "pinger"));
    let read = editor::read_file(&h.ctx, FileKind::Tool, &saved.path).unwrap();
    assert_eq!(read.text, tool("pinger"));
    let off = editor::set_file_enabled(engine, FileKind::Tool, &saved.path, false).unwrap();
    assert!(!h.ctx.config().tools.iter().any(|t| t.spec.name == "pinger"));
    editor::delete_file(engine, FileKind::Tool, &off.path).unwrap();
    assert_eq!(editor::files(&h.ctx, FileKind::Tool).len(), count);

    // MCP servers: pasted, read back as a block, renamed, turned off, removed.
    let names = mcp::save_servers(
        engine,
        r#"{"alpha": {"command": "definitely-not-installed-xyz"}}"#,
        None,
    )
    .unwrap();
    assert_eq!(names, ["alpha"]);
    let block: serde_json::Value =
        serde_json::from_str(&mcp::server_config(engine, "alpha").unwrap()).unwrap();
    assert_eq!(
        block["mcpServers"]["alpha"]["command"],
        "definitely-not-installed-xyz"
    );
    mcp::save_servers(
        engine,
        r#"{"beta": {"command": "definitely-not-installed-xyz"}}"#,
        Some("alpha"),
    )
    .unwrap();
    assert!(matches!(
        mcp::server_config(engine, "alpha"),
        Err(EditError::Unknown(_))
    ));
    let listed = || -> Vec<String> { engine.mcp().servers().into_iter().map(|s| s.name).collect() };
    assert_eq!(listed(), ["beta"]);
    mcp::set_disabled(engine, "beta", true).unwrap();
    let block: serde_json::Value =
        serde_json::from_str(&mcp::server_config(engine, "beta").unwrap()).unwrap();
    assert_eq!(block["mcpServers"]["beta"]["disabled"], true);
    mcp::remove_server(engine, "beta").unwrap();
    assert!(listed().is_empty());
    assert!(matches!(
        mcp::remove_server(engine, "beta"),
        Err(EditError::Unknown(_))
    ));

    // A test call needs a ready MCP tool: an HTTP tool's name is not one.
    let err = mcp::test_tool(
        engine,
        "echo",
        &Default::default(),
        engine::api::direct::Asker::Now(Box::new(|_| Answer::Deny)),
        &engine::events::discard(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("no MCP tool `echo`"), "{err}");
}
