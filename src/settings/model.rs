//! The model flags `nib`, `nib exec` and `nib swebench` share, how Write
//! confirms are answered unattended, and how flags and the user's config
//! resolve to the model a run talks to.

use std::time::Duration;

use clap::{Args, ValueEnum};

use super::UsageError;
use super::config::UserConfig;
use crate::model::scripted::{Script, ScriptedServer};
use crate::model::{ModelConfig, Provider};

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
    /// Never stream replies (same as `stream = false` in the config).
    #[arg(long)]
    pub no_stream: bool,
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
            no_stream: false,
            scripted_protocol: ProviderArg::Openai,
        }
    }
}

/// The model a run talks to: a server's config, or a script to serve.
pub enum ModelChoice {
    Remote(ModelConfig),
    /// `spec` names the script (see `Script::load`); `protocol` is what the
    /// client speaks to the scripted server.
    Scripted {
        spec: String,
        protocol: Provider,
    },
}

/// The model a run talks to, from the model flags and the user's config,
/// and for `--provider scripted` the server (keep it alive for the run).
pub fn model_config(
    args: &ModelArgs,
    config: &UserConfig,
) -> Result<(ModelConfig, Option<ScriptedServer>), UsageError> {
    match choose_model(args, config)? {
        ModelChoice::Remote(cfg) => Ok((cfg, None)),
        ModelChoice::Scripted { spec, protocol } => {
            let (mut cfg, server) = scripted_server(&spec, protocol).map_err(UsageError)?;
            apply_wire_settings(&mut cfg, args, config);
            Ok((cfg, Some(server)))
        }
    }
}

/// Starts a scripted model server for the script `spec` names, and the
/// config that reaches it (few, quick retries: the server is local).
pub fn scripted_server(
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
pub fn choose_model(args: &ModelArgs, config: &UserConfig) -> Result<ModelChoice, UsageError> {
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
    let nothing_chosen = args.provider.is_none() && config.provider.is_none();
    let model = match args.model.clone().or(config.model.clone()) {
        Some(m) => m,
        None if nothing_chosen => return Err(UsageError(first_run_message())),
        None => {
            return Err(UsageError(format!(
                "give --model NAME for --provider {} (or set model = \"NAME\" in {}; docs/config.md lists the keys)",
                p.as_str(),
                config_file_shown()
            )));
        }
    };
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
    apply_wire_settings(&mut cfg, args, config);
    let key_var = match p {
        Provider::OpenAi => "OPENAI_API_KEY",
        Provider::Anthropic => "ANTHROPIC_API_KEY",
        Provider::Ollama => "OLLAMA_API_KEY",
    };
    cfg.api_key = std::env::var("NIB_API_KEY")
        .or_else(|_| std::env::var(key_var))
        .ok()
        .filter(|k| !k.is_empty());
    if cfg.api_key.is_none() && needs_key(p, &cfg.base_url) {
        return Err(UsageError(format!(
            "--provider {} at {} needs an API key: set {key_var} (or NIB_API_KEY) in the environment",
            p.as_str(),
            cfg.base_url
        )));
    }
    Ok(ModelChoice::Remote(cfg))
}

/// Hosted services that refuse every request without a key: checked
/// before the first request, not found out after its retries. A server
/// elsewhere (llama.cpp, vLLM, a proxy) may need none.
fn needs_key(p: Provider, base_url: &str) -> bool {
    match p {
        Provider::Anthropic => true,
        Provider::OpenAi => ["api.openai.com", "openrouter.ai"]
            .iter()
            .any(|host| base_url.contains(host)),
        Provider::Ollama => false,
    }
}

/// The user config file as a person reads it (`~/.config/nib/config.toml`).
pub fn config_file_shown() -> String {
    let Some(path) = UserConfig::path() else {
        return "~/.config/nib/config.toml".into();
    };
    let shown = path.display().to_string();
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && shown.starts_with(&format!("{home}/")) => {
            format!("~{}", &shown[home.len()..])
        }
        _ => shown,
    }
}

/// What nib says when no model is set anywhere: where the config lives,
/// the three usual setups, the key variables, and the demo.
pub fn first_run_message() -> String {
    format!(
        "no model is set. nib reads it from {file} (every key: docs/config.md) or from flags:\n\
         \x20 a local llama.cpp / vLLM / LM Studio server:  --provider openai --base-url http://127.0.0.1:8080 --model NAME\n\
         \x20 Ollama:                                        --provider ollama --model qwen2.5-coder:14b\n\
         \x20 OpenAI or Anthropic:                           --provider openai --model gpt-4o (key in OPENAI_API_KEY; ANTHROPIC_API_KEY for --provider anthropic)\n\
         or put the same in {file}:\n\
         \x20 provider = \"openai\"\n\
         \x20 base_url = \"http://127.0.0.1:8080\"\n\
         \x20 model = \"qwen2.5-coder\"\n\
         To see nib work first, with no model at all: nib demo",
        file = config_file_shown()
    )
}

/// The settings for how replies come over the wire, which apply to
/// scripted servers too (so tests can exercise them).
fn apply_wire_settings(cfg: &mut ModelConfig, args: &ModelArgs, config: &UserConfig) {
    if args.no_stream || config.stream == Some(false) {
        cfg.stream = crate::model::StreamMode::Off;
    }
    if let Some(on) = config.text_tool_calls {
        cfg.text_tool_calls = on;
    }
    if let Some(s) = config.first_byte_timeout {
        cfg.first_byte_timeout = Duration::from_secs(s.max(1));
    }
    if let Some(s) = config.total_timeout {
        cfg.total_timeout = Duration::from_secs(s.max(1));
    }
    if let Some(mib) = config.max_reply_mib {
        cfg.max_reply_bytes = mib.max(1).saturating_mul(1 << 20);
    }
    if let Some(s) = config.stall_timeout {
        cfg.stall_timeout = Duration::from_secs(s.max(1));
    }
}
