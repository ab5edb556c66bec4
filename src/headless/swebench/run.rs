//! A `nib swebench` run: the instances chosen (`--shard`, `--instance`,
//! `--filter`, `--shuffle`, `--slice`, resume from preds.jsonl unless
//! `--redo-existing`), a pool of worker threads taking them from a queue
//! (each in `instance.rs`), progress on stderr, and the outputs under
//! `--out`:
//!
//! - `preds.jsonl`, appended as each instance finishes; `preds.json` (a
//!   dict by id) rebuilt from it at the end;
//! - per instance `events.jsonl`, `trajectory.json`, `log.txt`,
//!   `patch.diff`, `summary.json`;
//! - `run.config` (the run's options, to repeat it), `run.json`, and a
//!   table on stdout.
//!
//! The pool drains (starts no new instance, lets the running ones finish)
//! on the first Ctrl-C or once the run's cost passes `--total-cost-limit`;
//! what did not start is listed in run.json and the run exits 1, so
//! running it again finishes it.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::config::{self, price_of};
use super::drain;
use super::env::Env;
use super::instance::{InstanceResult, run_instance, write_summary};
use super::instances::{self, Instance, Narrow};
use super::preds::{self, Appender, Prediction};
use super::progress::{Board, money};
use super::report;
use super::trajectory::OUTPUT_HOOK;
use super::watch::Limits;
use super::{DEFAULT_PROMPT, RunArgs};
use crate::model::{Client, set_endpoint_concurrency};
use crate::settings::{ModelChoice, choose_model};
use crate::settings::{UsageError, UserConfig};

/// What a run needs for every instance, resolved once from the flags.
pub(super) struct Settings {
    pub(super) repos: PathBuf,
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

pub(super) fn run(args: RunArgs) -> Result<ExitCode, UsageError> {
    crate::engine::init_process();
    let started = Instant::now();
    let effective = config::with_file(args, config::process_argv())?;
    let args = &effective.args;
    let config = UserConfig::load()?;
    let (Some(instances_file), Some(repos), Some(out)) =
        (args.instances.clone(), args.repos.clone(), args.out.clone())
    else {
        return Err(UsageError(
            "nib swebench needs --instances FILE --repos DIR --out DIR (on the command line or in --config)".into(),
        ));
    };
    let filter = match &args.filter {
        Some(re) => Some(regex::Regex::new(re).map_err(|e| {
            UsageError(format!("--filter {re:?} is not a regular expression: {e}"))
        })?),
        None => None,
    };
    let all = instances::load(&instances_file).map_err(UsageError)?;
    let selected = instances::select(all, args.shard, &args.only).map_err(UsageError)?;
    let narrow = Narrow {
        filter,
        shuffle: args.shuffle.then_some(args.seed),
        slice: args.slice,
    };
    let selected = narrow.apply(selected);
    let repos = std::fs::canonicalize(&repos).map_err(|e| {
        UsageError(format!(
            "--repos {}: {e}; give the directory holding the clones",
            repos.display()
        ))
    })?;
    std::fs::create_dir_all(&out)
        .map_err(|e| UsageError(format!("cannot create --out {}: {e}", out.display())))?;
    let out = std::fs::canonicalize(&out)
        .map_err(|e| UsageError(format!("--out {}: {e}", out.display())))?;
    let workers = args.workers.max(1);
    let concurrency = args.model_concurrency.unwrap_or(workers).max(1);
    let mut settings = settings(args, &config, repos, out)?;
    settings.run_config = report::settings_json(&settings, args, &instances_file, concurrency);
    if let Some(text) = effective.run_config() {
        let path = settings.out.join("run.config");
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("nib swebench: cannot write {}: {e}", path.display());
        }
    }
    set_endpoint_concurrency(concurrency);
    eprintln!("nib swebench: {}", settings.env.describe());

