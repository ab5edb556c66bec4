//! `nib strategy`: for strategy authors. `list` (the shipped strategies and
//! the files found here), `check FILE` (load it as a session would, say
//! what it registers), `new NAME` (a commented starting file).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::UsageError;
use crate::agent::author;

#[derive(Debug, Args)]
pub struct StrategyArgs {
    #[command(subcommand)]
    pub action: StrategyAction,
}

#[derive(Debug, Subcommand)]
pub enum StrategyAction {
    /// The strategies nib ships, and the .scm files in this directory and
    /// its .nib/hooks/.
    List,
    /// Load a strategy or hook file over the default loop, without a
    /// model or a session; check its hooks; list what it registers.
    Check {
        /// A file, or a shipped name.
        file: PathBuf,
    },
    /// Write NAME.scm, a commented starting hook file.
    New {
        /// The strategy's name (the file is NAME.scm in this directory).
        name: String,
    },
}

pub fn run(args: StrategyArgs) -> Result<ExitCode, UsageError> {
    match args.action {
        StrategyAction::List => {
            println!("shipped (--strategy NAME or --hook NAME):");
            for (name, about) in author::shipped() {
                println!("  {name:<12} {about}");
            }
            let here = std::env::current_dir().unwrap_or_default();
            let files = author::found(&here);
            if !files.is_empty() {
                println!("found here:");
                for f in files {
                    let shown = f.strip_prefix(&here).unwrap_or(&f);
                    println!("  {}", shown.display());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        StrategyAction::Check { file } => match author::check(&file) {
            Ok(report) => {
                if report.hooks.is_empty() && !report.defines_run {
                    println!(
                        "{}: loads, but registers no hooks and defines no run",
                        file.display()
                    );
                } else {
                    println!("{}: loads", file.display());
                }
                if report.defines_run {
                    println!("  defines run: a loop of its own, in place of the default loop");
                }
                for (point, place) in report.hooks {
                    match place {
                        Some(p) => println!("  {point:<14} hook at {}:{}", p.file, p.line),
                        None => println!("  {point:<14} hook"),
                    }
                }
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("error: {e}");
                Ok(ExitCode::FAILURE)
            }
        },
        StrategyAction::New { name } => {
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !valid {
                return Err(UsageError(format!(
                    "a strategy's name is letters, digits, - and _ (got {name:?})"
                )));
            }
            let path = PathBuf::from(format!("{name}.scm"));
            if path.exists() {
                eprintln!(
                    "error: {} exists; nib does not overwrite it (pick another name, or remove it)",
                    path.display()
                );
                return Ok(ExitCode::FAILURE);
            }
            if let Err(e) = std::fs::write(&path, author::template(&name)) {
                eprintln!("error: cannot write {}: {e}", path.display());
                return Ok(ExitCode::FAILURE);
            }
            println!(
                "wrote {}; try `nib strategy check {}`",
                path.display(),
                path.display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
