//! A `nib swebench` run: one headless session per instance in a fresh
//! worktree, a pool of worker threads taking instances from a queue, the
//! patch taken at the end of every session (whatever ended it), and the
//! outputs under `--out`:
//!
//! - `preds.jsonl`, appended as each instance finishes; `preds.json` (a
//!   dict by id) rebuilt from it at the end;
//! - `<id>/events.jsonl`, `<id>/patch.diff`, `<id>/summary.json`;
//! - `run.json`, and a table on stdout.
//!
//! Exit statuses (`summary.json`'s `status`), from the engine's outcome:
//! `submitted` (the session ended on its own; refused calls are counted
//! beside it), `refused` (it ended on its own with no patch, and every
//! file write it tried was refused), `step_limit`, `token_limit`,
//! `model_error` (the model call that ended the session failed),
//! `environment_error` (its container or `--install-cmd` failed) and
//! `error` (anything else: no clone, no base commit, a strategy error).
//!
//! An instance goes into preds.jsonl unless it ended in `error` or
//! `model_error` with an empty patch: those are retried by the next run
//! (a missing clone, a server that was down), while any patch, even one
//! cut short by a limit or an error, is kept.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::env::{Env, Prepared};
use super::instances::{self, Instance};
use super::preds::{self, Appender, Prediction};
use super::report;
use super::worktree::{self, Worktree};
use super::{DEFAULT_PROMPT, RunArgs};
use crate::agent::{AgentConfig, Confirms, LogPlace, Outcome, SessionBuilder, Status};
use crate::files::Workspace;
use crate::model::{Client, ModelConfig, set_endpoint_concurrency};
use crate::session::{Entry, Event};
use crate::settings::model::scripted_server;
use crate::settings::{ModelChoice, choose_model};
use crate::settings::{UsageError, UserConfig};

/// How an instance ended; the fixed list `summary.json` and run.json use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitStatus {
    Submitted,
    StepLimit,
    TokenLimit,
    ModelError,
    Refused,
    /// The instance's environment could not be set up (the container, an
    /// `--install-cmd`); retried by the next run.
    EnvironmentError,
    Error,
}

impl ExitStatus {
    pub const ALL: [ExitStatus; 7] = [
        ExitStatus::Submitted,
        ExitStatus::StepLimit,
        ExitStatus::TokenLimit,
        ExitStatus::ModelError,
        ExitStatus::Refused,
        ExitStatus::EnvironmentError,
        ExitStatus::Error,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ExitStatus::Submitted => "submitted",
            ExitStatus::StepLimit => "step_limit",
            ExitStatus::TokenLimit => "token_limit",
            ExitStatus::ModelError => "model_error",
            ExitStatus::Refused => "refused",
            ExitStatus::EnvironmentError => "environment_error",
            ExitStatus::Error => "error",
        }
    }
}

/// What a run needs for every instance, resolved once from the flags.
pub(super) struct Settings {
    pub(super) repos: PathBuf,
    pub(super) out: PathBuf,
    pub(super) work: PathBuf,
    pub(super) keep_worktrees: bool,
    pub(super) model: ModelChoice,
    pub(super) strategy: Option<PathBuf>,
    pub(super) hooks: Vec<PathBuf>,
    pub(super) config_hooks: usize,
    pub(super) settings: Vec<(String, String)>,
    pub(super) template: String,
    pub(super) max_steps: u64,
    pub(super) max_tokens: u64,
    pub(super) deadline: Duration,
    pub(super) name: String,
    /// The user's configuration, for the guard's policy in each worktree.
    pub(super) config: UserConfig,
    /// Where each instance's commands run (`--env`).
    pub(super) env: Env,
}

/// One instance's result: what summary.json and the table show.
pub(super) struct InstanceResult {
    pub(super) id: String,
    pub(super) status: ExitStatus,
    pub(super) steps: u64,
    pub(super) tokens: u64,
    pub(super) seconds: f64,
    pub(super) patch: String,
    pub(super) refused_calls: usize,
    /// The model's last answer, or what went wrong.
    pub(super) message: String,
    /// A session ran (so the patch, even empty, is the model's result).
    pub(super) session_ran: bool,
    pub(super) worktree: Option<PathBuf>,
}

