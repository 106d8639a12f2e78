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
