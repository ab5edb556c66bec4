//! The `nib` binary: parse the command line, run the subcommand, map the
//! result to an exit code (0 done, 1 failed, 2 usage).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    quiet_on_closed_stdout();
    let cli = nib::cli::Cli::parse();
    match nib::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("nib: {err}");
            ExitCode::from(2)
        }
    }
}

/// `nib ... | head`: once the reader is gone, printing fails with a broken
/// pipe and `println!` panics (exit 101). Nothing more can reach the
/// reader, so end quietly with 0 instead, as ripgrep does. Only stdout and
/// stderr printing is treated so: a broken pipe to a child process is an
/// ordinary error, handled where it happens.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
