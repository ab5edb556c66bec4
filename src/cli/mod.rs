//! The command line: clap definitions (the flags, with their help) and one
//! function per subcommand. Commands return an exit code for what they did,
//! and an error only for usage problems (exit 2).

// The binary's edge: this client's output is the process's own stdout
// and stderr, so printing is its job (everything below the clients is
// denied print!, unwrap and expect in src/lib.rs).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod apply;
mod apply_formats;
mod apply_report;
mod console;
mod scenario;
mod script;
mod sessions;
mod stats;
mod strategy;
mod tools;
mod undo;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

pub use crate::settings::UsageError;

pub use apply::ApplyArgs;
pub use scenario::ScenarioArgs;
pub use script::ScriptArgs;
pub use sessions::SessionsArgs;
pub use stats::StatsArgs;
pub use strategy::StrategyArgs;
pub use tools::ToolsArgs;
pub use undo::UndoArgs;

/// nib: a coding-agent runtime with the agent loop in Scheme.
#[derive(Debug, Parser)]
#[command(name = "nib", version, about, long_about = None)]
#[command(
    after_help = "Configuration: ~/.config/nib/config.toml ($XDG_CONFIG_HOME/nib/config.toml); every key, its default and where it may be set: docs/config.md. API keys: NIB_API_KEY, else OPENAI_API_KEY / ANTHROPIC_API_KEY / OLLAMA_API_KEY. No model yet? `nib demo`."
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no subcommand: the terminal client's flags.
    #[command(flatten)]
    pub tui: crate::tui::TuiArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Apply fs-edit calls to files, as the agent would (one confirm-free
    /// write per call; nothing is written for a call that fails).
    Apply(ApplyArgs),
    /// Restore the file nib wrote last (or the last write of PATH) from the
    /// versions store in .nib/versions/.
    Undo(UndoArgs),
    /// Print the tool list exactly as the model receives it (--json: the
    /// schemas).
    Tools(ToolsArgs),
    /// Run a Scheme program in the sandboxed engine against a workspace;
    /// every primitive call goes through the guard.
    Script(ScriptArgs),
    /// Statistics from event logs: requests, tokens, fs-edit failures.
    Stats(StatsArgs),
    /// For strategy authors: `list` the strategies, `check FILE` (load it,
    /// list its hooks), `new NAME` (a commented starting file).
    Strategy(StrategyArgs),
    /// Run one task headless, for scripts and CI (exit codes: 0 done,
    /// 1 error, 2 usage, 3 refused, 4 step, token or time limit, 128+N
    /// stopped by signal N: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
    Exec(crate::headless::ExecArgs),
    /// The sessions of this workspace: when, the task, how it ended,
    /// steps, tokens and cost, and the id `--resume` takes.
    Sessions(SessionsArgs),
    /// Run headless sessions over SWE-bench instances and write their
    /// patches as predictions (`grade`: a quick local test run; `merge`:
    /// join shards' predictions; `show ID`: an instance's trajectory).
    Swebench(Box<crate::headless::swebench::SwebenchArgs>),
    /// Compare two runs (OUT dirs or event logs): resolved rate, requests,
    /// tokens, fs-edit failures and edit lists, per instance and in total,
    /// with paired bootstrap intervals.
    Compare(crate::headless::compare::CompareArgs),
    /// Guard scenarios: `nib scenario run [DIR|FILE...]` (default
    /// scenarios/); exit 1 when any expectation fails.
    Scenario(ScenarioArgs),
    /// The terminal client on a scratch copy of a small example project,
    /// driven by a built-in scripted model: no model server needed.
    Demo(crate::tui::demo::DemoArgs),
    /// The browser console on 127.0.0.1: watch and answer the live
    /// session, read past sessions and swebench runs (prints one URL
    /// carrying a token).
    Console(Box<crate::console::ConsoleArgs>),
}

/// Input formats `nib apply` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// fs-edit calls as JSON: one object per line, or a JSON array of them.
    EditJson,
    /// Aider-style SEARCH/REPLACE blocks (prose around them is ignored).
    SearchReplace,
    /// A unified diff (line numbers are hints; hunks are found by content).
    Udiff,
    /// A V4A patch (`*** Begin Patch` ... `*** End Patch`).
    V4a,
    /// Whole files: a path on a line, then the content in a ``` block;
    /// refused when it leaves content out.
    WholeFile,
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode, UsageError> {
    let Some(command) = cli.command else {
        let beside = console::beside(cli.tui.console, cli.tui.root.clone(), "the terminal")?;
        return crate::tui::run(cli.tui, beside);
    };
    match command {
        Command::Demo(args) => crate::tui::demo::run(args),
        Command::Apply(args) => apply::run(args),
        Command::Undo(args) => undo::run(args),
        Command::Tools(args) => tools::run(args),
        Command::Script(args) => script::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Strategy(args) => strategy::run(args),
        Command::Exec(args) => {
            let beside = console::beside(args.console, args.root.clone(), "nib exec")?;
            crate::headless::run(args, beside)
        }
        Command::Sessions(args) => sessions::run(args),
        Command::Swebench(args) => crate::headless::swebench::run(*args),
        Command::Compare(args) => crate::headless::compare::run(args),
        Command::Scenario(args) => scenario::run(args),
        Command::Console(args) => console::run(*args),
    }
}
