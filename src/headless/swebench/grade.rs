//! `nib swebench grade`: a quick local check of predictions. For each
//! instance with a prediction: a fresh worktree at `base_commit`, the
//! predicted patch applied, the instance's test files restored and its
//! `test_patch` applied (as the harness does), the test command run in the
//! current environment, its log parsed, and each FAIL_TO_PASS and
//! PASS_TO_PASS test judged by the harness's rules (F2P passes on
//! PASSED/XFAIL; P2P also tolerates SKIPPED; a missing test fails; an id
//! with more `[` than `]` matches by prefix).
//!
//! This is not the official harness: there is no per-repo environment, no
//! Docker image, the Python is whatever is on PATH. The official harness
//! (or sb-cli) is the reference; a disagreement is this check's error.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use super::instances::{self, Instance};
use super::preds;
use super::worktree::{self, Worktree};
use crate::settings::UsageError;

/// What every report and the output say about this check.
pub const NOTE: &str =
    "a quick local check without Docker; the official SWE-bench harness is the reference";

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
}

/// Test log formats, as the harness parses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `pytest -rA`: lines `PASSED id`, `FAILED id - reason`, ...
    Pytest,
    /// Django's runtests.py: `test_x (module.Class) ... ok`.
    Django,
    /// sympy's bin/test: `test_x ok`, `test_y F`.
    Sympy,
}

/// A test's outcome in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TestStatus {
    Passed,
    Failed,
    Skipped,
    Error,
    Xfail,
}

impl TestStatus {
    fn as_str(self) -> &'static str {
        match self {
            TestStatus::Passed => "passed",
            TestStatus::Failed => "failed",
            TestStatus::Skipped => "skipped",
            TestStatus::Error => "error",
            TestStatus::Xfail => "xfail",
        }
    }
}

