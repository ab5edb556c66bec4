//! `nib undo`: put back the version a write replaced (every file of a
//! patch at once), after finishing any patch a kill cut off and removing
//! the temp files of killed writes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::files::{Undone, Versions, clean_stale_temps};
use crate::settings::{UsageError, workspace};

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Undo the last write of this file (default: the last write of any
    /// file); a file written as part of a patch undoes the whole patch.
    pub path: Option<String>,
    /// The workspace root (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Restore even if the file changed since nib wrote it.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: UndoArgs) -> Result<ExitCode, UsageError> {
    // `workspace` finishes cut-off patches first.
    let ws = workspace(args.root)?;
    clean_stale_temps(ws.root());
    let versions = Versions::new(&ws);
    match versions.undo(&ws, args.path.as_deref(), args.force) {
        Ok(undone) => {
            for u in std::iter::once(&undone).chain(&undone.also) {
                println!("{}", said(u));
            }
            if !undone.also.is_empty() {
                println!(
                    "undid the whole patch: {} files, in one step",
                    undone.also.len() + 1
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("nib undo: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn said(u: &Undone) -> String {
    if u.restored {
        format!("restored {} as it was before write {}", u.path, u.id)
    } else {
        format!("deleted {}: write {} created it", u.path, u.id)
    }
}
