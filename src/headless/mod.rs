//! `nib exec`: one task, headless, for scripts and CI.
//!
//! Nothing here decides what the agent does (that is the strategy); this
//! client starts a session, shows its events (JSONL on stdout with
//! `--json`, progress on stderr otherwise), answers confirms by policy
//! (Write confirms by `--approve`, Security confirms always refused) and
//! maps the outcome to an exit code: 0 done, 1 error, 2 usage, 3 refused
//! (the run needed a confirm it could not get), 4 step or token limit. It
//! never waits for input.

use std::io::{Read, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::cli::config::UserConfig;
use serde_json::Value;

use crate::cli::{UsageError, workspace};
use crate::engine::agent::{AgentConfig, Status, run_task};
use crate::model::scripted::{Script, ScriptedServer};
use crate::model::{ModelConfig, Provider};
use crate::prim::Host;
use crate::session::EventLog;

pub mod swebench;

/// Where the model is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    Ollama,
    Openai,
    Anthropic,
    /// A scripted model served over HTTP on 127.0.0.1; --model names the
    /// script (a file, or a built-in: hello, list-workspace).
    Scripted,
}

/// How Write confirms are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Approve {
    /// Approve edits and commands (Security confirms are still refused).
    Writes,
    /// Refuse them: the agent can only read.
    None,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The task; `-` or nothing reads it from stdin.
    pub task: Option<String>,
    /// The workspace root (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    #[command(flatten)]
    pub model_args: ModelArgs,
    /// A strategy file (`.scm` defining `run`); default: the shipped one.
    #[arg(long)]
    pub strategy: Option<PathBuf>,
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
}

/// Which model to talk to: the flags `nib`, `nib exec` and `nib swebench`
/// share.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// Where the model is (default: the config's, else ollama).
    #[arg(long, value_enum)]
    pub provider: Option<ProviderArg>,
    /// The model name (for `scripted`: the script).
    #[arg(long)]
    pub model: Option<String>,
    /// The server's URL (default: the provider's usual one).
    #[arg(long)]
    pub base_url: Option<String>,
    /// For `--provider scripted`: the wire protocol the client speaks.
    #[arg(long, value_enum, default_value = "openai", hide = true)]
    pub scripted_protocol: ProviderArg,
}

impl Default for ModelArgs {
    fn default() -> ModelArgs {
        ModelArgs {
            provider: None,
            model: None,
            base_url: None,
            scripted_protocol: ProviderArg::Openai,
        }
    }
}

/// The model a run talks to: a server's config, or a script to serve.
pub(crate) enum ModelChoice {
    Remote(ModelConfig),
    /// `spec` names the script (see `Script::load`); `protocol` is what the
    /// client speaks to the scripted server.
    Scripted {
        spec: String,
        protocol: Provider,
    },
}

