//! `nib swebench slurm` and `nib compare`, with the real binary, a fixture
//! repository and the scripted model: the job scripts (`--dry-run`), a
//! real single-node Slurm running four shards and the merge (gated: needs
//! Debian's slurm-wlm and munge and root; `.ci/run` installs them), two
//! runs compared figure by figure, and repeat runs giving the same bytes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod support;
use support::{Run, git, read_json};

const NIB: &str = env!("CARGO_BIN_EXE_nib");

struct Fixture {
    dir: tempfile::TempDir,
    repos: PathBuf,
    base: String,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let upstream = dir.path().join("upstream");
    fs::create_dir_all(&upstream).expect("upstream");
    git(&upstream, &["init", "-q", "-b", "main"]);
    fs::write(
        upstream.join("calc.py"),
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
    )
    .expect("calc.py");
    fs::write(upstream.join(".gitignore"), ".nib/\n").expect("gitignore");
    git(&upstream, &["add", "-A"]);
    git(&upstream, &["commit", "-qm", "calc with two bugs"]);
    let base = git(&upstream, &["rev-parse", "HEAD"]);
    let repos = dir.path().join("repos");
    fs::create_dir(&repos).expect("repos");
    let ok = Command::new("git")
        .args(["clone", "-q"])
        .arg(&upstream)
        .arg(repos.join("acme__calc"))
        .status()
        .expect("clone");
    assert!(ok.success());
    fs::create_dir(dir.path().join("config")).expect("config dir");
    Fixture { dir, repos, base }
}

impl Fixture {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        fs::write(&path, text).expect("write fixture file");
        path.display().to_string()
    }

    fn instances(&self, n: u32) -> String {
        let text: String = (1..=n)
            .map(|k| {
                format!(
                    "{}\n",
                    json!({"repo": "acme/calc", "instance_id": format!("acme__calc-{k}"),
                        "base_commit": self.base, "problem_statement": "add and mul are wrong."})
                )
            })
            .collect();
        self.write("instances.jsonl", &text)
    }

    /// The run's options (after `nib swebench`).
    fn run_args(&self, instances: &str, out: &Path, script: &str) -> Vec<String> {
        [
            "--instances",
            instances,
            "--repos",
            &self.repos.display().to_string(),
            "--out",
            &out.display().to_string(),
            "--provider",
            "scripted",
            "--model",
            script,
            "--env",
            "local",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(NIB);
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("XDG_CONFIG_HOME", self.path("config"))
            .stdin(Stdio::null());
        cmd
    }

    fn nib(&self, args: &[String]) -> Run {
        let out = self.command(args).output().expect("run nib");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn swebench(&self, instances: &str, out: &str, script: &str) -> Run {
        let mut args = vec!["swebench".to_string()];
        args.extend(self.run_args(instances, &self.path(out), script));
        self.nib(&args)
    }
}

/// Two fixes as two fs-edit calls in one reply, the first failing once
/// (an old text that is not there) and sent again.
fn two_calls() -> Value {
    json!([
        {"tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}]},
        {"tool_calls": [
            {"name": "fs-edit", "arguments": {"path": "calc.py", "old": "return a -- b", "new": "return a + b"}},
            {"name": "fs-edit", "arguments": {"path": "calc.py", "old": "return a + b\n", "new": "return a * b\n"}}
        ]},
        {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "old": "return a - b", "new": "return a + b"}}]},
        "fixed both"
    ])
}

/// Both fixes as one list call.
fn one_list() -> Value {
    json!([
        {"tool_calls": [{"name": "fs-read", "arguments": {"path": "calc.py"}}]},
        {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "edits": [
            {"old": "return a - b", "new": "return a + b"},
            {"old": "return a ** b", "new": "return a * b"}
        ]}}]},
        {"tool_calls": [{"name": "fs-edit", "arguments": {"path": "calc.py", "edits": [
            {"old": "return a - b", "new": "return a + b"},
            {"old": "def mul(a, b):\n    return a + b", "new": "def mul(a, b):\n    return a * b"}
        ]}}]},
        "fixed both"
    ])
}

#[test]
fn the_same_script_twice_gives_the_same_bytes() {
    let fx = fixture();
    let instances = fx.instances(3);
    let script = fx.write("a.json", &two_calls().to_string());
    for out in ["one", "two"] {
        let run = fx.swebench(&instances, out, &script);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    }
    let one = fs::read(fx.path("one/preds.json")).expect("preds");
    assert_eq!(one, fs::read(fx.path("two/preds.json")).expect("preds"));
    let preds: Value = serde_json::from_slice(&one).expect("json");
    assert!(
        preds["acme__calc-1"]["model_patch"]
            .as_str()
            .is_some_and(|p| p.contains("+    return a + b")),
        "{preds:#}"
    );
}

