//! Permission rules through the real gate: the precedence matrix (global rule × agent rule ×
//! conversation always-allow × default), a `$host` rule whose host comes from a secret, the
//! rules of every agent in a sub-agent chain, and located errors for rules that are ignored.

use std::time::Duration;

use engine::calls::{store, CallRecord, CallStatus};
use engine::events::EngineEvent;
use engine::permissions::Answer;
use engine::run::RunOptions;
use test_support::Turn;

use crate::harness::{call, write, Harness, Policy};

fn last_call(h: &Harness) -> CallRecord {
    h.ctx
        .with_db(|c| store::list(c, "conv"))
        .unwrap()
        .pop()
        .expect("a call was recorded")
}

fn asked(h: &Harness) -> usize {
    h.events()
        .iter()
        .filter(|e| matches!(e, EngineEvent::PermissionRequest { .. }))
        .count()
}

fn rule_yaml(action: Option<&str>) -> String {
    match action {
        None => String::new(),
        Some(a) => format!(
            "permission_rules:\n  - tool: echo\n    when: {{text: \"hi*\"}}\n    action: {a}\n"
        ),
    }
}

/// What the README's precedence says should happen: a deny wins, then a confirm, then an
/// allow, whichever file each comes from; with no rule, the default, which a conversation's
/// always-allow loosens from confirm to allow.
fn expected(global: Option<&str>, agent: Option<&str>, grant: bool, default: &str) -> &'static str {
    let rules = [global, agent];
    if rules.contains(&Some("deny")) {
        "denied"
    } else if rules.contains(&Some("confirm")) {
        "asked"
    } else if rules.contains(&Some("allow")) || default == "auto" || grant {
        "ran"
    } else {
        "asked"
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn precedence_matrix_of_global_agent_grant_and_default() {
    let h = Harness::new(
        Vec::new(),
        "openai",
        RunOptions {
            permission_timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        },
    )
    .await;
    h.answer_with(Policy::Answer(Answer::Approve));
    let config = h.ctx.paths().config_dir.clone();
    let actions = [None, Some("allow"), Some("confirm"), Some("deny")];
    let mut checked = 0;
    for global in actions {
        for agent in actions {
            for grant in [false, true] {
                for default in ["auto", "confirm"] {
                    write(&config.join("settings.yaml"), &rule_yaml(global));
                    write(
                        &config.join("agents/tester.md"),
                        &format!("---\nname: tester\nmodel: default\ntools:\n  echo: {default}\nmax_tool_rounds: 3\n{}---\nYou are the tester.\n", rule_yaml(agent)),
                    );
                    h.ctx.reload_config();
                    assert!(
                        h.ctx.config_problems().is_empty(),
                        "{:?}",
                        h.ctx.config_problems()
                    );
                    h.ctx.with_db(|c| {
                        engine::conversations::ensure(c, "conv", "").unwrap();
                        engine::conversations::set_always_allowed(c, "conv", "echo", grant)
                            .unwrap();
                    });
                    h.model.push_turns([
                        Turn::text(call("echo", &[("text", "hi there")])),
                        Turn::text("Done."),
                    ]);
                    let asked_before = asked(&h);
                    h.run("tester", "go").await;
                    let row = last_call(&h);
                    let was_asked = asked(&h) > asked_before;
                    let got = match (row.status, was_asked) {
                        (CallStatus::Denied, false) => "denied",
                        (CallStatus::Succeeded, true) => "asked",
                        (CallStatus::Succeeded, false) => "ran",
                        other => panic!("unexpected {other:?} for {global:?} {agent:?}"),
                    };
                    let case = format!(
                        "global {global:?}, agent {agent:?}, grant {grant}, default {default}"
                    );
                    assert_eq!(got, expected(global, agent, grant, default), "{case}");
                    if got == "denied" {
                        let reason = row.reason.unwrap_or_default();
                        assert!(
                            reason.starts_with("denied by rule `deny echo when {text: hi*}`"),
                            "{case}: {reason}"
                        );
                        let place = if global == Some("deny") {
                            "settings.yaml:2"
                        } else {
                            "agent tester, agents/tester.md:8"
                        };
                        assert!(reason.contains(place), "{case}: {reason}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 64);
    // A rule that does not match (another text) leaves the default: here the agent's confirm.
    write(&config.join("settings.yaml"), &rule_yaml(Some("deny")));
    h.ctx.reload_config();
    h.ctx
        .with_db(|c| engine::conversations::set_always_allowed(c, "conv", "echo", false).unwrap());
    h.model.push_turns([
        Turn::text(call("echo", &[("text", "bye")])),
        Turn::text("Done."),
    ]);
    let before = asked(&h);
    h.run("tester", "go").await;
    assert_eq!(last_call(&h).status, CallStatus::Succeeded);
    assert_eq!(asked(&h), before + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_rule_denies_a_tool_whose_host_is_a_secret_without_revealing_it() {
    let h = Harness::new(
        vec![
            Turn::text(call("hidden", &[("text", "hi")])),
            Turn::text("Done."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let config = h.ctx.paths().config_dir.clone();
    // The tool server's address, spelled with a host name only the secret knows.
    let server = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/x", axum::routing::any(|| async { "reached" }));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://localhost:{}", addr.port())
    };
    write(&config.join(".env"), &format!("API_BASE={server}\n"));
    write(
        &config.join("tools/hidden.md"),
        "---\nname: hidden\npermission: auto\nmethod: POST\nendpoint: \"{{API_BASE}}/x\"\nparameters:\n  - name: text\n    type: string\n---\n",
    );
    write(
        &config.join("agents/tester.md"),
        "---\nname: tester\nmodel: default\ntools:\n  hidden: auto\nmax_tool_rounds: 3\n---\nYou are the tester.\n",
    );
    write(
        &config.join("settings.yaml"),
        "permission_rules:\n  - tool: \"*\"\n    when: {$host: \"local*\"}\n    action: deny\n",
    );
    h.ctx.reload_config();
    assert!(
        h.ctx.config_problems().is_empty(),
        "{:?}",
        h.ctx.config_problems()
    );
    h.run("tester", "go").await;
    let row = last_call(&h);
    assert_eq!(row.status, CallStatus::Denied);
    let reason = row.reason.clone().unwrap_or_default();
    assert!(reason.contains("$host: local*"), "{reason}");
    // The model learns that a rule denied the call, not the pattern to write around.
    let to_model = h.sent_to_model(1);
    assert!(
        to_model.contains("denied by a permission rule"),
        "{to_model}"
    );
    assert!(!to_model.contains("local*"), "{to_model}");
    assert!(!row.result.contains("local*"), "{}", row.result);
    // A rule refused it, not the user: neither the model nor the card says otherwise.
    assert!(!to_model.contains("did not allow"), "{to_model}");
    assert!(!row.result.contains("did not allow"), "{}", row.result);
    // The card of a call refused before it ran shows what was refused and who refused it.
    let (params, event_reason) = h
        .events()
        .iter()
        .find_map(|e| match e {
            EngineEvent::ToolComplete {
                tool,
                params,
                reason,
                ..
            } if tool == "hidden" => Some((params.clone(), reason.clone())),
            _ => None,
        })
        .expect("the refused call's completion");
    assert_eq!(params.get("text"), row.params.get("text"));
    assert!(params.contains_key("text"), "{params:?}");
    assert_eq!(event_reason.as_deref(), Some(reason.as_str()));
    let events = format!("{:?}", h.events());
    for leak in [server.as_str(), "localhost"] {
        assert!(!reason.contains(leak), "{reason}");
        assert!(!row.result.contains(leak), "{}", row.result);
        assert!(!events.contains(leak), "{leak} in events");
        assert!(
            !h.sent_to_model(1).contains(leak),
            "{leak} sent to the model"
        );
    }
    let db = std::fs::read(&h.ctx.paths().database).unwrap();
    let wal = std::fs::read(h.ctx.paths().database.with_extension("db-wal")).unwrap_or_default();
    for bytes in [db, wal] {
        assert!(
            !bytes.windows(9).any(|w| w == b"localhost"),
            "the host reached the database"
        );
    }
}

/// The lead `tester` hands "Echo hi" to `helper`, which calls `echo`; each has one rule for
/// `echo`. Permission requests are answered by `policy`.
async fn sub_agent_harness(lead_rule: &str, sub_rule: &str, policy: Policy) -> Harness {
    let h = Harness::new(
        vec![
            Turn::text(call(
                "call_subagent",
                &[("agent_name", "helper"), ("instruction", "Echo hi")],
            )),
            Turn::text(call("echo", &[("text", "hi")])),
            Turn::text("Helper done."),
            Turn::text("Lead done."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    h.answer_with(policy);
    let config = h.ctx.paths().config_dir.clone();
    write(
        &config.join("agents/tester.md"),
        &format!("---\nname: tester\nmodel: default\ntools:\n  echo: confirm\n  call_subagent: auto\nmax_tool_rounds: 3\npermission_rules:\n  - {{tool: echo, action: {lead_rule}}}\n---\nLead.\n"),
    );
    write(
        &config.join("agents/helper.md"),
        &format!("---\nname: helper\ndescription: Echoes\nmodel: default\ntools:\n  echo: confirm\nmax_tool_rounds: 3\npermission_rules:\n  - {{tool: echo, action: {sub_rule}}}\n---\nHelper.\n"),
    );
    h.ctx.reload_config();
    assert!(
        h.ctx.config_problems().is_empty(),
        "{:?}",
        h.ctx.config_problems()
    );
    h.run("tester", "go").await;
    h
}

fn echo_call(h: &Harness) -> CallRecord {
    let rows = h.ctx.with_db(|c| store::list(c, "conv")).unwrap();
    rows.into_iter()
        .find(|r| r.tool == "echo")
        .expect("the helper called echo")
}

async fn sub_agent_run(lead_rule: &str, sub_rule: &str) -> CallRecord {
    // Nobody answers: a call that asks would wait; every call here is decided by a rule.
    let h = sub_agent_harness(lead_rule, sub_rule, Policy::Ignore).await;
    assert_eq!(asked(&h), 0, "a rule decided every call");
    echo_call(&h)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leads_deny_follows_the_work_it_hands_over() {
    // The sub-agent's own deny.
    let denied = sub_agent_run("allow", "deny").await;
    assert_eq!(
        (denied.agent.as_str(), denied.status),
        ("helper", CallStatus::Denied)
    );
    assert!(denied
        .reason
        .unwrap()
        .contains("agent helper, agents/helper.md"));
    // The lead's deny applies to the call its sub-agent makes, whatever the sub-agent allows,
    // and the reason names the lead's rule.
    let by_lead = sub_agent_run("deny", "allow").await;
    assert_eq!(
        (by_lead.agent.as_str(), by_lead.status),
        ("helper", CallStatus::Denied)
    );
    let reason = by_lead.reason.unwrap();
    assert!(
        reason.contains("agent tester, agents/tester.md"),
        "{reason}"
    );
    assert!(!by_lead.result.contains("tester.md"), "{}", by_lead.result);
    // When every agent in the chain allows it, it runs.
    let ran = sub_agent_run("allow", "allow").await;
    assert_eq!(
        (ran.agent.as_str(), ran.status),
        ("helper", CallStatus::Succeeded)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leads_confirm_asks_for_its_sub_agents_call_and_the_dialog_shows_the_chain() {
    let h = sub_agent_harness("confirm", "allow", Policy::Answer(Answer::Deny)).await;
    let (chain, request) = h
        .events()
        .into_iter()
        .find_map(|e| match e {
            EngineEvent::PermissionRequest {
                agent_chain,
                request,
                ..
            } => Some((agent_chain, request)),
            _ => None,
        })
        .expect("the lead's confirm rule asks, though the helper allows echo");
    assert_eq!(chain, ["tester", "helper"]);
    assert!(!request.grantable, "a rule that asks every time");
    let rule = request.asking_rule.unwrap();
    assert!(rule.contains("agent tester, agents/tester.md"), "{rule}");
    assert_eq!(echo_call(&h).status, CallStatus::Denied);
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_rules_are_located_ignored_and_the_rest_still_loads() {
    let h = Harness::new(Vec::new(), "openai", RunOptions::default()).await;
    let config = h.ctx.paths().config_dir.clone();
    write(
        &config.join("settings.yaml"),
        "permission_timeout_secs: 7\npermission_rules:\n  - tool: nope\n    action: deny\n  - tool: echo\n    when: {txt: x}\n    action: deny\n  - tool: \"ec[ho\"\n    action: deny\n  - tool: echo\n    when: {text: \"re:(\"}\n    action: deny\n  - tool: echo\n    action: confirm\n",
    );
    write(
        &config.join("agents/tester.md"),
        "---\nname: tester\nmodel: default\ntools:\n  echo: confirm\npermission_rules:\n  - tool: slow\n    action: deny\n  - tool: missing_tool\n    action: allow\n---\nTester.\n",
    );
    h.ctx.reload_config();
    assert_eq!(h.ctx.config().settings.permission_timeout_secs, 7);
    assert!(h.ctx.config().agents.iter().any(|a| a.name == "tester"));
    let problems: Vec<(String, Option<u32>, String)> = h
        .ctx
        .config_problems()
        .into_iter()
        .map(|p| (p.file.display().to_string(), p.line, p.message))
        .collect();
    let expect = [
        ("settings.yaml", 3, "there is no tool `nope`"),
        ("settings.yaml", 5, "parameter `txt`"),
        ("settings.yaml", 8, "bad glob"),
        ("settings.yaml", 10, "bad regular expression"),
        ("agents/tester.md", 9, "there is no tool `missing_tool`"),
    ];
    assert_eq!(problems.len(), expect.len(), "{problems:#?}");
    for ((file, line, message), (want_file, want_line, want)) in problems.iter().zip(expect) {
        assert!(file.ends_with(want_file), "{file}");
        assert_eq!(*line, Some(want_line), "{message}");
        assert!(
            message.contains(want) && message.ends_with("this rule is ignored"),
            "{message}"
        );
    }
    // The valid ones apply: the global confirm, then the agent's deny of `slow`.
    let compiled = h.ctx.permission_rules();
    let rules = compiled.for_caller(Some("tester"));
    let kept: Vec<(&str, u32)> = rules
        .iter()
        .map(|r| {
            (
                r.spec.tool.as_str(),
                match &r.origin {
                    engine::permissions::rules::RuleOrigin::Global { line, .. }
                    | engine::permissions::rules::RuleOrigin::Agent { line, .. } => *line,
                    _ => 0,
                },
            )
        })
        .collect();
    assert_eq!(kept, [("echo", 13), ("slow", 7)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn saving_global_rules_keeps_other_keys_and_refuses_a_bad_rule() {
    use engine::permissions::rules::{RuleAction, RuleSpec};
    let h = Harness::new(Vec::new(), "openai", RunOptions::default()).await;
    let file = h.ctx.paths().config_dir.join("settings.yaml");
    write(
        &file,
        "# my settings\npermission_timeout_secs: 9 # short\npermission_rules:\n  - {tool: echo, action: deny}\n# the feed\nupdate_url: https://example.com/feed.json\n",
    );
    h.ctx.reload_config();
    let spec = |tool: &str, when: &[(&str, &str)], action| RuleSpec {
        tool: tool.into(),
        when: when
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        action,
    };
    let good = [
        spec("echo", &[("text", "hi*")], RuleAction::Allow),
        spec("*", &[("$host", "*.internal")], RuleAction::Deny),
    ];
    h.ctx.save_global_permission_rules(&good).unwrap();
    h.ctx.reload_config();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("# my settings\npermission_timeout_secs: 9 # short\n"),
        "{text}"
    );
    assert!(
        text.ends_with("# the feed\nupdate_url: https://example.com/feed.json\n"),
        "{text}"
    );
    let loaded: Vec<_> = h
        .ctx
        .permission_rules()
        .global
        .iter()
        .map(|e| (e.spec.clone().unwrap(), e.line(), e.error.clone()))
        .collect();
    assert_eq!(
        loaded,
        [(good[0].clone(), 4, None), (good[1].clone(), 8, None)]
    );

    let bad = [
        good[0].clone(),
        spec("echo", &[("txt", "x")], RuleAction::Deny),
        spec("ec[ho", &[], RuleAction::Deny),
    ];
    let err = h.ctx.save_global_permission_rules(&bad).unwrap_err();
    let problems = err.errors();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(problems[0].field.as_deref(), Some("permission_rules[1]"));
    assert!(
        problems[0].message.contains("parameter `txt`"),
        "{}",
        problems[0].message
    );
    assert!(
        problems[1].message.contains("bad glob"),
        "{}",
        problems[1].message
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        text,
        "nothing written"
    );
    h.ctx.save_global_permission_rules(&[]).unwrap();
    assert!(!std::fs::read_to_string(&file)
        .unwrap()
        .contains("permission_rules"));
}

/// The rules are compiled when their inputs change, not per call: calls through the gate use
/// the rules compiled at the last reload (the same compiled set before and after them), and a
/// reload or a change of the MCP tools compiles them again, with what changed.
#[tokio::test(flavor = "multi_thread")]
async fn rules_are_compiled_when_the_config_changes_not_per_call() {
    let h = Harness::new(Vec::new(), "openai", RunOptions::default()).await;
    let config = h.ctx.paths().config_dir.clone();
    write(&config.join("settings.yaml"), &rule_yaml(Some("deny")));
    h.ctx.reload_config();
    let compiled = h.ctx.permission_rules();
    h.model.push_turns([
        Turn::text(call("echo", &[("text", "hi there")])),
        Turn::text("Done."),
    ]);
    h.run("tester", "go").await;
    assert_eq!(last_call(&h).status, CallStatus::Denied);
    assert!(
        std::sync::Arc::ptr_eq(&compiled, &h.ctx.permission_rules()),
        "a call compiled the rules again"
    );

    write(&config.join("settings.yaml"), &rule_yaml(Some("allow")));
    h.ctx.reload_config();
    let reloaded = h.ctx.permission_rules();
    assert!(!std::sync::Arc::ptr_eq(&compiled, &reloaded));
    let actions: Vec<_> = reloaded
        .for_caller(None)
        .iter()
        .map(|r| r.spec.action)
        .collect();
    assert_eq!(actions, [engine::permissions::rules::RuleAction::Allow]);

    // The MCP tools are inputs too (a rule naming a server's tool is checked against them).
    h.ctx.set_mcp_tools(Vec::new());
    assert!(!std::sync::Arc::ptr_eq(
        &reloaded,
        &h.ctx.permission_rules()
    ));
}
