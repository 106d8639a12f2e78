//! Permission decisions: 1,000 calls decided against 200 rules (global and an agent's), the
//! way `artifactflow-cli permissions check` and the gate decide them. The rules are compiled
//! when the config loads; a decision only matches them.
//!
//! Run: `cargo bench -p artifactflow-engine --bench permissions`.

use criterion::{criterion_group, criterion_main, Criterion};
use engine::context::AppContext;
use indexmap::IndexMap;

/// Rules in `settings.yaml`.
const GLOBAL_RULES: usize = 150;
/// Rules in the agent's frontmatter.
const AGENT_RULES: usize = 50;
/// Calls per measured iteration.
const CALLS: usize = 1_000;

fn setup() -> (tempfile::TempDir, AppContext) {
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    let config = ctx.paths().config_dir.clone();
    let mut settings = String::from("permission_rules:\n");
    for i in 0..GLOBAL_RULES {
        // Globs and regular expressions on the URL, the host and the method, none of which
        // matches the calls below: every rule is tried.
        let when = match i % 3 {
            0 => format!("url: \"https://intranet-{i}.example.com/**\""),
            1 => format!("$host: \"*.site-{i}.example\""),
            _ => format!("url: \"re:https://[a-z]+\\\\.host{i}\\\\.example/.*\""),
        };
        settings.push_str(&format!(
            "  - tool: web_fetch\n    when: {{{when}}}\n    action: deny\n"
        ));
    }
    std::fs::write(config.join("settings.yaml"), settings).unwrap();
    let mut agent = String::from(
        "---\nname: bencher\ndescription: bench\nmodel: default\ntools:\n  web_fetch: confirm\npermission_rules:\n",
    );
    for i in 0..AGENT_RULES {
        agent.push_str(&format!(
            "  - {{tool: \"web_*\", when: {{url: \"https://docs-{i}.example.org/**\"}}, action: allow}}\n"
        ));
    }
    agent.push_str("---\nBench.\n");
    std::fs::write(config.join("agents/bencher.md"), agent).unwrap();
    ctx.reload_config();
    let problems = ctx.config_problems();
    assert!(problems.is_empty(), "{problems:?}");
    (home, ctx)
}

fn bench_decisions(c: &mut Criterion) {
    let (_home, ctx) = setup();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let calls: Vec<IndexMap<String, String>> = (0..CALLS)
        .map(|i| {
            IndexMap::from([(
                "url".to_string(),
                format!("https://docs.rs/crate-{i}/latest/index.html"),
            )])
        })
        .collect();
    let verdict = rt
        .block_on(engine::api::check::check(
            &ctx,
            "web_fetch",
            &calls[0],
            Some("bencher"),
        ))
        .unwrap();
    assert_eq!(
        engine::api::check::explain(&verdict),
        "no rule matched: the agent's default permission `confirm`"
    );
    let mut group = c.benchmark_group("permissions");
    group.sample_size(20);
    group.bench_function("1000_calls_200_rules", |b| {
        b.iter(|| {
            rt.block_on(async {
                for raw in &calls {
                    engine::api::check::check(&ctx, "web_fetch", raw, Some("bencher"))
                        .await
                        .unwrap();
                }
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench_decisions);
criterion_main!(benches);
