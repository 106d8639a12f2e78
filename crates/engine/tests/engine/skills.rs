//! Agent Skills through full runs with the scripted model: the prompt lists only names and
//! descriptions, `load_skill` brings the instructions, `read_skill_file` a reference,
//! `run_skill_script` runs a script after approval (clean environment, timeout, capped
//! output, stopped with its process group on cancel), and an agent reaches only its skills.

use std::path::Path;

use engine::conversations::RunStatus;
use engine::events::EngineEvent;
use engine::permissions::Answer;
use engine::run::RunOptions;
use test_support::Turn;

use super::harness::{call, write, Harness, Policy};

/// The skill fixtures (written for other clients, loaded unchanged), copied into `config`.
fn copy_fixtures(config: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/skills");
    copy_dir(&from, &config.join("skills"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A harness whose config has the fixture skills and an agent `skilled` with `skills`.
async fn harness(turns: Vec<Turn>, skills: &str) -> Harness {
    let h = Harness::new(turns, "openai", RunOptions::default()).await;
    let config = h.ctx.paths().config_dir.clone();
    copy_fixtures(&config);
    write(
        &config.join("agents/skilled.md"),
        &format!(
            "---\nname: skilled\ndescription: Uses skills\nmodel: default\nskills: {skills}\n\
             tools:\n  create_artifact: auto\nmax_tool_rounds: 8\n---\nYou are skilled.\n"
        ),
    );
    h.ctx.reload_config();
    assert!(
        h.ctx.config_problems().is_empty(),
        "{:?}",
        h.ctx.config_problems()
    );
    h
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_is_loaded_read_and_its_script_run_after_approval_into_an_artifact() {
    let h = harness(
        vec![
            Turn::text(call("load_skill", &[("skill", "csv-report")])),
            Turn::text(call(
                "read_skill_file",
                &[("skill", "csv-report"), ("path", "references/format.md")],
            )),
            Turn::text(call(
                "run_skill_script",
                &[
                    ("skill", "csv-report"),
                    ("script", "scripts/summarize.py"),
                    ("args", "data/sales.csv"),
                ],
            )),
            Turn::text(call(
                "create_artifact",
                &[
                    ("id", "report"),
                    ("title", "Sales report"),
                    ("content", "Sales report\nnorth: 30\nsouth: 12\ntotal: 42"),
                ],
            )),
            Turn::text("The report is in the artifact `report`."),
        ],
        "[csv-report, minimal]",
    )
    .await;
    h.answer_with(Policy::Answer(Answer::Approve));
    let outcome = h.run("skilled", "Total these sales").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);

    // Round 1: names and descriptions only, and only the agent's skills.
    let system = h.system_prompt(0);
    assert!(
        system.contains("- csv-report: Summarise a CSV file of sales"),
        "{system}"
    );
    assert!(
        system.contains("- minimal: The smallest valid skill."),
        "{system}"
    );
    assert!(
        !system.contains("release-notes"),
        "not this agent's skill: {system}"
    );
    assert!(
        !system.contains("summarize.py"),
        "no instructions before loading: {system}"
    );
    assert!(system.contains("<tool name=\"load_skill\">"), "{system}");

    // Round 2: the instructions and the skill's files, nested references included.
    let loaded = h.sent_to_model(1);
    assert!(loaded.contains("# CSV sales report"), "{loaded}");
    for file in [
        "references/deep/columns.md",
        "references/format.md",
        "scripts/summarize.py",
        "assets/logo.png",
    ] {
        assert!(loaded.contains(&format!("- {file}")), "{file}: {loaded}");
    }
    assert!(h
        .sent_to_model(2)
        .contains("then `total: SUM` on the last line"));

    // The permission dialog showed the exact command line, folder and environment.
    let preview = h
        .events()
        .into_iter()
        .find_map(|e| match e {
            EngineEvent::PermissionRequest { request, .. } => request.request.clone(),
            _ => None,
        })
        .expect("the script asked first");
    assert_eq!(
        preview["script_command"],
        "python3 scripts/summarize.py data/sales.csv"
    );
    let folder = preview["working_folder"].as_str().unwrap();
    assert!(folder.ends_with("skills/csv-report"), "{folder}");
    assert!(preview["environment"]
        .as_str()
        .unwrap()
        .contains("no app secrets"));

    // The script's real output reached the model, then the artifact holds the report.
    let ran = h.sent_to_model(3);
    assert!(
        ran.contains("exited with code 0")
            && ran.contains("north: 30")
            && ran.contains("total: 42"),
        "{ran}"
    );
    let (_, content) = h
        .ctx
        .artifact_store()
        .content("conv", "report", None)
        .unwrap();
    assert!(content.contains("total: 42"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_script_does_not_run_and_other_skills_are_out_of_reach() {
    let h = harness(
        vec![
            Turn::text(call("load_skill", &[("skill", "release-notes")])),
            Turn::text(call(
                "read_skill_file",
                &[("skill", "minimal"), ("path", "../csv-report/SKILL.md")],
            )),
            Turn::text(call(
                "run_skill_script",
                &[("skill", "minimal"), ("script", "SKILL.md")],
            )),
            Turn::text("gave up"),
        ],
        "[minimal]",
    )
    .await;
    h.answer_with(Policy::Answer(Answer::Deny));
    assert_eq!(h.run("skilled", "notes").await.status, RunStatus::Completed);
    let refused = h.sent_to_model(1);
    assert!(
        refused.contains("there is no skill `release-notes` among yours; yours: minimal"),
        "{refused}"
    );
    assert!(
        h.sent_to_model(2).contains("without `..`"),
        "{}",
        h.sent_to_model(2)
    );
    assert!(
        h.sent_to_model(3).contains("did not allow"),
        "{}",
        h.sent_to_model(3)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_binary_file_of_a_skill_becomes_an_artifact() {
    let h = harness(
        vec![
            Turn::text(call(
                "read_skill_file",
                &[("skill", "csv-report"), ("path", "assets/logo.png")],
            )),
            Turn::text("seen"),
        ],
        "all",
    )
    .await;
    assert_eq!(h.run("skilled", "logo").await.status, RunStatus::Completed);
    let told = h.sent_to_model(1);
    assert!(
        told.contains("assets/logo.png is a binary file (image/png"),
        "{told}"
    );
    let page = h
        .ctx
        .artifact_store()
        .list(
            &engine::artifacts::ListFilter {
                conversation_id: Some("conv".into()),
                ..Default::default()
            },
            10,
            0,
        )
        .unwrap();
    let stored = page
        .items
        .iter()
        .find(|a| a.artifact.title == "csv-report: assets/logo.png")
        .unwrap_or_else(|| panic!("{:?}", page.items));
    assert_eq!(stored.artifact.content_type, "image/png");
}

/// A skill of our own whose script misbehaves.
fn misbehaving_skill(config: &Path, script: &str) {
    write(
        &config.join("skills/rogue/SKILL.md"),
        "---\nname: rogue\ndescription: Misbehaves on purpose.\n---\nRun scripts/run.sh.\n",
    );
    write(&config.join("skills/rogue/scripts/run.sh"), script);
}

async fn rogue_harness(turns: Vec<Turn>, script: &str) -> Harness {
    let h = harness(turns, "all").await;
    misbehaving_skill(&h.ctx.paths().config_dir, script);
    h.ctx.reload_config();
    h.answer_with(Policy::Answer(Answer::Approve));
    h
}

fn run_rogue(timeout: &str) -> String {
    call(
        "run_skill_script",
        &[
            ("skill", "rogue"),
            ("script", "scripts/run.sh"),
            ("timeout_secs", timeout),
        ],
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_gets_a_clean_environment_and_capped_output() {
    let h = rogue_harness(
        vec![Turn::text(run_rogue("30")), Turn::text("done")],
        // The names of its environment, then 3 MB on stdout.
        "env | cut -d= -f1 | sort | tr '\\n' ' ' >&2\nhead -c 3000000 /dev/zero | tr '\\0' x\n",
    )
    .await;
    assert_eq!(h.run("skilled", "go").await.status, RunStatus::Completed);
    // The whole result as the call gave it (the scripted model's small window cuts it later).
    let result = h
        .events()
        .into_iter()
        .find_map(|e| match e {
            EngineEvent::ToolComplete { tool, result, .. } if tool == "run_skill_script" => {
                Some(result)
            }
            _ => None,
        })
        .unwrap();
    assert!(result.contains("exited with code 0"), "{result}");
    assert!(result.len() < 50_000, "kept under the artifact threshold");
    assert!(
        result.contains("more bytes of stdout were not kept: only the first 32 KiB are"),
        "{result}"
    );
    let names = result
        .split("stderr:\n")
        .nth(1)
        .and_then(|s| s.split_whitespace().next().map(|_| s))
        .unwrap_or_default();
    assert!(names.contains("PATH"), "{names}");
    let allowed = engine::mcp::client::INHERITED_ENV;
    for name in names.split_whitespace().take_while(|n| !n.starts_with('[')) {
        let shell_own = ["PWD", "SHLVL", "_", "OLDPWD"].contains(&name);
        assert!(
            shell_own || name == "PATH" || name.starts_with("LC_") || allowed.contains(&name),
            "the script saw `{name}`: {names}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_a_script_prints_is_masked() {
    let h = rogue_harness(
        vec![Turn::text(run_rogue("30")), Turn::text("done")],
        // The config folder's .env is two folders up from the skill's.
        "cat ../../.env\n",
    )
    .await;
    write(
        &h.ctx.paths().config_dir.join(".env"),
        "SKILL_TEST_KEY=sk-live-0123456789abcdef\n",
    );
    assert_eq!(h.run("skilled", "go").await.status, RunStatus::Completed);
    let seen = h.sent_to_model(1);
    assert!(seen.contains("SKILL_TEST_KEY="), "the script ran: {seen}");
    assert!(!seen.contains("sk-live-0123456789abcdef"), "{seen}");
    let events = format!("{:?}", h.events());
    assert!(!events.contains("sk-live-0123456789abcdef"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_allows_one_skills_script_by_its_parameters() {
    let h = rogue_harness(
        vec![
            Turn::text(run_rogue("30")),
            Turn::text(call(
                "run_skill_script",
                &[
                    ("skill", "release-notes"),
                    ("script", "scripts/changelog.sh"),
                    ("args", "1.2.0"),
                ],
            )),
            Turn::text("done"),
        ],
        "echo allowed by rule\n",
    )
    .await;
    let settings = h.ctx.paths().config_dir.join("settings.yaml");
    let mut text = std::fs::read_to_string(&settings).unwrap();
    text.push_str(
        "\npermission_rules:\n  - tool: run_skill_script\n    when: { skill: rogue, script: scripts/run.sh }\n    action: allow\n",
    );
    std::fs::write(&settings, text).unwrap();
    h.ctx.reload_config();
    assert!(
        h.ctx.config_problems().is_empty(),
        "{:?}",
        h.ctx.config_problems()
    );
    h.answer_with(Policy::Answer(Answer::Deny));
    assert_eq!(h.run("skilled", "go").await.status, RunStatus::Completed);
    // The rule's script ran without a question; the other skill's script still asked.
    assert!(
        h.sent_to_model(1).contains("allowed by rule"),
        "{}",
        h.sent_to_model(1)
    );
    assert!(
        h.sent_to_model(2).contains("did not allow"),
        "{}",
        h.sent_to_model(2)
    );
    let asked: Vec<_> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            EngineEvent::PermissionRequest { request, .. } => Some(request.params.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["skill"], "release-notes");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_past_its_timeout_is_stopped_with_everything_it_started() {
    let h = rogue_harness(
        vec![Turn::text(run_rogue("1")), Turn::text("done")],
        "sleep 30 &\necho started\nwait\n",
    )
    .await;
    let started = std::time::Instant::now();
    assert_eq!(h.run("skilled", "go").await.status, RunStatus::Completed);
    assert!(started.elapsed().as_secs() < 20, "the timeout stopped it");
    let result = h.sent_to_model(1);
    assert!(
        result.contains("did not finish within 1 s and was stopped") && result.contains("started"),
        "{result}"
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_run_kills_the_script_and_its_children() {
    let h = rogue_harness(
        vec![Turn::text(run_rogue("300")), Turn::text("never")],
        "sleep 300 &\necho $! > child.pid\nwait\n",
    )
    .await;
    let pid_file = h.ctx.paths().config_dir.join("skills/rogue/child.pid");
    let watched = pid_file.clone();
    let outcome = h
        .run_stopped_when("skilled", "go", move |_| {
            std::fs::read_to_string(&watched).is_ok_and(|t| t.ends_with('\n'))
        })
        .await;
    assert_eq!(outcome.status, RunStatus::Cancelled);
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    // The group was killed: the child is gone within a moment (reaped or a zombie of init).
    let mut gone = false;
    for _ in 0..200 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if status.is_empty() || status.contains("State:\tZ") {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(gone, "the script's child {pid} still runs");
}

/// A skill folder holding a named pipe named like a config file and a link loop: loading the
/// config (and its fingerprint, which the watcher compares) never opens the pipe or follows
/// the loop for ever; the skill loads and the pipe is reported, located.
#[cfg(unix)]
#[test]
fn a_named_pipe_or_a_link_loop_in_a_skill_never_stops_a_reload() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config");
    let skill = config.join("skills/odd");
    std::fs::create_dir_all(skill.join("references")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: odd\ndescription: Odd files.\n---\nRead them.\n",
    )
    .unwrap();
    std::fs::write(skill.join("references/a.md"), "a").unwrap();
    std::os::unix::fs::symlink(skill.join("references"), skill.join("references/again")).unwrap();
    let pipe = skill.join("references/pipe.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap();
    assert!(made.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let dir = config.clone();
    std::thread::spawn(move || {
        let _ = tx.send(engine::config::load(&dir));
    });
    let snap = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("loading the config did not finish within 10 s");
    assert!(snap.skills.get("odd").is_some(), "{:?}", snap.errors);
    assert!(
        !snap.loaded_from.iter().any(|(p, _)| p == &pipe),
        "a pipe is not read for the fingerprint"
    );
    let problem = snap
        .errors
        .iter()
        .find(|e| e.file == pipe)
        .unwrap_or_else(|| panic!("the pipe is reported: {:?}", snap.errors));
    assert!(problem.message.contains("named pipe"), "{problem}");
}
