//! The terminal permission prompt shared by `run` and `tools call`.

use std::io::{BufRead, IsTerminal, Write};

use engine::permissions::{Answer, PermissionRequest};

use crate::term::clean;

/// Print what will run: the tool, every parameter and, for HTTP tools, the request (secrets by
/// name only).
pub fn show_request(request: &PermissionRequest) {
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "\n`{}` asks for permission to run:",
        clean(&request.tool)
    );
    for (k, v) in &request.params {
        let _ = writeln!(err, "  {} = {}", clean(k), clean(&v.to_string()));
    }
    if let Some(preview) = &request.request {
        let _ = writeln!(
            err,
            "  request: {}",
            clean(&serde_json::to_string_pretty(preview).unwrap_or_default())
        );
    }
    for why in &request.stale_grants {
        let _ = writeln!(err, "  asking again: {}", clean(why));
    }
    if let Some(rule) = &request.asking_rule {
        let _ = writeln!(
            err,
            "  a {} asks every time (`a` approves this call only)",
            clean(rule)
        );
    }
}

/// Read y / n / a from the terminal. Without a terminal the answer is no, and `hint` says how
/// to decide up front (e.g. "use --yes to approve").
pub fn ask(tool: &str, hint: &str) -> Answer {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        eprintln!("not allowed: no terminal to ask at ({hint})");
        return Answer::Deny;
    }
    let tool = clean(tool);
    eprint!("Allow `{tool}`? [y]es / [N]o / [a]lways in this conversation: ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if stdin.lock().read_line(&mut line).is_err() {
        return Answer::Deny;
    }
    parse_answer(&line)
}

fn parse_answer(line: &str) -> Answer {
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Answer::Approve,
        "a" | "always" => Answer::ApproveAlways,
        _ => Answer::Deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anything_but_yes_or_always_is_no() {
        assert_eq!(parse_answer("Y\n"), Answer::Approve);
        assert_eq!(parse_answer(" always "), Answer::ApproveAlways);
        for no in ["", "n", "no", "maybe", "yess"] {
            assert_eq!(parse_answer(no), Answer::Deny, "{no}");
        }
    }
}
