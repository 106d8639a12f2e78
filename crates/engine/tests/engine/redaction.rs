//! A tool server echoing a secret in other spellings (JSON escapes, percent-encoding in either
//! case, `+` for spaces, base64 in both alphabets, padded or not, alone or inside a longer
//! blob): none of them reaches the model, the events or the database, in a result or an error.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use engine::conversations::RunStatus;
use engine::run::RunOptions;
use test_support::Turn;

use crate::harness::{call, write, Harness};

/// `/`, `+`, a space, `"`, and characters outside ASCII make every encoding differ.
const SECRET: &str = "pX/9+k \"Ém✓ s3cret~?>!";

fn percent(s: &str, lower: bool, plus_for_space: bool) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b' ' if plus_for_space => "+".into(),
            _ if lower => format!("%{b:02x}"),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// JSON string content with `/` escaped and everything outside ASCII as `\uXXXX`.
fn json_ascii(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| match c {
            '"' => "\\\"".to_string(),
            '/' => "\\/".to_string(),
            c if c.is_ascii() => c.to_string(),
            c if upper => format!("\\u{:04X}", c as u32),
            c => format!("\\u{:04x}", c as u32),
        })
        .collect()
}

/// Every spelling the stand-in echoes.
fn forms(secret: &str) -> Vec<String> {
    let json = serde_json::to_string(secret).unwrap();
    let mut forms = vec![
        secret.to_string(),
        json[1..json.len() - 1].to_string(),
        json_ascii(secret, false),
        json_ascii(secret, true),
        percent(secret, true, false),
        percent(secret, false, true),
        percent(secret, true, true),
        STANDARD.encode(secret),
        STANDARD_NO_PAD.encode(secret),
        URL_SAFE.encode(secret),
        URL_SAFE_NO_PAD.encode(secret),
    ];
    // Inside a longer blob (a Basic credential), at each byte alignment.
    for user in ["u", "us", "usr"] {
        forms.push(STANDARD.encode(format!("{user}:{secret}")));
    }
    forms
}

/// `/forms?k=…` answers 200 (`/fail?k=…`: 400) with every form of `k`, one per line.
async fn echo_server() -> String {
    use axum::http::{StatusCode, Uri};
    use axum::response::IntoResponse;
    use axum::routing::get;
    fn body(uri: &Uri) -> String {
        let raw = uri.query().unwrap_or("").trim_start_matches("k=");
        // Percent-decoding only: a `+` in the query is the secret's own `+`.
        let mut bytes = Vec::new();
        let mut i = 0;
        let raw = raw.as_bytes();
        while i < raw.len() {
            if raw[i] == b'%' && i + 3 <= raw.len() {
                let hex = std::str::from_utf8(&raw[i + 1..i + 3]).unwrap();
                bytes.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            } else {
                bytes.push(raw[i]);
                i += 1;
            }
        }
        let secret = String::from_utf8(bytes).unwrap();
        assert_eq!(secret, SECRET, "the tool sent the real value");
        forms(&secret).join("\n")
    }
    let app = axum::Router::new()
        .route("/forms", get(|uri: Uri| async move { body(&uri) }))
        .route(
            "/fail",
            get(|uri: Uri| async move { (StatusCode::BAD_REQUEST, body(&uri)).into_response() }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

fn file_holds(path: &std::path::Path, needle: &str) -> bool {
    std::fs::read(path)
        .map(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_echoed_in_any_encoding_is_masked_in_results_errors_and_storage() {
    let forms = forms(SECRET);
    assert_ne!(
        STANDARD.encode(SECRET),
        URL_SAFE.encode(SECRET),
        "the secret exercises both base64 alphabets"
    );
    let h = Harness::new(
        vec![
            Turn::text(call("forms_ok", &[])),
            Turn::text(call("forms_fail", &[])),
            Turn::text("Checked."),
        ],
        "openai",
        RunOptions::default(),
    )
    .await;
    let server = echo_server().await;
    let config = &h.ctx.paths().config_dir;
    write(
        &config.join(".env"),
        &format!("AF_ENGINE_ECHO_KEY='{SECRET}'\n"),
    );
    for (name, path) in [("forms_ok", "/forms"), ("forms_fail", "/fail")] {
        write(
            &config.join(format!("tools/{name}.md")),
            &format!("---\nname: {name}\npermission: auto\nendpoint: \"{server}{path}?k={{{{AF_ENGINE_ECHO_KEY}}}}\"\n---\n"),
        );
    }
    write(
        &config.join("agents/leaker.md"),
        "---\nname: leaker\ndescription: Calls echoing tools\nmodel: default\ntools:\n  forms_ok: auto\n  forms_fail: auto\nmax_tool_rounds: 3\n---\nYou check tools.\n",
    );
    h.ctx.reload_config();
    assert!(
        h.ctx.config_problems().is_empty(),
        "{:?}",
        h.ctx.config_problems()
    );

    let outcome = h.run("leaker", "Check the tools.").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");

    // What the model saw: the successful result, then the error.
    let ok = h.sent_to_model(1);
    let failed = h.sent_to_model(2);
    assert!(ok.contains("success=\"true\""), "{ok}");
    assert!(failed.contains("HTTP 400"), "{failed}");
    let events: Vec<String> = h
        .events()
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    let messages: Vec<String> = h
        .ctx
        .with_db(|c| engine::conversations::messages(c, "conv"))
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    let seen = [ok.clone(), failed, events.join("\n"), messages.join("\n")].join("\n");
    for form in &forms {
        assert!(
            !seen.contains(form.as_str()),
            "`{form}` leaked into: {seen}"
        );
        let db = &h.ctx.paths().database;
        for path in [db.clone(), db.with_extension("db-wal")] {
            assert!(!file_holds(&path, form), "`{form}` in {}", path.display());
        }
    }
    // Each echoed line was masked (the blobs keep at most a few characters at their ends).
    let masked = ok.matches(engine::secrets::MASK).count();
    assert!(masked >= forms.len(), "{masked} masks in: {ok}");
}
