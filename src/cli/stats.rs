//! `nib stats`: what event logs say about requests, tokens and fs-edit.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::settings::UsageError;

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Event logs (`.nib/sessions/<id>/events.jsonl`).
    #[arg(required = true)]
    pub events: Vec<PathBuf>,
    /// Print the statistics as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: StatsArgs) -> Result<ExitCode, UsageError> {
    let stats = crate::session::stats(&args.events).map_err(|e| UsageError(e.to_string()))?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&stats).unwrap_or_default()
        );
    } else {
        print!("{stats}");
    }
    Ok(ExitCode::SUCCESS)
}
