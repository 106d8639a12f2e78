//! `artifactflow-cli artifacts …` (being written; see issue 5).

use std::process::ExitCode;

use engine::context::AppContext;

/// Artifact subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ArtifactsCommand {}

pub fn run(_ctx: &AppContext, cmd: ArtifactsCommand) -> anyhow::Result<ExitCode> {
    match cmd {}
}
