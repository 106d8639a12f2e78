//! `artifactflow-cli mcp list|tools|call` against the real server-everything (installed in
//! `tests/mcp` by `scripts/setup.sh --test`), started with a minimal PATH as a macOS app is.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn everything_js() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "server-everything is not installed at {}: run `scripts/setup.sh --test` (or `npm ci --prefix tests/mcp`)",
        path.display()
    );
    path
}

fn cli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME").arg("--home").arg(home);
    cmd
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out: Output = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn home_with_everything() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(
        home.path().join("config/mcp.json"),
        serde_json::json!({"mcpServers": {
            "everything": {"command": "node", "args": [everything_js(), "stdio"]},
            "off": {"command": "node", "disabled": true}
        }})
        .to_string(),
    )
    .unwrap();
    home
}

#[test]
fn list_tools_and_call() {
    let home = home_with_everything();
    let (ok, out, err) = run(cli(home.path()).args(["mcp", "list"]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("everything"), "{out}");
    assert!(out.contains("ready ("), "{out}");
    assert!(out.contains("disabled"), "{out}");

    let (ok, out, err) = run(cli(home.path()).args(["mcp", "tools", "everything"]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("everything.echo  [confirm"), "{out}");
    assert!(out.contains("<tool name=\"everything.get-sum\">"), "{out}");

    let (ok, out, err) = run(cli(home.path()).args([
        "mcp",
        "call",
        "everything.echo",
        "message=hello from the cli",
        "--yes",
    ]));
    assert!(ok, "{out}{err}");
    assert!(out.contains("Echo: hello from the cli"), "{out}");

    // Without --yes and without a terminal: not allowed, exit 1.
    let (ok, out, _) = run(cli(home.path()).args(["mcp", "call", "everything.echo", "message=x"]));
    assert!(!ok);
    assert!(out.contains("did not allow"), "{out}");
}

/// Started with a PATH that has no node (a macOS app's), the command is found through the
/// login shell's PATH and the status says so.
#[test]
fn a_minimal_path_is_completed_by_the_login_shell() {
    let home = home_with_everything();
    let node = which_node();
    let shell = home.path().join("login-shell");
    std::fs::write(
        &shell,
        format!(
            "#!/bin/sh\nprintf %s \"{}:/bin\"\n",
            node.parent().unwrap().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let empty = home.path().join("empty-bin");
    std::fs::create_dir(&empty).unwrap();
    let (ok, out, err) = run(cli(home.path())
        .args(["mcp", "list"])
        .env("PATH", &empty)
        .env("SHELL", &shell));
    assert!(ok, "{out}{err}");
    assert!(out.contains("ready ("), "{out}");
    assert!(
        out.contains(&format!(
            "command: {} (found through the login shell's PATH)",
            node.display()
        )),
        "{out}"
    );
}

fn which_node() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("node"))
        .find(|p| p.is_file())
        .expect("node is installed")
}
