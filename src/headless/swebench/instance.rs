//! One instance: its directory under `--out`, a worktree at its
//! `base_commit`, a headless session watched as it runs ([`Watch`]), the
//! patch taken whatever ended the session, and the instance's files
//! (`events.jsonl`, `trajectory.json`, `log.txt`, `patch.diff`,
//! `summary.json`).

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde_json::json;

use super::env::Prepared;
use super::image;
use super::instances::Instance;
use super::plan::{Settings, render_task};
use super::progress::Board;
use super::result::InstanceResult;
use super::status::ExitStatus;
use super::trajectory::{Ending, Trajectory};
use super::watch::Watch;
use super::worktree::{self, Worktree};
use crate::agent::{AgentConfig, Confirms, LogPlace, Outcome, SessionBuilder, Status};
use crate::files::Workspace;
use crate::model::ModelConfig;
use crate::settings::ModelChoice;
use crate::settings::model::scripted_server;

/// The files an earlier attempt of an instance left, replaced by a rerun.
const INSTANCE_FILES: [&str; 6] = [
    "events.jsonl",
    "patch.diff",
    "summary.json",
    "trajectory.json",
    "log.txt",
    "env.log",
];

pub(super) fn run_instance(
    settings: &Settings,
    inst: &Instance,
    board: &Arc<Board>,
) -> InstanceResult {
    let started = Instant::now();
    let id = inst.instance_id.as_str();
    let dir = settings.out.join(id);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        let why = format!("cannot create {}: {e}", dir.display());
        return InstanceResult::failed(id, ExitStatus::Error, why, started);
    }
    for stale in INSTANCE_FILES {
        let _ = std::fs::remove_file(dir.join(stale));
    }
    let trajectory = Trajectory::new(&dir, trajectory_head(settings, id), priced(settings));
    let failed = |status, why: String| {
        let ending = Ending {
            status: ExitStatus::as_str(status),
            message: why.clone(),
            seconds: started.elapsed().as_secs_f64(),
            patch_lines: 0,
            messages: serde_json::Value::Null,
        };
        if let Err(e) = trajectory.write(Some(&ending)) {
            board.say(&format!("nib swebench: {id}: {e}"));
        }
        InstanceResult::failed(id, status, why, started)
    };
    let env_log = dir.join("env.log");
    let (model, _server) = match instance_model(settings, id) {
        Ok(m) => m,
        Err(e) => return failed(ExitStatus::Error, e),
    };
    let tree = match make_tree(settings, inst, &env_log) {
        Ok(t) => t,
        Err(e) => {
            log_env_error(&env_log, &e);
            return failed(ExitStatus::EnvError, e);
        }
    };
    // The environment (a container of the instance's image, an install
    // step) before the session: a failure is the environment's, retried
    // by the next run.
    let env = settings.env.prepare(
        id,
        tree.path(),
        &env_log,
        settings.deadline,
        !tree.own_repository(),
    );
    let mut result = match env {
        Ok(env) => session(
            settings, inst, &tree, &env, model, &dir, started, trajectory, board,
        ),
        Err(e) => {
            log_env_error(&env_log, &e);
            failed(ExitStatus::EnvError, e)
        }
    };
    if settings.keep_worktrees {
        result.worktree = Some(tree.path().to_path_buf());
    } else if let Err(e) = tree.remove() {
        board.say(&format!("nib swebench: {id}: {e}"));
    }
    result
}

/// The instance's tree at its base commit: a worktree of the local clone
/// under `--repos`; in a container environment without one, the image's
/// own `/testbed` repository, copied out.
fn make_tree(settings: &Settings, inst: &Instance, env_log: &Path) -> Result<Worktree, String> {
    let path = settings.work.join(&inst.instance_id);
    let clone = settings
        .repos
        .as_deref()
        .map(|repos| worktree::find_clone(repos, &inst.repo));
    match (clone, &settings.env.engine) {
        (Some(Ok(clone)), _) => Worktree::add(&clone, &path, &inst.base_commit),
        (missing, Some(engine)) => {
            let mut log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(env_log)
                .map_err(|e| format!("cannot create {}: {e}", env_log.display()))?;
            if let Some(Err(why)) = missing {
                let _ = writeln!(log, "# {why}");
            }
            let image = settings.env.image_of(&inst.instance_id);
            Worktree::from_files(&path, &inst.base_commit, |tree| {
                image::export_testbed(&engine.program, engine.name, &image, tree, &mut log)
            })
        }
        (Some(Err(why)), None) => Err(why),
        (None, None) => Err(
            "no --repos: with --env local the repository comes from a local clone; give --repos DIR"
                .into(),
        ),
    }
}

