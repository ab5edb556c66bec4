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
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::RunArgs;
use super::config;
use super::drain;
use super::instance::run_instance;
use super::instances::{self, Instance, Narrow};
use super::plan::{self, Settings};
use super::preds::{self, Appender, Prediction};
use super::progress::{Board, money};
use super::report;
use super::result::{InstanceResult, write_summary};
use crate::model::set_endpoint_concurrency;
use crate::settings::{UsageError, UserConfig};

pub(super) fn run(args: RunArgs) -> Result<ExitCode, UsageError> {
    crate::engine::init_process();
    let started = Instant::now();
    let effective = config::with_file(args, config::process_argv())?;
    let args = &effective.args;
    let config = UserConfig::load()?;
    let (Some(instances_file), Some(out)) = (args.instances.clone(), args.out.clone()) else {
        return Err(UsageError(
            "nib swebench needs --instances FILE --out DIR, and --repos DIR for --env local (on the command line or in --config)".into(),
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
    let repos = match &args.repos {
        Some(repos) => Some(std::fs::canonicalize(repos).map_err(|e| {
            UsageError(format!(
                "--repos {}: {e}; give the directory holding the clones",
                repos.display()
            ))
        })?),
        None => None,
    };
    std::fs::create_dir_all(&out)
        .map_err(|e| UsageError(format!("cannot create --out {}: {e}", out.display())))?;
    let out = std::fs::canonicalize(&out)
        .map_err(|e| UsageError(format!("--out {}: {e}", out.display())))?;
    let workers = args.workers.max(1);
    let concurrency = args.model_concurrency.unwrap_or(workers).max(1);
    let mut settings = plan::settings(args, &config, repos, out)?;
    settings.run_config = report::settings_json(&settings, args, &instances_file, concurrency);
    let config_path = settings.out.join("run.config");
    // A fix-up (--redo-existing, --instance) keeps the run's own file, so
    // replaying it still resumes the whole run.
    let fix_up = args.redo_existing || !args.only.is_empty();
    if let Some(text) = effective.run_config()
        && !(fix_up && config_path.exists())
        && let Err(e) = std::fs::write(&config_path, text)
    {
        eprintln!("nib swebench: cannot write {}: {e}", config_path.display());
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
    if !todo.is_empty() {
        plan::probe_endpoint(&settings.model).map_err(UsageError)?;
    }
    let board = Arc::new(Board::new(
        todo.len(),
        skipped.len(),
        settings.limits.price.is_some(),
        Duration::from_secs(args.progress_every.max(1)),
    ));
    let skipped: Vec<String> = skipped.into_iter().map(|i| i.instance_id).collect();
    // run.json describes the whole OUT: what earlier invocations ran and
    // this one does not run again is kept.
    let report_path = settings.out.join("run.json");
    let earlier = report::earlier_instances(&report_path, &todo);
    let todo_ids: Vec<String> = todo.iter().map(|i| i.instance_id.clone()).collect();
    // What a second Ctrl-C writes: run.json as of the last finished
    // instance, and preds.json from preds.jsonl.
    let hard_stop = Arc::new(Mutex::new(Value::Null));
    let note = |results: &[InstanceResult]| {
        let finished: HashSet<&str> = results.iter().map(|r| r.id.as_str()).collect();
        let left: Vec<String> = todo_ids
            .iter()
            .filter(|id| !finished.contains(id.as_str()))
            .cloned()
            .collect();
        let why =
            "a second Ctrl-C stopped the run at once (the running instances run again next time)";
        let report = report::run_json(&settings, results, &earlier, &skipped, &left, Some(why));
        *hard_stop.lock().unwrap_or_else(PoisonError::into_inner) = report;
    };
    note(&[]);
    {
        let hard_stop = Arc::clone(&hard_stop);
        let (out, report_path) = (settings.out.clone(), report_path.clone());
        drain::catch_sigint(Box::new(move || {
            super::env::remove_live_containers();
            let report = hard_stop
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if let Err(e) = write_outputs(&out, &report_path, &report) {
                eprintln!("nib swebench: {e}");
            }
        }));
    }
    let ran = pool(&settings, &appender, todo, workers, &board, &note);

    let report = report::run_json(
        &settings,
        &ran.results,
        &earlier,
        &skipped,
        &ran.not_started,
        ran.drained.as_deref(),
    );
    let predicted = write_outputs(&settings.out, &report_path, &report)?;
    print!(
        "{}",
        report::table(&ran.results, skipped.len(), ran.not_started.len())
    );
    println!(
        "predictions: {} ({predicted} instance(s) in all); took {:.1} s",
        settings.out.join("preds.json").display(),
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

/// preds.json rebuilt from preds.jsonl, and run.json; returns how many
/// instances preds.json holds (a redone instance once).
fn write_outputs(out: &Path, report_path: &Path, report: &Value) -> Result<usize, UsageError> {
    let text = serde_json::to_string_pretty(report).unwrap_or_default();
    if let Err(e) = std::fs::write(report_path, text + "\n") {
        eprintln!("nib swebench: cannot write {}: {e}", report_path.display());
    }
    let all_preds = preds::read_jsonl(&out.join("preds.jsonl")).map_err(UsageError)?;
    preds::write_dict(&out.join("preds.json"), &all_preds).map_err(UsageError)?;
    let ids: HashSet<&str> = all_preds.iter().map(|p| p.instance_id.as_str()).collect();
    Ok(ids.len())
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
    note: &(dyn Fn(&[InstanceResult]) + Sync),
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
                    let mut all = results.lock().unwrap_or_else(PoisonError::into_inner);
                    all.push(result);
                    note(&all);
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
