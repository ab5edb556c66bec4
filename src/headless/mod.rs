//! `nib exec`: one task, headless, for scripts and CI.
//!
//! Nothing here decides what the agent does (that is the strategy); this
//! client starts a session, shows its events (JSONL on stdout with
//! `--json`, progress on stderr otherwise), answers confirms by policy
//! (Write confirms by `--approve`, Security confirms always refused) and
//! maps the outcome to an exit code: 0 done, 1 error, 2 usage, 3 refused
//! (the run needed a confirm it could not get), 4 step, token or time
//! limit, 128 + N stopped by signal N (130 SIGINT, 143 SIGTERM, 129
//! SIGHUP; every command it started is stopped first, and the log ends
//! with `interrupted`). The last event is `result`: the status, the exit
//! code, steps, tokens and cost. It never waits for input, but with
//! `--console`: then the browser console is the person's way to answer
//! (see `beside`).

// The binary's edge: this client's output is the process's own stdout
// and stderr, so printing is its job (everything below the clients is
// denied print!, unwrap and expect in src/lib.rs).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{Read, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::Args;

use crate::agent::beside::PageBeside;
use crate::agent::{AgentConfig, Confirms, LogPlace, SessionBuilder, Status};
use crate::model::{StreamEvent, show_tokens};
use crate::session::Event;
use crate::session::event::{Interrupted, RunResult};
use crate::session::resume;
use crate::settings::prices::show_cost;
use crate::settings::{
    Approve, ModelArgs, StrategyArgs, UsageError, UserConfig, model_config, notice, stop, workspace,
};
use progress::plural;

mod beside;
pub mod compare;
mod progress;
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
    /// Continue an earlier session of this workspace: its log, and its
    /// tasks as context (`--resume` alone: the latest; `--resume=ID`: an
    /// id or the start of one; `nib sessions` lists them).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub resume: Option<String>,
    /// Run commands without the file sandbox (they can read protected
    /// files and write anywhere you can); logged as a warning.
    #[arg(long)]
    pub no_file_sandbox: bool,
    /// Open the browser console beside the run (its URL on stderr):
    /// confirms no policy answers (--approve, standing approvals) and
    /// strategy questions wait for an answer there; --timeout and Ctrl-C
    /// still end the wait.
    #[arg(long)]
    pub console: bool,
}

