//! `oauth-stand-in [--confidential]`: the OAuth authorization server and MCP server of
//! [`test_support::oauth::OAuthStandIn`] on a free port of 127.0.0.1, for tests written in other
//! languages (the desktop E2E sign-in scenario).
//!
//! Prints `LISTENING http://127.0.0.1:PORT` on stdout once it accepts connections (the MCP
//! endpoint is that address plus `/mcp`), then serves until killed. With `--confidential` its
//! dynamic registration hands out a client secret and the token endpoint requires it.

use std::io::Write;
use std::process::ExitCode;

use test_support::oauth::OAuthStandIn;

const USAGE: &str = "usage: oauth-stand-in [--confidential]";

#[tokio::main]
async fn main() -> ExitCode {
    let mut confidential = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--confidential" => confidential = true,
            _ => {
                eprintln!("unknown argument `{arg}`\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let stand_in = if confidential {
        OAuthStandIn::start_confidential().await
    } else {
        OAuthStandIn::start().await
    };
    let mut out = std::io::stdout();
    if writeln!(out, "LISTENING {}", stand_in.base).is_err() || out.flush().is_err() {
        return ExitCode::FAILURE;
    }
    std::future::pending::<()>().await;
    ExitCode::SUCCESS
}
