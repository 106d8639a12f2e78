//! The context budget's cost per request (the model call excluded): on a 1,000-message
//! conversation, plan what to shorten ([`budget::plan`]: estimates, references, where to
//! condense) and build the messages sent. The goal: under 5 ms per request.
//!
//! Two windows: one where replacing older results by references is enough, one so small that
//! older turns must be condensed into a note. After the criterion groups the bench times each
//! case over many requests and prints the figure beside the goal.
//!
//! Run: `cargo bench -p artifactflow-engine --bench context_budget` (add `-- --quick` for a
//! short run).

use std::time::{Duration, Instant};

use criterion::Criterion;
use engine::models::ChatMessage;
use engine::run::budget::{self, Calibration, Entry, Kind, ResultRef};

/// Messages in the conversation: a task, then rounds of an answer and its results.
const MESSAGES: usize = 1_000;

/// A conversation of [`MESSAGES`] messages: the agent reads pages of 2,000–12,000 characters,
/// thinking a little before each call.
fn conversation() -> Vec<Entry> {
    let mut entries = vec![Entry::new(
        Kind::Task,
        "Read every page and summarise them.".into(),
        Some(1),
    )];
    let mut n = 0;
    while entries.len() < MESSAGES {
        n += 1;
        let answer = format!(
            "Page {n} next; the previous one was about topic {n}.\n<tool_call><name>page</name><params><text><![CDATA[{n}]]></text></params></tool_call>"
        );
        entries.push(Entry::new(
            Kind::Answer,
            answer,
            Some(entries.len() as i64 + 1),
        ));
        let size = 2_000 + (n * 1_237) % 10_000;
        let text: String =
            format!("PAGE {n}\n") + &"lorem ipsum dolor sit amet\n".repeat(size / 27);
        let result = ResultRef {
            call_id: format!("call_{n}_0"),
            wire_id: format!("call_{n}_0"),
            tool: "page".into(),
            success: true,
            text: text.clone(),
            artifact_id: (n % 3 == 0).then(|| format!("tool_page_{n:012}")),
        };
        let block = engine::parser::format_result("page", true, &text);
        entries.push(Entry::new(
            Kind::Results(vec![result]),
            block,
            Some(entries.len() as i64 + 1),
        ));
    }
    entries.truncate(MESSAGES);
    entries
}

const SYSTEM: usize = 3_000;

/// One request's budget work: the plan, then the messages as they are sent.
fn request(
    entries: &[Entry],
    window: u32,
    calibration: &Calibration,
) -> (budget::Plan, Vec<ChatMessage>) {
    let system = "s".repeat(SYSTEM);
    let reserve = budget::reserve_tokens(None, window);
    let plan = budget::plan(
        entries,
        budget::estimate_message(&system),
        window - reserve,
        calibration,
    );
    let mut messages = Vec::with_capacity(entries.len() + 1);
    messages.push(ChatMessage::new(engine::models::Role::System, system));
    messages.extend(entries.iter().map(Entry::message));
    (plan, messages)
}

/// (name, window in tokens, does the plan condense?)
const CASES: [(&str, u32, bool); 2] = [("references", 300_000, false), ("condense", 8_192, true)];

fn main() {
    let entries = conversation();
    assert_eq!(entries.len(), MESSAGES);
    let mut calibration = Calibration::default();
    calibration.observe(1000, 1100);
    for (name, window, condenses) in CASES {
        let (plan, _) = request(&entries, window, &calibration);
        // Broken planning is not a number worth printing.
        assert!(!plan.reference.is_empty(), "{name}: references planned");
        assert_eq!(
            plan.condense_before.is_some(),
            condenses,
            "{name}: {plan:?}"
        );
    }

    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(3));
    let mut group = c.benchmark_group("context_budget");
    for (name, window, _) in CASES {
        group.bench_function(name, |b| b.iter(|| request(&entries, window, &calibration)));
    }
    group.finish();
    c.final_summary();

    for (name, window, _) in CASES {
        let runs = 50;
        let start = Instant::now();
        for _ in 0..runs {
            std::hint::black_box(request(&entries, window, &calibration));
        }
        let per = start.elapsed() / runs;
        println!(
            "context budget per request, {MESSAGES} messages, {name}: {:.3} ms (goal < 5 ms)",
            per.as_secs_f64() * 1000.0
        );
    }
}
