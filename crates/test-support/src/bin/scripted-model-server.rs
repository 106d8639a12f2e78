//! `scripted-model-server --script FILE.json [--port PORT] [--n-ctx TOKENS] [--char-limit N]
//! [--condensation-note TEXT]`: serve a script of model turns (a JSON array of
//! [`test_support::Turn`]) on 127.0.0.1, for tests written in other languages.
//!
//! With `--n-ctx`, `GET /props` reports that context window the way llama.cpp's server does
//! (see [`test_support::ScriptedModel::set_context_window`]).
//! `--char-limit N` refuses requests with more than N prompt characters as too long for the
//! model's context window (HTTP 400, `context_length_exceeded`); `--condensation-note TEXT`
//! answers the engine's condensation requests with TEXT without using a turn.
//!
//! Prints `LISTENING http://127.0.0.1:PORT` on stdout once it accepts connections, then serves
//! until killed. OpenAI-compatible clients use `http://127.0.0.1:PORT/v1` as their base URL,
//! Anthropic clients `http://127.0.0.1:PORT`.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

use test_support::{ScriptedModel, Turn};

const USAGE: &str = "usage: scripted-model-server --script FILE.json [--port PORT] [--n-ctx TOKENS] [--char-limit N] [--condensation-note TEXT]";

struct Args {
    script: String,
    port: u16,
    n_ctx: Option<u32>,
    char_limit: Option<usize>,
    note: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut script = None;
    let mut port = 0;
    let mut n_ctx = None;
    let mut char_limit = None;
    let mut note = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--script" => script = Some(args.next().ok_or("--script needs a file")?),
            "--port" => {
                let value = args.next().ok_or("--port needs a number")?;
                port = value
                    .parse()
                    .map_err(|_| format!("--port: `{value}` is not a port number"))?;
            }
            "--n-ctx" => {
                let value = args.next().ok_or("--n-ctx needs a number of tokens")?;
                n_ctx = Some(
                    value
                        .parse()
                        .map_err(|_| format!("--n-ctx: `{value}` is not a number of tokens"))?,
                );
            }
            "--char-limit" => {
                let value = args.next().ok_or("--char-limit needs a number")?;
                char_limit = Some(value.parse().map_err(|_| {
                    format!("--char-limit: `{value}` is not a number of characters")
                })?);
            }
            "--condensation-note" => {
                note = Some(args.next().ok_or("--condensation-note needs a text")?);
            }
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(Args {
        script: script.ok_or(USAGE)?,
        port,
        n_ctx,
        char_limit,
        note,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let Args {
        script,
        port,
        n_ctx,
        char_limit,
        note,
    } = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let turns: Vec<Turn> = match std::fs::read_to_string(&script)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(turns) => turns,
        Err(e) => {
            eprintln!("cannot load the script {script}: {e}");
            return ExitCode::from(2);
        }
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let server = match ScriptedModel::start_on(addr, turns).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    server.set_context_window(n_ctx);
    server.set_char_limit(char_limit);
    server.set_condensation_note(note);
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "LISTENING {}", server.base_url);
    let _ = stdout.flush();
    server.run_forever().await;
    ExitCode::SUCCESS
}
