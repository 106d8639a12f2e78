//! `artifactflow-cli skills …` as a user runs it: skills written for other clients (the
//! fixtures: every optional field, nested references, Python and shell scripts, another
//! client's extra fields) load unchanged; the user-level folders only when Settings say so;
//! `check` locates each problem and exits 1; `import` takes a folder or an archive and
//! refuses one whose entries escape.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/skills")
}

/// The CLI with `home` as its home and `user_home` as the user's home folder.
fn cli(home: &Path, user_home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"))
        .env_remove("ARTIFACTFLOW_HOME")
        .env("HOME", user_home)
        .env("USERPROFILE", user_home)
        .arg("--home")
        .arg(home)
        .args(args)
        .output()
        .unwrap()
}

fn json(out: Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn names(list: &serde_json::Value) -> Vec<String> {
    list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn skills_from_other_clients_load_unchanged_and_the_user_folders_wait_for_settings() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    // Empty at first: the message says where skills go.
    let out = cli(home.path(), user.path(), &["skills", "list"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("No skills. Put a skill's folder"));

    // Each fixture is imported as a folder, unchanged.
    for name in ["csv-report", "minimal", "release-notes"] {
        let out = cli(
            home.path(),
            user.path(),
            &["skills", "import", fixtures().join(name).to_str().unwrap()],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("imported skill `{name}`")));
    }
    // A skill another app keeps in the user's home.
    let theirs = user.path().join(".claude/skills/their-skill");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(
        theirs.join("SKILL.md"),
        "---\nname: their-skill\ndescription: From another app.\n---\nHi\n",
    )
    .unwrap();

    let list = json(cli(home.path(), user.path(), &["skills", "list", "--json"]));
    assert_eq!(names(&list), ["csv-report", "minimal", "release-notes"]);
    assert_eq!(list["problems"], serde_json::json!([]));
    let csv = &list["skills"][0];
    assert_eq!(csv["license"], "Apache-2.0");
    assert_eq!(csv["metadata"]["version"], "1.2");
    assert_eq!(
        csv["agents"],
        serde_json::json!(["lead_agent"]),
        "the lead agent gets all"
    );
    assert_eq!(
        list["skills"][2]["ignored_fields"],
        serde_json::json!(["argument-hint", "disable-model-invocation", "model"])
    );

    // Turned on in settings.yaml, the user's folder counts too.
    let settings = home.path().join("config/settings.yaml");
    let mut text = std::fs::read_to_string(&settings).unwrap();
    text.push_str("\nskills:\n  user_folders: true\n  disabled: [minimal]\n");
    std::fs::write(&settings, text).unwrap();
    let list = json(cli(home.path(), user.path(), &["skills", "list", "--json"]));
    assert_eq!(
        names(&list),
        ["csv-report", "minimal", "release-notes", "their-skill"]
    );
    let theirs_view = &list["skills"][3];
    assert!(theirs_view["source"]
        .as_str()
        .unwrap()
        .ends_with(".claude/skills"));
    assert_eq!(list["skills"][1]["enabled"], false);

    let shown = cli(home.path(), user.path(), &["skills", "show", "csv-report"]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    for expected in [
        "license: Apache-2.0",
        "allowed-tools: read_skill_file run_skill_script create_artifact",
        "  references/deep/columns.md",
        "  scripts/summarize.py",
        "# CSV sales report",
    ] {
        assert!(shown.contains(expected), "{expected}: {shown}");
    }
    let out = cli(home.path(), user.path(), &["skills", "check"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("4 skills: OK"));
}

#[test]
fn check_locates_each_problem_and_the_other_skills_still_load() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let skills = home.path().join("config/skills");
    for (folder, text) in [
        ("good", "---\nname: good\ndescription: Fine.\n---\n"),
        ("Bad", "---\nname: Bad\ndescription: Upper case.\n---\n"),
        ("plain", "# no frontmatter\n"),
    ] {
        std::fs::create_dir_all(skills.join(folder)).unwrap();
        std::fs::write(skills.join(folder).join("SKILL.md"), text).unwrap();
    }
    // An agent naming a skill that does not exist (twice: one problem).
    std::fs::create_dir_all(home.path().join("config/agents")).unwrap();
    cli(home.path(), user.path(), &["status"]);
    std::fs::write(
        home.path().join("config/agents/picky.md"),
        "---\nname: picky\nskills: [good, missing, missing]\n---\nHi\n",
    )
    .unwrap();
    let out = cli(home.path(), user.path(), &["skills", "check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Bad/SKILL.md:2: field `name`"), "{err}");
    assert!(err.contains("plain/SKILL.md:1:"), "{err}");
    assert!(err.contains("picky.md:3: field `skills`"), "{err}");
    assert_eq!(err.matches("lists skill `missing`").count(), 1, "{err}");
    assert!(err.contains("3 problems; 1 skill loaded"), "{err}");
    let list = json(cli(home.path(), user.path(), &["skills", "list", "--json"]));
    assert_eq!(names(&list), ["good"]);
}

#[test]
fn an_archive_escaping_its_folder_is_refused_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let archive = home.path().join("evil.skill");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&archive).unwrap());
    for (name, content) in [
        ("evil/SKILL.md", "---\nname: evil\ndescription: x\n---\n"),
        ("evil/../../../escaped.txt", "gotcha"),
    ] {
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(content.as_bytes()).unwrap();
    }
    w.finish().unwrap();
    let out = cli(
        home.path(),
        user.path(),
        &["skills", "import", archive.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("would be written outside the skill's folder"),
        "{err}"
    );
    assert!(!home.path().join("escaped.txt").exists());
    let list = json(cli(home.path(), user.path(), &["skills", "list", "--json"]));
    assert_eq!(names(&list), Vec::<String>::new());
}

