//! `nib exec`: one task, headless, for scripts and CI.
//!
//! Nothing here decides what the agent does (that is the strategy); this
//! client starts a session, shows its events (JSONL on stdout with
//! `--json`, progress on stderr otherwise), answers confirms by policy
//! (Write confirms by `--approve`, Security confirms always refused) and
//! maps the outcome to an exit code: 0 done, 1 error, 2 usage, 3 refused
//! (the run needed a confirm it could not get), 4 step or token limit. It
//! never waits for input.

// The binary's edge: this client's output is the process's own stdout
// and stderr, so printing is its job (everything below the clients is
// denied print!, unwrap and expect in src/lib.rs).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{Read, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::agent::{AgentConfig, Confirms, SessionBuilder, Status};
use crate::session::{Entry, Event};
use crate::settings::{
    Approve, ModelArgs, StrategyArgs, UsageError, UserConfig, model_config, workspace,
};

pub mod compare;
pub mod swebench;

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The task; `-` or nothing reads it from stdin.
    pub task: Option<String>,
    /// The workspace root (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub model_args: ModelArgs,
    #[command(flatten)]
    pub strategy_args: StrategyArgs,
    /// How Write confirms are answered; Security confirms are always refused.
    #[arg(long, value_enum, default_value = "none")]
    pub approve: Approve,
    /// Model replies the run may take (default: the config's, else 30).
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Total tokens the session may use (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub max_tokens: u64,
    /// Stop the whole run after this many seconds.
    #[arg(long, default_value_t = 3600)]
    pub timeout: u64,
    /// Stream the events as JSONL on stdout (progress goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Run commands without the file sandbox (they can read protected
    /// files and write anywhere you can); logged as a warning.
    #[arg(long)]
    pub no_file_sandbox: bool,
}

pub fn run(args: ExecArgs) -> Result<ExitCode, UsageError> {
    crate::engine::init_process();
    let task = read_task(args.task.as_deref())?;
    let mut config = UserConfig::load()?;
    if args.no_file_sandbox {
        config
            .guard
            .get_or_insert_with(Default::default)
            .file_sandbox = Some(false);
    }
    let ws = workspace(args.root.clone())?;
    // Keep the scripted server alive for the whole run.
    let (model, _server) = model_config(&args.model_args, &config)?;
    let chosen = args.strategy_args.choose(&config, None)?;
    let mut builder = SessionBuilder::new(
        ws,
        Confirms::Policy {
            approve_writes: args.approve == Approve::Writes,
        },
    )
    .user_config(&config);
    if args.json {
        builder = builder.subscribe(|entry| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", entry.line);
            let _ = out.flush();
        });
    }
    let session = builder.subscribe(progress).build()?;
    eprintln!("nib exec: {}", network_note(&session));
    // Without the sandbox the session's warning event already said so.
    let (files, warning) =
        crate::prim::tools::landlock::status(session.host.guard().policy().file_sandbox);
    if warning.is_none() {
        eprintln!("nib exec: {files}");
    }
    let cfg = AgentConfig {
        model,
        strategy: chosen.strategy,
        hooks: chosen.hooks,
        config_hooks: chosen.config_hooks,
        settings: chosen.settings,
        history: serde_json::Value::Null,
        program: None,
        max_steps: args.max_steps.or(config.max_steps).unwrap_or(30).max(1),
        max_tokens: args.max_tokens,
        deadline: Duration::from_secs(args.timeout.max(1)),
    };
    let outcome = match session.run(&cfg, &task, |_| {}) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("nib exec: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    // stdout is the model's answer; an error was already shown once, on
    // stderr, as the run's `error` event.
    if !args.json && !outcome.text.is_empty() && outcome.status != Status::Error {
        println!("{}", outcome.text);
    }
    eprintln!(
        "nib exec: {} after {} steps, {} tokens; events in {}",
        outcome.status.as_str(),
        outcome.steps,
        outcome.tokens,
        session.log.path().display()
    );
    let code = match outcome.status {
        Status::Done if outcome.refused_confirms > 0 => {
            eprintln!(
                "nib exec: {} call(s) needed a confirm this run could not give",
                outcome.refused_confirms
            );
            3
        }
        Status::Done => 0,
        Status::Error => 1,
        Status::StepLimit | Status::TokenLimit => 4,
    };
    Ok(ExitCode::from(code))
}

/// Whether this run's commands have network, said before it starts.
fn network_note(session: &crate::agent::AgentSession) -> &'static str {
    if session.host.guard().policy().shell_network {
        "commands may use the network ([guard] shell_network = true in your config)"
    } else if crate::prim::tools::netns::available() {
        "commands run without network (a private network namespace)"
    } else {
        "commands have network: this system does not allow a private network namespace, so network programs need a security confirm"
    }
}

fn read_task(task: Option<&str>) -> Result<String, UsageError> {
    let task = match task {
        Some(t) if t != "-" => t.to_string(),
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| UsageError(format!("cannot read the task from stdin: {e}")))?;
            text
        }
    };
    if task.trim().is_empty() {
        return Err(UsageError(
            "no task: give it as an argument, or on stdin with `-`".into(),
        ));
    }
    Ok(task)
}

/// A line on stderr for the events a person follows.
fn progress(entry: &Entry) {
    let line = match &entry.event {
        Event::LlmResp(e) => format!(
            "step {}: {} tool call(s), {} prompt tokens",
            e.step, e.tool_calls, e.usage.prompt
        ),
        Event::ToolCall(e) => {
            let form = &e.positional;
            let shown: String = form.chars().take(120).collect();
            let cut = if form.chars().count() > 120 {
                " …"
            } else {
                ""
            };
            let shown = if shown.is_empty() { &e.name } else { &shown };
            format!("  {shown}{cut}")
        }
        Event::ToolResult(e) => {
            let mark = if e.ok { "ok" } else { "failed" };
            format!("    {mark}: {}", e.summary)
        }
        Event::Error(e) => format!("error: {}", e.message),
        Event::Warning(e) => format!("warning: {}", e.message),
        Event::Strategy(e) if e.action == "say" || e.action == "display" => {
            format!("strategy: {}", e.text)
        }
        Event::Strategy(e) => format!("strategy {}: {}", e.action, e.text),
        _ => return,
    };
    eprintln!("{line}");
}
