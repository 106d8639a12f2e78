//! Run-loop overhead per tool round, against a zero-latency scripted model.
//!
//! Three measurements over the same local scripted OpenAI-compatible server (answers sent in one
//! SSE chunk, no delay):
//! - `run`: a whole run of an agent doing [`ROUNDS`] tool rounds (`create_artifact`, then
//!   `read_artifact` of it) and a final answer, through [`Runner`] over an [`AppContext`] in a
//!   temporary home — streaming, incremental parsing, events, permission decision, pipeline,
//!   persistence, result formatting;
//! - `model`: the same [`ROUNDS`] + 1 model requests (recorded from a run, so the same payloads
//!   and answers) sent straight through [`engine::models::client_for`];
//! - `tools`: the same tool calls straight through the tool pipeline.
//!
//! The engine's overhead per round is `(run − model − tools) / ROUNDS` (the goal: under 1 ms).
//! After the criterion groups the bench measures the three interleaved and prints that figure.
//!
//! Run: `cargo bench -p artifactflow-engine --bench run_loop`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion};
use engine::context::AppContext;
use engine::interrupts::PermissionBroker;
use engine::models::{client_for, ChatMessage, ChatModel, ChatRequest, Role};
use engine::run::{ContextModels, RunOptions, RunRequest, Runner};
use engine::tools::{pipeline, ToolRef};
use indexmap::IndexMap;
use test_support::{ScriptedModel, Turn};
use tokio_util::sync::CancellationToken;

/// The tool calls of one run, ready to execute, and the context they run in.
type ToolRun = (
    Vec<(ToolRef, IndexMap<String, String>)>,
    engine::tools::ToolContext,
);

/// Tool rounds per run.
const ROUNDS: usize = 10;

const AGENT: &str = "---\nname: bench\ndescription: Bench agent\nmodel: default\ntools:\n  create_artifact: auto\n  read_artifact: auto\nmax_tool_rounds: 50\n---\nYou are the bench agent. Keep notes as artifacts.\n";

/// The tool calls of one run: (tool, params).
fn calls() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    let mut calls = vec![(
        "create_artifact",
        vec![
            ("id", "note"),
            ("title", "Note"),
            ("content", "line one\nline two\nline three\n"),
        ],
    )];
    for _ in 1..ROUNDS {
        calls.push(("read_artifact", vec![("id", "note")]));
    }
    calls
}

/// The model's answers in one run: one call per round, then a final answer.
fn turns() -> Vec<Turn> {
    let mut turns: Vec<Turn> = calls()
        .into_iter()
        .map(|(tool, params)| {
            let params: String = params
                .iter()
                .map(|(k, v)| format!("<{k}><![CDATA[{v}]]></{k}>"))
                .collect();
            Turn::text(format!(
                "Working on it.\n<tool_call><name>{tool}</name><params>{params}</params></tool_call>"
            ))
            .chunk_chars(0)
        })
        .collect();
    turns.push(Turn::text("Done: the note is saved.").chunk_chars(0));
    turns
}

struct Bench {
    runner: Runner,
    ctx: Arc<AppContext>,
    model: ScriptedModel,
    client: Arc<dyn ChatModel>,
    /// The requests of one run, as the model received them.
    requests: Vec<ChatRequest>,
    _home: tempfile::TempDir,
    /// Last, so it is dropped after everything that runs on it.
    rt: tokio::runtime::Runtime,
}

impl Bench {
    fn new() -> Bench {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let home = tempfile::tempdir().unwrap();
        let model = rt.block_on(ScriptedModel::start(Vec::new()));
        let config = home.path().join("config");
        engine::paths::seed_config(&config).unwrap();
        std::fs::write(
            config.join("models.yaml"),
            format!(
                "profiles:\n  - name: default\n    api: openai\n    base_url: \"{}\"\n    model: scripted\n",
                model.openai_base_url()
            ),
        )
        .unwrap();
        std::fs::write(config.join("agents/bench.md"), AGENT).unwrap();
        let ctx = Arc::new(AppContext::open(Some(home.path())).unwrap());
        assert!(
            ctx.config_problems().is_empty(),
            "{:?}",
            ctx.config_problems()
        );
        let runner = Runner::new(
            ctx.clone(),
            Arc::new(ContextModels::new(ctx.clone())),
            Arc::new(PermissionBroker::new()),
            Arc::new(engine::events::discard()),
            RunOptions::default(),
        );
        let profile = ctx.config().models[0].clone();
        let client = client_for(&profile, ctx.secret_resolver());
        let mut bench = Bench {
            rt,
            _home: home,
            ctx,
            runner,
            model,
            client,
            requests: Vec::new(),
        };
        // One run to check the script works and to record what the model is sent.
        bench.run_once();
        bench.requests = bench
            .model
            .requests()
            .iter()
            .map(|r| ChatRequest {
                messages: r
                    .messages()
                    .into_iter()
                    .map(|(role, text)| {
                        let role = match role.as_str() {
                            "system" => Role::System,
                            "assistant" => Role::Assistant,
                            _ => Role::User,
                        };
                        ChatMessage::new(role, text)
                    })
                    .collect(),
                ..Default::default()
            })
            .collect();
        assert_eq!(bench.requests.len(), ROUNDS + 1);
        bench
    }