    let preds_path = settings.out.join("preds.jsonl");
    // Opened first: it repairs a line a crash cut before anything reads it.
    let appender = Appender::open(&preds_path).map_err(UsageError)?;
    let done: HashSet<String> = preds::read_jsonl(&preds_path)
        .map_err(UsageError)?
        .into_iter()
        .map(|p| p.instance_id)
        .collect();
    let (skipped, todo): (Vec<Instance>, Vec<Instance>) = if args.redo_existing {
        let again = selected
            .iter()
            .filter(|i| done.contains(&i.instance_id))
            .count();
        if again > 0 {
            eprintln!(
                "nib swebench: {again} instance(s) already in {} run again (--redo-existing); their new predictions win",
                preds_path.display()
            );
        }
        (Vec::new(), selected)
    } else {
        selected
            .into_iter()
            .partition(|i| done.contains(&i.instance_id))
    };
    if !skipped.is_empty() {
        eprintln!(
            "nib swebench: {} instance(s) already in {}, skipped",
            skipped.len(),
            preds_path.display()
        );
    }
    let board = Arc::new(Board::new(
        todo.len(),
        skipped.len(),
        settings.limits.price.is_some(),
        Duration::from_secs(args.progress_every.max(1)),
    ));
    drain::catch_sigint(super::env::remove_live_containers);
    let ran = pool(&settings, &appender, todo, workers, &board);

