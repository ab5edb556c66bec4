//! `nib console`: the browser console, a client beside the terminal one.
//! A server on 127.0.0.1 (a free port) prints one URL carrying a random
//! token; the page it serves shows the live session (the transcript as it
//! streams, each call as a card, the confirm with its diff as structured
//! hunks, unified or side by side, findings pinned to their rows, values
//! masked) and answers it as the terminal does (approve, reject with a
//! reason, edit then approve, standing approval with its scope; questions
//! too); past sessions of the workspace, replayed read-only from their
//! `events.jsonl`; and a `nib swebench` output directory as a table with
//! each trajectory one click away.
//!
//! The parts: `http` (the protocol and the gate every request passes:
//! Host, Origin, token), `server` (listener, routes, the event stream),
//! `hub` (the live state the pages share; the first answer wins), `live`
//! (the session and its confirmer), `beside` (the pages' side of a session
//! the terminal client or `nib exec` runs), `view` (masking, diff hunks, a
//! confirm as the page shows it), `history` (past sessions, swebench
//! directories). The page is three files in `assets/`, compiled into the
//! binary: no front-end build step.

// The binary's edge: `nib console` prints its URL on stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod beside;
pub mod history;
pub mod http;
pub mod hub;
pub mod live;
pub mod server;
pub mod view;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::agent::AgentConfig;
use crate::files::Workspace;
use crate::settings::{UsageError, UserConfig, model_config, workspace};
pub use beside::Mirror;
pub use live::{Live, LiveOptions, PageAnswer};
pub use server::{Console, Sources};

/// `nib console`'s flags.
#[derive(Debug, Args, Default)]
pub struct ConsoleArgs {
    /// The workspace root (default: the current directory): its live
    /// session and its past sessions.
    #[arg(long)]
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub model_args: crate::settings::ModelArgs,
    #[command(flatten)]
    pub strategy_args: crate::settings::StrategyArgs,
    /// A task to start with (more can be typed in the page).
    #[arg(long)]
    pub task: Option<String>,
    /// Show a `nib swebench` output directory (OUT) as a table.
    #[arg(long, value_name = "OUT")]
    pub swebench: Option<PathBuf>,
    /// No live session: only past sessions (and --swebench).
    #[arg(long)]
    pub no_live: bool,
    /// Run the demo (a scratch copy of the example project and a scripted
    /// model, as `nib demo`) in the console; calc.py is protected there,
    /// so its two-edit fix is a Security confirm.
    #[arg(long)]
    pub demo: bool,
    /// With --demo: the scratch directory (default: a new one in the
    /// system's temp directory).
    #[arg(long, requires = "demo")]
    pub dir: Option<PathBuf>,
}

/// `nib console` (without `--demo`, which the command line sets up).
pub fn run(args: ConsoleArgs) -> Result<ExitCode, UsageError> {
    crate::engine::init_process();
    let config = UserConfig::load()?;
    let ws = workspace(args.root.clone())?;
    let root = ws.root().to_path_buf();
    let swebench = args.swebench.clone();
    if let Some(out) = &swebench
        && !out.is_dir()
    {
        return Err(UsageError(format!(
            "--swebench {}: no such directory (give the --out of a nib swebench run)",
            out.display()
        )));
    }
    // A scripted model's server (if any) lives as long as the console.
    let mut _scripted = None;
    let live = if args.no_live {
        None
    } else {
        let (model, server) = model_config(&args.model_args, &config)?;
        _scripted = server;
        let chosen = args.strategy_args.choose(&config, None)?;
        let cfg = AgentConfig {
            model,
            strategy: chosen.strategy,
            hooks: chosen.hooks,
            config_hooks: chosen.config_hooks,
            settings: chosen.settings,
            history: serde_json::Value::Null,
            program: None,
            max_steps: config.max_steps.unwrap_or(30).max(1),
            max_tokens: 0,
            deadline: Duration::from_secs(24 * 3600),
        };
        Some((ws, cfg))
    };
    let opts = LiveOptions {
        approvals: config.approvals.clone(),
        user: config,
        config_path: None,
    };
    let console = match live {
        Some((ws, cfg)) => start_live(ws, cfg, opts, swebench, args.task.as_deref())?,
        None => Console::start(Sources {
            live: None,
            beside: None,
            root: Some(root),
            swebench,
        })
        .map_err(UsageError)?,
    };
    serve_until_killed(&console)
}

/// Start a console with a live session on `ws` (and its past sessions),
/// running `first_task` at once when given.
pub fn start_live(
    ws: Workspace,
    cfg: AgentConfig,
    opts: LiveOptions,
    swebench: Option<PathBuf>,
    first_task: Option<&str>,
) -> Result<Console, UsageError> {
    let root = ws.root().to_path_buf();
    let hub = std::sync::Arc::default();
    let live = Live::start(ws, cfg, opts, hub).map_err(UsageError)?;
    if let Some(task) = first_task {
        live.submit(task).map_err(UsageError)?;
    }
    Console::start(Sources {
        live: Some(live),
        beside: None,
        root: Some(root),
        swebench,
    })
    .map_err(UsageError)
}

/// A console beside another client (`client`: "the terminal", "nib
/// exec") whose session is in `root`: the [`Mirror`] to give that
/// client's session, and the running server (its URL to tell the person).
/// `config_path`: where "always" saves (`None`: the user's config).
pub fn start_beside(
    client: &str,
    root: PathBuf,
    config_path: Option<PathBuf>,
) -> Result<(std::sync::Arc<Mirror>, Console), UsageError> {
    let mirror = Mirror::new(client, config_path);
    let console = Console::start(Sources {
        live: None,
        beside: Some(std::sync::Arc::clone(&mirror)),
        root: Some(root),
        swebench: None,
    })
    .map_err(UsageError)?;
    Ok((mirror, console))
}

/// Print the URL (the only line on stdout) and serve until the process is
/// stopped (Ctrl-C).
pub fn serve_until_killed(console: &Console) -> Result<ExitCode, UsageError> {
    println!("{}", console.url());
    eprintln!(
        "nib console: open the URL above in a browser (only this machine can reach it); Ctrl-C stops it"
    );
    loop {
        std::thread::park();
    }
}