#[test]
fn compare_reports_every_figure_with_differences_and_charts() {
    let fx = fixture();
    let instances = fx.instances(3);
    let a = fx.write("a.json", &two_calls().to_string());
    let b = fx.write("b.json", &one_list().to_string());
    assert_eq!(fx.swebench(&instances, "A", &a).code, 0);
    assert_eq!(fx.swebench(&instances, "B", &b).code, 0);
    // A second run of A, pooled with the first.
    assert_eq!(fx.swebench(&instances, "A2", &a).code, 0);
    let resolved_a = fx.write("resolved-a.json", r#"{"resolved_ids": ["acme__calc-1"]}"#);
    let resolved_a2 = fx.write("resolved-a2.txt", "acme__calc-1\n");
    let resolved_b = fx.write("resolved-b.json", r#"["acme__calc-1", "acme__calc-2"]"#);
    let args: Vec<String> = [
        "compare",
        "A",
        "B",
        "--a",
        "A2",
        "--resolved-a",
        &resolved_a,
        "--resolved-a",
        &resolved_a2,
        "--resolved-b",
        &resolved_b,
        "--json",
        "--out",
        "cmp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = fx.nib(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(r["paired"], 3);
    assert_eq!(r["a"]["runs"].as_array().map(Vec::len), Some(2));
    let total = |key: &str| -> Value {
        r["totals"]
            .as_array()
            .expect("totals")
            .iter()
            .find(|t| t["figure"] == key)
            .cloned()
            .unwrap_or_else(|| panic!("{key} in {r:#}"))
    };
    // Resolved: 1 of 3 against 2 of 3.
    assert_eq!(
        total("resolved")["a"].as_f64().map(|x| (x * 3.0).round()),
        Some(1.0)
    );
    assert_eq!(
        total("resolved")["b"].as_f64().map(|x| (x * 3.0).round()),
        Some(2.0)
    );
    // Per instance: A makes three fs-edit calls (one failing: not found),
    // B two list calls (the first failing on "edit 2 of 2", then all of
    // its other edits sent again).
    assert_eq!(total("fs_edit_calls")["a"], 9.0);
    assert_eq!(total("fs_edit_calls")["b"], 6.0);
    assert_eq!(total("fail_not_found")["a"], 3.0);
    assert_eq!(total("replies_two_edits_one_file")["a"], 3.0);
    assert_eq!(total("replies_two_edits_one_file")["b"], 0.0);
    assert_eq!(total("list_calls")["b"], 6.0);
    assert_eq!(total("list_calls")["a"], 0.0);
    assert_eq!(total("lone_re_edits")["a"], 3.0);
    assert_eq!(
        total("failed_lists")["b"],
        3.0,
        "{:#}",
        total("failed_lists")
    );
    assert_eq!(total("failed_lists_resent")["b"], 3.0);
    assert_eq!(total("requests")["a"], 12.0);
    assert_eq!(total("main_requests")["a"], 12.0);
    assert_eq!(total("prompt_seconds")["a"], Value::Null);
    let rates = &r["rates"];
    assert!(rates.as_array().is_some_and(|a| a.len() == 6), "{rates:#}");
    assert_eq!(r["instances"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        r["instances"][0]["figures"]["fs_edit_calls"],
        json!({"a": 3.0, "b": 2.0})
    );
    // Beside the report: the text, the JSON and a chart per figure.
    let text = fs::read_to_string(fx.path("cmp/report.txt")).expect("report");
    assert!(text.contains("resolved rate"), "{text}");
    assert!(text.contains("95% interval"), "{text}");
    let svg = fs::read_to_string(fx.path("cmp/chart-fs_edit_calls.svg")).expect("chart");
    assert!(
        svg.starts_with("<svg ") && svg.contains("fs-edit calls"),
        "{svg}"
    );
    assert_eq!(read_json(&fx.path("cmp/compare.json")), r);

    // Bad inputs say what to do.
    let bad = fx.nib(&["compare".into(), "A".into(), "nowhere".into()]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("nowhere"), "{}", bad.stderr);
    let bad = fx.nib(&[
        "compare".into(),
        "A".into(),
        "B".into(),
        "--resolved-b".into(),
        resolved_b.clone(),
        "--resolved-b".into(),
        resolved_b,
    ]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("one per run"), "{}", bad.stderr);
}

#[test]
fn slurm_dry_run_writes_and_prints_the_scripts_and_checks_the_run_first() {
    let fx = fixture();
    let instances = fx.instances(4);
    let script = fx.write("a.json", &two_calls().to_string());
    let out = fx.path("cluster");
    let mut args: Vec<String> = [
        "swebench",
        "slurm",
        "--shards",
        "4",
        "--dry-run",
        "--sbatch=--time=0:10:00",
        "--",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(fx.run_args(&instances, &out, &script));
    let run = fx.nib(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("#SBATCH --array=0-3"), "{}", run.stdout);
    assert!(
        run.stdout.contains("#SBATCH --time=0:10:00"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("--dependency=afterany"),
        "{}",
        run.stdout
    );
    let shards = fs::read_to_string(out.join("slurm/shards.sbatch")).expect("shards.sbatch");
    assert!(
        shards.contains("--shard \"$SLURM_ARRAY_TASK_ID/4\""),
        "{shards}"
    );
    let config = fs::read_to_string(out.join("slurm/run.config")).expect("run.config");
    assert!(config.contains("provider=scripted"), "{config}");
    assert!(out.join("slurm/merge.sbatch").exists());

    // The run's options are checked before anything is written.
    let mut bad: Vec<String> = [
        "swebench",
        "slurm",
        "--shards",
        "2",
        "--dry-run",
        "--",
        "--max-stepz",
        "3",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = fx.nib(&bad);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("max-stepz"), "{}", run.stderr);
    bad.truncate(6);
    bad.extend(fx.run_args(&instances, &out, &script));
    bad.extend(["--shard".into(), "0/2".into()]);
    let run = fx.nib(&bad);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("leave --shard out"), "{}", run.stderr);
}

/// Stops the local Slurm when the test ends, passing or not.
struct LocalSlurm {
    dir: PathBuf,
    script: PathBuf,
}

impl Drop for LocalSlurm {
    fn drop(&mut self) {
        let _ = Command::new(&self.script)
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

#[test]
#[ignore = "needs slurm: Debian's slurm-wlm and munge, run as root (scripts/slurm-local.sh; .ci/run installs them)"]
fn a_real_slurm_runs_four_shards_and_merges_what_one_machine_predicts() {
    let fx = fixture();
    let instances = fx.instances(9);
    let script = fx.write("a.json", &two_calls().to_string());
    let start = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-local.sh");
    let slurm_dir = fx.path("slurm-cluster");
    let up = Command::new(&start)
        .arg("start")
        .arg(&slurm_dir)
        .output()
        .expect("run scripts/slurm-local.sh");
    let said = String::from_utf8_lossy(&up.stdout).into_owned();
    assert!(
        up.status.success(),
        "the local Slurm did not start: {said}{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let _stop = LocalSlurm {
        dir: slurm_dir.clone(),
        script: start.clone(),
    };
    let conf = slurm_dir.join("slurm.conf");

    let out = fx.path("cluster");
    let mut args: Vec<String> = ["swebench", "slurm", "--shards", "4", "--"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(fx.run_args(&instances, &out, &script));
    let submitted = fx
        .command(&args)
        .env("SLURM_CONF", &conf)
        .output()
        .expect("nib");
    let stdout = String::from_utf8_lossy(&submitted.stdout).into_owned();
    assert!(
        submitted.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&submitted.stderr)
    );
    assert!(stdout.contains("submitted job"), "{stdout}");
    let jobs = read_json(&out.join("slurm/jobs.json"));
    let merge_job = jobs["merge_job"]
        .as_str()
        .expect("merge job id")
        .to_string();

    // The merge job is the last to run: wait until it has left the queue.
    let started = Instant::now();
    loop {
        let q = Command::new("squeue")
            .args(["-h", "-j", &merge_job, "-o", "%T"])
            .env("SLURM_CONF", &conf)
            .output()
            .expect("squeue");
        let state = String::from_utf8_lossy(&q.stdout).trim().to_string();
        if state.is_empty() && out.join("slurm/merge.log").exists() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the jobs did not finish in 10 minutes (state {state:?}); logs in {}",
            out.join("slurm").display()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let merge_log = fs::read_to_string(out.join("slurm/merge.log")).unwrap_or_default();
    let merged = read_json(&out.join("preds.json"));

    // One machine, the same instances and script.
    let single = fx.swebench(&instances, "single", &script);
    assert_eq!(single.code, 0, "{}", single.stderr);
    let single_preds = read_json(&fx.path("single/preds.json"));
    assert_eq!(merged, single_preds, "merge log:\n{merge_log}");
    assert_eq!(merged.as_object().map(|m| m.len()), Some(9));
    // Each shard ran its own share, none twice.
    let mut seen = Vec::new();
    for i in 0..4 {
        let shard = out.join(format!("shards/{i}"));
        let report = read_json(&shard.join("run.json"));
        assert_eq!(report["shard"], format!("{i}/4"));
        for inst in report["instances"].as_array().expect("instances") {
            seen.push(inst["instance_id"].as_str().unwrap_or("").to_string());
        }
    }
    seen.sort();
    let want: Vec<String> = (1..=9).map(|k| format!("acme__calc-{k}")).collect();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(seen, want_sorted);
}

#[test]
fn a_dead_model_server_and_a_prompt_typo_stop_the_run_before_any_instance() {
    let fx = fixture();
    let instances = fx.instances(2);
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = fx.path("dead");
    let args: Vec<String> = [
        "swebench",
        "--instances",
        &instances,
        "--repos",
        &fx.repos.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--provider",
        "openai",
        "--base-url",
        &url,
        "--model",
        "m",
        "--env",
        "local",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = fx.nib(&args);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&url) && run.stderr.contains("does not answer"),
        "{}",
        run.stderr
    );
    assert!(!out.join("acme__calc-1").exists());

    let script = fx.write("a.json", &two_calls().to_string());
    let prompt = fx.write("prompt.md", "Fix this in {repo}:\n{problem_statment}\n");
    let mut args = vec!["swebench".to_string()];
    args.extend(fx.run_args(&instances, &fx.path("typo"), &script));
    args.extend(["--prompt".to_string(), prompt]);
    let run = fx.nib(&args);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("{problem_statment}"), "{}", run.stderr);
}
