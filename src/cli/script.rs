//! `nib script`: run a Scheme program in the sandboxed engine against a
//! workspace. Every primitive call goes through the same guard as a
//! model's; nobody is asked, so Write confirms are answered by `--approve`
//! and Security confirms are refused.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use serde_json::Value;

use crate::engine::{Engine, EngineOptions, Stream};
use crate::prim::Host;
use crate::prim::table::ALL;
use crate::settings::{UsageError, workspace};

/// How Write confirms are answered when nobody is there to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Approve {
    /// Approve writes and commands (Security confirms are still refused).
    Writes,
    /// Refuse every confirm: only reads run.
    None,
}

#[derive(Debug, Args)]
pub struct ScriptArgs {
    /// The Scheme program.
    pub file: PathBuf,
    /// The workspace root (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// How Write confirms are answered.
    #[arg(long, value_enum, default_value = "none")]
    pub approve: Approve,
    /// Stop the program after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// With a model (`--provider`, `--model`) or a strategy, the program
    /// runs in an agent session: after the strategy and hooks load, with
    /// `model-reply`, `run-calls` and the loop's procedures to drive.
    #[command(flatten)]
    pub model_args: crate::settings::ModelArgs,
    #[command(flatten)]
    pub strategy_args: crate::settings::StrategyArgs,
}

pub fn run(args: ScriptArgs) -> Result<ExitCode, UsageError> {
    crate::engine::init_process();
    let file = std::fs::canonicalize(&args.file)
        .map_err(|e| UsageError(format!("cannot open {}: {e}", args.file.display())))?;
    let ws = workspace(args.root.clone())?;
    let config = crate::settings::config::UserConfig::load()?;
    let sa = &args.strategy_args;
    if args.model_args.provider.is_some()
        || sa.strategy.is_some()
        || !sa.hooks.is_empty()
        || !sa.set.is_empty()
    {
        return run_in_session(&args, file, ws, &config);
    }
    let policy = crate::settings::config::guard_policy(&config, ws.root())?;
    let host = Arc::new(Host::unattended(ws, args.approve == Approve::Writes).with_policy(policy));
    let host_fn = Arc::new(move |call| Ok(host.run(&call).to_json()));
    let strategy_dir = file.parent().map(PathBuf::from).into_iter().collect();
    let options = EngineOptions {
        strategy_dirs: strategy_dir,
        deadline: Some(Duration::from_secs(args.timeout.max(1))),
    };
    let mut engine = match Engine::new(&ALL, host_fn, options) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("nib script: could not start the Scheme engine: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    // What the program displays goes where a script's output belongs.
    engine.set_output(|stream, text| {
        let _ = match stream {
            Stream::Stdout => std::io::stdout().lock().write_all(text.as_bytes()),
            Stream::Stderr => std::io::stderr().lock().write_all(text.as_bytes()),
        };
    });
    match engine.run_file(&file) {
        Ok(value) => {
            print_value(&value);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The program in an agent session: the strategy's procedures, the
/// model (when one is given), the event log; what it displays goes to
/// stdout, its value last.
fn run_in_session(
    args: &ScriptArgs,
    file: PathBuf,
    ws: crate::files::Workspace,
    config: &crate::settings::UserConfig,
) -> Result<ExitCode, UsageError> {
    use crate::agent::{AgentConfig, Confirms, SessionBuilder, Status};
    use crate::session::Event;
    let (model, _server) = match args.model_args.provider {
        Some(_) => crate::settings::model_config(&args.model_args, config)?,
        None => (
            crate::model::ModelConfig::new(crate::model::Provider::Ollama, "none"),
            None,
        ),
    };
    let chosen = args.strategy_args.choose(config, None)?;
    let session = SessionBuilder::new(
        ws,
        Confirms::Policy {
            approve_writes: args.approve == Approve::Writes,
        },
    )
    .user_config(config)
    .subscribe(|entry| {
        if let Event::Strategy(e) = &entry.event {
            let mut out = std::io::stdout().lock();
            let _ = match e.action.as_str() {
                "display" | "say" => writeln!(out, "{}", e.text),
                other => writeln!(out, "{other}: {}", e.text),
            };
        }
    })
    .build()?;
    let cfg = AgentConfig {
        model,
        strategy: chosen.strategy,
        hooks: chosen.hooks,
        config_hooks: chosen.config_hooks,
        settings: chosen.settings,
        history: Value::Null,
        program: Some(file.clone()),
        max_steps: 30,
        max_tokens: 0,
        deadline: Duration::from_secs(args.timeout.max(1)),
    };
    match session.run(&cfg, &file.display().to_string(), |_| {}) {
        Ok(o) if o.status == Status::Done => {
            print_value(&Value::String(o.text));
            Ok(ExitCode::SUCCESS)
        }
        Ok(o) => {
            eprintln!("{}", o.text);
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The program's value: a string as it is, nothing for void, else JSON.
fn print_value(value: &Value) {
    let text = match value {
        Value::Null => return,
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
}
