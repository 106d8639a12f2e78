//! `artifactflow-cli parse`: one model response on stdin → the parsed tool calls as JSON.

use std::process::ExitCode;

pub fn run(_jsonl: bool) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the parser is not wired yet")
}
