//! A skill's folder as `load_skill` and `read_skill_file` meet it on disk, through the tools
//! themselves: a link loop ends (each real folder is walked once), a named pipe is never
//! opened (opening one for reading waits for a writer forever), and a file's size is checked
//! before anything of it is read. The operations that once hung run on their own thread with
//! a 10 s watchdog, so a regression fails the test instead of hanging the suite.

use std::path::{Path, PathBuf};
use std::time::Duration;

use artifactflow_tools::skills::{load_dir, skill_tools, SkillOrigin, SkillShelf};
use artifactflow_tools::tools::{ToolContext, ToolResult};
use serde_json::json;

/// The most memory this process has held so far (Linux's `VmHWM`), in bytes: reading a file
/// whole raises it by the file's size.
#[cfg(target_os = "linux")]
fn peak_memory() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}

/// Run `work` on its own thread; fail if it has not returned within 10 s.
fn within_10s<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what} did not finish within 10 s"))
}

const SKILL_MD: &str = "---\nname: looped\ndescription: A skill with odd files.\n---\nRead it.\n";

/// A skills folder with one skill `looped`, returned with the skill's folder.
fn skills_folder(root: &Path) -> (PathBuf, PathBuf) {
    let skills = root.join("skills");
    let skill = skills.join("looped");
    std::fs::create_dir_all(skill.join("references/deep")).unwrap();
    std::fs::write(skill.join("SKILL.md"), SKILL_MD).unwrap();
    std::fs::write(skill.join("references/guide.md"), "guide").unwrap();
    std::fs::write(skill.join("references/deep/more.md"), "more").unwrap();
    (skills, skill)
}

/// The skill tools over the skills in `skills`, and one tool's result for `params`.
fn call(skills: &Path, tool: &str, params: serde_json::Value) -> ToolResult {
    let (loaded, errors) = load_dir(skills, &SkillOrigin::Config);
    assert_eq!(loaded.len(), 1, "{errors:?}");
    let shelf = SkillShelf::default();
    shelf.set_config(loaded, Vec::new(), Default::default());
    let tool = skill_tools(&shelf)
        .into_iter()
        .find(|t| t.spec().name == tool)
        .unwrap();
    let params = params.as_object().unwrap().clone();
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async move { tool.execute(params, &ToolContext::default()).await })
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

#[cfg(unix)]
#[test]
fn load_skill_ends_on_a_link_loop_and_lists_each_file_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (skills, skill) = skills_folder(tmp.path());
    // A link back up to its own parent, and one to the skill's folder itself.
    std::os::unix::fs::symlink(
        skill.join("references"),
        skill.join("references/deep/again"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&skill, skill.join("references/top")).unwrap();
    let result = within_10s("load_skill on a link loop", move || {
        call(&skills, "load_skill", json!({"skill": "looped"}))
    });
    assert!(result.success, "{result:?}");
    let listed: Vec<&str> = result
        .data
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .collect();
    assert_eq!(
        listed,
        ["references/deep/more.md", "references/guide.md"],
        "{}",
        result.data
    );
}

#[cfg(unix)]
#[test]
fn a_named_pipe_in_a_skill_is_neither_listed_nor_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let (skills, skill) = skills_folder(tmp.path());
    mkfifo(&skill.join("references/pipe.md"));
    let loaded = {
        let skills = skills.clone();
        within_10s("load_skill beside a named pipe", move || {
            call(&skills, "load_skill", json!({"skill": "looped"}))
        })
    };
    assert!(loaded.success, "{loaded:?}");
    assert!(
        !loaded.data.contains("- references/pipe.md"),
        "a pipe is not one of the skill's files: {}",
        loaded.data
    );
    assert!(
        loaded
            .data
            .contains("* `references/pipe.md` is a named pipe, not a regular file"),
        "the model is told what was left out: {}",
        loaded.data
    );
    let read = within_10s("read_skill_file of a named pipe", move || {
        call(
            &skills,
            "read_skill_file",
            json!({"skill": "looped", "path": "references/pipe.md"}),
        )
    });
    assert!(!read.success, "{read:?}");
    let error = read.error.unwrap_or_default();
    assert!(error.contains("named pipe"), "{error}");
    assert!(error.contains("references/pipe.md"), "{error}");
}

#[cfg(target_os = "linux")]
#[test]
fn an_oversized_file_is_refused_before_any_of_it_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let (skills, skill) = skills_folder(tmp.path());
    // 1 GiB, sparse: it costs no disk, and reading it whole would raise the process's peak
    // memory by 1 GiB.
    let big = std::fs::File::create(skill.join("references/huge.bin")).unwrap();
    big.set_len(1 << 30).unwrap();
    drop(big);
    let before = peak_memory();
    let read = call(
        &skills,
        "read_skill_file",
        json!({"skill": "looped", "path": "references/huge.bin"}),
    );
    let grown = peak_memory().saturating_sub(before);
    assert!(!read.success, "{read:?}");
    let error = read.error.unwrap_or_default();
    assert!(error.contains("1024 MiB"), "{error}");
    assert!(
        grown < 256 << 20,
        "the file was read before its size was checked: peak memory grew by {} MiB",
        grown >> 20
    );
}