/// What ended an instance before its session, at the end of env.log (so
/// a missing clone leaves one too).
fn log_env_error(env_log: &Path, why: &str) {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(env_log);
    if let Ok(mut f) = file {
        let _ = writeln!(f, "# env_error: {why}");
    }
}

fn priced(settings: &Settings) -> bool {
    settings.limits.price.is_some()
}

fn trajectory_head(settings: &Settings, id: &str) -> serde_json::Value {
    json!({
        "instance_id": id,
        "model_name_or_path": settings.name,
        "config": settings.run_config,
    })
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
#[allow(clippy::too_many_arguments)]
fn session(
    settings: &Settings,
    inst: &Instance,
    tree: &Worktree,
    env: &Prepared,
    model: ModelConfig,
    dir: &Path,
    started: Instant,
    trajectory: Trajectory,
    board: &Arc<Board>,
) -> InstanceResult {
    let id = inst.instance_id.as_str();
    let fail = |status, why: String, t: &Trajectory| {
        let ending = Ending {
            status: ExitStatus::as_str(status),
            message: why.clone(),
            seconds: started.elapsed().as_secs_f64(),
            patch_lines: 0,
            messages: serde_json::Value::Null,
        };
        let _ = t.write(Some(&ending));
        InstanceResult::failed(id, status, why, started)
    };
    let ws = match Workspace::open(tree.path()) {
        Ok(ws) => ws,
        Err(e) => return fail(ExitStatus::EnvError, e.to_string(), &trajectory),
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let watch = Arc::new(Watch::new(
        id,
        trajectory,
        Arc::clone(board),
        settings.limits,
        Arc::clone(&cancel),
    ));
    let seen = Arc::clone(&watch);
    let built = SessionBuilder::new(
        ws,
        Confirms::Policy {
            approve_writes: true,
        },
    )
    .user_config(&settings.config)
    .shell_place(env.place())
    .log(LogPlace::At(dir.join("events.jsonl")))
    .cancel(cancel)
    .subscribe(move |entry| seen.see(entry))
    .build();
    let session = match built {
        Ok(session) => session,
        Err(e) => {
            let why = e.to_string();
            watch.end(&Ending {
                status: ExitStatus::Error.as_str(),
                message: why.clone(),
                seconds: started.elapsed().as_secs_f64(),
                patch_lines: 0,
                messages: serde_json::Value::Null,
            });
            return InstanceResult::failed(id, ExitStatus::Error, why, started);
        }
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
    let streamed = Arc::clone(&watch);
    let outcome = session
        .run(&cfg, &task, move |ev| streamed.stream(ev))
        .unwrap_or_else(|e| Outcome {
            status: Status::Error,
            text: e.to_string(),
            steps: 0,
            refused_confirms: 0,
            tokens: 0,
            messages: serde_json::Value::Null,
        });
    let timed_out = session.host.deadline_flag().load(Ordering::Relaxed);
    let (patch, patch_error) = match tree.patch() {
        Ok(p) => (p, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    if let Err(e) = std::fs::write(dir.join("patch.diff"), &patch) {
        board.say(&format!("nib swebench: {id}: cannot write patch.diff: {e}"));
    }
    let (status, message) = match patch_error {
        Some(e) => (ExitStatus::Error, e),
        None => watch.tally.status(&outcome, patch.is_empty(), timed_out),
    };
    // A patch is text unless the model wrote invalid UTF-8 into a text
    // file; JSON cannot carry that, patch.diff keeps the bytes.
    let patch = String::from_utf8_lossy(&patch).into_owned();
    let seconds = started.elapsed().as_secs_f64();
    watch.end(&Ending {
        status: status.as_str(),
        message: message.clone(),
        seconds,
        patch_lines: patch.lines().count(),
        messages: outcome.messages.clone(),
    });
    // A stop nib made (or the deadline) cancels the step that was about
    // to ask the model: that step made no reply, so it is not counted.
    let stats = watch.stats();
    let steps = match status {
        ExitStatus::Timeout | ExitStatus::FormatError | ExitStatus::CostLimit => {
            outcome.steps.min(stats.api_calls)
        }
        _ => outcome.steps,
    };
    InstanceResult {
        id: id.to_string(),
        status,
        steps,
        tokens: outcome.tokens,
        seconds,
        patch,
        refused_calls: watch.tally.refused_calls.load(Ordering::Relaxed),
        message,
        session_ran: true,
        worktree: None,
        stats,
    }
}
