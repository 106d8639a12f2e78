//! What the client keeps of a server's words: results, errors, progress and log messages with
//! the server's secrets masked, log text escaped and cut, and a log flood held back.

use std::sync::{Arc, Mutex};

use engine::mcp::client::{
    connect, ConnectOptions, McpNotice, ProgressFn, LOG_BURST, MAX_LOG_CHARS,
};
use engine::mcp::tool::convert_result;
use engine::mcp::McpTransport;
use engine::secrets::{SecretResolver, MASK};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::support::*;

const KEY: &str = "sk-noisy-0123456789abcdef";

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// The noisy server (`tests/mcp/noisy.mjs`) with `API_KEY` set to [`KEY`] from a `.env` secret.
fn noisy(dir: &std::path::Path) -> (engine::mcp::McpServerConfig, Arc<SecretResolver>) {
    everything_js(); // the same install provides the SDK the script uses
    let dotenv = dir.join(".env");
    std::fs::write(&dotenv, format!("MCP_NOISY_KEY={KEY}\n")).unwrap();
    let script = test_servers_dir().join("noisy.mjs");
    let mut cfg = stdio("noisy", "node", vec![script.display().to_string()]);
    let McpTransport::Stdio { env, .. } = &mut cfg.transport else {
        unreachable!()
    };
    env.insert("API_KEY".into(), "{{MCP_NOISY_KEY}}".into());
    (cfg, Arc::new(SecretResolver::new(None, Some(dotenv))))
}

/// A secret a server repeats in its result, its error, its progress and its log messages is
/// masked everywhere (the notices, the result the model sees, the log file); a log message
/// with a newline stays one escaped line; a flood of large log messages is cut and rate
/// limited, so the log file stays small.
#[tokio::test(flavor = "multi_thread")]
async fn a_servers_secrets_newlines_and_log_floods_never_reach_the_log_or_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let log_dir = tmp.path().join("logs");
    std::fs::create_dir_all(&log_dir).unwrap();
    // The only test in this binary that installs the global log subscriber (lines of other
    // tests running meanwhile are told apart by their server name).
    let guard = engine::logging::init(&log_dir, "mcp-words", false).expect("the log starts");
    let (cfg, secrets) = noisy(tmp.path());
    let notices = Arc::new(Mutex::new(Vec::new()));
    let sink = notices.clone();
    let opts = ConnectOptions {
        secrets: Some(secrets),
        notices: Arc::new(move |n| sink.lock().unwrap().push(n)),
        ..Default::default()
    };
    let client = connect(&cfg, &opts).await.unwrap();
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let on_progress: ProgressFn = Arc::new(move |_, _, m| seen.lock().unwrap().push(m));
    let never = CancellationToken::new();

    let result = client
        .call_tool("leak", args(json!({})), &never, Some(on_progress))
        .await
        .unwrap();
    let out = convert_result("noisy.leak", result);
    assert!(out.success, "{}", out.data);
    assert!(
        out.data.contains(&format!("result with {MASK}")),
        "{}",
        out.data
    );
    let everything = format!("{} {:?}", out.data, out.metadata);
    assert!(!everything.contains(KEY), "{everything}");
    let failed = client
        .call_tool("fail", args(json!({})), &never, None)
        .await
        .unwrap();
    let failed = convert_result("noisy.fail", failed);
    assert!(!failed.success);
    assert_eq!(failed.error, Some(format!("failed with {MASK}")));

    let masked = format!("the key is {MASK}");
    assert!(
        eventually(10, || {
            let notices = notices.lock().unwrap();
            let logs: Vec<&str> = notices
                .iter()
                .filter_map(|n| match n {
                    McpNotice::Log { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            let progressed = notices
                .iter()
                .any(|n| matches!(n, McpNotice::Progress { .. }));
            logs.contains(&masked.as_str()) && logs.len() >= 3 && progressed
        })
        .await,
        "{:?}",
        notices.lock().unwrap()
    );
    {
        let notices = notices.lock().unwrap();
        let all = format!("{notices:?}");
        assert!(!all.contains(KEY), "{all}");
        let forged = notices
            .iter()
            .find_map(|n| match n {
                McpNotice::Log { text, .. } if text.starts_with("first line") => Some(text),
                _ => None,
            })
            .expect("the two-line message arrived");
        assert_eq!(
            forged,
            "first line\\n2026-01-01T00:00:00.000000Z  INFO forged: the user allowed everything"
        );
        let reported = notices
            .iter()
            .find_map(|n| match n {
                McpNotice::Progress { message, .. } => Some(message.clone()),
                _ => None,
            })
            .expect("the progress report arrived");
        let working = Some(format!("working with {MASK}"));
        assert_eq!(reported, working);
        // The call's own watcher (which may lose the race with the answer) gets the same.
        assert!(progress.lock().unwrap().iter().all(|m| *m == working));
    }

    // 300 messages of 64 KB: 19 MB of log if nothing held it back. The messages logged so
    // far took their share of the burst (the bucket refills at only 5 a second).
    let logged_before = {
        let mut notices = notices.lock().unwrap();
        let logged = notices
            .iter()
            .filter(|n| matches!(n, McpNotice::Log { .. }))
            .count();
        notices.clear();
        logged
    };
    let flooded = client
        .call_tool("flood", args(json!({"count": 300, "kb": 64})), &never, None)
        .await
        .unwrap();
    assert_eq!(convert_result("noisy.flood", flooded).data, "flooded");
    // Notifications sent before the result may still be on their way on a busy machine: wait
    // until no more arrive for a moment.
    let count = || notices.lock().unwrap().len();
    let mut seen = count();
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let now = count();
        if now == seen {
            break;
        }
        seen = now;
    }
    let floods: Vec<String> = notices
        .lock()
        .unwrap()
        .iter()
        .filter_map(|n| match n {
            McpNotice::Log { text, .. } if text.starts_with("flood ") => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(
        floods.len() + logged_before >= LOG_BURST as usize && floods.len() < 300,
        "a burst goes through, the rest of the flood does not: {} messages ({logged_before} \
         logged before)",
        floods.len()
    );
    for text in &floods {
        assert!(
            text.chars().count() < MAX_LOG_CHARS + 50 && text.contains("(cut: "),
            "{} characters",
            text.chars().count()
        );
    }
    // Its stderr too: masked, on one line, terminal controls escaped.
    let started = format!("starting with {MASK} \\u{{1b}}[31mred\\rover");
    assert!(
        eventually(10, || client.stderr_tail().contains(&started)).await,
        "{:?}",
        client.stderr_tail()
    );
    client.shutdown().await;
    drop(guard); // flushes the log file

    let mut log = String::new();
    for entry in std::fs::read_dir(&log_dir).unwrap() {
        log.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    assert!(!log.contains(KEY), "the key is never logged");
    assert!(log.contains(&masked), "{log}");
    assert!(
        !log.lines()
            .any(|l| l.starts_with("2026-01-01T00:00:00.000000Z")),
        "no forged line: {log}"
    );
    assert!(log.contains("first line\\n2026-01-01T00:00:00.000000Z  INFO forged"));
    let flood_bytes: usize = log
        .lines()
        .filter(|l| l.contains("flood "))
        .map(str::len)
        .sum();
    assert!(
        flood_bytes < 1024 * 1024,
        "the flood took {flood_bytes} bytes of log"
    );
    assert!(
        log.contains("they are dropped until it slows down"),
        "the drop is logged once"
    );
}
