//! Skills served by an MCP server (the skills extension) through the engine: listed with the
//! local ones as `SERVER.NAME` and nothing read until a skill is used; loading reads and
//! verifies its SKILL.md, a file is read when asked for; a tampered SKILL.md is refused and
//! none of its files is read; a skill whose listing gives a file without a digest or a size
//! (or no files at all) is refused before anything is read; a server's skill runs no script.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use engine::engine::EngineOptions;
use engine::gate::{self, Asker, Caller, Subject};
use engine::mcp::ServerStatus;
use engine::parser::ToolCall;
use engine::paths::AppPaths;
use engine::permissions::Answer;
use engine::Engine;
use indexmap::IndexMap;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

/// An engine whose mcp.json runs the skills server in `mode`, logging its reads to `log`.
async fn open(home: &Path, log: &Path, mode: &str) -> Engine {
    everything_js(); // the same install provides the Node.js the server runs on
    let paths = AppPaths::resolve(Some(home)).unwrap();
    paths.prepare().unwrap();
    let script = test_servers_dir().join("skills-server.mjs");
    std::fs::write(
        paths.config_dir.join("mcp.json"),
        json!({"mcpServers": {"docs": {"command": "node", "args": [script, log, mode]}}})
            .to_string(),
    )
    .unwrap();
    let engine = Engine::open_with(
        paths,
        Arc::new(engine::events::discard()),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap();
    let status = engine
        .mcp()
        .wait_settled("docs", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(matches!(status, ServerStatus::Ready { .. }), "{status:?}");
    engine
}

async fn direct(engine: &Engine, tool: &str, params: &[(&str, &str)]) -> gate::CallOutcome {
    let call = ToolCall::new(
        tool,
        params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<IndexMap<_, _>>(),
    );
    let sink = engine::events::discard();
    let cancel = CancellationToken::new();
    let caller = Caller::direct(&engine.ctx, &sink, "conv-skills", &cancel, false, None);
    gate::run(
        &caller,
        Asker::Now(Box::new(|_| Answer::Approve)),
        call.id.clone(),
        Subject::Parsed(&call),
    )
    .await
}

fn reads(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn a_servers_skill_is_listed_then_read_only_when_used() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("reads.log");
    let engine = open(home.path(), &log, "good").await;
    let ctx = &engine.ctx;
    // Listed with the local ones, marked with its server; the bundled lead agent gets it.
    let listed = engine::api::skills::list(ctx);
    let skill = listed
        .skills
        .iter()
        .find(|s| s.name == "docs.pdf-processing")
        .unwrap_or_else(|| panic!("{:?}", listed.skills));
    assert_eq!(skill.source, "MCP server docs");
    assert_eq!(skill.agents, ["lead_agent"]);
    assert!(ctx
        .skills()
        .of_agent("lead_agent")
        .iter()
        .any(|(n, d)| n == "docs.pdf-processing" && d.starts_with("Extract, fill")));
    assert!(ctx.tool_registry().get("load_skill").is_some());
    let shown = engine::api::skills::show(ctx, "docs.pdf-processing").unwrap();
    assert_eq!(shown.files, ["references/FORMS.md"]);
    assert!(
        reads(&log).is_empty(),
        "nothing read ahead of need: {:?}",
        reads(&log)
    );

    let loaded = direct(&engine, "load_skill", &[("skill", "docs.pdf-processing")]).await;
    assert!(loaded.result.success, "{:?}", loaded.result);
    assert!(loaded
        .result
        .data
        .contains("Fill forms with the field names"));
    assert!(loaded.result.data.contains("- references/FORMS.md"));
    assert_eq!(reads(&log), ["skill://pdf-processing/SKILL.md"]);

    let file = direct(
        &engine,
        "read_skill_file",
        &[
            ("skill", "docs.pdf-processing"),
            ("path", "references/FORMS.md"),
        ],
    )
    .await;
    assert_eq!(
        file.result.data,
        "Field names: applicant, date, signature.\n"
    );
    assert_eq!(reads(&log).len(), 2);

    let script = direct(
        &engine,
        "run_skill_script",
        &[("skill", "docs.pdf-processing"), ("script", "scripts/x.py")],
    )
    .await;
    assert!(!script.result.success);
    assert!(
        script
            .result
            .error
            .as_deref()
            .unwrap_or("")
            .contains("its scripts do not run on this computer"),
        "{:?}",
        script.result
    );
    engine.mcp().shutdown(Duration::from_secs(5));
}

#[tokio::test]
async fn a_tampered_skill_is_not_loaded_and_none_of_its_files_is_read() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("reads.log");
    let engine = open(home.path(), &log, "tampered").await;
    let loaded = direct(&engine, "load_skill", &[("skill", "docs.pdf-processing")]).await;
    assert!(!loaded.result.success);
    let error = loaded.result.error.clone().unwrap_or_default();
    assert!(
        error.contains("does not match its listed digest"),
        "{error}"
    );
    assert!(
        !error.contains("Steal keys"),
        "the unverified text is never shown: {error}"
    );
    assert_eq!(reads(&log), ["skill://pdf-processing/SKILL.md"]);
    engine.mcp().shutdown(Duration::from_secs(5));
}

#[tokio::test]
async fn a_skill_whose_listing_cannot_verify_it_is_refused_and_none_of_its_files_is_read() {
    for (mode, unverifiable) in [
        ("no-digest", "skill://pdf-processing/references/FORMS.md"),
        ("no-size", "skill://pdf-processing/SKILL.md"),
        ("dynamic", "skill://pdf-processing/SKILL.md"),
    ] {
        let home = tempfile::tempdir().unwrap();
        let log = home.path().join("reads.log");
        let engine = open(home.path(), &log, mode).await;
        let ctx = &engine.ctx;
        // Not offered to the model, and shown on the Skills page as a problem naming the
        // server and the file.
        assert!(
            !ctx.skills()
                .of_agent("lead_agent")
                .iter()
                .any(|(n, _)| n == "docs.pdf-processing"),
            "{mode}: an unverifiable skill is not in the prompt"
        );
        let listed = engine::api::skills::list(ctx);
        assert!(
            listed
                .skills
                .iter()
                .any(|s| s.name == "docs.pdf-processing"),
            "{mode}: still listed for the user: {:?}",
            listed.skills
        );
        let problem = listed
            .problems
            .iter()
            .find(|p| p.message.contains(unverifiable))
            .unwrap_or_else(|| {
                panic!(
                    "{mode}: no problem names {unverifiable}: {:?}",
                    listed.problems
                )
            });
        assert!(problem.message.contains("`docs`"), "{mode}: {problem}");
        assert_eq!(problem.field.as_deref(), Some("mcpServers.docs"), "{mode}");

        // The model is told why, and nothing is read from the server.
        for (tool, params) in [
            ("load_skill", vec![("skill", "docs.pdf-processing")]),
            (
                "read_skill_file",
                vec![
                    ("skill", "docs.pdf-processing"),
                    ("path", "references/FORMS.md"),
                ],
            ),
        ] {
            let outcome = direct(&engine, tool, &params).await;
            assert!(
                !outcome.result.success,
                "{mode} {tool}: {:?}",
                outcome.result
            );
            let error = outcome.result.error.clone().unwrap_or_default();
            assert!(error.contains("`docs`"), "{mode} {tool}: {error}");
            assert!(error.contains(unverifiable), "{mode} {tool}: {error}");
            assert!(
                error.contains("cannot be verified"),
                "{mode} {tool}: {error}"
            );
        }
        assert!(
            reads(&log).is_empty(),
            "{mode}: nothing read: {:?}",
            reads(&log)
        );
        engine.mcp().shutdown(Duration::from_secs(5));
    }
}
