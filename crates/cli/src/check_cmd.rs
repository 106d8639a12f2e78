//! `artifactflow-cli check`: validate the whole config folder.

use std::process::ExitCode;

use engine::context::AppContext;

pub fn run(ctx: &AppContext) -> anyhow::Result<ExitCode> {
    let problems = ctx.config_problems();
    let status = ctx.status();
    if problems.is_empty() {
        println!(
            "{}: OK ({} tools, {} agents)",
            status.config_dir.display(),
            status.tools_loaded,
            status.agents_loaded
        );
        return Ok(ExitCode::SUCCESS);
    }
    for p in &problems {
        eprintln!("{}", crate::term::clean(&p.to_string()));
    }
    eprintln!(
        "{} problem{} in {}",
        problems.len(),
        if problems.len() == 1 { "" } else { "s" },
        status.config_dir.display()
    );
    Ok(ExitCode::FAILURE)
}
