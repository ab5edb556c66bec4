//! Settings every client shares, below all of them: the user's and the
//! workspace's configuration (`config`), the model flags and how they
//! resolve to a model (`model`), the workspace root, and [`UsageError`],
//! the error for how nib was invoked (exit code 2); what model calls cost
//! (`prices`), how a client stops on a signal (`stop`), and the notices
//! a model call's stream calls for (`notice`).
//!
//! `cli`, `headless` and `tui` depend on this module; it depends on no
//! client, so a flag or a config key is defined once for all of them.

pub mod config;
pub mod model;
pub mod notice;
pub mod prices;
pub mod stop;
pub mod strategy;

use std::fmt;
use std::path::PathBuf;

pub use config::{UserConfig, guard_policy};
pub use model::{Approve, ModelArgs, ModelChoice, ProviderArg, choose_model, model_config};
pub use strategy::StrategyArgs;

/// A problem with how nib was invoked: bad flags, unreadable input, a
/// workspace root that does not exist. Exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The workspace root: the flag's value, or the current directory.
pub fn workspace(root: Option<PathBuf>) -> Result<crate::files::Workspace, UsageError> {
    let root = match root {
        Some(r) => r,
        None => std::env::current_dir().map_err(|e| {
            UsageError(format!(
                "cannot read the current directory: {e}; pass --root DIR"
            ))
        })?,
    };
    let ws = crate::files::Workspace::open(&root).map_err(|e| UsageError(e.to_string()))?;
    // A patch a kill cut off is finished before the command does anything
    // else, whatever the command: every file all old or all new.
    for note in crate::files::Versions::new(&ws).recover(&ws) {
        // The one notice below the clients: it must reach the person
        // whichever client runs, before that client takes the terminal.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("{note}");
        }
    }
    Ok(ws)
}