pub fn run(args: ExecArgs, console: Option<PageBeside>) -> Result<ExitCode, UsageError> {
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
    let resume = match &args.resume {
        None => None,
        Some(id) => {
            Some(resume::find(&ws.root().join(".nib").join("sessions"), id).map_err(UsageError)?)
        }
    };
    // Keep the scripted server alive for the whole run.
    let (model, _server) = model_config(&args.model_args, &config)?;
    // A malformed [prices] entry is said before anything runs.
    crate::settings::prices::price_of(&config.prices, &model.model).map_err(UsageError)?;
    let chosen = args.strategy_args.choose(&config, None)?;
    let tally: progress::Shared = Arc::new(Mutex::new(progress::Tally::new(
        config.prices.clone(),
        &model.model,
    )));
    let stopping = tally
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .stopping
        .clone();
    let approve_writes = args.approve == Approve::Writes;
    let page = console
        .as_ref()
        .map(|c| beside::Page::new(c, &config, &tally));
    let mut builder = match &page {
        Some(page) => SessionBuilder::new(ws, page.confirms(approve_writes))
            .asker(page.asker())
            .cancel(Arc::clone(&page.cancel)),
        None => SessionBuilder::new(ws, Confirms::Policy { approve_writes }),
    }
    .user_config(&config);
    if let Some(path) = &resume {
        builder = builder.log(LogPlace::At(path.clone()));
    }
    if args.json {
        builder = builder.subscribe(|entry| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", entry.line);
            let _ = out.flush();
        });
    }
    if let Some(page) = &page {
        let to_page = Arc::clone(&page.beside);
        builder = builder.subscribe(move |entry| to_page.event(entry));
    }
    let shown = Arc::clone(&tally);
    let session = builder
        .subscribe(move |entry| {
            if let Some(line) = progress::line(&shown, &entry.event) {
                eprintln!("{line}");
            }
        })
        .build()?;
    tally
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .deadline = session.host.deadline_flag();
    // SIGINT, SIGTERM, SIGHUP: stop the run (and every command it started).
    {
        let log = Arc::clone(&session.log);
        let stopping = Arc::clone(&stopping);
        stop::catch(session.host.cancel_flag(), move |sig| {
            // A second signal: nib exits now, so its commands go first.
            crate::prim::tools::stop_running_commands();
            stopping.store(true, Ordering::Relaxed);
            let _ = log.emit(&interrupted_event(sig));
        });
    }
    if let (Some(page), Some(c)) = (&page, &console) {
        page.attach(&session, &model.model);
        eprintln!(
            "nib exec: the browser console is at {} (this machine only; the token in it is the key): \
             confirms and questions wait for an answer there",
            c.url
        );
    }
    eprintln!("nib exec: {}", network_note(&session));
    // Without the sandbox the session's warning event already said so.
    let (files, warning) = session.host.sandbox_status();
    if warning.is_none() {
        eprintln!("nib exec: {files}");
    }
    let prompt = match &resume {
        Some(path) => {
            eprintln!("nib exec: resuming {}", path.display());
            resume::with_earlier(&resume::earlier_from_log(path), &task)
        }
        None => task.clone(),
    };
    let max_steps = args.max_steps.or(config.max_steps).unwrap_or(30).max(1);
    let cfg = AgentConfig {
        model,
        strategy: chosen.strategy,
        hooks: chosen.hooks,
        config_hooks: chosen.config_hooks,
        settings: chosen.settings,
        history: serde_json::Value::Null,
        program: None,
        max_steps,
        max_tokens: args.max_tokens,
        deadline: Duration::from_secs(args.timeout.max(1)),
    };
    let started = Instant::now();
    let over = Arc::new(AtomicBool::new(false));
    progress::heartbeat(Arc::clone(&tally), Arc::clone(&over));
    let log = Arc::clone(&session.log);
    let streamed = Arc::clone(&tally);
    let to_page = page.as_ref().map(|p| Arc::clone(&p.beside));
    if let Some(p) = &to_page {
        p.task(&task);
    }
    let ran = session.run(&cfg, &prompt, move |ev| {
        if let Some(p) = &to_page {
            p.stream(ev);
        }
        if let StreamEvent::TextDelta(t) | StreamEvent::ReasoningDelta(t) = ev {
            progress::streamed(&streamed, t.chars().count());
        }
        if let Some(n) = notice::of_stream(ev) {
            let _ = log.emit(&Event::Notice(n));
        }
    });
    over.store(true, Ordering::Relaxed);
    stopping.store(true, Ordering::Relaxed);
    if let Some(p) = &page {
        match &ran {
            Ok(o) => p.beside.task_done(o.status.as_str(), &o.text),
            Err(e) => p.beside.task_done("error", &e.to_string()),
        }
    }
    let signal = stop::received();
    let timed_out = session.host.deadline_flag().load(Ordering::Relaxed);
    let (status, code, text) = match &ran {
        _ if signal.is_some() => {
            let sig = signal.unwrap_or(libc::SIGINT);
            let _ = session.log.emit(&interrupted_event(sig));
            ("interrupted", stop::exit_code(sig), stop::describe(sig))
        }
        Err(e) => ("error", 1, e.to_string()),
        Ok(o) => {
            let (status, code) = match o.status {
                _ if timed_out => ("time_limit", 4),
                Status::Done if o.refused_confirms > 0 => ("refused", 3),
                Status::Done => ("done", 0),
                Status::Error => ("error", 1),
                Status::StepLimit => ("step_limit", 4),
                Status::TokenLimit => ("token_limit", 4),
            };
            (status, code, o.text.clone())
        }
    };
    if let Err(e) = &ran {
        // The engine failed before the strategy could log it.
        eprintln!("nib exec: {e}");
    }
    // Steps are the loop's model replies, as the run's outcome counts them
    // however it ended (a hook's own model calls are none); the replies
    // seen when the engine failed before an outcome.
    let (usage, cost, steps) = {
        let t = tally.lock().unwrap_or_else(PoisonError::into_inner);
        let steps = ran.as_ref().map_or(t.steps, |o| o.steps);
        (t.usage, t.cost, steps)
    };
    let _ = session.log.emit(&Event::Result(RunResult {
        status: status.into(),
        exit_code: code,
        steps,
        usage,
        cost_usd: cost,
        duration_ms: started.elapsed().as_millis() as u64,
        text: text.clone(),
        session: session.log.id().to_string(),
    }));
    // stdout is the model's answer; an error was already shown once, on
    // stderr, as the run's `error` event.
    let answered = !matches!(status, "error" | "interrupted" | "time_limit");
    if !args.json && answered && !text.is_empty() {
        println!("{text}");
    }
    let ended = match status {
        "done" => "done".to_string(),
        "refused" if page.is_some() => {
            let n = ran.as_ref().map_or(0, |o| o.refused_confirms) as u64;
            format!("done, but {} rejected", plural(n, "call was", "calls were"))
        }
        "refused" => {
            let n = ran.as_ref().map_or(0, |o| o.refused_confirms) as u64;
            format!(
                "done, but {} a confirm this run could not give (--approve writes allows edits and commands)",
                plural(n, "call needed", "calls needed")
            )
        }
        "step_limit" => format!("stopped at the step limit ({max_steps}; --max-steps raises it)"),
        "token_limit" => format!(
            "stopped at the token limit ({}; --max-tokens raises it)",
            args.max_tokens
        ),
        "time_limit" => format!(
            "stopped at the time limit ({} s; --timeout raises it)",
            args.timeout
        ),
        "interrupted" => format!("{text}; its commands were stopped"),
        _ => "failed (the error is above)".to_string(),
    };
    let money = cost.map_or(String::new(), |c| format!(", {}", show_cost(c)));
    eprintln!(
        "nib exec: {ended}; {}, {} tokens{money}; resume with `nib exec --resume={} TASK`",
        plural(steps, "step", "steps"),
        show_tokens(usage.prompt + usage.completion, usage.estimated),
        session.log.id()
    );
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// The `interrupted` event of a run a signal stopped.
fn interrupted_event(sig: i32) -> Event {
    Event::Interrupted(Interrupted {
        by: stop::name(sig),
        message: format!(
            "{}; the commands it ran were stopped with everything they started",
            stop::describe(sig)
        ),
        exit_code: Some(stop::exit_code(sig)),
    })
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