/// The CLI as [`cli`] runs it, stopped and failed if it has not finished within 10 s (a
/// regression fails the test instead of hanging the suite, and leaves no process behind).
fn cli_within_10s(home: &Path, user_home: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"))
        .env_remove("ARTIFACTFLOW_HOME")
        .env("HOME", user_home)
        .env("USERPROFILE", user_home)
        .arg("--home")
        .arg(home)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`artifactflow-cli {}` did not finish within 10 s",
                args.join(" ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn a_link_loop_or_a_named_pipe_never_holds_show_or_import() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let mkfifo = |path: &Path| {
        let made = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(made.success(), "mkfifo {}", path.display());
    };
    // A skill in the config folder with a link loop and a named pipe.
    let skill = home.path().join("config/skills/odd");
    std::fs::create_dir_all(skill.join("references")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: odd\ndescription: Odd files.\n---\nRead them.\n",
    )
    .unwrap();
    std::fs::write(skill.join("references/a.md"), "a").unwrap();
    std::os::unix::fs::symlink(skill.join("references"), skill.join("references/again")).unwrap();
    mkfifo(&skill.join("references/pipe.md"));
    let out = cli_within_10s(home.path(), user.path(), &["skills", "show", "odd"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{shown}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        shown.contains("files:\n  references/a.md\nleft out:\n"),
        "{shown}"
    );
    assert!(
        shown.contains("`references/pipe.md` is a named pipe, not a regular file"),
        "{shown}"
    );

    // A folder to import holding a named pipe: refused, naming it; nothing written.
    let source = home.path().join("piped");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(
        source.join("SKILL.md"),
        "---\nname: piped\ndescription: x\n---\n",
    )
    .unwrap();
    mkfifo(&source.join("pipe.md"));
    let out = cli_within_10s(
        home.path(),
        user.path(),
        &["skills", "import", source.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pipe.md is a named pipe"), "{err}");
    assert!(!home.path().join("config/skills/piped").exists());
}

/// The skill fixtures that load with a warning (written for other clients, past a limit of the
/// format that those clients do not enforce).
fn fixtures_with_warnings() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/skills-with-warnings")
}

/// The problems of `skills list --json`, each as `skills check` prints it.
fn problem_lines(list: &serde_json::Value) -> Vec<String> {
    list["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let problem: engine::config_error::ConfigError =
                serde_json::from_value(p.clone()).unwrap();
            problem.to_string()
        })
        .collect()
}

/// `skills check`'s problem lines (its last line is the count), after checking that every line
/// it prints ends with a newline.
fn check_lines(out: &Output) -> Vec<String> {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.ends_with('\n'), "the last line ends: {err:?}");
    let mut lines: Vec<String> = err.lines().map(str::to_string).collect();
    assert!(
        lines.pop().is_some_and(|count| count.contains(" problem")),
        "{err}"
    );
    lines
}