    let all_preds = preds::read_jsonl(&preds_path).map_err(UsageError)?;
    preds::write_dict(&settings.out.join("preds.json"), &all_preds).map_err(UsageError)?;
    let skipped: Vec<String> = skipped.into_iter().map(|i| i.instance_id).collect();
    let report = report::run_json(
        &settings,
        &ran.results,
        &skipped,
        &ran.not_started,
        ran.drained.as_deref(),
    );
    let report_path = settings.out.join("run.json");
    let text = serde_json::to_string_pretty(&report).unwrap_or_default();
    if let Err(e) = std::fs::write(&report_path, text + "\n") {
        eprintln!("nib swebench: cannot write {}: {e}", report_path.display());
    }
    print!(
        "{}",
        report::table(&ran.results, skipped.len(), ran.not_started.len())
    );
    println!(
        "predictions: {} ({} in all); took {:.1} s",
        settings.out.join("preds.json").display(),
        all_preds.len(),
        started.elapsed().as_secs_f64()
    );
    let unfinished = ran.results.iter().filter(|r| !r.recorded()).count();
    if unfinished > 0 {
        eprintln!(
            "nib swebench: {unfinished} instance(s) not in preds.jsonl (error, model_error or env_error without a patch); run again to retry them"
        );
    }
    if !ran.not_started.is_empty() {
        eprintln!(
            "nib swebench: {} instance(s) not started ({}); run the same command again to run them",
            ran.not_started.len(),
            ran.drained.as_deref().unwrap_or("stopped")
        );
    }
    if unfinished > 0 || !ran.not_started.is_empty() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn settings(
    args: &RunArgs,
    config: &UserConfig,
    repos: PathBuf,
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
    // check + compact unless the flags or the config choose.
    let mut chosen = args
        .strategy_args
        .choose(config, Some(PathBuf::from("check")))?;
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
    Ok(Settings {
        config: config.clone(),
        env: args.env.resolve()?,
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

/// What the pool did.
struct Ran {
    results: Vec<InstanceResult>,
    /// Ids left in the queue when the pool drained.
    not_started: Vec<String>,
    /// Why it drained.
    drained: Option<String>,
}

/// Runs `todo` on `workers` threads; each finished instance is appended to
/// preds.jsonl (when it counts) before the next is taken, unless the pool
/// is draining.
fn pool(
    settings: &Settings,
    appender: &Appender,
    todo: Vec<Instance>,
    workers: usize,
    board: &Arc<Board>,
) -> Ran {
    let total = todo.len();
    let queue = Mutex::new(todo.into_iter().collect::<VecDeque<_>>());
    let results = Mutex::new(Vec::with_capacity(total));
    let finished = AtomicUsize::new(0);
    let drained: Mutex<Option<String>> = Mutex::new(None);
    let over = AtomicBool::new(false);
    // Whether to stop starting instances; says why, once.
    let draining = || -> bool {
        let mut why = drained.lock().unwrap_or_else(PoisonError::into_inner);
        if why.is_some() {
            return true;
        }
        let cost = board.snapshot().cost.unwrap_or(0.0);
        let reason = if drain::sigint_seen() {
            Some(
                "Ctrl-C: no new instances start, the running ones finish (Ctrl-C again stops now)"
                    .to_string(),
            )
        } else if settings.total_cost_limit > 0.0 && cost >= settings.total_cost_limit {
            Some(format!(
                "the run's cost {} reached --total-cost-limit {}: no new instances start, the running ones finish",
                money(cost, board.snapshot().estimated),
                settings.total_cost_limit
            ))
        } else {
            None
        };
        let Some(reason) = reason else { return false };
        board.say(&format!("nib swebench: {reason}"));
        board.update(|s| s.draining = Some(reason.clone()));
        *why = Some(reason);
        true
    };
    std::thread::scope(|scope| {
        scope.spawn(|| board.painter());
        // Says "draining" as soon as Ctrl-C comes, not when a worker is
        // next free.
        scope.spawn(|| {
            while !over.load(Ordering::Relaxed) && !draining() {
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let mut handles = Vec::new();
        for n in 0..workers.min(total.max(1)) {
            let worker = || {
                loop {
                    if draining() {
                        break;
                    }
                    let next = queue
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .pop_front();
                    let Some(inst) = next else { break };
                    if !board.is_tty() {
                        board.say(&format!("nib swebench: {} started", inst.instance_id));
                    }
                    let mut result = run_instance(settings, &inst, board);
                    if result.recorded() {
                        let pred = Prediction {
                            instance_id: inst.instance_id.clone(),
                            model_name_or_path: settings.name.clone(),
                            model_patch: result.patch.clone(),
                        };
                        if let Err(e) = appender.append(&pred) {
                            result.status = super::status::ExitStatus::Error;
                            result.session_ran = false;
                            result.message = e;
                        }
                    }
                    write_summary(settings, &result);
                    let k = finished.fetch_add(1, Ordering::Relaxed) + 1;
                    board.update(|s| {
                        s.done += 1;
                        *s.statuses.entry(result.status).or_default() += 1;
                    });
                    board.say(&finish_line(k, total, &result));
                    results
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(result);
                }
            };
            // Steel evaluates on the thread's stack: give it room.
            let spawned = std::thread::Builder::new()
                .name(format!("swebench-{n}"))
                .stack_size(32 * 1024 * 1024)
                .spawn_scoped(scope, worker);
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => eprintln!("nib swebench: could not start worker {n}: {e}"),
            }
        }
        for h in handles {
            let _ = h.join();
        }
        over.store(true, Ordering::Relaxed);
        board.finish();
    });
    let mut results = results.into_inner().unwrap_or_else(PoisonError::into_inner);
    results.sort_by(|a, b| a.id.cmp(&b.id));
    let not_started = queue
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .into_iter()
        .map(|i| i.instance_id)
        .collect();
    Ran {
        results,
        not_started,
        drained: drained.into_inner().unwrap_or_else(PoisonError::into_inner),
    }
}

/// `[3/10] id: submitted, 5 steps, 1234 tokens, $0.0123, 4.2 s, 7 patch lines`.
fn finish_line(k: usize, total: usize, r: &InstanceResult) -> String {
    let cost = r
        .stats
        .cost
        .map(|c| format!(", {}", money(c, r.stats.estimated)))
        .unwrap_or_default();
    let why = if r.status.retried_when_empty() || !r.session_ran {
        format!(": {}", r.message)
    } else {
        String::new()
    };
    format!(
        "[{k}/{total}] {}: {}, {} steps, {} tokens{cost}, {:.1} s, {} patch lines{why}",
        r.id,
        r.status.as_str(),
        r.steps,
        r.tokens,
        r.seconds,
        r.patch_lines(),
    )
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
        let shipped = render_task(DEFAULT_PROMPT, &inst);
        assert!(shipped.contains("use {repo} and {x}"), "{shipped}");
        assert!(!shipped.contains("{problem_statement}"));
    }
}
