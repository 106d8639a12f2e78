//! `seed-conversations --db FILE [--count N] [--messages M]`: add N conversations (default
//! 5,000) of M messages (default 20) to the app's database FILE (created and migrated by the
//! engine if new), for the conversation-list benchmark (`tests/e2e/bench_conversations.py`).

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: seed-conversations --db FILE [--count N] [--messages M]";

fn parse_args() -> Result<(PathBuf, usize, usize), String> {
    let (mut db, mut count, mut messages) = (None, 5000, 20);
    let mut args = std::env::args().skip(1);
    let number = |flag: &str, v: Option<String>| -> Result<usize, String> {
        let v = v.ok_or(format!("{flag} needs a number"))?;
        v.parse()
            .map_err(|_| format!("{flag}: `{v}` is not a number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--db" => db = Some(PathBuf::from(args.next().ok_or("--db needs a file")?)),
            "--count" => count = number("--count", args.next())?,
            "--messages" => messages = number("--messages", args.next())?,
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok((db.ok_or(USAGE)?, count, messages))
}

fn main() -> ExitCode {
    let (db, count, messages) = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = db.parent() {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("cannot create {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    let result = engine::db::open(&db)
        .map_err(|e| e.to_string())
        .and_then(|conn| {
            test_support::seed::seed(&conn, count, messages).map_err(|e| e.to_string())
        });
    match result {
        Ok(()) => {
            println!(
                "seeded {count} conversations of {messages} messages into {}",
                db.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("seed-conversations: {}: {e}", db.display());
            ExitCode::FAILURE
        }
    }
}
