//! `nib swebench grade`: a quick local check of predictions. For each
//! instance with a prediction: a fresh worktree at `base_commit`, the
//! predicted patch applied, the instance's test files restored and its
//! `test_patch` applied (as the harness does), the test command run in the
//! current environment, its log parsed, and each FAIL_TO_PASS and
//! PASS_TO_PASS test judged by the harness's rules (F2P passes on
//! PASSED/XFAIL; P2P also tolerates SKIPPED; a missing test fails; an id
//! with more `[` than `]` matches by prefix).
//!
//! Where the tests run is `--env` (see env.rs): in the instance's image
//! through docker or podman, or on this machine, with `--install-cmd` run
//! first, or else the worktree put first on PYTHONPATH. An empty patch is
//! reported as `empty` and not run, as the harness does.
//!
//! This is not the official harness: it does not build images, and
//! locally the Python is whatever is on PATH. The official harness (or
//! sb-cli) is the reference; a disagreement is this check's error.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{Value, json};

use super::env::{self, Env, EnvArgs};
use super::instances::{self, Instance};
pub use super::logparse::LogFormat;
use super::logparse::{TestStatus, parse_log};
use super::preds;
use super::worktree::{self, Worktree};
use crate::settings::UsageError;

/// What every report and the output say about this check.
pub const NOTE: &str =
    "a quick check, not the official harness; the official SWE-bench harness is the reference";

#[derive(Debug, Args)]
pub struct GradeArgs {
    /// The instance records: JSONL, or a JSON array.
    #[arg(long)]
    pub instances: PathBuf,
    /// A directory of clones, named owner__repo or owner/repo.
    #[arg(long)]
    pub repos: PathBuf,
    /// The run's output directory: predictions are read from it and
    /// <id>/grade.json, <id>/test_output.txt are written to it.
    #[arg(long)]
    pub out: PathBuf,
    /// Grade only this instance (repeatable).
    #[arg(long = "instance", value_name = "ID")]
    pub only: Vec<String>,
    /// The test command, run with sh in the worktree: {tests} becomes the
    /// test files of test_patch (Django: test module labels), {test_ids}
    /// the FAIL_TO_PASS and PASS_TO_PASS ids. Default: the instance's
    /// test_cmd field, else the repository's usual command.
    #[arg(long)]
    pub test_cmd: Option<String>,
    /// How to read the test log (default: by repository).
    #[arg(long, value_enum)]
    pub log_format: Option<LogFormat>,
    /// Predictions to grade instead of OUT/preds.jsonl (.jsonl or .json).
    #[arg(long)]
    pub preds: Option<PathBuf>,
    /// Grade the instances' own gold patches (checks the environment).
    #[arg(long)]
    pub gold: bool,
    /// Seconds the test command may run.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    /// Keep each grading worktree (under OUT/.grade).
    #[arg(long)]
    pub keep_worktrees: bool,
    /// Where the tests run (--env), and --install-cmd: run in the fresh
    /// worktree after the patches, before the tests; with it, the worktree
    /// is not put on PYTHONPATH.
    #[command(flatten)]
    pub env: EnvArgs,
}

/// The test command for the repositories whose tests are not run with
/// pytest.
fn repo_default(repo: &str) -> &'static str {
    match repo {
        "django/django" => {
            "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {tests}"
        }
        "sympy/sympy" => "bin/test -C --verbose {tests}",
        _ => "python3 -m pytest -rA {tests}",
    }
}

