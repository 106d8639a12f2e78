//! `artifactflow-cli parse`: one model response on stdin → the parsed tool calls as JSON.
//!
//! Input is read as bytes so CR LF survives untouched; invalid UTF-8 is replaced (lossy).

use std::io::{BufRead, Read, Write};
use std::process::ExitCode;

use anyhow::Context;
use engine::parser::{parse, ToolCall};

/// `{"tool_calls":[...]}` for one response, parameters in document order.
fn result_json(calls: &[ToolCall]) -> anyhow::Result<String> {
    #[derive(serde::Serialize)]
    struct Out<'a> {
        tool_calls: &'a [ToolCall],
    }
    let json = serde_json::to_string(&Out { tool_calls: calls })?;
    // U+2028/U+2029 are valid raw in JSON but many line readers split on them; escape them so
    // one result is always one line.
    Ok(json
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029"))
}

pub fn run(jsonl: bool) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if jsonl {
        #[derive(serde::Deserialize)]
        struct Line {
            input: String,
        }
        for (n, line) in stdin.lock().split(b'\n').enumerate() {
            let line = line.context("reading stdin")?;
            let line = String::from_utf8_lossy(&line);
            if line.trim().is_empty() {
                continue;
            }
            let case: Line = serde_json::from_str(&line)
                .with_context(|| format!("line {}: expected {{\"input\": \"...\"}}", n + 1))?;
            writeln!(out, "{}", result_json(&parse(&case.input))?)?;
        }
    } else {
        let mut bytes = Vec::new();
        stdin
            .lock()
            .read_to_end(&mut bytes)
            .context("reading stdin")?;
        let text = String::from_utf8_lossy(&bytes);
        writeln!(out, "{}", result_json(&parse(&text))?)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