    /// One whole run of the bench agent in a new conversation.
    fn run_once(&self) {
        self.model.push_turns(turns());
        let outcome = self.rt.block_on(self.runner.run(
            RunRequest {
                conversation_id: engine::events::new_id("bench"),
                agent: "bench".into(),
                task: "Save a note, then read it back.".into(),
            },
            CancellationToken::new(),
        ));
        assert_eq!(
            outcome.final_answer.as_deref(),
            Some("Done: the note is saved."),
            "{outcome:?}"
        );
        debug_assert_eq!(self.model.remaining_turns(), 0);
    }

    /// The run's model requests, sent straight through the client.
    fn model_once(&self) {
        self.model.push_turns(turns());
        self.rt.block_on(async {
            let cancel = CancellationToken::new();
            for request in &self.requests {
                let mut sink = |_: &str| {};
                let answer = self.client.stream(request, &cancel, &mut sink).await;
                assert!(answer.is_ok(), "{answer:?}");
            }
        });
    }

    /// The tools of a new conversation (what the run loop looks up per call).
    fn tools_setup(&self) -> ToolRun {
        let conversation = engine::events::new_id("tools");
        let registry = self.ctx.conversation_registry(&conversation);
        let calls = calls()
            .into_iter()
            .map(|(tool, params)| {
                let params = params
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                (registry.get(tool).unwrap().clone(), params)
            })
            .collect();
        (calls, self.ctx.tool_context(Some(&conversation)))
    }

    /// The run's tool calls, straight through the pipeline.
    fn tools_once(&self, (calls, tool_ctx): ToolRun) {
        self.rt.block_on(async {
            for (tool, params) in &calls {
                let result = pipeline::run(tool.as_ref(), params, &tool_ctx).await;
                assert!(result.success, "{result:?}");
            }
        });
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The three measurements interleaved (so drift affects them alike), and the overhead per round.
fn summary(bench: &Bench, samples: usize) {
    let (mut run, mut model, mut tools) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..samples {
        let t = Instant::now();
        bench.run_once();
        run.push(t.elapsed());
        let t = Instant::now();
        bench.model_once();
        model.push(t.elapsed());
        let setup = bench.tools_setup();
        let t = Instant::now();
        bench.tools_once(setup);
        tools.push(t.elapsed());
    }
    let (run, model, tools) = (median(run), median(model), median(tools));
    // Part of the overhead, measured alone: the run loop looks the conversation's tool registry
    // up for the system prompt and again for each call.
    let registry = median(
        (0..samples)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(bench.ctx.conversation_registry("bench"));
                t.elapsed()
            })
            .collect(),
    );
    let overhead = run.saturating_sub(model + tools) / ROUNDS as u32;
    println!(
        "\nrun loop, {ROUNDS} tool rounds + final answer, median of {samples} interleaved samples:\n  \
         run {run:.2?} · model requests alone {model:.2?} · tools alone {tools:.2?}\n  \
         engine overhead per round: {overhead:.3?} (besides model and tools; goal < 1 ms); \
         with the tools: {:.3?}\n  \
         of which one `AppContext::conversation_registry` lookup (at least 2 per round) takes {registry:.3?}",
        run.saturating_sub(model) / ROUNDS as u32
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--test" || a == "--list");
    let bench = Bench::new();
    let mut c = Criterion::default()
        .sample_size(30)
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut g = c.benchmark_group(format!("run_loop_{ROUNDS}_rounds"));
    g.bench_function("run", |b| b.iter(|| bench.run_once()));
    g.bench_function("model_requests_alone", |b| b.iter(|| bench.model_once()));
    g.bench_function("tools_alone", |b| {
        b.iter_batched(
            || bench.tools_setup(),
            |setup| bench.tools_once(setup),
            BatchSize::SmallInput,
        )
    });
    g.finish();
    c.final_summary();
    if !quick {
        summary(&bench, 100);
    }
}