pub(super) fn run(args: GradeArgs) -> Result<ExitCode, UsageError> {
    let all = instances::load(&args.instances).map_err(UsageError)?;
    let selected = instances::select(all, None, &args.only).map_err(UsageError)?;
    let patches = patches(&args, &selected)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| UsageError(format!("cannot create --out {}: {e}", args.out.display())))?;
    let out = std::fs::canonicalize(&args.out)
        .map_err(|e| UsageError(format!("--out {}: {e}", args.out.display())))?;
    let repos = std::fs::canonicalize(&args.repos)
        .map_err(|e| UsageError(format!("--repos {}: {e}", args.repos.display())))?;
    eprintln!("nib swebench grade: {NOTE}.");
    let env = args.env.resolve()?;
    eprintln!("nib swebench grade: {}", env.describe());
    let mut resolved_all = true;
    let mut graded = 0;
    for inst in &selected {
        let Some(patch) = patches.get(&inst.instance_id) else {
            if !args.only.is_empty() {
                eprintln!("{}: no prediction, not graded", inst.instance_id);
            }
            continue;
        };
        graded += 1;
        let report = grade(&args, &env, &repos, &out, inst, patch);
        let dir = out.join(&inst.instance_id);
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        if let Err(e) = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("grade.json"), text + "\n"))
        {
            eprintln!("cannot write {}/grade.json: {e}", dir.display());
        }
        resolved_all &= report["resolved"] == true;
        print!("{}", describe(inst, &report));
    }
    println!("{graded} instance(s) graded; {NOTE}.");
    if graded == 0 {
        return Err(UsageError(
            "no instance had a prediction to grade; check --out (or --preds) and --instance".into(),
        ));
    }
    Ok(if resolved_all {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Instance id → the patch to grade.
fn patches(
    args: &GradeArgs,
    selected: &[Instance],
) -> Result<BTreeMap<String, String>, UsageError> {
    if args.gold {
        return Ok(selected
            .iter()
            .map(|i| (i.instance_id.clone(), i.patch.clone()))
            .collect());
    }
    let file = match &args.preds {
        Some(p) => p.clone(),
        None if args.out.join("preds.jsonl").is_file() => args.out.join("preds.jsonl"),
        None => args.out.join("preds.json"),
    };
    if !file.is_file() {
        return Err(UsageError(format!(
            "no predictions at {}; run nib swebench first, or give --preds FILE",
            file.display()
        )));
    }
    Ok(preds::read_any(&file)
        .map_err(UsageError)?
        .into_iter()
        .map(|p| (p.instance_id, p.model_patch))
        .collect())
}

fn grade(
    args: &GradeArgs,
    env: &Env,
    repos: &Path,
    out: &Path,
    inst: &Instance,
    patch: &str,
) -> Value {
    let started = Instant::now();
    let mut report = json!({
        "instance_id": inst.instance_id,
        "note": NOTE,
        "patch": if args.gold { "gold" } else { "prediction" },
        "environment": env.to_json(),
        "empty_patch": false,
        "patch_applied": false,
        "test_patch_applied": false,
        "resolved": false,
    });
    // As the harness: an empty patch is counted, not run.
    if patch.trim().is_empty() {
        report["empty_patch"] = Value::Bool(true);
        return report;
    }
    let tree = worktree::find_clone(repos, &inst.repo).and_then(|clone| {
        Worktree::add(
            &clone,
            &out.join(".grade").join(&inst.instance_id),
            &inst.base_commit,
        )
    });
    let tree = match tree {
        Ok(t) => t,
        Err(e) => {
            report["error"] = Value::from(e);
            return report;
        }
    };
    let checked = check(args, env, out, inst, patch, &tree, &mut report);
    if let Err(e) = checked {
        report["error"] = Value::from(e);
    }
    report["seconds"] = json!((started.elapsed().as_secs_f64() * 10.0).round() / 10.0);
    if args.keep_worktrees {
        report["worktree"] = Value::from(tree.path().display().to_string());
    } else if let Err(e) = tree.remove() {
        eprintln!("{}: {e}", inst.instance_id);
    }
    report
}

fn check(
    args: &GradeArgs,
    env: &Env,
    out: &Path,
    inst: &Instance,
    patch: &str,
    tree: &Worktree,
    report: &mut Value,
) -> Result<(), String> {
    let dir = tree.path();
    worktree::apply(dir, patch.as_bytes())
        .map_err(|e| format!("the patch does not apply at base_commit: {e}"))?;
    report["patch_applied"] = Value::Bool(true);
    let test_files = patch_files(&inst.test_patch);
    worktree::checkout(dir, &inst.base_commit, &test_files)?;
    worktree::apply(dir, inst.test_patch.as_bytes())
        .map_err(|e| format!("the instance's test_patch does not apply: {e}"))?;
    report["test_patch_applied"] = Value::Bool(true);

    let template = args
        .test_cmd
        .clone()
        .or(inst.test_cmd.clone())
        .unwrap_or_else(|| repo_default(&inst.repo).to_string());
    let format = args
        .log_format
        .unwrap_or_else(|| LogFormat::of_repo(&inst.repo));
    let command = fill(&template, &directives(&test_files, format), inst);
    report["command"] = Value::from(command.clone());
    let inst_dir = out.join(&inst.instance_id);
    std::fs::create_dir_all(&inst_dir)
        .map_err(|e| format!("cannot create the instance's directory: {e}"))?;
    let log_path = inst_dir.join("test_output.txt");
    let _ = std::fs::remove_file(&log_path);
    let timeout = Duration::from_secs(args.timeout.max(1));
    let _ = std::fs::remove_file(inst_dir.join("env.log"));
    let prepared = env
        .prepare(
            &inst.instance_id,
            dir,
            &inst_dir.join("env.log"),
            timeout,
            true,
        )
        .map_err(|e| format!("the environment could not be set up: {e}"))?;
    let log = File::create(&log_path)
        .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
    // Without an install step, locally, the worktree's code is what gets
    // imported because it comes first on PYTHONPATH.
    let local_env = if env.engine.is_none() && env.install_cmd.is_none() {
        python_path(dir)?
    } else {
        Vec::new()
    };
    let (code, timed_out) =
        env::run_logged(&prepared.place(), dir, &command, &log, timeout, &local_env)?;
    drop(prepared);
    report["exit_code"] = json!(code);
    report["timed_out"] = Value::Bool(timed_out);
    let log = std::fs::read(&log_path).map_err(|e| format!("cannot read the test log: {e}"))?;
    let statuses = parse_log(&String::from_utf8_lossy(&log), format);
    let (f2p_ok, f2p) = judge(&inst.fail_to_pass, &statuses, false);
    let (p2p_ok, p2p) = judge(&inst.pass_to_pass, &statuses, true);
    report["FAIL_TO_PASS"] = f2p;
    report["PASS_TO_PASS"] = p2p;
    if inst.fail_to_pass.is_empty() {
        return Err("the record lists no FAIL_TO_PASS tests, so nothing shows a fix".into());
    }
    report["resolved"] = Value::Bool(f2p_ok && p2p_ok);
    Ok(())
}

/// The files a diff touches (`diff --git a/X b/X`, the b side).
fn patch_files(patch: &str) -> Vec<String> {
    let mut files: Vec<String> = patch
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git "))
        .filter_map(|l| l.split_once(" b/").map(|(_, b)| b.to_string()))
        .collect();
    files.dedup();
    files
}

/// What `{tests}` becomes: the Python test files (Django: their module
/// labels relative to tests/), shell-quoted.
fn directives(files: &[String], format: LogFormat) -> Vec<String> {
    let py: Vec<&String> = files.iter().filter(|f| f.ends_with(".py")).collect();
    let chosen: Vec<&String> = if py.is_empty() {
        files.iter().collect()
    } else {
        py
    };
    chosen
        .into_iter()
        .map(|f| match format {
            LogFormat::Django => f
                .strip_prefix("tests/")
                .unwrap_or(f)
                .trim_end_matches(".py")
                .replace('/', "."),
            _ => f.clone(),
        })
        .collect()
}

fn fill(template: &str, tests: &[String], inst: &Instance) -> String {
    let quote = |items: Vec<&String>| -> String {
        items
            .iter()
            .map(|s| shell_quote(s))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let ids = quote(inst.fail_to_pass.iter().chain(&inst.pass_to_pass).collect());
    template
        .replace("{tests}", &quote(tests.iter().collect()))
        .replace("{test_ids}", &ids)
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=+,@".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// PYTHONPATH with the worktree (and its `src/`) first, and byte-code
/// left unwritten.
fn python_path(dir: &Path) -> Result<Vec<(&'static str, OsString)>, String> {
    let mut path = vec![dir.to_path_buf()];
    if dir.join("src").is_dir() {
        path.push(dir.join("src"));
    }
    if let Some(old) = std::env::var_os("PYTHONPATH") {
        path.extend(std::env::split_paths(&old));
    }
    let pythonpath = std::env::join_paths(path).map_err(|e| format!("PYTHONPATH: {e}"))?;
    Ok(vec![
        ("PYTHONPATH", pythonpath),
        ("PYTHONDONTWRITEBYTECODE", OsString::from("1")),
    ])
}

/// Whether every test in `ids` passed, and each one's outcome in the form
/// `{"success": [...], "failure": [...], "tests": {id: outcome}}`.
fn judge(ids: &[String], log: &BTreeMap<String, TestStatus>, skip_ok: bool) -> (bool, Value) {
    let (mut success, mut failure) = (Vec::new(), Vec::new());
    let mut each = serde_json::Map::new();
    for id in ids {
        let truncated = id.matches('[').count() > id.matches(']').count();
        let status = log.get(id).copied().or_else(|| {
            truncated
                .then(|| log.iter().find(|(k, _)| k.starts_with(id.as_str())))
                .flatten()
                .map(|(_, s)| *s)
        });
        let passed = match status {
            Some(TestStatus::Passed | TestStatus::Xfail) => true,
            Some(TestStatus::Skipped) => skip_ok,
            _ => false,
        };
        each.insert(
            id.clone(),
            Value::from(status.map_or("missing", TestStatus::as_str)),
        );
        if passed {
            success.push(id.clone());
        } else {
            failure.push(id.clone());
        }
    }
    let all = failure.is_empty();
    (
        all,
        json!({"success": success, "failure": failure, "tests": each}),
    )
}

/// The lines printed for one graded instance.
fn describe(inst: &Instance, report: &Value) -> String {
    let count = |key: &str, part: &str| report[key][part].as_array().map_or(0, Vec::len);
    let verdict = if report["resolved"] == true {
        "resolved"
    } else {
        "not resolved"
    };
    let mut out = format!(
        "{}: {verdict} (FAIL_TO_PASS {}/{}, PASS_TO_PASS {}/{})\n",
        inst.instance_id,
        count("FAIL_TO_PASS", "success"),
        inst.fail_to_pass.len(),
        count("PASS_TO_PASS", "success"),
        inst.pass_to_pass.len(),
    );
    if report["empty_patch"] == true {
        out.push_str("  empty patch: not run (the harness counts it as empty)\n");
    }
    if let Some(e) = report["error"].as_str() {
        out.push_str(&format!("  error: {e}\n"));
    }
    for key in ["FAIL_TO_PASS", "PASS_TO_PASS"] {
        if let Some(tests) = report[key]["tests"].as_object() {
            for (id, status) in tests {
                // Every F2P test, and the P2P tests that broke.
                if key == "FAIL_TO_PASS"
                    || !matches!(status.as_str(), Some("passed" | "xfail" | "skipped"))
                {
                    out.push_str(&format!(
                        "  {key} {id}: {}\n",
                        status.as_str().unwrap_or("")
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judging_follows_the_harness() {
        let log = parse_log(
            "PASSED t.py::a\nSKIPPED t.py::s\nPASSED t.py::p[x y]\n",
            LogFormat::Pytest,
        );
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(judge(&ids(&["t.py::a", "t.py::p[x"]), &log, false).0);
        assert!(!judge(&ids(&["t.py::s"]), &log, false).0);
        assert!(judge(&ids(&["t.py::s"]), &log, true).0);
        let (ok, v) = judge(&ids(&["t.py::gone"]), &log, true);
        assert!(!ok);
        assert_eq!(v["tests"]["t.py::gone"], "missing");
    }

    #[test]
    fn test_files_become_arguments() {
        let patch = "diff --git a/tests/foo/tests.py b/tests/foo/tests.py\n--- a\n+++ b\ndiff --git a/tests/data.json b/tests/data.json\n";
        let files = patch_files(patch);
        assert_eq!(files, ["tests/foo/tests.py", "tests/data.json"]);
        assert_eq!(directives(&files, LogFormat::Django), ["foo.tests"]);
        assert_eq!(
            directives(&files, LogFormat::Pytest),
            ["tests/foo/tests.py"]
        );
        assert_eq!(shell_quote("a b's"), "'a b'\\''s'");
    }
}
