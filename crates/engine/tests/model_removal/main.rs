//! Deleting a model that profiles use and a run is answering with, as the app deletes it
//! (`engine::api::models::stop_and_remove`) and as the CLI does (`remove`): which profiles use
//! it is known before; the run in progress ends as failed with a reason that says what to do;
//! the runtime process that has the file loaded is stopped; the profiles are then marked as
//! missing their model (a typed reason in the settings view) and the next run says so.
//!
//! Real SQLite files, real model files (GGUF headers written by `test_support::gguf`) and a
//! real runtime process: a stand-in for `artifactflow-runtime` that the engine starts as it
//! starts the runtime (`ARTIFACTFLOW_RUNTIME`, `--model FILE`, its key in the environment). It
//! says it is ready and where it listens, the way the runtime does, and lives until it is
//! killed or its stdin closes; where it listens is a scripted model server on 127.0.0.1 whose
//! answer stalls midway, so the run is still streaming when the model is deleted.
//!
//! A test binary of its own: one runtime serves a process, and `ARTIFACTFLOW_RUNTIME` is set
//! before anything starts. The stand-in is a shell script, so this runs on Unix.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::api::{models, settings};
use engine::conversations::RunStatus;
use engine::engine::EngineOptions;
use engine::events::EngineEvent;
use engine::models::local::{runtime_pid, MissingModel, ProfileModel};
use engine::paths::AppPaths;
use engine::run::RunRequest;
use engine::Engine;
use test_support::{ScriptedModel, Turn};