impl InstanceResult {
    fn failed(id: &str, message: String, started: Instant) -> InstanceResult {
        InstanceResult {
            id: id.to_string(),
            status: ExitStatus::Error,
            steps: 0,
            tokens: 0,
            seconds: started.elapsed().as_secs_f64(),
            patch: String::new(),
            refused_calls: 0,
            message,
            session_ran: false,
            worktree: None,
        }
    }

    /// Whether it goes into preds.jsonl (see the module docs).
    pub(super) fn recorded(&self) -> bool {
        let retry = matches!(self.status, ExitStatus::Error | ExitStatus::ModelError)
            && self.patch.is_empty();
        self.session_ran && !retry
    }

    pub(super) fn patch_lines(&self) -> usize {
        self.patch.lines().count()
    }
}

/// What the event log says about a session, counted as it runs.
#[derive(Default)]
struct Tally {
    refused_calls: AtomicUsize,
    refused_writes: AtomicUsize,
    done_writes: AtomicUsize,
    /// Messages of failed model calls (`error` events with a step).
    model_errors: Mutex<Vec<String>>,
}

impl Tally {
    fn see(&self, entry: &Entry) {
        match &entry.event {
            Event::ToolResult(e) => {
                let write = matches!(e.name.as_str(), "fs-write" | "fs-edit");
                if e.refused {
                    self.refused_calls.fetch_add(1, Ordering::Relaxed);
                    if write {
                        self.refused_writes.fetch_add(1, Ordering::Relaxed);
                    }
                } else if write && e.ok {
                    self.done_writes.fetch_add(1, Ordering::Relaxed);
                }
            }
            Event::Error(e) if e.step.is_some() => {
                self.model_errors
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(e.message.clone());
            }
            _ => {}
        }
    }

    fn status(&self, outcome: &Outcome, patch_empty: bool) -> ExitStatus {
        match outcome.status {
            Status::Done
                if patch_empty
                    && self.refused_writes.load(Ordering::Relaxed) > 0
                    && self.done_writes.load(Ordering::Relaxed) == 0 =>
            {
                ExitStatus::Refused
            }
            Status::Done => ExitStatus::Submitted,
            Status::StepLimit => ExitStatus::StepLimit,
            Status::TokenLimit => ExitStatus::TokenLimit,
            Status::Error
                if self
                    .model_errors
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .contains(&outcome.text) =>
            {
                ExitStatus::ModelError
            }
            Status::Error => ExitStatus::Error,
        }
    }
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
    let config = UserConfig::load()?;
    let (Some(instances_file), Some(repos), Some(out)) =
        (args.instances.clone(), args.repos.clone(), args.out.clone())
    else {
        return Err(UsageError(
            "nib swebench needs --instances FILE --repos DIR --out DIR".into(),
        ));
    };
    let all = instances::load(&instances_file).map_err(UsageError)?;
    let selected = instances::select(all, args.shard, &args.only).map_err(UsageError)?;
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
    let settings = settings(&args, &config, repos, out)?;
    eprintln!("nib swebench: {}", settings.env.describe());
    let workers = args.workers.max(1);
    let concurrency = args.model_concurrency.unwrap_or(workers).max(1);
    set_endpoint_concurrency(concurrency);

    let preds_path = settings.out.join("preds.jsonl");
    // Opened first: it repairs a line a crash cut before anything reads it.
    let appender = Appender::open(&preds_path).map_err(UsageError)?;
    let done: HashSet<String> = preds::read_jsonl(&preds_path)
        .map_err(UsageError)?
        .into_iter()
        .map(|p| p.instance_id)
        .collect();
    let (skipped, todo): (Vec<Instance>, Vec<Instance>) = selected
        .into_iter()
        .partition(|i| done.contains(&i.instance_id));
    if !skipped.is_empty() {
        eprintln!(
            "nib swebench: {} instance(s) already in {}, skipped",
            skipped.len(),
            preds_path.display()
        );
    }
    let results = pool(&settings, &appender, todo, workers);

