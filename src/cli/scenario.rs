//! `nib scenario run`: the guard scenarios in `scenarios/` (or the files and
//! directories named), each in every mode it names, one line per run, then
//! totals per channel. Exit 1 when any expectation fails.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};

use crate::scenario::{self, Mode, RunOptions};
use crate::settings::UsageError;

#[derive(Debug, Args)]
pub struct ScenarioArgs {
    #[command(subcommand)]
    pub command: ScenarioCommand,
}

#[derive(Debug, Subcommand)]
pub enum ScenarioCommand {
    /// Run scenarios through the real engine, guard and files with the
    /// scripted model, and check every expectation and every canary.
    Run(RunArgs),
}

/// A mode to restrict a run to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Interactive,
    Unattended,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario files or directories of `*.scm` files (default: scenarios/).
    pub paths: Vec<PathBuf>,
    /// Print one JSON report (runs, totals per channel) instead of text.
    #[arg(long)]
    pub json: bool,
    /// The seed of the fake credentials, to reproduce a run (default: the fixed seed the summary prints).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run only this mode.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Keep the temp directories of failed runs, to look at what happened.
    #[arg(long)]
    pub keep: bool,
}

pub fn run(args: ScenarioArgs) -> Result<ExitCode, UsageError> {
    let ScenarioCommand::Run(args) = args.command;
    crate::engine::init_process();
    let files = scenario::discover(&args.paths).map_err(|e| UsageError(e.to_string()))?;
    if files.is_empty() {
        return Err(UsageError(
            "no scenario files (*.scm) found; name files or a directory".into(),
        ));
    }
    let mut opts = RunOptions {
        keep_failed: args.keep,
        ..RunOptions::default()
    };
    if let Some(seed) = args.seed {
        opts.seed = seed;
    }
    let only = args.mode.map(|m| match m {
        ModeArg::Interactive => Mode::Interactive,
        ModeArg::Unattended => Mode::Unattended,
    });
    let json = args.json;
    let report = scenario::report::run_all(&files, only, &opts, |r| {
        if !json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", scenario::report::line(r));
            let _ = out.flush();
        }
    });
    let mut out = std::io::stdout().lock();
    let _ = if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()
        )
    } else {
        write!(out, "{}", report.summary())
    };
    Ok(if report.failed() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
