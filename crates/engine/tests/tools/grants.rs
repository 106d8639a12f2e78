//! Conversation grants through the real gate: an HTTP tool's file and `.env` on disk, a real
//! SQLite file, a stand-in API on 127.0.0.1, answers through the permission broker.

use std::time::Duration;

use engine::api::direct::{call_tool, Asker};
use engine::context::AppContext;
use engine::events::{EngineEvent, EventSink};
use engine::interrupts::PermissionBroker;
use engine::permissions::grants::{self, GrantChoice};
use engine::permissions::rules::{
    self, CallFacts, DecisionInput, Rule, RuleAction, RuleOrigin, RuleSpec,
};
use engine::permissions::{Answer, PermissionRequest};
use tokio_util::sync::CancellationToken;

use crate::http_tool::params;
use crate::servers;

const CONVERSATION: &str = "conv-grants";

/// Collects events and answers each permission request through the broker with `reply`.
struct Answering<'a> {
    broker: &'a PermissionBroker,
    reply: (Answer, Option<GrantChoice>),
    asked: std::sync::Mutex<Vec<PermissionRequest>>,
}

impl EventSink for Answering<'_> {
    fn emit(&self, event: EngineEvent) {
        if let EngineEvent::PermissionRequest {
            request_id,
            request,
            ..
        } = event
        {
            self.asked.lock().unwrap().push(*request);
            let (answer, grant) = self.reply.clone();
            self.broker.answer_with(&request_id, answer, grant).unwrap();
        }
    }
}

/// Call `name` with `args` in the test conversation, answering a request with `reply`.
/// Returns whether it succeeded and the request, if it asked.
async fn call(
    ctx: &AppContext,
    name: &str,
    args: &[(&str, &str)],
    reply: (Answer, Option<GrantChoice>),
) -> (bool, Option<PermissionRequest>) {
    let broker = PermissionBroker::new();
    let sink = Answering {
        broker: &broker,
        reply,
        asked: Default::default(),
    };
    let registry = ctx.conversation_registry(CONVERSATION);
    let tool = registry.get(name).unwrap_or_else(|| panic!("{name} loads"));
    let out = call_tool(
        ctx,
        tool.as_ref(),
        &params(args),
        CONVERSATION,
        Asker::Broker {
            broker: &broker,
            timeout: Duration::from_secs(60),
            cancel: CancellationToken::new(),
        },
        true,
        &ctx.tool_context(Some(CONVERSATION)),
        &sink,
    )
    .await;
    let mut asked = sink.asked.into_inner().unwrap();
    assert!(asked.len() <= 1);
    (out.result.success, asked.pop())
}

fn write_tool(ctx: &AppContext, name: &str, endpoint: &str) {
    std::fs::write(
        ctx.paths().config_dir.join("tools").join(format!("{name}.md")),
        format!(
            "---\nname: {name}\npermission: confirm\nendpoint: \"{endpoint}\"\nparameters:\n  - name: q\n    type: string\n---\nEchoes.\n"
        ),
    )
    .unwrap();
    ctx.reload_config();
}

fn open() -> (tempfile::TempDir, AppContext) {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    ctx.with_db(|c| engine::conversations::ensure(c, CONVERSATION, "grants"))
        .unwrap();
    (home, ctx)
}

