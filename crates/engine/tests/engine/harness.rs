//! A test home with a scripted model, a local tool server, a runner and a recording event sink.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use engine::context::AppContext;
use engine::engine::EngineOptions;
use engine::events::EngineEvent;
use engine::interrupts::PermissionBroker;
use engine::paths::AppPaths;
use engine::permissions::Answer;
use engine::run::{RunOptions, RunOutcome, RunRequest, Runner};
use engine::Engine;
use test_support::{ScriptedModel, Turn};
use tokio_util::sync::CancellationToken;

/// How the recording sink answers permission requests.
#[derive(Debug, Clone, Copy)]
pub enum Policy {
    Ignore,
    Answer(Answer),
}

pub struct Harness {
    pub _home: tempfile::TempDir,
    /// Opened as the app opens it (without the watcher: tests reload by hand).
    pub _engine: Engine,
    pub ctx: Arc<AppContext>,
    pub runner: Arc<Runner>,
    pub model: ScriptedModel,
    pub events: Arc<Mutex<Vec<EngineEvent>>>,
    pub policy: Arc<Mutex<Policy>>,
}

/// A local HTTP API for tools: `/echo` (JSON echo), `/slow` (10 s), `/long` (60,000 chars).
async fn tool_server() -> String {
    use axum::routing::any;
    async fn echo(body: String) -> String {
        format!("{{\"echo\": {}}}", serde_json::to_string(&body).unwrap())
    }
    let app = axum::Router::new()
        .route("/echo", any(echo))
        .route(
            "/slow",
            any(|| async {
                tokio::time::sleep(Duration::from_secs(10)).await;
                "late"
            }),
        )
        .route("/long", any(|| async { "z".repeat(60_000) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

impl Harness {
    /// A fresh home whose `default` profile points at a scripted model with `turns`, with a
    /// `tester` agent using `echo` (confirm), `slow` (auto), `long` (auto) and the artifact tools.
    pub async fn new(turns: Vec<Turn>, api: &str, options: RunOptions) -> Harness {
        let home = tempfile::tempdir().unwrap();
        let model = ScriptedModel::start(turns).await;
        let tools_base = tool_server().await;
        let config = home.path().join("config");
        engine::paths::seed_config(&config).unwrap();
        let base_url = if api == "anthropic" {
            model.base_url.clone()
        } else {
            model.openai_base_url()
        };
        write(
            &config.join("models.yaml"),
            &format!("profiles:\n  - name: default\n    api: {api}\n    base_url: \"{base_url}\"\n    model: scripted\n"),
        );
        for (name, path, permission) in [
            ("echo", "/echo", "confirm"),
            ("slow", "/slow", "auto"),
            ("long", "/long", "auto"),
        ] {
            write(
                &config.join(format!("tools/{name}.md")),
                &format!("---\nname: {name}\npermission: {permission}\nmethod: POST\nendpoint: {tools_base}{path}\nparameters:\n  - name: text\n    type: string\n    required: false\n---\n"),
            );
        }
        write(
            &config.join("agents/tester.md"),
            "---\nname: tester\ndescription: Test agent\nmodel: default\ntools:\n  echo: confirm\n  slow: auto\n  long: auto\n  create_artifact: auto\n  read_artifact: auto\n  call_subagent: auto\nmax_tool_rounds: 3\n---\nYou are the tester.\n",
        );
        let events: Arc<Mutex<Vec<EngineEvent>>> = Arc::default();
        let policy = Arc::new(Mutex::new(Policy::Ignore));
        // The sink answers through the engine's broker, which exists once the engine does.
        let broker: Arc<OnceLock<Arc<PermissionBroker>>> = Arc::default();
        let sink = {
            let (events, policy, broker) = (events.clone(), policy.clone(), broker.clone());
            move |e: EngineEvent| {
                if let EngineEvent::PermissionRequest { request_id, .. } = &e {
                    if let Policy::Answer(answer) = *policy.lock().unwrap() {
                        let broker = broker.get().expect("the engine is open");
                        broker.answer(request_id, answer).unwrap();
                    }
                }
                events.lock().unwrap().push(e);
            }
        };
        let engine = Engine::open_with(
            AppPaths::resolve(Some(home.path())).unwrap(),
            Arc::new(sink),
            EngineOptions {
                run: options,
                watch: false,
                ..Default::default()
            },
        )
        .unwrap();
        let _ = broker.set(engine.broker().clone());
        let ctx = engine.ctx.clone();
        assert!(
            ctx.config_problems().is_empty(),
            "{:?}",
            ctx.config_problems()
        );
        let runner = engine.runner().clone();
        Harness {
            _home: home,
            _engine: engine,
            ctx,
            runner,
            model,
            events,
            policy,
        }
    }

    /// Set the `default` profile's `tool_calls` (`text` or `native`) and reload the config.
    pub fn set_tool_calls(&self, mode: &str) {
        self.set_profile_field("tool_calls", mode);
    }

    /// Set one field of the `default` profile (replacing it if present) and reload the config.
    pub fn set_profile_field(&self, field: &str, value: &str) {
        let path = self.ctx.paths().config_dir.join("models.yaml");
        let models = std::fs::read_to_string(&path).unwrap();
        let kept: String = models
            .lines()
            .filter(|l| !l.trim_start().starts_with(&format!("{field}:")))
            .map(|l| format!("{l}\n"))
            .collect();
        write(&path, &format!("{kept}    {field}: {value}\n"));
        self.ctx.reload_config();
        assert!(
            self.ctx.config_problems().is_empty(),
            "{:?}",
            self.ctx.config_problems()
        );
    }

    pub fn answer_with(&self, policy: Policy) {
        *self.policy.lock().unwrap() = policy;
    }

    pub async fn run(&self, agent: &str, task: &str) -> RunOutcome {
        self.run_with(agent, task, CancellationToken::new()).await
    }

    pub async fn run_with(&self, agent: &str, task: &str, cancel: CancellationToken) -> RunOutcome {
        let request = RunRequest {
            conversation_id: "conv".into(),
            agent: agent.into(),
            task: task.into(),
        };
        tokio::time::timeout(Duration::from_secs(60), self.runner.run(request, cancel))
            .await
            .expect("the run ends")
    }

    /// Run `task`, stopping the run as soon as an event matching `pred` has been recorded.
    pub async fn run_stopped_on(
        &self,
        agent: &str,
        task: &str,
        pred: impl Fn(&EngineEvent) -> bool + Send + 'static,
    ) -> RunOutcome {
        self.run_stopped_when(agent, task, move |events| events.iter().any(&pred))
            .await
    }

    /// Run `task` and stop it once the events so far satisfy `pred`.
    pub async fn run_stopped_when(
        &self,
        agent: &str,
        task: &str,
        pred: impl Fn(&[EngineEvent]) -> bool + Send + 'static,
    ) -> RunOutcome {
        let cancel = CancellationToken::new();
        let canceller = {
            let (events, cancel) = (self.events.clone(), cancel.clone());
            tokio::spawn(async move {
                while !pred(&events.lock().unwrap()) {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                cancel.cancel();
            })
        };
        let outcome = self.run_with(agent, task, cancel).await;
        canceller.await.unwrap();
        outcome
    }

    pub fn events(&self) -> Vec<EngineEvent> {
        self.events.lock().unwrap().clone()
    }

    /// The user-role messages the model received in request `n` (0-based), concatenated.
    pub fn sent_to_model(&self, n: usize) -> String {
        let requests = self.model.requests();
        let request = requests
            .get(n)
            .unwrap_or_else(|| panic!("only {} model requests", requests.len()));
        request
            .messages()
            .into_iter()
            .map(|(role, text)| format!("[{role}] {text}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn system_prompt(&self, n: usize) -> String {
        let r = &self.model.requests()[n];
        r.system().unwrap_or_else(|| {
            r.messages()
                .first()
                .map(|m| m.1.clone())
                .unwrap_or_default()
        })
    }
}

/// Wait until an event matching `pred` was recorded (the test's own timeout guards hangs).
pub async fn until_event(
    events: &Arc<Mutex<Vec<EngineEvent>>>,
    pred: impl Fn(&EngineEvent) -> bool,
) {
    while !events.lock().unwrap().iter().any(&pred) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A model answer that calls `tool` with `params`.
pub fn call(tool: &str, params: &[(&str, &str)]) -> String {
    let params: String = params
        .iter()
        .map(|(k, v)| format!("<{k}><![CDATA[{v}]]></{k}>"))
        .collect();
    format!("<tool_call><name>{tool}</name><params>{params}</params></tool_call>")
}
