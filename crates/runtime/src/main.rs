//! `artifactflow-runtime`: one GGUF model served by llama.cpp in a process of its own.
//!
//! The app and the CLI start it on demand (see the engine's `models::local`), one model at a
//! time, and talk to it as to any OpenAI-compatible server on 127.0.0.1: a malformed model
//! file, running out of memory or a crash inside llama.cpp costs only this process, and ending
//! it returns all its memory.
//!
//! ```text
//! ARTIFACTFLOW_RUNTIME_KEY=KEY artifactflow-runtime --model FILE.gguf [--ctx TOKENS]
//!                      [--threads N] [--port PORT] [--chat-template FILE.jinja] [--key-stdin]
//! ```
//!
//! `artifactflow-runtime --check-template` (the template on stdin) says whether a chat template
//! stays within the runtime's bounds, without loading a model (see `probe`).
//!
//! It answers only the process that started it (see `access`): every request carries the
//! per-launch key given in `ARTIFACTFLOW_RUNTIME_KEY` (or, with `--key-stdin`, as the first line
//! of stdin) and names the runtime's own address in `Host`.
//!
//! Once the model is loaded it prints one JSON line on stdout, then serves:
//! `{"ready": true, "port": 41234, "n_ctx": 8192, "n_ctx_train": 8192, "tools": "template",
//! "template": "…", "chat_template": {"source": "architecture", "format": "gemma",
//! "architecture": "gemma3", "stops": ["<end_of_turn>", "<start_of_turn>"]}, "memory": "…"}`
//! (`tools`: how native calls' tools reach the model, through the chat template (`template`) or
//! added to the system message (`system message`); `--chat-template` replaces the model file's
//! template. `chat_template`: which template renders the turns (`source`: `--chat-template`,
//! `model file`, `architecture` or `ChatML fallback`, see `formats`), its format when known, the
//! file's architecture and the texts that end an answer. `template` and `memory` are notes, null
//! when there is nothing to say: the turns are not rendered by the model file's own template
//! (it has none, or llama.cpp does not know it; also on stderr), or the context is smaller than
//! asked because that is what fits in the memory free). The context is the smallest of the model's trained context,
//! `--ctx` and what fits in half the free memory. Generation uses the physical cores (`--threads`
//! overrides), reading a prompt every core.
//! A model that does not load prints `{"error": "…"}` instead and exits with status 2. The
//! runtime exits when its stdin closes, so it never outlives the process that started it.
//!
//! Routes: `GET /v1/models` (the model, with `n_ctx` and `meta.n_ctx_train`, which the engine's
//! window discovery reads) and `POST /v1/chat/completions` (streamed or not; usage counts in
//! the last chunk). With `tools` in a request, the model is offered them in the Hermes form
//! (through the model's own chat template when it takes tools, else in the system message) and
//! the `<tool_call>` blocks it writes come back as OpenAI-style `tool_calls` (see `template`).
//! An answer that writes one span of tokens again and again is stopped with `finish_reason`
//! `length` and `"repeated": {"span": TOKENS, "times": N}` beside it (see `ending`).
//! A `grammar` (GBNF, with `grammar_lazy` and `grammar_triggers` as llama.cpp's server reads
//! them) constrains the sampler. Requests are served one at a time, in order. Between requests the KV cache
//! keeps the longest prefix the next prompt shares with the last one, so an agent's next round
//! only processes what is new. A client that goes away stops its generation at the next token.
//! When the machine runs short of memory between requests (less free than
//! `ARTIFACTFLOW_RUNTIME_MIN_FREE_MB`, default the larger of 512 MB and 5 % of the memory), the
//! context and its cache are freed, and the next request makes a new one.

mod access;
mod chat;
mod ending;
mod formats;
mod guide;
mod probe;
mod server;
mod template;
mod worker;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// The command line.
#[derive(Debug)]
struct Args {
    model: PathBuf,
    chat_template: Option<PathBuf>,
    ctx: Option<u32>,
    threads: Option<u32>,
    port: u16,
    /// The key comes as the first line of stdin, not in the environment.
    key_stdin: bool,
}

const USAGE: &str = "usage: ARTIFACTFLOW_RUNTIME_KEY=KEY artifactflow-runtime --model FILE.gguf \
                     [--ctx TOKENS] [--threads N] [--port PORT] [--chat-template FILE.jinja] \
                     [--key-stdin]";

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut model, mut ctx, mut threads, mut port) = (None, None, None, 0u16);
    let mut chat_template = None;
    let mut key_stdin = false;
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value\n{USAGE}"));
        let number = |v: String| {
            v.parse::<u32>()
                .map_err(|_| format!("{flag}: `{v}` is not a number\n{USAGE}"))
        };
        match flag.as_str() {
            "--model" => model = Some(PathBuf::from(value()?)),
            "--chat-template" => chat_template = Some(PathBuf::from(value()?)),
            "--ctx" => ctx = Some(number(value()?)?),
            "--threads" => threads = Some(number(value()?)?),
            "--port" => {
                port = u16::try_from(number(value()?)?)
                    .map_err(|_| format!("--port: not a port number\n{USAGE}"))?
            }
            "--key-stdin" => key_stdin = true,
            "--key" => {
                return Err(format!(
                    "the key is never given on the command line (other users can read it): \
                     set {} or use --key-stdin\n{USAGE}",
                    access::KEY_VARIABLE
                ))
            }
            "--help" | "-h" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(Args {
        model: model.ok_or(format!("--model is required\n{USAGE}"))?,
        chat_template,
        ctx,
        threads,
        port,
        key_stdin,
    })
}

