//! A runaway model stream (a line that never ends, an event that never dispatches, an answer
//! that never stops) ends the run with an error naming the limit, the partial answer stored.

use engine::conversations::RunStatus;
use engine::run::RunOptions;
use test_support::{FloodShape, Turn};

use crate::harness::{write, Harness};

const MIB: u64 = 1024 * 1024;

/// The stored messages of the test conversation, as `(role, content)`.
fn stored(h: &Harness) -> Vec<(String, String)> {
    h.ctx
        .with_db(|c| engine::conversations::messages(c, "conv"))
        .unwrap()
        .into_iter()
        .map(|m| (m.role, m.content))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endless_line_or_event_fails_the_run_naming_the_limit_and_keeps_the_partial_answer() {
    for (api, shape, field) in [
        ("openai", FloodShape::Line, "max_line_bytes"),
        ("anthropic", FloodShape::Event, "max_event_bytes"),
    ] {
        // Well past the default limit (1 MiB a line, 4 MiB an event); the client stops early.
        let turn = Turn::text("Partial answer so far.").flood(shape, 64 * MIB);
        let h = Harness::new(vec![turn], api, RunOptions::default()).await;
        let outcome = h.run("tester", "Answer at length.").await;
        assert_eq!(outcome.status, RunStatus::Failed, "{api}: {outcome:?}");
        let error = outcome.error.unwrap();
        assert!(error.contains(&format!("`{field}`")), "{api}: {error}");
        assert!(error.contains("profile `default`"), "{api}: {error}");
        assert!(error.contains("models.yaml"), "{api}: {error}");
        assert_eq!(
            stored(&h).last().cloned(),
            Some(("assistant".into(), "Partial answer so far.".into())),
            "{api}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_past_its_profile_limit_fails_the_run_and_keeps_what_fit() {
    let long = "word ".repeat(2000);
    let h = Harness::new(
        vec![Turn::text(long.clone()).chunk_chars(100)],
        "openai",
        RunOptions::default(),
    )
    .await;
    let config = h.ctx.paths().config_dir.clone();
    let models = std::fs::read_to_string(config.join("models.yaml")).unwrap();
    write(
        &config.join("models.yaml"),
        &format!("{models}    limits:\n      max_answer_bytes: 2048\n"),
    );
    h.ctx.reload_config();
    assert!(
        h.ctx.config_problems().is_empty(),
        "{:?}",
        h.ctx.config_problems()
    );

    let outcome = h.run("tester", "Answer at length.").await;
    assert_eq!(outcome.status, RunStatus::Failed, "{outcome:?}");
    let error = outcome.error.unwrap();
    assert!(
        error.contains(
            "an answer longer than 2 KiB (limit `max_answer_bytes` of profile `default`)"
        ),
        "{error}"
    );
    let (role, partial) = stored(&h).last().cloned().unwrap();
    assert_eq!(role, "assistant");
    assert!(
        !partial.is_empty() && partial.len() <= 2048 && long.starts_with(&partial),
        "{} bytes stored",
        partial.len()
    );
}