/// The command, log format and how test files become arguments, for the
/// repositories whose tests are not run with pytest.
fn repo_default(repo: &str) -> (&'static str, LogFormat) {
    match repo {
        "django/django" => (
            "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {tests}",
            LogFormat::Django,
        ),
        "sympy/sympy" => ("bin/test -C --verbose {tests}", LogFormat::Sympy),
        _ => ("python3 -m pytest -rA {tests}", LogFormat::Pytest),
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
        let report = grade(&args, &repos, &out, inst, patch);
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

fn grade(args: &GradeArgs, repos: &Path, out: &Path, inst: &Instance, patch: &str) -> Value {
    let started = Instant::now();
    let mut report = json!({
        "instance_id": inst.instance_id,
        "note": NOTE,
        "patch": if args.gold { "gold" } else { "prediction" },
        "patch_applied": false,
        "test_patch_applied": false,
        "resolved": false,
    });
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
    let checked = check(args, out, inst, patch, &tree, &mut report);
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

    let (default_cmd, default_format) = repo_default(&inst.repo);
    let template = args
        .test_cmd
        .clone()
        .or(inst.test_cmd.clone())
        .unwrap_or_else(|| default_cmd.to_string());
    let format = args.log_format.unwrap_or(default_format);
    let command = fill(&template, &directives(&test_files, format), inst);
    report["command"] = Value::from(command.clone());
    let log_path = out.join(&inst.instance_id).join("test_output.txt");
    std::fs::create_dir_all(out.join(&inst.instance_id))
        .map_err(|e| format!("cannot create the instance's directory: {e}"))?;
    let (code, timed_out) = run_tests(dir, &command, &log_path, args.timeout)?;
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

/// Runs `command` with sh in `dir`, its output (both streams) in `log`; the
/// worktree goes first on PYTHONPATH so its code is what gets imported.
fn run_tests(
    dir: &Path,
    command: &str,
    log: &Path,
    timeout: u64,
) -> Result<(Option<i32>, bool), String> {
    let file = File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("cannot share {}: {e}", log.display()))?;
    let mut path = vec![dir.to_path_buf()];
    if dir.join("src").is_dir() {
        path.push(dir.join("src"));
    }
    if let Some(old) = std::env::var_os("PYTHONPATH") {
        path.extend(std::env::split_paths(&old));
    }
    let pythonpath = std::env::join_paths(path).map_err(|e| format!("PYTHONPATH: {e}"))?;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PYTHONPATH", pythonpath)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(timeout.max(1));
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok((status.code(), false)),
            Ok(None) if Instant::now() >= deadline => {
                crate::prim::tools::kill_group(&mut child);
                let _ = child.wait();
                return Ok((None, true));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for the tests failed: {e}")),
        }
    }
}

/// Test id → its outcome, as the harness's log parsers read them.
fn parse_log(log: &str, format: LogFormat) -> BTreeMap<String, TestStatus> {
    let mut out = BTreeMap::new();
    for line in log.lines() {
        let found = match format {
            LogFormat::Pytest => pytest_line(line),
            LogFormat::Django => django_line(line),
            LogFormat::Sympy => sympy_line(line),
        };
        if let Some((id, status)) = found {
            out.insert(id, status);
        }
    }
    out
}

fn pytest_line(line: &str) -> Option<(String, TestStatus)> {
    let status = match line.split_whitespace().next()? {
        "PASSED" => TestStatus::Passed,
        "FAILED" => TestStatus::Failed,
        "SKIPPED" => TestStatus::Skipped,
        "ERROR" => TestStatus::Error,
        "XFAIL" => TestStatus::Xfail,
        _ => return None,
    };
    let line = if status == TestStatus::Failed {
        line.replace(" - ", " ")
    } else {
        line.to_string()
    };
    let id = line.split_whitespace().nth(1)?;
    Some((id.to_string(), status))
}

fn django_line(line: &str) -> Option<(String, TestStatus)> {
    let (id, result) = line.rsplit_once(" ... ")?;
    let status = match result.trim() {
        "ok" | "OK" => TestStatus::Passed,
        r if r.starts_with("skipped") => TestStatus::Skipped,
        "expected failure" => TestStatus::Xfail,
        "FAIL" | "unexpected success" => TestStatus::Failed,
        "ERROR" => TestStatus::Error,
        _ => return None,
    };
    Some((id.trim().to_string(), status))
}

fn sympy_line(line: &str) -> Option<(String, TestStatus)> {
    let mut words = line.split_whitespace();
    let (id, result) = (words.next()?, words.next()?);
    if !id.starts_with("test_") || words.next().is_some() {
        return None;
    }
    let status = match result {
        "ok" => TestStatus::Passed,
        "f" => TestStatus::Xfail,
        "s" => TestStatus::Skipped,
        "F" | "X" => TestStatus::Failed,
        "E" => TestStatus::Error,
        _ => return None,
    };
    Some((id.to_string(), status))
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
    fn the_three_log_formats() {
        let log = "PASSED tests/t.py::test_a\nFAILED tests/t.py::test_b - assert 1 == 2\nSKIPPED [1] x\nXFAIL tests/t.py::test_c[x y]\n";
        let s = parse_log(log, LogFormat::Pytest);
        assert_eq!(s.get("tests/t.py::test_a"), Some(&TestStatus::Passed));
        assert_eq!(s.get("tests/t.py::test_b"), Some(&TestStatus::Failed));
        let django =
            "test_x (m.C) ... ok\ntest_y (m.C) ... FAIL\ntest_z (m.C) ... skipped 'no db'\n";
        let d = parse_log(django, LogFormat::Django);
        assert_eq!(d.get("test_x (m.C)"), Some(&TestStatus::Passed));
        assert_eq!(d.get("test_y (m.C)"), Some(&TestStatus::Failed));
        assert_eq!(d.get("test_z (m.C)"), Some(&TestStatus::Skipped));
        let sympy = parse_log(
            "test_one ok\ntest_two F\nrandom words here\n",
            LogFormat::Sympy,
        );
        assert_eq!(sympy.len(), 2);
    }

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
