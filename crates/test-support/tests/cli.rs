//! The `scripted-model-server` binary, driven the way the desktop E2E tests drive it: a script
//! file, the `LISTENING` line on stdout, plain HTTP requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(name: &str, script: &str) -> Server {
    let dir = tempfile_dir();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, script).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_scripted-model-server"))
        .args(["--script", path.to_str().unwrap(), "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("LISTENING http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    Server {
        addr: url.to_string(),
        child,
    }
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("scripted-model-server-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One HTTP/1.1 request; returns the status line and the body.
fn http(addr: &str, method: &str, path: &str, body: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAuthorization: Bearer k-1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_string(), body.to_string())
}

#[test]
fn serves_a_script_file_and_reports_requests() {
    let server = start(
        "serves",
        r#"[{"text": "Hello from the script", "usage": {"prompt_tokens": 4, "completion_tokens": 5}},
            {"error": {"status": 429, "retry_after": 2, "message": "slow down"}}]"#,
    );
    let request =
        r#"{"model": "m", "stream": false, "messages": [{"role": "user", "content": "hi"}]}"#;
    let (status, body) = http(&server.addr, "POST", "/v1/chat/completions", request);
    assert!(status.contains("200"), "{status}");
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        json["choices"][0]["message"]["content"],
        "Hello from the script"
    );
    assert_eq!(json["usage"]["completion_tokens"], 5);

    let (status, body) = http(&server.addr, "POST", "/v1/messages", request);
    assert!(status.contains("429"), "{status}");
    assert!(body.contains("slow down"));

    let (status, body) = http(&server.addr, "POST", "/v1/chat/completions", request);
    assert!(status.contains("500"), "{status}");
    assert!(body.contains("no turns left"), "{body}");

    let (_, body) = http(&server.addr, "GET", "/requests", "");
    let seen: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(seen.as_array().unwrap().len(), 3);
    assert_eq!(seen[0]["dialect"], "openai");
    assert_eq!(seen[1]["dialect"], "anthropic");
    assert_eq!(seen[0]["headers"]["authorization"], "Bearer k-1");
    assert_eq!(seen[0]["body"]["messages"][0]["content"], "hi");
}

#[test]
fn turns_can_be_added_while_running() {
    let server = start("added", "[]");
    let (status, _) = http(
        &server.addr,
        "POST",
        "/turns",
        r#"[{"text": "added later"}]"#,
    );
    assert!(status.contains("204"), "{status}");
    let request = r#"{"model": "m", "messages": []}"#;
    let (_, body) = http(&server.addr, "POST", "/v1/messages", request);
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["content"][0]["text"], "added later");
    assert_eq!(json["stop_reason"], "end_turn");
}

#[test]
fn a_broken_script_is_refused_with_exit_code_2() {
    let dir = tempfile_dir();
    let path = dir.join("broken.json");
    std::fs::write(&path, r#"[{"txt": "typo"}]"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_scripted-model-server"))
        .args(["--script", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("txt"));
}

#[test]
fn serves_tool_calls_from_a_script_file() {
    let server = start(
        "tool-calls",
        r#"[{"text": "Looking.", "tool_calls": [
                {"id": "call_a", "name": "web_search", "arguments": "{\"query\": \"rust\"}",
                 "chunk_chars": 5},
                {"name": "web_fetch", "arguments": "{'url': 'x',"}]},
            {"tool_calls": [{"name": "web_search", "arguments": "{\"query\": \"rust\"}"}]}]"#,
    );
    let request =
        r#"{"model": "m", "stream": false, "messages": [{"role": "user", "content": "hi"}]}"#;
    let (status, body) = http(&server.addr, "POST", "/v1/chat/completions", request);
    assert!(status.contains("200"), "{status}");
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    let message = &json["choices"][0]["message"];
    assert_eq!(message["content"], "Looking.");
    assert_eq!(message["tool_calls"][0]["id"], "call_a");
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        r#"{"query": "rust"}"#
    );
    assert_eq!(message["tool_calls"][1]["id"], "call_2");
    assert_eq!(message["tool_calls"][1]["function"]["name"], "web_fetch");
    assert_eq!(
        message["tool_calls"][1]["function"]["arguments"],
        "{'url': 'x',"
    );
    assert_eq!(json["choices"][0]["finish_reason"], "tool_calls");

    let (status, body) = http(&server.addr, "POST", "/v1/messages", request);
    assert!(status.contains("200"), "{status}");
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        json["content"],
        serde_json::json!([{"type": "tool_use", "id": "toolu_1", "name": "web_search",
                            "input": {"query": "rust"}}])
    );
    assert_eq!(json["stop_reason"], "tool_use");
}
