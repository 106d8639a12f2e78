//! `artifactflow-cli tools import-openapi`, from a file and from a URL.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../engine/tests/fixtures/openapi")
        .join(name)
}

fn cli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_artifactflow-cli"));
    cmd.env_remove("ARTIFACTFLOW_HOME").arg("--home").arg(home);
    cmd.env(
        "ARTIFACTFLOW_KEYRING_SERVICE",
        format!("artifactflow-cli-test-{}", std::process::id()),
    );
    cmd
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_file_imports_into_the_config_tools_folder_and_nothing_is_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let tools = home.join("config/tools");
    let dry = ok(cli(home)
        .args(["tools", "import-openapi"])
        .arg(fixture("tree-3.1.yaml"))
        .arg("--dry-run")
        .output()
        .unwrap());
    assert!(
        dry.contains(&format!(
            "would write {} (POST /nodes)",
            tools.join("create_node.md").display()
        )),
        "{dry}"
    );
    assert!(
        dry.contains("    endpoint: https://eu.tree.example/api/nodes"),
        "{dry}"
    );
    assert!(
        dry.contains(
            "skipped upload (POST /uploads): the request body is multipart/form-data, not JSON"
        ),
        "{dry}"
    );
    assert!(
        !tools.join("create_node.md").exists(),
        "a dry run writes nothing"
    );

    let out = ok(cli(home)
        .args(["tools", "import-openapi"])
        .arg(fixture("tree-3.1.yaml"))
        .args(["--operation", "create node!", "--operation", "upload"])
        .output()
        .unwrap());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "wrote {} (POST /nodes)",
            tools.join("create_node.md").display()
        )
    );
    assert!(
        lines[1].starts_with("skipped upload (POST /uploads): "),
        "{out}"
    );
    assert!(out.contains("secrets used: ACME_TOKEN"), "{out}");
    assert!(!tools.join("get_nodes_id.md").exists());

    std::fs::write(tools.join("create_node.md"), "mine").unwrap();
    let again = ok(cli(home)
        .args(["tools", "import-openapi"])
        .arg(fixture("tree-3.1.yaml"))
        .args(["--tag", "nodes"])
        .output()
        .unwrap());
    assert!(
        again.contains(&format!(
            "exists, not overwritten: {}",
            tools.join("create_node.md").display()
        )),
        "{again}"
    );
    assert!(
        again.contains("wrote ") && again.contains("get_nodes_id.md (GET /nodes/{id})"),
        "{again}"
    );
    assert_eq!(
        std::fs::read_to_string(tools.join("create_node.md")).unwrap(),
        "mine"
    );

    std::fs::remove_file(tools.join("create_node.md")).unwrap();
    let list = ok(cli(home).args(["tools", "list"]).output().unwrap());
    assert!(
        list.contains("get_nodes_id"),
        "the app loads what was written: {list}"
    );
}

#[test]
fn a_url_is_fetched_and_a_broken_description_is_located() {
    use std::io::{Read, Write};
    let body = std::fs::read_to_string(fixture("petstore-3.1.json")).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("imported");
    let out = ok(cli(tmp.path())
        .args(["tools", "import-openapi"])
        .arg(format!("http://{addr}/openapi.json"))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap());
    for name in ["listPets", "createPets", "showPetById"] {
        let file = out_dir.join(format!("{name}.md"));
        assert!(out.contains(&format!("wrote {}", file.display())), "{out}");
        let text = std::fs::read_to_string(&file).unwrap();
        engine::tools::http::parse_definition(&file, &text).unwrap();
    }
    assert!(
        out.contains(
            "wrote 3 tool(s), 0 already there, 0 skipped, of 3 operation(s) in Swagger Petstore"
        ),
        "{out}"
    );

    let broken = cli(tmp.path())
        .args(["tools", "import-openapi"])
        .arg(fixture("broken-3.0.yaml"))
        .output()
        .unwrap();
    assert!(!broken.status.success());
    let err = String::from_utf8_lossy(&broken.stderr);
    assert!(
        err.contains("broken-3.0.yaml at /paths/~1things~1{id}/get/parameters/0: a parameter needs a `name` and an `in`"),
        "{err}"
    );
}
