//! "Open the folder" on a computer where no file manager opens it: the error names the folder
//! and what to do, in one sentence, not the launcher's exit status. The real opener runs, with
//! `PATH` holding only what each case needs (this test is a process of its own, so changing
//! `PATH` touches no other test).

#![cfg(target_os = "linux")]

use std::os::unix::fs::PermissionsExt;

use artifactflow_desktop::commands::open_in_file_manager;
use artifactflow_desktop::error::ErrorCode;

fn says_the_folder_and_what_to_do(dir: &std::path::Path, case: &str) {
    let err = open_in_file_manager(dir).expect_err(case);
    assert_eq!(err.code, ErrorCode::OpenFailed, "{case}");
    assert!(
        err.message.starts_with(&format!(
            "no file manager opened the folder {}: open it yourself, or set a default \
             application for folders",
            dir.display()
        )),
        "{case}: {}",
        err.message
    );
    for raw in [
        "Launcher",
        "ExitStatus",
        "exit status",
        "os error",
        "xdg-open\"",
    ] {
        assert!(
            !err.message.contains(raw),
            "{case}: {raw:?} in {}",
            err.message
        );
    }
}

#[test]
fn a_folder_no_file_manager_opens_is_named_with_what_to_do() {
    let folder = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();

    // xdg-open is there, but has no file manager to hand the folder to (it exits 3, as it does
    // on a desktop without one); no other launcher is installed.
    let xdg_open = bin.path().join("xdg-open");
    std::fs::write(&xdg_open, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&xdg_open, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::env::set_var("PATH", bin.path());
    says_the_folder_and_what_to_do(folder.path(), "xdg-open without a file manager");

    // No launcher at all.
    std::fs::remove_file(&xdg_open).unwrap();
    says_the_folder_and_what_to_do(folder.path(), "no launcher");
}