pub fn run(args: ExecArgs) -> Result<ExitCode, UsageError> {
    crate::engine::init_process();
    let task = read_task(args.task.as_deref())?;
    let config = UserConfig::load()?;
    let ws = workspace(args.root.clone())?;
    // Keep the scripted server alive for the whole run.
    let (model, _server) = model_config(&args, &config)?;
    let log = EventLog::create(ws.root()).map_err(|e| UsageError(e.to_string()))?;
    let log = Arc::new(log);
    if args.json {
        log.subscribe(|ev| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{ev}");
            let _ = out.flush();
        });
    }
    log.subscribe(progress);
    let policy = crate::cli::config::guard_policy(&config, ws.root())?;
    for warning in policy.paths.warnings() {
        eprintln!("nib exec: warning: {warning}");
    }
    let host = Arc::new(Host::unattended(ws, args.approve == Approve::Writes).with_policy(policy));
    let cfg = AgentConfig {
        model,
        strategy: args.strategy.clone().or(config.strategy.clone()),
        max_steps: args.max_steps.or(config.max_steps).unwrap_or(30).max(1),
        max_tokens: args.max_tokens,
        deadline: Duration::from_secs(args.timeout.max(1)),
    };
    let outcome = match run_task(host, Arc::clone(&log), &cfg, &task, |_| {}) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("nib exec: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if !args.json && !outcome.text.is_empty() {
        println!("{}", outcome.text);
    }
    eprintln!(
        "nib exec: {} after {} steps, {} tokens; events in {}",
        outcome.status.as_str(),
        outcome.steps,
        outcome.tokens,
        log.path().display()
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

pub(crate) fn model_config(
    args: &ExecArgs,
    config: &UserConfig,
) -> Result<(ModelConfig, Option<ScriptedServer>), UsageError> {
    match choose_model(&args.model_args, config)? {
        ModelChoice::Remote(cfg) => Ok((cfg, None)),
        ModelChoice::Scripted { spec, protocol } => {
            let (cfg, server) = scripted_server(&spec, protocol).map_err(UsageError)?;
            Ok((cfg, Some(server)))
        }
    }
}

/// Starts a scripted model server for the script `spec` names, and the
/// config that reaches it (few, quick retries: the server is local).
pub(crate) fn scripted_server(
    spec: &str,
    protocol: Provider,
) -> Result<(ModelConfig, ScriptedServer), String> {
    let script = Script::load(spec).map_err(|e| e.to_string())?;
    let server = ScriptedServer::start(script)
        .map_err(|e| format!("could not start the scripted model: {e}"))?;
    let mut cfg = server.config(protocol);
    cfg.retries = 1;
    cfg.backoff = Duration::from_millis(50);
    Ok((cfg, server))
}

/// The model from the flags, else the user's config.
pub(crate) fn choose_model(
    args: &ModelArgs,
    config: &UserConfig,
) -> Result<ModelChoice, UsageError> {
    let provider = |p: ProviderArg| match p {
        ProviderArg::Ollama => Provider::Ollama,
        ProviderArg::Anthropic => Provider::Anthropic,
        ProviderArg::Openai | ProviderArg::Scripted => Provider::OpenAi,
    };
    let chosen = match (args.provider, config.provider.as_deref()) {
        (Some(p), _) => p,
        (None, Some(name)) => ProviderArg::from_str(name, true).map_err(|_| {
            UsageError(format!(
                "the config's provider {name:?} is not one of ollama, openai, anthropic, scripted"
            ))
        })?,
        (None, None) => ProviderArg::Ollama,
    };
    if chosen == ProviderArg::Scripted {
        let spec = args
            .model
            .as_deref()
            .or(config.model.as_deref())
            .ok_or_else(|| {
                UsageError(
                    "--provider scripted needs --model SCRIPT (a file or a built-in name)".into(),
                )
            })?;
        return Ok(ModelChoice::Scripted {
            spec: spec.to_string(),
            protocol: provider(args.scripted_protocol),
        });
    }
    let p = provider(chosen);
    let model = args.model.clone().or(config.model.clone()).ok_or_else(|| {
        UsageError(format!(
            "give --model NAME for --provider {} (or set model in the config file)",
            p.as_str()
        ))
    })?;
    let mut cfg = ModelConfig::new(p, model);
    if let Some(url) = args.base_url.clone().or(config.base_url.clone()) {
        cfg.base_url = url;
    }
    if p == Provider::Ollama && config.num_ctx.is_some() {
        cfg.num_ctx = config.num_ctx;
    }
    if let Some(n) = config.max_reply_tokens {
        cfg.max_tokens = n;
    }
    let key_var = match p {
        Provider::OpenAi => "OPENAI_API_KEY",
        Provider::Anthropic => "ANTHROPIC_API_KEY",
        Provider::Ollama => "OLLAMA_API_KEY",
    };
    cfg.api_key = std::env::var("NIB_API_KEY")
        .or_else(|_| std::env::var(key_var))
        .ok()
        .filter(|k| !k.is_empty());
    if p == Provider::Anthropic && cfg.api_key.is_none() {
        return Err(UsageError(
            "--provider anthropic needs an API key in ANTHROPIC_API_KEY (or NIB_API_KEY)".into(),
        ));
    }
    Ok(ModelChoice::Remote(cfg))
}

/// A line on stderr for the events a person follows.
fn progress(ev: &Value) {
    let s = |k: &str| {
        ev.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let n = |k: &str| ev.get(k).and_then(Value::as_u64).unwrap_or(0);
    let line = match s("ev").as_str() {
        "llm.resp" => format!(
            "step {}: {} tool call(s), {} prompt tokens",
            n("step"),
            n("tool_calls"),
            ev.pointer("/usage/prompt")
                .and_then(Value::as_u64)
                .unwrap_or(0)
        ),
        "tool.call" => {
            let form = s("positional");
            let shown: String = form.chars().take(120).collect();
            let cut = if form.chars().count() > 120 {
                " …"
            } else {
                ""
            };
            format!(
                "  {}{cut}",
                if shown.is_empty() { s("name") } else { shown }
            )
        }
        "tool.result" => {
            let mark = if ev.get("ok") == Some(&Value::Bool(true)) {
                "ok"
            } else {
                "failed"
            };
            format!("    {mark}: {}", s("summary"))
        }
        "error" => format!("error: {}", s("message")),
        _ => return,
    };
    eprintln!("{line}");
}
