//! `nib undo`: put back the version a write replaced.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::files::Versions;
use crate::settings::{UsageError, workspace};

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Undo the last write of this file (default: the last write of any file).
    pub path: Option<String>,
    /// The workspace root (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Restore even if the file changed since nib wrote it.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: UndoArgs) -> Result<ExitCode, UsageError> {
    let ws = workspace(args.root)?;
    let versions = Versions::new(&ws);
    match versions.undo(&ws, args.path.as_deref(), args.force) {
        Ok(undone) if undone.restored => {
            println!(
                "restored {} as it was before write {}",
                undone.path, undone.id
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok(undone) => {
            println!("deleted {}: write {} created it", undone.path, undone.id);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("nib undo: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
