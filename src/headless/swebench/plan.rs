//! What a run needs for every instance, resolved once from the flags
//! ([`Settings`]: the model, the strategy, the prompt, the limits, the
//! environment), and the task text each instance's session gets.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::config::{self, price_of};
use super::env::Env;
use super::instances::Instance;
use super::trajectory::OUTPUT_HOOK;
use super::watch::Limits;
use super::{DEFAULT_PROMPT, RunArgs};
use crate::model::Client;
use crate::settings::{ModelChoice, UsageError, UserConfig, choose_model};

/// What a run needs for every instance, resolved once from the flags.
pub(super) struct Settings {
    /// The clones; `None` in a container environment, which takes each
    /// repository from its image.
    pub(super) repos: Option<PathBuf>,
    pub(super) out: PathBuf,
    pub(super) work: PathBuf,
    pub(super) keep_worktrees: bool,
    pub(super) model: ModelChoice,
    /// The model's name (a script's file stem): what prices are looked up by.
    pub(super) model_label: String,
    pub(super) strategy: Option<PathBuf>,
    pub(super) hooks: Vec<PathBuf>,
    pub(super) config_hooks: usize,
    pub(super) settings: Vec<(String, String)>,
    pub(super) template: String,
    pub(super) max_steps: u64,
    pub(super) max_tokens: u64,
    pub(super) deadline: Duration,
    pub(super) name: String,
    pub(super) limits: Limits,
    pub(super) total_cost_limit: f64,
    /// The run's settings as run.json has them; the head of every
    /// trajectory too.
    pub(super) run_config: Value,
    /// The user's configuration, for the guard's policy in each worktree.
    pub(super) config: UserConfig,
    /// Where each instance's commands run (`--env`).
    pub(super) env: Env,
}

/// The fields [`render_task`] fills in.
const FIELDS: [&str; 4] = ["problem_statement", "repo", "instance_id", "hints_text"];

/// The first `{name}` in a prompt template (a bare lower-case name in
/// braces) that is not one of [`FIELDS`]: a typo would reach the model
/// as text.
fn unknown_placeholder(template: &str) -> Option<String> {
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let at = &rest[start + 1..];
        let len = at
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(at.len());
        if len > 0 && at[len..].starts_with('}') && !FIELDS.contains(&&at[..len]) {
            return Some(at[..len].to_string());
        }
        rest = at;
    }
    None
}

/// The task text: `template` with `{problem_statement}`, `{repo}`,
/// `{instance_id}` and `{hints_text}` filled in, in one pass (so braces
/// inside the issue text are left alone). Other braces stay as they are.
pub fn render_task(template: &str, inst: &Instance) -> String {
    let fields = [
        ("{problem_statement}", inst.problem_statement.as_str()),
        ("{repo}", inst.repo.as_str()),
        ("{instance_id}", inst.instance_id.as_str()),
        ("{hints_text}", inst.hints_text.as_str()),
    ];
    let mut out = String::with_capacity(template.len() + inst.problem_statement.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let at = &rest[start..];
        let (value, len) = fields
            .iter()
            .find(|(key, _)| at.starts_with(key))
            .map_or(("{", 1), |(key, value)| (*value, key.len()));
        out.push_str(value);
        rest = &at[len..];
    }
    out.push_str(rest);
    out
}