/// The one runtime of this process is shared, and a script being written must not be open in
/// another test's child process when it is started ("text file busy"): the tests take turns.
static RUNTIME_TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A stand-in runtime in `dir` that says it listens on `port` and writes its arguments to
/// `dir/args`; `ARTIFACTFLOW_RUNTIME` names it.
fn stand_in_runtime(dir: &Path, port: u16) {
    let script = dir.join("runtime-stand-in.sh");
    let args = dir.join("args");
    write(
        &script,
        &format!(
            "#!/bin/sh\n\
             # A stand-in for artifactflow-runtime: the template check passes, a start says it\n\
             # is ready on the scripted model's port and lives until killed or its stdin closes.\n\
             if [ \"$1\" = \"--check-template\" ]; then cat >/dev/null; echo '{{\"ok\":true}}'; exit 0; fi\n\
             echo \"$@\" > '{args}'\n\
             printf '{{\"port\":{port},\"n_ctx\":4096}}\\n'\n\
             exec cat >/dev/null\n",
            args = args.display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Set once, before the first runtime starts; the tests taking turns all set the same kind
    // of value, and nothing else of this process reads it meanwhile.
    std::env::set_var("ARTIFACTFLOW_RUNTIME", &script);
}

/// Whether process `pid` is alive (signal 0 reaches it).
fn alive(pid: u32) -> bool {
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

struct Home {
    _dir: tempfile::TempDir,
    engine: Engine,
    events: Arc<Mutex<Vec<EngineEvent>>>,
    models_dir: PathBuf,
}

/// A home whose models folder holds `qwen-tiny.gguf` (used by the profiles “Local”, by name,
/// and “Coder”, by file name), `other.gguf` (“Other”) and `spare.gguf` (no profile), with a
/// cloud profile beside them and an agent for each local profile.
fn home(cloud_url: &str) -> Home {
    let dir = tempfile::tempdir().unwrap();
    let paths = AppPaths::resolve(Some(dir.path())).unwrap();
    engine::paths::seed_config(&paths.config_dir).unwrap();
    let models_dir = paths.models_dir();
    std::fs::create_dir_all(&models_dir).unwrap();
    for (file, arch) in [
        ("qwen-tiny.gguf", "qwen2"),
        ("other.gguf", "llama"),
        ("spare.gguf", "llama"),
    ] {
        std::fs::write(
            models_dir.join(file),
            test_support::gguf::tiny(arch, 4096, 15),
        )
        .unwrap();
    }
    write(
        &paths.config_dir.join("models.yaml"),
        &format!(
            "profiles:\n\
             \x20 - name: default\n    api: openai\n    base_url: \"{cloud_url}\"\n    model: scripted\n\
             \x20 - name: Local\n    api: local\n    model: qwen-tiny\n\
             \x20 - name: Coder\n    api: local\n    model: qwen-tiny.gguf\n\
             \x20 - name: Other\n    api: local\n    model: other\n"
        ),
    );
    for (agent, profile) in [("local_tester", "Local"), ("other_tester", "Other")] {
        write(
            &paths.config_dir.join(format!("agents/{agent}.md")),
            &format!(
                "---\nname: {agent}\ndescription: Test agent\nmodel: {profile}\ntools:\n  read_artifact: auto\n---\nYou test.\n"
            ),
        );
    }
    let events: Arc<Mutex<Vec<EngineEvent>>> = Arc::default();
    let sink = {
        let events = events.clone();
        move |e: EngineEvent| events.lock().unwrap().push(e)
    };
    let engine = Engine::open_with(
        paths,
        Arc::new(sink),
        EngineOptions {
            watch: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        engine.ctx.config_problems().is_empty(),
        "{:?}",
        engine.ctx.config_problems()
    );
    Home {
        _dir: dir,
        engine,
        events,
        models_dir,
    }
}

fn state_of(view: &settings::SettingsView, profile: &str) -> Option<ProfileModel> {
    view.profile_models
        .iter()
        .find(|m| m.profile == profile)
        .cloned()
}

/// An answer that streams `text` in small pieces, then stays open and silent. The pieces come
/// further apart than the engine's token batching waits (`TokenBatcher::MAX_AGE`), so the
/// first words reach the window as tokens while the answer is still "running".
fn streaming_then_silent(text: &str) -> Turn {
    Turn::text(text)
        .chunk_chars(6)
        .chunk_delay(Duration::from_millis(60))
        .stall()
}

fn port_of(model: &ScriptedModel) -> u16 {
    model
        .base_url
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("the scripted model's URL ends with its port")
}

/// Start a run of `agent` in `conversation` and wait until the runtime answers it (the
/// scripted model got its request and the first words streamed).
async fn start_streaming(
    home: &Home,
    model: &ScriptedModel,
    conversation: &str,
    agent: &str,
) -> tokio::task::JoinHandle<engine::run::RunOutcome> {
    let asked = model.requests().len();
    let run = home
        .engine
        .runs
        .start(RunRequest {
            conversation_id: conversation.into(),
            agent: agent.into(),
            task: "Tell me a long story.".into(),
        })
        .unwrap();
    let events = home.events.clone();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let streaming = model.requests().len() > asked
            && events.lock().unwrap().iter().any(|e| {
                matches!(e, EngineEvent::Token { conversation_id, .. } if conversation_id == conversation)
            });
        if streaming {
            return run;
        }
        if run.is_finished() {
            panic!("the run ended before it streamed: {:?}", run.await);
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for the answer ({} requests)",
            model.requests().len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_model_in_use_ends_its_run_stops_its_runtime_and_marks_its_profiles() {
    let _turn = RUNTIME_TURN.lock().await;
    let model = ScriptedModel::start(vec![streaming_then_silent(
        "Once upon a time, there was a lighthouse by the sea.",
    )])
    .await;
    let home = home(&model.openai_base_url());
    stand_in_runtime(home._dir.path(), port_of(&model));
    let ctx = &home.engine.ctx;
    let qwen = home.models_dir.join("qwen-tiny.gguf");

    // Before: the engine names the profiles that use it, and they have their model.
    assert_eq!(
        models::profiles_using(ctx, "qwen-tiny").unwrap(),
        ["Local", "Coder"]
    );
    assert_eq!(
        models::profiles_using(ctx, "qwen-tiny.gguf").unwrap(),
        ["Local", "Coder"]
    );
    let before = settings::view(ctx);
    assert_eq!(
        state_of(&before, "Local"),
        Some(ProfileModel {
            profile: "Local".into(),
            file: Some("qwen-tiny.gguf".into()),
            missing: None,
        })
    );
    assert_eq!(
        state_of(&before, "default"),
        None,
        "a cloud model is no file"
    );

    // A run answered by the runtime that has the file loaded.
    let run = start_streaming(&home, &model, "story", "local_tester").await;
    let pid = runtime_pid().await.expect("the runtime runs");
    assert!(alive(pid));
    let args = std::fs::read_to_string(home._dir.path().join("args")).unwrap();
    assert!(args.contains(&qwen.display().to_string()), "{args}");

    // Deleting a model nobody uses touches neither the run nor the runtime.
    let spare = models::stop_and_remove(&home.engine, "spare")
        .await
        .unwrap();
    assert!(spare.profiles.is_empty() && spare.stopped_runs.is_empty());
    assert!(!spare.runtime_stopped);
    assert_eq!(runtime_pid().await, Some(pid));
    assert_eq!(home.engine.runs.running(), ["story"]);

    // Deleting the one it runs.
    let removal = models::stop_and_remove(&home.engine, "qwen-tiny")
        .await
        .unwrap();
    assert_eq!(removal.profiles, ["Local", "Coder"]);
    assert_eq!(removal.stopped_runs, ["story"]);
    assert!(removal.runtime_stopped);
    assert!(removal.removed.contains(&qwen), "{:?}", removal.removed);
    assert!(!qwen.exists());

    // The run has ended (the removal waited for it): failed, saying why and what to do.
    let outcome = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .expect("the run had ended")
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Failed);
    let reason = outcome.error.clone().unwrap();
    for words in [
        "qwen-tiny was deleted while this run used it",
        "“Local”, “Coder”",
        "Settings",
        "send again",
    ] {
        assert!(reason.contains(words), "{words:?} in {reason}");
    }
    let stored = ctx.with_db(|c| {
        c.query_row(
            "SELECT status, error FROM runs WHERE id = ?1",
            [&outcome.run_id],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)),
        )
        .unwrap()
    });
    assert_eq!(stored, ("failed".to_string(), Some(reason.clone())));
    let ended: Vec<_> = home
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            EngineEvent::RunEnded { status, error, .. } => Some((*status, error.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(ended, [(RunStatus::Failed, Some(reason))]);
    assert!(home.engine.runs.running().is_empty());

    // Its runtime is gone, and its memory with it.
    assert_eq!(runtime_pid().await, None);
    wait_for("the runtime process to end", || !alive(pid)).await;

    // The profiles are marked as missing their model; the others are as they were.
    let after = settings::view(ctx);
    for profile in ["Local", "Coder"] {
        assert_eq!(
            state_of(&after, profile),
            Some(ProfileModel {
                profile: profile.into(),
                file: None,
                missing: Some(MissingModel::NotInstalled),
            })
        );
    }
    assert_eq!(
        state_of(&after, "Other").and_then(|m| m.file),
        Some("other.gguf".to_string())
    );

    // The next run of the profile says what is missing, without starting a runtime.
    let again = home
        .engine
        .runs
        .start(RunRequest {
            conversation_id: "story".into(),
            agent: "local_tester".into(),
            task: "Go on.".into(),
        })
        .unwrap()
        .await
        .unwrap();
    assert_eq!(again.status, RunStatus::Failed);
    let error = again.error.unwrap();
    assert!(
        error.contains("`Local`") && error.contains("not in the models folder"),
        "{error}"
    );
    assert_eq!(runtime_pid().await, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_on_another_model_is_left_alone() {
    let _turn = RUNTIME_TURN.lock().await;
    let model = ScriptedModel::start(vec![streaming_then_silent(
        "Elsewhere, a keeper lit the lamp.",
    )])
    .await;
    let home = home(&model.openai_base_url());
    stand_in_runtime(home._dir.path(), port_of(&model));

    let run = start_streaming(&home, &model, "other", "other_tester").await;
    let pid = runtime_pid().await.expect("the runtime runs");
    let removal = models::stop_and_remove(&home.engine, "qwen-tiny")
        .await
        .unwrap();
    assert_eq!(removal.profiles, ["Local", "Coder"]);
    assert!(removal.stopped_runs.is_empty());
    assert!(!removal.runtime_stopped);
    assert_eq!(
        runtime_pid().await,
        Some(pid),
        "the other model stays loaded"
    );
    assert_eq!(home.engine.runs.running(), ["other"]);

    // Stopped by the person, it is cancelled as ever (no deletion reason carried over).
    assert!(home.engine.runs.cancel("other"));
    let outcome = run.await.unwrap();
    assert_eq!(
        (outcome.status, outcome.error),
        (RunStatus::Cancelled, None)
    );
    engine::models::local::stop_serving(&home.models_dir.join("other.gguf")).await;
}

/// The CLI's removal (no runs, no runtime in its process) still says which profiles used the
/// model; the sentences name them.
#[tokio::test(flavor = "multi_thread")]
async fn removing_says_which_profiles_used_the_model() {
    let _turn = RUNTIME_TURN.lock().await;
    let home = home("http://127.0.0.1:9/v1");
    let ctx = &home.engine.ctx;
    let removal = models::remove(ctx, "qwen-tiny").unwrap();
    assert_eq!(removal.profiles, ["Local", "Coder"]);
    assert!(removal.stopped_runs.is_empty() && !removal.runtime_stopped);
    assert!(models::profiles_using(ctx, "qwen-tiny").unwrap().is_empty());
    assert_eq!(
        models::profiles_note(&removal.profiles).unwrap(),
        "The profiles “Local”, “Coder” use it; they will have no model until you pick another."
    );
    assert_eq!(
        models::profiles_note(&["Local".to_string()]).unwrap(),
        "The profile “Local” uses it; it will have no model until you pick another."
    );
    assert_eq!(models::profiles_note(&[]), None);
    assert_eq!(
        models::profiles_left_note(&removal.profiles).unwrap(),
        "The profiles “Local”, “Coder” used it; they have no model until you pick another \
         (Settings, or `model:` in models.yaml)."
    );
    let view = settings::view(ctx);
    assert_eq!(
        state_of(&view, "Coder").unwrap().missing,
        Some(MissingModel::NotInstalled)
    );
    // A profile naming a path with no file there has its own reason.
    write(
        &ctx.paths().config_dir.join("models.yaml"),
        "profiles:\n  - name: Path\n    api: local\n    model: /no/such/dir/model.gguf\n",
    );
    ctx.reload_config();
    assert_eq!(
        state_of(&settings::view(ctx), "Path").unwrap().missing,
        Some(MissingModel::FileNotFound)
    );
}
