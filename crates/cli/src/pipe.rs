//! A closed stdout (`artifactflow-cli tools list | head -1`) ends a command quietly, as Unix
//! tools do, instead of with a panic message: `println!` panics when the reader has gone. The
//! panic is caught in `main` after unwinding, so destructors still end the processes the
//! command started, and the exit code is 141, what a shell reports for a process ended by
//! SIGPIPE. SIGPIPE itself stays ignored (Rust's default): writing to the stdin of an MCP
//! server that died must be an error the engine reports, not a kill of the CLI.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;

/// The exit code of a command whose stdout was closed (128 + SIGPIPE).
const CLOSED_STDOUT: u8 = 141;

/// Run `command`; a panic from printing to a closed stdout becomes [`CLOSED_STDOUT`] without
/// a message. Every other panic is reported and unwinds as before.
pub fn quiet_on_closed_stdout(command: impl FnOnce() -> ExitCode) -> ExitCode {
    let report = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !is_closed_stdout(info.payload()) {
            report(info);
        }
    }));
    match panic::catch_unwind(AssertUnwindSafe(command)) {
        Ok(code) => code,
        Err(payload) if is_closed_stdout(&*payload) => ExitCode::from(CLOSED_STDOUT),
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// Whether a panic is `print!`'s on a stdout whose reader has gone. Other print failures (a
/// full disk behind a redirect) keep their message.
fn is_closed_stdout(payload: &(dyn Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    message.starts_with("failed printing to stdout")
        && [
            "(os error 32)",  // EPIPE
            "(os error 109)", // Windows: ERROR_BROKEN_PIPE
            "(os error 232)", // Windows: ERROR_NO_DATA, the pipe is being closed
        ]
        .iter()
        .any(|code| message.ends_with(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_closed_stdout_is_quiet() {
        let closed: Box<dyn Any + Send> =
            Box::new("failed printing to stdout: Broken pipe (os error 32)".to_string());
        assert!(is_closed_stdout(&*closed));
        let full: Box<dyn Any + Send> = Box::new(
            "failed printing to stdout: No space left on device (os error 28)".to_string(),
        );
        assert!(!is_closed_stdout(&*full));
        let other: Box<dyn Any + Send> = Box::new("index out of bounds (os error 32)");
        assert!(!is_closed_stdout(&*other));
    }
}