/// A skill whose description is longer than the format's 1,024 characters (as Anthropic's
/// `claude-api` is, at 1,068) loads, as other clients load it, with a located warning; the
/// import says so, `skills list --json` carries the warning, and `skills check` prints it once,
/// on its own line.
#[test]
fn a_skill_with_a_long_description_loads_with_a_warning_that_list_and_check_both_carry() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let fixture = fixtures_with_warnings().join("api-reference");
    let out = cli(
        home.path(),
        user.path(),
        &["skills", "import", fixture.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported skill `api-reference`"));
    let installed = home.path().join("config/skills/api-reference/SKILL.md");
    let warning = format!(
        "{}:3: field `description`: the description is 1068 characters, more than the 1024 \
         the Agent Skills format allows",
        installed.display()
    );
    assert!(err.contains(&warning), "the import warns: {err}");

    let list = json(cli(home.path(), user.path(), &["skills", "list", "--json"]));
    assert_eq!(names(&list), ["api-reference"]);
    let description = list["skills"][0]["description"].as_str().unwrap();
    assert_eq!(
        description.chars().count(),
        1068,
        "kept whole: {description}"
    );
    let listed = problem_lines(&list);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(listed[0].starts_with(&warning), "{listed:?}");
    assert!(
        listed[0].contains("the prompt's list of skills shows the start of it"),
        "{listed:?}"
    );

    let out = cli(home.path(), user.path(), &["skills", "check"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        check_lines(&out),
        listed,
        "check prints what list carries, once"
    );
    assert!(String::from_utf8_lossy(&out.stderr).ends_with("1 problem; 1 skill loaded\n"));
}

/// A skills installer keeps one copy in `~/.agents/skills` and links it from
/// `~/.claude/skills`: with the user folders on, that is one skill, loaded once, and its
/// warning is listed and printed once (not once per folder, and no "already loaded" clash).
#[cfg(unix)]
#[test]
fn one_skill_linked_from_two_user_folders_is_one_skill_with_one_warning() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let agents = user.path().join(".agents/skills");
    let claude = user.path().join(".claude/skills");
    std::fs::create_dir_all(agents.join("api-reference/references")).unwrap();
    std::fs::create_dir_all(&claude).unwrap();
    let fixture = fixtures_with_warnings().join("api-reference");
    for file in ["SKILL.md", "references/endpoints.md"] {
        std::fs::copy(fixture.join(file), agents.join("api-reference").join(file)).unwrap();
    }
    std::os::unix::fs::symlink(agents.join("api-reference"), claude.join("api-reference")).unwrap();
    cli(home.path(), user.path(), &["status"]);
    let settings = home.path().join("config/settings.yaml");
    let mut text = std::fs::read_to_string(&settings).unwrap();
    text.push_str("\nskills:\n  user_folders: true\n");
    std::fs::write(&settings, text).unwrap();

    let list = json(cli(home.path(), user.path(), &["skills", "list", "--json"]));
    assert_eq!(names(&list), ["api-reference"]);
    let listed = problem_lines(&list);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(
        listed[0].starts_with(&format!(
            "{}:3: field `description`: the description is 1068 characters",
            agents.join("api-reference/SKILL.md").display()
        )),
        "{listed:?}"
    );
    let out = cli(home.path(), user.path(), &["skills", "check"]);
    assert_eq!(check_lines(&out), listed);
}

/// A refused import names the file at fault once, with its line (not the folder, then the
/// same path again).
#[test]
fn a_refused_import_names_the_file_at_fault_once() {
    let home = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    let source = home.path().join("Upper");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(
        source.join("SKILL.md"),
        "---\ndescription: Upper case.\nname: Upper\n---\n",
    )
    .unwrap();
    let out = cli(
        home.path(),
        user.path(),
        &["skills", "import", source.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let expected = format!(
        "error: {}:3: field `name`: ",
        source.join("SKILL.md").display()
    );
    assert!(err.starts_with(&expected), "{err}");
    assert_eq!(
        err.matches(&*source.display().to_string()).count(),
        1,
        "{err}"
    );
    assert!(err.ends_with('\n') && err.lines().count() == 1, "{err:?}");
}
