//! `artifactflow-cli status`.

use std::process::ExitCode;

use engine::context::AppContext;

pub fn run(ctx: &AppContext, json: bool) -> anyhow::Result<ExitCode> {
    let s = ctx.status();
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!("ArtifactFlow {}", s.app_version);
        println!("config folder:  {}", s.config_dir.display());
        println!(
            "database:       {} (schema v{})",
            s.database.display(),
            s.schema_version
        );
        println!("log folder:     {}", s.log_dir.display());
        println!("tools loaded:   {}", s.tools_loaded);
        println!("agents loaded:  {}", s.agents_loaded);
        if !s.config_errors.is_empty() {
            println!("config problems ({}):", s.config_errors.len());
            for e in &s.config_errors {
                println!("  {}", crate::term::clean(&e.to_string()));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