/// The per-launch key: from the environment (then removed from it, so nothing this process
/// starts inherits it) or the first line of stdin.
fn read_key(from_stdin: bool) -> Result<String, String> {
    let from_env = std::env::var(access::KEY_VARIABLE).ok();
    std::env::remove_var(access::KEY_VARIABLE);
    let key = if from_stdin {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| format!("cannot read the key from stdin: {e}"))?;
        line.trim_end_matches(['\r', '\n']).to_string()
    } else {
        from_env.ok_or_else(|| {
            format!(
                "no key: the runtime answers only the process that starts it, which gives a \
                 per-launch key in {} (or on stdin with --key-stdin)",
                access::KEY_VARIABLE
            )
        })?
    };
    access::check_key(&key)?;
    Ok(key)
}

/// One JSON line on stdout, flushed (the parent reads it).
fn announce(line: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn main() -> ExitCode {
    // A chat template's check (see `probe`): for another program, and the watched process.
    match std::env::args().nth(1).as_deref() {
        Some("--check-template") => return probe::serve(),
        Some("--render-probe") => return probe::render_probe(),
        _ => {}
    }
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(64);
        }
    };
    // First, before any thread starts: the environment is changed here.
    let key = match read_key(args.key_stdin) {
        Ok(key) => key,
        Err(message) => {
            announce(&serde_json::json!({ "error": message }));
            return ExitCode::from(2);
        }
    };
    // Read before watching stdin: a parent that gives none would end us before we say why.
    let chat_template = match &args.chat_template {
        None => None,
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) if !text.contains('\0') => match template::check(&text) {
                Ok(()) => Some(text),
                Err(e) => {
                    announce(&serde_json::json!({ "error": format!("{}: {e}", path.display()) }));
                    return ExitCode::from(2);
                }
            },
            Ok(_) => {
                announce(
                    &serde_json::json!({ "error": format!("{} holds a NUL character: not a chat template", path.display()) }),
                );
                return ExitCode::from(2);
            }
            Err(e) => {
                announce(
                    &serde_json::json!({ "error": format!("cannot read the chat template {}: {e}", path.display()) }),
                );
                return ExitCode::from(2);
            }
        },
    };
    // Never outlive the parent: it holds our stdin, and its end closes it.
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
        std::process::exit(0);
    });
    let settings = worker::Settings {
        model: args.model.clone(),
        chat_template,
        ctx: args.ctx,
        threads: args.threads,
    };
    let (jobs, info) = match worker::start(settings) {
        Ok(started) => started,
        Err(message) => {
            announce(&serde_json::json!({ "error": message }));
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            announce(&serde_json::json!({ "error": format!("cannot start: {e}") }));
            return ExitCode::from(2);
        }
    };
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await?;
        let port = listener.local_addr()?.port();
        announce(&serde_json::json!({
            "ready": true,
            "port": port,
            "n_ctx": info.n_ctx,
            "n_ctx_train": info.n_ctx_train,
            "tools": if info.tools_in_template { "template" } else { "system message" },
            "template": info.template_note,
            "chat_template": info.chat_template,
            "memory": info.memory_note,
        }));
        if let Some(note) = &info.template_note {
            eprintln!("chat template: {note}");
        }
        let access = access::Access::new(key, port);
        axum::serve(listener, server::router(jobs, info, access)).await
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            announce(&serde_json::json!({ "error": format!("cannot serve: {e}") }));
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_args;

    fn args(text: &str) -> Result<super::Args, String> {
        parse_args(text.split_whitespace().map(str::to_string))
    }

    #[test]
    fn the_command_line_is_read_with_clear_errors() {
        let a = args("--model m.gguf --ctx 2048 --threads 2 --port 5000 --chat-template t.jinja")
            .unwrap();
        assert_eq!(
            a.chat_template.as_deref().and_then(|p| p.to_str()),
            Some("t.jinja")
        );
        assert_eq!(
            (a.model.to_str(), a.ctx, a.threads, a.port),
            (Some("m.gguf"), Some(2048), Some(2), 5000)
        );
        assert_eq!(args("--model m.gguf").unwrap().port, 0);
        assert!(args("").unwrap_err().starts_with("--model is required"));
        assert!(args("--model m --ctx lots")
            .unwrap_err()
            .starts_with("--ctx: `lots` is not a number"));
        assert!(args("--model m --port 70000")
            .unwrap_err()
            .starts_with("--port: not a port number"));
        assert!(args("--model")
            .unwrap_err()
            .starts_with("--model needs a value"));
        assert!(args("--gpu")
            .unwrap_err()
            .starts_with("unknown argument `--gpu`"));
        assert!(args("--model m --key-stdin").unwrap().key_stdin);
        assert!(!args("--model m").unwrap().key_stdin);
        // A key on the command line is refused, saying where it goes instead.
        let e = args("--model m --key 0123456789abcdef0123456789abcdef").unwrap_err();
        assert!(e.contains("never given on the command line"), "{e}");
        assert!(e.contains("ARTIFACTFLOW_RUNTIME_KEY"), "{e}");
    }
}
