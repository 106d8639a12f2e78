use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::context::AppContext;
use engine::events::EngineEvent;
use engine::watcher::ConfigWatcher;
use engine::Engine;

/// Poll `cond` until it holds (generous limit: a failing watcher fails the test, a slow machine
/// does not).
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    start.elapsed()
}

#[test]
fn changes_are_live_and_a_broken_file_keeps_its_last_good_version() {
    let home = tempfile::tempdir().unwrap();
    let ctx = Arc::new(AppContext::open(Some(home.path())).unwrap());
    let events: Arc<Mutex<Vec<EngineEvent>>> = Arc::default();
    let sink = {
        let events = events.clone();
        move |e: EngineEvent| events.lock().unwrap().push(e)
    };
    let _watcher = ConfigWatcher::start(ctx.clone(), Arc::new(sink)).unwrap();
    let reloads = || {
        events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                EngineEvent::ConfigReloaded { errors } => Some(errors.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let file = ctx.paths().config_dir.join("tools/quote.md");
    let has_quote = |ctx: &AppContext| {
        ctx.tool_registry()
            .get("quote")
            .map(|t| t.spec().description.clone())
    };

    // A new tool appears without a restart.
    engine::config::write_atomically(
        &file,
        b"---\nname: quote\nendpoint: http://127.0.0.1:9/\n---\nVersion one.\n",
    )
    .unwrap();
    let added = wait_until("the new tool", || has_quote(&ctx).is_some());
    assert_eq!(has_quote(&ctx).as_deref(), Some("Version one."));

    // A broken save keeps version one active and reports the problem with its location.
    let before = reloads().len();
    std::fs::write(
        &file,
        "---\nname: quote\nendpoint: http://127.0.0.1:9/\nmethod: FETCH\n---\nVersion two.\n",
    )
    .unwrap();
    wait_until("a reload reporting the error", || {
        reloads()
            .iter()
            .skip(before)
            .any(|errors| errors.iter().any(|e| e.file == file && e.line == Some(4)))
    });
    assert_eq!(
        has_quote(&ctx).as_deref(),
        Some("Version one."),
        "last good version stays"
    );
    assert!(ctx.status().config_errors.iter().any(|e| e.file == file));

    // Fixing it makes the new version live and clears the error.
    std::fs::write(
        &file,
        "---\nname: quote\nendpoint: http://127.0.0.1:9/\n---\nVersion three.\n",
    )
    .unwrap();
    let fixed = wait_until("the fixed version", || {
        has_quote(&ctx).as_deref() == Some("Version three.")
    });
    wait_until("an error-free reload", || {
        reloads().last().is_some_and(|e| e.is_empty())
    });

    // Reading the config folder (as every reload does) is not a change: no reload loop.
    let settled = reloads().len();
    for _ in 0..3 {
        let _ = engine::config::load(&ctx.paths().config_dir);
        std::thread::sleep(engine::watcher::DEBOUNCE * 3);
    }
    assert_eq!(reloads().len(), settled, "reads must not trigger reloads");

    // Agents reload the same way.
    std::fs::remove_file(ctx.paths().config_dir.join("agents/crawl_agent.md")).unwrap();
    wait_until("the removed agent to go", || {
        ctx.status().agents_loaded == 2
    });
    eprintln!(
        "reload latency (debounce {:?} included): new file {added:?}, fixed file {fixed:?}",
        engine::watcher::DEBOUNCE
    );
}

/// An in-app save is reloaded and announced once: the save's reload and the watcher's take
/// one path, so the watcher, catching up with the same write, finds no change (it used to
/// reload and announce it a second time).
#[test]
fn a_save_from_the_app_is_reloaded_and_announced_once() {
    let home = tempfile::tempdir().unwrap();
    let events: Arc<Mutex<Vec<EngineEvent>>> = Arc::default();
    let sink = {
        let events = events.clone();
        move |e: EngineEvent| events.lock().unwrap().push(e)
    };
    let paths = engine::paths::AppPaths::resolve(Some(home.path())).unwrap();
    let engine = Engine::open(paths, Arc::new(sink)).unwrap();
    let watcher = engine.watcher().expect("hot reload is on");
    let before = watcher.handled();

    let mut settings = engine.ctx.config().settings.clone();
    settings.permission_timeout_secs += 7;
    engine::config::edit::save_settings(&engine.ctx.paths().config_dir, &settings).unwrap();
    let status = engine.reload_config();
    wait_until("the watcher to see the save", || watcher.handled() > before);

    let reloads = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, EngineEvent::ConfigReloaded { .. }))
        .count();
    assert_eq!(reloads, 1, "one save, one reload event");
    assert!(
        status.config_errors.is_empty(),
        "{:?}",
        status.config_errors
    );
    assert_eq!(
        engine.ctx.config().settings.permission_timeout_secs,
        settings.permission_timeout_secs
    );
}

#[test]
fn a_new_skill_is_live_and_a_broken_save_keeps_its_last_good_version() {
    let home = tempfile::tempdir().unwrap();
    let ctx = Arc::new(AppContext::open(Some(home.path())).unwrap());
    let sink = |_: EngineEvent| {};
    let _watcher = ConfigWatcher::start(ctx.clone(), Arc::new(sink)).unwrap();
    let file = ctx.paths().config_dir.join("skills/notes/SKILL.md");
    let description = |ctx: &AppContext| {
        ctx.config()
            .skills
            .get("notes")
            .map(|s| s.description.clone())
    };
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    engine::config::write_atomically(&file, b"---\nname: notes\ndescription: One.\n---\nBody\n")
        .unwrap();
    wait_until("the new skill", || description(&ctx).is_some());
    // The bundled lead agent takes every skill, so it now has the skill tools.
    assert!(ctx.tool_registry().get("load_skill").is_some());
    let lead = ctx
        .config()
        .agents
        .iter()
        .find(|a| a.name == "lead_agent")
        .cloned();
    assert!(lead.unwrap().tools.contains_key("load_skill"));

    std::fs::write(&file, "---\nname: Notes!\ndescription: Two.\n---\n").unwrap();
    wait_until("the error", || {
        ctx.config_problems()
            .iter()
            .any(|e| e.file == file && e.line == Some(2))
    });
    assert_eq!(
        description(&ctx).as_deref(),
        Some("One."),
        "last good version stays"
    );

    std::fs::write(&file, "---\nname: notes\ndescription: Two.\n---\n").unwrap();
    wait_until("the fixed skill", || {
        description(&ctx).as_deref() == Some("Two.")
    });
    assert!(
        ctx.config_problems().is_empty(),
        "{:?}",
        ctx.config_problems()
    );
}
