//! `stub-hub [--file OWNER/NAME/PATH=LOCAL_FILE]… [--tiny OWNER/NAME/PATH=BYTES]…
//! [--rate BYTES_PER_SEC] [--huge-json BYTES] [--port PORT]`: the stand-in Hugging Face Hub of
//! [`test_support::hub`] as a process, for tests in other languages. Each `--file` serves
//! LOCAL_FILE's bytes as PATH of the repository OWNER/NAME; each `--tiny` a small valid GGUF
//! file ([`test_support::gguf::sized`]) of about BYTES. `--huge-json` makes every search and
//! tree answer a JSON array of about BYTES (a hostile or broken mirror), made as it is sent.
//!
//! Prints `LISTENING http://127.0.0.1:PORT` once it accepts connections (what `HF_ENDPOINT` is
//! set to), then serves until killed. `GET /_requests` lists the requests it received;
//! `POST /_behaviour` with a JSON [`test_support::hub::Behaviour`] changes how it behaves.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

use test_support::hub::{Behaviour, HubFile, StubHub};

const USAGE: &str = "usage: stub-hub [--file OWNER/NAME/PATH=LOCAL_FILE]… [--tiny OWNER/NAME/PATH=BYTES]… [--rate BYTES_PER_SEC] [--huge-json BYTES] [--port PORT]";

/// `OWNER/NAME/PATH=VALUE` as (`OWNER/NAME`, `PATH`, `VALUE`).
fn remote(spec: &str) -> Result<(String, String, String), String> {
    let (remote, value) = spec
        .split_once('=')
        .ok_or_else(|| format!("{spec}: write OWNER/NAME/PATH=…"))?;
    let mut parts = remote.splitn(3, '/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(owner), Some(name), Some(path)) => Ok((
            format!("{owner}/{name}"),
            path.to_string(),
            value.to_string(),
        )),
        _ => Err(format!("{spec}: the remote part is OWNER/NAME/PATH")),
    }
}

fn parse() -> Result<(Vec<HubFile>, Behaviour, u16), String> {
    let mut files = Vec::new();
    let mut behaviour = Behaviour::default();
    let mut port = 0;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--file" => {
                let spec = args
                    .next()
                    .ok_or("--file needs OWNER/NAME/PATH=LOCAL_FILE")?;
                let (repo, path, local) = remote(&spec)?;
                let bytes = std::fs::read(&local).map_err(|e| format!("--file {local}: {e}"))?;
                files.push(HubFile::new(&repo, &path, bytes));
            }
            "--tiny" => {
                let spec = args.next().ok_or("--tiny needs OWNER/NAME/PATH=BYTES")?;
                let (repo, path, size) = remote(&spec)?;
                let size: usize = size
                    .parse()
                    .map_err(|_| format!("--tiny {spec}: `{size}` is not a number of bytes"))?;
                files.push(HubFile::new(
                    &repo,
                    &path,
                    test_support::gguf::sized("qwen3", size),
                ));
            }
            "--rate" => {
                let v = args.next().ok_or("--rate needs bytes per second")?;
                behaviour.rate = Some(
                    v.parse()
                        .map_err(|_| format!("--rate: `{v}` is not a number"))?,
                );
            }
            "--huge-json" => {
                let v = args.next().ok_or("--huge-json needs a number of bytes")?;
                behaviour.huge_json = Some(
                    v.parse()
                        .map_err(|_| format!("--huge-json: `{v}` is not a number of bytes"))?,
                );
            }
            "--port" => {
                let v = args.next().ok_or("--port needs a number")?;
                port = v
                    .parse()
                    .map_err(|_| format!("--port: `{v}` is not a port"))?;
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if files.is_empty() {
        return Err("at least one --file or --tiny is needed".into());
    }
    Ok((files, behaviour, port))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (files, behaviour, port) = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("stub-hub: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let hub = match StubHub::start_on(SocketAddr::from(([127, 0, 0, 1], port)), files).await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("stub-hub: cannot listen: {e}");
            return ExitCode::FAILURE;
        }
    };
    hub.set(behaviour);
    println!("LISTENING {}", hub.url);
    let _ = std::io::stdout().flush();
    std::future::pending::<()>().await;
    ExitCode::SUCCESS
}