    let all_preds = preds::read_jsonl(&preds_path).map_err(UsageError)?;
    preds::write_dict(&settings.out.join("preds.json"), &all_preds).map_err(UsageError)?;
    let skipped: Vec<String> = skipped.into_iter().map(|i| i.instance_id).collect();
    let report = report::run_json(
        &settings,
        &args,
        &instances_file,
        &results,
        &skipped,
        concurrency,
    );
    let report_path = settings.out.join("run.json");
    let text = serde_json::to_string_pretty(&report).unwrap_or_default();
    if let Err(e) = std::fs::write(&report_path, text + "\n") {
        eprintln!("nib swebench: cannot write {}: {e}", report_path.display());
    }
    print!("{}", report::table(&results, skipped.len()));
    println!(
        "predictions: {} ({} in all); took {:.1} s",
        settings.out.join("preds.json").display(),
        all_preds.len(),
        started.elapsed().as_secs_f64()
    );
    let unfinished = results.iter().filter(|r| !r.recorded()).count();
    if unfinished > 0 {
        eprintln!(
            "nib swebench: {unfinished} instance(s) not in preds.jsonl (error or model_error without a patch); run again to retry them"
        );
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
    for spec in chosen.strategy.iter().chain(&chosen.hooks) {
        crate::agent::Source::resolve(spec).map_err(UsageError)?;
    }
    Ok(Settings {
        env: args.env.resolve()?,
        config: config.clone(),
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
    })
}

/// Runs `todo` on `workers` threads; each finished instance is appended to
/// preds.jsonl (when it counts) before the next is taken.
fn pool(
    settings: &Settings,
    appender: &Appender,
    todo: Vec<Instance>,
    workers: usize,
) -> Vec<InstanceResult> {
    let total = todo.len();
    let queue = Mutex::new(todo.into_iter().collect::<VecDeque<_>>());
    let results = Mutex::new(Vec::with_capacity(total));
    let finished = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for n in 0..workers.min(total.max(1)) {
            let worker = || {
                loop {
                    let next = queue
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .pop_front();
                    let Some(inst) = next else { break };
                    let mut result = run_instance(settings, &inst);
                    if result.recorded() {
                        let pred = Prediction {
                            instance_id: inst.instance_id.clone(),
                            model_name_or_path: settings.name.clone(),
                            model_patch: result.patch.clone(),
                        };
                        if let Err(e) = appender.append(&pred) {
                            result.status = ExitStatus::Error;
                            result.session_ran = false;
                            result.message = e;
                        }
                    }
                    write_summary(settings, &result);
                    let k = finished.fetch_add(1, Ordering::Relaxed) + 1;
                    eprintln!(
                        "[{k}/{total}] {}: {}, {} steps, {} tokens, {:.1} s, {} patch lines{}",
                        result.id,
                        result.status.as_str(),
                        result.steps,
                        result.tokens,
                        result.seconds,
                        result.patch_lines(),
                        if matches!(
                            result.status,
                            ExitStatus::Error | ExitStatus::EnvironmentError
                        ) {
                            format!(": {}", result.message)
                        } else {
                            String::new()
                        }
                    );
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
            if let Err(e) = spawned {
                eprintln!("nib swebench: could not start worker {n}: {e}");
            }
        }
    });
    let mut results = results.into_inner().unwrap_or_else(PoisonError::into_inner);
    results.sort_by(|a, b| a.id.cmp(&b.id));
    results
}

fn run_instance(settings: &Settings, inst: &Instance) -> InstanceResult {
    let started = Instant::now();
    let id = inst.instance_id.as_str();
    let dir = settings.out.join(id);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return InstanceResult::failed(
            id,
            format!("cannot create {}: {e}", dir.display()),
            started,
        );
    }
    // A rerun replaces the files of an earlier attempt.
    for stale in ["events.jsonl", "patch.diff", "summary.json", "env.log"] {
        let _ = std::fs::remove_file(dir.join(stale));
    }
    let clone = match worktree::find_clone(&settings.repos, &inst.repo) {
        Ok(c) => c,
        Err(e) => return InstanceResult::failed(id, e, started),
    };
    let (model, _server) = match instance_model(settings, id) {
        Ok(m) => m,
        Err(e) => return InstanceResult::failed(id, e, started),
    };
    let tree = match Worktree::add(&clone, &settings.work.join(id), &inst.base_commit) {
        Ok(t) => t,
        Err(e) => return InstanceResult::failed(id, e, started),
    };
    let env = settings
        .env
        .prepare(id, tree.path(), &dir.join("env.log"), settings.deadline);
    let mut result = match env {
        Ok(env) => session(settings, inst, &tree, &env, model, &dir, started),
        Err(e) => InstanceResult {
            status: ExitStatus::EnvironmentError,
            ..InstanceResult::failed(id, e, started)
        },
    };
    if settings.keep_worktrees {
        result.worktree = Some(tree.path().to_path_buf());
    } else if let Err(e) = tree.remove() {
        eprintln!("nib swebench: {id}: {e}");
    }
    result
}

