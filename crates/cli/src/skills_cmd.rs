//! `artifactflow-cli skills list|show|check|import`.

use std::process::ExitCode;

use anyhow::bail;
use engine::api::skills;
use engine::context::AppContext;

/// Skill subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SkillsCommand {
    /// Every skill: name, where it comes from, on or off, the agents that use it, and its
    /// description; then the skills that did not load.
    List {
        /// Print JSON (`skills`, `problems`, `skills_dir`, `user_folders`).
        #[arg(long)]
        json: bool,
    },
    /// One skill: its fields, its files and its instructions.
    Show {
        /// The skill's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check every skill (and the agents' `skills:`); exit 1 listing each problem with file
    /// and line.
    Check,
    /// Import a skill from a folder or a `.zip`/`.skill` archive into the config folder's
    /// skills/ (checked whole first: nothing is written when it does not load).
    Import {
        /// The skill's folder, or its archive.
        path: std::path::PathBuf,
    },
}

pub fn run(ctx: &AppContext, cmd: SkillsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        SkillsCommand::List { json } => list(ctx, json),
        SkillsCommand::Show { name, json } => show(ctx, &name, json),
        SkillsCommand::Check => check(ctx),
        SkillsCommand::Import { path } => {
            let dir = skills::skills_dir(ctx);
            match engine::skills::import::import(&path, &dir) {
                Ok(skill) => {
                    println!(
                        "imported skill `{}` into {}",
                        skill.name,
                        skill.dir.display()
                    );
                    // What does not stop it from loading, `skills check` reports too.
                    for warning in &skill.warnings {
                        eprintln!("{}", clean(&warning.to_string()));
                    }
                    Ok(ExitCode::SUCCESS)
                }
                // Most refusals name the file already (the SKILL.md at fault, with its line).
                Err(e) if e.starts_with(&path.display().to_string()) => bail!("{e}"),
                Err(e) => bail!("{}: {e}", path.display()),
            }
        }
    }
}

fn clean(text: &str) -> String {
    crate::term::clean(text).into_owned()
}

fn list(ctx: &AppContext, json: bool) -> anyhow::Result<ExitCode> {
    let view = skills::list(ctx);
    if json {
        println!("{}", serde_json::to_string_pretty(&view)?);
        return Ok(ExitCode::SUCCESS);
    }
    if view.skills.is_empty() {
        println!(
            "No skills. Put a skill's folder (with its SKILL.md) in {}, or import one with \
             `artifactflow-cli skills import PATH`.",
            view.skills_dir
        );
    }
    for s in &view.skills {
        let agents = if s.agents.is_empty() {
            "no agent".to_string()
        } else {
            s.agents.join(", ")
        };
        println!(
            "{}  [{}{}]  used by: {}",
            clean(&s.name),
            clean(&s.source),
            if s.enabled { "" } else { ", off" },
            agents
        );
        println!(
            "    {}",
            clean(
                &s.description
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        );
    }
    for p in &view.problems {
        eprintln!("{}", clean(&p.to_string()));
    }
    Ok(ExitCode::SUCCESS)
}

fn show(ctx: &AppContext, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let Some(detail) = skills::show(ctx, name) else {
        let known: Vec<_> = skills::list(ctx)
            .skills
            .into_iter()
            .map(|s| s.name)
            .collect();
        bail!(
            "there is no skill `{name}`; skills: {}",
            if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            }
        );
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&detail)?);
        return Ok(ExitCode::SUCCESS);
    }
    let s = &detail.skill;
    println!("name: {}", clean(&s.name));
    println!("description: {}", clean(&s.description));
    println!("folder: {} ({})", clean(&s.dir), clean(&s.source));
    println!("state: {}", if s.enabled { "on" } else { "off" });
    println!(
        "used by: {}",
        if s.agents.is_empty() {
            "no agent".into()
        } else {
            s.agents.join(", ")
        }
    );
    if let Some(l) = &s.license {
        println!("license: {}", clean(l));
    }
    if let Some(c) = &s.compatibility {
        println!("compatibility: {}", clean(c));
    }
    if !s.allowed_tools.is_empty() {
        println!("allowed-tools: {}", clean(&s.allowed_tools.join(" ")));
    }
    for (k, v) in &s.metadata {
        println!("metadata.{}: {}", clean(k), clean(v));
    }
    if !s.ignored_fields.is_empty() {
        println!("not used here: {}", clean(&s.ignored_fields.join(", ")));
    }
    println!("files:");
    if detail.files.is_empty() {
        println!("  (none besides SKILL.md)");
    }
    for f in &detail.files {
        println!("  {}", clean(f));
    }
    // What the listing left out (a link out, a named pipe, a cap of the walk hit), each named.
    if !matches!(s.origin, engine::skills::SkillOrigin::Mcp { .. }) {
        let left_out = engine::skills::files::listing(std::path::Path::new(&s.dir)).notes();
        if !left_out.is_empty() {
            println!("left out:");
        }
        for note in &left_out {
            println!("  {}", clean(note));
        }
    }
    println!("\n{}", clean(&detail.instructions));
    Ok(ExitCode::SUCCESS)
}

fn check(ctx: &AppContext) -> anyhow::Result<ExitCode> {
    let view = skills::list(ctx);
    if view.problems.is_empty() {
        println!(
            "{} skill{}: OK",
            view.skills.len(),
            if view.skills.len() == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::SUCCESS);
    }
    for p in &view.problems {
        eprintln!("{}", clean(&p.to_string()));
    }
    eprintln!(
        "{} problem{}; {} skill{} loaded",
        view.problems.len(),
        if view.problems.len() == 1 { "" } else { "s" },
        view.skills.len(),
        if view.skills.len() == 1 { "" } else { "s" }
    );
    Ok(ExitCode::FAILURE)
}