const ONCE: (Answer, Option<GrantChoice>) = (Answer::Approve, None);

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_grant_stops_applying_when_the_http_tools_host_changes() {
    let server = servers::json_api().await;
    let port = server.base.rsplit(':').next().unwrap().to_string();
    let (_home, ctx) = open();
    write_tool(&ctx, "stock_price", &format!("{}/echo", server.base));

    let (ok, asked) = call(
        &ctx,
        "stock_price",
        &[("q", "a")],
        (Answer::ApproveAlways, Some(GrantChoice::Tool)),
    )
    .await;
    let first = asked.expect("a confirm tool asks the first time");
    assert!(ok && first.grantable && first.stale_grants.is_empty());
    let proposed = first.proposed_rule.unwrap();
    assert_eq!(proposed.tool, "stock_price");
    assert_eq!(
        proposed.when.get("$host").map(String::as_str),
        Some("127.0.0.1")
    );
    let stored = ctx
        .with_db(|c| grants::for_conversation(c, CONVERSATION))
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].binding.label.as_deref(), Some("127.0.0.1"));

    let (ok, asked) = call(&ctx, "stock_price", &[("q", "b")], ONCE).await;
    assert!(ok && asked.is_none(), "the grant applies to the same host");

    // The tool's file now sends it elsewhere (the same stand-in, under another host name).
    write_tool(
        &ctx,
        "stock_price",
        &format!("http://localhost:{port}/echo"),
    );
    let (ok, asked) = call(&ctx, "stock_price", &[("q", "c")], ONCE).await;
    let again = asked.expect("the grant no longer applies: it asks again");
    assert!(ok);
    assert_eq!(
        again.stale_grants,
        ["You allowed stock_price in this conversation when it went to 127.0.0.1; it now goes to localhost"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_grant_for_a_host_held_by_a_secret_stops_applying_and_never_names_it() {
    let server = servers::json_api().await;
    let port = server.base.rsplit(':').next().unwrap().to_string();
    let (_home, ctx) = open();
    let dotenv = ctx.paths().config_dir.join(".env");
    std::fs::write(&dotenv, format!("GRANT_API_BASE={}\n", server.base)).unwrap();
    write_tool(&ctx, "quote", "{{GRANT_API_BASE}}/echo");

    let (ok, asked) = call(&ctx, "quote", &[("q", "a")], (Answer::ApproveAlways, None)).await;
    let first = asked.unwrap();
    assert!(ok);
    // The proposal leaves the secret's host out, and says so.
    let proposed = first.proposed_rule.unwrap();
    assert!(proposed.when.is_empty(), "{proposed:?}");
    assert!(first.proposal_note.unwrap().contains("GRANT_API_BASE"));
    let stored = ctx
        .with_db(|c| grants::for_conversation(c, CONVERSATION))
        .unwrap();
    assert_eq!(
        stored[0].binding.label.as_deref(),
        Some("the host from GRANT_API_BASE")
    );
    let (_, asked) = call(&ctx, "quote", &[("q", "b")], ONCE).await;
    assert!(asked.is_none());

    std::fs::write(&dotenv, format!("GRANT_API_BASE=http://localhost:{port}\n")).unwrap();
    ctx.reload_config();
    let (ok, asked) = call(&ctx, "quote", &[("q", "c")], ONCE).await;
    let again = asked.expect("the secret's host changed: it asks again");
    assert!(ok);
    let why = again.stale_grants.join("\n");
    assert!(why.contains("the host from GRANT_API_BASE"), "{why}");
    assert!(
        !why.contains("localhost") && !why.contains("127.0.0.1"),
        "a secret's host is never named: {why}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_like_this_allow_a_matching_call_and_ask_for_another() {
    let server = servers::json_api().await;
    let (_home, ctx) = open();
    write_tool(&ctx, "lookup", &format!("{}/echo", server.base));

    let rule = RuleSpec {
        tool: "lookup".into(),
        when: [
            ("$host".to_string(), "127.0.0.*".to_string()),
            ("q".to_string(), "docs-*".to_string()),
        ]
        .into_iter()
        .collect(),
        // Whatever is sent, a grant's rule only allows.
        action: RuleAction::Deny,
    };
    let (ok, asked) = call(
        &ctx,
        "lookup",
        &[("q", "docs-one")],
        (Answer::ApproveAlways, Some(GrantChoice::Rule { rule })),
    )
    .await;
    assert!(ok && asked.is_some());
    let stored = ctx
        .with_db(|c| grants::for_conversation(c, CONVERSATION))
        .unwrap();
    assert_eq!(stored[0].rule.as_ref().unwrap().action, RuleAction::Allow);

    let (ok, asked) = call(&ctx, "lookup", &[("q", "docs-two")], ONCE).await;
    assert!(ok && asked.is_none(), "a matching call runs without asking");
    let (ok, asked) = call(&ctx, "lookup", &[("q", "secrets")], ONCE).await;
    let other = asked.expect("a call the rule does not match asks");
    assert!(ok && other.stale_grants.is_empty());

    // Only in its conversation.
    ctx.with_db(|c| engine::conversations::ensure(c, "elsewhere", ""))
        .unwrap();
    let stored_elsewhere = ctx
        .with_db(|c| grants::for_conversation(c, "elsewhere"))
        .unwrap();
    assert!(stored_elsewhere.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_confirm_rule_is_not_loosened_by_a_grant() {
    let server = servers::json_api().await;
    let (_home, ctx) = open();
    write_tool(&ctx, "lookup", &format!("{}/echo", server.base));
    call(&ctx, "lookup", &[("q", "x")], (Answer::ApproveAlways, None)).await;
    let (_, asked) = call(&ctx, "lookup", &[("q", "y")], ONCE).await;
    assert!(asked.is_none(), "the whole-tool grant applies");

    // The stored grant, checked against the next call, with a confirm rule from settings.
    let registry = ctx.conversation_registry(CONVERSATION);
    let tool = registry.get("lookup").unwrap();
    let tool_ctx = ctx.tool_context(Some(CONVERSATION));
    let typed: engine::tools::Params = [("q".to_string(), serde_json::json!("z"))]
        .into_iter()
        .collect();
    let destination = tool.call_destination(&typed, &tool_ctx).await;
    let facts = CallFacts {
        tool: "lookup",
        params: &typed,
        destination: destination.as_ref(),
    };
    let binding = grants::binding_for(tool.as_ref(), destination.as_ref());
    let stored = ctx
        .with_db(|c| grants::for_conversation(c, CONVERSATION))
        .unwrap();
    let checks = grants::check(&stored, &facts, &binding);
    let confirm = Rule::new(
        RuleSpec {
            tool: "lookup".into(),
            when: Default::default(),
            action: RuleAction::Confirm,
        },
        RuleOrigin::Global {
            file: "settings.yaml".into(),
            line: 2,
        },
    )
    .unwrap();
    let decide = |rules: &[Rule]| {
        let rules: Vec<&Rule> = rules.iter().collect();
        rules::decide(&DecisionInput {
            facts,
            tool_default: tool.permission(),
            agent: None,
            rules: &rules,
            grants: &checks,
        })
    };
    assert_eq!(decide(&[]).action, RuleAction::Allow);
    let verdict = decide(std::slice::from_ref(&confirm));
    assert_eq!(verdict.action, RuleAction::Confirm);
    assert!(!verdict.grantable(), "the dialog offers no always-allow");
}

/// `web_fetch` always goes to its reader service, so "calls like this" proposes the page's
/// site (from the `url` argument, in canonical form), never the reader's host, which would
/// allow every page.
#[tokio::test(flavor = "multi_thread")]
async fn web_fetch_proposes_the_pages_site_not_the_reader() {
    let reader = servers::jina().await;
    let (_home, ctx) = open();
    std::fs::write(
        ctx.paths().config_dir.join("settings.yaml"),
        format!(
            "web_fetch:\n  endpoint: {}/\n  api_key: null\n",
            reader.base
        ),
    )
    .unwrap();
    ctx.reload_config();
    let (ok, asked) = call(
        &ctx,
        "web_fetch",
        &[("url", "HTTPS://Docs.Example.org:443/guide/intro")],
        ONCE,
    )
    .await;
    assert!(ok);
    let proposed = asked.expect("web_fetch asks").proposed_rule.unwrap();
    assert_eq!(proposed.tool, "web_fetch");
    assert_eq!(proposed.when.len(), 1, "{proposed:?}");
    assert_eq!(
        proposed.when.get("url").map(String::as_str),
        Some("https://docs.example.org/**")
    );
}