pub(super) fn settings(
    args: &RunArgs,
    config: &UserConfig,
    repos: Option<PathBuf>,
    out: PathBuf,
) -> Result<Settings, UsageError> {
    let model = choose_model(&args.model_args, config)?;
    let model_label = match &model {
        ModelChoice::Remote(cfg) => {
            // Checks the URL and key now, not once per instance.
            Client::new(cfg.clone()).map_err(|e| UsageError(e.to_string()))?;
            cfg.model.clone()
        }
        ModelChoice::Scripted { spec, .. } => {
            if !spec.contains("{instance_id}") {
                crate::model::scripted::Script::load(spec)
                    .map_err(|e| UsageError(e.to_string()))?;
            }
            Path::new(spec)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .filter(|s| !s.contains('{'))
                .unwrap_or_else(|| "scripted".into())
        }
    };
    let template = match &args.prompt {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("--prompt {}: {e}", path.display())))?,
        None => DEFAULT_PROMPT.to_string(),
    };
    if let Some(name) = unknown_placeholder(&template) {
        return Err(UsageError(format!(
            "--prompt: {{{name}}} is not a field nib fills in; use {{problem_statement}}, {{repo}}, {{instance_id}} or {{hints_text}} (a brace that is not a placeholder is fine when the word inside is not a bare name)"
        )));
    }
    // The plain loop with compact unless the flags or the config choose:
    // no test run the task did not ask for (`--strategy check` adds one).
    let mut chosen = args.strategy_args.choose(config, None)?;
    if args.strategy_args.strategy.is_none() && config.strategy.is_none() {
        chosen.hooks.push(PathBuf::from("compact"));
    }
    // Last, so it sees each result as the model will.
    let output_hook = out.join(".hooks").join("trajectory-output.scm");
    std::fs::create_dir_all(out.join(".hooks"))
        .and_then(|()| std::fs::write(&output_hook, OUTPUT_HOOK))
        .map_err(|e| UsageError(format!("cannot write {}: {e}", output_hook.display())))?;
    chosen.hooks.push(output_hook);
    for spec in chosen.strategy.iter().chain(&chosen.hooks) {
        crate::agent::Source::resolve(spec).map_err(UsageError)?;
    }
    let price = match price_of(&args.prices, &model_label) {
        Some(p) => Some(p),
        None => config::config_price_of(&config.prices, &model_label).map_err(UsageError)?,
    };
    if price.is_none() && (args.cost_limit > 0.0 || args.total_cost_limit > 0.0) {
        return Err(UsageError(format!(
            "--cost-limit and --total-cost-limit need the model's price: add --price {model_label}=IN,OUT (USD per million input and output tokens), price.{model_label}=IN,OUT in --config, or \"{model_label}\" = [IN, OUT] under [prices] in config.toml"
        )));
    }
    let env = args.env.resolve()?;
    if repos.is_none() && env.engine.is_none() {
        return Err(UsageError(
            "--env local needs --repos DIR, a directory of clones (owner__repo); in a container (--env docker or podman) the repository comes from the image".into(),
        ));
    }
    Ok(Settings {
        config: config.clone(),
        env,
        work: args.work.clone().unwrap_or_else(|| out.join(".work")),
        repos,
        out,
        keep_worktrees: args.keep_worktrees,
        model,
        strategy: chosen.strategy,
        hooks: chosen.hooks,
        config_hooks: chosen.config_hooks,
        settings: chosen.settings,
        template,
        max_steps: args.max_steps.max(1),
        max_tokens: args.max_tokens,
        deadline: Duration::from_secs(args.timeout.max(1)),
        name: args
            .name
            .clone()
            .unwrap_or_else(|| format!("nib-{model_label}")),
        limits: Limits {
            price,
            cost_limit: args.cost_limit.max(0.0),
            max_format_errors: args.max_format_errors,
        },
        total_cost_limit: args.total_cost_limit.max(0.0),
        model_label,
        run_config: Value::Null,
    })
}

/// Whether the model server answers at all (a TCP connection to the
/// base URL's host and port, within 5 s), checked once before any
/// instance starts: a dead `--base-url` would otherwise cost every
/// instance its retries and end each in `model_error`.
pub(super) fn probe_endpoint(model: &ModelChoice) -> Result<(), String> {
    use std::net::{TcpStream, ToSocketAddrs};
    let ModelChoice::Remote(cfg) = model else {
        return Ok(());
    };
    let fix = "start the server or fix --base-url; no instance was started";
    let url = reqwest::Url::parse(&cfg.base_url)
        .map_err(|e| format!("the base URL {:?} is not a URL ({e}); {fix}", cfg.base_url))?;
    let host = url.host_str().unwrap_or_default().to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<_> = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| {
            format!(
                "the model server {host}:{port} ({}) cannot be resolved: {e}; {fix}",
                cfg.base_url
            )
        })?
        .collect();
    let mut last = None;
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, Duration::from_secs(5)) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    let why = last.map_or("no address".to_string(), |e| e.to_string());
    Err(format!(
        "the model server at {} does not answer ({why}); {fix}",
        cfg.base_url
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_is_filled_in_one_pass() {
        let inst = Instance {
            instance_id: "o__r-1".into(),
            repo: "o/r".into(),
            base_commit: "abc".into(),
            problem_statement: "use {repo} and {x}".into(),
            hints_text: String::new(),
            patch: String::new(),
            test_patch: String::new(),
            fail_to_pass: vec![],
            pass_to_pass: vec![],
            test_cmd: None,
        };
        let text = render_task("{instance_id} in {repo}: {problem_statement} {", &inst);
        assert_eq!(text, "o__r-1 in o/r: use {repo} and {x} {");
        assert_eq!(unknown_placeholder(DEFAULT_PROMPT), None);
        assert_eq!(
            unknown_placeholder("fix {problem_statment} in {repo}"),
            Some("problem_statment".into())
        );
        assert_eq!(unknown_placeholder("a {} b {X} c {a b}"), None);
        let shipped = render_task(DEFAULT_PROMPT, &inst);
        assert!(shipped.contains("use {repo} and {x}"), "{shipped}");
        assert!(!shipped.contains("{problem_statement}"));
    }
}
