//! The `nib` binary: parse the command line, run the subcommand, map the
//! result to an exit code (0 done, 1 failed, 2 usage).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = nib::cli::Cli::parse();
    match nib::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("nib: {err}");
            ExitCode::from(2)
        }
    }
}
