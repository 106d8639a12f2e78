//! `artifactflow-cli secrets set|delete|list`: names only; values are read from stdin and never
//! printed.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::Context;
use engine::context::AppContext;

/// Secret subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SecretsCommand {
    /// Store a secret in the OS keyring. The value is read from stdin (typed without echo at a
    /// terminal), e.g. `printf %s "$KEY" | artifactflow-cli secrets set OPENAI_API_KEY`.
    Set {
        /// Secret name, as used in `{{NAME}}` templates.
        name: String,
    },
    /// Remove a secret from the OS keyring.
    Delete {
        /// Secret name.
        name: String,
    },
    /// List the names of stored secrets.
    List,
}

pub fn run(ctx: &AppContext, cmd: SecretsCommand) -> anyhow::Result<ExitCode> {
    use engine::api::settings;
    match cmd {
        SecretsCommand::Set { name } => {
            let value = if std::io::stdin().is_terminal() {
                rpassword::prompt_password(format!("Value for {name} (not shown): "))?
            } else {
                let mut v = String::new();
                std::io::stdin()
                    .read_to_string(&mut v)
                    .context("reading the value from stdin")?;
                v.trim_end_matches(['\r', '\n']).to_string()
            };
            anyhow::ensure!(!value.is_empty(), "the value is empty; nothing stored");
            settings::set_secret(ctx, &name, &value)?;
            eprintln!("stored {name} in the system keyring");
        }
        SecretsCommand::Delete { name } => {
            settings::delete_secret(ctx, &name)?;
            eprintln!("deleted {name}");
        }
        SecretsCommand::List => {
            for name in settings::secret_names(ctx) {
                println!("{name}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