/// The model config for one instance; a scripted model gets a server of
/// its own, so each instance replays the script from its start.
fn instance_model(
    settings: &Settings,
    id: &str,
) -> Result<(ModelConfig, Option<crate::model::scripted::ScriptedServer>), String> {
    match &settings.model {
        ModelChoice::Remote(cfg) => Ok((cfg.clone(), None)),
        ModelChoice::Scripted { spec, protocol } => {
            let spec = spec.replace("{instance_id}", id);
            let (cfg, server) = scripted_server(&spec, *protocol)?;
            Ok((cfg, Some(server)))
        }
    }
}

/// The session in the worktree, then the patch (whatever ended it).
fn session(
    settings: &Settings,
    inst: &Instance,
    tree: &Worktree,
    env: &Prepared,
    model: ModelConfig,
    dir: &Path,
    started: Instant,
) -> InstanceResult {
    let id = inst.instance_id.as_str();
    let ws = match Workspace::open(tree.path()) {
        Ok(ws) => ws,
        Err(e) => return InstanceResult::failed(id, e.to_string(), started),
    };
    let tally = Arc::new(Tally::default());
    let seen = Arc::clone(&tally);
    let built = SessionBuilder::new(
        ws,
        Confirms::Policy {
            approve_writes: true,
        },
    )
    .user_config(&settings.config)
    .log(LogPlace::At(dir.join("events.jsonl")))
    .subscribe(move |entry| seen.see(entry))
    .shell_place(env.place())
    .build();
    let session = match built {
        Ok(session) => session,
        Err(e) => return InstanceResult::failed(id, e.to_string(), started),
    };
    let cfg = AgentConfig {
        model,
        strategy: settings.strategy.clone(),
        hooks: settings.hooks.clone(),
        config_hooks: settings.config_hooks,
        settings: settings.settings.clone(),
        history: serde_json::Value::Null,
        program: None,
        max_steps: settings.max_steps,
        max_tokens: settings.max_tokens,
        deadline: settings.deadline,
    };
    let task = render_task(&settings.template, inst);
    let outcome = session
        .run(&cfg, &task, |_| {})
        .unwrap_or_else(|e| Outcome {
            status: Status::Error,
            text: e.to_string(),
            steps: 0,
            refused_confirms: 0,
            tokens: 0,
            messages: serde_json::Value::Null,
        });
    let (patch, patch_error) = match tree.patch() {
        Ok(p) => (p, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    if let Err(e) = std::fs::write(dir.join("patch.diff"), &patch) {
        eprintln!("nib swebench: {id}: cannot write patch.diff: {e}");
    }
    let status = match &patch_error {
        Some(_) => ExitStatus::Error,
        None => tally.status(&outcome, patch.is_empty()),
    };
    InstanceResult {
        id: id.to_string(),
        status,
        steps: outcome.steps,
        tokens: outcome.tokens,
        seconds: started.elapsed().as_secs_f64(),
        // A patch is text unless the model wrote invalid UTF-8 into a text
        // file; JSON cannot carry that, patch.diff keeps the bytes.
        patch: String::from_utf8_lossy(&patch).into_owned(),
        refused_calls: tally.refused_calls.load(Ordering::Relaxed),
        message: patch_error.unwrap_or(outcome.text),
        session_ran: true,
        worktree: None,
    }
}

fn write_summary(settings: &Settings, result: &InstanceResult) {
    let path = settings.out.join(&result.id).join("summary.json");
    let text = serde_json::to_string_pretty(&result.summary(&settings.name)).unwrap_or_default();
    if let Err(e) = std::fs::write(&path, text + "\n") {
        eprintln!("nib swebench: cannot write {}: {e}", path.display());
    }
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
